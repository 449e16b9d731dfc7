"""The open chat's interface state, kept and restored for a ``ChatPane``.

What the reader leaves in a chat (the draft and the message it answers, where the history
was scrolled to, what was selected) is saved when they go to another chat, the draft also
after a pause in typing, and comes back with the chat, after a restart too. The chat's
``ChatInterfaceStateViewKey`` feeds it: the first snapshot restores, later ones bring a
draft saved on another device unless the reader has typed since. The decisions are
``ui.chat_interface``'s (Qt-free); this part does the widgets' side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot

from postbox import (
    ChatInterfaceStateView,
    ChatInterfaceStateViewKey,
    CombinedView,
    MessageId,
    MessageIndex,
    MessageNamespace,
    PeerId,
    ScrollPosition,
)
from ui.chat_interface import ComposeDraft, remote_draft_applies, restore_of
from ui.feed import SnapshotFeed
from ui.rows import MessageRow

if TYPE_CHECKING:
    from ui.chat_pane import ChatPane

__all__ = ["DRAFT_SAVE_MS", "ChatStateKeeper"]

#: A pause in typing after which the draft is saved (and shared with other devices).
DRAFT_SAVE_MS = 1500
_CLOUD = int(MessageNamespace.CLOUD)


class ChatStateKeeper(QObject):
    def __init__(self, pane: ChatPane) -> None:
        super().__init__(pane)
        self._pane = pane
        self._feed: SnapshotFeed | None = None
        #: The open chat's saved state has come back (before that, nothing is known).
        self.restored = False
        #: The draft last saved here or taken from another device.
        self.known_draft = ComposeDraft()
        #: The draft put aside while one of our messages is edited in the box.
        self._held_draft: ComposeDraft | None = None
        #: A restored reply or selection whose messages the history has not shown yet.
        self.reply_to_restore: int | None = None
        self._selection_to_restore: tuple[int, ...] = ()
        self._opened_unread = 0
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_SAVE_MS)
        self._draft_timer.timeout.connect(self.save_draft)
        pane.compose.textChanged.connect(self._draft_timer.start)

    # -- what the pane tells -------------------------------------------------------------

    def open(self, peer_id: PeerId, *, unread: int) -> None:
        """A chat opened (``unread``: messages waiting, which win over the saved place)."""
        self.restored = False
        self.known_draft = ComposeDraft()
        self.reply_to_restore, self._selection_to_restore = None, ()
        self._opened_unread = unread
        self._show_draft(ComposeDraft())
        key = ChatInterfaceStateViewKey(peer_id)
        self._feed = SnapshotFeed(self._pane.account.postbox, (key,), self._snapshot)

    def leave(self) -> None:
        """Keep the open chat's draft, scroll position and selection for its return."""
        pane = self._pane
        if pane.peer_id is None:
            return
        self.save_draft()
        if self.restored:
            pane.account.keep_view_state(
                pane.peer_id, self._scroll_position(), self._selected_cloud_ids()
            )
        if self._feed is not None:
            self._feed.close()
            self._feed = None
        self.restored = False

    def draft_changed(self) -> None:
        """The reply changed: the draft is saved after the usual pause."""
        self._draft_timer.start()

    def hold_draft_for_edit(self) -> None:
        """An edit takes the box: the draft waits aside."""
        if self._pane.editing is None:
            self._held_draft = self.shown_draft()

    def give_back_held_draft(self) -> None:
        """The edit ended: the draft typed before it comes back."""
        held, self._held_draft = self._held_draft or ComposeDraft(), None
        self._show_draft(held)

    def shown_draft(self) -> ComposeDraft:
        """The draft as the box shows it (the one put aside while editing)."""
        pane = self._pane
        if pane.editing is not None:
            return self._held_draft or ComposeDraft()
        reply = pane.replying.id if pane.replying is not None else self.reply_to_restore
        return ComposeDraft(pane.compose.text(), reply)

    @Slot()
    def save_draft(self) -> None:
        """Keep the open chat's draft, if it changed since it was last kept."""
        self._draft_timer.stop()
        pane = self._pane
        draft = self.shown_draft()
        if pane.peer_id is None or draft == self.known_draft:
            return
        if not self.restored and draft.is_empty:
            return  # the saved draft is not known yet: an empty box must not wipe it
        self.known_draft = draft
        pane.account.save_draft(pane.peer_id, draft.text, reply_to=draft.reply_to_id)

    def restore_rows(self) -> None:
        """Take back a restored reply and selection once their messages are shown."""
        pane = self._pane
        model = pane.history.history_model
        if self.reply_to_restore is not None:
            position = model.row_of(("message", _CLOUD, self.reply_to_restore))
            row = None if position is None else model.rows[position]
            if isinstance(row, MessageRow):
                pane.start_reply(row, focus=False)
                self._draft_timer.stop()
        if self._selection_to_restore:
            missing = []
            for id_ in self._selection_to_restore:
                position = model.row_of(("message", _CLOUD, id_))
                row = None if position is None else model.rows[position]
                if not isinstance(row, MessageRow):
                    missing.append(id_)
                elif row.key not in pane.selection.selected:
                    pane.selection.toggle(row)
            self._selection_to_restore = tuple(missing)

    @property
    def waiting_for_rows(self) -> bool:
        return self.reply_to_restore is not None or bool(self._selection_to_restore)

    # -- the feed ---------------------------------------------------------------------

    @Slot(object)
    def _snapshot(self, combined: CombinedView) -> None:
        pane = self._pane
        view = next(iter(combined.views.values()), None)
        if not isinstance(view, ChatInterfaceStateView) or view.peer_id != pane.peer_id:
            return
        draft = ComposeDraft.of(None if view.state is None else view.state.draft)
        if not self.restored:
            self.restored = True
            restore = restore_of(view.state, unread=self._opened_unread)
            self.known_draft = restore.draft
            # The state may come a moment after the chat opened: typing wins over it.
            if remote_draft_applies(self.shown_draft(), ComposeDraft()):
                self._show_draft(restore.draft)
            else:
                self._draft_timer.start()
            self._selection_to_restore = restore.selected_ids
            if restore.scroll is not None:
                self._restore_scroll(restore.scroll)
            self.restore_rows()
            return
        if draft == self.known_draft:
            return
        if pane.editing is None and remote_draft_applies(self.shown_draft(), self.known_draft):
            self._show_draft(draft)  # saved on another device: nothing typed here since
        self.known_draft = draft

    def _show_draft(self, draft: ComposeDraft) -> None:
        """Put a draft in the box without counting it as typing."""
        pane = self._pane
        pane.compose.setText(draft.text)
        self._draft_timer.stop()
        if pane.replying is not None and pane.replying.id != draft.reply_to_id:
            pane.cancel_reply()
            self._draft_timer.stop()
        self.reply_to_restore = None
        if draft.reply_to_id is not None and pane.replying is None:
            self.reply_to_restore = draft.reply_to_id
            self.restore_rows()

    def _restore_scroll(self, scroll: ScrollPosition) -> None:
        pane = self._pane
        assert pane.peer_id is not None
        message_id = MessageId(pane.peer_id, _CLOUD, scroll.message_id)
        pane.show_message_at(MessageIndex(message_id, 0), top_margin=scroll.offset)

    def _scroll_position(self) -> ScrollPosition | None:
        """Where the reader is, unless at the newest messages (the default place)."""
        pane = self._pane
        if pane.at_live_edge() and pane.history.at_bottom():
            return None
        top = pane.history.top_row()
        if top is None:
            return None
        key, offset = top
        if not (isinstance(key, tuple) and key[:2] == ("message", _CLOUD)):
            return None
        return ScrollPosition(int(key[2]), offset)

    def _selected_cloud_ids(self) -> tuple[int, ...]:
        selected = self._pane.selection.selected.values()
        return tuple(sorted(row.id for row in selected if row.namespace == _CLOUD))
