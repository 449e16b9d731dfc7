"""Ctrl+K: search chats by name and messages by text (the full-text index).

The dialog sends each query (after a short pause in typing) to the account, which runs
it on the postbox thread; results come back through the relay. Choosing a result (a
click, or Enter) opens its chat, at the message for a message.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
)

from client import SearchResults
from ui.account_port import AccountLike
from ui.futures import FutureRelay
from ui.rows import format_list_time, preview_text
from ui.theme import current_theme, qcolor

__all__ = ["SearchDialog", "found_text"]

_TARGET = int(Qt.ItemDataRole.UserRole) + 1
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_Index = QModelIndex | QPersistentModelIndex


class SearchDialog(QDialog):
    #: (peer id, title) of a chat chosen from the results.
    chat_chosen = Signal(object, str)
    #: (peer id, title, message) of a message chosen from the results.
    message_chosen = Signal(object, str, object)

    def __init__(
        self,
        account: AccountLike,
        relay: FutureRelay,
        parent: object = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._clock = clock
        self.setObjectName("search")
        self.setWindowTitle("Search")
        self.resize(560, 460)
        self.account = account
        self._relay = relay
        self._asked = ""
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search chats and messages")
        self.query.textChanged.connect(self._typed)
        self.results = QListWidget()
        self.results.setItemDelegate(_ResultDelegate(self.results))
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.setUniformItemSizes(False)
        # A click chooses a result, as in Telegram; Enter (or, where the platform says so,
        # a double click) activates one too.
        self.results.itemClicked.connect(self._chosen)
        self.results.itemActivated.connect(self._chosen)
        self.status = QLabel("")
        self.status.setObjectName("caption")
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.status)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self._search)

    def open_search(self) -> None:
        self.query.selectAll()
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.results.count():
            self.results.setFocus()
            self.results.keyPressEvent(event)
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            item = self.results.currentItem() or self.results.item(0)
            if item is not None and item.data(_TARGET) is not None:
                self._chosen(item)
            return
        super().keyPressEvent(event)

    @Slot(str)
    def _typed(self, _text: str) -> None:
        self._timer.start()

    @Slot()
    def _search(self) -> None:
        text = self.query.text().strip()
        self._asked = text
        if not text:
            self.results.clear()
            self.status.setText("")
            return
        self._relay.watch(self.account.search(text), self._show)

    def _show(self, results: SearchResults) -> None:
        if results.query.strip() != self._asked:
            return  # an answer to an older query
        chats, messages = results.chats, results.messages
        self.results.clear()
        if chats:
            self._heading("Chats")
            for peer_id, title in chats:
                item = QListWidgetItem(title)
                item.setData(_TARGET, ("chat", peer_id, title))
                self.results.addItem(item)
        if messages:
            self._heading("Messages")
            for message, title in messages:
                day = format_list_time(message.timestamp, int(self._clock()))
                item = QListWidgetItem(f"{title}\t{day}\n{preview_text(message)}")
                item.setData(_TARGET, ("message", message.peer_id, title, message))
                self.results.addItem(item)
        self.status.setText(found_text(len(chats), len(messages)))
        first = next(
            (
                self.results.item(i)
                for i in range(self.results.count())
                if self.results.item(i).data(_TARGET)
            ),
            None,
        )
        if first is not None:
            self.results.setCurrentItem(first)

    def _heading(self, text: str) -> None:
        item = QListWidgetItem(text.upper())
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        self.results.addItem(item)

    @Slot(QListWidgetItem)
    def _chosen(self, item: QListWidgetItem) -> None:
        target = item.data(_TARGET)
        if not target or self.isHidden():
            return  # a heading, or the click's activation after the click chose already
        if target[0] == "chat":
            self.chat_chosen.emit(target[1], target[2])
        else:
            self.message_chosen.emit(target[1], target[2], target[3])
        self.hide()


def found_text(chats: int, messages: int) -> str:
    """ "1 chat, 3 messages", leaving out what was not found."""
    parts = [
        f"{count:,} {noun}{'' if count == 1 else 's'}"
        for count, noun in ((chats, "chat"), (messages, "message"))
        if count
    ]
    return ", ".join(parts) if parts else "Nothing found"


class _ResultDelegate(QStyledItemDelegate):
    """A heading, a chat (its name), or a message (chat, date, then the text), elided."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        line = QFontMetrics(option.font).height()
        lines = 2 if "\n" in str(index.data()) else 1
        return QSize(200, line * lines + (14 if lines == 2 else 10))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        theme = current_theme()
        text = str(index.data())
        rect = option.rect.adjusted(12, 5, -12, -5)
        painter.save()
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, qcolor(theme.selection))
        metrics = QFontMetrics(option.font)
        line = metrics.height()
        bold = QFont(option.font)
        bold.setBold(True)
        if index.data(_TARGET) is None:  # a heading
            painter.setFont(bold)
            painter.setPen(qcolor(theme.accent))
            painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, text)
        else:
            first, _, snippet = text.partition("\n")
            title, _, day = first.partition("\t")
            painter.setPen(qcolor(theme.muted))
            painter.drawText(QRect(rect.left(), rect.top(), rect.width(), line), _RIGHT, day)
            painter.setFont(bold)
            painter.setPen(qcolor(theme.text))
            width = rect.width() - metrics.horizontalAdvance(day) - 12
            title = QFontMetrics(bold).elidedText(title, Qt.TextElideMode.ElideRight, width)
            painter.drawText(QRect(rect.left(), rect.top(), width, line), _LEFT, title)
            if snippet:
                painter.setFont(option.font)
                painter.setPen(qcolor(theme.muted))
                snippet = metrics.elidedText(snippet, Qt.TextElideMode.ElideRight, rect.width())
                painter.drawText(
                    QRect(rect.left(), rect.top() + line + 2, rect.width(), line), _LEFT, snippet
                )
        painter.restore()
