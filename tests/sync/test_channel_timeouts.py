"""A channel difference's ``timeout``: the rule on a clock passed in, the state
manager's polling on virtual time, and the server's hint."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from postbox import ChannelState, PeerId, PeerNamespace, Postbox, StateCursor, Transaction
from sync.engine.state_manager import StateManager
from sync.engine.timing import Timeouts
from sync.protocol import (
    ChannelDifference,
    ChannelDifferenceEmpty,
    GetChannelDifference,
    WireRecord,
)
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
from sync.simulation.loop import run_virtual
from sync.state import MAX_CHANNEL_TIMEOUT, ChannelPollTimeouts
from tests.sync.server_helpers import make_harness, truth

CHANNEL = int(PeerId.make(PeerNamespace.CHANNEL, 9))
OTHER = int(PeerId.make(PeerNamespace.CHANNEL, 10))


def test_a_final_answer_with_a_timeout_holds_the_channel_back_that_long() -> None:
    timeouts = ChannelPollTimeouts()
    timeouts.observe(CHANNEL, 5, final=True, now=10.0)
    assert timeouts.due([CHANNEL, OTHER], 12.0) == [OTHER]
    assert timeouts.next_deadline([CHANNEL, OTHER]) == 15.0
    assert timeouts.due([CHANNEL], 15.0) == [CHANNEL]
    assert timeouts.next_deadline([CHANNEL]) is None


def test_an_answer_that_is_not_final_or_has_no_timeout_holds_nothing() -> None:
    timeouts = ChannelPollTimeouts()
    timeouts.observe(CHANNEL, 5, final=False, now=0.0)
    assert timeouts.due([CHANNEL], 0.0) == [CHANNEL]
    timeouts.observe(CHANNEL, 5, final=True, now=0.0)
    timeouts.observe(CHANNEL, None, final=True, now=1.0)  # lifts the earlier hold
    assert timeouts.due([CHANNEL], 1.0) == [CHANNEL]


@given(st.integers(0, 10**9), st.floats(0, 10**6), st.floats(0, 2 * MAX_CHANNEL_TIMEOUT))
def test_no_channel_is_held_longer_than_asked_or_than_the_limit(
    timeout: int, now: float, later: float
) -> None:
    timeouts = ChannelPollTimeouts()
    timeouts.observe(CHANNEL, timeout, final=True, now=now)
    held = min(timeout, MAX_CHANNEL_TIMEOUT)
    assert (timeouts.due([CHANNEL], now + later) == [CHANNEL]) == (later >= held)


class ChannelServer:
    """Answers every getChannelDifference empty with a timeout; records when."""

    def __init__(self, timeout: int | None) -> None:
        self.timeout = timeout
        self.calls: list[tuple[int, float]] = []

    async def call(self, params: WireRecord) -> object:
        assert isinstance(params, GetChannelDifference)
        self.calls.append((params.channel, asyncio.get_running_loop().time()))
        return ChannelDifferenceEmpty(params.pts, timeout=self.timeout)


def test_the_state_manager_does_not_poll_a_channel_again_before_its_timeout(tmp_path) -> None:
    box = Postbox(tmp_path / "client.db", inline=True)
    box.run(lambda tx: tx.set_state(StateCursor(10, 0, 1, 500)))

    def seed(tx: Transaction) -> None:
        for channel in (CHANNEL, OTHER):
            tx.set_peer_chat_state(PeerId(channel), ChannelState(3))

    box.run(seed)
    server = ChannelServer(timeout=7)

    async def main() -> None:
        manager = StateManager(box, server.call, self_id=1, timeouts=Timeouts())
        task = asyncio.create_task(manager.run())
        try:
            manager.request_channel_poll(CHANNEL)
            await manager.changes.wait_for(lambda: manager.idle)
            await asyncio.sleep(1.0)
            manager.request_channel_poll(CHANNEL)  # held back until 7 s
            manager.request_channel_poll(OTHER)  # not held: polled at once
            await asyncio.sleep(0.5)
            assert not manager.idle
            assert f"pollChannel {CHANNEL} (in 5.5 s)" in manager.queue_description()
            await manager.changes.wait_for(lambda: manager.idle, 60.0)
        finally:
            task.cancel()

    run_virtual(main())
    box.close()
    assert server.calls == [(CHANNEL, 0.0), (OTHER, 1.0), (CHANNEL, 7.0)]


def test_the_server_hints_its_timeout_on_final_answers_only() -> None:
    harness = make_harness()
    harness.session.faults = FaultInjector.for_connection(FaultConfig(channel_timeout=4), 7, 1)
    channel = next(iter(truth(harness.store).channel_pts))
    before = harness.store.dialog(channel).pts or 0
    for _ in range(3):
        harness.store.add_message(channel, out=False, author=channel, text="post")
    first = harness.call(GetChannelDifference(channel, before, 2))
    assert isinstance(first, ChannelDifference) and not first.final
    assert first.timeout is None  # the rest is asked at once
    last = harness.call(GetChannelDifference(channel, first.pts, 2))
    assert isinstance(last, ChannelDifference) and last.final and last.timeout == 4
    assert harness.call(GetChannelDifference(channel, last.pts, 2)) == ChannelDifferenceEmpty(
        last.pts, timeout=4
    )
