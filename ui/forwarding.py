"""Choosing the chat to forward messages to, as Telegram's "Forward to..." list.

``ForwardPicker`` lists the chats a message can go to (people and groups, not channels
the account only reads, nor secret chats), filtered as the reader types; a click or
Enter on one emits ``chosen`` with its peer id and name.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
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
from ui.theme import qcolor

__all__ = ["ForwardPicker", "forward_targets"]

_PEER_ROLE = Qt.ItemDataRole.UserRole
_AVATAR = 34


def _avatar(row: ChatRow, font: QFont) -> QIcon:
    """The chat's round avatar with its initials, as the chat list draws it."""
    pixmap = QPixmap(_AVATAR * 2, _AVATAR * 2)
    pixmap.setDevicePixelRatio(2)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(qcolor(row.color))
    painter.drawEllipse(0, 0, _AVATAR, _AVATAR)
    bold = QFont(font)
    bold.setBold(True)
    painter.setFont(bold)
    painter.setPen(QColor("white"))
    painter.drawText(0, 0, _AVATAR, _AVATAR, Qt.AlignmentFlag.AlignCenter, row.initials)
    painter.end()
    return QIcon(pixmap)


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
        self.heading.setObjectName("title")
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Search")
        self.filter.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setUniformItemSizes(True)
        self.list.setIconSize(QSize(_AVATAR, _AVATAR))
        self.list.setSpacing(2)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        for row in forward_targets(rows):
            item = QListWidgetItem(_avatar(row, self.font()), row.title)
            item.setData(_PEER_ROLE, row.peer_id)
            item.setSizeHint(QSize(0, _AVATAR + 8))
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
