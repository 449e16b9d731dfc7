"""The gap rules on a clock passed in: no test here waits or reads the time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sync.state import ACCOUNT_PTS, SEQ, GapDeadlines, Sequencer


def test_a_gap_waits_its_timeout_from_when_it_was_first_seen() -> None:
    gaps = GapDeadlines(0.5)
    assert not gaps.observe(ACCOUNT_PTS, gap=True, inconsistent=False, now=10.0)
    # Seeing the same gap again does not move its deadline.
    assert not gaps.observe(ACCOUNT_PTS, gap=True, inconsistent=False, now=10.3)
    assert gaps.next_deadline() == 10.5 and gaps.opened == 1
    assert gaps.expired(10.49) == []
    assert gaps.expired(10.5) == [ACCOUNT_PTS]
    assert gaps.next_deadline() is None and not gaps.waiting(ACCOUNT_PTS)


def test_a_gap_that_closes_in_time_never_expires() -> None:
    gaps = GapDeadlines(0.5)
    gaps.observe(SEQ, gap=True, inconsistent=False, now=1.0)
    gaps.observe(SEQ, gap=False, inconsistent=False, now=1.2)
    assert gaps.expired(100.0) == []


def test_an_overlapping_update_is_resolved_at_once() -> None:
    gaps = GapDeadlines(0.5)
    gaps.observe(777, gap=True, inconsistent=False, now=1.0)
    assert gaps.observe(777, gap=True, inconsistent=True, now=1.1)
    assert not gaps.waiting(777)


def test_counters_expire_oldest_deadline_first() -> None:
    gaps = GapDeadlines(1.0)
    gaps.observe(5, gap=True, inconsistent=False, now=2.0)
    gaps.observe(ACCOUNT_PTS, gap=True, inconsistent=False, now=1.0)
    gaps.observe(SEQ, gap=True, inconsistent=False, now=3.0)
    assert gaps.expired(3.5) == [ACCOUNT_PTS, 5]
    assert gaps.next_deadline() == 4.0


@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.integers(1, 3)),  # (end, count) of updates
        max_size=40,
    ),
    st.integers(0, 10),
)
def test_a_sequencer_applies_each_point_once_and_in_order(items, start) -> None:
    sequencer = Sequencer[int](start)
    applied: list[tuple[int, int]] = []
    for end, count in items:
        before = sequencer.position
        result = sequencer.offer([(end, count, end)])
        for payload in result.ready:
            applied.append((payload, before))
        # The position only moves forward, and only through applied updates.
        assert sequencer.position >= before
    ends = [end for end, _ in applied]
    assert ends == sorted(set(ends)), "each update once, in order"
    assert all(end > start for end in ends)
    # Whatever is still held ends beyond the position: it waits for a missing update.
    assert all(upper > sequencer.position for _, upper in sequencer.held)
