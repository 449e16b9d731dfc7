"""The reference model for the postbox state machine in ``test_stateful.py``.

``Model`` is the ``Transaction`` write API over plain dicts, restating what the
postbox docstrings promise; ``Journal`` collects one transaction's effective
operations, which its change record must list. Also the ids, peers and tags the
machine draws from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from postbox import (
    ALL_MESSAGE_IDS,
    DEFAULT_SEED_CONFIGURATION,
    ChatListEntryKey,
    ChatListHole,
    ChatListInclusion,
    ChatListIndex,
    ClosedRange,
    CombinedPeerReadState,
    Message,
    MessageFailure,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryTagSummary,
    MessageId,
    MessageIndex,
    MessageNamespace,
    MessageTags,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerOperationLogEntry,
    PeerReadState,
    StoreMessage,
)
from postbox.chat_list import ChatListEntryType

SEED = DEFAULT_SEED_CONFIGURATION
CLOUD, LOCAL = int(MessageNamespace.CLOUD), int(MessageNamespace.LOCAL)
NAMESPACES = (CLOUD, LOCAL)
PEERS = (
    PeerId.make(PeerNamespace.USER, 1),
    PeerId.make(PeerNamespace.GROUP, 2),
    PeerId.make(PeerNamespace.CHANNEL, 3),
    PeerId.make(PeerNamespace.USER, 4),
)
MAX_ID = 40
INCOMING, UNSENT, FAILED = (int(flag) for flag in MessageFlags)
PHOTO, FILE, VOICE = int(MessageTags.PHOTO), int(MessageTags.FILE), int(MessageTags.VOICE)
MESSAGE_TAGS = (PHOTO, FILE)
#: Every space of every namespace is read back: everywhere (0) and each tag bit.
SPACE_TAGS = (0, *sorted(int(tag) for tag in MessageTags))
GROUPS = (int(PeerGroupId.ROOT), int(PeerGroupId.ARCHIVE))
LOG_TAGS = (1, 2)
WORDS = ("alpha", "beta", "gamma")
CHAT_LIST_HOLES = (ChatListHole.top(), ChatListHole(MessageIndex(MessageId(PeerId(0), 0, 1), 105)))

SpaceKey = tuple[PeerId, int, int]  # (peer, namespace, tag); tag 0 is everywhere


class BoomError(Exception):
    """Raised by a transaction function after it wrote something."""


# -- the reference model ----------------------------------------------------------


def hole_union(holes: Sequence[ClosedRange], lower: int, upper: int) -> tuple[ClosedRange, ...]:
    merged: list[ClosedRange] = []
    for hole in sorted([*holes, ClosedRange(lower, upper)]):
        if merged and hole.lower <= merged[-1].upper + 1:
            merged[-1] = ClosedRange(merged[-1].lower, max(merged[-1].upper, hole.upper))
        else:
            merged.append(hole)
    return tuple(merged)


def hole_difference(
    holes: Sequence[ClosedRange], lower: int, upper: int
) -> tuple[ClosedRange, ...]:
    kept: list[ClosedRange] = []
    for hole in holes:
        if hole.upper < lower or hole.lower > upper:
            kept.append(hole)
            continue
        if hole.lower < lower:
            kept.append(ClosedRange(hole.lower, lower - 1))
        if hole.upper > upper:
            kept.append(ClosedRange(upper + 1, hole.upper))
    return tuple(kept)


def tag_bits(tags: int) -> set[int]:
    return {1 << n for n in range(tags.bit_length()) if tags >> n & 1}


def chat_list_order(entry: ChatListEntryKey) -> tuple[int, ...]:
    """Ascending, so the top of a list is the largest: pinned chats (lowest pinning
    index first), then by top message index (timestamp, namespace, id, peer)."""
    pinning = entry.index.pinning_index
    (peer_id, namespace, id_), timestamp = entry.index.message_index
    pinned = (0, 0) if pinning is None else (1, -pinning)
    return (*pinned, timestamp, namespace, id_, int(peer_id), int(entry.type))


@dataclass
class Journal:
    """One transaction's effective operations: what its change record must list."""

    inserted: set[MessageId] = field(default_factory=set)
    removed: set[MessageId] = field(default_factory=set)
    updated: set[tuple[MessageId, MessageId]] = field(default_factory=set)
    hole_keys: set[SpaceKey] = field(default_factory=set)
    log_keys: set[tuple[PeerId, int]] = field(default_factory=set)
    chat_list_holes: bool = False

    def message_peers(self) -> set[PeerId]:
        ids = self.inserted | self.removed | {previous for previous, _ in self.updated}
        return {message_id.peer_id for message_id in ids}

    def __bool__(self) -> bool:
        return bool(self.message_peers() or self.hole_keys or self.log_keys or self.chat_list_holes)


@dataclass
class Model:
    """What the database holds, as plain dicts. Write methods are named and called
    as the ``Transaction`` ones and return what they should."""

    peers: dict[PeerId, Peer] = field(default_factory=dict)
    initialized: set[PeerId] = field(default_factory=set)
    holes: dict[SpaceKey, tuple[ClosedRange, ...]] = field(default_factory=dict)
    messages: dict[MessageId, Message] = field(default_factory=dict)
    next_local_id: dict[tuple[PeerId, int], int] = field(default_factory=dict)
    read_states: dict[PeerId, dict[int, PeerReadState]] = field(default_factory=dict)
    summaries: dict[tuple[PeerId, int, int], MessageHistoryTagSummary] = field(default_factory=dict)
    inclusions: dict[PeerId, ChatListInclusion] = field(default_factory=dict)
    chat_list_holes: dict[int, set[ChatListHole]] = field(
        default_factory=lambda: {group: {hole} for group, hole in SEED.chat_list_holes.items()}
    )
    log: dict[tuple[PeerId, int], dict[int, PeerOperationLogEntry]] = field(default_factory=dict)
    log_next_local: dict[tuple[PeerId, int], int] = field(default_factory=dict)
    log_next_merged: dict[int, int] = field(default_factory=dict)
    #: Why each failed message failed (a message stored failed: no reason known).
    failures: dict[MessageId, MessageFailure] = field(default_factory=dict)
    journal: Journal = field(default_factory=Journal, compare=False)

    # -- peers and holes ------------------------------------------------------

    def update_peers(self, peers: Iterable[Peer]) -> None:
        for peer in peers:
            self.ensure_initialized(peer.id)
            self.peers[peer.id] = peer

    def ensure_initialized(self, peer_id: PeerId) -> None:
        """A peer seen for the first time misses every id, in every configured space."""
        if peer_id in self.initialized:
            return
        self.initialized.add(peer_id)
        for namespace in SEED.hole_namespaces(peer_id.namespace):
            for tag in self.spaces(peer_id, namespace, 0):
                self.holes[(peer_id, namespace, tag)] = (ALL_MESSAGE_IDS,)
                self.journal.hole_keys.add((peer_id, namespace, tag))

    @staticmethod
    def spaces(peer_id: PeerId, namespace: int, tag: int) -> list[int]:
        """A change to everywhere is made in the seed's tag spaces of the namespace too."""
        if tag:
            return [tag]
        return [0, *sorted(SEED.hole_tags(peer_id.namespace, namespace))]

    def holes_of(self, peer_id: PeerId, namespace: int, tag: int) -> tuple[ClosedRange, ...]:
        if peer_id in self.initialized:
            return self.holes.get((peer_id, namespace, tag), ())
        configured = namespace in SEED.hole_namespaces(peer_id.namespace)
        return (
            (ALL_MESSAGE_IDS,) if configured and tag in self.spaces(peer_id, namespace, 0) else ()
        )

    def _change_hole(
        self, peer_id: PeerId, namespace: int, tag: int, ids: ClosedRange, add: bool
    ) -> None:
        self.ensure_initialized(peer_id)
        for space_tag in self.spaces(peer_id, namespace, tag):
            key = (peer_id, namespace, space_tag)
            old = self.holes.get(key, ())
            new = hole_union(old, *ids) if add else hole_difference(old, *ids)
            if new != old:
                self.holes[key] = new
                self.journal.hole_keys.add(key)

    def add_hole(
        self,
        peer_id: PeerId,
        namespace: int,
        space: MessageHistoryHoleSpace,
        lower: int,
        upper: int,
    ) -> None:
        self._change_hole(peer_id, namespace, space.tag, ClosedRange(lower, upper), True)

    def remove_hole(
        self,
        peer_id: PeerId,
        namespace: int,
        space: MessageHistoryHoleSpace,
        lower: int,
        upper: int,
    ) -> None:
        self._change_hole(peer_id, namespace, space.tag, ClosedRange(lower, upper), False)

    # -- messages -------------------------------------------------------------

    def messages_of(self, peer_id: PeerId, namespace: int) -> list[Message]:
        found = [
            m for i, m in self.messages.items() if (i.peer_id, i.namespace) == (peer_id, namespace)
        ]
        return sorted(found, key=lambda m: (m.timestamp, m.id.id))

    def _store(self, message_id: MessageId, store: StoreMessage) -> Message:
        index = MessageIndex(message_id, store.timestamp)
        message = Message(index, *(getattr(store, f) for f in _MESSAGE_FIELDS))
        self.messages[message_id] = message
        return message

    def add_messages(self, batch: Sequence[StoreMessage]) -> list[MessageIndex]:
        for store in batch:
            self.ensure_initialized(store.peer_id)
        result = []
        signed_ids: dict[tuple[PeerId, int], list[int]] = {}
        for store in batch:
            id_ = store.id
            while id_ is None:  # the next local id no stored message uses
                id_ = self.next_local_id.get((store.peer_id, store.namespace), 1)
                self.next_local_id[(store.peer_id, store.namespace)] = id_ + 1
                if MessageId(store.peer_id, store.namespace, id_) in self.messages:
                    id_ = None
            message_id = MessageId(store.peer_id, store.namespace, id_)
            if message_id in self.messages:  # stored already: left as it is
                result.append(self.messages[message_id].index)
                continue
            result.append(self._store(message_id, store).index)
            if store.flags & FAILED:
                self.failures[message_id] = MessageFailure()
            self.journal.inserted.add(message_id)
            for tag in tag_bits(store.tags):
                self._summary_add(message_id, tag)
            if store.namespace in SEED.read_state_namespaces:
                signed = id_ if store.flags & INCOMING else -id_
                signed_ids.setdefault((store.peer_id, store.namespace), []).append(signed)
        for (peer_id, namespace), ids in signed_ids.items():
            self._count_added(peer_id, namespace, ids)
        return result

    def delete_messages(self, message_ids: Iterable[MessageId]) -> list[MessageIndex]:
        removed = []
        for message_id in message_ids:
            if message_id in self.messages:
                removed.append(self.messages[message_id].index)
                self._remove(message_id)
        return removed

    def _remove(self, message_id: MessageId) -> None:
        message = self.messages.pop(message_id)
        self.failures.pop(message_id, None)
        self.journal.removed.add(message_id)
        for tag in tag_bits(message.tags):
            self._summary_remove(message_id, tag)
        self._count_removed(message_id, message.flags)

    def update_message(self, message_id: MessageId, store: StoreMessage) -> MessageIndex | None:
        previous = self.messages.get(message_id)
        if previous is None:
            return None
        assert store.id is not None
        new_id = MessageId(message_id.peer_id, store.namespace, store.id)
        if new_id != message_id and new_id in self.messages:
            self._remove(message_id)  # the message already at the new id wins
            return self.messages[new_id].index
        del self.messages[message_id]
        failure = self.failures.pop(message_id, None)
        message = self._store(new_id, store)
        if store.flags & FAILED:  # one that stays failed keeps its failure
            self.failures[new_id] = failure or MessageFailure()
        # A tag an edit keeps on the same id is still carried by one message: its
        # count stays as it was.
        old_tags, new_tags = tag_bits(previous.tags), tag_bits(store.tags)
        if new_id == message_id:
            old_tags, new_tags = old_tags - new_tags, new_tags - old_tags
        for tag in old_tags:
            self._summary_remove(message_id, tag)
        for tag in new_tags:
            self._summary_add(new_id, tag)
        if store.namespace in SEED.read_state_namespaces:
            # The new id becomes known; the unread count moves only by what changed.
            self._count_added(new_id.peer_id, store.namespace, [-store.id])
        was_unread = self._is_unread(message_id, previous.flags)
        is_unread = self._is_unread(new_id, store.flags)
        if new_id != message_id or was_unread != is_unread:
            if was_unread:
                self._add_unread(message_id, -1)
            if is_unread:
                self._add_unread(new_id, 1)
        self.journal.updated.add((message_id, new_id))
        return message.index

    def unsent(self) -> set[MessageId]:
        return {i for i, m in self.messages.items() if m.flags & UNSENT}

    def mark_message_failed(self, message_id: MessageId, failure: MessageFailure) -> bool:
        message = self.messages.get(message_id)
        if message is None or message.flags & INCOMING:
            return False
        flags = (message.flags & ~UNSENT) | FAILED
        if flags != message.flags:
            self.update_message(message_id, message.to_store()._replace(flags=flags))
        self.failures[message_id] = failure
        return True

    # -- tag summaries --------------------------------------------------------

    def _summary_add(self, message_id: MessageId, tag: int) -> None:
        """Ids up to the summary's max id were counted already (by the server); with no
        summary the count is unknown and stays so."""
        key = (message_id.peer_id, tag, message_id.namespace)
        summary = self.summaries.get(key)
        if summary is not None and message_id.id > summary.max_id:
            self.summaries[key] = MessageHistoryTagSummary(summary.count + 1, message_id.id)

    def _summary_remove(self, message_id: MessageId, tag: int) -> None:
        key = (message_id.peer_id, tag, message_id.namespace)
        summary = self.summaries.get(key)
        if summary is not None and message_id.id <= summary.max_id and summary.count > 0:
            self.summaries[key] = MessageHistoryTagSummary(summary.count - 1, summary.max_id)

    def replace_tag_summary(
        self, peer_id: PeerId, tag: int, namespace: int, count: int, max_id: int
    ) -> None:
        self.summaries[(peer_id, tag, namespace)] = MessageHistoryTagSummary(max(0, count), max_id)

    # -- read states ----------------------------------------------------------

    def read_state(self, peer_id: PeerId, namespace: int) -> PeerReadState | None:
        return self.read_states.get(peer_id, {}).get(namespace)

    def reset_read_state(self, peer_id: PeerId, namespace: int, state: PeerReadState) -> None:
        if self.read_state(peer_id, namespace) != state:
            self.read_states.setdefault(peer_id, {})[namespace] = state

    def combined_read_state(self, peer_id: PeerId) -> CombinedPeerReadState | None:
        states = self.read_states.get(peer_id)
        return CombinedPeerReadState.from_mapping(states) if states else None

    def _count_added(self, peer_id: PeerId, namespace: int, signed_ids: list[int]) -> None:
        """New incoming messages (positive ids) above both the read mark and the newest
        id the read state knew are unread; the ones below were counted when it was set."""
        state = self.read_state(peer_id, namespace) or PeerReadState()
        counted_above = max(state.max_incoming_read_id, state.max_known_id)
        unread = sum(1 for id_ in signed_ids if id_ > counted_above)
        known = max(state.max_known_id, *(abs(id_) for id_ in signed_ids))
        new = replace(state, max_known_id=known, count=state.count + unread)
        self.reset_read_state(peer_id, namespace, new)

    def _is_unread(self, message_id: MessageId, flags: int) -> bool:
        peer_id, namespace, id_ = message_id
        if not flags & INCOMING or namespace not in SEED.read_state_namespaces:
            return False
        state = self.read_state(peer_id, namespace) or PeerReadState()
        return id_ > state.max_incoming_read_id

    def _add_unread(self, message_id: MessageId, delta: int) -> None:
        peer_id, namespace, _ = message_id
        state = self.read_state(peer_id, namespace) or PeerReadState()
        if state.count + delta >= 0:
            self.reset_read_state(peer_id, namespace, replace(state, count=state.count + delta))

    def _count_removed(self, message_id: MessageId, flags: int) -> None:
        peer_id, namespace, id_ = message_id
        if not flags & INCOMING or namespace not in SEED.read_state_namespaces:
            return
        state = self.read_state(peer_id, namespace)
        if state is not None and id_ > state.max_incoming_read_id and state.count > 0:
            self.reset_read_state(peer_id, namespace, replace(state, count=state.count - 1))

    def apply_incoming_read_max_id(
        self, message_id: MessageId, unread_count: int | None = None
    ) -> bool:
        peer_id, namespace, max_id = message_id
        state = self.read_state(peer_id, namespace) or PeerReadState()
        if unread_count is not None and max_id >= state.max_incoming_read_id:
            known = max(state.max_known_id, max_id)
            new = PeerReadState(max_id, state.max_outgoing_read_id, known, unread_count, False)
            if new == state:
                return False
            self.reset_read_state(peer_id, namespace, new)
            return True
        if max_id <= state.max_incoming_read_id:
            if not state.marked_unread:
                return False
            self.reset_read_state(peer_id, namespace, replace(state, marked_unread=False))
            return True
        newly_read = sum(
            1
            for i, m in self.messages.items()
            if (i.peer_id, i.namespace) == (peer_id, namespace)
            and state.max_incoming_read_id < i.id <= max_id
            and m.flags & INCOMING
        )
        count = 0 if max_id >= state.max_known_id else max(0, state.count - newly_read)
        known = max(state.max_known_id, max_id)
        new = PeerReadState(max_id, state.max_outgoing_read_id, known, count, False)
        self.reset_read_state(peer_id, namespace, new)
        return True

    def apply_outgoing_read_max_id(self, message_id: MessageId) -> bool:
        peer_id, namespace, max_id = message_id
        state = self.read_state(peer_id, namespace) or PeerReadState()
        if max_id <= state.max_outgoing_read_id:
            return False
        known = max(state.max_known_id, max_id)
        new = replace(state, max_outgoing_read_id=max_id, max_known_id=known)
        self.reset_read_state(peer_id, namespace, new)
        return True

    def set_marked_unread(self, peer_id: PeerId, namespace: int, value: bool) -> None:
        state = self.read_state(peer_id, namespace) or PeerReadState()
        if state.marked_unread != value:
            self.reset_read_state(peer_id, namespace, replace(state, marked_unread=value))

    # -- chat list ------------------------------------------------------------

    def top_message(self, peer_id: PeerId) -> MessageIndex | None:
        indices = [
            m.index
            for i, m in self.messages.items()
            if i.peer_id == peer_id and i.namespace in SEED.chat_messages_namespaces
        ]
        return max(indices, key=lambda i: (i.timestamp, i.id.namespace, i.id.id), default=None)

    def position(self, peer_id: PeerId) -> tuple[int, ChatListIndex] | None:
        """Listed by its top message; without one, pinned at timestamp 0, or at its
        minimum timestamp; otherwise not listed."""
        inclusion = self.inclusions.get(peer_id)
        if inclusion is None:
            return None
        group, pinning, min_timestamp = (
            inclusion.group_id,
            inclusion.pinning_index,
            inclusion.min_timestamp,
        )
        top = self.top_message(peer_id)
        if top is not None:
            if min_timestamp is not None and min_timestamp > top.timestamp:
                top = MessageIndex(top.id, min_timestamp)
            return group, ChatListIndex(pinning, top)
        if pinning is not None:
            return group, ChatListIndex(pinning, MessageIndex(MessageId(peer_id, 0, 0), 0))
        if min_timestamp is not None:
            return group, ChatListIndex(None, MessageIndex(MessageId(peer_id, 0, 1), min_timestamp))
        return None

    def chat_list(self, group: int) -> list[ChatListEntryKey]:
        entries = [
            ChatListEntryKey(ChatListIndex(None, hole.index), ChatListEntryType.HOLE)
            for hole in self.chat_list_holes.get(group, ())
        ]
        for peer_id in PEERS:
            position = self.position(peer_id)
            if position is not None and position[0] == group:
                entries.append(ChatListEntryKey(position[1], ChatListEntryType.MESSAGE))
        return sorted(entries, key=chat_list_order, reverse=True)

    def pinned(self, group: int) -> list[PeerId]:
        return [
            entry.peer_id
            for entry in self.chat_list(group)
            if entry.type is ChatListEntryType.MESSAGE and entry.index.pinning_index is not None
        ]

    def update_chat_list_inclusion(
        self, peer_id: PeerId, inclusion: ChatListInclusion | None
    ) -> None:
        if inclusion is None:
            self.inclusions.pop(peer_id, None)
        else:
            self.inclusions[peer_id] = inclusion

    def set_pinned_peer_ids(self, group: int, peer_ids: Sequence[PeerId]) -> None:
        for peer_id in self.pinned(group):
            if peer_id not in peer_ids:
                self.inclusions[peer_id] = replace(self.inclusions[peer_id], pinning_index=None)
        for position, peer_id in enumerate(peer_ids):
            inclusion = self.inclusions.get(peer_id)
            min_timestamp = None if inclusion is None else inclusion.min_timestamp
            self.inclusions[peer_id] = ChatListInclusion(group, position, min_timestamp)

    def add_chat_list_hole(self, group: int, hole: ChatListHole) -> None:
        holes = self.chat_list_holes.setdefault(group, set())
        if hole not in holes:
            holes.add(hole)
            self.journal.chat_list_holes = True

    def remove_chat_list_hole(self, group: int, hole: ChatListHole) -> None:
        holes = self.chat_list_holes.get(group, set())
        if hole in holes:
            holes.remove(hole)
            self.journal.chat_list_holes = True

    # -- operation log --------------------------------------------------------

    def add_operation_log_entry(
        self, peer_id: PeerId, tag: int, contents: Any, *, merged: bool = True
    ) -> PeerOperationLogEntry:
        local = self.log_next_local.get((peer_id, tag), 1)
        self.log_next_local[(peer_id, tag)] = local + 1
        merged_index = None
        if merged:
            merged_index = self.log_next_merged.get(tag, 1)
            self.log_next_merged[tag] = merged_index + 1
        entry = PeerOperationLogEntry(peer_id, tag, local, merged_index, contents)
        self.log.setdefault((peer_id, tag), {})[local] = entry
        self.journal.log_keys.add((peer_id, tag))
        return entry

    def update_operation_log_entry(
        self, peer_id: PeerId, tag: int, local_index: int, contents: Any
    ) -> bool:
        entries = self.log.get((peer_id, tag), {})
        if local_index not in entries:
            return False
        if entries[local_index].contents != contents:
            entries[local_index] = replace(entries[local_index], contents=contents)
            self.journal.log_keys.add((peer_id, tag))
        return True

    def remove_operation_log_entry(self, peer_id: PeerId, tag: int, local_index: int) -> bool:
        entries = self.log.get((peer_id, tag), {})
        if local_index not in entries:
            return False
        del entries[local_index]
        if not entries:
            del self.log[(peer_id, tag)]
        self.journal.log_keys.add((peer_id, tag))
        return True

    def log_entries(self, peer_id: PeerId, tag: int) -> list[PeerOperationLogEntry]:
        return [entry for _, entry in sorted(self.log.get((peer_id, tag), {}).items())]

    def merged_log_entries(self, tag: int) -> list[PeerOperationLogEntry]:
        entries = [e for (_, t), es in self.log.items() if t == tag for e in es.values()]
        return sorted((e for e in entries if e.merged_index is not None), key=_merged_index)


_MESSAGE_FIELDS = (
    "flags",
    "tags",
    "author_id",
    "text",
    "media",
    "reply_to_id",
    "edit_timestamp",
    "globally_unique_id",
    "thread_id",
    "forward_info",
)


def _merged_index(entry: PeerOperationLogEntry) -> int:
    assert entry.merged_index is not None
    return entry.merged_index
