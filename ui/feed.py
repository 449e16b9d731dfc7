"""Snapshots from the postbox thread to the Qt main thread, through the event loop.

``SnapshotFeed`` opens a combined view and hands each snapshot to a receiver on the
main thread. The subscription's callback runs on the postbox thread and only queues a
wake-up signal, so no widget is touched off the main thread and no widget touches the
database.

Snapshots that arrive while the main thread is busy are merged, not queued: the
receiver gets the newest one, carrying every update type it missed
(``CombinedView.merged_after``). Under a burst of commits the screen therefore skips
to the latest state instead of replaying every step behind it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Signal, Slot

from postbox import CombinedView, Postbox, PostboxViewKey, Subscription

__all__ = ["SnapshotFeed"]


class SnapshotFeed(QObject):
    """Calls ``receiver(CombinedView)`` on the thread this object lives in.

    ``receiver`` is set before the views open, so the first snapshot (which the
    postbox thread may deliver at once) cannot be missed.
    """

    _ready = Signal()

    def __init__(
        self,
        postbox: Postbox,
        keys: Iterable[PostboxViewKey],
        receiver: Callable[[CombinedView], None],
    ) -> None:
        super().__init__()
        self.keys = tuple(keys)
        self._receiver = receiver
        self._lock = threading.Lock()
        self._pending: CombinedView | None = None
        #: Snapshots merged into a later one before the main thread took them.
        self.merged = 0
        self._ready.connect(self._take)
        self._subscription: Subscription | None = postbox.combined_view(
            self.keys, callback=self._deliver
        )

    def _deliver(self, combined: CombinedView) -> None:  # on the postbox thread
        with self._lock:
            pending = self._pending
            if pending is not None:
                self._pending = combined.merged_after(pending)
                self.merged += 1
                return
            self._pending = combined
        self._ready.emit()

    @Slot()
    def _take(self) -> None:
        with self._lock:
            combined, self._pending = self._pending, None
        if combined is not None and self._subscription is not None:
            self._receiver(combined)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.dispose()
            self._subscription = None
