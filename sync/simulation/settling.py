"""Whether the world has settled once the faults stop, and if not, what holds it up.

Settled means every client's engine idle and no hole in the windows its user has open,
for ``SETTLE`` virtual seconds in a row, within ``SETTLE_BUDGET``; a client whose
engine failed ends the wait at once. ``waiting`` names, per client, what it still waits
on, for the divergence that reports a world that would not settle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sync.simulation.user import SimulatedUser
from sync.simulation.world import SimClient

__all__ = ["SETTLE", "SETTLE_BUDGET", "settled", "waiting"]

#: Virtual seconds the engine gets to settle once the faults stop.
SETTLE_BUDGET = 300.0
#: The engine counts as settled after this long idle.
SETTLE = 1.0


async def settled(clients: Sequence[SimClient], users: Sequence[SimulatedUser]) -> bool:
    """Wait until the world is quiet for ``SETTLE`` seconds: ``False`` if a client
    failed or the budget ran out first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_BUDGET
    idle_since: float | None = None
    while loop.time() < deadline:
        if any(client.failures for client in clients):
            return False
        if all(_quiet(client, user) for client, user in zip(clients, users, strict=True)):
            idle_since = loop.time() if idle_since is None else idle_since
            if loop.time() - idle_since >= SETTLE:
                return True
        else:
            idle_since = None
        await asyncio.sleep(SETTLE / 4)
    return False


def waiting(clients: Sequence[SimClient], users: Sequence[SimulatedUser]) -> str:
    """What keeps the world from settling: per client not quiet, short tags, then the
    details."""
    return " ".join(
        client.name + _waiting_for(client, user)
        for client, user in zip(clients, users, strict=True)
        if not _quiet(client, user)
    )


def _quiet(client: SimClient, user: SimulatedUser) -> bool:
    return client.engine is not None and client.engine.idle and not user.holes_in_view()


def _waiting_for(client: SimClient, user: SimulatedUser) -> str:
    engine = client.engine
    if engine is None:
        return "[no engine]"
    tags, details = [], []
    status = engine.status()
    if not engine.connected:
        tags.append("not connected")
    if status.operation != "idle":
        tags.append(f"stuck in {status.operation}")
    if status.queue:
        tags.append("updates queued")
    if status.outgoing:
        tags.append("outgoing queued")
    holes = user.holes_in_view()
    if holes:
        tags.append("holes in view")
        details.append(f"holes {holes}")
    busy = engine.busy_parts()
    if busy:
        tags.append(f"busy: {'; '.join(busy)}")
    details.append(
        f"engine {status.connection}/{status.operation} queue={list(status.queue)}"
        f" fills={status.fills_in_flight} outgoing={status.outgoing}"
    )
    return f"[{', '.join(tags)}] ({'; '.join(details)})"
