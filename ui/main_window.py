"""The main window: the chat list on the left, the open chat's history and compose box.

Every screen is a live view: the chat list follows a ``ChatListViewKey``, the open chat
its cloud history and its pending (local-namespace) messages. Snapshots arrive through
``SnapshotFeed`` on the main thread and reach the models as row diffs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from PySide6.QtCore import QItemSelection, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from postbox import (
    ChatListView,
    ChatListViewKey,
    CombinedView,
    HistoryAnchor,
    MessageHistoryView,
    MessageHistoryViewKey,
    MessageId,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    Postbox,
    ViewUpdateType,
)
from ui.delegates import ChatListDelegate
from ui.feed import SnapshotFeed
from ui.history_view import HistoryListView
from ui.models import ChatListModel
from ui.rows import ChatRow, chat_list_rows, history_rows

__all__ = ["AccountLike", "MainWindow"]

#: Messages a history window holds around what is on screen.
HISTORY_WINDOW = 60


class AccountLike(Protocol):
    postbox: Postbox

    def send_message(self, peer_id: PeerId, text: str) -> Future[MessageId]: ...

    def mark_read(self, peer_id: PeerId, max_id: int) -> Future[bool]: ...


class MainWindow(QMainWindow):
    def __init__(self, account: AccountLike, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.account = account
        self._clock = clock
        self.setWindowTitle("postbox-chat")
        self.resize(1100, 720)
        self.chat_model = ChatListModel()
        self.chat_list = QListView()
        self.chat_list.setModel(self.chat_model)
        self.chat_list.setItemDelegate(ChatListDelegate(self.chat_list))
        self.chat_list.setUniformItemSizes(True)
        self.chat_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.chat_list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.chat_list.selectionModel().selectionChanged.connect(self._chat_selected)
        self.history = HistoryListView()
        self.history_model = self.history.history_model
        self.history.setStyleSheet("QListView#history { background: #d7e3ec; border: none; }")
        self.header = QLabel("Select a chat")
        self.header.setObjectName("header")
        self.header.setStyleSheet("QLabel#header { font-weight: bold; padding: 8px; }")
        self.compose = QLineEdit()
        self.compose.setPlaceholderText("Write a message…")
        self.compose.returnPressed.connect(self.send)
        self.send_button = QPushButton("Send")
        self.send_button.clicked.connect(self.send)
        compose_row = QHBoxLayout()
        compose_row.addWidget(self.compose, 1)
        compose_row.addWidget(self.send_button)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.header)
        column.addWidget(self.history, 1)
        column.addLayout(compose_row)
        splitter = QSplitter()
        splitter.addWidget(self.chat_list)
        splitter.addWidget(right)
        splitter.setSizes([340, 760])
        self.setCentralWidget(splitter)
        self._chat_feed = SnapshotFeed(account.postbox, [ChatListViewKey(PeerGroupId.ROOT, 100)])
        self._chat_feed.snapshot.connect(self._chat_list_changed)
        self._history_feed: SnapshotFeed | None = None
        self._history_keys: tuple[MessageHistoryViewKey, MessageHistoryViewKey] | None = None
        self.open_peer: PeerId | None = None

    def _now(self) -> int:
        return int(self._clock())

    # -- chat list ---------------------------------------------------------------------

    @Slot(object)
    def _chat_list_changed(self, combined: CombinedView) -> None:
        view = combined[self._chat_feed.keys[0]]
        assert isinstance(view, ChatListView)
        selected = self.open_peer
        self.chat_model.apply(chat_list_rows(view, self._now()), view.update_type)
        if selected is not None:
            row = self.chat_model.row_of(int(selected))
            if row is not None:
                index = self.chat_model.index(row, 0)
                self.chat_list.selectionModel().select(
                    index, self.chat_list.selectionModel().SelectionFlag.ClearAndSelect
                )

    @Slot(QItemSelection, QItemSelection)
    def _chat_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if not indexes:
            return
        row = self.chat_model.rows[indexes[0].row()]
        if isinstance(row, ChatRow) and not row.is_hole and row.peer_id != self.open_peer:
            self.open_chat(PeerId(row.peer_id), row.title)

    # -- history ------------------------------------------------------------------------

    def open_chat(self, peer_id: PeerId, title: str = "") -> None:
        if self._history_feed is not None:
            self._history_feed.close()
        self.open_peer = peer_id
        self.header.setText(title or f"Chat {peer_id.id}")
        self.history_model.apply([], ViewUpdateType.INITIAL)
        cloud = MessageHistoryViewKey(peer_id, HistoryAnchor.upper_bound(), HISTORY_WINDOW)
        local = MessageHistoryViewKey(
            peer_id,
            HistoryAnchor.upper_bound(),
            HISTORY_WINDOW,
            namespace=int(MessageNamespace.LOCAL),
        )
        self._history_keys = (cloud, local)
        self._history_feed = SnapshotFeed(self.account.postbox, self._history_keys)
        self._history_feed.snapshot.connect(self._history_changed)

    @Slot(object)
    def _history_changed(self, combined: CombinedView) -> None:
        if self._history_keys is None:
            return
        cloud_key, local_key = self._history_keys
        cloud = combined[cloud_key]
        local = combined[local_key]
        assert isinstance(cloud, MessageHistoryView) and isinstance(local, MessageHistoryView)
        if cloud.peer_id != self.open_peer:
            return
        update = cloud.update_type if cloud_key in combined.update_types else local.update_type
        self.history.show_rows(history_rows(cloud, self._now(), pending=local), update)
        self._read_what_is_shown(cloud)

    def _read_what_is_shown(self, view: MessageHistoryView) -> None:
        """At the bottom of an open chat, everything that arrived has been seen: mark the
        chat read up to its newest incoming message (locally at once, then the server)."""
        if self.open_peer is None or view.hole_later or not self.history.at_bottom():
            return
        incoming = [m.id.id for m in view.entries if m.incoming]
        if not incoming:
            return
        read = 0
        if view.read_state is not None:
            read = max((s.max_incoming_read_id for _, s in view.read_state.states), default=0)
        if max(incoming) > read:
            self.account.mark_read(self.open_peer, max(incoming))

    @Slot()
    def send(self) -> None:
        text = self.compose.text().strip()
        if not text or self.open_peer is None:
            return
        self.account.send_message(self.open_peer, text)
        self.compose.clear()
        self.history.scrollToBottom()

    def close_feeds(self) -> None:
        self._chat_feed.close()
        if self._history_feed is not None:
            self._history_feed.close()
            self._history_feed = None

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt
        self.close_feeds()
        super().closeEvent(event)
