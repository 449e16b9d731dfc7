"""Waiting for a condition without polling: whoever changes state calls ``notify``.

``ChangeNotifier`` belongs to one event loop. ``notify`` may be called from any thread
(the postbox thread calls it after a commit); ``wait_for(predicate)`` re-checks the
predicate after each notification and returns once it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["ChangeNotifier"]


class ChangeNotifier:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None
        self._waiting = 0

    def _bind(self) -> asyncio.Event:
        if self._event is None:
            self._loop = asyncio.get_running_loop()
            self._event = asyncio.Event()
        return self._event

    def notify(self) -> None:
        """Something changed; safe from any thread."""
        loop, event = self._loop, self._event
        if not self._waiting or loop is None or event is None or loop.is_closed():
            return  # nobody waits: cost nothing on hot paths (every commit notifies)
        loop.call_soon_threadsafe(event.set)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        """Return once ``predicate()`` holds; ``TimeoutError`` after ``timeout`` seconds."""
        event = self._bind()
        self._waiting += 1
        try:
            async with asyncio.timeout(timeout):
                while not predicate():
                    event.clear()
                    if predicate():
                        return
                    await event.wait()
        finally:
            self._waiting -= 1
