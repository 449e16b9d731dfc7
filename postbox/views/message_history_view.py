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

A snapshot is a function of the key and the tables alone: ``replay`` reloads the
window when a commit touched this chat's messages (in the view's namespace and
tag), its holes (namespace and space), its read state or a peer its messages name, and
emits only if the result differs. A live view therefore always equals one opened fresh: a window
at the upper bound slides with each new message, one at an index stays put, and
one at the first unread message follows the read state.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from postbox.change_record import InsertMessage, RemoveMessage
from postbox.errors import CorruptValueError, InvalidArgumentError
from postbox.holes import ClosedRange, HoleKey, MessageHistoryHoleSpace
from postbox.ids import (
    INT32_MAX,
    INT32_MIN,
    MAX_MESSAGE_ID,
    MAX_TIMESTAMP,
    MIN_TIMESTAMP,
    MessageIndex,
    PeerId,
)
from postbox.message import Message
from postbox.peer import Peer
from postbox.read_state import CombinedPeerReadState
from postbox.view_keys import HistoryAnchorKind, MessageHistoryViewKey
from postbox.views import topics
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


class _Side(NamedTuple):
    """One side of the window, walked away from the anchor."""

    taken: int
    hole: ClosedRange | None
    beyond: MessageIndex | None


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
        # A message id or the first unread is looked up in the whole history, so
        # a message without the tag can move such an anchor.
        self._tag_filter = key.tag if key.anchor.kind in _POSITIONAL else 0
        self.snapshot, unread = self._load(tx)
        self._follow_peers()
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
        holes = self._hole_key in change.hole_operations
        if not (
            holes
            or self.key.peer_id in change.updated_read_states
            or self._concerns_messages(change)
            or not self._named.isdisjoint(change.updated_peers)
        ):
            return False
        return self._take(tx, ViewUpdateType.FILL_HOLE if holes else ViewUpdateType.GENERIC)

    def refresh_external(self, tx: Transaction) -> bool:
        return self._take(tx, ViewUpdateType.GENERIC)

    def _take(self, tx: Transaction, update_type: ViewUpdateType) -> bool:
        snapshot, _ = self._load(tx)
        if snapshot == self.snapshot:
            return False
        self.update_type = update_type
        self.snapshot = replace(snapshot, update_type=update_type)
        self._follow_peers()
        return True

    def _follow_peers(self) -> None:
        """Watch the peers the window names, stored or not yet: a rename re-emits it."""
        self._named = frozenset(PeerId(i) for i in _named_ids(self.snapshot.entries))
        self._topics = self._base_topics | {topics.peer(peer_id) for peer_id in self._named}

    def _concerns_messages(self, change: ChangeRecord) -> bool:
        namespace, tag = self.key.namespace, self._tag_filter
        for operation in change.message_operations.get(self.key.peer_id, ()):
            if isinstance(operation, InsertMessage):
                if operation.index.id.namespace == namespace and (
                    not tag or operation.store.tags & tag
                ):
                    return True
            elif isinstance(operation, RemoveMessage):
                if operation.index.id.namespace == namespace and (not tag or operation.tags & tag):
                    return True
            # An edit may have dropped the tag; the operation does not say which it had.
            elif namespace in (
                operation.previous_index.id.namespace,
                operation.message.id.namespace,
            ):
                return True
        return False

    # -- loading ----------------------------------------------------------------

    def _load(self, tx: Transaction) -> tuple[MessageHistoryView, bool]:
        """The snapshot as the tables hold it now, and whether it opened at the first unread."""
        key = self.key
        read_state = tx.get_read_state(key.peer_id)
        anchor = self._resolve_anchor(tx, read_state)
        holes = tx.get_holes(key.peer_id, key.namespace, self._space)
        around = _nearest_hole(holes, anchor.id, anchor.id, highest=False)
        if around is not None:
            wanted = self._hole_entry(around, HoleDirection.AROUND, anchor.id)
            view = MessageHistoryView(
                key.peer_id, (), anchor.at, True, True, None, None, True, wanted, read_state
            )
            return view, anchor.unread
        older, newer = self._candidates(tx, anchor.at)
        lower = _walk(older, holes, anchor.id, key.count, older=True)
        upper = _walk(newer, holes, anchor.id, key.count, older=False)
        first_hole = None
        # The hole nearest the anchor: fewer entries in between; the older side on a tie.
        if lower.hole is not None and (upper.hole is None or lower.taken <= upper.taken):
            first_hole = self._hole_entry(lower.hole, HoleDirection.OLDER, lower.hole.upper)
        elif upper.hole is not None:
            first_hole = self._hole_entry(upper.hole, HoleDirection.NEWER, upper.hole.lower)
        entries = (*reversed(older[: lower.taken]), *newer[: upper.taken])
        view = MessageHistoryView(
            key.peer_id,
            entries,
            anchor.at,
            lower.hole is not None,
            upper.hole is not None,
            lower.beyond,
            upper.beyond,
            False,
            first_hole,
            read_state,
            _named_peers(tx, entries),
        )
        return view, anchor.unread

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
        state = None if read_state is None else read_state.get(self.key.namespace)
        max_read = 0 if state is None else state.max_incoming_read_id
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


def _walk(
    messages: Sequence[Message],
    holes: Sequence[ClosedRange],
    start: int,
    count: int,
    *,
    older: bool,
) -> _Side:
    """Take messages away from the anchor until ``count``, a hole, or the end.

    ``start`` (the anchor's id) is in no hole, and neither is any message taken,
    so a hole lies between the last taken id and the next message exactly when
    the closed range between the two ids overlaps one.
    """
    previous = start
    if messages:
        # Ids need not follow the key order (timestamps do): a hole can only lie between
        # two steps if it overlaps the span of every id walked over.
        ids = [message.index.id.id for message in messages]
        if _nearest_hole(holes, min(start, *ids), max(start, *ids), highest=older) is None:
            if len(messages) > count:
                return _Side(count, None, messages[count].index)
            return _past_the_end(holes, len(messages), ids[-1], older=older)
    for taken, message in enumerate(messages):
        id_ = message.index.id.id
        hole = _nearest_hole(holes, min(previous, id_), max(previous, id_), highest=older)
        if hole is not None:
            return _Side(taken, hole, None)
        if taken == count:
            return _Side(taken, None, message.index)
        previous = id_
    # Fewer than count + 1 messages, or the loop would have returned.
    return _past_the_end(holes, len(messages), previous, older=older)


def _past_the_end(holes: Sequence[ClosedRange], taken: int, previous: int, *, older: bool) -> _Side:
    """Every message on this side is taken: the nearest hole up to the end of the id space."""
    if older:
        return _Side(taken, _nearest_hole(holes, 1, previous, highest=True), None)
    return _Side(taken, _nearest_hole(holes, previous, MAX_MESSAGE_ID, highest=False), None)


def _named_ids(entries: Sequence[Message]) -> set[int]:
    """The peers ``entries`` name: their authors and where forwards came from."""
    named: set[int] = set()
    for message in entries:
        if message.author_id is not None:
            named.add(message.author_id)
        if message.forward_info is not None:
            named.add(message.forward_info.author_id)
    return named


def _named_peers(tx: Transaction, entries: Sequence[Message]) -> dict[PeerId, Peer]:
    """The stored peers among those ``entries`` name."""
    peers = {}
    for peer_id in sorted(_named_ids(entries)):
        peer = tx.get_peer(PeerId(peer_id))
        if peer is not None:
            peers[PeerId(peer_id)] = peer
    return peers


def _nearest_hole(
    holes: Sequence[ClosedRange], lower: int, upper: int, *, highest: bool
) -> ClosedRange | None:
    """Of the sorted, disjoint ``holes`` overlapping ``lower..upper``, the highest or
    the lowest; ``None`` if none does."""
    if lower > upper:
        return None
    first = bisect_right(holes, lower - 1, key=_upper_end)
    last = bisect_right(holes, upper, key=_lower_end)
    if first >= last:
        return None
    return holes[last - 1] if highest else holes[first]


def _upper_end(hole: ClosedRange) -> int:
    return hole.upper


def _lower_end(hole: ClosedRange) -> int:
    return hole.lower
