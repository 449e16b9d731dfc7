"""The flood-wait rule on a clock passed in: no test here waits or reads the time."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from sync.protocol import MAX_FLOOD_WAIT, ErrorCode, ProtocolError, RpcError
from sync.state import MIN_FLOOD_WAIT, FloodWaits, flood_kind

KINDS = st.sampled_from(["send", "difference", "channelDifference", "history", "getPeers"])


def test_a_kind_waits_the_seconds_asked_and_the_others_go_on() -> None:
    floods = FloodWaits()
    assert floods.observe("history", 3, now=10.0) == 13.0
    assert floods.delay("history", 10.0) == 3.0
    assert floods.delay("history", 12.5) == 0.5
    assert floods.delay("send", 10.0) == 0.0
    assert floods.waiting(11.0) == (("history", 2.0),)
    assert floods.delay("history", 13.0) == 0.0
    assert floods.waiting(13.0) == ()


def test_a_shorter_wait_does_not_cut_a_longer_one_short() -> None:
    floods = FloodWaits()
    floods.observe("send", 10, now=0.0)
    floods.observe("send", 1, now=2.0)
    assert floods.delay("send", 5.0) == 5.0


def test_a_wait_past_the_limit_is_held_to_it() -> None:
    floods = FloodWaits()
    assert floods.observe("send", 10**9, now=0.0) == MAX_FLOOD_WAIT
    # Nor is one shorter than a second kept: a server saying 0 again and again would
    # have the request sent in a tight loop.
    assert floods.observe("history", -5, now=1.0) == 1.0 + MIN_FLOOD_WAIT
    assert floods.observe("getPeers", 0, now=1.0) == 1.0 + MIN_FLOOD_WAIT


def test_methods_that_share_a_limit_share_a_kind() -> None:
    assert flood_kind("sendMessage") == flood_kind("forwardMessages") == "send"
    assert flood_kind("getDifference") == "difference"
    assert flood_kind("getPeers") == "getPeers"


def test_a_flood_wait_crosses_the_wire_with_its_seconds() -> None:
    wire = ProtocolError("slow down", ErrorCode.FLOOD_WAIT, seconds=7).to_wire()
    error = RpcError.from_wire(wire)
    assert (error.code, error.seconds) == (ErrorCode.FLOOD_WAIT, 7)


def test_a_flood_wait_without_valid_seconds_is_malformed() -> None:
    for seconds in (None, -1, MAX_FLOOD_WAIT + 1, 2.5, True, "3"):
        wire = {"code": "FLOOD_WAIT", "message": "", "seconds": seconds}
        assert RpcError.from_wire(wire).code is ErrorCode.MALFORMED_FRAME


@given(
    st.lists(st.tuples(KINDS, st.floats(-10, 2 * MAX_FLOOD_WAIT), st.floats(0, 100)), max_size=20),
    KINDS,
    st.floats(0, 10_000),
)
def test_a_wait_is_never_longer_than_asked_and_shrinks_with_time(
    answers: list[tuple[str, float, float]], kind: str, later: float
) -> None:
    floods = FloodWaits()
    now = 0.0
    longest: dict[str, float] = {}
    for asked, seconds, step in answers:
        now += step
        floods.observe(asked, seconds, now)
        held = min(max(seconds, MIN_FLOOD_WAIT), MAX_FLOOD_WAIT)
        longest[asked] = max(longest.get(asked, 0.0), now + held)
    delay = floods.delay(kind, now)
    # Exactly until the latest deadline asked for that kind; never for another kind's.
    assert delay == max(0.0, longest.get(kind, 0.0) - now)
    assert 0.0 <= delay <= MAX_FLOOD_WAIT
    assert math.isclose(floods.delay(kind, now + later), max(0.0, delay - later), abs_tol=1e-6)
    assert floods.delay(kind, now + delay + 1e-6) == 0.0
