"""Choosing the chat to forward messages to, as Telegram's "Forward to..." list.

``ForwardPicker`` lists the chats a message can go to (people and groups, not channels
the account only reads, nor secret chats), filtered as the reader types; a click or
Enter on one emits ``chosen`` with its peer id and name.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.rows import ChatRow, peer_kind

__all__ = ["ForwardPicker", "forward_targets"]

_PEER_ROLE = Qt.ItemDataRole.UserRole


def forward_targets(rows: Sequence[object]) -> list[ChatRow]:
    """The chat-list rows a forward can go to, in list order."""
    return [
        row
        for row in rows
        if isinstance(row, ChatRow)
        and not row.is_hole
        and peer_kind(row.peer_id) in ("user", "group")
    ]


class ForwardPicker(QDialog):
    """``ForwardPicker(rows, count, parent).open()``; ``chosen(peer_id, title)``."""

    chosen = Signal(object, str)  # a peer id does not fit a 32-bit int

    def __init__(self, rows: Sequence[object], count: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("forwardPicker")
        self.setWindowTitle("Forward")
        self.setMinimumSize(320, 420)
        what = "message" if count == 1 else f"{count} messages"
        self.heading = QLabel(f"Forward {what} to…")
        self.heading.setObjectName("paneTitle")
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Search")
        self.filter.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setUniformItemSizes(True)
        for row in forward_targets(rows):
            item = QListWidgetItem(row.title)
            item.setData(_PEER_ROLE, row.peer_id)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        self.filter.textChanged.connect(self._filter)
        self.filter.returnPressed.connect(self._choose_current)
        self.list.itemClicked.connect(self._choose)
        self.list.itemActivated.connect(self._choose)
        self.filter.setFocus()

    def shown_titles(self) -> list[str]:
        return [
            self.list.item(i).text()
            for i in range(self.list.count())
            if not self.list.item(i).isHidden()
        ]

    def _filter(self, text: str) -> None:
        wanted = text.strip().casefold()
        first: QListWidgetItem | None = None
        for i in range(self.list.count()):
            item = self.list.item(i)
            hidden = bool(wanted) and wanted not in item.text().casefold()
            item.setHidden(hidden)
            if not hidden and first is None:
                first = item
        if first is not None:
            self.list.setCurrentItem(first)
        else:
            self.list.setCurrentRow(-1)

    def _choose_current(self) -> None:
        item = self.list.currentItem()
        if item is not None and not item.isHidden():
            self._choose(item)

    def _choose(self, item: QListWidgetItem) -> None:
        self.chosen.emit(int(item.data(_PEER_ROLE)), item.text())
        self.accept()
