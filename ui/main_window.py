"""The main window: chat list, open chat, and the profile and inspector panels.

Every screen is a live view: the chat list follows a ``ChatListViewKey`` (its window
grows as the reader scrolls to its end; a hole there is filled by the sync engine),
the open chat its history window (``ui.chat_pane``), the profile a peer view and tag
summaries (``ui.profile_panel``), the inspector the commits themselves
(``ui.inspector``). Snapshots arrive through ``SnapshotFeed`` on the main thread and
reach the models as row diffs; nothing here touches the database.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import (
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    Qt,
    QTimer,
    Slot,
)
from PySide6.QtGui import QCloseEvent, QKeyEvent, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QLabel,
    QListView,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from client import EngineStatus, status_line
from client.slow_motion import SlowMotion
from postbox import (
    ChatListView,
    ChatListViewKey,
    CombinedView,
    Message,
    MessageHistoryView,
    PeerGroupId,
    PeerId,
    ViewUpdateType,
)
from ui.account_port import AccountLike
from ui.chat_list_hold import ChatOrderHold
from ui.chat_order import held_order
from ui.chat_pane import ChatPane
from ui.compose_box import ComposeBox, TypingGoesToCompose
from ui.delegates import ChatListDelegate
from ui.devices import DevicesDialog
from ui.feed import SnapshotFeed
from ui.forwarding import ForwardPicker
from ui.futures import FutureRelay
from ui.history_view import HistoryListView
from ui.inspector import InspectorPanel
from ui.models import ChatListModel, HistoryModel, effective_update
from ui.profile_panel import ProfilePanel
from ui.rows import ChatRow, ChatRowCache
from ui.search import SearchDialog
from ui.status_card import StatusCard
from ui.theme import apply_theme, current_theme, save_theme
from ui.tour import TourCard, TourStage
from ui.tour_steps import TOUR, TourContext
from ui.transactions import unknown_peer_name

__all__ = ["CHAT_LIST_PAGE", "AccountLike", "MainWindow"]

#: Chats the chat list window holds at first, and grows by at its end.
CHAT_LIST_PAGE = 100
#: Narrower than this, the window shows the chat list or the open chat, not both.
NARROW_WIDTH = 720
MINIMUM_SIZE = (380, 420)


class MainWindow(QMainWindow):
    def __init__(
        self,
        account: AccountLike,
        *,
        clock: Callable[[], float] = time.time,
        slow_motion: SlowMotion | None = None,
        stage: TourStage | None = None,
        no_tour_because: str = "in the demo, with its own server",
    ) -> None:
        super().__init__()
        self.account = account
        #: The demo server's side of the guided tour; without one there is no tour.
        self.stage = stage
        self.tour: TourCard | None = None
        self._clock = clock
        self.relay = FutureRelay(self)
        self.setWindowTitle("postbox-chat")
        self.resize(1180, 760)

        self.chat_model = ChatListModel()
        self.chat_list = QListView()
        self.chat_list.setObjectName("chats")
        self.chat_list.setModel(self.chat_model)
        self.chat_list.setItemDelegate(ChatListDelegate(self.chat_list))
        self.chat_list.setUniformItemSizes(True)
        self.chat_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.chat_list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._applying_snapshot = False
        self.chat_list.selectionModel().selectionChanged.connect(self._chat_selected)
        self.chat_list.verticalScrollBar().valueChanged.connect(self._chat_list_scrolled)
        self.order_hold = ChatOrderHold(self.chat_list)
        self.order_hold.released.connect(self._show_held_back)
        self.order_hold.catch_up_requested.connect(self._show_held_back)
        #: The newest snapshot's rows while the order is held, to show when it ends.
        self._held_back: tuple[Sequence[ChatRow], ViewUpdateType] | None = None
        self.search_button = QPushButton("Search   Ctrl+K")
        self.search_button.setObjectName("flat")
        self.search_button.clicked.connect(self.open_search)
        side = QWidget()
        side.setObjectName("side")
        side_column = QVBoxLayout(side)
        side_column.setContentsMargins(0, 6, 0, 0)
        side_column.setSpacing(4)
        self.connection_label = QLabel("Connecting…")
        self.connection_label.setObjectName("caption")
        self.connection_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.connection_label.setWordWrap(True)
        self.retry_button = QPushButton("Retry now")
        self.retry_button.setObjectName("flat")
        self.retry_button.clicked.connect(self.account.reconnect_now)
        self.retry_button.hide()
        self.log_out_button = QPushButton("Log out")
        self.log_out_button.setToolTip("Delete this device's copy of the account and close")
        self.log_out_button.clicked.connect(self.log_out)
        self.log_out_button.hide()
        self.status_banner = StatusCard(self.chat_list)
        banner_column = QVBoxLayout(self.status_banner)
        banner_column.setContentsMargins(10, 6, 10, 6)
        banner_column.setSpacing(0)
        banner_column.addWidget(self.connection_label)
        banner_column.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignHCenter)
        banner_column.addWidget(self.log_out_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.theme_button = QPushButton("☾")
        self.theme_button.setObjectName("flat")
        self.theme_button.setToolTip("Switch between the light and the dark theme (Ctrl+Shift+L)")
        self.theme_button.clicked.connect(self.switch_theme)
        top_row = QHBoxLayout()
        top_row.setContentsMargins(0, 0, 4, 0)
        self.devices_button = QPushButton("⇄")
        self.devices_button.setObjectName("flat")
        self.devices_button.setToolTip("Devices: the sessions of this account")
        self.devices_button.clicked.connect(self.open_devices)
        self.devices_dialog: DevicesDialog | None = None
        self.help_button = QPushButton("?")
        self.help_button.setObjectName("flat")
        self.help_button.setToolTip("Help")
        help_menu = QMenu("Help", self.help_button)
        self.tour_action = help_menu.addAction("Guided tour", self.start_tour)
        self.tour_action.setEnabled(stage is not None)
        if stage is None:
            self.tour_action.setText(f"Guided tour ({no_tour_because})")
        self.help_button.setMenu(help_menu)
        top_row.addWidget(self.search_button, 1)
        top_row.addWidget(self.devices_button)
        top_row.addWidget(self.theme_button)
        top_row.addWidget(self.help_button)
        side_column.addLayout(top_row)
        side_column.addWidget(self.chat_list, 1)
        self._side_column = side_column
        self._status_shown: object = None
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(500)
        self._status_timer.timeout.connect(self._poll_status)
        self._status_timer.start()

        self.chat_pane = ChatPane(account, self.relay, clock=clock)
        typing = TypingGoesToCompose(self.chat_pane.compose)
        for view in (self.chat_list, self.chat_pane.history):
            view.installEventFilter(typing)
        self.profile = ProfilePanel(account, self.relay, clock=clock)
        self.profile.hide()
        self.inspector = InspectorPanel(account, self.relay, self.peer_name, slow_motion)
        self.inspector.hide()
        self.chat_pane.info_toggled.connect(self.show_profile)
        self.chat_pane.inspector_toggled.connect(self.show_inspector)
        self.chat_pane.history_shown.connect(self._history_shown)
        self.chat_pane.forward_requested.connect(self.pick_forward_target)
        self.forward_picker: ForwardPicker | None = None

        splitter = QSplitter()
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(side)
        splitter.addWidget(self.chat_pane)
        splitter.addWidget(self.profile)
        splitter.addWidget(self.inspector)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 760, 280, 380])
        side.setMinimumWidth(240)
        self.side = side
        self.setCentralWidget(splitter)
        self.setMinimumSize(MINIMUM_SIZE[0], MINIMUM_SIZE[1])
        self.chat_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chat_pane.back_requested.connect(self.show_chat_list)
        self.chat_list.clicked.connect(self._chat_clicked)
        self.narrow = False
        self._list_wanted = False
        self.search = SearchDialog(account, self.relay, self, clock=clock)
        self.search.chat_chosen.connect(self._search_chose_chat)
        self.search.message_chosen.connect(self._search_chose_message)
        QShortcut(QKeySequence("Ctrl+K"), self, self.open_search)
        for keys, step in (("Ctrl+Tab", 1), ("Alt+Down", 1), ("Ctrl+Shift+Tab", -1),
                           ("Alt+Up", -1)):  # fmt: skip
            QShortcut(QKeySequence(keys), self, lambda step=step: self.open_neighbour(step))
        # One binding only: StandardKey.Quit is Ctrl+Q on X11 too, and a sequence bound
        # twice is ambiguous there and fires neither.
        QShortcut(QKeySequence("Ctrl+Q"), self, self.close)
        QShortcut(QKeySequence("F12"), self, self.chat_pane.inspector_button.toggle)
        QShortcut(QKeySequence("Ctrl+Shift+L"), self, self.switch_theme)

        self._chat_rows = ChatRowCache()
        self._chat_count = CHAT_LIST_PAGE
        self._chat_key = ChatListViewKey(PeerGroupId.ROOT, self._chat_count)
        self._chat_view: ChatListView | None = None
        self._chat_feed = self._open_chat_list()
        self._names: dict[int, str] = {}

    # -- compatibility with the parts that drive the window ------------------------------

    @property
    def history(self) -> HistoryListView:
        return self.chat_pane.history

    @property
    def history_model(self) -> HistoryModel:
        return self.chat_pane.history.history_model

    @property
    def compose(self) -> ComposeBox:
        return self.chat_pane.compose

    @property
    def header(self) -> QLabel:
        return self.chat_pane.title

    @property
    def open_peer(self) -> PeerId | None:
        return self.chat_pane.peer_id

    def send(self) -> None:
        self.chat_pane.send()

    def peer_name(self, peer_id: PeerId) -> str:
        name = self._names.get(int(peer_id))
        return unknown_peer_name(peer_id) if name is None else name

    def _now(self) -> int:
        return int(self._clock())

    @Slot()
    def _poll_status(self) -> None:
        self.relay.watch(self.account.status_later(), self._show_status)

    def _show_status(self, status: EngineStatus | None) -> None:
        """Telegram's status line, in a card over the list's foot: say so while not
        connected or catching up, why it cannot connect, and when it tries again."""
        line = status_line(status)
        if line == self._status_shown:
            return  # polled twice a second: nothing to lay out or restyle when unchanged
        self._status_shown = line
        self.connection_label.setText(line.text)
        self.connection_label.setObjectName("warning" if line.warning else "caption")
        self.connection_label.style().polish(self.connection_label)
        self.retry_button.setVisible(line.can_retry)
        self.log_out_button.setVisible(line.can_log_out)
        self.status_banner.show_state(bool(line.text), clickable=line.can_retry or line.can_log_out)
        if line.final:
            self._status_timer.stop()  # nothing will change: stop asking

    # -- chat list ---------------------------------------------------------------------

    def _open_chat_list(self) -> SnapshotFeed:
        return SnapshotFeed(self.account.postbox, [self._chat_key], self._chat_list_changed)

    @Slot(object)
    def _chat_list_changed(self, combined: CombinedView) -> None:
        if self._chat_key not in combined.views:
            return  # the window has grown since
        view = combined[self._chat_key]
        self._chat_view = view
        rows = self._chat_rows.rows(view, self._now())
        for row in self._chat_rows.built:  # the other rows' names are known already
            if not row.is_hole:
                self._names[row.peer_id] = row.title
        update = effective_update(combined.update_types.get(self._chat_key, ()), view.update_type)
        self.show_chat_rows(rows, update)

    def show_chat_rows(
        self, rows: Sequence[ChatRow], update: ViewUpdateType, *, catch_up: bool = False
    ) -> None:
        """Show a snapshot's chat rows. Rows it moves move the list's selection with them:
        that is not the user choosing a chat, so it opens none. Scrolled down, the list
        keeps the rows in view where they are while chats move to the top above them;
        at the top, it shows the newest. While the pointer is over the list, its rows
        keep their places (``held_order``) and a hint counts the chats that wait, unless
        this is the list catching up (``catch_up``)."""
        changed = 0
        if self.order_hold.holding and not catch_up:
            self._held_back = (rows, update)
            held = held_order(self.chat_model.rows, rows)
            rows, changed = held.rows, held.changed
        else:
            self._held_back = None
        self.order_hold.show_changed(changed)
        anchors = self._chat_list_anchors()
        self._applying_snapshot = True
        try:
            self.chat_model.apply(rows, update)
        finally:
            self._applying_snapshot = False
        if anchors:
            self._restore_chat_list_anchor(anchors)
        self._select_open_chat()

    @Slot()
    def _show_held_back(self) -> None:
        held_back, self._held_back = self._held_back, None
        if held_back is not None:
            self.show_chat_rows(*held_back, catch_up=True)

    def _chat_list_anchors(self) -> list[tuple[object, int]]:
        """The rows in view and their offsets from the top, if the list is scrolled."""
        if self.chat_list.verticalScrollBar().value() == 0:
            return []
        anchors = []
        viewport = self.chat_list.viewport().rect()
        index = self.chat_list.indexAt(QPoint(1, 1))
        while index.isValid():
            rect = self.chat_list.visualRect(index)
            if rect.top() > viewport.bottom():
                break
            anchors.append((self.chat_model.rows[index.row()].key, rect.top()))
            index = self.chat_model.index(index.row() + 1, 0)
        return anchors

    def _restore_chat_list_anchor(self, anchors: list[tuple[object, int]]) -> None:
        """Scroll so that the first row in view that kept its place is where it was."""
        moved = self.chat_model.last_moved
        for key, offset in anchors:
            row = self.chat_model.row_of(key) if key not in moved else None
            if row is None:
                continue
            self.chat_list.doItemsLayout()
            shift = self.chat_list.visualRect(self.chat_model.index(row, 0)).top() - offset
            if shift:
                bar = self.chat_list.verticalScrollBar()
                bar.setValue(bar.value() + shift)
            return

    def _select_open_chat(self) -> None:
        selected = self.open_peer
        if selected is None:
            return
        row = self.chat_model.row_of(int(selected))
        if row is not None:
            index = self.chat_model.index(row, 0)
            selection = self.chat_list.selectionModel()
            if selection.isSelected(index):
                return  # moved with its row already: nothing to tell the views
            selection.select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    @Slot(int)
    def _chat_list_scrolled(self, value: int) -> None:
        """Near the end of the window, grow it by a page (a hole there loads on its own)."""
        bar = self.chat_list.verticalScrollBar()
        view = self._chat_view
        if view is None or value < bar.maximum() - bar.pageStep() or not view.has_earlier:
            return
        self._chat_count += CHAT_LIST_PAGE
        self._chat_key = ChatListViewKey(PeerGroupId.ROOT, self._chat_count)
        self._chat_feed.close()
        self._chat_feed = self._open_chat_list()

    @Slot(QItemSelection, QItemSelection)
    def _chat_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if not indexes or self._applying_snapshot:
            return
        row = self.chat_model.rows[indexes[0].row()]
        if isinstance(row, ChatRow) and not row.is_hole and row.peer_id != self.open_peer:
            chosen_in_list = self.chat_list.hasFocus()
            self.open_chat(PeerId(row.peer_id), row.title, unread=row.unread)
            compose = self.chat_pane.compose
            if chosen_in_list and compose.isVisibleTo(self):
                compose.setFocus()  # as Telegram Desktop: the chat opens ready to write

    @Slot()
    def switch_theme(self) -> None:
        """Light to dark or back; the choice is kept for the next start."""
        application = QApplication.instance()
        if not isinstance(application, QApplication):
            return
        name = "light" if current_theme().name == "dark" else "dark"
        apply_theme(application, name)
        save_theme(name)
        for view in (self.chat_list, self.history):
            view.viewport().update()

    # -- the narrow layout -----------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt
        if event.key() == Qt.Key.Key_Escape and self.narrow:
            self.show_chat_list()
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        self._check_width()

    def _check_width(self) -> None:
        """Narrow when the list, the chat and the panels shown do not fit side by side
        (the profile or the inspector takes its own width from what the list and the
        chat need)."""
        panels = sum(
            panel.minimumSizeHint().width()
            for panel in (self.profile, self.inspector)
            if not panel.isHidden()
        )
        narrow = self.width() < NARROW_WIDTH + panels
        if narrow != self.narrow:
            self.narrow = narrow
            self._lay_out_columns()

    def _lay_out_columns(self) -> None:
        """Wide: the list beside the chat. Narrow: the open chat alone (with a back
        button), or the list alone when no chat is open or the reader went back."""
        showing_chat = self.narrow and self.open_peer is not None and not self._list_wanted
        self.side.setVisible(not showing_chat)
        self.chat_pane.setVisible(not self.narrow or showing_chat)
        self.chat_pane.back_button.setVisible(showing_chat)
        self._place_tour()

    def _place_tour(self) -> None:
        """The tour's card under the chat list, or under the open chat while the list is
        hidden, so it stays in sight."""
        card = self.tour
        if card is None:
            return
        host = self._side_column if not self.side.isHidden() else self.chat_pane.layout()
        assert isinstance(host, QVBoxLayout)
        if card.parentWidget() is not host.parentWidget():
            was_shown = not card.isHidden()
            host.addWidget(card)
            card.setVisible(was_shown)

    @Slot(QModelIndex)
    def _chat_clicked(self, index: QModelIndex) -> None:
        """In the narrow layout, a click on the chat already open shows it again."""
        row = self.chat_model.rows[index.row()]
        if self.narrow and isinstance(row, ChatRow) and PeerId(row.peer_id) == self.open_peer:
            self._list_wanted = False
            self._lay_out_columns()

    @Slot()
    def show_chat_list(self) -> None:
        """Back to the chat list in the narrow layout (Esc, the back button)."""
        if self.narrow:
            self._list_wanted = True
            self._lay_out_columns()
            self.chat_list.setFocus()

    def open_neighbour(self, step: int) -> None:
        """Open the chat ``step`` rows below (above, if negative) the open one in the
        list, as Ctrl+Tab and Alt+Down do in Telegram; from anywhere, the compose box too."""
        chats = [
            row for row in self.chat_model.rows if isinstance(row, ChatRow) and not row.is_hole
        ]
        if not chats:
            return
        peers = [PeerId(row.peer_id) for row in chats]
        if self.open_peer in peers:
            position = peers.index(self.open_peer) + step
        else:
            position = 0 if step > 0 else len(chats) - 1
        if not 0 <= position < len(chats):
            return
        row = chats[position]
        self.open_chat(PeerId(row.peer_id), row.title, unread=row.unread)
        self.chat_list.scrollTo(self.chat_model.index(self.chat_model.rows.index(row), 0))

    # -- the open chat and its panels -----------------------------------------------------

    def open_chat(
        self,
        peer_id: PeerId,
        title: str = "",
        *,
        unread: int = 0,
        at: Message | None = None,
    ) -> None:
        self.chat_pane.open_chat(peer_id, title, unread=unread, at=at.index if at else None)
        self._select_open_chat()
        self._list_wanted = False
        if self.narrow:
            self._lay_out_columns()
        if self.profile.isVisible():
            self.profile.show_peer(peer_id)
        self.inspector.show_history(peer_id, None)

    @Slot(object)
    def pick_forward_target(self, message_ids: object) -> None:
        """Ask which chat to forward ``message_ids`` to; forward there and open it."""
        assert isinstance(message_ids, list)
        if self.forward_picker is not None:
            self.forward_picker.deleteLater()
        picker = ForwardPicker(self.chat_model.rows, len(message_ids), self)
        self.forward_picker = picker

        def chosen(peer_id: int, title: str) -> None:
            self.account.forward_messages(PeerId(peer_id), message_ids)
            self.open_chat(PeerId(peer_id), title)

        picker.chosen.connect(chosen)
        picker.open()

    @Slot(object)
    def _history_shown(self, view: object) -> None:
        if isinstance(view, MessageHistoryView):
            self.inspector.show_history(self.open_peer, view)

    @Slot(bool)
    def show_profile(self, shown: bool) -> None:
        if shown and self.open_peer is not None:
            self.profile.show_peer(self.open_peer)
        self.profile.setVisible(shown)
        self._check_width()

    @Slot(bool)
    def show_inspector(self, shown: bool) -> None:
        self.inspector.setVisible(shown)
        if shown:
            self.inspector.show_history(self.open_peer, self.chat_pane.view)
        self._check_width()

    @Slot()
    def open_search(self) -> None:
        """Ctrl+K: the search box over the chat pane, clear of the list and its badges
        (over the list only when the window shows nothing else)."""
        over = self.chat_pane if self.chat_pane.isVisible() else self.side
        size = self.search.size()
        width = min(size.width(), over.width() - 24)
        self.search.resize(max(width, 300), min(size.height(), max(over.height() - 60, 240)))
        top_left = over.mapToGlobal(over.rect().topLeft())
        x = top_left.x() + (over.width() - self.search.width()) // 2
        self.search.move(x, top_left.y() + 48)
        self.search.open_search()

    @Slot(object, str)
    def _search_chose_chat(self, peer_id: PeerId, title: str) -> None:
        self.open_chat(peer_id, title)

    @Slot(object, str, object)
    def _search_chose_message(self, peer_id: PeerId, title: str, message: Message) -> None:
        self.open_chat(peer_id, title, at=message)

    def start_tour(self, *, beat_scale: float = 1.0) -> None:
        """Show the guided tour's card under the chat list, at its first step
        (``beat_scale`` scales the pauses it leaves for the reader)."""
        if self.stage is None:
            return
        if self.tour is None:
            self.tour = TourCard(TOUR, TourContext(self, self.stage, beat_scale=beat_scale))
            self._side_column.addWidget(self.tour)
        self.tour.show()
        self._place_tour()
        self.tour.show_step(0)

    def open_devices(self) -> None:
        if self.devices_dialog is None:
            self.devices_dialog = DevicesDialog(self.account, self.relay, self, clock=self._clock)
        self.devices_dialog.show()
        self.devices_dialog.raise_()

    @Slot()
    def log_out(self) -> None:
        """Delete this device's database and close the window (its session is over)."""
        self.close_feeds()
        self.account.log_out()
        self.close()

    def close_feeds(self) -> None:
        if self.relay.closed:
            return
        self._status_timer.stop()
        if self.tour is not None:
            self.tour.runner.stop()
            if not self.tour.isHidden():  # open, if not on screen (the narrow layout)
                self.tour.finish()  # the traffic and slow motion as they were, for the rest
        self.relay.close()
        self._chat_feed.close()
        self.chat_pane.close_feed()
        self.profile.close_feed()
        self.inspector.close_feeds()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt
        self.close_feeds()
        super().closeEvent(event)
