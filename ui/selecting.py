"""Choosing messages and their text: the selection bar, and a bubble's text made selectable.

``SelectionBar`` holds the messages picked with "Select" or Ctrl+click (drawn tinted by
the history) and offers what can be done with them together: forward them, copy their
texts, delete them, or cancel. ``text_overlay`` lays one message's text over its bubble
as a read-only text widget, so the mouse can select part of it and Ctrl+C copy it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QWidget,
)

from postbox import MessageId, MessageNamespace, PeerId
from ui.delegates import HistoryDelegate
from ui.history_view import HistoryListView
from ui.rows import MessageRow, peer_kind

__all__ = ["SelectionBar", "text_overlay"]

_CLOUD = int(MessageNamespace.CLOUD)


class SelectionBar(QWidget):
    """ "2 messages selected  Forward  Copy  Delete  Cancel", shown while messages are
    selected."""

    #: The selected messages (a list of ``MessageId``, oldest first) are to be forwarded.
    forward_requested = Signal(object)
    #: The selected messages (a list of ``MessageRow``, oldest first) are to be deleted,
    #: once the reader confirms.
    delete_requested = Signal(object)

    def __init__(
        self,
        history: HistoryListView,
        open_peer: Callable[[], PeerId | None],
    ) -> None:
        super().__init__()
        self._history = history
        self._open_peer = open_peer
        #: The selected messages, by row key.
        self.selected: dict[object, MessageRow] = {}
        self.label = QLabel("")
        self.forward_button = QPushButton("Forward")
        self.copy_button = QPushButton("Copy")
        self.delete_button = QPushButton("Delete")
        cancel = QPushButton("Cancel")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 4)
        row.addWidget(self.label, 1)
        for button, action in (
            (self.forward_button, self.forward),
            (self.copy_button, self.copy),
            (self.delete_button, self.delete),
            (cancel, self.clear),
        ):
            button.setObjectName("flat")
            button.clicked.connect(action)
            row.addWidget(button)
        self.hide()

    def toggle(self, row: MessageRow) -> None:
        """Add a message to the selection, or take it out."""
        if row.key in self.selected:
            del self.selected[row.key]
        else:
            self.selected[row.key] = row
        self._changed()

    def clear(self) -> None:
        if self.selected:
            self.selected.clear()
            self._changed()

    def drop(self, keys: Iterable[object]) -> None:
        """Take the messages of ``keys`` out of the selection (they were deleted)."""
        dropped = [key for key in keys if self.selected.pop(key, None) is not None]
        if dropped:
            self._changed()

    def _changed(self) -> None:
        self._history.selected_keys.clear()
        self._history.selected_keys.update(self.selected)
        count = len(self.selected)
        self.label.setText(f"{count} message{'' if count == 1 else 's'} selected")
        peer = self._open_peer()
        self.delete_button.setVisible(peer is not None and peer_kind(peer) in ("user", "group"))
        self.copy_button.setVisible(any(r.text for r in self.selected.values()))
        self.forward_button.setVisible(
            peer is not None
            and peer_kind(peer) != "secret chat"
            and all(r.namespace == _CLOUD for r in self.selected.values())
        )
        self.setVisible(bool(count))
        self._history.viewport().update()

    def _in_order(self) -> list[MessageRow]:
        return sorted(self.selected.values(), key=lambda r: (r.timestamp, r.namespace, r.id))

    def copy(self) -> None:
        """The selected messages' texts, oldest first, one after another."""
        texts = [row.text for row in self._in_order() if row.text]
        QApplication.clipboard().setText("\n\n".join(texts))

    def forward(self) -> None:
        """Ask for a chat to forward the selected messages to; the selection ends."""
        rows = self._in_order()
        peer = self._open_peer()
        if not rows or peer is None:
            return
        self.forward_requested.emit([MessageId(peer, row.namespace, row.id) for row in rows])
        self.clear()

    def delete(self) -> None:
        """Ask to delete the selected messages; the selection stays until they go."""
        rows = self._in_order()
        if rows and self._open_peer() is not None:
            self.delete_requested.emit(rows)


def text_overlay(
    history: HistoryListView, row: MessageRow, at: QPoint | None = None
) -> QTextBrowser | None:
    """The message's text laid over its bubble as text the mouse can select (with the word
    at ``at`` selected already), or ``None`` if the bubble is not laid out."""
    position = history.history_model.row_of(row.key)
    delegate = history.itemDelegate()
    if position is None or not isinstance(delegate, HistoryDelegate):
        return None
    area = delegate.text_areas.get(row.key)
    if area is None:
        return None
    index = history.history_model.index(position, 0)
    rect = area.translated(history.visualRect(index).topLeft())
    overlay = QTextBrowser(history.viewport())
    overlay.setObjectName("selectable")
    overlay.setFrameShape(QFrame.Shape.NoFrame)
    overlay.setOpenExternalLinks(True)
    overlay.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    overlay.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    overlay.setFont(history.font())
    overlay.viewport().setAutoFillBackground(False)  # the bubble shows through
    overlay.document().setDocumentMargin(0)
    overlay.setPlainText(row.text)
    overlay.setGeometry(rect.adjusted(0, 0, 2, 2))
    if at is not None:
        cursor = overlay.cursorForPosition(at - rect.topLeft())
        cursor.select(QTextCursor.SelectionType.WordUnderCursor)
        overlay.setTextCursor(cursor)
    return overlay
