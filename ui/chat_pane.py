"""The open chat: header, history window, jump-to-bottom button and compose box.

The history is a window of ``HISTORY_WINDOW`` messages on each side of an anchor, over
a live Postbox view (and a second one over the local namespace for pending messages).
Scrolling near either end of the window moves the anchor to the message on screen and
opens a view there, so any length of history scrolls in constant memory; where the
window reaches a hole the view shows a loading row and the sync engine fills it. A
chat with unread messages opens at the first of them; what has been on screen is
marked read.

Each chat keeps its interface state (draft, scroll position, selection) through
``ui.chat_state_keeper``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QStyleOptionViewItem,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postbox import (
    CombinedView,
    FailedMessageIdsViewKey,
    HistoryAnchor,
    HistoryAnchorKind,
    Media,
    Message,
    MessageFailure,
    MessageHistoryView,
    MessageHistoryViewKey,
    MessageId,
    MessageIndex,
    MessageNamespace,
    PeerId,
    PeerView,
    PeerViewKey,
    UpdateKind,
    ViewUpdateType,
)
from ui.account_port import AccountLike
from ui.chat_interface import split_message
from ui.chat_state_keeper import ChatStateKeeper
from ui.compose_box import ComposeBox
from ui.delegates import HistoryDelegate
from ui.delete_dialog import DeleteDialog
from ui.delete_question import delete_question
from ui.failed_messages import FailureAction, compose_state, failure_actions
from ui.feed import SnapshotFeed
from ui.futures import FutureRelay
from ui.history_view import HistoryListView
from ui.models import ROW_ROLE, effective_update
from ui.rows import (
    DeliveryState,
    HistoryRow,
    HistoryRowCache,
    MessageRow,
    history_rows,
    peer_kind,
    peer_subtitle,
    unnamed_peer,
)
from ui.selecting import SelectionBar, text_overlay
from ui.sticker_picker import StickerButton

__all__ = ["HISTORY_WINDOW", "ChatPane"]

#: Messages the history window holds on each side of its anchor.
HISTORY_WINDOW = 60
#: Rows from an end of the window at which scrolling moves the window.
EDGE_ROWS = 15
_CLOUD = int(MessageNamespace.CLOUD)


class ChatPane(QWidget):
    #: The info (profile) and inspector buttons in the header.
    info_toggled = Signal(bool)
    inspector_toggled = Signal(bool)
    #: The reader wants the chat list back (the narrow layout's back button).
    back_requested = Signal()
    #: Each cloud history snapshot shown (the inspector draws its hole map from it).
    history_shown = Signal(object)
    #: Messages (a list of ``MessageId``) the reader wants to forward: a chat is to be
    #: chosen for them.
    forward_requested = Signal(object)

    def __init__(
        self,
        account: AccountLike,
        relay: FutureRelay,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.setObjectName("chat")
        self.account = account
        self._relay = relay
        self._clock = clock
        self.peer_id: PeerId | None = None
        self.anchor = HistoryAnchor.upper_bound()
        self._feed: SnapshotFeed | None = None
        self._keys: tuple[MessageHistoryViewKey, MessageHistoryViewKey, PeerViewKey] | None = None
        self.view: MessageHistoryView | None = None
        self._pending: MessageHistoryView | None = None
        self._failed_key: FailedMessageIdsViewKey | None = None
        #: Why each failed message of the chat failed.
        self.failures: dict[MessageId, MessageFailure] = {}
        self._moving = False
        self._applying = False
        self._stick_next = False
        #: The window moved because the reader scrolled to its end: once the new one is
        #: shown, see whether the reader is at its end too.
        self._recheck_edge = False
        self._read_sent = 0
        self.editing: MessageRow | None = None
        #: The message the next send answers, chosen with "Reply".
        self.replying: MessageRow | None = None
        #: A message's text shown as selectable text over its bubble (double-click).
        self._text_overlay: QTextBrowser | None = None
        #: Messages replies answer that lie outside the window, fetched by id.
        self._replied: dict[int, Message] = {}
        self._asked_replied: set[int] = set()
        self._row_cache = HistoryRowCache()
        self._scroll_target: MessageIndex | None = None
        #: The read mark the chat was opened at, if it had unread messages then.
        self._unread_after: int | None = None
        self._unread_pending = False
        self._profiles_asked: set[PeerId] = set()
        self.window_moves = 0
        self._scroll_flash = True
        self._scroll_offset: int | None = None
        #: The confirmation before a delete, while it is open.
        self.delete_dialog: DeleteDialog | None = None
        self._build()
        #: The open chat's draft, scroll position and selection, kept and restored.
        self.state = ChatStateKeeper(self)

    # -- widgets ------------------------------------------------------------------------

    def _build(self) -> None:
        header = QWidget()
        header.setObjectName("header")
        self.title = QLabel("Select a chat")
        self.title.setObjectName("title")
        self.subtitle = QLabel("")
        self.subtitle.setObjectName("subtitle")
        names = QVBoxLayout()
        names.setSpacing(0)
        names.addWidget(self.title)
        names.addWidget(self.subtitle)
        self.info_button = QPushButton("Info")
        self.inspector_button = QPushButton("Inspector")
        for button, signal in (
            (self.info_button, self.info_toggled),
            (self.inspector_button, self.inspector_toggled),
        ):
            button.setObjectName("flat")
            button.setCheckable(True)
            button.toggled.connect(signal)
        self.info_button.setToolTip("Profile of this chat")
        self.inspector_button.setToolTip("What the database and the sync engine are doing (F12)")
        #: Back to the chat list, in the narrow one-column layout only.
        self.back_button = QPushButton("←")
        self.back_button.setObjectName("flat")
        self.back_button.setToolTip("Back to the chats (Esc)")
        self.back_button.clicked.connect(self.back_requested)
        self.back_button.hide()
        header_row = QHBoxLayout(header)
        header_row.setContentsMargins(14, 6, 8, 6)
        header_row.addWidget(self.back_button)
        header_row.addLayout(names, 1)
        header_row.addWidget(self.info_button)
        header_row.addWidget(self.inspector_button)

        self.history = HistoryListView()
        self.history.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.history.pushed_past_edge.connect(self.move_window_if_near_an_edge)
        self.history.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.history.customContextMenuRequested.connect(self._message_menu)
        self.jump_button = QToolButton(self.history)
        self.jump_button.setObjectName("jump")
        self.jump_button.setToolTip("Jump to the newest message")
        self.jump_button.clicked.connect(self.jump_to_bottom)
        self.jump_button.hide()

        compose = QWidget()
        compose.setObjectName("compose")
        self.edit_banner = QLabel("")
        self.edit_banner.setObjectName("caption")
        self.edit_banner.hide()
        self.compose = ComposeBox()
        self.compose.set_placeholders(
            "Write a message…  (Shift+Enter: new line, ↑ edits your last one)",
            "Write a message…  (Shift+Enter: new line)",
            "Write a message…",
        )
        self.compose.submitted.connect(self.send)
        self.send_button = QPushButton("Send")
        self.send_button.clicked.connect(self.send)
        self.sticker_button = StickerButton(self.account.postbox)
        self.sticker_button.sticker_chosen.connect(self.send_sticker)
        # Messages chosen with "Select" or Ctrl+click, and what can be done with them.
        self.selection = SelectionBar(self.history, lambda: self.peer_id)
        self.selection.forward_requested.connect(self.forward_requested)
        self.selection.delete_requested.connect(self.ask_delete)
        compose_column = QVBoxLayout(compose)
        compose_column.setContentsMargins(10, 6, 10, 8)
        compose_column.addWidget(self.selection)
        compose_column.addWidget(self.edit_banner)
        compose_row = QHBoxLayout()
        compose_row.addWidget(self.compose, 1)
        compose_row.addWidget(self.compose.counter, 0, Qt.AlignmentFlag.AlignBottom)
        compose_row.addWidget(self.sticker_button, 0, Qt.AlignmentFlag.AlignBottom)
        compose_row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        compose_column.addLayout(compose_row)
        # In a broadcast channel the account only reads, in place of the compose box.
        self.mute_button = QPushButton("Mute")
        self.mute_button.setObjectName("mute")
        self.mute_button.clicked.connect(self._toggle_mute)
        self.mute_button.hide()
        compose_column.addWidget(self.mute_button)

        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(header)
        column.addWidget(self.history, 1)
        column.addWidget(compose)
        self._read_timer = QTimer(self)
        self._read_timer.setSingleShot(True)
        self._read_timer.setInterval(120)
        self._read_timer.timeout.connect(self._read_what_is_shown)
        self._set_enabled(False)
        self.history.installEventFilter(self)
        self.history.viewport().installEventFilter(self)
        self.compose.installEventFilter(self)

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (self.compose, self.send_button, self.sticker_button, self.info_button):
            widget.setEnabled(enabled)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if watched is self.history and event.type() == QEvent.Type.Resize:
            self._place_jump_button()
        elif watched is self._text_overlay and event.type() == QEvent.Type.FocusOut:
            self.close_text_overlay()
        elif (
            watched is self.history.viewport()
            and event.type() == QEvent.Type.MouseButtonDblClick
            and isinstance(event, QMouseEvent)
        ):
            index = self.history.indexAt(event.position().toPoint())
            row = index.data(ROW_ROLE) if index.isValid() else None
            if isinstance(row, MessageRow) and row.text:
                return self.select_text_in(row, event.position().toPoint()) is not None
        elif (
            watched is self.history.viewport()
            and event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
                index = self.history.indexAt(event.position().toPoint())
                row = index.data(ROW_ROLE) if index.isValid() else None
                if isinstance(row, MessageRow):
                    self.selection.toggle(row)
                    return True
            failed = self.failure_mark_at(event.position().toPoint())
            if failed is not None:
                self.show_failure_menu(failed, event.position().toPoint())
                return True
            target = self.reply_at(event.position().toPoint())
            if target is not None:
                self.jump_to_message(target)
                return True
            url = self.link_at(event.position().toPoint())
            if url is not None:
                QDesktopServices.openUrl(QUrl(url))
                return True
        elif watched is self.compose and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Up and not self.compose.text():
                return self.edit_last()
            if event.key() == Qt.Key.Key_Escape:
                if self.editing is not None:
                    self.cancel_edit()
                elif self.replying is not None:
                    self.cancel_reply()
                elif self.selection.selected:
                    self.selection.clear()
                else:
                    self.back_requested.emit()  # the narrow layout goes back to the list
                return True
        return super().eventFilter(watched, event)

    def _place_jump_button(self) -> None:
        size = self.jump_button.sizeHint()
        width = max(size.width(), 44)
        self.jump_button.setGeometry(
            self.history.width() - width - 18, self.history.height() - 44 - 14, width, 44
        )

    # -- the window over the history ----------------------------------------------------

    def open_chat(
        self, peer_id: PeerId, title: str = "", *, unread: int = 0, at: MessageIndex | None = None
    ) -> None:
        """Show a chat: at message ``at`` if given, else at its first unread message if
        it has some, else where it was left, else at the bottom. The chat shown before
        keeps its interface state."""
        self.state.leave()
        self.cancel_edit()
        self.cancel_reply()
        self.peer_id = peer_id
        self.title.setText(title or f"Chat {peer_id.id}")
        self.subtitle.setText("")
        self._replied.clear()
        self._asked_replied.clear()
        self._row_cache = HistoryRowCache()
        self.selection.clear()
        self._read_sent = 0
        self.view = self._pending = None
        self.failures = {}
        self.history.animator.stop()
        self.history.history_model.apply([], ViewUpdateType.INITIAL)
        self._set_enabled(True)
        if peer_id not in self._profiles_asked:
            # The header's member count and presence come from the full profile.
            self._profiles_asked.add(peer_id)
            self._relay.watch(self.account.refresh_profile(peer_id), lambda _done: None)
        self._scroll_target = at
        self._recheck_edge = False
        # The unread bar marks where the reader left off when the chat was opened.
        self._unread_after = None
        self._unread_pending = unread > 0 and at is None
        self._scroll_flash, self._scroll_offset = True, None
        self.state.open(peer_id, unread=unread if at is None else 1)  # a jump wins
        if at is not None:
            anchor = HistoryAnchor.at_index(at)
        else:
            anchor = HistoryAnchor.first_unread() if unread else HistoryAnchor.upper_bound()
        self._open_window(anchor)

    def _open_window(self, anchor: HistoryAnchor) -> None:
        assert self.peer_id is not None
        if self._feed is not None:
            self._feed.close()
        self.anchor = anchor
        cloud = MessageHistoryViewKey(self.peer_id, anchor, HISTORY_WINDOW)
        local = MessageHistoryViewKey(
            self.peer_id, HistoryAnchor.upper_bound(), HISTORY_WINDOW, namespace=1
        )
        peer = PeerViewKey(self.peer_id)
        self._keys = (cloud, local, peer)
        self._failed_key = FailedMessageIdsViewKey(self.peer_id)
        self._moving = True
        self._feed = SnapshotFeed(
            self.account.postbox, (*self._keys, self._failed_key), self._snapshot
        )

    @Slot(object)
    def _snapshot(self, combined: CombinedView) -> None:
        if self._keys is None or self._keys[0] not in combined.views:
            return  # a snapshot of a window that has since moved
        cloud_key, local_key, peer_key = self._keys
        cloud, local, peer = combined[cloud_key], combined[local_key], combined[peer_key]
        first = self._moving
        self._moving = False
        if peer.peer is not None:
            self.title.setText(peer.peer.name)
        elif self.peer_id is not None:
            self.title.setText(unnamed_peer(int(self.peer_id)))
        self.subtitle.setText(peer_subtitle(peer, int(self._clock())))
        self._show_compose_or_mute(peer)
        failed_key = self._failed_key
        failed_changed = failed_key is not None and failed_key in combined.update_types
        if failed_changed and failed_key is not None:
            self.failures = dict(combined[failed_key].failures)
        if (
            cloud_key in combined.update_types
            or local_key in combined.update_types
            or failed_changed
            or first
        ):
            reasons = combined.update_types
            update = effective_update(
                [*reasons.get(cloud_key, ()), *reasons.get(local_key, ())],
                cloud.update_type if cloud_key in reasons else local.update_type,
            )
            self.view, self._pending = cloud, local
            if self._unread_pending and cloud.read_state is not None:
                self._unread_pending = False
                state = cloud.read_state.get(_CLOUD)
                self._unread_after = state.max_incoming_read_id if state else None
            self._show(update)
            if self._scroll_target is not None:
                # A jump's target may lie in a hole: it is shown once the fill brings it.
                shown = self._scroll_to_message(
                    self._scroll_target, flash=self._scroll_flash, top_margin=self._scroll_offset
                )
                if shown or not (cloud.is_loading or cloud.hole_earlier or cloud.hole_later):
                    self._scroll_target = None
            elif first and update.kind is UpdateKind.INITIAL_UNREAD and update.anchor is not None:
                self._scroll_to_message(update.anchor)
            elif first and self._stick_next:
                self.history.scrollToBottom()
            self._stick_next = False
            if first and self._recheck_edge:
                # A flick may have carried the reader to this window's end already: go on.
                self._recheck_edge = False
                QTimer.singleShot(0, self.move_window_if_near_an_edge)
            self.history_shown.emit(cloud)
        self._update_jump_button()
        self._read_timer.start()

    def _is_group(self) -> bool:
        return self.peer_id is not None and peer_kind(int(self.peer_id)) == "group"

    def _show(self, update: ViewUpdateType) -> None:
        if self.view is None:
            return
        # The peers the windows name come with them: no second read, live on a rename.
        named = dict(self.view.peers)
        if self._pending is not None:
            named.update(self._pending.peers)
        names = {int(peer_id): peer.name for peer_id, peer in named.items()}
        rows = history_rows(
            self.view,
            int(self._clock()),
            pending=self._pending,
            authors=names if self._is_group() else None,
            unread_after=self._unread_after,
            replied=self._replied,
            chat_name=self.title.text(),
            peer_names=names,
            cache=self._row_cache,
            failures=self.failures,
        )
        self._ask_replied(rows)
        if self._text_overlay is not None and rows != list(self.history.history_model.rows):
            self.close_text_overlay()
        self._applying = True
        try:
            self.history.show_rows(rows, update)
        finally:
            self._applying = False
        if self.state.waiting_for_rows:
            self.state.restore_rows()

    def _ask_replied(self, rows: list[HistoryRow]) -> None:
        """Fetch the messages replies answer that the window does not hold."""
        missing = {
            row.reply.id
            for row in rows
            if isinstance(row, MessageRow)
            and row.reply is not None
            and row.reply.missing
            and row.reply.id not in self._asked_replied
        }
        if not missing or self.peer_id is None:
            return
        self._asked_replied |= missing
        peer = self.peer_id

        def learned(found: dict[int, Message]) -> None:
            if peer != self.peer_id or not found:
                return
            self._replied.update(found)
            self._show(ViewUpdateType.UPDATE_VISIBLE)

        self._relay.watch(self.account.messages(peer, missing), learned)

    def reply_at(self, position: QPoint) -> int | None:
        """The message a reply preview under ``position`` (viewport pixels) answers."""
        index = self.history.indexAt(position)
        row = index.data(ROW_ROLE) if index.isValid() else None
        if not isinstance(row, MessageRow) or row.reply is None:
            return None
        delegate = self.history.itemDelegate()
        area = getattr(delegate, "reply_areas", {}).get(row.key)
        if area is None:
            return None
        top_left = self.history.visualRect(index).topLeft()
        return row.reply.id if area.translated(top_left).contains(position) else None

    def link_at(self, position: QPoint) -> str | None:
        """The web address of a link under ``position`` (viewport pixels), if any."""
        index = self.history.indexAt(position)
        row = index.data(ROW_ROLE) if index.isValid() else None
        delegate = self.history.itemDelegate()
        if not isinstance(row, MessageRow) or not isinstance(delegate, HistoryDelegate):
            return None
        option = QStyleOptionViewItem()
        self.history.initViewItemOption(option)
        return delegate.link_at(option, row, position - self.history.visualRect(index).topLeft())

    def jump_to_message(self, message_id: int) -> None:
        """Show message ``message_id`` of the open chat (a reply's original): scroll to it
        if the window holds it, else open the window there (filling holes on the way)."""
        if self.peer_id is None:
            return
        index = MessageIndex(MessageId(self.peer_id, _CLOUD, message_id), 0)
        if self.history.history_model.row_of(("message", _CLOUD, message_id)) is not None:
            self._scroll_to_message(index, flash=True)
            return
        self._scroll_target = index
        self._open_window(HistoryAnchor.at_message(index.id))

    def show_message_at(self, index: MessageIndex, *, top_margin: int) -> None:
        """Put a message's top ``top_margin`` pixels below the viewport's (a restored
        place): at once if the window holds it, else once a window opened there does."""
        if self._scroll_to_message(index, top_margin=top_margin):
            return
        self._scroll_target = index
        self._scroll_flash, self._scroll_offset = False, top_margin
        self._open_window(HistoryAnchor.at_message(index.id))

    def _scroll_to_message(
        self, index: MessageIndex, *, flash: bool = False, top_margin: int | None = None
    ) -> bool:
        """Bring a message into view; whether the window holds it. ``top_margin``: put
        its top that far below the viewport's (a restored place); else ``flash``: a jump,
        which centres the message and tints it, as Telegram does; else (the first unread
        message) it goes near the top, below the row above it for context."""
        key = ("message", index.id.namespace, index.id.id)
        position = self.history.history_model.row_of(key)
        if position is None:
            return False
        self._applying = True
        try:
            if top_margin is not None:
                self.history.scroll_to_row(position, top_margin=top_margin)
            elif flash:
                self.history.centre_row(position)
                self.history.flash(key)
            else:
                self.history.scroll_to_row(max(0, position - 1))
        finally:
            self._applying = False
        return True

    @Slot(int)
    def _scrolled(self, _value: int) -> None:
        self.close_text_overlay()
        if self._applying:
            return
        self._read_timer.start()
        self._update_jump_button()
        self.move_window_if_near_an_edge()

    def move_window_if_near_an_edge(self) -> bool:
        """Open the window around what is on screen when the reader nears one of its ends
        beyond which more stored messages lie (a hole is the filler's, not ours)."""
        view = self.view
        visible = self.history.visible_range()
        if view is None or visible is None or self._moving:
            return False
        rows = self.history.history_model.rows
        first, last = visible
        target: MessageRow | None = None
        if first < EDGE_ROWS and view.earlier_id is not None:
            target = self._cloud_row(range(first, len(rows)))
        elif last >= len(rows) - EDGE_ROWS and view.later_id is not None:
            target = self._cloud_row(range(last, -1, -1))
        elif (
            self.history.at_bottom()
            and self.anchor.kind is not HistoryAnchorKind.UPPER_BOUND
            and view.later_id is None
            and not view.hole_later
        ):
            self._open_window(HistoryAnchor.upper_bound())
            self.window_moves += 1
            return True
        if target is None:
            return False
        index = MessageIndex(
            MessageId(PeerId(target.peer_id), target.namespace, target.id), target.timestamp
        )
        self._open_window(HistoryAnchor.at_index(index))
        self.window_moves += 1
        self._recheck_edge = True
        return True

    def _cloud_row(self, positions: range) -> MessageRow | None:
        rows = self.history.history_model.rows
        for position in positions:
            row = rows[position]
            if isinstance(row, MessageRow) and row.namespace == _CLOUD:
                return row
        return None

    # -- jump to bottom and reading ------------------------------------------------------

    def at_live_edge(self) -> bool:
        """The window ends at the newest message and the reader is at its bottom."""
        view = self.view
        return (
            view is not None
            and view.later_id is None
            and not view.hole_later
            and self.history.at_bottom()
        )

    def _update_jump_button(self) -> None:
        view = self.view
        if view is None or self.at_live_edge():
            self.jump_button.hide()
            return
        unread = view.read_state.count if view.read_state is not None else 0
        self.jump_button.setText(f"↓  {unread}" if unread else "↓")
        self._place_jump_button()
        self.jump_button.show()
        self.jump_button.raise_()

    @Slot()
    def jump_to_bottom(self) -> None:
        self._scroll_target = None
        view = self.view
        if view is not None and view.later_id is None and not view.hole_later:
            self.history.scrollToBottom()
        elif self.peer_id is not None:
            self._stick_next = True
            self._open_window(HistoryAnchor.upper_bound())
        self._update_jump_button()

    @Slot()
    def _read_what_is_shown(self) -> None:
        """Mark the chat read up to the newest incoming message that has been on screen."""
        view, visible = self.view, self.history.visible_range()
        if self.peer_id is None or view is None or visible is None or not self.isVisible():
            return
        rows = self.history.history_model.rows
        shown = [
            row.id
            for row in rows[visible[0] : visible[1] + 1]
            if isinstance(row, MessageRow) and not row.outgoing and row.namespace == _CLOUD
        ]
        if not shown:
            return
        read = 0
        if view.read_state is not None:
            state = view.read_state.get(_CLOUD)
            read = state.max_incoming_read_id if state is not None else 0
        newest = max(shown)
        if newest > max(read, self._read_sent):
            self._read_sent = newest
            self.account.mark_read(self.peer_id, newest)

    # -- compose ------------------------------------------------------------------------

    @Slot()
    def send(self) -> None:
        """Send what is typed; a text past the limit goes as several messages (the first
        answers the reply), as Telegram Desktop sends it. An edit must fit in one."""
        text = self.compose.text().strip()
        if not text or self.peer_id is None:
            return
        parts = split_message(text)
        if self.editing is not None:
            if len(parts) == 1:
                target = MessageId(PeerId(self.editing.peer_id), _CLOUD, self.editing.id)
                self.account.edit_message(target, text)
                self.cancel_edit()
            return
        reply_to = self.replying.id if self.replying is not None else None
        for position, part in enumerate(parts):
            self.account.send_message(self.peer_id, part, reply_to=None if position else reply_to)
        self.cancel_reply()
        self.compose.clear()
        self.state.save_draft()  # the chat's draft is gone with the send
        self.jump_to_bottom()

    @Slot(object)
    def send_sticker(self, media: Media) -> None:
        """Send a sticker or GIF chosen in the picker (shown pending until it is sent)."""
        if self.peer_id is not None:
            self.account.send_media(self.peer_id, media)
            self.jump_to_bottom()

    def edit_last(self) -> bool:
        """Start editing our newest sent message shown; False if there is none."""
        for row in reversed(self.history.history_model.rows):
            if isinstance(row, MessageRow) and can_edit(row):
                self.start_edit(row)
                return True
        return False

    def start_edit(self, row: MessageRow) -> None:
        self.state.hold_draft_for_edit()
        self.cancel_reply()
        self.editing = row
        self.edit_banner.setText("Editing your message  ·  Esc to cancel")
        self.edit_banner.show()
        self.compose.setText(row.text)
        self.compose.setFocus()
        self.send_button.setText("Save")

    def cancel_edit(self) -> None:
        if self.editing is None:
            return
        self.editing = None
        self.edit_banner.hide()
        self.send_button.setText("Send")
        self.state.give_back_held_draft()

    def start_reply(self, row: MessageRow, *, focus: bool = True) -> None:
        self.cancel_edit()
        self.state.reply_to_restore = None
        self.replying = row
        who = "yourself" if row.outgoing else (row.author or self.title.text())
        quoted = (row.text or row.media).replace("\n", " ")
        if len(quoted) > 60:
            quoted = quoted[:59] + "…"
        self.edit_banner.setText(f"Reply to {who}: {quoted}  ·  Esc to cancel")
        self.edit_banner.show()
        if focus:
            self.compose.setFocus()
        self.state.draft_changed()

    def cancel_reply(self) -> None:
        self.state.reply_to_restore = None
        if self.replying is None:
            return
        self.replying = None
        self.edit_banner.hide()
        self.state.draft_changed()

    # -- message actions ------------------------------------------------------------------

    @Slot(QPoint)
    def _message_menu(self, position: QPoint) -> None:
        index = self.history.indexAt(position)
        row = index.data(ROW_ROLE) if index.isValid() else None
        if not isinstance(row, MessageRow) or self.peer_id is None:
            return
        menu = self.message_menu(row)
        menu.exec(self.history.viewport().mapToGlobal(position))
        menu.deleteLater()

    def message_menu(self, row: MessageRow) -> QMenu:
        """What can be done with one message, as Telegram's context menu offers it."""
        menu = QMenu(self)
        if row.failure:
            self._add_failure_actions(menu, row)
            menu.addSeparator()
        sent = row.namespace == _CLOUD
        kind = peer_kind(row.peer_id)
        if sent and kind != "channel":  # a channel's readers do not post
            menu.addAction("Reply", lambda: self.start_reply(row))
        if row.text:
            menu.addAction("Copy text", lambda: QApplication.clipboard().setText(row.text))
        if can_edit(row):
            menu.addAction("Edit", lambda: self.start_edit(row))
        if sent and kind != "secret chat":  # as on Telegram, secret messages stay put
            menu.addAction(
                "Forward…",
                lambda: self.forward_requested.emit(
                    [MessageId(PeerId(row.peer_id), row.namespace, row.id)]
                ),
            )
        selected = row.key in self.history.selected_keys
        menu.addAction("Deselect" if selected else "Select", lambda: self.selection.toggle(row))
        if kind in ("user", "group") and not row.failure:
            menu.addSeparator()
            if not sent:
                menu.addAction("Cancel sending", lambda: self.delete(row, for_everyone=False))
            else:
                menu.addAction("Delete", lambda: self.ask_delete([row]))
        return menu

    # -- failed messages ------------------------------------------------------------------

    def failure_mark_at(self, position: QPoint) -> MessageRow | None:
        """The failed message whose red "!" is under ``position`` (viewport pixels)."""
        index = self.history.indexAt(position)
        row = index.data(ROW_ROLE) if index.isValid() else None
        delegate = self.history.itemDelegate()
        if not isinstance(row, MessageRow) or not isinstance(delegate, HistoryDelegate):
            return None
        mark = delegate.failure_marks.get(row.key)
        top_left = self.history.visualRect(index).topLeft()
        return row if mark is not None and mark.translated(top_left).contains(position) else None

    def show_failure_menu(self, row: MessageRow, position: QPoint) -> QMenu:
        """Retry, Delete (and Retry all) for a failed message, under its red "!"."""
        menu = QMenu(self)
        self._add_failure_actions(menu, row)
        menu.popup(self.history.viewport().mapToGlobal(position))
        return menu

    def _add_failure_actions(self, menu: QMenu, row: MessageRow) -> None:
        peer = PeerId(row.peer_id)
        message = MessageId(peer, row.namespace, row.id)
        failed = sorted(self.failures)
        for action, label in failure_actions(len(failed)):
            if action is FailureAction.RETRY:
                menu.addAction(label, lambda: self.account.retry_messages([message]))
            elif action is FailureAction.RETRY_ALL:
                menu.addAction(label, lambda: self.account.retry_messages(failed))
            else:
                menu.addAction(label, lambda: self.delete(row, for_everyone=False))

    # -- the compose box, or a mute button -----------------------------------------------

    def _show_compose_or_mute(self, peer: PeerView) -> None:
        """The compose box where the account may write; in a broadcast channel it only
        reads, a button that mutes or unmutes it instead."""
        state = compose_state(peer.peer, peer.notification_settings, int(self._clock()))
        for widget in (self.compose, self.sticker_button, self.send_button):
            widget.setVisible(state.can_post)
        if not state.can_post:
            self.compose.counter.hide()  # it shows itself again as text is typed
        self.mute_button.setVisible(not state.can_post)
        self.mute_button.setText(state.mute_label)
        self.mute_button.setProperty("muted", state.muted)
        if not state.can_post:
            self.cancel_edit()
            self.cancel_reply()

    @Slot()
    def _toggle_mute(self) -> None:
        if self.peer_id is not None:
            self.account.set_muted(self.peer_id, not self.mute_button.property("muted"))

    # -- selecting text -------------------------------------------------------------------

    def select_text_in(self, row: MessageRow, at: QPoint | None = None) -> QTextBrowser | None:
        """Lay the message's text over its bubble as text the mouse can select (Ctrl+C
        copies). It goes when focus leaves it, the view scrolls or the history changes."""
        self.close_text_overlay()
        overlay = text_overlay(self.history, row, at)
        if overlay is not None:
            overlay.installEventFilter(self)
            overlay.show()
            overlay.setFocus()
            self._text_overlay = overlay
        return overlay

    def close_text_overlay(self) -> None:
        overlay, self._text_overlay = self._text_overlay, None
        if overlay is not None:
            overlay.removeEventFilter(self)
            overlay.hide()
            overlay.deleteLater()

    @Slot(object)
    def ask_delete(self, rows: Sequence[MessageRow]) -> DeleteDialog | None:
        """Ask before deleting ``rows`` (messages of the open chat), as Telegram Desktop
        does; they go when the reader answers Delete. Returns the dialog (not blocking)."""
        if not rows or self.peer_id is None:
            return None
        if self.delete_dialog is not None:
            self.delete_dialog.reject()
        question = delete_question(
            len(rows),
            peer_kind(int(self.peer_id)),
            self.title.text(),
            all_ours=all(row.outgoing for row in rows),
        )
        dialog = DeleteDialog(question, rows, self)
        dialog.finished.connect(self._delete_answered)
        self.delete_dialog = dialog
        dialog.open()
        return dialog

    @Slot(int)
    def _delete_answered(self, result: int) -> None:
        dialog, self.delete_dialog = self.delete_dialog, None
        if dialog is None:
            return
        dialog.deleteLater()
        if result == QDialog.DialogCode.Accepted.value:
            self.delete_rows(dialog.rows, for_everyone=dialog.for_everyone)

    def delete(self, row: MessageRow, *, for_everyone: bool) -> None:
        self.delete_rows([row], for_everyone=for_everyone)

    def delete_rows(self, rows: Sequence[MessageRow], *, for_everyone: bool) -> None:
        """Delete messages of one chat now (asked already, or a send cancelled)."""
        if not rows:
            return
        keys = {row.key for row in rows}
        if self.editing is not None and self.editing.key in keys:
            self.cancel_edit()
        if self.replying is not None and self.replying.key in keys:
            self.cancel_reply()
        self.selection.drop(keys)
        peer = PeerId(rows[0].peer_id)
        ids = [MessageId(peer, row.namespace, row.id) for row in rows]
        self.account.delete_messages(peer, ids, for_everyone=for_everyone)

    def close_feed(self) -> None:
        self.state.leave()
        self.sticker_button.close_picker()
        if self._feed is not None:
            self._feed.close()
            self._feed = None
        self._keys = None


def can_edit(row: MessageRow) -> bool:
    """Our own sent text message, not a forward, outside secret chats (neither of which
    is edited)."""
    return (
        row.outgoing
        and row.namespace == _CLOUD
        and row.delivery in (DeliveryState.SENT, DeliveryState.READ)
        and bool(row.text)
        and row.forwarded_from is None
        and peer_kind(row.peer_id) != "secret chat"
    )
