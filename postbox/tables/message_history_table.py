"""MessageHistoryTable: every message of every chat, and the tables that index it.

Key peer(8) namespace(4) timestamp(4) id(4), so one peer's messages are one
contiguous, chronological key range. Adding, removing or changing a message
cascades, in the same transaction, to the id index, the tag index and its
summaries, the full-text index, the unsent queue and the read-state counts,
and records the operation for the change record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from postbox.change_record import ChangeCollector, InsertMessage, RemoveMessage, UpdateMessage
from postbox.errors import InvalidArgumentError
from postbox.ids import INT32_MAX, INT32_MIN, MAX_MESSAGE_ID, MessageId, MessageIndex, PeerId
from postbox.keys import (
    MESSAGE_ID,
    MESSAGE_INDEX,
    O32,
    O64,
    decode_message_index_key,
    message_index_key,
    peer_namespace_prefix,
)
from postbox.message import Message, MessageFlags, MessageTags, StoreMessage
from postbox.read_state import PeerReadState
from postbox.seed_configuration import SeedConfiguration
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


class MessageHistoryTable(Table):
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
        decode_key, decode = decode_message_index_key, Message.decode
        return [
            decode(decode_key(key), data)  # type: ignore[arg-type]
            for key, data in self._range(lower_key, upper_key, limit=limit, reverse=reverse)
        ]

    def top_index(self, peer_id: PeerId, namespaces: Iterable[int]) -> MessageIndex | None:
        """The newest message of a peer over ``namespaces``."""
        top: MessageIndex | None = None
        for namespace in namespaces:
            lower = peer_namespace_prefix(peer_id, namespace)
            upper = peer_namespace_prefix(peer_id, namespace + 1)
            for key, _ in self._range(lower, upper, limit=1, reverse=True):
                index = decode_message_index_key(key)  # type: ignore[arg-type]
                if top is None or index.sort_key > top.sort_key:
                    top = index
        return top

    def count(self, peer_id: PeerId, namespace: int) -> int:
        return self._count(
            peer_namespace_prefix(peer_id, namespace), peer_namespace_prefix(peer_id, namespace + 1)
        )

    # -- adding ---------------------------------------------------------------

    def add_messages(self, messages: Sequence[StoreMessage]) -> list[MessageIndex]:
        """Store messages whose ids are not stored yet; returns each message's index.

        A message whose id is already stored is left as it is (edits go through
        ``update_message``). Holes are not touched.
        """
        existing = self._prefetch_existing(messages)
        seed = self.seed_configuration
        local_namespaces = seed.local_namespaces
        read_namespaces = seed.read_state_namespaces
        chat_namespaces = seed.chat_messages_namespaces
        text_peer_namespaces = seed.text_indexed_peer_namespaces
        operations = self.collector.message_operations
        touched = self.collector.touched_chat_peers
        index_table = self.index
        index_updated = index_table._updated
        read_counts: dict[tuple[PeerId, int], list[int]] = {}
        result: list[MessageIndex] = []
        for message in messages:
            peer_id, namespace, id_, timestamp = (
                message.peer_id,
                message.namespace,
                message.id,
                message.timestamp,
            )
            if id_ is None:
                if namespace not in local_namespaces:
                    raise InvalidArgumentError(
                        f"a message in namespace {namespace} needs an id; only local namespaces "
                        "get one assigned"
                    )
                id_ = self.metadata.take_next_local_id(peer_id, namespace)
            elif not 0 < id_ <= MAX_MESSAGE_ID:
                raise InvalidArgumentError(f"message id {id_} is outside 1..{MAX_MESSAGE_ID}")
            if not INT32_MIN <= timestamp <= INT32_MAX:
                raise InvalidArgumentError(f"message timestamp {timestamp} does not fit in 32 bits")
            id_key = MESSAGE_ID.pack(peer_id + O64, namespace + O32, id_ + O32)
            cached = index_updated.get(id_key, MISSING)
            if (id_key in existing) if cached is MISSING else (cached is not None):
                stored = index_table.get(MessageId(peer_id, namespace, id_))
                assert stored is not None
                result.append(stored)
                continue
            flags = message.flags
            self._set(
                MESSAGE_INDEX.pack(peer_id + O64, namespace + O32, timestamp + O32, id_ + O32),
                message.encode(),
                None,
            )
            index_table._set(id_key, INDEX_VALUE.pack(timestamp + O32, flags & 0xFF), None)
            index = MessageIndex(MessageId(peer_id, namespace, id_), timestamp)
            result.append(index)
            operations[peer_id].append(InsertMessage(index, message))
            if message.tags:
                self._index_tags(index, message.tags)
            if message.text and peer_id.namespace in text_peer_namespaces:
                self.text_index.add_key(id_key, peer_id, message.text)
            if flags & _UNSENT:
                self.unsent._set(id_key, b"")
            if namespace in read_namespaces:
                read_counts.setdefault((peer_id, namespace), []).append(
                    id_ if flags & _INCOMING else -id_
                )
            if namespace in chat_namespaces:
                touched.add(peer_id)
        for (peer_id, namespace), signed_ids in read_counts.items():
            self._count_added(peer_id, namespace, signed_ids)
        return result

    def _prefetch_existing(self, messages: Sequence[StoreMessage]) -> set[bytes]:
        """The id keys of ``messages`` already committed, one scan per (peer, namespace).

        Also gives every peer seen here for the first time its initial holes.
        """
        groups: dict[tuple[PeerId, int], list[int]] = {}
        for message in messages:
            ids = groups.setdefault((message.peer_id, message.namespace), [])
            if message.id is not None:
                ids.append(message.id)
        existing: set[bytes] = set()
        for (peer_id, namespace), ids in groups.items():
            if not isinstance(peer_id, PeerId):
                raise InvalidArgumentError(f"{peer_id!r} is not a PeerId")
            self.holes.ensure_initialized(peer_id)
            existing |= self.index.existing_keys(peer_id, namespace, ids)
        return existing

    def _index_tags(self, index: MessageIndex, tags: int) -> None:
        peer_id, namespace, id_ = index.id
        for tag in MessageTags.split(tags):
            self.tags.add(tag, index)
            self.tag_summaries.add_message(peer_id, tag, namespace, id_)

    def _unindex_tags(self, index: MessageIndex, tags: int) -> None:
        peer_id, namespace, id_ = index.id
        for tag in MessageTags.split(tags):
            self.tags.remove(tag, index)
            self.tag_summaries.remove_message(peer_id, tag, namespace, id_)

    def _count_added(self, peer_id: PeerId, namespace: int, signed_ids: list[int]) -> None:
        """Count new incoming messages (positive ids) above the read mark as unread."""
        state = self.read_states.get_state(peer_id, namespace) or PeerReadState()
        unread = sum(1 for id_ in signed_ids if id_ > state.max_incoming_read_id)
        max_known = max(state.max_known_id, max(abs(id_) for id_ in signed_ids))
        self.read_states.set_state(
            peer_id,
            namespace,
            PeerReadState(
                state.max_incoming_read_id,
                state.max_outgoing_read_id,
                max_known,
                state.count + unread,
                state.marked_unread,
            ),
        )

    def _count_removed(self, message_id: MessageId, flags: int) -> None:
        peer_id, namespace, id_ = message_id
        if not flags & _INCOMING or namespace not in self.seed_configuration.read_state_namespaces:
            return
        state = self.read_states.get_state(peer_id, namespace)
        if state is not None and id_ > state.max_incoming_read_id and state.count > 0:
            self.read_states.set_state(peer_id, namespace, state.with_count(state.count - 1))

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

    def _unstore(self, message: Message) -> None:
        index = message.index
        message_id = index.id
        self._remove(message_index_key(index))
        id_key = MESSAGE_ID.pack(
            message_id.peer_id + O64, message_id.namespace + O32, message_id.id + O32
        )
        self.index._remove(id_key)
        if message.tags:
            self._unindex_tags(index, message.tags)
        if message.text:
            self.text_index.remove_key(id_key)
        if message.flags & _UNSENT:
            self.unsent._remove(id_key)
        if message_id.namespace in self.seed_configuration.chat_messages_namespaces:
            self.collector.touched_chat_peers.add(message_id.peer_id)

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
        self._unstore(previous)
        self._count_removed(message_id, previous.flags)
        insert = self._store_replacement(new_id, update)
        self.collector.message_operations[message_id.peer_id].append(
            UpdateMessage(previous.index, insert.message)
        )
        return insert.index

    def _store_replacement(self, message_id: MessageId, message: StoreMessage) -> InsertMessage:
        """Store ``message`` under ``message_id`` without recording an insert."""
        operations = self.collector.message_operations[message_id.peer_id]
        mark = len(operations)
        [index] = self.add_messages([message])
        inserted = operations[mark]
        del operations[mark:]
        assert isinstance(inserted, InsertMessage) and index.id == message_id
        return inserted
