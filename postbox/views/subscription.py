"""Subscriptions: one consistent snapshot of several views per commit.

``Postbox.combined_view(keys)`` returns a ``Subscription``. A callback given
there runs on the postbox thread for every snapshot. Otherwise iterate it on
any asyncio loop: the postbox thread hands over the newest snapshot only, with
the update types of any snapshot the consumer missed merged into it, so a slow
consumer never grows a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

from postbox.errors import PostboxClosedError
from postbox.view_keys import AnyViewKey, PostboxViewKey, SnapshotT
from postbox.views.view import MutableView, ViewSnapshot, ViewUpdateType

__all__ = ["CombinedView", "Subscription"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CombinedView:
    """Snapshots of every key of a subscription, as of one commit.

    ``update_types`` lists, per key, why it changed since the consumer's previous
    snapshot (several reasons when snapshots were merged); keys that did not
    change are absent.
    """

    views: Mapping[AnyViewKey, ViewSnapshot]
    update_types: Mapping[AnyViewKey, frozenset[ViewUpdateType]]
    transaction_state_version: int

    def __getitem__(self, key: PostboxViewKey[SnapshotT]) -> SnapshotT:
        """The snapshot of ``key``, typed as its view emits it."""
        return cast("SnapshotT", self.views[key])

    def merged_after(self, older: CombinedView) -> CombinedView:
        """This snapshot, with ``older``'s undelivered update types added."""
        types = dict(older.update_types)
        for key, kinds in self.update_types.items():
            types[key] = types.get(key, frozenset()) | kinds
        return CombinedView(self.views, MappingProxyType(types), self.transaction_state_version)


Callback = Callable[[CombinedView], None]


class Subscription:
    """A live combined view. Dispose it (or leave its ``async with``) to stop it."""

    def __init__(
        self,
        keys: frozenset[AnyViewKey],
        callback: Callback | None,
        on_dispose: Callable[[Subscription], None],
    ) -> None:
        """``on_dispose`` removes the views from whoever keeps them (the postbox)."""
        self._on_dispose = on_dispose
        self.keys = keys
        self._callback = callback
        self.views: dict[AnyViewKey, MutableView] = {}
        #: Resolved with the first snapshot once the views are registered.
        self.ready: Future[CombinedView] = Future()
        self._lock = threading.Lock()
        self._pending: CombinedView | None = None
        self._latest: CombinedView | None = None
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[CombinedView | None]] | None
        self._waiter = None
        #: A snapshot handed to a waiter whose loop has not resumed it yet.
        self._in_flight: CombinedView | None = None
        self._disposed = False
        self.emitted = 0

    # -- postbox thread -------------------------------------------------------

    def snapshot(self, changed: Mapping[AnyViewKey, ViewUpdateType], version: int) -> CombinedView:
        views = MappingProxyType({key: view.immutable() for key, view in self.views.items()})
        types = MappingProxyType({key: frozenset({kind}) for key, kind in changed.items()})
        return CombinedView(views, types, version)

    def deliver(self, snapshot: CombinedView) -> None:
        """Hand a snapshot to the consumer (postbox thread)."""
        self.emitted += 1
        if self._callback is not None:
            try:
                self._callback(snapshot)
            except Exception:
                _log.exception("subscription callback %r failed", self._callback)
        with self._lock:
            self._latest = snapshot
            if self._pending is not None:
                snapshot = snapshot.merged_after(self._pending)
            waiter, self._waiter = self._waiter, None
            if waiter is None:
                self._pending = snapshot
                return
            self._pending = None
            self._in_flight = snapshot
        _wake(waiter, snapshot)

    # -- any thread -----------------------------------------------------------

    @property
    def latest(self) -> CombinedView | None:
        """The newest snapshot delivered so far."""
        return self._latest

    @property
    def disposed(self) -> bool:
        return self._disposed

    def dispose(self) -> None:
        """Stop the subscription and remove its views; safe to call twice, from anywhere."""
        with self._lock:
            if self._disposed:
                return
            self._disposed = True
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            _wake(waiter, None)
        with contextlib.suppress(PostboxClosedError):  # closing removed every view
            self._on_dispose(self)

    async def next(self) -> CombinedView | None:
        """The next snapshot (merged with any missed), or ``None`` once disposed."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._disposed:
                return None
            if self._pending is not None:
                snapshot, self._pending = self._pending, None
                return snapshot
            if self._waiter is not None:
                raise RuntimeError("a subscription has one asynchronous consumer at a time")
            future: asyncio.Future[CombinedView | None] = loop.create_future()
            self._waiter = (loop, future)
        try:
            received = await future
        except asyncio.CancelledError:
            with self._lock:
                if self._waiter is not None and self._waiter[1] is future:
                    self._waiter = None
                elif self._in_flight is not None:
                    # Delivered to us but never resumed: keep it for the next call.
                    self._pending = (
                        self._in_flight
                        if self._pending is None
                        else self._pending.merged_after(self._in_flight)
                    )
                self._in_flight = None
            raise
        with self._lock:
            self._in_flight = None
        return received

    def __aiter__(self) -> AsyncIterator[CombinedView]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[CombinedView]:
        try:
            while (snapshot := await self.next()) is not None:
                yield snapshot
        finally:
            self.dispose()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.dispose()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()


def _wake(
    waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[CombinedView | None]],
    snapshot: CombinedView | None,
) -> None:
    loop, future = waiter

    def resolve() -> None:
        if not future.done():
            future.set_result(snapshot)

    with contextlib.suppress(RuntimeError):  # the consumer's loop is closed: nobody waits
        loop.call_soon_threadsafe(resolve)
