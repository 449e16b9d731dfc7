"""FLOOD_WAIT end to end: the server's rate limit, and the engine waiting it out.

On virtual time: the waits are measured exactly, and nothing really waits.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postbox import Postbox
from sync.engine import SyncEngine
from sync.protocol import (
    ErrorCode,
    GetHistory,
    ProtocolError,
    RpcError,
    SendMessage,
    WireRecord,
    method_name,
)
from sync.server.flood import FloodLimiter
from sync.simulation.loop import run_virtual
from sync.verify.server_side import waiting_out_floods


def test_calls_over_the_limit_are_refused_with_the_seconds_to_wait() -> None:
    limiter = FloodLimiter(limit=2, window=3.0)
    limiter.check("sendMessage", 10.0)
    limiter.check("forwardMessages", 10.5)  # the same kind: sends
    with pytest.raises(ProtocolError) as refused:
        limiter.check("sendMessage", 11.2)
    assert (refused.value.code, refused.value.seconds) == (ErrorCode.FLOOD_WAIT, 2)
    limiter.check("getHistory", 11.2)  # another kind goes on
    limiter.check("getPeers", 11.2)  # not limited at all
    limiter.check("getPeers", 11.2)
    limiter.check("getPeers", 11.2)
    limiter.check("sendMessage", 13.0)  # the oldest call left the window
    assert limiter.refused == 1


def test_a_refused_call_is_not_counted() -> None:
    limiter = FloodLimiter(limit=1, window=1.0)
    limiter.check("getHistory", 0.0)
    for _ in range(5):
        with pytest.raises(ProtocolError):
            limiter.check("getHistory", 0.5)
    limiter.check("getHistory", 1.0)


class FloodingConnection:
    """Refuses the first sendMessage with a flood wait; answers everything else."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.calls: list[tuple[str, float]] = []

    async def call(self, params: WireRecord) -> object:
        name = method_name(params)
        self.calls.append((name, asyncio.get_running_loop().time()))
        if name == "sendMessage" and len([c for c in self.calls if c[0] == name]) == 1:
            raise RpcError("slow down", ErrorCode.FLOOD_WAIT, seconds=self.seconds)
        return name


def test_the_engine_waits_out_a_flood_wait_for_that_kind_only(tmp_path) -> None:
    postbox = Postbox(tmp_path / "client.db", inline=True)
    connection = FloodingConnection(5)

    async def main() -> None:
        engine = SyncEngine(postbox, "127.0.0.1", 1, "token")
        engine._connection = connection  # type: ignore[assignment]
        engine._connected.set()
        first = asyncio.create_task(engine.call(SendMessage(7, "a", 1)))
        await asyncio.sleep(1.0)
        history = await engine.call(GetHistory(7))
        assert history == "getHistory"  # other kinds go on meanwhile
        status = engine.status()
        assert status.flood_waits == (("send", 4.0),)
        assert engine.floods.received == 1
        second = await engine.call(SendMessage(7, "b", 2))  # waits its turn too
        assert await first == second == "sendMessage"
        assert engine.status().flood_waits == ()

    run_virtual(main())
    postbox.close()
    # The refused send goes again once, at the end of the wait; nothing is doubled.
    assert connection.calls == [
        ("sendMessage", 0.0),
        ("getHistory", 1.0),
        ("sendMessage", 5.0),
        ("sendMessage", 5.0),
    ]


def test_verify_waits_out_a_flood_wait_too() -> None:
    calls: list[tuple[str, float]] = []

    async def call(params: WireRecord) -> object:
        name = method_name(params)
        calls.append((name, asyncio.get_running_loop().time()))
        if name == "getHistory" and len(calls) == 1:
            raise RpcError("slow down", ErrorCode.FLOOD_WAIT, seconds=3)
        return name

    async def main() -> None:
        waiting = waiting_out_floods(call)
        history = asyncio.ensure_future(waiting(GetHistory(7)))
        await asyncio.sleep(1.0)
        assert await waiting(SendMessage(7, "a", 1)) == "sendMessage"
        assert await history == "getHistory"

    run_virtual(main())
    assert calls == [("getHistory", 0.0), ("sendMessage", 1.0), ("getHistory", 3.0)]


@given(
    st.integers(1, 5),
    st.floats(0.1, 5.0),
    st.lists(st.floats(0.0, 3.0), min_size=1, max_size=40),
)
def test_no_window_holds_more_calls_than_the_limit_and_the_wait_is_enough(
    limit: int, window: float, steps: list[float]
) -> None:
    limiter = FloodLimiter(limit, window)
    now, accepted = 0.0, []
    for step in steps:
        now += step
        try:
            limiter.check("getHistory", now)
        except ProtocolError as refused:
            assert refused.code is ErrorCode.FLOOD_WAIT
            assert refused.seconds is not None and refused.seconds >= 1
            # Waiting what it says is enough: the call then goes through.
            probe = FloodLimiter(limit, window, {k: v.copy() for k, v in limiter._calls.items()})
            probe.check("getHistory", now + refused.seconds)
        else:
            accepted.append(now)
    for start in accepted:
        assert len([t for t in accepted if start <= t < start + window]) <= limit
