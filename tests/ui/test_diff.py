"""Row diffs between snapshots, without Qt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ui.diff import Change, Insert, Move, Remove, apply_steps, diff_rows


def key(item):
    return item[0]


@st.composite
def two_snapshots(draw):
    keys = draw(st.lists(st.integers(0, 40), unique=True, max_size=30))
    old_keys = draw(st.permutations(keys))
    old = [(k, draw(st.integers(0, 2))) for k in old_keys[: draw(st.integers(0, len(keys)))]]
    extra = draw(st.lists(st.integers(41, 60), unique=True, max_size=5))
    survivors = [k for k, _ in old if draw(st.booleans())]
    new_keys = draw(st.permutations(survivors + extra))
    new = [(k, draw(st.integers(0, 2))) for k in new_keys]
    return old, new


@given(two_snapshots())
def test_applying_the_steps_gives_the_new_snapshot(pair) -> None:
    old, new = pair
    steps = diff_rows(old, new, key)
    assert apply_steps(old, steps) == new
    # Removals come first and bottom up, then moves and insertions, then changes.
    kinds = [Change if isinstance(step, Change) else type(step) for step in steps]
    order = {Remove: 0, Move: 1, Insert: 1, Change: 2}
    assert [order[k] for k in kinds] == sorted(order[k] for k in kinds)
    removes = [s.row for s in steps if isinstance(s, Remove)]
    assert removes == sorted(removes, reverse=True)
    # Every move goes up, and no row that stays is removed and inserted again.
    assert all(s.to < s.row for s in steps if isinstance(s, Move))
    kept = {key(item) for item in old} & {key(item) for item in new}
    inserted = {key(item) for s in steps if isinstance(s, Insert) for item in s.items}
    assert not kept & inserted


def test_a_chat_moving_to_the_top_is_one_move_and_its_change() -> None:
    old = [("a", 1), ("b", 1), ("c", 1), ("d", 1)]
    new = [("c", 2), ("a", 1), ("b", 1), ("d", 1)]
    assert diff_rows(old, new, key) == [Move(2, 1, 0), Change(0, ("c", 2))]


def test_rows_moving_together_are_one_move() -> None:
    old = [(1, ""), (2, ""), (3, ""), (4, "")]
    new = [(3, ""), (4, ""), (1, ""), (2, "")]
    assert diff_rows(old, new, key) == [Move(2, 2, 0)]


def test_a_live_message_at_the_end_is_one_insertion() -> None:
    old = [(1, "x"), (2, "y")]
    assert diff_rows(old, [*old, (3, "z")], key) == [Insert(2, ((3, "z"),))]


def test_an_edit_is_one_change() -> None:
    assert diff_rows([(1, "x"), (2, "y")], [(1, "x"), (2, "Y")], key) == [Change(1, (2, "Y"))]


def test_older_rows_above_are_one_insertion_at_the_top() -> None:
    old = [(5, ""), (6, "")]
    new = [(3, ""), (4, ""), (5, ""), (6, "")]
    assert diff_rows(old, new, key) == [Insert(0, ((3, ""), (4, "")))]
