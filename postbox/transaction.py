"""Transaction: what a ``Postbox.transaction`` function reads and writes through.

One instance per transaction, valid only inside the function it is passed to
and only on the postbox thread. Writes go to the tables' write-behind caches;
reads see them. ``commit`` (called by the postbox) derives the chat list,
flushes every table in dependency order and freezes the change record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from postbox.change_record import (
    ChangeCollector,
    ChangeRecord,
    ChatListOperation,
    ChatListOperationKind,
)
from postbox.chat_interface_state import ChatInterfaceState
from postbox.chat_list import ChatListHole, ChatListInclusion, ChatListIndex, PeerGroupId
from postbox.commit_record import change_record_of
from postbox.errors import InvalidArgumentError, PostboxError
from postbox.holes import ClosedRange, MessageHistoryHoleSpace
from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.item_collection import (
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionItem,
    checked_infos,
    checked_items,
)
from postbox.message import Message, MessageFlags, StoreMessage
from postbox.message_failure import MessageFailure
from postbox.operation_log import PeerOperationLogEntry
from postbox.peer import CachedPeerData, Peer, PeerNotificationSettings, PeerPresence
from postbox.read_state import CombinedPeerReadState, PeerReadState
from postbox.seed_configuration import SeedConfiguration
from postbox.state import ChannelState, ChannelToPoll, StateCursor
from postbox.tables import ChatListEntryKey, Tables
from postbox.tag_summary import MessageHistoryTagSummary, TagSummaryKey

__all__ = ["Transaction"]


class Transaction:
    def __init__(
        self,
        tables: Tables,
        seed_configuration: SeedConfiguration,
        collector: ChangeCollector,
        *,
        read_only: bool = False,
    ) -> None:
        self._tables = tables
        self._seed = seed_configuration
        self._collector = collector
        self._open = True
        self.read_only = read_only

    def _check(self) -> Tables:
        if not self._open:
            raise PostboxError(
                "this transaction has ended; use the one passed to the current function"
            )
        return self._tables

    # -- state ----------------------------------------------------------------

    def get_state(self) -> StateCursor | None:
        return self._check().metadata.state()

    def set_state(self, state: StateCursor) -> None:
        self._check().metadata.set_state(state)

    def get_master_client_id(self) -> int | None:
        """The client id recorded by the process that syncs this database, if any."""
        return self._check().metadata.master_client_id()

    def set_master_client_id(self, client_id: int | None) -> None:
        """Record ``client_id`` as the syncing process (``None``: no process syncs)."""
        if client_id is not None and not 0 < client_id < 2**63:
            raise InvalidArgumentError(f"client id {client_id} is outside 1..2**63-1")
        self._check().metadata.set_master_client_id(client_id)

    def get_peer_chat_state(self, peer_id: PeerId) -> ChannelState | None:
        return self._check().peer_chat_states.get(peer_id)

    def set_peer_chat_state(self, peer_id: PeerId, state: ChannelState) -> None:
        self._check().peer_chat_states.set(peer_id, state)

    def get_channels_to_poll(self) -> dict[PeerId, int]:
        """The channels whose own difference is still to be fetched, each with the
        highest pts the server said it reached (0: not said)."""
        return {peer: row.pts for peer, row in self._check().channels_to_poll.all().items()}

    def get_channel_to_poll(self, peer_id: PeerId) -> int | None:
        row = self._check().channels_to_poll.get(peer_id)
        return None if row is None else row.pts

    def add_channel_to_poll(self, peer_id: PeerId, pts: int = 0) -> None:
        """Remember to fetch the channel's difference, at least up to ``pts``."""
        table = self._check().channels_to_poll
        known = table.get(peer_id)
        if known is None or known.pts < pts:
            table.set(peer_id, ChannelToPoll(pts))

    def remove_channel_to_poll(self, peer_id: PeerId) -> None:
        """The channel is caught up: forget it."""
        table = self._check().channels_to_poll
        if table.get(peer_id) is not None:
            table.remove(peer_id)

    # -- peers ----------------------------------------------------------------

    def get_peer(self, peer_id: PeerId) -> Peer | None:
        return self._check().peers.get(peer_id)

    def get_all_peers(self) -> dict[PeerId, Peer]:
        """Every stored peer (a scan of the table: for look-ups by name, not per frame)."""
        return self._check().peers.all()

    def update_peers(self, peers: Iterable[Peer]) -> None:
        """Store peers; a peer seen for the first time gets its initial history holes."""
        tables = self._check()
        for peer in peers:
            if not isinstance(peer.id, PeerId):
                raise InvalidArgumentError(f"{peer.id!r} is not a PeerId")
            tables.holes.ensure_initialized(peer.id)
            if tables.peers.get(peer.id) != peer:
                tables.peers.set(peer.id, peer)

    def get_peer_presence(self, peer_id: PeerId) -> PeerPresence | None:
        return self._check().presences.get(peer_id)

    def update_peer_presences(self, presences: Mapping[PeerId, PeerPresence]) -> None:
        tables = self._check()
        for peer_id, presence in presences.items():
            if tables.presences.get(peer_id) != presence:
                tables.presences.set(peer_id, presence)

    def get_cached_peer_data(self, peer_id: PeerId) -> CachedPeerData | None:
        return self._check().cached_peer_data.get(peer_id)

    def update_cached_peer_data(self, peer_id: PeerId, data: CachedPeerData) -> None:
        tables = self._check()
        if tables.cached_peer_data.get(peer_id) != data:
            tables.cached_peer_data.set(peer_id, data)

    def get_notification_settings(self, peer_id: PeerId) -> PeerNotificationSettings | None:
        return self._check().notification_settings.get(peer_id)

    def update_notification_settings(
        self, peer_id: PeerId, settings: PeerNotificationSettings
    ) -> None:
        tables = self._check()
        if tables.notification_settings.get(peer_id) != settings:
            tables.notification_settings.set(peer_id, settings)

    def get_contact_peer_ids(self) -> frozenset[PeerId]:
        return self._check().contacts.peer_ids()

    def is_contact(self, peer_id: PeerId) -> bool:
        return self._check().contacts.is_contact(peer_id)

    def replace_contact_peer_ids(self, peer_ids: Iterable[PeerId]) -> None:
        self._check().contacts.replace(frozenset(peer_ids))

    # -- messages -------------------------------------------------------------

    def add_messages(self, messages: Iterable[StoreMessage]) -> list[MessageIndex]:
        """Store messages not stored yet; returns each one's index (local ids assigned)."""
        batch = messages if isinstance(messages, Sequence) else list(messages)
        return self._check().messages.add_messages(batch)

    def get_message(self, message_id: MessageId) -> Message | None:
        return self._check().messages.get(message_id)

    def get_message_index(self, message_id: MessageId) -> MessageIndex | None:
        return self._check().message_index.get(message_id)

    def get_message_indices_in_id_range(
        self, peer_id: PeerId, namespace: int, lower: int, upper: int
    ) -> list[MessageIndex]:
        """The stored messages with ``lower <= id <= upper``, in id order (the id index)."""
        return self._check().message_index.ids_between(peer_id, namespace, lower, upper)

    def count_messages_in_id_range(
        self, peer_id: PeerId, namespace: int, lower: int, upper: int
    ) -> int:
        """How many stored messages have ``lower <= id <= upper``."""
        return self._check().message_index.count_between(peer_id, namespace, lower, upper)

    def message_exists(self, message_id: MessageId) -> bool:
        return self._check().message_index.exists(message_id)

    def update_message(self, message_id: MessageId, message: StoreMessage) -> MessageIndex | None:
        return self._check().messages.update_message(message_id, message)

    def delete_messages(self, message_ids: Iterable[MessageId]) -> list[MessageIndex]:
        return self._check().messages.remove_messages(message_ids)

    def get_messages(
        self,
        peer_id: PeerId,
        namespace: int,
        *,
        lower: MessageIndex | None = None,
        upper: MessageIndex | None = None,
        limit: int = -1,
        newest_first: bool = False,
    ) -> list[Message]:
        return self._check().messages.messages(
            peer_id, namespace, lower=lower, upper=upper, limit=limit, reverse=newest_first
        )

    def get_top_message_index(self, peer_id: PeerId) -> MessageIndex | None:
        return self._check().messages.top_index(
            peer_id, sorted(self._seed.chat_messages_namespaces)
        )

    def message_count(self, peer_id: PeerId, namespace: int) -> int:
        return self._check().messages.count(peer_id, namespace)

    def search_messages(
        self, query: str, *, peer_id: PeerId | None = None, limit: int = 100
    ) -> list[MessageIndex]:
        """Committed messages matching an FTS5 query, most recently indexed first."""
        tables = self._check()
        result = []
        for message_id in tables.text_index.search(query, peer_id=peer_id, limit=limit):
            index = tables.message_index.get(message_id)
            if index is not None:
                result.append(index)
        return result

    def get_unsent_message_ids(self) -> list[MessageId]:
        return self._check().unsent.ids()

    # -- failed messages ------------------------------------------------------

    def mark_message_failed(self, message_id: MessageId, failure: MessageFailure) -> bool:
        """Mark a stored outgoing message failed (no longer unsent) for ``failure``, or
        give a failed one this failure; False if it is not stored or not ours."""
        tables = self._check()
        message = tables.messages.get(message_id)
        if message is None or message.incoming:
            return False
        flags = (message.flags & ~int(MessageFlags.UNSENT)) | int(MessageFlags.FAILED)
        if flags != message.flags:
            tables.messages.update_message(message_id, message.to_store()._replace(flags=flags))
        tables.failed.set(message_id, failure)
        return True

    def get_message_failure(self, message_id: MessageId) -> MessageFailure | None:
        """Why a failed message failed; ``None`` for a message that is not failed."""
        return self._check().failed.get(message_id)

    def get_failed_messages(self, peer_id: PeerId) -> list[tuple[MessageId, MessageFailure]]:
        """A chat's failed messages with their failures, in id order."""
        return self._check().failed.failures(peer_id)

    def has_failed_messages(self, peer_id: PeerId) -> bool:
        return self._check().failed.has_failures(peer_id)

    def get_failed_message_ids(self) -> list[MessageId]:
        """Every failed message of every chat."""
        return self._check().failed.ids()

    # -- holes ----------------------------------------------------------------

    def add_hole(
        self,
        peer_id: PeerId,
        namespace: int,
        space: MessageHistoryHoleSpace,
        lower: int,
        upper: int,
    ) -> None:
        self._check().holes.add(peer_id, namespace, space, ClosedRange.checked(lower, upper))

    def remove_hole(
        self,
        peer_id: PeerId,
        namespace: int,
        space: MessageHistoryHoleSpace,
        lower: int,
        upper: int,
    ) -> None:
        self._check().holes.remove(peer_id, namespace, space, ClosedRange.checked(lower, upper))

    def get_holes(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace | None = None
    ) -> list[ClosedRange]:
        space = space or MessageHistoryHoleSpace.everywhere()
        return self._check().holes.holes(peer_id, namespace, space)

    def get_hole_containing(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, id_: int
    ) -> ClosedRange | None:
        return self._check().holes.containing(peer_id, namespace, space, id_)

    # -- tags -----------------------------------------------------------------

    def get_tagged_message_indices(
        self,
        peer_id: PeerId,
        tag: int,
        namespace: int,
        *,
        limit: int = -1,
        newest_first: bool = True,
    ) -> list[MessageIndex]:
        return self._check().tags.indices(
            peer_id, tag, namespace, limit=limit, reverse=newest_first
        )

    def get_tag_summary(
        self, peer_id: PeerId, tag: int, namespace: int
    ) -> MessageHistoryTagSummary | None:
        return self._check().tag_summaries.get(peer_id, tag, namespace)

    def get_tag_summaries(
        self, peer_id: PeerId | None = None
    ) -> dict[TagSummaryKey, MessageHistoryTagSummary]:
        """Every tag summary the server has given (or ``peer_id``'s)."""
        return self._check().tag_summaries.summaries(peer_id)

    def replace_tag_summary(
        self, peer_id: PeerId, tag: int, namespace: int, count: int, max_id: int
    ) -> None:
        """Set a tag's count as the server reported it, covering ids up to ``max_id``."""
        self._check().tag_summaries.replace(peer_id, tag, namespace, count, max_id)

    # -- read states ----------------------------------------------------------

    def get_read_state(self, peer_id: PeerId) -> CombinedPeerReadState | None:
        return self._check().read_states.get(peer_id)

    def get_all_read_states(self) -> dict[PeerId, CombinedPeerReadState]:
        return self._check().read_states.all()

    def reset_read_state(self, peer_id: PeerId, namespace: int, state: PeerReadState) -> None:
        """Replace a read state with the server's."""
        self._check().read_states.set_state(peer_id, namespace, state)

    def apply_incoming_read_max_id(
        self, message_id: MessageId, *, unread_count: int | None = None
    ) -> bool:
        """Mark incoming messages up to ``message_id`` read; True if the state changed.

        ``unread_count``: what is still unread after this read, as the server counts it
        (its update says so); it is taken as it is. Without it (a read made here) the
        count drops by the incoming messages stored in the newly read range, and
        reading up to the newest known id clears it.
        """
        tables = self._check()
        peer_id, namespace, max_id = message_id
        state = tables.read_states.get_state(peer_id, namespace) or PeerReadState()
        if unread_count is not None and max_id >= state.max_incoming_read_id:
            updated = PeerReadState(
                max_id,
                state.max_outgoing_read_id,
                max(state.max_known_id, max_id),
                max(0, unread_count),
                False,
            )
            if updated == state:
                return False
            tables.read_states.set_state(peer_id, namespace, updated)
            return True
        if max_id <= state.max_incoming_read_id:
            if state.marked_unread:
                tables.read_states.set_state(
                    peer_id, namespace, PeerReadState(*state.encode()[:4], marked_unread=False)
                )
                return True
            return False
        if max_id >= state.max_known_id:
            count = 0  # everything known is read: no need to count what was
        else:
            newly_read = sum(
                1
                for _ in tables.message_index.incoming_ids(
                    peer_id, namespace, state.max_incoming_read_id + 1, max_id
                )
            )
            count = max(0, state.count - newly_read)
        tables.read_states.set_state(
            peer_id,
            namespace,
            PeerReadState(
                max_id, state.max_outgoing_read_id, max(state.max_known_id, max_id), count, False
            ),
        )
        return True

    def apply_outgoing_read_max_id(self, message_id: MessageId) -> bool:
        """The other side read our messages up to ``message_id``; True if the state changed."""
        tables = self._check()
        peer_id, namespace, max_id = message_id
        state = tables.read_states.get_state(peer_id, namespace) or PeerReadState()
        if max_id <= state.max_outgoing_read_id:
            return False
        tables.read_states.set_state(
            peer_id,
            namespace,
            PeerReadState(
                state.max_incoming_read_id,
                max_id,
                max(state.max_known_id, max_id),
                state.count,
                state.marked_unread,
            ),
        )
        return True

    def set_marked_unread(self, peer_id: PeerId, namespace: int, value: bool) -> None:
        tables = self._check()
        state = tables.read_states.get_state(peer_id, namespace) or PeerReadState()
        if state.marked_unread != value:
            tables.read_states.set_state(
                peer_id, namespace, PeerReadState(*state.encode()[:4], marked_unread=value)
            )

    # -- chat list ------------------------------------------------------------

    def get_chat_list_inclusion(self, peer_id: PeerId) -> ChatListInclusion | None:
        return self._check().chat_list_index.state(peer_id).inclusion

    def update_chat_list_inclusion(
        self, peer_id: PeerId, inclusion: ChatListInclusion | None
    ) -> None:
        """List a peer in a group (``ifHasMessagesOrOneOf``), or not at all with ``None``."""
        self._check().chat_list_index.set_inclusion(peer_id, inclusion)

    def set_pinned_peer_ids(self, group_id: int, peer_ids: Sequence[PeerId]) -> None:
        """Make ``peer_ids`` the group's pinned chats, in this order; others are unpinned."""
        tables = self._check()
        if len(set(peer_ids)) != len(peer_ids):
            raise InvalidArgumentError("a chat can be pinned only once")
        self._flush_chat_list()
        for peer_id in tables.chat_list.pinned_peer_ids(group_id):
            if peer_id not in peer_ids:
                inclusion = tables.chat_list_index.state(peer_id).inclusion
                if inclusion is not None:
                    tables.chat_list_index.set_inclusion(
                        peer_id,
                        ChatListInclusion(inclusion.group_id, None, inclusion.min_timestamp),
                    )
        for position, peer_id in enumerate(peer_ids):
            inclusion = tables.chat_list_index.state(peer_id).inclusion
            min_timestamp = None if inclusion is None else inclusion.min_timestamp
            tables.chat_list_index.set_inclusion(
                peer_id, ChatListInclusion(group_id, position, min_timestamp)
            )

    def get_pinned_peer_ids(self, group_id: int = PeerGroupId.ROOT) -> list[PeerId]:
        tables = self._check()
        self._flush_chat_list()
        return tables.chat_list.pinned_peer_ids(group_id)

    def get_chat_list(
        self,
        group_id: int = PeerGroupId.ROOT,
        *,
        below: ChatListIndex | None = None,
        count: int = -1,
    ) -> list[ChatListEntryKey]:
        """A group's chat list from the top: pinned chats, then newest first, holes included."""
        self._flush_chat_list()
        return self._check().chat_list.entries(group_id, below=below, count=count)

    def get_chat_list_position(self, peer_id: PeerId) -> tuple[int, ChatListIndex] | None:
        self._flush_chat_list()
        return self._check().chat_list_index.state(peer_id).included_index()

    def add_chat_list_hole(self, group_id: int, hole: ChatListHole) -> None:
        if self._check().chat_list.add_hole(group_id, hole):
            self._collector.chat_list_operations[group_id].append(
                ChatListOperation(ChatListOperationKind.INSERT_HOLE, hole=hole)
            )

    def remove_chat_list_hole(self, group_id: int, hole: ChatListHole) -> None:
        if self._check().chat_list.remove_hole(group_id, hole):
            self._collector.chat_list_operations[group_id].append(
                ChatListOperation(ChatListOperationKind.REMOVE_HOLE, hole=hole)
            )

    def get_chat_list_holes(self, group_id: int = PeerGroupId.ROOT) -> list[ChatListHole]:
        return self._check().chat_list.holes(group_id)

    def _flush_chat_list(self) -> None:
        """Bring chat list positions up to date with this transaction's messages so far."""
        tables = self._tables
        collector = self._collector
        if not (
            collector.touched_chat_peers
            or collector.top_candidates
            or tables.chat_list_index.is_written
        ):
            return  # no top message moved, no inclusion changed: no position either
        if collector.touched_chat_peers:
            namespaces = sorted(self._seed.chat_messages_namespaces)
            for peer_id in collector.touched_chat_peers:
                tables.chat_list_index.set_top_message(
                    peer_id, tables.messages.top_index(peer_id, namespaces)
                )
        for peer_id, candidate in collector.top_candidates.items():
            if peer_id in collector.touched_chat_peers:
                continue  # looked up above
            # Only additions: the top is the stored one or the newest added.
            top = tables.chat_list_index.state(peer_id).top_message
            if top is None or candidate.sort_key > top.sort_key:
                tables.chat_list_index.set_top_message(peer_id, candidate)
        collector.touched_chat_peers.clear()
        collector.top_candidates.clear()
        positions = collector.chat_list_positions
        changed = tables.chat_list_index.updated()
        for peer_id in positions.keys() - changed.keys():
            # Moved by an earlier read in this transaction, and since changed back.
            state = tables.chat_list_index.state(peer_id)
            changed[peer_id] = (state, state)
        for peer_id, (before, after) in changed.items():
            old = positions.get(peer_id, before.included_index() if before else None)
            new = after.included_index() if after else None
            if old == new:
                continue
            if old is not None:
                tables.chat_list.remove_entry(*old)
                collector.chat_list_operations[old[0]].append(
                    ChatListOperation(ChatListOperationKind.REMOVE_ENTRY, index=old[1])
                )
            if new is not None:
                tables.chat_list.add_entry(*new)
                collector.chat_list_operations[new[0]].append(
                    ChatListOperation(ChatListOperationKind.INSERT_ENTRY, index=new[1])
                )
            positions[peer_id] = new

    # -- operation log --------------------------------------------------------

    def add_operation_log_entry(
        self, peer_id: PeerId, tag: int, contents: Any, *, merged: bool = True
    ) -> PeerOperationLogEntry:
        return self._check().operation_log.add(peer_id, tag, contents, merged=merged)

    def update_operation_log_entry(
        self, peer_id: PeerId, tag: int, local_index: int, contents: Any
    ) -> bool:
        return self._check().operation_log.update_contents(peer_id, tag, local_index, contents)

    def remove_operation_log_entry(self, peer_id: PeerId, tag: int, local_index: int) -> bool:
        return self._check().operation_log.remove(peer_id, tag, local_index)

    def get_operation_log_entries(self, peer_id: PeerId, tag: int) -> list[PeerOperationLogEntry]:
        return self._check().operation_log.entries(peer_id, tag)

    def get_merged_operation_log_entries(
        self, tag: int, *, from_index: int = 0, limit: int = -1
    ) -> list[PeerOperationLogEntry]:
        return self._check().operation_log.merged_entries(tag, from_index=from_index, limit=limit)

    # -- chat interface state ---------------------------------------------------

    def get_chat_interface_state(
        self, peer_id: PeerId, thread_id: int = 0
    ) -> ChatInterfaceState | None:
        """What the screen of a chat (or of one of its forum topics) was left with."""
        return self._check().chat_interface_states.get(peer_id, thread_id)

    def set_chat_interface_state(
        self, peer_id: PeerId, state: ChatInterfaceState | None, thread_id: int = 0
    ) -> None:
        """Store a chat's interface state; an empty one removes it."""
        self._check().chat_interface_states.set(peer_id, thread_id, state)

    def chat_interface_states(self) -> dict[tuple[PeerId, int], ChatInterfaceState]:
        """Every stored interface state, by (peer, thread)."""
        return self._check().chat_interface_states.all()

    # -- preferences ----------------------------------------------------------

    def get_preference(self, key: str) -> Any:
        return self._check().preferences.get(key)

    def set_preference(self, key: str, value: Any) -> None:
        self._check().preferences.set(key, value)

    # -- item collections -----------------------------------------------------

    def get_item_collection_infos(
        self, namespace: int
    ) -> list[tuple[ItemCollectionId, ItemCollectionInfo]]:
        """A namespace's collections (the sticker packs, ...) in their order."""
        return self._check().item_collection_infos.infos(namespace)

    def get_item_collection_info(
        self, collection_id: ItemCollectionId
    ) -> ItemCollectionInfo | None:
        """A listed collection's info, or ``None``."""
        for listed, info in self.get_item_collection_infos(collection_id.namespace):
            if listed == collection_id:
                return info
        return None

    def replace_item_collection_infos(
        self, namespace: int, infos: Iterable[tuple[ItemCollectionId, ItemCollectionInfo]]
    ) -> None:
        """Make ``infos`` the namespace's collections, in this order; the items of a
        collection no longer listed go with it."""
        tables = self._check()
        listed = checked_infos(namespace, infos)
        before = {listed_id for listed_id, _ in tables.item_collection_infos.infos(namespace)}
        tables.item_collection_infos.replace(namespace, [(c.id, info) for c, info in listed])
        for gone in before - {collection_id for collection_id, _ in listed}:
            tables.item_collection_items.replace(gone, ())

    def get_item_collection_items(
        self, collection_id: ItemCollectionId, *, limit: int = -1
    ) -> list[ItemCollectionItem]:
        """A collection's first ``limit`` items (all with -1), in index order."""
        return self._check().item_collection_items.items(collection_id, limit)

    def replace_item_collection_items(
        self, collection_id: ItemCollectionId, items: Iterable[ItemCollectionItem]
    ) -> None:
        """Make ``items`` (distinct indexes) the collection's items."""
        checked, listed = checked_items(collection_id, items)
        self._check().item_collection_items.replace(checked, listed)

    # -- commit ---------------------------------------------------------------

    def commit(self) -> ChangeRecord:
        """Flush every table into the open SQLite transaction; returns the change record.

        Called by the postbox after the transaction function returned; the SQLite
        COMMIT itself is the caller's.
        """
        tables = self._check()
        self._flush_chat_list()
        self._open = False
        written = tables.written.in_commit_order()
        if self.read_only:
            if any(t.has_changes for t in written):
                raise PostboxError("a read-only transaction (a view's) tried to write")
            return ChangeRecord(tables.metadata.transaction_state_version())
        # Writes that cancel out (a message added and deleted again) leave nothing to
        # commit and nothing for views to replay.
        if not any(table.has_changes for table in written):
            return ChangeRecord(tables.metadata.transaction_state_version())
        version = tables.metadata.increment_transaction_state_version()
        record = change_record_of(tables, self._collector, version)
        for table in tables.written.in_commit_order():
            table.before_commit()
        return record
