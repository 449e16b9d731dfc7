"""The pointer over the chat list, and the hint that chats changed meanwhile.

``ChatOrderHold`` says whether the list should hold its order (``ui.chat_order``): from
the moment the pointer enters the list until it leaves, however long it rests there.
While chats wait, a pill at the top of the list says how many ("3 chats changed");
clicking it catches up at once, as leaving does.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QListView, QPushButton

from ui.chat_order import changed_text

__all__ = ["ChatOrderHold"]

#: The hint's distance from the top of the list.
HINT_MARGIN = 8
#: What says the pointer is over the list (a press or a turn of the wheel there too).
_OVER = frozenset(
    {
        QEvent.Type.Enter,
        QEvent.Type.MouseMove,
        QEvent.Type.HoverMove,
        QEvent.Type.Wheel,
        QEvent.Type.MouseButtonPress,
    }
)


class ChatOrderHold(QObject):
    """Watches the pointer over ``view`` (a chat list): ``holding`` while it is there;
    ``released`` when it leaves, ``catch_up_requested`` when the hint is clicked."""

    released = Signal()
    catch_up_requested = Signal()

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self.holding = False
        # A child of the viewport: the pointer on it is still over the list.
        self.hint = QPushButton(view.viewport())
        self.hint.setObjectName("chatsChanged")
        self.hint.setCursor(Qt.CursorShape.PointingHandCursor)
        self.hint.setToolTip("The list keeps still under the pointer: click to update it")
        self.hint.clicked.connect(self.catch_up_requested)
        self.hint.hide()
        view.viewport().setMouseTracking(True)
        view.viewport().installEventFilter(self)
        # Scrolling moves the viewport's children with the rows: the hint goes back.
        view.verticalScrollBar().valueChanged.connect(self._on_scrolled)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        kind = event.type()
        if kind in _OVER:
            self.holding = True
        elif kind == QEvent.Type.Leave:
            self.release()
        elif kind == QEvent.Type.Resize and not self.hint.isHidden():
            self._place_hint()
        return False

    def release(self) -> None:
        if self.holding:
            self.holding = False
            self.released.emit()

    def show_changed(self, changed: int) -> None:
        """Say that ``changed`` chats wait (none: hide the hint)."""
        if changed <= 0:
            self.hint.hide()
            return
        self.hint.setText(f"↑  {changed_text(changed)}")
        self._place_hint()
        self.hint.show()
        self.hint.raise_()

    @Slot(int)
    def _on_scrolled(self, _value: int) -> None:
        if not self.hint.isHidden():
            self._place_hint()

    def _place_hint(self) -> None:
        size = self.hint.sizeHint()
        width = self._view.viewport().width()
        self.hint.setGeometry((width - size.width()) // 2, HINT_MARGIN, size.width(), size.height())
