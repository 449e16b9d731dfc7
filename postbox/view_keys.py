"""View keys: one frozen, hashable dataclass per view type.

A key says what to watch; ``views.factory.mutable_view_for_key`` turns it into
the mutable view that watches it. Two subscriptions with equal keys get equal
snapshots.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from postbox.chat_list import ChatListIndex, PeerGroupId
from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.item_collection import ItemCollectionId

if TYPE_CHECKING:
    # Named in the keys' bases as strings, which ruff does not read as uses.
    from postbox.views.chat_list_view import ChatListView  # noqa: F401
    from postbox.views.failed_messages_view import FailedMessageIdsView  # noqa: F401
    from postbox.views.holes_views import (  # noqa: F401
        ChatListHolesView,
        MessageHistoryHolesView,
    )
    from postbox.views.item_collection_views import (  # noqa: F401
        ItemCollectionInfosView,
        ItemCollectionItemsView,
    )
    from postbox.views.message_history_view import MessageHistoryView  # noqa: F401
    from postbox.views.peer_view import BasicPeerView, PeerView  # noqa: F401
    from postbox.views.simple_views import (  # noqa: F401
        ChatInterfaceStateView,
        ContactsView,
        OperationLogView,
        PeerPresencesView,
        PreferencesView,
        ReadStateView,
        StateView,
        SynchronizeReadStatesView,
        TagSummaryView,
        UnreadCountsView,
        UnsentMessagesView,
    )
    from postbox.views.view import ViewSnapshot

__all__ = [
    "AnyViewKey",
    "BasicPeerViewKey",
    "ChatListHolesViewKey",
    "ChatListViewKey",
    "ContactsViewKey",
    "FailedMessageIdsViewKey",
    "HistoryAnchor",
    "HistoryAnchorKind",
    "ItemCollectionInfosViewKey",
    "ItemCollectionItemsViewKey",
    "MessageHistoryHolesViewKey",
    "MessageHistoryViewKey",
    "OperationLogViewKey",
    "PeerPresencesViewKey",
    "PeerViewComponents",
    "PeerViewKey",
    "PostboxViewKey",
    "PreferencesViewKey",
    "ChatInterfaceStateViewKey",
    "ReadStateViewKey",
    "StateViewKey",
    "SynchronizeReadStatesViewKey",
    "TagSummaryViewKey",
    "UnreadCountsViewKey",
    "UnsentMessagesViewKey",
]


#: The snapshot a key's view emits.
SnapshotT = TypeVar("SnapshotT", bound="ViewSnapshot", covariant=True)


@dataclass(frozen=True, slots=True)
class PostboxViewKey(Generic[SnapshotT]):
    """Base of every view key; ``SnapshotT`` is the snapshot its view emits, so
    ``combined[key]`` is typed."""


#: A key of any view.
AnyViewKey: TypeAlias = "PostboxViewKey[Any]"


class PeerViewComponents(enum.IntFlag):
    """What a peer view loads besides the peer itself."""

    CACHED_DATA = 1 << 0
    PRESENCE = 1 << 1
    NOTIFICATION_SETTINGS = 1 << 2
    CONTACT = 1 << 3
    GROUP = 1 << 4
    ALL = CACHED_DATA | PRESENCE | NOTIFICATION_SETTINGS | CONTACT | GROUP


@dataclass(frozen=True, slots=True)
class PeerViewKey(PostboxViewKey["PeerView"]):
    peer_id: PeerId
    components: PeerViewComponents = PeerViewComponents.ALL


@dataclass(frozen=True, slots=True)
class BasicPeerViewKey(PostboxViewKey["BasicPeerView"]):
    peer_id: PeerId


@dataclass(frozen=True, slots=True)
class PeerPresencesViewKey(PostboxViewKey["PeerPresencesView"]):
    peer_ids: frozenset[PeerId]


@dataclass(frozen=True, slots=True)
class UnreadCountsViewKey(PostboxViewKey["UnreadCountsView"]):
    """Unread counts of ``peer_ids``, and the total over every chat if ``total``."""

    peer_ids: frozenset[PeerId] = frozenset()
    total: bool = True


@dataclass(frozen=True, slots=True)
class TagSummaryViewKey(PostboxViewKey["TagSummaryView"]):
    peer_id: PeerId
    tag: int
    namespace: int = 0


@dataclass(frozen=True, slots=True)
class ReadStateViewKey(PostboxViewKey["ReadStateView"]):
    peer_id: PeerId


@dataclass(frozen=True, slots=True)
class StateViewKey(PostboxViewKey["StateView"]):
    """The state cursor (pts, qts, seq, date)."""


@dataclass(frozen=True, slots=True)
class ContactsViewKey(PostboxViewKey["ContactsView"]):
    """The contact list, with each contact's peer and presence."""


@dataclass(frozen=True, slots=True)
class PreferencesViewKey(PostboxViewKey["PreferencesView"]):
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class ChatInterfaceStateViewKey(PostboxViewKey["ChatInterfaceStateView"]):
    """What the screen of a chat (thread 0) or of one of its forum topics was left with:
    draft, scroll position, selection (the seeds' ``.chatInterfaceState``)."""

    peer_id: PeerId
    thread_id: int = 0


@dataclass(frozen=True, slots=True)
class OperationLogViewKey(PostboxViewKey["OperationLogView"]):
    """A tag's operation-log entries in merged order (up to ``limit``)."""

    tag: int
    limit: int = 100


@dataclass(frozen=True, slots=True)
class UnsentMessagesViewKey(PostboxViewKey["UnsentMessagesView"]):
    """The ids of outgoing messages not sent yet (a singleton)."""


@dataclass(frozen=True, slots=True)
class FailedMessageIdsViewKey(PostboxViewKey["FailedMessageIdsView"]):
    """The failed messages of one chat and why each failed (the seeds' failed message
    ids view)."""

    peer_id: PeerId


@dataclass(frozen=True, slots=True)
class SynchronizeReadStatesViewKey(PostboxViewKey["SynchronizeReadStatesView"]):
    """Read states waiting to be sent to the server (a singleton over an operation-log tag)."""

    tag: int


@dataclass(frozen=True, slots=True)
class MessageHistoryHolesViewKey(PostboxViewKey["MessageHistoryHolesView"]):
    """The first hole of every open history view (a singleton)."""


@dataclass(frozen=True, slots=True)
class ChatListHolesViewKey(PostboxViewKey["ChatListHolesView"]):
    """The chat-list holes at the boundary of every open chat-list view (a singleton)."""


@dataclass(frozen=True, slots=True)
class ItemCollectionInfosViewKey(PostboxViewKey["ItemCollectionInfosView"]):
    """The collections of ``namespaces`` in their order, each with its first
    ``preview_items`` items (the seeds' ``itemCollectionInfos``)."""

    namespaces: tuple[int, ...]
    preview_items: int = 1


@dataclass(frozen=True, slots=True)
class ItemCollectionItemsViewKey(PostboxViewKey["ItemCollectionItemsView"]):
    """One collection's info and items (the seeds' ``itemCollectionInfo``)."""

    collection_id: ItemCollectionId


class HistoryAnchorKind(enum.Enum):
    LOWER_BOUND = "lower_bound"
    UPPER_BOUND = "upper_bound"
    INDEX = "index"
    MESSAGE_ID = "message_id"
    FIRST_UNREAD = "first_unread"


@dataclass(frozen=True, slots=True)
class HistoryAnchor:
    """Where a history window opens: the oldest or newest message, an index, a
    message id, or the first unread message."""

    kind: HistoryAnchorKind
    index: MessageIndex | None = None
    message_id: MessageId | None = None

    @classmethod
    def lower_bound(cls) -> HistoryAnchor:
        return cls(HistoryAnchorKind.LOWER_BOUND)

    @classmethod
    def upper_bound(cls) -> HistoryAnchor:
        return cls(HistoryAnchorKind.UPPER_BOUND)

    @classmethod
    def at_index(cls, index: MessageIndex) -> HistoryAnchor:
        return cls(HistoryAnchorKind.INDEX, index=index)

    @classmethod
    def at_message(cls, message_id: MessageId) -> HistoryAnchor:
        return cls(HistoryAnchorKind.MESSAGE_ID, message_id=message_id)

    @classmethod
    def first_unread(cls) -> HistoryAnchor:
        return cls(HistoryAnchorKind.FIRST_UNREAD)


@dataclass(frozen=True, slots=True)
class MessageHistoryViewKey(PostboxViewKey["MessageHistoryView"]):
    """A window of ``count`` messages on each side of ``anchor`` in one chat.

    ``tag`` restricts the window to the messages carrying that tag (shared media).
    """

    peer_id: PeerId
    anchor: HistoryAnchor
    count: int = 50
    namespace: int = 0
    tag: int = 0


@dataclass(frozen=True, slots=True)
class ChatListViewKey(PostboxViewKey["ChatListView"]):
    """``count`` chat-list rows of a group from its top, or from below ``below``."""

    group_id: int = PeerGroupId.ROOT
    count: int = 50
    below: ChatListIndex | None = None
