"""An engine being stopped stops, even when what it waited for finishes at that moment.

On Python 3.11, ``asyncio.wait_for`` returns the result of an awaited thing that
finished just before the cancellation was delivered, and drops the cancellation: an
engine cancelled as its connection opened went on syncing, holding the master lock.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from postbox import PeerId, PeerNamespace, Postbox
from postbox.errors import CorruptValueError
from sync.engine import SyncEngine
from sync.protocol import Auth, Authorization, Peer


def test_a_cancellation_that_meets_the_connection_opening_stops_the_engine(
    db_path: Path,
) -> None:
    async def scenario() -> bool:
        gate = asyncio.Event()

        async def connector() -> object:
            await gate.wait()
            return object()

        with Postbox(db_path) as postbox:
            engine = SyncEngine(postbox, "h", 1, "t", connector=connector)  # type: ignore[arg-type]

            async def open_then_sync() -> None:
                await engine._open()
                await asyncio.Event().wait()  # the rest of the engine's life

            task = asyncio.create_task(open_then_sync())
            await asyncio.sleep(0)  # waiting for the connection
            gate.set()
            await asyncio.sleep(0)  # the connection is open...
            task.cancel()  # ...as the engine is told to stop
            for _ in range(5):  # a few turns of the loop, no clock
                await asyncio.sleep(0)
            stopped = task.cancelled()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return stopped

    assert asyncio.run(scenario())


class HeldConnection:
    """A connection that authorizes and then answers nothing: what is asked waits."""

    def __init__(self) -> None:
        self.pushes: asyncio.Queue[object] = asyncio.Queue()
        self.closed_reason: str | None = None
        self.bad_frame = None

    async def call(self, params: object) -> object:
        if isinstance(params, Auth):
            return Authorization(Peer(int(PeerId.make(PeerNamespace.USER, 1)), "Me"))
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    def abort(self, reason: str) -> None:
        self.closed_reason = self.closed_reason or reason
        self.pushes.put_nowait(None)

    async def close(self) -> None:
        self.abort("closed by the client")


@pytest.mark.parametrize("turns", range(6))
def test_an_engine_cancelled_while_it_stops_on_damage_closes_its_connection(
    db_path: Path, turns: int
) -> None:
    """The ``sync`` command cancels the engine as soon as it sees the damage, which may
    be while the engine is stopping itself: its connection was left open then, for the
    garbage collector to find after the loop had closed."""

    async def scenario() -> HeldConnection:
        connection = HeldConnection()

        async def connector() -> HeldConnection:
            return connection

        with Postbox(db_path) as postbox:
            engine = SyncEngine(postbox, "h", 1, "t", connector=connector)  # type: ignore[arg-type]
            task = asyncio.create_task(engine.run())
            await engine.wait_for(lambda: engine.connected, 5.0)
            engine.stop_for_damage(CorruptValueError("a stored value does not decode"))
            for _ in range(turns):  # a few turns of the loop, no clock
                await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        return connection

    assert asyncio.run(scenario()).closed_reason is not None
