"""Reconnecting backs off: jittered, doubling pauses, capped, starting over only after a
healthy connection. Timed on the simulation's virtual clock, so nothing waits."""

from __future__ import annotations

import asyncio
import random

from postbox import Postbox
from sync.engine import SyncEngine, Timeouts
from sync.engine.timing import Backoff
from sync.protocol import Auth, Authorization, Peer
from sync.simulation.loop import VirtualLoop


def test_backoff_doubles_with_jitter_up_to_its_cap_and_starts_over() -> None:
    backoff = Backoff(0.1, 5.0, random.Random(3))
    pauses = [backoff.next() for _ in range(12)]
    ceilings = [min(5.0, 0.1 * 2**n) for n in range(12)]
    for pause, ceiling in zip(pauses, ceilings, strict=True):
        assert ceiling / 2 <= pause <= ceiling
    assert len(set(pauses)) == len(pauses), "the pauses are jittered"
    backoff.reset()
    assert backoff.next() <= 0.1


def test_a_server_that_refuses_every_connection_is_not_hammered(tmp_path) -> None:
    attempts: list[float] = []

    async def refuse() -> object:
        attempts.append(asyncio.get_running_loop().time())
        raise ConnectionRefusedError(111, "Connection refused")

    async def run() -> SyncEngine:
        postbox = Postbox(tmp_path / "c.db", inline=True)
        engine = SyncEngine(
            postbox, "h", 1, "t", timeouts=Timeouts(), connector=refuse,  # type: ignore[arg-type]
            rng=random.Random(1),
        )  # fmt: skip
        task = asyncio.create_task(engine.run())
        await asyncio.sleep(60)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        postbox.close()
        return engine

    loop = VirtualLoop()
    try:
        engine = loop.run_until_complete(run())
    finally:
        loop.close()
    # 0.1 s doubling to 5 s: about 20 attempts in a minute, not thousands.
    assert 10 <= len(attempts) <= 30, len(attempts)
    gaps = [later - earlier for earlier, later in zip(attempts, attempts[1:], strict=False)]
    assert max(gaps) <= 5.0 and gaps[-1] >= 2.5
    status = engine.status()
    assert status.problem is not None and "cannot reach the server" in status.problem
    assert status.counters["connection_attempts"] == len(attempts)


class _ClosesAtOnce:
    """A connection whose server authorizes it and then closes it at once."""

    closed_reason = "the server closed the connection"

    def __init__(self) -> None:
        self.pushes: asyncio.Queue[object] = asyncio.Queue()
        self.pushes.put_nowait(None)

    async def call(self, params: object) -> object:
        assert isinstance(params, Auth)
        return Authorization(Peer(1, "me"))

    def abort(self, reason: str) -> None:
        pass

    async def close(self) -> None:
        pass


def test_a_server_that_closes_every_connection_at_once_is_not_hammered(tmp_path) -> None:
    opened: list[float] = []

    async def connect() -> object:
        opened.append(asyncio.get_running_loop().time())
        return _ClosesAtOnce()

    async def run() -> None:
        postbox = Postbox(tmp_path / "c.db", inline=True)
        engine = SyncEngine(
            postbox, "h", 1, "t", timeouts=Timeouts(), connector=connect,  # type: ignore[arg-type]
            rng=random.Random(2),
        )  # fmt: skip
        task = asyncio.create_task(engine.run())
        await asyncio.sleep(60)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        postbox.close()

    loop = VirtualLoop()
    try:
        loop.run_until_complete(run())
    finally:
        loop.close()
    # Authorized connections that do not stay up do not reset the back-off.
    assert 10 <= len(opened) <= 30, len(opened)
