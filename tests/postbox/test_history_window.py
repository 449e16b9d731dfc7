"""One side of a history window, updated in place, equals the side walked afresh.

Pure logic, no database: a history is a sorted list of messages and a set of holes;
a side is walked over it, the history changes by one message, and the side that took
the change (reading past its end from the new history when it asks) must equal a walk
over the new history, unless it said it cannot know (``_NeedsReload``).
"""

from __future__ import annotations

from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import ClosedRange, Message, MessageId, MessageIndex, PeerId, PeerNamespace
from postbox.holes import normalize
from postbox.views.history_window import HistorySide, Reach, _NeedsReload, walk

PEER = PeerId.make(PeerNamespace.USER, 1)
#: The anchor sits between the two sides: older messages at or below it, newer above.
ANCHOR = MessageIndex(MessageId(PEER, 0, 20), 120)


def message(id_: int, shift: int) -> Message:
    return Message(MessageIndex(MessageId(PEER, 0, id_), 100 + id_ + shift), 0, 0, None, "")


def on_side(history: list[Message], *, older: bool) -> list[Message]:
    """The side's candidates, nearest the anchor first."""
    key = ANCHOR.sort_key
    keys = [m.index.sort_key for m in history]
    if older:
        return history[: bisect_right(keys, key)][::-1]
    return history[bisect_right(keys, key) :]


def fresh(history: list[Message], holes: list[ClosedRange], count: int, older: bool) -> HistorySide:
    candidates = on_side(history, older=older)[: count + 1]
    return walk(candidates, holes, ANCHOR.id.id, count, older=older)


def shown(side: HistorySide) -> tuple[object, ...]:
    return (
        [m.index for m in side.messages],
        side.shown_hole,
        side.shown_beyond,
        side.reach is Reach.COUNT,
    )


def reader(history: list[Message], older: bool) -> object:
    def read(after: MessageIndex | None, limit: int) -> list[Message]:
        candidates = on_side(history, older=older)
        if after is not None:
            keys = [m.index.sort_key for m in candidates]
            # Nearest first: older candidates fall in key order, newer ones rise.
            if older:
                position = next((i for i, k in enumerate(keys) if k < after.sort_key), len(keys))
            else:
                position = bisect_right(keys, after.sort_key)
            candidates = candidates[position:]
        return candidates[:limit]

    return read


messages = st.builds(message, st.integers(1, 40), st.sampled_from([0, 0, 0, -4, 9]))
changes = st.one_of(
    messages.map(lambda m: ("insert", m)), st.integers(0, 30).map(lambda i: ("remove", i))
)


def _sorted(ms: list[Message]) -> list[Message]:
    unique = {m.index.id: m for m in ms}
    return sorted(unique.values(), key=lambda m: m.index.sort_key)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(messages, max_size=25),
    st.lists(st.tuples(st.integers(1, 40), st.integers(0, 3)), max_size=3),
    st.integers(1, 5),
    st.booleans(),
    st.lists(changes, min_size=1, max_size=4),
)
def test_a_side_updated_in_place_equals_a_fresh_walk(
    start: list[Message],
    hole_ranges: list[tuple[int, int]],
    count: int,
    older: bool,
    edits: list[tuple[str, object]],
) -> None:
    holes = normalize(ClosedRange(lo, lo + n) for lo, n in hole_ranges if not lo <= 20 <= lo + n)
    history = _sorted(start)
    side = fresh(history, holes, count, older)
    for kind, value in edits:
        if kind == "insert":
            assert isinstance(value, Message)
            if any(m.index.id == value.index.id for m in history):
                continue
            history = _sorted([*history, value])
            if (value.index.sort_key <= ANCHOR.sort_key) != older:
                continue  # the other side's
            try:
                side.insert(value)
            except _NeedsReload:
                return
        else:
            assert isinstance(value, int)
            if not history:
                continue
            gone = history[value % len(history)]
            history = [m for m in history if m is not gone]
            if (gone.index.sort_key <= ANCHOR.sort_key) != older:
                continue
            try:
                side.remove(gone.index)
            except _NeedsReload:
                return
    try:
        side.settle(reader(history, older))  # type: ignore[arg-type]
    except _NeedsReload:
        return
    assert shown(side) == shown(fresh(history, holes, count, older))


def test_a_new_message_at_the_near_end_slides_a_full_side() -> None:
    history = [message(i, 0) for i in range(1, 20)]
    side = fresh(history, [], 3, True)
    assert side.insert(message(20, 0))
    side.settle(reader([*history, message(20, 0)], True))  # type: ignore[arg-type]
    assert [m.index.id.id for m in side.messages] == [18, 19, 20]
    assert side.shown_beyond == message(17, 0).index


def test_a_new_pair_across_a_hole_asks_for_a_reload() -> None:
    history = [message(i, 0) for i in (10, 11, 12)]
    side = fresh(history, [ClosedRange(5, 6)], 3, True)
    with pytest.raises(_NeedsReload):
        side.insert(message(4, 0))
