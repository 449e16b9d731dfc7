"""The chat list view: a window of one group's chat list, each chat resolved.

The window is ``key.count`` rows of a group from its top (or from just below
``key.below``): pinned chats first, then the newest top message, chat-list holes
where the table has them. Each chat is resolved to its peer, top message, read
state, notification settings and (for users) presence. The view also reads the
row just below the window, so it knows whether more rows follow and whether a
hole touches its lower boundary; those holes go to the ``ChatListHolesViewKey``
singleton, which the sync engine fills with getDialogs.

A replay re-reads the window's rows only when the group's chat list changed at or
above that lower row, and re-resolves only the rows that are new or whose peer
the commit touched; the rest of the snapshot is reused. Update types: FILL_HOLE
when such a change inserted or removed a hole of the group (it wins: many chats
appear at once), UPDATE_VISIBLE when a chat entered or left the window, else
GENERIC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from postbox.change_record import ChatListOperation, ChatListOperationKind
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
    as a pinned chat with no messages); ``presence`` is loaded for users only.
    """

    index: ChatListIndex
    peer: Peer | None
    message: Message | None
    read_state: CombinedPeerReadState | None
    notification_settings: PeerNotificationSettings | None
    presence: PeerPresence | None = None

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


@dataclass(frozen=True, slots=True)
class _Rows:
    """The window's rows, the row right below it, and whether rows sit above it."""

    window: tuple[ChatListEntryKey, ...]
    next_row: ChatListEntryKey | None
    has_later: bool


def _row_order(index: ChatListIndex, entry_type: ChatListEntryType) -> _RowOrder:
    """A row's place in the chat list table (ascending; the top is the largest)."""
    return index.order, int(entry_type)


def _operation_order(operation: ChatListOperation) -> _RowOrder:
    if operation.hole is not None:
        return _row_order(ChatListIndex(None, operation.hole.index), ChatListEntryType.HOLE)
    assert operation.index is not None
    return _row_order(operation.index, ChatListEntryType.MESSAGE)


def _touches(change: ChangeRecord, peer_id: PeerId) -> bool:
    """Whether ``change`` altered anything a resolved entry of ``peer_id`` shows."""
    return (
        peer_id in change.updated_peers
        or peer_id in change.updated_read_states
        or peer_id in change.updated_notification_settings
        or peer_id in change.message_operations
        or (peer_id.namespace == _USER and peer_id in change.updated_presences)
    )


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
    )


class MutableChatListView(MutableView):
    def __init__(self, key: ChatListViewKey, tx: Transaction) -> None:
        if key.count < 1:
            raise InvalidArgumentError(f"a chat list window needs count >= 1, not {key.count}")
        self.key = key
        self._rows = self._load_rows(tx)
        self.snapshot = self._build(tx, self._rows, {}, ViewUpdateType.INITIAL)
        self._topics = self._topics_of(self.snapshot)

    @property
    def topics(self) -> frozenset[Topic]:
        return self._topics

    def boundary_holes(self) -> frozenset[ChatListHolesEntry]:
        return self.snapshot.boundary_holes

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        operations = change.chat_list_operations.get(self.key.group_id, ())
        moved = self._rows_may_move(operations)
        current = self.snapshot
        reusable: dict[ChatListEntryKey, ChatListEntry] = {}
        touched = False
        for row, entry in zip(self._rows.window, current.entries, strict=True):
            if isinstance(entry, ChatListMessageEntry) and _touches(change, entry.peer_id):
                touched = True
            else:
                reusable[row] = entry
        if not moved and not touched:
            return False
        rows = self._load_rows(tx) if moved else self._rows
        if moved and any(operation.kind in _HOLE_OPERATIONS for operation in operations):
            update_type = ViewUpdateType.FILL_HOLE
        elif moved and set(self._peer_ids(rows)) != set(current.peer_ids):
            update_type = ViewUpdateType.UPDATE_VISIBLE
        else:
            update_type = ViewUpdateType.GENERIC
        return self._take(rows, self._build(tx, rows, reusable, update_type))

    def refresh_external(self, tx: Transaction) -> bool:
        rows = self._load_rows(tx)
        return self._take(rows, self._build(tx, rows, {}, ViewUpdateType.GENERIC))

    def immutable(self) -> ChatListView:
        return self.snapshot

    # -- loading --------------------------------------------------------------

    def _load_rows(self, tx: Transaction) -> _Rows:
        group_id, count, below = self.key.group_id, self.key.count, self.key.below
        rows = tx.get_chat_list(group_id, below=below, count=count + 1)
        has_later = False
        if below is not None:
            top = tx.get_chat_list(group_id, count=1)
            has_later = bool(top) and (not rows or top[0] != rows[0])
        next_row = rows[count] if len(rows) > count else None
        return _Rows(tuple(rows[:count]), next_row, has_later)

    def _rows_may_move(self, operations: tuple[ChatListOperation, ...]) -> bool:
        """Whether an operation reached the window or the row below it.

        Rows strictly below that row change neither the window nor what the view
        knows about its boundaries.
        """
        next_row = self._rows.next_row
        if next_row is None:
            return bool(operations)
        floor = _row_order(next_row.index, next_row.type)
        return any(_operation_order(operation) >= floor for operation in operations)

    def _build(
        self,
        tx: Transaction,
        rows: _Rows,
        reusable: dict[ChatListEntryKey, ChatListEntry],
        update_type: ViewUpdateType,
    ) -> ChatListView:
        entries = tuple(
            entry if (entry := reusable.get(row)) is not None else _resolve(tx, row)
            for row in rows.window
        )
        next_row = rows.next_row
        hole_below = None
        if next_row is not None and next_row.type is ChatListEntryType.HOLE:
            hole_below = ChatListHole(next_row.index.message_index)
        return ChatListView(
            self.key.group_id,
            entries,
            next_row is not None,
            rows.has_later,
            hole_below,
            update_type,
        )

    def _take(self, rows: _Rows, snapshot: ChatListView) -> bool:
        """Keep ``snapshot`` if it differs from the current one; True if it did."""
        self._rows = rows
        if snapshot == self.snapshot:
            return False
        if snapshot.peer_ids != self.snapshot.peer_ids:
            self._topics = self._topics_of(snapshot)
        self.snapshot = snapshot
        self.update_type = snapshot.update_type
        return True

    @staticmethod
    def _peer_ids(rows: _Rows) -> tuple[PeerId, ...]:
        return tuple(row.peer_id for row in rows.window if row.type is ChatListEntryType.MESSAGE)

    def _topics_of(self, snapshot: ChatListView) -> frozenset[Topic]:
        watched: set[Topic] = {topics.chat_list(self.key.group_id)}
        for peer_id in snapshot.peer_ids:
            watched.update(
                (
                    topics.peer(peer_id),
                    topics.read_state(peer_id),
                    topics.notification_settings(peer_id),
                    topics.messages(peer_id),
                )
            )
            if peer_id.namespace == _USER:
                watched.add(topics.presence(peer_id))
        return frozenset(watched)
