"""The change record: an immutable list of everything one transaction changed.

Built at commit from the tables' before/after values and the operations the
transaction recorded; views read only this to decide whether to re-emit, with
dictionary look-ups keyed by peer (or hole key, group, tag...).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from postbox.chat_interface_state import ChatInterfaceState
from postbox.chat_list import ChatListHole, ChatListIndex
from postbox.holes import HoleKey, HoleOperation
from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.item_collection import ItemCollectionId
from postbox.message import Message, StoreMessage
from postbox.operation_log import PeerOperationLogEntry
from postbox.peer import CachedPeerData, Peer, PeerNotificationSettings, PeerPresence
from postbox.read_state import CombinedPeerReadState
from postbox.state import ChannelState, StateCursor
from postbox.tag_summary import TagSummaryKey

__all__ = [
    "ChangeCollector",
    "ChangeRecord",
    "ChatListOperation",
    "ChatListOperationKind",
    "InsertMessage",
    "MessageHistoryOperation",
    "OperationLogOperation",
    "RemoveMessage",
    "UpdateMessage",
]

K = TypeVar("K")
V = TypeVar("V")


class InsertMessage(NamedTuple):
    """A message stored at ``index``."""

    index: MessageIndex  # type: ignore[assignment]  # shadows tuple.index on purpose
    store: StoreMessage

    @property
    def message(self) -> Message:
        s = self.store
        return Message(
            self.index,
            s.flags,
            s.tags,
            s.author_id,
            s.text,
            s.media,
            s.reply_to_id,
            s.edit_timestamp,
            s.globally_unique_id,
            s.thread_id,
            s.forward_info,
        )


class RemoveMessage(NamedTuple):
    """The message at ``index`` (carrying ``tags``) was deleted."""

    index: MessageIndex  # type: ignore[assignment]  # shadows tuple.index on purpose
    tags: int


class UpdateMessage(NamedTuple):
    """The message at ``previous_index`` changed; it now sits at ``message.index``."""

    previous_index: MessageIndex
    message: Message


MessageHistoryOperation = InsertMessage | RemoveMessage | UpdateMessage


class ChatListOperationKind(enum.Enum):
    INSERT_ENTRY = "insert_entry"
    REMOVE_ENTRY = "remove_entry"
    INSERT_HOLE = "insert_hole"
    REMOVE_HOLE = "remove_hole"


@dataclass(frozen=True, slots=True)
class ChatListOperation:
    kind: ChatListOperationKind
    index: ChatListIndex | None = None
    hole: ChatListHole | None = None

    @property
    def peer_id(self) -> PeerId | None:
        return None if self.index is None else self.index.message_index.id.peer_id


@dataclass(frozen=True, slots=True)
class OperationLogOperation:
    action: str  # "add", "update" or "remove"
    entry: PeerOperationLogEntry


def _freeze(mapping: Mapping[K, list[V]]) -> Mapping[K, tuple[V, ...]]:
    return MappingProxyType({key: tuple(values) for key, values in mapping.items() if values})


def _proxy(mapping: Mapping[K, V]) -> Mapping[K, V]:
    return MappingProxyType(dict(mapping))


_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    """What one committed transaction changed. Safe to share between threads."""

    transaction_state_version: int
    message_operations: Mapping[PeerId, tuple[MessageHistoryOperation, ...]] = field(
        default_factory=lambda: _EMPTY
    )
    hole_operations: Mapping[HoleKey, tuple[HoleOperation, ...]] = field(
        default_factory=lambda: _EMPTY
    )
    chat_list_operations: Mapping[int, tuple[ChatListOperation, ...]] = field(
        default_factory=lambda: _EMPTY
    )
    updated_peers: Mapping[PeerId, Peer | None] = field(default_factory=lambda: _EMPTY)
    updated_presences: Mapping[PeerId, PeerPresence | None] = field(default_factory=lambda: _EMPTY)
    updated_cached_peer_data: Mapping[PeerId, CachedPeerData | None] = field(
        default_factory=lambda: _EMPTY
    )
    updated_notification_settings: Mapping[PeerId, PeerNotificationSettings | None] = field(
        default_factory=lambda: _EMPTY
    )
    updated_read_states: Mapping[PeerId, CombinedPeerReadState | None] = field(
        default_factory=lambda: _EMPTY
    )
    updated_peer_chat_states: Mapping[PeerId, ChannelState | None] = field(
        default_factory=lambda: _EMPTY
    )
    #: Peers whose chat list position (group, index) changed: the new one, or None.
    updated_chat_list_positions: Mapping[PeerId, tuple[int, ChatListIndex] | None] = field(
        default_factory=lambda: _EMPTY
    )
    updated_state: StateCursor | None = None
    replaced_contact_peer_ids: frozenset[PeerId] | None = None
    operation_log_operations: Mapping[tuple[PeerId, int], tuple[OperationLogOperation, ...]] = (
        field(default_factory=lambda: _EMPTY)
    )
    added_unsent_ids: frozenset[MessageId] = frozenset()
    removed_unsent_ids: frozenset[MessageId] = frozenset()
    #: Failed messages whose failure was added, changed or removed.
    updated_failed_message_ids: frozenset[MessageId] = frozenset()
    updated_tag_summaries: frozenset[TagSummaryKey] = frozenset()
    updated_preferences: frozenset[str] = frozenset()
    #: Chats' (peer, thread) interface states that changed: the new one, or None.
    updated_chat_interface_states: Mapping[tuple[PeerId, int], ChatInterfaceState | None] = field(
        default_factory=lambda: _EMPTY
    )
    #: Namespaces whose ordered list of item collections changed.
    updated_item_collection_infos: frozenset[int] = frozenset()
    #: Item collections whose items changed.
    updated_item_collection_items: frozenset[ItemCollectionId] = frozenset()

    @property
    def is_empty(self) -> bool:
        return not (
            self.message_operations
            or self.hole_operations
            or self.chat_list_operations
            or self.updated_peers
            or self.updated_presences
            or self.updated_cached_peer_data
            or self.updated_notification_settings
            or self.updated_read_states
            or self.updated_peer_chat_states
            or self.updated_chat_list_positions
            or self.updated_state is not None
            or self.replaced_contact_peer_ids is not None
            or self.operation_log_operations
            or self.added_unsent_ids
            or self.removed_unsent_ids
            or self.updated_failed_message_ids
            or self.updated_tag_summaries
            or self.updated_preferences
            or self.updated_chat_interface_states
            or self.updated_item_collection_infos
            or self.updated_item_collection_items
        )


@dataclass(slots=True)
class ChangeCollector:
    """The operations a running transaction records, frozen into a ``ChangeRecord`` at commit."""

    message_operations: defaultdict[PeerId, list[MessageHistoryOperation]] = field(
        default_factory=lambda: defaultdict(list)
    )
    hole_operations: defaultdict[HoleKey, list[HoleOperation]] = field(
        default_factory=lambda: defaultdict(list)
    )
    chat_list_operations: defaultdict[int, list[ChatListOperation]] = field(
        default_factory=lambda: defaultdict(list)
    )
    operation_log_operations: defaultdict[tuple[PeerId, int], list[OperationLogOperation]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: Peers whose top message must be looked up again (a message was removed or moved).
    touched_chat_peers: set[PeerId] = field(default_factory=set)
    #: Per peer, the newest message added in a chat namespace: a top message candidate.
    top_candidates: dict[PeerId, MessageIndex] = field(default_factory=dict)
    #: Chat list positions moved so far: peer -> (group, index) or None.
    chat_list_positions: dict[PeerId, tuple[int, ChatListIndex] | None] = field(
        default_factory=dict
    )

    def record_hole(self, key: HoleKey, operation: HoleOperation) -> None:
        self.hole_operations[key].append(operation)

    def record_operation_log(self, action: str, entry: PeerOperationLogEntry) -> None:
        self.operation_log_operations[(entry.peer_id, entry.tag)].append(
            OperationLogOperation(action, entry)
        )

    def frozen_messages(self) -> Mapping[PeerId, tuple[MessageHistoryOperation, ...]]:
        return _freeze(self.message_operations)

    def frozen_holes(self) -> Mapping[HoleKey, tuple[HoleOperation, ...]]:
        return _freeze(self.hole_operations)

    def frozen_chat_list(self) -> Mapping[int, tuple[ChatListOperation, ...]]:
        return _freeze(self.chat_list_operations)

    def frozen_operation_log(
        self,
    ) -> Mapping[tuple[PeerId, int], tuple[OperationLogOperation, ...]]:
        return _freeze(self.operation_log_operations)


def current_values(
    changes: Mapping[PeerId, tuple[V | None, V | None]],
) -> Mapping[PeerId, V | None]:
    """``peer -> after`` from a table's ``peer -> (before, after)``."""
    return _proxy({peer: after for peer, (_, after) in changes.items()})
