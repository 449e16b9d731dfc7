"""Faults on answers, on a live connection: dropped, delayed, cut in the middle of a frame.

The faults follow the connection's seeded plan, so a replica of its injector says which
answers a test must see and which it must not.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from sync.connection import ConnectionLostError, ServerConnection
from sync.protocol import (
    Auth,
    GetHistory,
    GetState,
    SendMessage,
    SentMessage,
    encode_frame,
    encode_request,
)
from sync.server.config import FaultConfig, ServerConfig
from sync.server.faults import FaultInjector, ResponsePlan
from sync.server.server import EmbeddedServer, MockServer

NOW = 1_800_000_000
WAIT = 10.0


def serve(faults: FaultConfig, seed: int) -> EmbeddedServer:
    config = ServerConfig(
        token="t", peers=10, messages=200, seed=seed, faults=faults, clock=lambda: NOW
    )
    return EmbeddedServer(config)


def plans(faults: FaultConfig, seed: int, count: int) -> list[ResponsePlan]:
    """What the first connection does to its first ``count`` answers."""
    replica = FaultInjector.for_connection(faults, seed, 1)
    return [replica.plan_response() for _ in range(count)]


def counters(server: MockServer) -> list[tuple[int, int]]:
    """(answers dropped, answers delayed) of each open connection."""
    return [
        (c.session.faults.responses_dropped, c.session.faults.responses_delayed)
        for c in server._connections
    ]


def seed_answering_auth(faults: FaultConfig) -> int:
    return next(seed for seed in range(100) if not plans(faults, seed, 1)[0].drop)


def test_dropped_answers_never_arrive_and_the_requests_still_take_effect() -> None:
    faults = FaultConfig(drop_response=0.3)
    seed = seed_answering_auth(faults)
    schedule = plans(faults, seed, 41)[1:]
    # Up to the last answered request, so its answer proves the ones before were handled.
    count = max(i for i, plan in enumerate(schedule) if not plan.drop) + 1
    dropped = [i for i in range(count) if schedule[i].drop]
    assert dropped

    async def main(server: EmbeddedServer) -> None:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        try:
            await connection.call(Auth("t"))
            peer = server.call(lambda s: s.service.store.chat_sizes()[0][0])
            sends = [SendMessage(peer, f"note {i}", 1_000 + i) for i in range(count)]
            calls = [asyncio.create_task(connection.call(send)) for send in sends]
            answered = [calls[i] for i in range(count) if i not in dropped]
            await asyncio.wait_for(asyncio.gather(*answered), WAIT)
            assert [i for i, call in enumerate(calls) if not call.done()] == dropped
            # Every send was stored once; a retry of a lost one gets the stored message.
            history = server.call(
                lambda s: s.service.store.history(GetHistory(peer, limit=count + 5))
            )
            texts = [message.text for message in history.messages]
            for i in range(count):
                assert texts.count(f"note {i}") == 1
            for call in calls:
                call.cancel()
            assert server.call(counters) == [(len(dropped), 0)]
        finally:
            await connection.close()

    with serve(faults, seed) as server:
        asyncio.run(main(server))


def test_a_retried_send_whose_answer_was_dropped_returns_the_same_message() -> None:
    faults = FaultConfig(drop_response=0.5)
    seed = next(
        s for s in range(200) if [p.drop for p in plans(faults, s, 3)] == [False, True, False]
    )

    async def main(server: EmbeddedServer) -> None:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        try:
            await connection.call(Auth("t"))
            peer = server.call(lambda s: s.service.store.chat_sizes()[0][0])
            send = SendMessage(peer, "only once", 77)
            lost = asyncio.create_task(connection.call(send))
            retried = await asyncio.wait_for(connection.call(send), WAIT)
            assert not lost.done()
            lost.cancel()
            assert isinstance(retried, SentMessage)
            stored = server.call(lambda s: s.service.store.message(peer, retried.message.id))
            assert stored == retried.message
            history = server.call(lambda s: s.service.store.history(GetHistory(peer, limit=5)))
        finally:
            await connection.close()
        assert [m.text for m in history.messages].count("only once") == 1

    with serve(faults, seed) as server:
        asyncio.run(main(server))


def test_delayed_answers_all_arrive() -> None:
    faults = FaultConfig(delay_response=0.05)
    schedule = plans(faults, 4, 21)
    assert all(0 < plan.delay <= 0.05 for plan in schedule)

    async def main(server: EmbeddedServer) -> None:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        try:
            await asyncio.wait_for(connection.call(Auth("t")), WAIT)
            calls = [connection.call(GetState()) for _ in range(20)]
            states = await asyncio.wait_for(asyncio.gather(*calls), WAIT)
            assert len(states) == 20
            assert server.call(counters) == [(0, 21)]
        finally:
            await connection.close()

    with serve(faults, 4) as server:
        asyncio.run(main(server))


def test_a_cut_answer_ends_mid_frame_and_closes_the_connection() -> None:
    async def main(server: EmbeddedServer) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(encode_frame(encode_request(1, Auth("t"))))
        received = await asyncio.wait_for(reader.read(), WAIT)  # until the server closes
        writer.close()
        assert len(received) >= 4
        (length,) = struct.unpack(">I", received[:4])
        assert 0 < len(received) - 4 < length

    with serve(FaultConfig(cut_response=1.0), 1) as server:
        asyncio.run(main(server))


def test_a_client_sees_a_cut_answer_as_a_lost_connection() -> None:
    async def main(server: EmbeddedServer) -> None:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        try:
            with pytest.raises(ConnectionLostError):
                await asyncio.wait_for(connection.call(Auth("t")), WAIT)
        finally:
            await connection.close()

    with serve(FaultConfig(cut_response=1.0), 1) as server:
        asyncio.run(main(server))


def test_answer_faults_repeat_under_a_seed_and_leave_push_faults_alone() -> None:
    faults = FaultConfig(drop=0.5, drop_response=0.3, delay_response=0.2, cut_response=0.1)
    assert plans(faults, 9, 50) == plans(faults, 9, 50)
    assert plans(faults, 9, 50) != plans(faults, 10, 50)
    with_answers = FaultInjector.for_connection(faults, 9, 1)
    without = FaultInjector.for_connection(FaultConfig(drop=0.5), 9, 1)
    for _ in range(10):
        with_answers.plan_response()
    assert [with_answers.rng.random() for _ in range(5)] == [without.rng.random() for _ in range(5)]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"drop_response": 1.5}, "drop_response must be a probability within 0..1"),
        ({"cut_response": -0.1}, "cut_response must be a probability within 0..1"),
        ({"delay_response": 61.0}, "delay_response must be within 0..60 s"),
    ],
)
def test_answer_faults_out_of_range_are_refused(values, message) -> None:
    with pytest.raises(ValueError, match=message):
        FaultConfig(**values)
