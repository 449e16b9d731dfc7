"""Running a sync engine against an embedded server in tests, and waiting for quiescence."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from postbox import (
    AnyViewKey,
    ChatListViewKey,
    HistoryAnchor,
    MessageHistoryViewKey,
    PeerGroupId,
    PeerId,
    Postbox,
)
from sync.connection import ServerConnection
from sync.engine import SyncEngine, Timeouts
from sync.protocol import Auth
from sync.server.server import EmbeddedServer
from sync.verify import Report, verify

TOKEN = "t"
#: Every wait short, so a test converges in a second or two.
FAST = Timeouts(
    gap=0.05,
    quiet_poll=0.3,
    reconnect_min=0.01,
    reconnect_max=0.1,
    fill_cooldown=0.1,
    fill_grace=0.1,
    retry_min=0.01,
    retry_max=0.2,
    request=1.0,
    validation_retry=0.05,
    stable_connection=0.5,
)


@contextlib.asynccontextmanager
async def running_engine(
    server: EmbeddedServer,
    db: Path,
    *,
    open_peers: Sequence[int] = (),
    timeouts: Timeouts = FAST,
    difference_limit: int = 1_000,
) -> AsyncIterator[tuple[SyncEngine, Postbox]]:
    postbox = Postbox(db)
    keys: list[AnyViewKey] = [
        ChatListViewKey(PeerGroupId.ROOT, count=100),
        ChatListViewKey(PeerGroupId.ARCHIVE),
    ]
    keys += [
        MessageHistoryViewKey(PeerId(peer), HistoryAnchor.upper_bound(), 30) for peer in open_peers
    ]
    subscription = postbox.combined_view(keys)
    engine = SyncEngine(
        postbox,
        "127.0.0.1",
        server.port,
        TOKEN,
        timeouts=timeouts,
        difference_limit=difference_limit,
    )
    task = asyncio.create_task(engine.run())
    try:
        yield engine, postbox
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        subscription.dispose()
        postbox.close()


async def wait_quiescent(engine: SyncEngine, timeout: float = 30.0) -> None:
    """Idle, then idle again after the engine's own quiet-time poll (``FAST``: 0.3 s
    without pushes), so a dropped last push is caught up too."""
    assert await engine.wait_idle(settle=0.05, timeout=timeout), engine.status()
    counters = engine.state_manager.counters
    before = counters.differences
    await engine.wait_for(lambda: counters.differences > before, timeout)
    assert await engine.wait_idle(settle=0.1, timeout=timeout), engine.status()


async def server_report(server: EmbeddedServer, postbox: Postbox) -> Report:
    connection = await ServerConnection.open("127.0.0.1", server.port)
    try:
        await connection.call(Auth(TOKEN))
        return await verify(postbox, connection.call)
    finally:
        await connection.close()
