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


#: Attempts watched; 0.1 s doubling to a 5 s cap with equal jitter spaces 15 attempts
#: over 25.7 to 51.3 s (the sum of the ceilings, and its half).
ATTEMPTS = 15


def attempts_on_virtual_time(tmp_path, connector, seed: int) -> tuple[SyncEngine, list[float]]:
    """Run an engine against ``connector`` until it tried ``ATTEMPTS`` times; the engine
    and the virtual times of its attempts."""
    times: list[float] = []

    async def connect() -> object:
        times.append(asyncio.get_running_loop().time())
        return await connector()

    async def run() -> SyncEngine:
        postbox = Postbox(tmp_path / "c.db", inline=True)
        engine = SyncEngine(
            postbox, "h", 1, "t", timeouts=Timeouts(), connector=connect,  # type: ignore[arg-type]
            rng=random.Random(seed),
        )  # fmt: skip
        task = asyncio.create_task(engine.run())
        await engine.wait_for(lambda: len(times) >= ATTEMPTS, timeout=3600)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        postbox.close()
        return engine

    loop = VirtualLoop()
    try:
        return loop.run_until_complete(run()), times
    finally:
        loop.close()


def assert_backed_off(times: list[float]) -> None:
    elapsed = times[ATTEMPTS - 1] - times[0]
    assert 25.6 <= elapsed <= 51.4, elapsed
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert max(gaps) <= 5.0 and gaps[ATTEMPTS - 2] >= 2.5


def test_a_server_that_refuses_every_connection_is_not_hammered(tmp_path) -> None:
    async def refuse() -> object:
        raise ConnectionRefusedError(111, "Connection refused")

    engine, times = attempts_on_virtual_time(tmp_path, refuse, seed=1)
    assert_backed_off(times)
    status = engine.status()
    assert status.problem is not None and "cannot reach the server" in status.problem
    assert status.counters["connection_attempts"] == len(times)


class _ClosesAtOnce:
    """A connection whose server authorizes it and then closes it at once."""

    closed_reason = "the server closed the connection"
    bad_frame = None

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
    async def connect() -> object:
        return _ClosesAtOnce()

    engine, times = attempts_on_virtual_time(tmp_path, connect, seed=2)
    # Authorized connections that do not stay up do not reset the back-off.
    assert_backed_off(times)
    assert engine.status().counters["connections"] >= ATTEMPTS - 1
