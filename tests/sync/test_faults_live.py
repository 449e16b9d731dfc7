"""Fault knobs on a live server: what one client actually receives."""

from __future__ import annotations

import asyncio

from sync.connection import ServerConnection
from sync.protocol import (
    Auth,
    DifferenceTooLong,
    GetDifference,
    GetState,
    UpdatesTooLong,
)
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer

NOW = 1_800_000_000


def serve(faults: FaultConfig, seed: int = 3) -> EmbeddedServer:
    config = ServerConfig(
        token="t", peers=15, messages=300, seed=seed, faults=faults, clock=lambda: NOW
    )
    return EmbeddedServer(config)


async def receive(server: EmbeddedServer, events: int, copies: int = 1) -> list[object]:
    """Authorize, make ``events`` events, and collect ``copies`` times the pushes they made
    (fewer if the connection drops)."""
    connection = await ServerConnection.open("127.0.0.1", server.port)
    try:
        await connection.call(Auth("t"))
        made = server.call(lambda s: s.service.generate(events))
        received: list[object] = []
        while len(received) < made * copies:
            push = await asyncio.wait_for(connection.pushes.get(), 10)
            if push is None:
                break
            received.append(push)
        return received
    finally:
        await connection.close()


def baseline(events: int, seed: int = 3) -> list[object]:
    with serve(FaultConfig(), seed) as server:
        pushes = server.call(lambda s: s.service.traffic.events)
        assert pushes == 0
        return asyncio.run(receive(server, events))


def test_duplicate_sends_every_push_twice() -> None:
    plain = baseline(20)
    with serve(FaultConfig(duplicate=1.0)) as server:
        doubled = asyncio.run(receive(server, 20, copies=2))
    assert doubled == [push for push in plain for _ in range(2)]


def test_reorder_delivers_the_same_pushes_shuffled_even_when_the_window_never_fills() -> None:
    plain = baseline(25)
    with serve(FaultConfig(reorder=8)) as server:
        shuffled = asyncio.run(receive(server, 25))
    assert sorted(map(repr, shuffled)) == sorted(map(repr, plain))
    assert shuffled != plain


def test_disconnect_every_cuts_the_connection_after_n_pushes() -> None:
    with serve(FaultConfig(disconnect_every=5)) as server:
        received = asyncio.run(receive(server, 40))
    assert len(received) == 5


def test_too_long_replaces_a_push_and_makes_the_next_difference_too_long() -> None:
    with serve(FaultConfig(too_long=1.0)) as server:

        async def run() -> None:
            connection = await ServerConnection.open("127.0.0.1", server.port)
            try:
                await connection.call(Auth("t"))
                state = await connection.call(GetState())
                server.call(lambda s: s.service.generate(30))
                push = await asyncio.wait_for(connection.pushes.get(), 10)
                assert isinstance(push, UpdatesTooLong)
                answer = await connection.call(GetDifference(state.pts, 0, state.date))
                current = await connection.call(GetState())
                assert answer == DifferenceTooLong(current.pts)
                # Forced once: the next difference is answered normally.
                again = await connection.call(GetDifference(state.pts, 0, state.date))
                assert not isinstance(again, DifferenceTooLong)
            finally:
                await connection.close()

        asyncio.run(run())


def test_drop_loses_some_pushes_and_delay_keeps_them_all() -> None:
    plain = baseline(40)
    with serve(FaultConfig(drop=0.5)) as server:

        async def count_dropped() -> int:
            connection = await ServerConnection.open("127.0.0.1", server.port)
            try:
                await connection.call(Auth("t"))
                server.call(lambda s: s.service.generate(40))
                await connection.call(GetState())  # every push made so far precedes this answer
                return connection.pushes.qsize()
            finally:
                await connection.close()

        kept = asyncio.run(count_dropped())
    assert 0 < kept < len(plain)
    with serve(FaultConfig(delay=0.05)) as server:
        delayed = asyncio.run(receive(server, 40))
    assert sorted(map(repr, delayed)) == sorted(map(repr, plain))
