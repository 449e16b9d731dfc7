"""MessageHistoryTable: every message of every chat, and the tables that index it.

Key peer(8) namespace(4) timestamp(4) id(4), so one peer's messages are one
contiguous, chronological key range. Adding, removing or changing a message
cascades, in the same transaction, to the id index, the tag index and its
summaries, the full-text index, the unsent and failed queues and the read-state counts,
and records the operation for the change record.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from postbox.change_record import (
    ChangeCollector,
    InsertMessage,
    MessageHistoryOperation,
    RemoveMessage,
    UpdateMessage,
)
from postbox.coding import decoding
from postbox.errors import InvalidArgumentError
from postbox.ids import (
    MAX_MESSAGE_ID,
    MAX_TIMESTAMP,
    MIN_TIMESTAMP,
    MessageId,
    MessageIndex,
    PeerId,
)
from postbox.keys import (
    INT32,
    MESSAGE_ID,
    O32,
    O64,
    PEER_NAMESPACE,
    TIMESTAMP_ID,
    decode_message_index_key,
    message_index_key,
    peer_namespace_prefix,
    wrong_key,
)
from postbox.message import Message, MessageFlags, MessageTags, StoreMessage
from postbox.read_state import PeerReadState
from postbox.seed_configuration import SeedConfiguration
from postbox.tables.message_history_failed_table import MessageHistoryFailedTable
from postbox.tables.message_history_hole_index_table import MessageHistoryHoleIndexTable
from postbox.tables.message_history_index_table import INDEX_VALUE, MessageHistoryIndexTable
from postbox.tables.message_history_metadata_table import MessageHistoryMetadataTable
from postbox.tables.message_history_read_state_table import MessageHistoryReadStateTable
from postbox.tables.message_history_tags_summary_table import MessageHistoryTagsSummaryTable
from postbox.tables.message_history_tags_table import MessageHistoryTagsTable
from postbox.tables.message_history_text_index_table import MessageHistoryTextIndexTable
from postbox.tables.message_history_unsent_table import MessageHistoryUnsentTable
from postbox.tables.table import MISSING, Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryTable"]

_INCOMING = int(MessageFlags.INCOMING)
_UNSENT = int(MessageFlags.UNSENT)
_FAILED = int(MessageFlags.FAILED)


class MessageHistoryTable(Table[bytes]):
    def __init__(
        self,
        box: ValueBox,
        seed_configuration: SeedConfiguration,
        *,
        index: MessageHistoryIndexTable,
        holes: MessageHistoryHoleIndexTable,
        metadata: MessageHistoryMetadataTable,
        tags: MessageHistoryTagsTable,
        tag_summaries: MessageHistoryTagsSummaryTable,
        text_index: MessageHistoryTextIndexTable,
        unsent: MessageHistoryUnsentTable,
        failed: MessageHistoryFailedTable,
        read_states: MessageHistoryReadStateTable,
    ) -> None:
        super().__init__(box, "message_history")
        self.seed_configuration = seed_configuration
        self.index = index
        self.holes = holes
        self.metadata = metadata
        self.tags = tags
        self.tag_summaries = tag_summaries
        self.text_index = text_index
        self.unsent = unsent
        self.failed = failed
        self.read_states = read_states
        #: The running transaction's collector; set by the postbox for each transaction.
        self.collector = ChangeCollector()

    # -- reading --------------------------------------------------------------

    def get(self, message_id: MessageId) -> Message | None:
        index = self.index.get(message_id)
        return None if index is None else self.get_by_index(index)

    def get_by_index(self, index: MessageIndex) -> Message | None:
        data = self._get(message_index_key(index))
        return None if data is None else Message.decode(index, data)

    def messages(
        self,
        peer_id: PeerId,
        namespace: int,
        *,
        lower: MessageIndex | None = None,
        upper: MessageIndex | None = None,
        limit: int = -1,
        reverse: bool = False,
    ) -> list[Message]:
        """Messages of a (peer, namespace) with ``lower <= index < upper`` in key order,
        oldest first, or newest first with ``reverse``."""
        prefix = peer_namespace_prefix(peer_id, namespace)
        lower_key = prefix if lower is None else message_index_key(lower)
        upper_key = (
            peer_namespace_prefix(peer_id, namespace + 1)
            if upper is None
            else message_index_key(upper)
        )
        decode, unpack_suffix, new = Message.decode, TIMESTAMP_ID.unpack_from, tuple.__new__
        result = []
        for key, data in self._range_list(lower_key, upper_key, limit=limit, reverse=reverse):
            try:
                timestamp, id_ = unpack_suffix(key, 12)
            except (struct.error, TypeError) as error:
                raise wrong_key("message", key, error) from error
            message_id = new(MessageId, (peer_id, namespace, id_ - O32))
            result.append(decode(new(MessageIndex, (message_id, timestamp)), data))
        return result

    def top_index(self, peer_id: PeerId, namespaces: Iterable[int]) -> MessageIndex | None:
        """The newest message of a peer over ``namespaces``."""
        top: MessageIndex | None = None
        for namespace in namespaces:
            lower = peer_namespace_prefix(peer_id, namespace)
            upper = peer_namespace_prefix(peer_id, namespace + 1)
            for key, _ in self._range(lower, upper, limit=1, reverse=True):
                index = decode_message_index_key(key)
                if top is None or index.sort_key > top.sort_key:
                    top = index
        return top

    def count(self, peer_id: PeerId, namespace: int) -> int:
        return self._count(
            peer_namespace_prefix(peer_id, namespace), peer_namespace_prefix(peer_id, namespace + 1)
        )

    # -- adding ---------------------------------------------------------------

    def add_messages(
        self, messages: Sequence[StoreMessage], *, counting: bool = True
    ) -> list[MessageIndex]:
        """Store messages whose ids are not stored yet; returns each message's index.

        A message whose id is already stored is left as it is (edits go through
        ``update_message``). Holes are not touched. The messages of one (peer,
        namespace) share their per-chat work: read state, hole set-up, look-ups.
        ``counting=False`` leaves unread counts and tag summaries to the caller.
        """
        local_namespaces = self.seed_configuration.local_namespaces
        operations = self.collector.message_operations
        index_table = self.index
        index_updated, index_initial = index_table.write_caches()
        history_updated, history_initial = self.write_caches()
        groups: dict[tuple[PeerId, int], _Group] = {}
        new_tuple = tuple.__new__
        group: _Group | None = None
        peer_operations: list[MessageHistoryOperation] = []
        result: list[MessageIndex] = []
        for message in messages:
            peer_id, namespace, id_, timestamp = (
                message.peer_id,
                message.namespace,
                message.id,
                message.timestamp,
            )
            if group is None or peer_id != group.peer_id or namespace != group.namespace:
                group = groups.get((peer_id, namespace))
                if group is None:
                    group = _Group(self, peer_id, namespace, counting)
                    groups[(peer_id, namespace)] = group
                peer_operations = operations[peer_id]
            if id_ is None:
                if namespace not in local_namespaces:
                    raise InvalidArgumentError(
                        f"a message in namespace {namespace} needs an id; only local namespaces "
                        "get one assigned"
                    )
                id_ = self._next_local_id(peer_id, namespace)
            elif not 0 < id_ <= MAX_MESSAGE_ID:
                raise InvalidArgumentError(f"message id {id_} is outside 1..{MAX_MESSAGE_ID}")
            if not MIN_TIMESTAMP <= timestamp <= MAX_TIMESTAMP:
                raise InvalidArgumentError(
                    f"message timestamp {timestamp} is outside {MIN_TIMESTAMP}..{MAX_TIMESTAMP}"
                )
            id_key = group.id_prefix + INT32.pack(id_ + O32)
            cached = index_updated.get(id_key, MISSING)
            if (
                (id_ <= group.committed_max_id and index_table.box.get(index_table.spec, id_key))
                if cached is MISSING
                else cached is not None
            ):
                stored = index_table.get(MessageId(peer_id, namespace, id_))
                assert stored is not None
                result.append(stored)
                continue
            flags = message.flags
            text_rowid = 0
            if group.text_indexed and message.text:
                text_rowid = self.text_index.add(peer_id, id_key, message.text)
            # Both keys are known to be new: write the caches directly (the hot path).
            key = group.key_prefix + TIMESTAMP_ID.pack(timestamp, id_ + O32)
            if key not in history_initial:
                history_initial[key] = None
            history_updated[key] = message.encode()
            if id_key not in index_initial:
                index_initial[id_key] = None
            index_updated[id_key] = INDEX_VALUE.pack(timestamp, flags & 0xFF, text_rowid)
            index = new_tuple(
                MessageIndex, (new_tuple(MessageId, (peer_id, namespace, id_)), timestamp)
            )
            result.append(index)
            peer_operations.append(new_tuple(InsertMessage, (index, message)))
            if message.tags:
                group.add_tags(self, index, message.tags)
            if flags & _UNSENT:
                self.unsent.add_new_key(id_key)
            if flags & _FAILED:
                self.failed.add_unknown_key(id_key)
            if id_ > group.max_known_id:
                group.max_known_id = id_
            if id_ > group.max_added:
                group.max_added = id_
            if (timestamp, id_) > group.newest:
                group.newest = (timestamp, id_)
            if flags & _INCOMING and id_ > group.counted_above and counting:
                group.unread += 1
        for group in groups.values():
            group.finish(self)
        return result

    def _count_removed(self, message_id: MessageId, flags: int) -> None:
        if self._is_unread(message_id, flags):
            self._add_unread(message_id, -1)

    # -- removing -------------------------------------------------------------

    def remove_messages(self, message_ids: Iterable[MessageId]) -> list[MessageIndex]:
        """Delete messages (ids not stored are skipped); returns the removed indices."""
        removed = []
        for message_id in message_ids:
            message = self.get(message_id)
            if message is None:
                continue
            self._unstore(message)
            self.collector.message_operations[message_id.peer_id].append(
                RemoveMessage(message.index, message.tags)
            )
            self._count_removed(message_id, message.flags)
            removed.append(message.index)
        return removed

    def _unstore(self, message: Message, *, counting: bool = True) -> None:
        """Remove a message's rows; ``counting=False`` leaves its tag summaries alone."""
        index = message.index
        peer_id, namespace, id_ = index.id
        self._remove(message_index_key(index))
        id_key = MESSAGE_ID.pack(peer_id + O64, namespace + O32, id_ + O32)
        entry = self.index.entry(id_key)
        assert entry is not None, f"message {index.id} is missing from the id index"
        with decoding("message id index entry"):
            text_rowid = INDEX_VALUE.unpack(entry)[2]
        self.index.remove_entry(id_key, entry)
        for tag in MessageTags.split(message.tags):
            self.tags.remove(tag, index)
            if counting:
                self.tag_summaries.remove_message(peer_id, tag, namespace, id_)
        if text_rowid:
            self.text_index.remove(text_rowid)
        if message.flags & _UNSENT:
            self.unsent.remove_key(id_key)
        if message.flags & _FAILED:
            self.failed.remove_key(id_key)
        if namespace in self.seed_configuration.chat_messages_namespaces:
            self.collector.touched_chat_peers.add(peer_id)

    # -- changing -------------------------------------------------------------

    def update_message(self, message_id: MessageId, update: StoreMessage) -> MessageIndex | None:
        """Replace a stored message, possibly moving it to a new id or timestamp.

        Returns the message's new index, or ``None`` if ``message_id`` is not stored.
        If the new id is already taken by another stored message, that message is
        kept and the one being updated is removed (a sent message whose server copy
        arrived first).
        """
        previous = self.get(message_id)
        if previous is None:
            return None
        if update.id is None:
            raise InvalidArgumentError("an updated message needs an id")
        if update.peer_id != message_id.peer_id:
            raise InvalidArgumentError("a message cannot move to another peer")
        new_id = MessageId(message_id.peer_id, update.namespace, update.id)
        if new_id != message_id and self.index.exists(new_id):
            self.remove_messages([message_id])
            return self.index.get(new_id)
        # A message that stays failed keeps its failure (its reason, its request).
        failure = self.failed.get(message_id) if previous.flags & update.flags & _FAILED else None
        self._unstore(previous, counting=False)
        insert = self._store_replacement(new_id, update)
        if failure is not None:
            self.failed.set(new_id, failure)
        self._recount(previous, insert.message)
        self.collector.message_operations[message_id.peer_id].append(
            UpdateMessage(previous.index, insert.message)
        )
        return insert.index

    def _recount(self, previous: Message, current: Message) -> None:
        """Move unread counts and tag summaries by what an update changed, and no more."""
        peer_id = previous.peer_id
        old_id, new_id = previous.id, current.id
        old_tags = set(MessageTags.split(previous.tags))
        new_tags = set(MessageTags.split(current.tags))
        if old_id == new_id:
            old_tags, new_tags = old_tags - new_tags, new_tags - old_tags
        for tag in old_tags:
            self.tag_summaries.remove_message(peer_id, tag, old_id.namespace, old_id.id)
        for tag in new_tags:
            self.tag_summaries.add_message(peer_id, tag, new_id.namespace, new_id.id)
        was_unread = self._is_unread(old_id, previous.flags)
        is_unread = self._is_unread(new_id, current.flags)
        if old_id == new_id and was_unread == is_unread:
            return
        if was_unread:
            self._add_unread(old_id, -1)
        if is_unread:
            self._add_unread(new_id, 1)

    def _is_unread(self, message_id: MessageId, flags: int) -> bool:
        peer_id, namespace, id_ = message_id
        if not flags & _INCOMING or namespace not in self.seed_configuration.read_state_namespaces:
            return False
        state = self.read_states.get_state(peer_id, namespace) or PeerReadState()
        return id_ > state.max_incoming_read_id

    def _add_unread(self, message_id: MessageId, delta: int) -> None:
        peer_id, namespace, _ = message_id
        state = self.read_states.get_state(peer_id, namespace) or PeerReadState()
        if state.count + delta >= 0:
            self.read_states.set_state(peer_id, namespace, state.with_count(state.count + delta))

    def _next_local_id(self, peer_id: PeerId, namespace: int) -> int:
        """The next local id of a namespace that no stored message uses."""
        while True:
            id_ = self.metadata.take_next_local_id(peer_id, namespace)
            if not self.index.exists(MessageId(peer_id, namespace, id_)):
                return id_

    def _store_replacement(self, message_id: MessageId, message: StoreMessage) -> InsertMessage:
        """Store ``message`` under ``message_id`` without recording an insert."""
        operations = self.collector.message_operations[message_id.peer_id]
        mark = len(operations)
        [index] = self.add_messages([message], counting=False)
        inserted = operations[mark]
        del operations[mark:]
        assert isinstance(inserted, InsertMessage) and index.id == message_id
        return inserted


class _Group:
    """The per-chat work of one ``add_messages`` call for one (peer, namespace)."""

    __slots__ = (
        "committed_max_id",
        "counted_above",
        "counting",
        "id_prefix",
        "key_prefix",
        "max_added",
        "max_known_id",
        "namespace",
        "peer_id",
        "read_state",
        "tag_summaries",
        "in_chat_list",
        "newest",
        "text_indexed",
        "unread",
    )

    def __init__(
        self,
        table: MessageHistoryTable,
        peer_id: PeerId,
        namespace: int,
        counting: bool,
    ) -> None:
        if not isinstance(peer_id, PeerId):
            raise InvalidArgumentError(f"{peer_id!r} is not a PeerId")
        seed = table.seed_configuration
        self.peer_id = peer_id
        self.namespace = namespace
        self.counting = counting
        self.id_prefix = PEER_NAMESPACE.pack(peer_id + O64, namespace + O32)
        self.key_prefix = self.id_prefix
        self.text_indexed = peer_id.namespace in seed.text_indexed_peer_namespaces
        table.holes.ensure_initialized(peer_id)
        self.in_chat_list = namespace in seed.chat_messages_namespaces
        #: (timestamp, id) of the newest message added: the chat's top candidate.
        self.newest = (MIN_TIMESTAMP, 0)
        # Ids above the committed maximum are new without a look-up (an append).
        self.committed_max_id = table.index.id_bound(peer_id, namespace)
        self.max_added = 0
        self.read_state: PeerReadState | None = None
        self.max_known_id = 0
        #: Incoming messages above this id are new to the read state's count: the ones
        #: below the newest id it knew were already counted by whoever set it (the
        #: server's dialog), so a hole fill must not count them again.
        self.counted_above = MAX_MESSAGE_ID + 1
        self.unread = 0
        #: tag -> [count, max id] of the tag summary as this call moves it (``None``:
        #: the chat has no summary of that tag).
        self.tag_summaries: dict[int, list[int] | None] = {}
        if namespace in seed.read_state_namespaces:
            self.read_state = table.read_states.get_state(peer_id, namespace) or PeerReadState()
            self.max_known_id = self.read_state.max_known_id
            self.counted_above = max(self.read_state.max_incoming_read_id, self.max_known_id)

    def add_tags(self, table: MessageHistoryTable, index: MessageIndex, tags: int) -> None:
        """Index a new message under each of its tags; count it in the tag summaries."""
        id_ = index.id.id
        for tag in MessageTags.split(tags):
            table.tags.add(tag, index)
            if not self.counting:
                continue
            if tag in self.tag_summaries:
                summary = self.tag_summaries[tag]
            else:
                stored = table.tag_summaries.get(self.peer_id, tag, self.namespace)
                summary = None if stored is None else [stored.count, stored.max_id]
                self.tag_summaries[tag] = summary
            # No summary yet: the count is unknown until the server gives one.
            if summary is not None and id_ > summary[1]:
                summary[0] += 1
                summary[1] = id_

    def finish(self, table: MessageHistoryTable) -> None:
        """Write back the read state, the tag summaries and the top candidate."""
        if self.max_added:
            table.index.note_added(self.peer_id, self.namespace, self.max_added)
        if self.in_chat_list and self.newest[1]:
            timestamp, id_ = self.newest
            candidate = MessageIndex(MessageId(self.peer_id, self.namespace, id_), timestamp)
            candidates = table.collector.top_candidates
            current = candidates.get(self.peer_id)
            if current is None or candidate.sort_key > current.sort_key:
                candidates[self.peer_id] = candidate
        for tag, summary in self.tag_summaries.items():
            if summary is not None:
                count, max_id = summary
                table.tag_summaries.replace(self.peer_id, tag, self.namespace, count, max_id)
        state = self.read_state
        if state is None:
            return
        if self.unread or self.max_known_id != state.max_known_id:
            table.read_states.set_state(
                self.peer_id,
                self.namespace,
                PeerReadState(
                    state.max_incoming_read_id,
                    state.max_outgoing_read_id,
                    self.max_known_id,
                    state.count + self.unread,
                    state.marked_unread,
                ),
            )
