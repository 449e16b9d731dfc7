"""The hole filler's scheduling: one fetch per slot, cooldown, grace period."""

from __future__ import annotations

import asyncio

import pytest

from postbox import (
    ClosedRange,
    HoleDirection,
    MessageHistoryHolesEntry,
    MessageHistoryHoleSpace,
    PeerId,
    PeerNamespace,
    Postbox,
)
from sync.engine.hole_filler import HoleFiller
from sync.engine.timing import Timeouts
from sync.notifier import ChangeNotifier
from sync.protocol import GetHistory, MessagesSlice

PEER = PeerId.make(PeerNamespace.USER, 5)
TIMEOUTS = Timeouts(fill_cooldown=0.2, fill_grace=0.1)


def entry(lower: int = 1, upper: int = 100, tag: int = 0) -> MessageHistoryHolesEntry:
    space = MessageHistoryHoleSpace(tag)
    return MessageHistoryHolesEntry(
        PEER, 0, space, ClosedRange(lower, upper), HoleDirection.OLDER, upper, 20
    )


class GatedServer:
    """Answers getHistory with nothing, once the test opens the gate."""

    def __init__(self) -> None:
        self.calls: list[GetHistory] = []
        self.gate = asyncio.Event()
        self.changes = ChangeNotifier()

    async def call(self, params: GetHistory) -> MessagesSlice:
        self.calls.append(params)
        self.changes.notify()
        await self.gate.wait()
        return MessagesSlice((), (), 0)


class FakeClock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def postbox(tmp_path):
    box = Postbox(tmp_path / "c.db")
    yield box
    box.close()


def test_one_fetch_per_slot_then_a_cooldown(postbox) -> None:
    async def run() -> None:
        clock = FakeClock()
        server = GatedServer()
        filler = HoleFiller(postbox, server.call, timeouts=TIMEOUTS, clock=clock)
        first, same_slot = entry(), entry(lower=1, upper=50)
        filler._wanted = frozenset({first, same_slot})
        filler._evaluate()
        await server.changes.wait_for(lambda: len(server.calls) == 1)
        filler._evaluate()
        assert len(server.calls) == 1  # the slot is busy
        assert not filler.idle
        server.gate.set()
        await filler.changes.wait_for(lambda: not filler._running)
        filler._wanted = frozenset({first})
        filler._evaluate()
        assert len(server.calls) == 1  # cooling down
        clock.now += TIMEOUTS.fill_cooldown
        filler._evaluate()
        await server.changes.wait_for(lambda: len(server.calls) == 2)

    asyncio.run(run())


def test_another_space_of_the_same_chat_is_another_slot(postbox) -> None:
    async def run() -> None:
        clock = FakeClock()
        server = GatedServer()
        filler = HoleFiller(postbox, server.call, timeouts=TIMEOUTS, clock=clock)
        filler._wanted = frozenset({entry(), entry(tag=1)})
        filler._evaluate()
        await server.changes.wait_for(lambda: len(server.calls) == 2)
        assert {call.filter for call in server.calls} == {None, "photo"}
        server.gate.set()
        await filler.changes.wait_for(lambda: not filler._running)

    asyncio.run(run())


def test_a_fetch_whose_hole_left_is_kept_for_the_grace_period(postbox) -> None:
    async def run() -> None:
        clock = FakeClock()
        server = GatedServer()
        filler = HoleFiller(postbox, server.call, timeouts=TIMEOUTS, clock=clock)
        wanted = entry()
        filler._wanted = frozenset({wanted})
        filler._evaluate()
        await server.changes.wait_for(lambda: len(server.calls) == 1)
        (fetch,) = filler._running.values()
        filler._wanted = frozenset()
        filler._evaluate()
        assert not fetch.task.cancelled()  # gone from the views, but not given up yet
        filler._wanted = frozenset({wanted})
        filler._evaluate()
        assert fetch.left_at is None  # back in time: it carries on
        filler._wanted = frozenset()
        filler._evaluate()
        clock.now += TIMEOUTS.fill_grace
        filler._evaluate()
        await asyncio.wait([fetch.task], timeout=5)
        assert fetch.task.cancelled()
        assert not filler._running

    asyncio.run(run())
