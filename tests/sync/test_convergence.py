"""The engine converges to the server's truth under every fault the server can inject."""

from __future__ import annotations

import asyncio
import functools
import random
import time

import pytest

from postbox import PeerId
from sync.engine import enqueue_read, enqueue_send
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import TOKEN, running_engine, server_report, wait_quiescent

NOW = 1_800_000_000


def fault_schedule(rng: random.Random) -> FaultConfig:
    return FaultConfig(
        drop=rng.choice([0.0, 0.05, 0.2]),
        duplicate=rng.choice([0.0, 0.1, 0.3]),
        reorder=rng.choice([0, 0, 3, 8]),
        delay=rng.choice([0.0, 0.0, 0.02]),
        disconnect_every=rng.choice([0, 0, 25, 80]),
        too_long=rng.choice([0.0, 0.0, 0.02]),
        channel_too_long=rng.choice([0.0, 0.05, 0.2]),
    )


async def exercise(seed: int, tmp_path, faults: FaultConfig) -> None:
    rng = random.Random(seed)
    config = ServerConfig(
        token=TOKEN, peers=20, messages=600, seed=seed, faults=faults, log_window=400
    )
    with EmbeddedServer(config) as server:
        chats = server.call(lambda s: [p for p, n in s.service.store.chat_sizes() if n])
        opened = rng.sample(chats, 3)
        async with running_engine(server, tmp_path / "client.db", open_peers=opened) as (
            engine,
            postbox,
        ):
            assert await engine.wait_idle(timeout=30), engine.status()
            for _ in range(rng.randint(3, 6)):
                server.call(lambda s: s.service.generate(rng.randint(10, 60)))
                if rng.random() < 0.5:
                    peer = PeerId(rng.choice([c for c in chats if c >> 56 != 2]))
                    send = functools.partial(
                        enqueue_send,
                        peer_id=peer,
                        text=f"hello {rng.random():.5f}",
                        timestamp=int(time.time()),
                    )
                    postbox.run(send)
                await asyncio.sleep(rng.choice([0.0, 0.02, 0.1]))
            await wait_quiescent(engine)
            report = await server_report(server, postbox)
            assert report.ok, "\n".join(map(str, report.divergences[:20]))
            assert report.local_messages > 0


@pytest.mark.parametrize("seed", range(24))
def test_converges_under_random_faults(seed: int, tmp_path) -> None:
    asyncio.run(exercise(seed, tmp_path, fault_schedule(random.Random(seed))))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000, 1300))
def test_converges_under_random_faults_many_seeds(seed: int, tmp_path) -> None:
    asyncio.run(exercise(seed, tmp_path, fault_schedule(random.Random(seed))))


def test_converges_with_every_fault_at_once(tmp_path) -> None:
    faults = FaultConfig(0.2, 0.2, 5, 0.02, 30, 0.03, 0.2)
    asyncio.run(exercise(99, tmp_path, faults))


_ = enqueue_read
