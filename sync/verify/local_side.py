"""What the local database claims, read in one transaction so it is one consistent state."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    ChatListEntryType,
    ChatListHole,
    ChatListIndex,
    ClosedRange,
    Message,
    MessageFailure,
    MessageHistoryHoleSpace,
    MessageHistoryTagSummary,
    MessageId,
    MessageNamespace,
    Peer,
    PeerGroupId,
    PeerId,
    PeerOperationLogEntry,
    PeerPresence,
    PeerReadState,
    StateCursor,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine.log_tags import (
    DELETE_TAG,
    DRAFT_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
)
from sync.protocol import MediaKind
from sync.verify.expected import MEDIA_TAGS

__all__ = ["GROUPS", "TAGGED_KINDS", "LocalChat", "LocalGroup", "LocalState", "read_local"]

LOCAL = int(MessageNamespace.LOCAL)
CLOUD = int(MessageNamespace.CLOUD)
GROUPS = (PeerGroupId.ROOT, PeerGroupId.ARCHIVE)
#: Each shared-media kind with the postbox tag its summary is stored under.
TAGGED_KINDS: tuple[tuple[MediaKind, int], ...] = tuple(MEDIA_TAGS.items())
_OUTBOUND_TAGS = (SEND_TAG, READ_TAG, EDIT_TAG, DELETE_TAG, SETTINGS_TAG, DRAFT_TAG)
_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


@dataclass(frozen=True, slots=True)
class LocalChat:
    """One chat as stored: its cloud history and holes, pending messages, read state,
    chat-list position, channel pts, mute, draft and shared-media summaries."""

    peer_id: PeerId
    messages: tuple[Message, ...]
    holes: tuple[ClosedRange, ...]
    pending: tuple[Message, ...]
    read_state: PeerReadState | None
    position: tuple[int, ChatListIndex] | None
    channel: ChannelState | None
    muted_until: int | None
    tag_summaries: tuple[tuple[MediaKind, MessageHistoryTagSummary], ...]
    draft: SynchronizeableDraft | None = None

    def in_hole(self, id_: int) -> bool:
        return any(id_ in hole for hole in self.holes)

    def known_ranges(self) -> list[tuple[int, int]]:
        """The id ranges outside the holes, lowest first: what the client claims to know."""
        ranges = []
        lower = 1
        for hole in sorted(self.holes):
            if hole.lower > lower:
                ranges.append((lower, hole.lower - 1))
            lower = max(lower, hole.upper + 1)
        if lower <= MAX_MESSAGE_ID:
            ranges.append((lower, MAX_MESSAGE_ID))
        return ranges


@dataclass(frozen=True, slots=True)
class LocalGroup:
    """One chat-list group: its chats top to bottom (pinned first), pinned chats, holes."""

    order: tuple[PeerId, ...]
    pinned: tuple[PeerId, ...]
    holes: tuple[ChatListHole, ...]


@dataclass(frozen=True, slots=True)
class LocalState:
    cursor: StateCursor | None
    chats: Mapping[PeerId, LocalChat]
    groups: Mapping[int, LocalGroup]
    #: Every peer a screen can name (chats, authors, contacts, members) and its record.
    peers: Mapping[PeerId, Peer | None]
    presences: Mapping[PeerId, PeerPresence]
    contacts: frozenset[PeerId]
    #: Peers whose profile was loaded: the client knows whether they are contacts.
    profiles_loaded: frozenset[PeerId]
    unsent: tuple[MessageId, ...]
    operations: tuple[PeerOperationLogEntry, ...]
    #: Every failed message and why it failed.
    failures: Mapping[MessageId, MessageFailure]


def read_local(tx: Transaction, server_peers: Iterable[int]) -> LocalState:
    """Everything ``verify`` compares, for the server's chats and every chat stored here."""
    groups: dict[int, LocalGroup] = {}
    for group in GROUPS:
        entries = tx.get_chat_list(group)
        groups[group] = LocalGroup(
            tuple(e.peer_id for e in entries if e.type is ChatListEntryType.MESSAGE),
            tuple(tx.get_pinned_peer_ids(group)),
            tuple(tx.get_chat_list_holes(group)),
        )
    unsent = tuple(tx.get_unsent_message_ids())
    failures = {
        message_id: tx.get_message_failure(message_id) or MessageFailure()
        for message_id in tx.get_failed_message_ids()
    }
    chat_peers = {PeerId(peer) for peer in server_peers}
    chat_peers.update(tx.get_all_read_states())
    chat_peers.update(message_id.peer_id for message_id in (*unsent, *failures))
    for listed in groups.values():
        chat_peers.update(listed.order)
    chats = {peer_id: _read_chat(tx, peer_id) for peer_id in sorted(chat_peers)}
    contacts = tx.get_contact_peer_ids()
    # Every stored peer: one a lying answer left behind names nothing, and must go too.
    named: set[PeerId] = set(chat_peers) | contacts | set(tx.get_all_peers())
    for chat in chats.values():
        named.update(PeerId(m.author_id) for m in chat.messages if m.author_id is not None)
    profiles = {peer_id for peer_id in named if tx.get_cached_peer_data(peer_id) is not None}
    for peer_id in list(profiles):
        data = tx.get_cached_peer_data(peer_id)
        if data is not None:
            named.update(data.peer_ids)
    presences = {}
    for peer_id in named:
        presence = tx.get_peer_presence(peer_id)
        if presence is not None:
            presences[peer_id] = presence
    operations = tuple(
        entry for tag in _OUTBOUND_TAGS for entry in tx.get_merged_operation_log_entries(tag)
    )
    return LocalState(
        cursor=tx.get_state(),
        chats=chats,
        groups=groups,
        peers={peer_id: tx.get_peer(peer_id) for peer_id in sorted(named)},
        presences=presences,
        contacts=contacts,
        profiles_loaded=frozenset(profiles),
        unsent=unsent,
        operations=operations,
        failures=failures,
    )


def _read_chat(tx: Transaction, peer_id: PeerId) -> LocalChat:
    read_state = tx.get_read_state(peer_id)
    settings = tx.get_notification_settings(peer_id)
    interface = tx.get_chat_interface_state(peer_id)
    summaries = []
    for kind, tag in TAGGED_KINDS:
        summary = tx.get_tag_summary(peer_id, tag, CLOUD)
        if summary is not None:
            summaries.append((kind, summary))
    return LocalChat(
        peer_id=peer_id,
        messages=tuple(tx.get_messages(peer_id, CLOUD)),
        holes=tuple(tx.get_holes(peer_id, CLOUD, _EVERYWHERE)),
        pending=tuple(tx.get_messages(peer_id, LOCAL)),
        read_state=None if read_state is None else read_state.get(CLOUD),
        position=tx.get_chat_list_position(peer_id),
        channel=tx.get_peer_chat_state(peer_id),
        muted_until=None if settings is None else settings.muted_until,
        tag_summaries=tuple(summaries),
        draft=None if interface is None else interface.draft,
    )
