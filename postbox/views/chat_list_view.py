"""The chat list view: a window of one group's chat list, each chat resolved.

The window is ``key.count`` rows of a group from its top (or from just below
``key.below``): pinned chats first, then the newest top message, chat-list holes
where the table has them. Each chat is resolved to its peer, top message, read
state, notification settings and (for users) presence. The view also reads the
row just below the window, so it knows whether more rows follow and whether a
hole touches its lower boundary; those holes go to the ``ChatListHolesViewKey``
singleton, which the sync engine fills with getDialogs.

A replay costs what the commit changed, not what the window holds: the group's
row operations are placed by bisection into the window (kept bottom first with each
row's order), the chats a commit touched are found by peer and resolved again alone,
and rows are read only to refill the lower boundary after rows left the window (the
new lowest rows and the row below them). Chats entering or leaving the window change
the view's topics by their own, told to the tracker as such. Update types: FILL_HOLE
when a change that reached the window or the row below it inserted or removed a hole
of the group (it wins: many chats appear at once), UPDATE_VISIBLE when a chat entered
or left the window, else GENERIC.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from postbox.change_record import ChatListOperation, ChatListOperationKind
from postbox.chat_interface_state import ChatInterfaceState
from postbox.chat_list import ChatListEntryType, ChatListHole, ChatListIndex
from postbox.errors import InvalidArgumentError
from postbox.ids import PeerId, PeerNamespace
from postbox.message import Message
from postbox.peer import Peer, PeerNotificationSettings, PeerPresence
from postbox.read_state import CombinedPeerReadState
from postbox.tables import ChatListEntryKey
from postbox.view_keys import ChatListViewKey
from postbox.views import topics
from postbox.views.holes_views import ChatListHolesEntry
from postbox.views.view import MutableView, ViewSnapshot, ViewUpdateType

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = [
    "ChatListEntry",
    "ChatListHoleEntry",
    "ChatListMessageEntry",
    "ChatListView",
    "MutableChatListView",
]

_HOLE_OPERATIONS = frozenset({ChatListOperationKind.INSERT_HOLE, ChatListOperationKind.REMOVE_HOLE})
_USER = int(PeerNamespace.USER)

_RowOrder = tuple[tuple[int, int, int, int, int], int]


@dataclass(frozen=True, slots=True)
class ChatListMessageEntry:
    """A chat in the list (the seeds' ``MessageEntry``), resolved at ``index``.

    ``message`` is the top message (``None`` for a chat listed without one, such
    as a pinned chat with no messages); ``presence`` is loaded for users only;
    ``has_failed``: the chat holds a message that failed to send.
    """

    index: ChatListIndex
    peer: Peer | None
    message: Message | None
    read_state: CombinedPeerReadState | None
    notification_settings: PeerNotificationSettings | None
    presence: PeerPresence | None = None
    #: What the chat's screen was left with (its draft shows in the list).
    interface_state: ChatInterfaceState | None = None
    has_failed: bool = False

    @property
    def peer_id(self) -> PeerId:
        return self.index.message_index.id.peer_id


@dataclass(frozen=True, slots=True)
class ChatListHoleEntry:
    """A chat-list hole inside the window (the seeds' ``HoleEntry``)."""

    hole: ChatListHole

    @property
    def index(self) -> ChatListIndex:
        return ChatListIndex(None, self.hole.index)


ChatListEntry = ChatListMessageEntry | ChatListHoleEntry


@dataclass(frozen=True, slots=True)
class ChatListView(ViewSnapshot):
    """A window of a group's chat list, top first.

    ``has_earlier``: rows follow below the window. ``has_later``: rows exist above
    it (only possible for a window opened ``below`` an index). ``hole_below``: the
    hole right below the window, if the next row is one. ``update_type`` is why
    this snapshot was emitted and takes no part in equality.
    """

    group_id: int
    entries: tuple[ChatListEntry, ...]
    has_earlier: bool
    has_later: bool
    hole_below: ChatListHole | None = None
    update_type: ViewUpdateType = field(default=ViewUpdateType.INITIAL, compare=False)

    @property
    def peer_ids(self) -> tuple[PeerId, ...]:
        """The chats in the window, top first."""
        return tuple(e.peer_id for e in self.entries if isinstance(e, ChatListMessageEntry))

    @property
    def boundary_holes(self) -> frozenset[ChatListHolesEntry]:
        """The holes the window shows, and the one touching its lower boundary."""
        holes = {e.hole for e in self.entries if isinstance(e, ChatListHoleEntry)}
        if self.hole_below is not None:
            holes.add(self.hole_below)
        return frozenset(ChatListHolesEntry(self.group_id, hole) for hole in holes)


def _row_order(index: ChatListIndex, entry_type: ChatListEntryType) -> _RowOrder:
    """A row's place in the chat list table (ascending; the top is the largest)."""
    return index.order, int(entry_type)


def _operation_order(operation: ChatListOperation) -> _RowOrder:
    if operation.hole is not None:
        return _row_order(ChatListIndex(None, operation.hole.index), ChatListEntryType.HOLE)
    assert operation.index is not None
    return _row_order(operation.index, ChatListEntryType.MESSAGE)


def _resolve(tx: Transaction, row: ChatListEntryKey) -> ChatListEntry:
    if row.type is ChatListEntryType.HOLE:
        return ChatListHoleEntry(ChatListHole(row.index.message_index))
    peer_id = row.peer_id
    return ChatListMessageEntry(
        row.index,
        tx.get_peer(peer_id),
        tx.get_message(row.index.message_index.id),
        tx.get_read_state(peer_id),
        tx.get_notification_settings(peer_id),
        tx.get_peer_presence(peer_id) if peer_id.namespace == _USER else None,
        tx.get_chat_interface_state(peer_id),
        tx.has_failed_messages(peer_id),
    )


class MutableChatListView(MutableView):
    """The window is kept bottom first (ascending table order), with each row's order
    for bisection and each chat's row by peer, so a replay finds the rows a commit
    touched without walking the window."""

    def __init__(self, key: ChatListViewKey, tx: Transaction) -> None:
        if key.count < 1:
            raise InvalidArgumentError(f"a chat list window needs count >= 1, not {key.count}")
        self.key = key
        #: Rows at or above this order lie above the window (only with ``key.below``).
        self._ceiling: _RowOrder | None = (
            None if key.below is None else _row_order(key.below, ChatListEntryType.MESSAGE)
        )
        self._load(tx)
        self.snapshot = self._render(ViewUpdateType.INITIAL)
        self._topics: frozenset[Topic] | None = None
        #: Topics gained and lost since the tracker last asked (``take_topic_changes``).
        self._topics_added: list[Topic] = []
        self._topics_removed: list[Topic] = []

    @property
    def topics(self) -> frozenset[Topic]:
        if self._topics is None:
            self._topics = self._topics_of(self._where)
        return self._topics

    def take_topic_changes(self) -> tuple[list[Topic], list[Topic]]:
        changes = self._topics_added, self._topics_removed
        self._topics_added, self._topics_removed = [], []
        return changes

    def boundary_holes(self) -> frozenset[ChatListHolesEntry]:
        """As the snapshot's, from the holes kept apart (not a walk over the window)."""
        holes = set(self._holes)
        if self.snapshot.hole_below is not None:
            holes.add(self.snapshot.hole_below)
        group_id = self.key.group_id
        return frozenset(ChatListHolesEntry(group_id, hole) for hole in holes)

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        operations = change.chat_list_operations.get(self.key.group_id, ())
        moved = self._rows_may_move(operations)
        #: Chats whose membership of the window this replay changed: were they in it?
        members: dict[PeerId, bool] = {}
        resolved: set[PeerId] = set()
        later = False
        for operation in operations:
            later |= self._apply(tx, operation, members, resolved)
        self._settle(tx, members, resolved)
        if later:
            top = tx.get_chat_list(self.key.group_id, count=1)
            assert self._ceiling is not None
            self._has_later = bool(top) and _row_order(top[0].index, top[0].type) >= self._ceiling
        for peer_id in _touched_peers(change):
            if peer_id not in resolved and peer_id in self._where:
                self._put(self._where[peer_id], _resolve(tx, self._row_at(peer_id)))
        entered = [p for p, was in members.items() if not was and p in self._where]
        left = [p for p, was in members.items() if was and p not in self._where]
        entered_or_left = bool(entered or left)
        if moved and any(operation.kind in _HOLE_OPERATIONS for operation in operations):
            update_type = ViewUpdateType.FILL_HOLE
        elif moved and entered_or_left:
            update_type = ViewUpdateType.UPDATE_VISIBLE
        else:
            update_type = ViewUpdateType.GENERIC
        self._follow(entered, left)
        return self._take(self._render(update_type))

    def refresh_external(self, tx: Transaction) -> bool:
        before = set(self._where)
        self._load(tx)
        self._follow(self._where.keys() - before, before - self._where.keys())
        return self._take(self._render(ViewUpdateType.GENERIC))

    def immutable(self) -> ChatListView:
        return self.snapshot

    # -- loading --------------------------------------------------------------

    def _load(self, tx: Transaction) -> None:
        group_id, count, below = self.key.group_id, self.key.count, self.key.below
        rows = tx.get_chat_list(group_id, below=below, count=count + 1)
        has_later = False
        if below is not None:
            top = tx.get_chat_list(group_id, count=1)
            has_later = bool(top) and (not rows or top[0] != rows[0])
        window = rows[:count][::-1]
        self._rows = window
        self._orders = [_row_order(row.index, row.type) for row in window]
        #: Top first, as the snapshot shows them (the rows and orders are bottom first).
        self._entries = [_resolve(tx, row) for row in rows[:count]]
        self._where = {
            row.peer_id: order
            for row, order in zip(window, self._orders, strict=True)
            if row.type is ChatListEntryType.MESSAGE
        }
        #: The holes in the window.
        self._holes = {_hole(row) for row in window if row.type is ChatListEntryType.HOLE}
        self._next_row = rows[count] if len(rows) > count else None
        #: Whether every row between the window's lowest and ``_next_row`` (or the
        #: group's bottom when there is none) is known: false once the next row went.
        self._bottom_known = True
        self._has_later = has_later

    def _rows_may_move(self, operations: tuple[ChatListOperation, ...]) -> bool:
        """Whether an operation reached the window or the row below it.

        Rows strictly below that row change neither the window nor what the view
        knows about its boundaries.
        """
        next_row = self._next_row
        if next_row is None:
            return bool(operations)
        floor = _row_order(next_row.index, next_row.type)
        return any(_operation_order(operation) >= floor for operation in operations)

    # -- replaying in place ------------------------------------------------------------

    def _apply(
        self,
        tx: Transaction,
        operation: ChatListOperation,
        members: dict[PeerId, bool],
        resolved: set[PeerId],
    ) -> bool:
        """Apply one chat list operation to the window; True if it lay above the window."""
        order = _operation_order(operation)
        if self._ceiling is not None and order >= self._ceiling:
            return True
        row = _operation_row(operation)
        is_message = row.type is ChatListEntryType.MESSAGE
        inserting = operation.kind in (
            ChatListOperationKind.INSERT_ENTRY,
            ChatListOperationKind.INSERT_HOLE,
        )
        orders = self._orders
        position = bisect_left(orders, order)
        if inserting:
            if not self._known(order):
                return False  # below the rows the view knows: the window does not reach it
            if is_message:
                members.setdefault(row.peer_id, row.peer_id in self._where)
                self._where[row.peer_id] = order
                resolved.add(row.peer_id)
            else:
                self._holes.add(_hole(row))
            orders.insert(position, order)
            self._rows.insert(position, row)
            self._entries.insert(len(orders) - 1 - position, _resolve(tx, row))
            return False
        if position < len(orders) and orders[position] == order:
            if is_message:
                members.setdefault(row.peer_id, True)
                del self._where[row.peer_id]
            else:
                self._holes.discard(_hole(row))
            del self._entries[len(orders) - 1 - position]
            del orders[position], self._rows[position]
        elif self._next_row is not None and order == _row_order(
            self._next_row.index, self._next_row.type
        ):
            self._next_row, self._bottom_known = None, False
        return False

    def _known(self, order: _RowOrder) -> bool:
        """Whether the view knows every row around ``order`` (below its ceiling)."""
        next_row = self._next_row
        if next_row is not None:
            return order > _row_order(next_row.index, next_row.type)
        if self._bottom_known:
            return True
        return bool(self._orders) and order > self._orders[0]

    def _settle(self, tx: Transaction, members: dict[PeerId, bool], resolved: set[PeerId]) -> None:
        """Cut the window back to ``count`` rows, or complete it from the rows below."""
        count = len(self._rows)
        excess = count - self.key.count
        if excess > 0:
            for row in self._rows[:excess]:
                if row.type is ChatListEntryType.MESSAGE:
                    members.setdefault(row.peer_id, True)
                    del self._where[row.peer_id]
                else:
                    self._holes.discard(_hole(row))
            self._next_row, self._bottom_known = self._rows[excess - 1], True
            del self._rows[:excess], self._orders[:excess], self._entries[-excess:]
            return
        if self._next_row is None and self._bottom_known:
            return  # every row is in the window
        if excess == 0 and self._next_row is not None:
            return
        lowest = self._rows[0].index if self._rows else self.key.below
        below = tx.get_chat_list(self.key.group_id, below=lowest, count=1 - excess)
        self._next_row = below[-excess] if len(below) > -excess else None
        self._bottom_known = True
        for row in below[:-excess]:
            order = _row_order(row.index, row.type)
            if row.type is ChatListEntryType.MESSAGE:
                members.setdefault(row.peer_id, False)
                self._where[row.peer_id] = order
                resolved.add(row.peer_id)
            else:
                self._holes.add(_hole(row))
            self._rows.insert(0, row)
            self._orders.insert(0, order)
            self._entries.append(_resolve(tx, row))

    def _row_at(self, peer_id: PeerId) -> ChatListEntryKey:
        return self._rows[bisect_left(self._orders, self._where[peer_id])]

    def _put(self, order: _RowOrder, entry: ChatListEntry) -> None:
        self._entries[len(self._orders) - 1 - bisect_left(self._orders, order)] = entry

    # -- the snapshot --------------------------------------------------------------------

    def _render(self, update_type: ViewUpdateType) -> ChatListView:
        next_row = self._next_row
        hole_below = None
        if next_row is not None and next_row.type is ChatListEntryType.HOLE:
            hole_below = ChatListHole(next_row.index.message_index)
        return ChatListView(
            self.key.group_id,
            tuple(self._entries),
            next_row is not None,
            self._has_later,
            hole_below,
            update_type,
        )

    def _follow(self, entered: Iterable[PeerId], left: Iterable[PeerId]) -> None:
        """Watch the chats that entered the window, and no longer those that left."""
        for peer_id in entered:
            self._topics_added += _peer_topics(peer_id)
            self._topics = None
        for peer_id in left:
            self._topics_removed += _peer_topics(peer_id)
            self._topics = None

    def _take(self, snapshot: ChatListView) -> bool:
        """Keep ``snapshot`` if it differs from the current one; True if it did."""
        if snapshot == self.snapshot:
            return False
        self.snapshot = snapshot
        self.update_type = snapshot.update_type
        return True

    def _topics_of(self, peer_ids: Iterable[PeerId]) -> frozenset[Topic]:
        watched: set[Topic] = {topics.chat_list(self.key.group_id)}
        for peer_id in peer_ids:
            watched.update(_peer_topics(peer_id))
        return frozenset(watched)


def _peer_topics(peer_id: PeerId) -> tuple[Topic, ...]:
    """What a chat in the window is watched by."""
    watched = (
        topics.peer(peer_id),
        topics.read_state(peer_id),
        topics.notification_settings(peer_id),
        topics.messages(peer_id),
        topics.chat_interface_state(peer_id),
    )
    if peer_id.namespace == _USER:
        return (*watched, topics.presence(peer_id))
    return watched


def _hole(row: ChatListEntryKey) -> ChatListHole:
    return ChatListHole(row.index.message_index)


def _operation_row(operation: ChatListOperation) -> ChatListEntryKey:
    if operation.hole is not None:
        return ChatListEntryKey(ChatListIndex(None, operation.hole.index), ChatListEntryType.HOLE)
    assert operation.index is not None
    return ChatListEntryKey(operation.index, ChatListEntryType.MESSAGE)


def _touched_peers(change: ChangeRecord) -> set[PeerId]:
    """The peers whose resolved chat list entries ``change`` may alter."""
    touched = set(change.updated_peers)
    touched.update(change.updated_read_states)
    touched.update(change.updated_notification_settings)
    touched.update(change.message_operations)
    touched.update(peer_id for peer_id, thread_id in change.updated_chat_interface_states)
    touched.update(message_id.peer_id for message_id in change.updated_failed_message_ids)
    touched.update(p for p in change.updated_presences if p.namespace == _USER)
    return touched
