"""Topics: what a view watches, and what a change record touched.

A topic is a small hashable tuple, such as ``("peer", peer_id)`` or
``("state",)``. The tracker indexes views by topic and computes a record's
topics once per commit, so finding the views a commit concerns costs as much
as the commit is large, however many views are open.
"""

from __future__ import annotations

from typing import TypeAlias

from postbox.change_record import ChangeRecord
from postbox.ids import PeerId
from postbox.item_collection import ItemCollectionId

__all__ = [
    "CONTACTS",
    "HOLES_SHOWN",
    "READ_STATES",
    "STATE",
    "UNSENT",
    "Topic",
    "cached_data",
    "chat_list",
    "chat_interface_state",
    "chat_list_position",
    "chat_state",
    "failed_messages",
    "item_collection_infos",
    "item_collection_items",
    "messages",
    "notification_settings",
    "operation_log",
    "peer",
    "preference",
    "presence",
    "read_state",
    "tag_summary",
    "topics_of",
]

Topic: TypeAlias = tuple[object, ...]

STATE: Topic = ("state",)
#: Any read state at all (for totals over every chat).
READ_STATES: Topic = ("read_states",)
CONTACTS: Topic = ("contacts",)
UNSENT: Topic = ("unsent",)
#: Not a stored change: the holes the open views show moved (the hole singletons).
HOLES_SHOWN: Topic = ("holes_shown",)


def messages(peer_id: PeerId) -> Topic:
    """Messages or holes of a peer."""
    return ("messages", peer_id)


def peer(peer_id: PeerId) -> Topic:
    return ("peer", peer_id)


def presence(peer_id: PeerId) -> Topic:
    return ("presence", peer_id)


def cached_data(peer_id: PeerId) -> Topic:
    return ("cached_data", peer_id)


def notification_settings(peer_id: PeerId) -> Topic:
    return ("notification_settings", peer_id)


def read_state(peer_id: PeerId) -> Topic:
    return ("read_state", peer_id)


def chat_state(peer_id: PeerId) -> Topic:
    return ("chat_state", peer_id)


def failed_messages(peer_id: PeerId) -> Topic:
    """The failed messages of a peer (their failures)."""
    return ("failed_messages", peer_id)


def chat_list(group_id: int) -> Topic:
    return ("chat_list", group_id)


def chat_list_position(peer_id: PeerId) -> Topic:
    return ("chat_list_position", peer_id)


def tag_summary(peer_id: PeerId) -> Topic:
    return ("tag_summary", peer_id)


def operation_log(tag: int) -> Topic:
    return ("operation_log", tag)


def preference(key: str) -> Topic:
    return ("preference", key)


def chat_interface_state(peer_id: PeerId, thread_id: int = 0) -> Topic:
    return ("chat_interface_state", peer_id, thread_id)


def item_collection_infos(namespace: int) -> Topic:
    """A namespace's ordered list of item collections."""
    return ("item_collection_infos", namespace)


def item_collection_items(collection_id: ItemCollectionId) -> Topic:
    return ("item_collection_items", collection_id)


def topics_of(change: ChangeRecord) -> set[Topic]:
    """Every topic a committed change touched."""
    topics: set[Topic] = set()
    add = topics.add
    for peer_id in change.message_operations:
        add(("messages", peer_id))
    for hole_key in change.hole_operations:
        add(("messages", hole_key.peer_id))
    for group_id in change.chat_list_operations:
        add(("chat_list", group_id))
    for peer_id in change.updated_chat_list_positions:
        add(("chat_list_position", peer_id))
    for kind, mapping in (
        ("peer", change.updated_peers),
        ("presence", change.updated_presences),
        ("cached_data", change.updated_cached_peer_data),
        ("notification_settings", change.updated_notification_settings),
        ("read_state", change.updated_read_states),
        ("chat_state", change.updated_peer_chat_states),
    ):
        for peer_id in mapping:
            add((kind, peer_id))
    if change.updated_read_states:
        add(READ_STATES)
    for summary_key in change.updated_tag_summaries:
        add(("tag_summary", summary_key.peer_id))
    if change.updated_state is not None:
        add(STATE)
    if change.replaced_contact_peer_ids is not None:
        add(CONTACTS)
    for _, tag in change.operation_log_operations:
        add(("operation_log", tag))
    if change.added_unsent_ids or change.removed_unsent_ids:
        add(UNSENT)
    for message_id in change.updated_failed_message_ids:
        add(("failed_messages", message_id.peer_id))
    for preference_key in change.updated_preferences:
        add(("preference", preference_key))
    for peer_id, thread_id in change.updated_chat_interface_states:
        add(("chat_interface_state", peer_id, thread_id))
    for namespace in change.updated_item_collection_infos:
        add(("item_collection_infos", namespace))
    for collection_id in change.updated_item_collection_items:
        add(("item_collection_items", collection_id))
    return topics
