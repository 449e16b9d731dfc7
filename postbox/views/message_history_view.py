"""The message history view: a window of one chat's messages around an anchor.

The window holds up to ``count`` messages at or below the anchor and ``count``
above it, oldest first, from one (peer, namespace) history, or only from the
messages carrying ``tag`` (then the holes are those of the tag's space). Holes
cut the window: walking away from the anchor, a side stops at the first hole, so
a message stored inside a hole is never shown, and that side reports
``hole_earlier`` or ``hole_later``. Of the holes touching the window, the one
nearest the anchor is the view's first hole, which the tracker hands to the hole
filler; when the anchor itself lies in a hole the view is loading, shows nothing
and wants that hole filled AROUND the anchor. A snapshot carries the peers its messages
name (authors and where forwards came from), as the seeds' messages carry theirs, so a
window shows names without another read and follows a rename.

A snapshot is a function of the key and the tables alone, and a live view always
equals one opened fresh: a window at the upper bound slides with each new message, one
at an index stays put, and one at the first unread message follows the read state.
``replay`` keeps it so at the cost of the change, not of the window: each side of the
window (``history_window.HistorySide``) takes the commit's inserted, deleted and edited
messages in place, the read state and renamed peers come from the change record, and
a side that lost messages reads only the few past its end that take their place. The
window is read again (``_load``) only when that cannot be exact: a hole operation in
its space (FILL_HOLE), an anchor that may have moved (the first unread after a read,
a message id anchor whose message changed), a new pair of neighbours that a hole
separates, a tag window that lost a message (the transaction reads a tag's index only
from its ends), or a view loading inside a hole. It emits only if the result differs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from postbox.change_record import (
    InsertMessage,
    MessageHistoryOperation,
    RemoveMessage,
    UpdateMessage,
)
from postbox.errors import CorruptValueError, InvalidArgumentError
from postbox.holes import ClosedRange, HoleKey, MessageHistoryHoleSpace
from postbox.ids import (
    INT32_MAX,
    INT32_MIN,
    MAX_MESSAGE_ID,
    MAX_TIMESTAMP,
    MIN_TIMESTAMP,
    MessageId,
    MessageIndex,
    PeerId,
)
from postbox.message import Message, MessageFlags
from postbox.peer import Peer
from postbox.read_state import CombinedPeerReadState
from postbox.view_keys import HistoryAnchorKind, MessageHistoryViewKey
from postbox.views import topics
from postbox.views.history_window import HistorySide, _NeedsReload, nearest_hole, walk
from postbox.views.holes_views import HoleDirection, MessageHistoryHolesEntry
from postbox.views.view import MutableView, ViewSnapshot, ViewUpdateType

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = ["MessageHistoryView", "MutableMessageHistoryView"]

#: Messages read per step when looking back from the newest (first unread, a
#: deleted anchor message).
_SCAN_PAGE = 64
#: Anchors that are a position: no message outside a tag window can move them.
_INCOMING = int(MessageFlags.INCOMING)
_POSITIONAL = frozenset(
    {HistoryAnchorKind.LOWER_BOUND, HistoryAnchorKind.UPPER_BOUND, HistoryAnchorKind.INDEX}
)


@dataclass(frozen=True, slots=True)
class MessageHistoryView(ViewSnapshot):
    """A window of a chat's history, as of one commit.

    ``entries``: the messages shown, oldest first. ``hole_earlier``/``hole_later``:
    a hole lies just outside the window on that side (the window cannot grow
    there without a fetch). ``earlier_id``/``later_id``: the index of the message
    just outside the window on that side, if no hole separates it. ``anchor_index``:
    where the window opened (an absolute bound for the bound anchors).
    ``is_loading``: the anchor lies in a hole, so nothing is shown yet (and both
    hole flags are set).
    ``first_hole``: the hole the view wants filled first. ``read_state``: the
    peer's read states, for ticks and the unread separator. ``peers``: the stored
    peers the entries name (authors, forward origins), by id. ``update_type`` is why
    this snapshot was emitted; it takes no part in comparisons.
    """

    peer_id: PeerId
    entries: tuple[Message, ...]
    anchor_index: MessageIndex
    hole_earlier: bool
    hole_later: bool
    earlier_id: MessageIndex | None
    later_id: MessageIndex | None
    is_loading: bool
    first_hole: MessageHistoryHolesEntry | None
    read_state: CombinedPeerReadState | None
    peers: Mapping[PeerId, Peer] = field(default_factory=dict)
    update_type: ViewUpdateType = field(default=ViewUpdateType.INITIAL, compare=False)


class _Anchor(NamedTuple):
    at: MessageIndex
    #: Where the walks start; the view is loading if a hole holds it.
    id: int
    #: Whether the anchor is the first unread message.
    unread: bool


class MutableMessageHistoryView(MutableView):
    def __init__(self, key: MessageHistoryViewKey, tx: Transaction) -> None:
        if key.count < 1:
            raise InvalidArgumentError(
                f"a history window needs a count of 1 or more, not {key.count}"
            )
        anchor = key.anchor
        position = anchor.index.id if anchor.index is not None else anchor.message_id
        if anchor.kind in (HistoryAnchorKind.INDEX, HistoryAnchorKind.MESSAGE_ID) and (
            position is None
            or (position.peer_id, position.namespace) != (key.peer_id, key.namespace)
        ):
            raise InvalidArgumentError(
                f"a history anchor must lie in the window's peer and namespace, not {anchor}"
            )
        self.key = key
        self._space = (
            MessageHistoryHoleSpace.tagged(key.tag)
            if key.tag
            else MessageHistoryHoleSpace.everywhere()
        )
        self._hole_key = HoleKey(key.peer_id, key.namespace, self._space)
        self._base_topics = frozenset(
            {topics.messages(key.peer_id), topics.read_state(key.peer_id)}
        )
        self._topics = self._base_topics
        self._named: frozenset[PeerId] = frozenset()
        self._named_counts: dict[int, int] = {}
        self._peers: dict[PeerId, Peer] = {}
        self._read_state: CombinedPeerReadState | None = None
        unread = self._load(tx)
        self.snapshot = self._render(ViewUpdateType.INITIAL)
        if unread:
            self.update_type = ViewUpdateType.initial_unread(self.snapshot.anchor_index)
        else:
            self.update_type = ViewUpdateType.INITIAL
        self.snapshot = replace(self.snapshot, update_type=self.update_type)

    @property
    def topics(self) -> frozenset[Topic]:
        return self._topics

    def first_hole(self) -> MessageHistoryHolesEntry | None:
        return self.snapshot.first_hole

    def immutable(self) -> MessageHistoryView:
        return self.snapshot

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        if self._hole_key in change.hole_operations:
            return self._reload(tx, ViewUpdateType.FILL_HOLE)
        peer_id = self.key.peer_id
        operations = change.message_operations.get(peer_id, ())
        read_state_changed = peer_id in change.updated_read_states
        renamed = not self._named.isdisjoint(change.updated_peers)
        if not (operations or read_state_changed or renamed):
            return False
        try:
            if self._sides is None or not self._anchor_stays(change, operations):
                raise _NeedsReload
            changed = renamed
            if read_state_changed:
                read_state = change.updated_read_states[peer_id]
                changed = changed or read_state != self._read_state
                self._read_state = read_state
            moved = False
            for operation in operations:
                moved = self._apply(operation) or moved
            if moved:
                for side in self._sides:
                    side.settle(partial(self._read_past, tx, side.older))
                self._follow_sides(tx)
        except _NeedsReload:
            return self._reload(tx, ViewUpdateType.GENERIC)
        if not (changed or moved):
            return False  # nothing the snapshot shows: no need to build one to compare
        if renamed:
            self._rename(change)
        return self._take(self._render(ViewUpdateType.GENERIC))

    def refresh_external(self, tx: Transaction) -> bool:
        return self._reload(tx, ViewUpdateType.GENERIC)

    def _reload(self, tx: Transaction, update_type: ViewUpdateType) -> bool:
        self._load(tx)
        return self._take(self._render(update_type))

    def _take(self, snapshot: MessageHistoryView) -> bool:
        """Keep ``snapshot`` if it differs from the current one; True if it did."""
        if snapshot == self.snapshot:
            return False
        self.update_type = snapshot.update_type
        self.snapshot = snapshot
        return True

    # -- replaying in place -------------------------------------------------------

    def _anchor_stays(
        self, change: ChangeRecord, operations: Sequence[MessageHistoryOperation]
    ) -> bool:
        """Whether the commit leaves the anchor where it was (cheap, conservative)."""
        kind = self.key.anchor.kind
        if kind in _POSITIONAL:
            return True
        namespace = self.key.namespace
        if kind is HistoryAnchorKind.MESSAGE_ID:
            if not self._anchor_stored:
                return not any(_namespaces(op) & {namespace} for op in operations)
            anchor_id = self._anchor.at.id
            return not any(anchor_id in _message_ids(op) for op in operations)
        # The first unread: the oldest incoming message newer than every read one.
        peer_id = self.key.peer_id
        read_states = change.updated_read_states
        if peer_id in read_states and _max_read(read_states[peer_id], namespace) != self._max_read:
            return False
        return all(self._keeps_first_unread(op) for op in operations)

    def _keeps_first_unread(self, operation: MessageHistoryOperation) -> bool:
        namespace, max_read = self.key.namespace, self._max_read
        if isinstance(operation, InsertMessage):
            if operation.index.id.namespace != namespace:
                return True
            after = operation.index
            unread = after.id.id > max_read and bool(operation.store.flags & _INCOMING)
        elif isinstance(operation, RemoveMessage):
            if operation.index.id.namespace != namespace:
                return True
            # Below the first unread the scan may now go further; with none, anywhere.
            return self._anchor.unread and operation.index.sort_key > self._anchor.at.sort_key
        else:
            before, after = operation.previous_index, operation.message.index
            if namespace not in (before.id.namespace, after.id.namespace):
                return True
            if before != after:
                return False
            unread = after.id.id > max_read and operation.message.incoming
        if self._anchor.unread:
            # Newer than the first unread and not read: the scan still reaches it.
            return after.sort_key > self._anchor.at.sort_key and after.id.id > max_read
        # No unread message: the scan still finds none unless this one is unread.
        return not unread

    def _apply(self, operation: MessageHistoryOperation) -> bool:
        """Apply one message operation to the sides; False if it cannot concern them."""
        namespace, tag = self.key.namespace, self.key.tag
        if isinstance(operation, InsertMessage):
            if operation.index.id.namespace == namespace and (
                not tag or operation.store.tags & tag
            ):
                return self._side(operation.index).insert(operation.message)
            return False
        if isinstance(operation, RemoveMessage):
            if operation.index.id.namespace == namespace and (not tag or operation.tags & tag):
                return self._side(operation.index).remove(operation.index)
            return False
        before, message = operation.previous_index, operation.message
        shown = message.id.namespace == namespace and (not tag or message.tags & tag)
        changed = False
        if before.id.namespace == namespace:
            side = self._side(before)
            if before == message.index and shown and side.replace(message):
                return True
            # In a tag window, the edit does not say whether the message had the tag.
            if not tag or side.may_hold(before):
                changed = side.remove(before)
        if shown:
            changed = self._side(message.index).insert(message) or changed
        return changed

    def _side(self, index: MessageIndex) -> HistorySide:
        assert self._sides is not None
        lower, upper = self._sides
        return lower if index.sort_key <= self._anchor.at.sort_key else upper

    def _read_past(
        self, tx: Transaction, older: bool, after: MessageIndex | None, limit: int
    ) -> list[Message]:
        """Up to ``limit`` messages past ``after`` (or the anchor), nearest first."""
        key = self.key
        if key.tag:
            raise _NeedsReload  # the transaction reads a tag's index only from an end
        if older:
            upper = after if after is not None else _successor(self._anchor.at)
            return tx.get_messages(
                key.peer_id, key.namespace, upper=upper, limit=limit, newest_first=True
            )
        lower = _successor(after if after is not None else self._anchor.at)
        if lower is None:
            return []
        return tx.get_messages(key.peer_id, key.namespace, lower=lower, limit=limit)

    # -- the peers the window names --------------------------------------------------

    def _follow_sides(self, tx: Transaction) -> None:
        """Count the peers named by the messages that entered or left the sides."""
        counts, added, dropped = self._named_counts, False, False
        assert self._sides is not None
        for side in self._sides:
            for message in side.entered:
                for id_ in _names(message):
                    seen = counts.get(id_, 0)
                    counts[id_] = seen + 1
                    if not seen:
                        added = True
                        peer = tx.get_peer(PeerId(id_))
                        if peer is not None:
                            self._peers[PeerId(id_)] = peer
            for message in side.left:
                for id_ in _names(message):
                    seen = counts[id_] - 1
                    if seen:
                        counts[id_] = seen
                    else:
                        del counts[id_]
                        dropped = True
                        self._peers.pop(PeerId(id_), None)
            side.entered.clear()
            side.left.clear()
        if added or dropped:
            self._follow_peers()

    def _follow_peers(self) -> None:
        """Watch the peers the window names, stored or not yet: a rename re-emits it."""
        self._named = frozenset(PeerId(i) for i in self._named_counts)
        self._topics = self._base_topics | {topics.peer(peer_id) for peer_id in self._named}

    def _rename(self, change: ChangeRecord) -> None:
        for peer_id in self._named.intersection(change.updated_peers):
            peer = change.updated_peers[peer_id]
            if peer is None:
                self._peers.pop(peer_id, None)
            else:
                self._peers[peer_id] = peer

    # -- the snapshot ------------------------------------------------------------------

    def _render(self, update_type: ViewUpdateType) -> MessageHistoryView:
        key, anchor = self.key, self._anchor
        peers = self.snapshot.peers if self._peers_unchanged() else dict(self._peers)
        if self._sides is None:
            assert self._loading is not None
            return MessageHistoryView(
                key.peer_id,
                (),
                anchor.at,
                True,
                True,
                None,
                None,
                True,
                self._loading,
                self._read_state,
                {},
                update_type,
            )
        lower, upper = self._sides
        lower_hole, upper_hole = lower.shown_hole, upper.shown_hole
        first_hole = None
        # The hole nearest the anchor: fewer entries in between; the older side on a tie.
        if lower_hole is not None and (upper_hole is None or lower.taken <= upper.taken):
            first_hole = self._hole_entry(lower_hole, HoleDirection.OLDER, lower_hole.upper)
        elif upper_hole is not None:
            first_hole = self._hole_entry(upper_hole, HoleDirection.NEWER, upper_hole.lower)
        return MessageHistoryView(
            key.peer_id,
            (*lower.messages, *upper.messages),
            anchor.at,
            lower_hole is not None,
            upper_hole is not None,
            lower.shown_beyond,
            upper.shown_beyond,
            False,
            first_hole,
            self._read_state,
            peers,
            update_type,
        )

    def _peers_unchanged(self) -> bool:
        snapshot: MessageHistoryView | None = getattr(self, "snapshot", None)
        return snapshot is not None and snapshot.peers == self._peers

    # -- loading ----------------------------------------------------------------

    def _load(self, tx: Transaction) -> bool:
        """Read the window as the tables hold it now; True if it opened at the first unread."""
        key = self.key
        self._read_state = read_state = tx.get_read_state(key.peer_id)
        self._max_read = _max_read(read_state, key.namespace)
        self._anchor = anchor = self._resolve_anchor(tx, read_state)
        holes = tx.get_holes(key.peer_id, key.namespace, self._space)
        around = nearest_hole(holes, anchor.id, anchor.id, highest=False)
        self._sides: tuple[HistorySide, HistorySide] | None = None
        self._loading: MessageHistoryHolesEntry | None = None
        entries: list[Message] = []
        if around is not None:
            self._loading = self._hole_entry(around, HoleDirection.AROUND, anchor.id)
        else:
            older, newer = self._candidates(tx, anchor.at)
            self._sides = (
                walk(older, holes, anchor.id, key.count, older=True),
                walk(newer, holes, anchor.id, key.count, older=False),
            )
            entries = [*self._sides[0].messages, *self._sides[1].messages]
            for side in self._sides:
                side.entered.clear()
        self._named_counts = {}
        for message in entries:
            for id_ in _names(message):
                self._named_counts[id_] = self._named_counts.get(id_, 0) + 1
        self._peers = _named_peers(tx, self._named_counts)
        self._follow_peers()
        return anchor.unread

    def _hole_entry(
        self, hole: ClosedRange, direction: HoleDirection, anchor_id: int
    ) -> MessageHistoryHolesEntry:
        """What the filler should fetch; a directional fetch starts at the hole's end
        next to the window, so views sharing that hole ask for the same thing."""
        key = self.key
        return MessageHistoryHolesEntry(
            key.peer_id, key.namespace, self._space, hole, direction, anchor_id, key.count
        )

    def _resolve_anchor(self, tx: Transaction, read_state: CombinedPeerReadState | None) -> _Anchor:
        key = self.key
        anchor, peer_id, namespace = key.anchor, key.peer_id, key.namespace
        if anchor.kind is HistoryAnchorKind.LOWER_BOUND:
            return _Anchor(MessageIndex.absolute_lower_bound(peer_id, namespace), 1, False)
        if anchor.kind is HistoryAnchorKind.INDEX:
            assert anchor.index is not None
            return _Anchor(anchor.index, anchor.index.id.id, False)
        if anchor.kind is HistoryAnchorKind.MESSAGE_ID:
            assert anchor.message_id is not None
            message_id = anchor.message_id
            index = tx.get_message_index(message_id)
            self._anchor_stored = index is not None
            if index is None:
                # Not stored (deleted, or in a hole): where it would sit, just after
                # the newest message with a lower id.
                below = next(
                    (m for m in self._newest_first(tx) if m.index.id.id < message_id.id), None
                )
                timestamp = MIN_TIMESTAMP if below is None else below.index.timestamp
                index = MessageIndex(message_id, timestamp)
            return _Anchor(index, message_id.id, False)
        if anchor.kind is HistoryAnchorKind.FIRST_UNREAD:
            unread = self._first_unread(tx, read_state)
            if unread is not None:
                return _Anchor(unread, unread.id.id, True)
        return _Anchor(MessageIndex.absolute_upper_bound(peer_id, namespace), MAX_MESSAGE_ID, False)

    def _first_unread(
        self, tx: Transaction, read_state: CombinedPeerReadState | None
    ) -> MessageIndex | None:
        """The oldest incoming message newer than every message at or below the read id."""
        max_read = _max_read(read_state, self.key.namespace)
        found = None
        for message in self._newest_first(tx):
            if message.index.id.id <= max_read:
                break
            if message.incoming:
                found = message.index
        return found

    def _newest_first(self, tx: Transaction) -> Iterator[Message]:
        """The whole (peer, namespace) history, newest first, read a page at a time."""
        upper = None
        while True:
            page = tx.get_messages(
                self.key.peer_id,
                self.key.namespace,
                upper=upper,
                limit=_SCAN_PAGE,
                newest_first=True,
            )
            yield from page
            if len(page) < _SCAN_PAGE:
                return
            upper = page[-1].index

    def _candidates(
        self, tx: Transaction, anchor: MessageIndex
    ) -> tuple[list[Message], list[Message]]:
        """Up to ``count + 1`` messages on each side of the anchor, nearest first:
        at or below it, and above it."""
        key = self.key
        limit = key.count + 1
        split = _successor(anchor)
        if key.tag:
            if split is None:  # the upper bound: the newest tagged messages are enough
                newest = tx.get_tagged_message_indices(
                    key.peer_id, key.tag, key.namespace, limit=limit
                )
                return self._fetch(tx, newest), []
            indices = tx.get_tagged_message_indices(
                key.peer_id, key.tag, key.namespace, newest_first=False
            )
            position = bisect_left(indices, split.sort_key, key=_sort_key)
            older_indices = indices[max(0, position - limit) : position][::-1]
            return self._fetch(tx, older_indices), self._fetch(
                tx, indices[position : position + limit]
            )
        older = tx.get_messages(
            key.peer_id, key.namespace, upper=split, limit=limit, newest_first=True
        )
        if split is None:
            return older, []
        return older, tx.get_messages(key.peer_id, key.namespace, lower=split, limit=limit)

    @staticmethod
    def _fetch(tx: Transaction, indices: Sequence[MessageIndex]) -> list[Message]:
        messages = []
        for index in indices:
            message = tx.get_message(index.id)
            if message is None or message.index != index:
                raise CorruptValueError(f"the tag index lists {index}, which is not stored")
            messages.append(message)
        return messages


def _sort_key(index: MessageIndex) -> tuple[int, int, int, int]:
    return index.sort_key


def _successor(index: MessageIndex) -> MessageIndex | None:
    """The smallest index after ``index`` in one (peer, namespace): the split point
    between the sides of the window (``None`` past the upper bound)."""
    message_id, timestamp = index
    if message_id.id < INT32_MAX:
        return MessageIndex(message_id._replace(id=message_id.id + 1), timestamp)
    if timestamp < MAX_TIMESTAMP:
        return MessageIndex(message_id._replace(id=INT32_MIN), timestamp + 1)
    return None


def _names(message: Message) -> tuple[int, ...]:
    """The peers a message names: its author and where a forward came from."""
    author, forward = message.author_id, message.forward_info
    if forward is None:
        return () if author is None else (author,)
    if author is None or author == forward.author_id:
        return (forward.author_id,)
    return (author, forward.author_id)


def _named_peers(tx: Transaction, named: Iterable[int]) -> dict[PeerId, Peer]:
    """The stored peers among ``named``."""
    peers = {}
    for peer_id in sorted(named):
        peer = tx.get_peer(PeerId(peer_id))
        if peer is not None:
            peers[PeerId(peer_id)] = peer
    return peers


def _max_read(read_state: CombinedPeerReadState | None, namespace: int) -> int:
    state = None if read_state is None else read_state.get(namespace)
    return 0 if state is None else state.max_incoming_read_id


def _namespaces(operation: MessageHistoryOperation) -> set[int]:
    if isinstance(operation, UpdateMessage):
        return {operation.previous_index.id.namespace, operation.message.id.namespace}
    return {operation.index.id.namespace}


def _message_ids(operation: MessageHistoryOperation) -> tuple[MessageId, ...]:
    if isinstance(operation, UpdateMessage):
        return (operation.previous_index.id, operation.message.id)
    return (operation.index.id,)
