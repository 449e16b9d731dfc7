"""Loading a peer's profile when its screen opens: cached data, presence, media counts.

``refresh_profile(call, postbox, peer_id)`` asks the server for the full peer and, for
each shared-media kind, how many messages carry it (a one-message ``getHistory`` with
that filter gives the count and the newest id). It stores them in one transaction:
the cached peer data, the presence, whether a user is a contact, and a tag summary per
kind, which the profile screen follows through its live views.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from postbox import CachedPeerData, PeerId, Postbox, Transaction
from sync.engine.convert import CLOUD, peer_from_wire, presence_from_wire, tags_of
from sync.protocol import FullPeer, GetFullPeer, GetHistory, Media, MediaKind, MessagesSlice

__all__ = ["MEDIA_KINDS", "refresh_profile"]

#: The shared-media kinds a profile counts.
MEDIA_KINDS = (MediaKind.PHOTO, MediaKind.VIDEO, MediaKind.FILE, MediaKind.LINK, MediaKind.VOICE)


async def refresh_profile(
    call: Callable[[Any], Awaitable[Any]], postbox: Postbox, peer_id: PeerId
) -> None:
    peer = int(peer_id)
    full: FullPeer = await call(GetFullPeer(peer))
    pages: list[MessagesSlice] = await asyncio.gather(
        *(call(GetHistory(peer, limit=1, filter=kind)) for kind in MEDIA_KINDS)
    )
    summaries = []
    for kind, page in zip(MEDIA_KINDS, pages, strict=True):
        newest = max((m.id for m in page.messages), default=0)
        tag = tags_of((Media(kind, 0),))
        summaries.append((tag, page.count, newest))

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
        for tag, count, newest in summaries:
            tx.replace_tag_summary(peer_id, tag, CLOUD, count, newest)

    await asyncio.wrap_future(postbox.transaction(store))
