"""The peers an answer names but does not describe (Telegram's min peers), fetched before
the answer is stored.

A message's chat, author and forward source must be stored, carried by the answer, or
described by ``getPeers``; ``PeerDescriber.describe`` asks for the rest and returns them,
to be stored in the answer's transaction. A peer the server cannot describe makes the
answer a lie (``ServerLiedError``); ``PeerLookups`` (sync.state) says when to ask again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from postbox import PeerId, Postbox, Transaction
from sync.engine.crash_points import crash_point
from sync.engine.timing import loop_time
from sync.protocol import GetPeers, Peer, Peers
from sync.state import PEERS_PER_REQUEST, PeerLookups, ServerLiedError, check_peers

__all__ = ["PeerDescriber"]


class PeerDescriber:
    """Fetches undescribed peers for every part of the engine that stores answers."""

    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        *,
        clock: Callable[[], float] = loop_time,
    ) -> None:
        self.postbox = postbox
        self._call = call
        self._clock = clock
        self.lookups = PeerLookups()
        #: Peers fetched because an answer named them without describing them.
        self.fetched = 0

    async def describe(self, references: Iterable[int], carried: Iterable[int]) -> list[Peer]:
        """The peers among ``references`` that are neither ``carried`` nor stored, as the
        server describes them; ``ServerLiedError`` if it cannot describe one."""
        wanted = set(references) - set(carried)
        if not wanted:
            return []

        def unknown_of(tx: Transaction) -> set[int]:
            return {peer for peer in wanted if tx.get_peer(PeerId(peer)) is None}

        unknown = await asyncio.wrap_future(self.postbox.transaction(unknown_of))
        if not unknown:
            return []
        plan = self.lookups.plan(unknown, self._clock())
        if plan.refuse:
            raise ServerLiedError(f"names peers it could not describe: {_few(plan.refuse)}")
        described: list[Peer] = []
        for start in range(0, len(plan.fetch), PEERS_PER_REQUEST):
            asked = plan.fetch[start : start + PEERS_PER_REQUEST]
            answer: Peers = await self._call(GetPeers(asked))
            crash_point("references.describe.answered")
            check_peers(answer.peers, "getPeers")
            described += [peer for peer in answer.peers if peer.id in asked]
        missing = self.lookups.answered(plan.fetch, (p.id for p in described), self._clock())
        if missing:
            raise ServerLiedError(f"cannot describe the peers it names: {_few(missing)}")
        self.fetched += len(described)
        return described


def _few(peers: Iterable[int]) -> str:
    ids = sorted(peers)
    return ", ".join(map(str, ids[:3])) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
