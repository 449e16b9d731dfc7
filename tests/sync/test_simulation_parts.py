"""The simulation's parts: the virtual loop, the simulated network, the inline Postbox."""

from __future__ import annotations

import asyncio
import random
import socket
import threading
from pathlib import Path

import msgpack
import pytest

from postbox import MessageFlags, PeerId, PeerNamespace, Postbox, StoreMessage, Transaction
from postbox.errors import StorageFullError
from sync.connection import ConnectionLostError, ServerConnection
from sync.protocol import (
    GetState,
    Message,
    State,
    UpdateNewChannelMessage,
    Updates,
    encode_frame,
    encode_result,
)
from sync.server.config import ServerConfig
from sync.simulation import SimulationError, StalledError, VirtualLoop, run_virtual
from sync.simulation.liar import Liar
from sync.simulation.loop import owned_context
from sync.simulation.network import LinkFaults, Network
from sync.simulation.staging import another_account, file_owner, queue_offline
from sync.simulation.told import ToldChannelPts, _TellingQueue
from sync.simulation.world import TOKEN, SimServer

ALICE = PeerId.make(PeerNamespace.USER, 7)


def test_virtual_time_moves_only_when_the_loop_would_wait() -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        hour: asyncio.Future[None] = loop.create_future()
        loop.call_later(3600, hour.set_result, None)
        await hour
        slept = loop.time()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(10):
                await asyncio.Event().wait()
        return slept, loop.time()

    assert run_virtual(main()) == (3600.0, 3610.0)


def test_a_suspended_process_stops_and_its_clock_stands_still_while_the_world_goes_on() -> None:
    """A laptop asleep: the client's task and timers wait, its clock stops; the world's
    does not; on waking its 10-second sleep ends 10 of its own seconds after it began."""

    async def main() -> list[tuple[str, float, float]]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        seen: list[tuple[str, float, float]] = []

        async def client() -> None:
            await asyncio.sleep(10)
            seen.append(("client", loop.time(), loop.global_time()))

        async def world() -> None:
            for _ in range(3):
                await asyncio.sleep(40)
                seen.append(("world", loop.time(), loop.global_time()))

        task = asyncio.create_task(client(), context=owned_context("client"))
        others = asyncio.create_task(world())
        await asyncio.sleep(2)
        loop.suspend("client")
        await asyncio.sleep(100)
        assert loop.resume("client") == 100.0
        await asyncio.gather(task, others)
        return seen

    assert run_virtual(main()) == [
        ("world", 40.0, 40.0),
        ("world", 80.0, 80.0),
        ("client", 10.0, 110.0),  # its own clock, and the world's
        ("world", 120.0, 120.0),
    ]


def test_a_world_with_nothing_left_to_happen_is_reported_stalled() -> None:
    with pytest.raises(StalledError):
        run_virtual(asyncio.Event().wait())


def test_real_sockets_and_threads_are_refused() -> None:
    async def open_socket() -> None:
        left, right = socket.socketpair()
        left.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_recv(left, 1)
        finally:
            left.close()
            right.close()

    with pytest.raises(SimulationError):
        run_virtual(open_socket())

    async def use_executor() -> None:
        await asyncio.get_running_loop().run_in_executor(None, print)

    with pytest.raises(SimulationError):
        run_virtual(use_executor())

    loop = VirtualLoop()
    errors: list[BaseException] = []

    def call_in() -> None:
        try:
            loop.call_soon_threadsafe(print)
        except SimulationError as error:
            errors.append(error)

    thread = threading.Thread(target=call_in)
    thread.start()
    thread.join()
    loop.close()
    assert len(errors) == 1


def _client_over(network: Network) -> tuple[ServerConnection, asyncio.StreamReader]:
    loop = asyncio.get_running_loop()
    client_reader, server_reader = asyncio.StreamReader(), asyncio.StreamReader()
    client_protocol = asyncio.StreamReaderProtocol(client_reader)
    server_protocol = asyncio.StreamReaderProtocol(server_reader)
    up, _down = network.connect(client_protocol, server_protocol)
    writer = asyncio.StreamWriter(up, client_protocol, client_reader, loop)
    return ServerConnection(client_reader, writer), server_reader


def _answer(network: Network, request: int = 1) -> None:
    """Write the answer to request ``request`` from the server's side."""
    _up, down = network._open[-1]
    down.write(encode_frame(encode_result(request, State(1, 0, 0, 5))))


def test_frames_arrive_after_a_latency_and_in_order() -> None:
    async def main() -> tuple[float, int]:
        import random

        network = Network(random.Random(1))
        network.to_client = LinkFaults(latency=(0.5, 0.5))
        connection, _server = _client_over(network)
        loop = asyncio.get_running_loop()
        asked = loop.time()
        waiting = asyncio.ensure_future(connection.call(GetState()))
        await asyncio.sleep(0)
        _answer(network)
        state = await waiting
        await connection.close()
        return loop.time() - asked, state.pts

    elapsed, pts = run_virtual(main())
    assert elapsed == pytest.approx(0.5) and pts == 1


def test_a_frame_cut_midway_closes_the_connection() -> None:
    async def main() -> str | None:
        import random

        network = Network(random.Random(2))
        network.to_client = LinkFaults(cut=1.0)
        connection, _server = _client_over(network)
        waiting = asyncio.ensure_future(connection.call(GetState()))
        await asyncio.sleep(0)
        _answer(network)
        with pytest.raises(ConnectionLostError):
            await waiting
        return connection.closed_reason

    assert run_virtual(main()) == "the server closed the connection"


def _message(id_: int) -> StoreMessage:
    return StoreMessage(ALICE, 0, id_, 1_700_000_000 + id_, MessageFlags.INCOMING, text="hi")


def test_an_inline_postbox_commits_on_the_callers_thread_in_order(tmp_path: Path) -> None:
    postbox = Postbox(tmp_path / "inline.db", inline=True)
    seen: list[tuple[str, int]] = []
    caller = threading.get_ident()

    def listener(record: object) -> None:
        assert threading.get_ident() == caller
        seen.append(("commit", postbox.transaction_state_version))
        if len(seen) == 1:  # queued from a listener: runs after this commit, not inside it
            postbox.transaction(lambda tx: tx.add_messages([_message(2)]))
            seen.append(("queued", postbox.transaction_state_version))

    postbox.add_commit_listener(listener)
    future = postbox.transaction(lambda tx: tx.add_messages([_message(1)]))
    assert future.done()
    assert [kind for kind, _ in seen] == ["commit", "queued", "commit"]
    assert seen[0][1] == seen[1][1] < seen[2][1]
    assert len(postbox.run(lambda tx: tx.get_messages(ALICE, 0))) == 2
    postbox.close()


def test_a_failing_commit_rolls_back_with_the_storage_error(tmp_path: Path) -> None:
    postbox = Postbox(tmp_path / "full.db", inline=True)

    def disk_full() -> None:
        raise StorageFullError("no space left for full.db")

    postbox.before_commit = disk_full

    def add(tx: Transaction) -> None:
        tx.add_messages([_message(1)])

    with pytest.raises(StorageFullError):
        postbox.run(add)
    postbox.before_commit = None
    assert postbox.run(lambda tx: tx.get_messages(ALICE, 0)) == []
    postbox.run(add)
    assert len(postbox.run(lambda tx: tx.get_messages(ALICE, 0))) == 1
    postbox.close()


def _liar_frame(body: dict[str, object]) -> bytes:
    data: bytes = msgpack.packb(body)
    return len(data).to_bytes(4, "big") + data


def _peers_of(frame: bytes) -> list[int]:
    body = msgpack.unpackb(frame[4:], strict_map_key=False)
    part = body["result"] if "result" in body else body["updates"]
    return [peer["id"] for peer in part["peers"]]


def _lying_answer(kind: str, peers: list[int]) -> dict[str, object]:
    described = [{"id": peer, "name": f"peer {peer}"} for peer in peers]
    return {"result": {"_": kind, "messages": [], "other_updates": [], "peers": described}}


def test_a_lying_server_leaves_no_renamed_peer_out_of_a_final_difference() -> None:
    # The final difference is the only carrier of a rename whose push was lost, and the
    # client keeps the old name of a peer it stores: leaving it out is not a min peer.
    notes: list[str] = []
    liar = Liar(random.Random(1), 10.0, notes.append, chance=1.0, renamed=lambda: {2})
    told = liar.rewrite(_liar_frame(_lying_answer("difference", [1, 2, 3])), 0.0)
    assert _peers_of(told) == [2]
    assert notes == ["lie: min-peers"]
    # A slice lists no changed peers: all of its may be left out.
    assert _peers_of(liar.rewrite(_liar_frame(_lying_answer("differenceSlice", [1, 2])), 0.0)) == []


def test_a_final_difference_of_renamed_peers_only_is_passed_on_untouched() -> None:
    notes: list[str] = []
    liar = Liar(random.Random(1), 10.0, notes.append, chance=1.0, renamed=lambda: [2, 5])
    frame = _liar_frame(_lying_answer("difference", [2, 5]))
    assert liar.rewrite(frame, 0.0) == frame
    assert notes == []
    assert liar.told == {}


def test_nothing_is_queued_offline_in_a_file_never_synced(tmp_path: Path) -> None:
    """No client can write a message into a file no account has synced into (no chat
    is stored to send to): the wrong-account session stages none there."""
    config = ServerConfig(token=TOKEN, db=tmp_path / "server.db", seed=4, peers=8, messages=40)
    server = SimServer(config)
    asyncio.run(server.start_simulated())
    try:
        other = another_account(server, TOKEN)
        assert other is not None
        with Postbox(tmp_path / "client.db", inline=True) as postbox:
            queued = queue_offline(
                TOKEN, postbox, server, other[0], random.Random(1), 1_700_000_000
            )
            assert queued is None
            assert postbox.run(lambda tx: list(tx.get_unsent_message_ids())) == []
        assert file_owner(tmp_path / "client.db") is None
    finally:
        assert server.store is not None
        server.store.close()


def test_told_counts_a_push_only_once_the_client_takes_it() -> None:
    # Seed 972: pushes left on a connection whose authorization answer was lost were
    # never read by the engine, so they told the client nothing.
    channel = 144115188077096859
    message = Message(peer=channel, id=1, date=1, out=False, text="x", author=channel)
    push = Updates(
        updates=(UpdateNewChannelMessage(message=message, pts=6, pts_count=1),),
        peers=(),
        date=1,
        seq_start=0,
        seq=0,
    )
    told = ToldChannelPts()
    queue = _TellingQueue(told)
    queue.put_nowait(push)
    assert told.highest == {}
    assert queue.get_nowait() is push
    assert told.highest == {channel: 6}
