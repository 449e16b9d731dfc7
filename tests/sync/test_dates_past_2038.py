"""The server's clock passing 2038-01-19T03:14:08Z, the end of signed 32-bit dates."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from postbox import MessageFlags, PeerId, PeerNamespace, Postbox
from sync.engine import SyncEngine, enqueue_send
from sync.protocol import MAX_MESSAGE_DATE, ErrorCode
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from sync.server.store import ServerStore, StoreError
from tests.sync.engine_helpers import FAST, TOKEN, running_engine, server_report, wait_quiescent

#: 2038-01-19T03:14:08Z: the first second a signed 32-bit date cannot hold.
PAST_2038 = 2**31


def test_a_send_and_traffic_after_2038_converge(tmp_path) -> None:
    now = [PAST_2038 - 600]
    config = ServerConfig(token=TOKEN, peers=10, messages=200, seed=7, clock=lambda: now[0])
    with EmbeddedServer(config) as server:
        sizes = server.call(lambda s: s.service.store.chat_sizes())
        peer = PeerId(max((n, p) for p, n in sizes if p >> 56 == PeerNamespace.USER)[1])

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                now[0] = PAST_2038 + 5
                local_id = postbox.run(
                    lambda tx: enqueue_send(tx, peer, "after 2038", timestamp=PAST_2038 + 3)
                )
                server.call(lambda s: s.service.generate(20))
                await engine.wait_for(
                    lambda: postbox.run(lambda tx: tx.get_message(local_id)) is None, 20.0
                )
                await wait_quiescent(engine)
                top = postbox.run(lambda tx: tx.get_messages(peer, 0, limit=1, newest_first=True))
                assert top[0].text == "after 2038" and not top[0].flags & MessageFlags.UNSENT
                assert top[0].timestamp >= PAST_2038
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())


def test_a_server_clock_past_2106_is_refused_not_wrapped() -> None:
    """No message can carry a date past 2106-02-07T06:28:15Z: the store says so."""
    now = [MAX_MESSAGE_DATE]
    store = ServerStore(clock=lambda: now[0])
    try:
        assert store.now() == MAX_MESSAGE_DATE
        now[0] += 1
        with pytest.raises(StoreError, match="2106") as refused:
            store.now()
        assert refused.value.code == ErrorCode.INTERNAL
    finally:
        store.close()


def test_a_device_clock_years_behind_dates_a_send_by_the_server_clock(tmp_path) -> None:
    """The device's clock reads 2001 while the server's is past 2038: the pending
    message is dated by the server's time as the engine learned it, so it sorts below
    the chat's messages, not years above them."""
    now = [PAST_2038 + 100]
    config = ServerConfig(token=TOKEN, peers=10, messages=200, seed=7, clock=lambda: now[0])
    with EmbeddedServer(config) as server:
        sizes = server.call(lambda s: s.service.store.chat_sizes())
        peer = PeerId(max((n, p) for p, n in sizes if p >> 56 == PeerNamespace.USER)[1])

        async def run() -> None:
            postbox = Postbox(tmp_path / "c.db")
            engine = SyncEngine(
                postbox, "127.0.0.1", server.port, TOKEN, timeouts=FAST,
                wall_clock=lambda: 1_000_000_000.0,
            )  # fmt: skip
            task = asyncio.create_task(engine.run())
            try:
                await wait_quiescent(engine)
                assert PAST_2038 + 100 <= engine.server_time() <= PAST_2038 + 110
                top = server.call(lambda s: s.service.store.recent_messages(int(peer), 1)[0])
                local_id = postbox.run(
                    lambda tx: enqueue_send(tx, peer, "late", timestamp=engine.server_time())
                )
                pending = postbox.run(lambda tx: tx.get_message(local_id))
                assert pending is not None and pending.timestamp >= top.date
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                postbox.close()

        asyncio.run(run())
