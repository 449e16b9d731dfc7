"""Postbox tables, one module each, and the set of them one Postbox owns."""

from __future__ import annotations

from postbox.change_record import ChangeCollector
from postbox.seed_configuration import SeedConfiguration
from postbox.tables.cached_peer_data_table import CachedPeerDataTable
from postbox.tables.channels_to_poll_table import ChannelsToPollTable
from postbox.tables.chat_list_index_table import ChatListIndexTable, ChatListPeerState
from postbox.tables.chat_list_table import ChatListEntryKey, ChatListTable
from postbox.tables.contact_table import ContactTable
from postbox.tables.item_collection_info_table import ItemCollectionInfoTable
from postbox.tables.item_collection_item_table import ItemCollectionItemTable
from postbox.tables.message_history_failed_table import MessageHistoryFailedTable
from postbox.tables.message_history_hole_index_table import MessageHistoryHoleIndexTable
from postbox.tables.message_history_index_table import MessageHistoryIndexTable
from postbox.tables.message_history_metadata_table import MessageHistoryMetadataTable
from postbox.tables.message_history_read_state_table import MessageHistoryReadStateTable
from postbox.tables.message_history_table import MessageHistoryTable
from postbox.tables.message_history_tags_summary_table import MessageHistoryTagsSummaryTable
from postbox.tables.message_history_tags_table import MessageHistoryTagsTable
from postbox.tables.message_history_text_index_table import MessageHistoryTextIndexTable
from postbox.tables.message_history_unsent_table import MessageHistoryUnsentTable
from postbox.tables.metadata_table import MetadataTable
from postbox.tables.peer_chat_interface_state_table import PeerChatInterfaceStateTable
from postbox.tables.peer_chat_state_table import PeerChatStateTable
from postbox.tables.peer_merged_operation_log_index_table import PeerMergedOperationLogIndexTable
from postbox.tables.peer_notification_settings_table import PeerNotificationSettingsTable
from postbox.tables.peer_operation_log_metadata_table import PeerOperationLogMetadataTable
from postbox.tables.peer_operation_log_table import PeerOperationLogTable
from postbox.tables.peer_presence_table import PeerPresenceTable
from postbox.tables.peer_table import PeerTable
from postbox.tables.preferences_table import PreferencesTable
from postbox.tables.table import CommitParticipant, Table, WrittenTables
from postbox.value_box import ValueBox

__all__ = ["ChatListEntryKey", "ChatListPeerState", "Table", "Tables"]


class Tables:
    """Every table of one database, wired to its dependencies.

    ``in_commit_order`` is the order ``before_commit`` runs in: message history and
    what it cascades to first, the chat list after it, metadata last.
    """

    def __init__(self, box: ValueBox, seed_configuration: SeedConfiguration) -> None:
        self.metadata = MetadataTable(box)
        self.history_metadata = MessageHistoryMetadataTable(box)
        self.peers = PeerTable(box)
        self.presences = PeerPresenceTable(box)
        self.cached_peer_data = CachedPeerDataTable(box)
        self.notification_settings = PeerNotificationSettingsTable(box)
        self.contacts = ContactTable(box)
        self.message_index = MessageHistoryIndexTable(box)
        self.holes = MessageHistoryHoleIndexTable(box, seed_configuration, self.history_metadata)
        self.tags = MessageHistoryTagsTable(box)
        self.tag_summaries = MessageHistoryTagsSummaryTable(box)
        self.text_index = MessageHistoryTextIndexTable(box)
        self.unsent = MessageHistoryUnsentTable(box)
        self.failed = MessageHistoryFailedTable(box)
        self.read_states = MessageHistoryReadStateTable(box)
        self.messages = MessageHistoryTable(
            box,
            seed_configuration,
            index=self.message_index,
            holes=self.holes,
            metadata=self.history_metadata,
            tags=self.tags,
            tag_summaries=self.tag_summaries,
            text_index=self.text_index,
            unsent=self.unsent,
            failed=self.failed,
            read_states=self.read_states,
        )
        self.chat_list_index = ChatListIndexTable(box)
        self.chat_list = ChatListTable(box)
        self.peer_chat_states = PeerChatStateTable(box)
        self.channels_to_poll = ChannelsToPollTable(box)
        self.operation_log_metadata = PeerOperationLogMetadataTable(box)
        self.merged_operation_log = PeerMergedOperationLogIndexTable(box)
        self.operation_log = PeerOperationLogTable(
            box, self.operation_log_metadata, self.merged_operation_log
        )
        self.preferences = PreferencesTable(box)
        self.chat_interface_states = PeerChatInterfaceStateTable(box)
        self.item_collection_infos = ItemCollectionInfoTable(box)
        self.item_collection_items = ItemCollectionItemTable(box)
        self.in_commit_order: tuple[CommitParticipant, ...] = (
            self.messages,
            self.message_index,
            self.tags,
            self.tag_summaries,
            self.text_index,
            self.unsent,
            self.failed,
            self.read_states,
            self.holes,
            self.history_metadata,
            self.peers,
            self.presences,
            self.cached_peer_data,
            self.notification_settings,
            self.contacts,
            self.chat_list_index,
            self.chat_list,
            self.peer_chat_states,
            self.channels_to_poll,
            self.operation_log,
            self.merged_operation_log,
            self.operation_log_metadata,
            self.preferences,
            self.chat_interface_states,
            self.item_collection_infos,
            self.item_collection_items,
            self.metadata,
        )
        #: What the tables record into between transactions (nothing, by design).
        self._idle_collector = ChangeCollector()
        #: The tables the running transaction used, shared by all of them.
        self.written = WrittenTables()
        for participant in self.in_commit_order:
            self.written.rank[participant] = len(self.written.rank)
            participant.written = self.written

    def attach(self, collector: ChangeCollector) -> None:
        """Point the tables that record operations at a new transaction's collector."""
        self.messages.collector = collector
        self.holes.observer = collector.record_hole
        self.operation_log.observer = collector.record_operation_log

    def committed(self) -> None:
        """The transaction committed: the tables it used keep what they keep across
        transactions. ``reset`` follows."""
        for table in self.written.tables:
            table.committed()

    def keep_reads(self) -> None:
        """After a read transaction: what it read was committed, and may be kept."""
        for table in self.written.tables:
            table.committed()

    def forget_committed(self) -> None:
        """Another process committed: drop every value kept across transactions."""
        for table in self.in_commit_order:
            table.forget_committed()

    def reset(self) -> None:
        """Drop the transaction's caches and its collector (freeing them now, not later)."""
        written = self.written
        for table in written.tables:
            table.reset()
        written.reset()
        self.messages.collector = self._idle_collector
        self.holes.observer = None
        self.operation_log.observer = None
