"""Snapshots from the postbox thread to the Qt main thread, through the event loop.

``SnapshotFeed`` opens a combined view and hands each snapshot to a receiver on the
main thread. The subscription's callback runs on the postbox thread and only posts a
wake-up through one long-lived bridge object, so no widget is touched off the main
thread and no widget touches the database. The wake-up carries the feed itself (a
plain Python object), so a feed closed and dropped meanwhile is still alive when its
wake-up arrives, and simply ignores it. No Qt connection has the feed as its receiver:
the postbox thread may free it (with the subscription that holds it), and Qt must not
be touched there.

Snapshots that arrive while the main thread is busy are merged, not queued: the
receiver gets the newest one, carrying every update type it missed
(``CombinedView.merged_after``). Under a burst of commits the screen therefore skips
to the latest state instead of replaying every step behind it.

A receiver also runs at most once a frame (``FRAME_SECONDS``): a snapshot that comes
sooner after the last one waits for the rest of the frame, and whatever arrives
meanwhile is merged into it. A lone snapshot is handed over at once; a stream of 200 a
second costs the main thread at most 60 updates a second per feed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from postbox import AnyViewKey, CombinedView, Postbox, Subscription

__all__ = ["FRAME_SECONDS", "SnapshotFeed"]

#: The shortest time between two hand-overs of one feed: a frame at 60 Hz.
FRAME_SECONDS = 1 / 60


class _Bridge(QObject):
    """Lives on the main thread for the whole run: the target of every feed's wake-up."""

    ready = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.ready.connect(self._dispatch)

    @Slot(object)
    def _dispatch(self, feed: SnapshotFeed) -> None:
        feed._take()


_bridge: _Bridge | None = None


def _main_thread_bridge() -> _Bridge:
    global _bridge
    if _bridge is None:
        _bridge = _Bridge()
    return _bridge


class SnapshotFeed:
    """Calls ``receiver(CombinedView)`` on the main thread (create feeds there).

    ``receiver`` is set before the views open, so the first snapshot (which the
    postbox thread may deliver at once) cannot be missed.
    """

    def __init__(
        self,
        postbox: Postbox,
        keys: Iterable[AnyViewKey],
        receiver: Callable[[CombinedView], None],
        *,
        interval: float = FRAME_SECONDS,
    ) -> None:
        self.keys = tuple(keys)
        self._interval = interval
        self._last_taken = -math.inf
        self._timer_armed = False
        self._receiver: Callable[[CombinedView], None] | None = receiver
        self._bridge = _main_thread_bridge()
        self._lock = threading.Lock()
        self._pending: CombinedView | None = None
        #: Snapshots merged into a later one before the main thread took them.
        self.merged = 0
        self._subscription: Subscription | None = postbox.combined_view(
            self.keys, callback=self._deliver
        )

    def _deliver(self, combined: CombinedView) -> None:  # on the postbox thread
        with self._lock:
            if self._receiver is None:
                return
            pending = self._pending
            if pending is not None:
                self._pending = combined.merged_after(pending)
                self.merged += 1
                return
            self._pending = combined
        self._bridge.ready.emit(self)

    def _take(self) -> None:  # on the main thread
        if self._timer_armed:
            return  # the timer hands this one over, with whatever comes before it fires
        wait = self._last_taken + self._interval - time.monotonic()
        if wait > 0:
            self._timer_armed = True
            # A lambda, not the bound method: Qt would track the feed with a weak
            # reference and disconnect on the thread that frees it (the postbox thread,
            # when a disposed subscription holds the feed's last reference), which crashes.
            QTimer.singleShot(math.ceil(wait * 1000), self._bridge, lambda: self._take_now())
            return
        self._take_now()

    def _take_now(self) -> None:  # on the main thread
        self._timer_armed = False
        self._last_taken = time.monotonic()
        with self._lock:
            combined, self._pending = self._pending, None
            receiver = self._receiver
        if combined is not None and receiver is not None:
            receiver(combined)

    def close(self) -> None:
        with self._lock:
            self._receiver = None
            self._pending = None
        if self._subscription is not None:
            self._subscription.dispose()
            self._subscription = None
