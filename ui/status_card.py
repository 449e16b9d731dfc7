"""The connection's state in a card floating over the foot of the chat list.

Telegram Desktop shows "Connecting…" and "Updating…" this way. The card is not in
the layout: it comes and goes (while catching up, several times a minute) without moving
a single row under the reader's pointer. A card with only words lets clicks through to
the row beneath it; one with a button (Retry now, Log out) takes them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QFrame, QWidget

__all__ = ["StatusCard"]

#: The card's distance from the list's sides and foot, in pixels.
MARGIN = 8


class StatusCard(QFrame):
    """A card over the foot of ``host``, as wide as it less the margins, as tall as its
    contents at that width; it follows the host's size."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self.setObjectName("status")
        host.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self.place()
        return super().eventFilter(watched, event)

    def show_state(self, shown: bool, *, clickable: bool) -> None:
        """Show the card (or take it away); ``clickable``: it has a button to press."""
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, not clickable)
        self.setVisible(shown)
        self.place()

    def place(self) -> None:
        host = self.parentWidget()
        if host is None or self.isHidden():
            return
        width = max(0, host.width() - 2 * MARGIN)
        layout = self.layout()
        if layout is not None:
            layout.activate()
        height = self.heightForWidth(width) if self.hasHeightForWidth() else -1
        if height < 0:
            height = self.sizeHint().height()
        self.setGeometry(MARGIN, host.height() - height - MARGIN, width, height)
        self.raise_()
