"""One side of a history window, kept up to date message by message.

A history window is two walks away from its anchor (``message_history_view``): the
older side and the newer side, each taking up to ``count`` messages and stopping at
the first hole between two consecutive ones. ``HistorySide`` holds the result of one
walk and applies a commit's inserted and removed messages to it in place: the cost of
a change is a bisection and the hole checks of the two pairs of neighbours it makes,
whatever the window's size. Where the result cannot be known from what the side holds
(a new pair of neighbours overlaps a hole, the walk stopped at a hole before a message
it never read), the side raises ``_NeedsReload`` and the view reads its window again.

The rules a walk follows, so a side updated in place equals a side walked afresh:
walking from the anchor's id, each message is taken unless a hole overlaps the closed
range between its id and the previous one; after ``count`` messages the next one is
the side's ``beyond``; when every message is taken, the side reports the nearest hole
between the last id and the end of the id space.
"""

from __future__ import annotations

import enum
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import NamedTuple

from postbox.holes import ClosedRange
from postbox.ids import MAX_MESSAGE_ID, MessageIndex
from postbox.message import Message

__all__ = ["HistorySide", "Reach", "nearest_hole", "walk"]

SortKey = tuple[int, int, int, int]
#: Reads up to ``limit`` messages past ``after`` (the anchor if ``None``), nearest first.
Fetch = Callable[[MessageIndex | None, int], Sequence[Message]]


class _NeedsReload(Exception):  # noqa: N818 - control flow, not an error
    """The window cannot be updated in place; read it again from the tables."""


class Reach(enum.Enum):
    """How a side's walk ended, and so how far the side knows the history."""

    #: ``count`` messages taken; ``beyond`` is the next one, nothing lies between.
    COUNT = "count"
    #: A hole lies between the farthest taken message and the next one (not read).
    HOLE = "hole"
    #: Every message on this side is taken; ``hole`` is the nearest past the last.
    END = "end"
    #: Transient: what lies past the farthest taken message is to be read again.
    OPEN = "open"


def nearest_hole(
    holes: Sequence[ClosedRange], lower: int, upper: int, *, highest: bool
) -> ClosedRange | None:
    """Of the sorted, disjoint ``holes`` overlapping ``lower..upper``, the highest or
    the lowest; ``None`` if none does."""
    if lower > upper or not holes:
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


class HistorySide:
    """The messages one side of a window took, oldest first whichever the side.

    ``entered`` and ``left`` collect the messages that joined or left the side since
    the owner last drained them (the view follows the peers they name).
    """

    __slots__ = (
        "beyond",
        "count",
        "entered",
        "hole",
        "holes",
        "keys",
        "left",
        "messages",
        "older",
        "reach",
        "start",
    )

    def __init__(
        self,
        *,
        older: bool,
        count: int,
        start: int,
        holes: Sequence[ClosedRange],
        nearest_first: Sequence[Message],
        reach: Reach,
        beyond: MessageIndex | None,
        hole: ClosedRange | None,
    ) -> None:
        self.older = older
        self.count = count
        #: The anchor's id: where the walk starts.
        self.start = start
        self.holes = holes
        self.messages = list(reversed(nearest_first)) if older else list(nearest_first)
        self.keys: list[SortKey] = [m.index.sort_key for m in self.messages]
        self.reach = reach
        self.beyond = beyond
        self.hole = hole
        self.entered: list[Message] = []
        self.left: list[Message] = []

    # -- what the snapshot shows -----------------------------------------------

    @property
    def taken(self) -> int:
        return len(self.messages)

    @property
    def shown_hole(self) -> ClosedRange | None:
        return self.hole if self.reach in (Reach.HOLE, Reach.END) else None

    @property
    def shown_beyond(self) -> MessageIndex | None:
        return self.beyond if self.reach is Reach.COUNT else None

    # -- positions ---------------------------------------------------------------

    def _farther(self, a: SortKey, b: SortKey) -> bool:
        """Whether ``a`` lies farther from the anchor than ``b``."""
        return a < b if self.older else a > b

    def _past_farthest(self, position: int) -> bool:
        """Whether a key bisected to ``position`` lies past every taken message."""
        return position == 0 if self.older else position == len(self.keys)

    def _farthest_id(self) -> int:
        if not self.messages:
            return self.start
        return (self.messages[0] if self.older else self.messages[-1]).index.id.id

    def _farthest_index(self) -> MessageIndex | None:
        if not self.messages:
            return None
        return (self.messages[0] if self.older else self.messages[-1]).index

    def _hole_between(self, a: int, b: int) -> ClosedRange | None:
        return nearest_hole(self.holes, min(a, b), max(a, b), highest=self.older)

    def holds(self, index: MessageIndex) -> bool:
        """Whether the message at ``index`` is taken."""
        key = index.sort_key
        position = bisect_left(self.keys, key)
        return position < len(self.keys) and self.keys[position] == key

    def may_hold(self, index: MessageIndex) -> bool:
        """False when ``index`` lies where the side knows every message and takes none
        at ``index``: a message there is not in the side's history (a tag window)."""
        key = index.sort_key
        position = bisect_left(self.keys, key)
        if position < len(self.keys) and self.keys[position] == key:
            return True
        if not self._past_farthest(position):
            return False
        if self.reach is Reach.END:
            return False
        if self.reach is Reach.COUNT:
            assert self.beyond is not None
            return not self._farther(self.beyond.sort_key, key)
        return True

    # -- changes -----------------------------------------------------------------

    def insert(self, message: Message) -> bool:
        """A message of the side's history was stored; True if the side may differ."""
        key = message.index.sort_key
        keys = self.keys
        position = bisect_left(keys, key)
        if position < len(keys) and keys[position] == key:
            raise _NeedsReload
        past = self._past_farthest(position)
        if past:
            if self.reach is Reach.COUNT:
                assert self.beyond is not None
                if self._farther(key, self.beyond.sort_key):
                    return False
            elif self.reach is Reach.OPEN:
                return False  # read again when the side is refilled
            elif self.reach is Reach.HOLE:
                raise _NeedsReload
        id_ = message.index.id.id
        if self.older:
            nearer = self.start if position == len(keys) else self.messages[position].index.id.id
            farther = None if position == 0 else self.messages[position - 1].index.id.id
        else:
            nearer = self.start if position == 0 else self.messages[position - 1].index.id.id
            farther = None if position == len(keys) else self.messages[position].index.id.id
        if farther is None and self.reach is Reach.COUNT:
            assert self.beyond is not None
            farther = self.beyond.id.id
        if self._hole_between(nearer, id_) is not None:
            raise _NeedsReload
        if farther is not None and self._hole_between(id_, farther) is not None:
            raise _NeedsReload
        keys.insert(position, key)
        self.messages.insert(position, message)
        self.entered.append(message)
        return True

    def remove(self, index: MessageIndex) -> bool:
        """The message at ``index`` of the side's history was deleted."""
        key = index.sort_key
        keys = self.keys
        position = bisect_left(keys, key)
        if position < len(keys) and keys[position] == key:
            farthest = position == (0 if self.older else len(keys) - 1)
            if farthest and self.reach is Reach.HOLE:
                raise _NeedsReload  # the walk now meets the hole from another message
            del keys[position]
            self.left.append(self.messages.pop(position))
            if self.reach is Reach.COUNT:
                self.reach, self.beyond = Reach.OPEN, None
            return True
        if not self._past_farthest(position):
            raise _NeedsReload  # between two taken messages: the side was not the tables'
        if self.reach is Reach.COUNT:
            assert self.beyond is not None
            if key == self.beyond.sort_key:
                self.reach, self.beyond = Reach.OPEN, None
                return True
            if self._farther(key, self.beyond.sort_key):
                return False
            raise _NeedsReload
        if self.reach is Reach.OPEN:
            return False
        raise _NeedsReload

    def replace(self, message: Message) -> bool:
        """A taken message changed without moving; False if it is not taken."""
        key = message.index.sort_key
        position = bisect_left(self.keys, key)
        if position == len(self.keys) or self.keys[position] != key:
            return False
        self.left.append(self.messages[position])
        self.messages[position] = message
        self.entered.append(message)
        return True

    def settle(self, fetch: Fetch) -> None:
        """Cut the side back to ``count``, read what an opened side lacks, and find
        the hole past its end: the side is again what a walk would give."""
        messages, count = self.messages, self.count
        excess = len(messages) - count
        if excess > 0:
            if self.older:
                dropped, beyond = messages[:excess], messages[excess - 1]
                del messages[:excess], self.keys[:excess]
            else:
                dropped, beyond = messages[count:], messages[count]
                del messages[count:], self.keys[count:]
            self.left.extend(dropped)
            self.reach, self.beyond, self.hole = Reach.COUNT, beyond.index, None
        elif self.reach is Reach.OPEN:
            self._refill(fetch)
        if self.reach is Reach.END:
            last = self._farthest_id()
            if self.older:
                self.hole = nearest_hole(self.holes, 1, last, highest=True)
            else:
                self.hole = nearest_hole(self.holes, last, MAX_MESSAGE_ID, highest=False)

    def _refill(self, fetch: Fetch) -> None:
        need = self.count + 1 - len(self.messages)
        previous = self._farthest_id()
        self.reach, self.beyond, self.hole = Reach.END, None, None
        for message in fetch(self._farthest_index(), need):
            id_ = message.index.id.id
            hole = self._hole_between(previous, id_)
            if hole is not None:
                self.reach, self.hole = Reach.HOLE, hole
                return
            if len(self.messages) == self.count:
                self.reach, self.beyond = Reach.COUNT, message.index
                return
            if self.older:
                self.messages.insert(0, message)
                self.keys.insert(0, message.index.sort_key)
            else:
                self.messages.append(message)
                self.keys.append(message.index.sort_key)
            self.entered.append(message)
            previous = id_


def walk(
    candidates: Sequence[Message],
    holes: Sequence[ClosedRange],
    start: int,
    count: int,
    *,
    older: bool,
) -> HistorySide:
    """Walk ``candidates`` (up to ``count + 1`` messages on one side, nearest first)
    away from the anchor's id ``start``: the side as a window opened fresh has it."""
    return _as_side(
        _walk(candidates, holes, start, count, older=older),
        candidates,
        holes,
        count,
        start,
        older=older,
    )


class _Side(NamedTuple):
    """One side of the window, walked away from the anchor."""

    taken: int
    hole: ClosedRange | None
    beyond: MessageIndex | None


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
        if nearest_hole(holes, min(start, *ids), max(start, *ids), highest=older) is None:
            if len(messages) > count:
                return _Side(count, None, messages[count].index)
            return _past_the_end(holes, len(messages), ids[-1], older=older)
    for taken, message in enumerate(messages):
        id_ = message.index.id.id
        hole = nearest_hole(holes, min(previous, id_), max(previous, id_), highest=older)
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
        return _Side(taken, nearest_hole(holes, 1, previous, highest=True), None)
    return _Side(taken, nearest_hole(holes, previous, MAX_MESSAGE_ID, highest=False), None)


def _as_side(
    side: _Side,
    candidates: Sequence[Message],
    holes: Sequence[ClosedRange],
    count: int,
    start: int,
    *,
    older: bool,
) -> HistorySide:
    """A walk's result as a side the view can update in place."""
    if side.beyond is not None:
        reach = Reach.COUNT
    elif side.taken < len(candidates):
        reach = Reach.HOLE
    else:
        reach = Reach.END
    return HistorySide(
        older=older,
        count=count,
        start=start,
        holes=holes,
        nearest_first=candidates[: side.taken],
        reach=reach,
        beyond=side.beyond,
        hole=side.hole,
    )
