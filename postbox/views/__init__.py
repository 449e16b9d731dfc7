"""Live views: mutable views replayed per commit, frozen snapshots, subscriptions."""

from postbox.views.chat_list_view import (
    ChatListEntry,
    ChatListHoleEntry,
    ChatListMessageEntry,
    ChatListView,
)
from postbox.views.failed_messages_view import FailedMessageIdsView
from postbox.views.holes_views import (
    ChatListHolesEntry,
    ChatListHolesView,
    HoleDirection,
    MessageHistoryHolesEntry,
    MessageHistoryHolesView,
)
from postbox.views.item_collection_views import (
    ItemCollectionEntry,
    ItemCollectionInfosView,
    ItemCollectionItemsView,
)
from postbox.views.message_history_view import MessageHistoryView
from postbox.views.peer_view import BasicPeerView, PeerView
from postbox.views.simple_views import (
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
from postbox.views.subscription import CombinedView, Subscription
from postbox.views.topics import Topic
from postbox.views.view import MutableView, UpdateKind, ViewSnapshot, ViewUpdateType
from postbox.views.view_tracker import ReplayReport

__all__ = [
    "BasicPeerView",
    "ChatListEntry",
    "ChatListHoleEntry",
    "ChatListHolesEntry",
    "ChatListHolesView",
    "ChatListMessageEntry",
    "ChatListView",
    "CombinedView",
    "ContactsView",
    "FailedMessageIdsView",
    "HoleDirection",
    "ItemCollectionEntry",
    "ItemCollectionInfosView",
    "ItemCollectionItemsView",
    "MessageHistoryHolesEntry",
    "MessageHistoryHolesView",
    "MessageHistoryView",
    "MutableView",
    "OperationLogView",
    "PeerPresencesView",
    "PeerView",
    "PreferencesView",
    "ChatInterfaceStateView",
    "ReadStateView",
    "ReplayReport",
    "StateView",
    "Subscription",
    "SynchronizeReadStatesView",
    "TagSummaryView",
    "Topic",
    "UnreadCountsView",
    "UnsentMessagesView",
    "UpdateKind",
    "ViewSnapshot",
    "ViewUpdateType",
]
