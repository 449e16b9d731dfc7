"""The chat list holds its order while the pointer is over it.

A chat moves to the top when a message arrives, so in a busy account the row under the
pointer can change between aiming and clicking, and the click opens another chat. While
the pointer is over the list, ``held_order`` keeps every row from the top down to the
last one in view where it is, refreshing only what each shows (preview, time, badge);
chats below the view follow the newest order. The newest snapshot is kept back and shown
when the pointer leaves, or after ``HOLD_MS`` without the pointer moving or the wheel
turning.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QPoint, QTimer, Signal
from PySide6.QtWidgets import QListView

from ui.rows import ChatRow

__all__ = ["HOLD_MS", "ChatOrderHold", "held_order"]

#: How long a still pointer holds the order.
HOLD_MS = 5_000
#: What counts as the pointer being used over the list: each starts the hold time anew.
_ACTIVITY = frozenset(
    {QEvent.Type.Enter, QEvent.Type.MouseMove, QEvent.Type.HoverMove, QEvent.Type.Wheel}
)


def held_order(shown: Sequence[ChatRow], newest: Sequence[ChatRow], in_view: int) -> list[ChatRow]:
    """``newest``, except that ``shown[: in_view + 1]`` keep their places, each with its
    newest content. A held chat the newest rows no longer have stays as it was until the
    hold ends; a held "loading" row whose hole is gone leaves at once (its chats follow)."""
    by_key = {row.key: row for row in newest}
    held: list[ChatRow] = []
    for row in shown[: in_view + 1]:
        latest = by_key.get(row.key)
        if latest is not None:
            held.append(latest)
        elif not row.is_hole:
            held.append(row)
    kept = {row.key for row in held}
    return held + [row for row in newest if row.key not in kept]


class ChatOrderHold(QObject):
    """Watches the pointer over ``view`` (a chat list): ``holding`` while it is there and
    has moved within ``hold_ms``; ``released`` when that ends."""

    released = Signal()

    def __init__(self, view: QListView, *, hold_ms: int = HOLD_MS) -> None:
        super().__init__(view)
        self._view = view
        self.holding = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(hold_ms)
        self._timer.timeout.connect(self.release)
        view.viewport().setMouseTracking(True)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        kind = event.type()
        if kind in _ACTIVITY:
            self.holding = True
            self._timer.start()
        elif kind == QEvent.Type.Leave:
            self.release()
        return False

    def release(self) -> None:
        self._timer.stop()
        if self.holding:
            self.holding = False
            self.released.emit()

    def last_row_in_view(self) -> int:
        """The model row at the bottom of the viewport (the last row, if it ends above)."""
        viewport = self._view.viewport().rect()
        index = self._view.indexAt(QPoint(1, viewport.bottom()))
        rows = self._view.model().rowCount()
        return index.row() if index.isValid() else rows - 1
