"""Snapshots from the postbox thread to the Qt main thread, through the event loop.

``SnapshotFeed`` opens a combined view and re-emits each snapshot as a Qt signal. The
subscription's callback runs on the postbox thread; emitting a signal there queues the
call into the receiver's (main) thread, so no widget is touched off the main thread and
no widget touches the database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Signal

from postbox import CombinedView, Postbox, PostboxViewKey, Subscription

__all__ = ["SnapshotFeed"]


class SnapshotFeed(QObject):
    """Emits ``snapshot(CombinedView)`` on the thread this object lives in.

    ``receiver`` is connected before the views open, so the first snapshot (which the
    postbox thread may deliver at once) cannot be missed.
    """

    snapshot = Signal(object)

    def __init__(
        self,
        postbox: Postbox,
        keys: Iterable[PostboxViewKey],
        receiver: Callable[[CombinedView], None],
    ) -> None:
        super().__init__()
        self.keys = tuple(keys)
        self.snapshot.connect(receiver)
        self._subscription: Subscription | None = postbox.combined_view(
            self.keys, callback=self._deliver
        )

    def _deliver(self, combined: CombinedView) -> None:  # on the postbox thread
        self.snapshot.emit(combined)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.dispose()
            self._subscription = None
