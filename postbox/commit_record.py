"""Building a commit's change record from what its transaction recorded and wrote."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from postbox.change_record import ChangeCollector, ChangeRecord, current_values
from postbox.tables import Tables

__all__ = ["change_record_of"]


def change_record_of(tables: Tables, collector: ChangeCollector, version: int) -> ChangeRecord:
    """The change record of a transaction about to commit as ``version``; only what it
    recorded or wrote is looked at, the rest keeps the record's empty defaults."""
    fields: dict[str, Any] = {}
    if collector.message_operations:
        fields["message_operations"] = collector.frozen_messages()
    if collector.hole_operations:
        fields["hole_operations"] = collector.frozen_holes()
    if collector.chat_list_operations:
        fields["chat_list_operations"] = collector.frozen_chat_list()
    if collector.operation_log_operations:
        fields["operation_log_operations"] = collector.frozen_operation_log()
    if collector.chat_list_positions:
        fields["updated_chat_list_positions"] = MappingProxyType(
            dict(collector.chat_list_positions)
        )
    for name, table in (
        ("updated_peers", tables.peers),
        ("updated_presences", tables.presences),
        ("updated_cached_peer_data", tables.cached_peer_data),
        ("updated_notification_settings", tables.notification_settings),
        ("updated_read_states", tables.read_states),
        ("updated_peer_chat_states", tables.peer_chat_states),
    ):
        if table.is_written:
            fields[name] = current_values(table.updated())
    metadata = tables.metadata
    if any(key == b"state" for key, _, _ in metadata.changes()):
        fields["updated_state"] = metadata.state()
    if tables.contacts.is_written and any(True for _ in tables.contacts.changes()):
        fields["replaced_contact_peer_ids"] = tables.contacts.peer_ids()
    if tables.unsent.is_written:
        fields["added_unsent_ids"], fields["removed_unsent_ids"] = tables.unsent.updated()
    if tables.failed.is_written:
        fields["updated_failed_message_ids"] = tables.failed.updated()
    if tables.tag_summaries.is_written:
        fields["updated_tag_summaries"] = tables.tag_summaries.updated()
    if tables.preferences.is_written:
        fields["updated_preferences"] = tables.preferences.updated_keys()
    if tables.chat_interface_states.is_written:
        fields["updated_chat_interface_states"] = MappingProxyType(
            tables.chat_interface_states.updated()
        )
    if tables.item_collection_infos.is_written:
        fields["updated_item_collection_infos"] = tables.item_collection_infos.updated_namespaces()
    if tables.item_collection_items.is_written:
        fields["updated_item_collection_items"] = tables.item_collection_items.updated_collections()
    return ChangeRecord(version, **fields)
