"""``RoundRobin``: requests in flight per connection, served one connection at a time.

Plain cases first (turns, order, limits, removal), then a hypothesis state machine that
runs any sequence of operations against a small reference model and checks fairness:
while a key waits for its turn, no other key is served twice.
"""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from sync.server.scheduling import RoundRobin, SchedulingError


def _drain(robin: RoundRobin[str, int]) -> list[tuple[str, int]]:
    """Take and finish every request, in the order they are served."""
    served = []
    while (turn := robin.take()) is not None:
        served.append(turn)
        robin.done(turn[0])
    return served


def test_ready_keys_take_turns_one_request_each():
    robin: RoundRobin[str, int] = RoundRobin()
    for key in ("greedy", "polite", "other"):
        robin.add(key, 8)
    for number in range(6):
        robin.put("greedy", number)
    robin.put("polite", 100)
    robin.put("other", 200)
    robin.put("other", 201)
    assert _drain(robin) == [
        ("greedy", 0),
        ("polite", 100),
        ("other", 200),
        ("greedy", 1),
        ("other", 201),
        ("greedy", 2),
        ("greedy", 3),
        ("greedy", 4),
        ("greedy", 5),
    ]


def test_a_key_that_becomes_ready_waits_behind_the_ready_ones_only():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("greedy", 8)
    robin.add("polite", 8)
    for number in range(8):
        robin.put("greedy", number)
    assert robin.take() == ("greedy", 0)
    robin.done("greedy")
    robin.put("polite", 100)  # arrives while the greedy key has seven waiting
    assert robin.take() == ("greedy", 1)
    robin.done("greedy")
    assert robin.take() == ("polite", 100)


def test_a_key_has_one_request_taken_at_a_time():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("a", 4)
    robin.put("a", 1)
    robin.put("a", 2)
    assert robin.take() == ("a", 1)
    assert robin.take() is None  # its second waits until the first is done
    assert not robin.ready
    robin.done("a")
    assert robin.ready
    assert robin.take() == ("a", 2)


def test_the_limit_counts_waiting_and_taken_requests():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("a", 2)
    robin.put("a", 1)
    assert robin.has_room("a")
    robin.put("a", 2)
    assert not robin.has_room("a")
    with pytest.raises(SchedulingError, match="already has 2 requests in flight"):
        robin.put("a", 3)
    robin.take()
    assert robin.in_flight("a") == 2
    assert not robin.has_room("a")  # taken is still in flight until done
    robin.done("a")
    assert robin.in_flight("a") == 1
    assert robin.has_room("a")


def test_raising_the_limit_makes_room_and_lowering_it_only_stops_new_requests():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("a", 1)
    robin.put("a", 1)
    assert not robin.has_room("a")
    robin.set_limit("a", 3)
    assert robin.limit("a") == 3
    robin.put("a", 2)
    robin.put("a", 3)
    robin.set_limit("a", 1)
    assert not robin.has_room("a")
    assert [request for _key, request in _drain(robin)] == [1, 2, 3]
    assert robin.has_room("a")


def test_removing_a_key_returns_what_waited_and_forgets_it():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("a", 4)
    robin.add("b", 4)
    for number in (1, 2, 3):
        robin.put("a", number)
    robin.put("b", 10)
    assert robin.take() == ("a", 1)
    assert robin.remove("a") == [2, 3]
    assert "a" not in robin
    assert not robin.has_room("a")
    robin.done("a")  # the answer to a removed key's taken request changes nothing
    assert robin.remove("a") == []
    assert _drain(robin) == [("b", 10)]
    assert len(robin) == 1


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(limit):
    robin: RoundRobin[str, int] = RoundRobin()
    with pytest.raises(SchedulingError, match="at least 1"):
        robin.add("a", limit)
    robin.add("a", 1)
    with pytest.raises(SchedulingError, match="at least 1"):
        robin.set_limit("a", limit)


def test_misuse_is_refused():
    robin: RoundRobin[str, int] = RoundRobin()
    robin.add("a", 1)
    with pytest.raises(SchedulingError, match="already scheduled"):
        robin.add("a", 1)
    with pytest.raises(SchedulingError, match="not scheduled"):
        robin.put("b", 1)
    with pytest.raises(SchedulingError, match="no request taken"):
        robin.done("a")


_KEYS = ("a", "b", "c", "d")


class RoundRobinMachine(RuleBasedStateMachine):
    """Any sequence of operations, checked against a reference model."""

    def __init__(self) -> None:
        super().__init__()
        self.robin: RoundRobin[str, int] = RoundRobin()
        self.limits: dict[str, int] = {}
        self.waiting: dict[str, deque[int]] = {}
        self.busy: set[str] = set()
        #: Requests each key put, in order, and those served, in order.
        self.put_order: dict[str, list[int]] = {}
        self.served_order: dict[str, list[int]] = {}
        #: For each key waiting for its turn: the keys served since it became ready.
        self.served_while_ready: dict[str, list[str]] = {}
        self.numbers = iter(range(10**9))

    @initialize(limits=st.lists(st.integers(1, 5), min_size=2, max_size=len(_KEYS)))
    def add_keys(self, limits):
        for key, limit in zip(_KEYS, limits, strict=False):
            self.robin.add(key, limit)
            self.limits[key] = limit
            self.waiting[key] = deque()
            self.put_order[key] = []
            self.served_order[key] = []

    def _ready(self, key: str) -> bool:
        return bool(self.waiting[key]) and key not in self.busy

    def _became_ready(self, key: str) -> None:
        if self._ready(key) and key not in self.served_while_ready:
            self.served_while_ready[key] = []

    @rule(data=st.data())
    def put(self, data):
        key = data.draw(st.sampled_from(sorted(self.limits)))
        in_flight = len(self.waiting[key]) + (key in self.busy)
        assert self.robin.has_room(key) == (in_flight < self.limits[key])
        number = next(self.numbers)
        if in_flight >= self.limits[key]:
            with pytest.raises(SchedulingError):
                self.robin.put(key, number)
            return
        self.robin.put(key, number)
        self.waiting[key].append(number)
        self.put_order[key].append(number)
        self._became_ready(key)

    @rule()
    def take(self):
        turn = self.robin.take()
        ready = [key for key in self.limits if self._ready(key)]
        if not ready:
            assert turn is None
            return
        assert turn is not None
        key, number = turn
        assert key in ready
        assert number == self.waiting[key].popleft()
        self.busy.add(key)
        self.served_order[key].append(number)
        del self.served_while_ready[key]
        for others in self.served_while_ready.values():
            # Fairness: a key waiting for its turn sees no other key served twice.
            assert key not in others, (key, others)
            others.append(key)

    @precondition(lambda self: bool(self.busy))
    @rule(data=st.data())
    def done(self, data):
        key = data.draw(st.sampled_from(sorted(self.busy)))
        self.robin.done(key)
        self.busy.discard(key)
        self._became_ready(key)

    @rule(data=st.data(), limit=st.integers(1, 5))
    def set_limit(self, data, limit):
        key = data.draw(st.sampled_from(sorted(self.limits)))
        self.robin.set_limit(key, limit)
        self.limits[key] = limit

    @precondition(lambda self: len(self.limits) > 1)
    @rule(data=st.data())
    def remove(self, data):
        key = data.draw(st.sampled_from(sorted(self.limits)))
        assert self.robin.remove(key) == list(self.waiting[key])
        del self.limits[key], self.waiting[key]
        self.busy.discard(key)
        self.served_while_ready.pop(key, None)
        for others in self.served_while_ready.values():
            while key in others:
                others.remove(key)

    @invariant()
    def counts_match(self):
        assert len(self.robin) == len(self.limits)
        for key in self.limits:
            assert self.robin.in_flight(key) == len(self.waiting[key]) + (key in self.busy)
            assert self.robin.limit(key) == self.limits[key]
        assert self.robin.ready == any(self._ready(key) for key in self.limits)

    @invariant()
    def each_key_is_served_in_order(self):
        for key, served in self.served_order.items():
            assert served == self.put_order[key][: len(served)]


TestRoundRobinMachine = RoundRobinMachine.TestCase
