"""Comparing the chat list (groups, order, pins, top messages), read states and mutes."""

from __future__ import annotations

from dataclasses import dataclass

from postbox import (
    ChatListHole,
    MessageFlags,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerReadState,
)
from sync.engine.convert import synced_part
from sync.protocol import Dialog
from sync.verify.local_side import GROUPS, LocalChat, LocalState
from sync.verify.report import Category, Report
from sync.verify.server_side import ServerDialogs

__all__ = [
    "ServerChat",
    "compare_chat_list",
    "compare_drafts",
    "compare_notification_settings",
    "compare_read_state",
    "in_chat_list_hole",
    "server_chats",
    "unloaded",
]

_CLOUD = int(MessageNamespace.CLOUD)


@dataclass(frozen=True, slots=True)
class ServerChat:
    dialog: Dialog
    group: PeerGroupId
    top_date: int

    @property
    def order(self) -> tuple[int, int, int, int]:
        """The chat's place among unpinned chats, as the client's chat-list index orders it."""
        return (self.top_date, _CLOUD, self.dialog.top_message, self.dialog.peer)


def server_chats(server: ServerDialogs) -> dict[int, ServerChat]:
    return {
        d.peer: ServerChat(
            d, PeerGroupId.ARCHIVE if d.folder else PeerGroupId.ROOT, server.top_dates[d.peer]
        )
        for d in server.dialogs
    }


def in_chat_list_hole(chat: ServerChat, holes: tuple[ChatListHole, ...]) -> bool:
    """Whether the client never loaded the part of the chat list where ``chat`` sits.

    A hole covers everything older than its index; pinned chats come with the first
    page, so only the hole at the very top (nothing loaded yet) covers them.
    """
    if chat.dialog.pinned:
        return ChatListHole.top() in holes
    for hole in holes:
        index = hole.index
        if chat.order < (index.timestamp, index.id.namespace, index.id.id, int(index.id.peer_id)):
            return True
    return False


def unloaded(local: LocalState, chats: dict[int, ServerChat]) -> frozenset[int]:
    """Server chats the client has not listed and whose place is inside its chat-list hole."""
    return frozenset(
        peer
        for peer, chat in chats.items()
        if _position_group(local, peer) is None
        and in_chat_list_hole(chat, local.groups[chat.group].holes)
    )


def _position_group(local: LocalState, peer: int) -> int | None:
    chat = local.chats.get(PeerId(peer))
    return None if chat is None or chat.position is None else chat.position[0]


def compare_chat_list(
    report: Report,
    local: LocalState,
    server: ServerDialogs,
    chats: dict[int, ServerChat],
    excused: frozenset[int],
) -> None:
    """Membership per group, pinned chats, order and each listed chat's top message."""
    report.chats_in_chat_list_holes += len(excused)
    for peer, chat in chats.items():
        group = _position_group(local, peer)
        if group is None:
            if peer not in excused:
                report.add(Category.CHAT_LIST, peer, f"missing from the {chat.group.name} list")
        elif group != chat.group:
            report.add(
                Category.CHAT_LIST,
                peer,
                f"listed in {PeerGroupId(group).name}, server: {chat.group.name}",
            )
    for peer_id, local_chat in local.chats.items():
        if local_chat.position is None:
            continue
        if int(peer_id) not in chats:
            if _listed_for_failed_sends(local_chat):
                continue
            report.add(Category.CHAT_LIST, int(peer_id), "listed, but the server has no such chat")
            continue
        top = _top_message(local_chat)
        expected = chats[int(peer_id)].dialog.top_message
        if top != expected:
            report.add(Category.CHAT_LIST, int(peer_id), f"top message {top} != server {expected}")
    for group in GROUPS:
        _compare_group(report, local, chats, server.pinned, group)


def _listed_for_failed_sends(chat: LocalChat) -> bool:
    """Whether the chat is listed for failed sends alone (no cloud message): as on
    Telegram, a chat written to stays in the list with the message that failed, though
    the server has no chat with the peer (never written to, or emptied since)."""
    return not chat.messages and any(m.flags & MessageFlags.FAILED for m in chat.pending)


def _top_message(chat: LocalChat) -> int:
    """The id of the chat's top cloud message, 0 for none (a pending local one is
    reported apart, and a chat listed without messages has a made-up index)."""
    assert chat.position is not None
    top = chat.position[1].message_index.id
    if not chat.messages:
        return 0
    if top.namespace == _CLOUD:
        return top.id
    return max(message.id.id for message in chat.messages)


def _compare_group(
    report: Report,
    local: LocalState,
    chats: dict[int, ServerChat],
    pinned_order: tuple[int, ...],
    group: PeerGroupId,
) -> None:
    stored = local.groups[group]
    if ChatListHole.top() not in stored.holes:
        pins = [int(p) for p in stored.pinned]
        expected = [p for p in pinned_order if p in chats and chats[p].group == group]
        if pins != expected:
            report.add(Category.CHAT_LIST, None, f"{group.name} pinned {pins} != server {expected}")
    server_order = sorted(
        (c for c in chats.values() if c.group == group and not c.dialog.pinned),
        key=lambda c: c.order,
        reverse=True,
    )
    pinned = set(stored.pinned)
    # A chat whose newest message is one of ours the server never had (a failed send)
    # stands where that message puts it, as on Telegram: its place is the client's own.
    own_top = {
        int(peer_id)
        for peer_id, chat in local.chats.items()
        if chat.position is not None and chat.position[1].message_index.id.namespace != _CLOUD
    }
    mine = [int(p) for p in stored.order if p not in pinned and int(p) not in own_top]
    both = set(mine) & {c.dialog.peer for c in server_order}
    mine = [p for p in mine if p in both]
    theirs = [c.dialog.peer for c in server_order if c.dialog.peer in both]
    for position, (peer, expected_peer) in enumerate(zip(mine, theirs, strict=True)):
        if peer != expected_peer:
            report.add(
                Category.CHAT_LIST,
                peer,
                f"{group.name} list position {position}: server has {expected_peer} there",
            )
            return


def compare_read_state(report: Report, chat: LocalChat, dialog: Dialog | None) -> None:
    """Read marks, unread count and the marked-unread flag of a chat the client lists or
    keeps a read state for; the server has no marked-unread, so it must be clear."""
    peer = int(chat.peer_id)
    if chat.position is None and chat.read_state is None:
        return
    state = chat.read_state or PeerReadState()
    if dialog is None:
        if state.is_unread:
            report.add(Category.READ_STATES, peer, "unread, but the server has no such chat")
        return
    fields = (
        ("incoming read mark", state.max_incoming_read_id, dialog.read_inbox_max_id),
        ("outgoing read mark", state.max_outgoing_read_id, dialog.read_outbox_max_id),
        ("unread count", state.count, dialog.unread_count),
        ("marked unread", state.marked_unread, False),
    )
    for name, mine, theirs in fields:
        if mine != theirs:
            report.add(Category.READ_STATES, peer, f"{name} {mine} != server {theirs}")


def compare_notification_settings(report: Report, chat: LocalChat, dialog: Dialog) -> None:
    if chat.position is None:
        return
    muted = chat.muted_until or 0
    if muted != dialog.muted_until:
        report.add(
            Category.NOTIFICATION_SETTINGS,
            int(chat.peer_id),
            f"muted until {muted} != server {dialog.muted_until}",
        )


def compare_drafts(report: Report, chat: LocalChat, dialog: Dialog) -> None:
    """A listed chat's draft (text and reply, what the server keeps of it) is the
    server's; its date is the saving device's, so it is not compared. A secret chat's
    draft stays on its device."""
    if chat.position is None or chat.peer_id.namespace == PeerNamespace.SECRET_CHAT:
        return
    mine = synced_part(chat.draft)
    theirs = None if dialog.draft is None else (dialog.draft.text, dialog.draft.reply_to)
    if mine != theirs:
        report.add(Category.DRAFTS, int(chat.peer_id), f"draft {mine!r} != server {theirs!r}")
