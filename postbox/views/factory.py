"""The one factory: a view key in, the mutable view that watches it out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from postbox.errors import InvalidArgumentError
from postbox.view_keys import (
    AnyViewKey,
    BasicPeerViewKey,
    ChatInterfaceStateViewKey,
    ChatListHolesViewKey,
    ChatListViewKey,
    ContactsViewKey,
    FailedMessageIdsViewKey,
    ItemCollectionInfosViewKey,
    ItemCollectionItemsViewKey,
    MessageHistoryHolesViewKey,
    MessageHistoryViewKey,
    OperationLogViewKey,
    PeerPresencesViewKey,
    PeerViewKey,
    PreferencesViewKey,
    ReadStateViewKey,
    StateViewKey,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    UnreadCountsViewKey,
    UnsentMessagesViewKey,
)
from postbox.views import simple_views
from postbox.views.chat_list_view import MutableChatListView
from postbox.views.failed_messages_view import MutableFailedMessageIdsView
from postbox.views.holes_views import (
    MutableChatListHolesView,
    MutableMessageHistoryHolesView,
)
from postbox.views.item_collection_views import (
    MutableItemCollectionInfosView,
    MutableItemCollectionItemsView,
)
from postbox.views.message_history_view import MutableMessageHistoryView
from postbox.views.peer_view import MutableBasicPeerView, MutablePeerView
from postbox.views.view import MutableView

if TYPE_CHECKING:
    from postbox.transaction import Transaction

__all__ = ["mutable_view_for_key", "register_view"]

ViewConstructor = Callable[[Any, "Transaction"], MutableView]

_CONSTRUCTORS: dict[type[AnyViewKey], ViewConstructor] = {
    PeerViewKey: MutablePeerView,
    BasicPeerViewKey: MutableBasicPeerView,
    MessageHistoryViewKey: MutableMessageHistoryView,
    ChatListViewKey: MutableChatListView,
    PeerPresencesViewKey: simple_views.MutablePeerPresencesView,
    ReadStateViewKey: simple_views.MutableReadStateView,
    UnreadCountsViewKey: simple_views.MutableUnreadCountsView,
    TagSummaryViewKey: simple_views.MutableTagSummaryView,
    StateViewKey: simple_views.MutableStateView,
    ContactsViewKey: simple_views.MutableContactsView,
    PreferencesViewKey: simple_views.MutablePreferencesView,
    ChatInterfaceStateViewKey: simple_views.MutableChatInterfaceStateView,
    OperationLogViewKey: simple_views.MutableOperationLogView,
    SynchronizeReadStatesViewKey: simple_views.MutableSynchronizeReadStatesView,
    UnsentMessagesViewKey: simple_views.MutableUnsentMessagesView,
    FailedMessageIdsViewKey: MutableFailedMessageIdsView,
    ItemCollectionInfosViewKey: MutableItemCollectionInfosView,
    ItemCollectionItemsViewKey: MutableItemCollectionItemsView,
    MessageHistoryHolesViewKey: lambda key, tx: MutableMessageHistoryHolesView(frozenset()),
    ChatListHolesViewKey: lambda key, tx: MutableChatListHolesView(frozenset()),
}


def register_view(key_type: type[AnyViewKey], constructor: ViewConstructor) -> None:
    """Teach the factory a view type (each view module registers its own)."""
    _CONSTRUCTORS[key_type] = constructor


def mutable_view_for_key(key: AnyViewKey, tx: Transaction) -> MutableView:
    """Open the mutable view of ``key``, loading its initial state through ``tx``."""
    constructor = _CONSTRUCTORS.get(type(key))
    if constructor is None:
        raise InvalidArgumentError(f"no view is known for {type(key).__name__}")
    return constructor(key, tx)
