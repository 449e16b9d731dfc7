"""A profile's refresh and the updates that keep what it stores: the peer's presence, its
name, whether it is a contact. On the simulation's virtual clock.

The refresh asks only once a first sync has stored a cursor, and runs as an operation of
the state manager's queue, so an update that came while its answer travelled is applied
after it, not overwritten by it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from postbox import Peer as StoredPeer
from postbox import PeerId, PeerNamespace, PeerPresence, Postbox, PresenceStatus, StateCursor
from sync.engine import SyncEngine
from sync.protocol import (
    DifferenceEmpty,
    FullPeer,
    GetDifference,
    GetFullPeer,
    GetState,
    Peer,
    Presence,
    State,
    Updates,
    UpdateUserStatus,
)
from sync.protocol import PresenceStatus as WireStatus
from sync.simulation.loop import run_virtual
from tests.sync.test_engine_stop import HeldConnection

ANN = int(PeerId.make(PeerNamespace.USER, 5))
NOW = 1_800_000_000


class ScriptedConnection(HeldConnection):
    """Authorizes, answers the state and an empty difference, and the profile: whose
    answer goes out together with a push of a change made just after it. Anything else
    is never answered."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def call(self, params: object) -> object:
        self.asked.append(type(params).__name__)
        if isinstance(params, GetState):
            return State(1, 0, 0, NOW)
        if isinstance(params, GetDifference):
            return DifferenceEmpty(NOW, 0)
        if isinstance(params, GetFullPeer):
            # Ann comes online just after the server answered, and the answer is taken
            # a moment after the push (a busy client): the push is the newer news.
            online = Presence(ANN, WireStatus.ONLINE, NOW + 300)
            self.pushes.put_nowait(Updates((UpdateUserStatus(online),)))
            await asyncio.sleep(1.0)
            offline = Presence(ANN, WireStatus.OFFLINE, NOW - 60)
            return FullPeer(Peer(ANN, "Ann"), about="hi", presence=offline)
        return await super().call(params)


def refreshed(db_path: Path, *, synced: bool) -> tuple[list[str], PeerPresence | None]:
    connection = ScriptedConnection()

    async def connector() -> ScriptedConnection:
        return connection

    async def scenario() -> PeerPresence | None:
        with Postbox(db_path, inline=True) as postbox:
            postbox.run(lambda tx: tx.update_peers([StoredPeer(PeerId(ANN), "Ann")]))
            if synced:
                postbox.run(lambda tx: tx.set_state(StateCursor(1, 0, 0, NOW)))
            engine = SyncEngine(postbox, "h", 1, "t", connector=connector)  # type: ignore[arg-type]
            task = asyncio.create_task(engine.run())
            try:
                await asyncio.wait_for(engine.refresh_profile(PeerId(ANN)), 10)
                await engine.wait_for(lambda: engine.state_manager.idle, 10)
                return postbox.run(lambda tx: tx.get_peer_presence(PeerId(ANN)))
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    presence = run_virtual(scenario())
    return connection.asked, presence


def test_a_profile_opened_before_the_first_sync_is_asked_for_after_it(db_path: Path) -> None:
    """Found by seed 5478: a profile answered before the first state was stored, a
    presence changed before that state was taken, and no difference could tell it."""
    asked, _presence = refreshed(db_path, synced=False)
    assert asked.index("GetState") < asked.index("GetFullPeer")


def test_an_update_that_came_while_the_profile_travelled_is_not_overwritten(
    db_path: Path,
) -> None:
    _asked, presence = refreshed(db_path, synced=True)
    assert presence == PeerPresence(PresenceStatus.ONLINE, NOW + 300)
