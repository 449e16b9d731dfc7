"""A channel the account's difference names is caught up even when the process dies
between that difference's commit and the channel's own difference: the channels to
poll are stored with the cursor, not kept in memory. Runs the real engine, Postbox and
server on the simulation's virtual loop and network, so every step is deterministic."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postbox import ChannelState, PeerId, PeerNamespace, Postbox, StateCursor, Transaction
from sync.engine.state_manager import CHANNEL_DIFFERENCE_LIMIT, StateManager
from sync.protocol import (
    ChannelDifferenceEmpty,
    ChannelPts,
    Difference,
    DifferenceEmpty,
    GetChannelDifference,
    GetDifference,
    ProtocolError,
    Request,
    State,
    WireRecord,
    method_name,
)
from sync.server.config import FaultConfig, ServerConfig
from sync.server.faults import FaultInjector
from sync.server.service import Session
from sync.simulation import run_virtual
from sync.simulation.network import Network
from sync.simulation.world import TOKEN, SimClient, SimServer
from sync.verify import Report, verify

EPOCH = 1_700_000_000
#: A small dataset with a channel.
DATASET_SEED, PEERS, MESSAGES = 3, 12, 200


def server_channel_pts(server: SimServer) -> dict[int, int]:
    store = server.service.store
    return {int(hint.channel): hint.pts for hint in store.logs.channels_changed_since(0)}


def stored_channel_pts(postbox: Postbox, channels: list[int]) -> dict[int, int | None]:
    def read(tx: Any) -> dict[int, int | None]:
        states = {channel: tx.get_peer_chat_state(PeerId(channel)) for channel in channels}
        return {channel: None if s is None else s.pts for channel, s in states.items()}

    result: dict[int, int | None] = postbox.run(read)
    return result


async def verify_against(server: SimServer, postbox: Postbox) -> Report:
    account = server.service.accounts.authorize(TOKEN)
    assert account is not None
    session = Session(
        -1, FaultInjector.for_connection(FaultConfig(), 0, 0), authorized=True, account=account
    )

    async def call(params: WireRecord) -> Any:
        return server.service.handle(session, Request(0, method_name(params), params))

    return await verify(postbox, call)


async def offline_posts_then_crash_at(
    directory: Path, point: str
) -> tuple[dict[int, int], dict[int, int | None], Report, list[str], list[str]]:
    """Sync, go offline while channels get posts, come back and die at ``point`` the
    first time it is reached, come back again and settle. The server's channel pts,
    the stored ones, verify's report, where the client died, and the channels stored
    behind a pts the client was told of."""
    loop = asyncio.get_running_loop()
    config = ServerConfig(
        token=TOKEN, db=directory / "server.db", seed=DATASET_SEED, peers=PEERS,
        messages=MESSAGES, days=3, clock=lambda: EPOCH + int(loop.time()),
    )  # fmt: skip
    server = SimServer(config)
    await server.start_simulated()
    armed: list[str] = []
    died: list[str] = []

    def at_point(name: str) -> None:
        if name in armed:
            armed.clear()
            died.append(name)
            client.kill()
            raise asyncio.CancelledError(f"killed at {name}")

    client = SimClient(
        directory / "client.db", Network(random.Random(1)), lambda: server, set(),
        crash_hook=at_point,
    )  # fmt: skip
    try:
        client.start()
        server.service.generate(6, "channel_post")  # the client learns the channels
        assert client.engine is not None and await client.engine.wait_idle(settle=1.0)
        await client.crash()
        server.service.generate(40, "channel_post")  # while the client is away
        await asyncio.sleep(3.0)  # the next difference's date is past the posts
        armed.append(point)
        client.start()
        for _ in range(600):  # virtual time: the engine runs until it reaches the point
            if died:
                break
            await asyncio.sleep(0.1)
        assert died, f"the engine never reached {point}"
        await client.crash()  # wait for the killed engine to end
        client.start()
        assert client.engine is not None and await client.engine.wait_idle(settle=1.0)
        assert client.postbox is not None
        truth = server_channel_pts(server)
        stored = stored_channel_pts(client.postbox, sorted(truth))
        report = await verify_against(server, client.postbox)
        behind = client.postbox.run(client.told.behind)
    finally:
        await client.crash()
        await server.stop()
    return truth, stored, report, died, behind


def test_channels_named_by_a_committed_difference_are_caught_up_after_a_crash(
    tmp_path: Path,
) -> None:
    truth, stored, report, died, behind = run_virtual(
        offline_posts_then_crash_at(tmp_path, "state_manager.poll_difference.replayed")
    )
    assert died == ["state_manager.poll_difference.replayed"]
    assert truth, "the dataset should have a channel"
    assert stored == truth
    assert behind == []
    assert report.ok, [str(d) for d in report.divergences]


CHANNEL = PeerId.make(PeerNamespace.CHANNEL, 77)


def scripted_manager_run(
    path: Path,
    answer: Callable[[object], object],
    setup: Callable[[Transaction], None],
    asked_channel: bool = False,
) -> tuple[list[object], dict[PeerId, int], int | None, int | None]:
    """Start a state manager on a file ``setup`` prepared, against ``answer``, until it
    is idle (or, with ``asked_channel``, has asked for the channel's difference); the
    requests, the channels to poll, the channel's pts and the cursor's."""
    postbox = Postbox(path, inline=True)
    postbox.run(setup)
    calls: list[object] = []

    async def call(params: object) -> object:
        calls.append(params)
        return answer(params)

    async def main() -> None:
        manager = StateManager(postbox, call, self_id=1)
        task = asyncio.create_task(manager.run())
        manager.request_poll("started")

        def done() -> bool:
            if asked_channel:
                return any(isinstance(c, GetChannelDifference) for c in calls)
            return manager.idle and bool(calls)

        await manager.changes.wait_for(done)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    try:
        run_virtual(main())
        stored = postbox.run(lambda tx: tx.get_peer_chat_state(CHANNEL))
        cursor = postbox.run(lambda tx: tx.get_state())
        polls = postbox.run(lambda tx: tx.get_channels_to_poll())
    finally:
        postbox.close()
    return (
        calls,
        polls,
        None if stored is None else stored.pts,
        None if cursor is None else cursor.pts,
    )


def test_a_channel_a_previous_process_left_to_poll_is_caught_up_and_forgotten(
    tmp_path: Path,
) -> None:
    def setup(tx: Transaction) -> None:
        tx.set_state(StateCursor(10, 0, 1, 500))
        tx.set_peer_chat_state(CHANNEL, ChannelState(5))
        tx.add_channel_to_poll(CHANNEL, 9)

    def answer(params: object) -> object:
        if isinstance(params, GetDifference):
            return DifferenceEmpty(600, 1)
        assert params == GetChannelDifference(int(CHANNEL), 5, CHANNEL_DIFFERENCE_LIMIT)
        return ChannelDifferenceEmpty(9)

    calls, polls, channel_pts, _ = scripted_manager_run(tmp_path / "c.db", answer, setup)
    assert [type(c) for c in calls] == [GetDifference, GetChannelDifference]
    assert polls == {} and channel_pts == 9


def test_a_difference_naming_a_channel_stores_it_to_poll_with_the_cursor(
    tmp_path: Path,
) -> None:
    def setup(tx: Transaction) -> None:
        tx.set_state(StateCursor(10, 0, 1, 500))
        tx.set_peer_chat_state(CHANNEL, ChannelState(5))

    def answer(params: object) -> object:
        if isinstance(params, GetDifference):
            return Difference((), (), (), State(12, 0, 1, 600), channels=(ChannelPts(CHANNEL, 9),))
        raise ProtocolError("the channel's difference never comes")

    calls, polls, channel_pts, cursor_pts = scripted_manager_run(
        tmp_path / "c.db", answer, setup, asked_channel=True
    )
    assert GetChannelDifference(int(CHANNEL), 5, CHANNEL_DIFFERENCE_LIMIT) in calls
    assert cursor_pts == 12 and channel_pts == 5
    assert polls == {CHANNEL: 9}
