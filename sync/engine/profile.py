"""Loading a peer's profile when its screen opens: cached data, presence, media counts.

``refresh_profile(call, postbox, peer_id)`` asks the server for the full peer and stores
it in one transaction: the cached peer data, the presence, whether a user is a contact.
The same transaction queues the chat's shared-media counts for the engine's
``TagSummaryValidator``, which fetches them (a one-message ``getHistory`` per media kind
gives the count and the newest id). The profile screen follows both through its views.

The peer, its presence and the contact flag are kept by updates too, so the engine
(``SyncEngine.refresh_profile``) asks only once a first sync has stored a cursor (a
change made between an earlier answer and the first state would never be told) and as
an operation of the state manager's queue: no update is applied while the answer
travels, and those that came meanwhile are applied after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from postbox import CachedPeerData, PeerId, Postbox, Transaction
from sync.engine.convert import peer_from_wire, presence_from_wire
from sync.engine.crash_points import crash_point
from sync.engine.tag_summaries import request_summary_validation
from sync.protocol import FullPeer, GetFullPeer

__all__ = ["refresh_profile"]


async def refresh_profile(
    call: Callable[[Any], Awaitable[Any]], postbox: Postbox, peer_id: PeerId
) -> None:
    peer = int(peer_id)
    full: FullPeer = await call(GetFullPeer(peer))
    crash_point("profile.refresh_profile.answered")

    def store(tx: Transaction) -> None:
        tx.update_peers([peer_from_wire(full.peer)])
        tx.update_cached_peer_data(
            peer_id,
            CachedPeerData(
                about=full.about,
                participant_count=full.participant_count,
                pinned_message_id=full.pinned_message_id,
                peer_ids=tuple(PeerId(member) for member in full.members),
            ),
        )
        contacts = tx.get_contact_peer_ids()
        if full.contact != (peer_id in contacts):
            tx.replace_contact_peer_ids(
                contacts | {peer_id} if full.contact else contacts - {peer_id}
            )
        if full.presence is not None:
            user, presence = presence_from_wire(full.presence)
            tx.update_peer_presences({user: presence})
        request_summary_validation(tx, peer_id)

    await asyncio.wrap_future(postbox.transaction(store))
    crash_point("profile.refresh_profile.stored")
