"""An asyncio event loop on virtual time, for deterministic simulations.

``VirtualLoop`` is a selector event loop whose selector never waits: when the loop
would block until its next timer, the virtual clock jumps there instead. ``time()``
is that clock, so every ``sleep``, timeout and ``call_later`` runs in virtual seconds
and a run takes as long as its callbacks compute. Real I/O is refused: registering a
file descriptor, using an executor or calling in from another thread raises
``SimulationError``. A loop with no timer and nothing ready can never make progress:
``StalledError``.
"""

from __future__ import annotations

import asyncio
import selectors
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from sync.errors import SyncError

__all__ = ["SimulationError", "StalledError", "VirtualLoop", "run_virtual"]

T = TypeVar("T")


class SimulationError(SyncError):
    """Something inside the simulation tried to leave it (a socket, a thread)."""


class StalledError(SimulationError):
    """Nothing is ready and no timer is set: the simulated world has stopped."""


class _VirtualSelector(selectors.BaseSelector):
    """Registers nothing; ``select(timeout)`` advances the owning loop's clock."""

    def __init__(self) -> None:
        self.loop: VirtualLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        raise SimulationError(f"real I/O inside the simulation: {fileobj!r}")

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        raise KeyError(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        assert loop is not None
        if timeout is None:
            raise StalledError(f"nothing to run at virtual time {loop.time():.3f} s")
        if timeout > 0:
            loop.advance(timeout)
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return {}

    def close(self) -> None:
        return None


class VirtualLoop(asyncio.SelectorEventLoop):
    """A single-threaded event loop whose clock only moves when it would otherwise wait."""

    def __init__(self, start: float = 0.0) -> None:
        self._virtual_now = start
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._owner = threading.get_ident()
        self._failed: list[asyncio.Task[Any]] = []
        self.set_task_factory(self._make_task)

    def _make_task(
        self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any
    ) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        # ``_exception``, not ``exception()``: asking would count as handling it.
        if not task.cancelled() and task._exception is not None:
            self._failed.append(task)

    @property
    def failed_tasks(self) -> list[str]:
        """Every task that ended with an exception nobody retrieved (one that died
        silently), as "name: error", in order; one whose caller got the error is fine."""
        return [
            f"{task.get_name()}: {type(error).__name__}: {error}"
            for task in self._failed
            if task._log_traceback and (error := task._exception) is not None
        ]

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        self._virtual_now += seconds

    # No self-pipe: nothing outside the loop's thread may wake it.
    def _make_self_pipe(self) -> None:
        return None

    def _close_self_pipe(self) -> None:
        return None

    def _write_to_self(self) -> None:
        return None

    def call_soon_threadsafe(  # type: ignore[override]
        self, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.Handle:
        if threading.get_ident() != self._owner:
            raise SimulationError("another thread called into the simulation")
        return self.call_soon(callback, *args, context=context)

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., T], *args: Any
    ) -> Any:
        raise SimulationError(f"{func!r} was sent to a thread inside the simulation")


def run_virtual(main: Coroutine[Any, Any, T], *, start: float = 0.0) -> T:
    """Run ``main`` to completion on a fresh ``VirtualLoop``; closes the loop after."""
    loop = VirtualLoop(start)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_remaining(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_remaining(loop: VirtualLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
