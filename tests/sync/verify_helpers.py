"""A local database that mirrors a server exactly, written through Postbox transactions.

``mirror`` asks the server for everything through the ordinary methods and stores it
the way the client would once fully synced: every message (no holes), read states,
the chat list with its pins and archive, mutes, channel pts, peers, presences, one
loaded profile (cached data, contact status, shared-media counts), the installed sticker
sets and saved GIFs, and the cursor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postbox import (
    MAX_MESSAGE_ID,
    CachedPeerData,
    ChannelState,
    ChatListHole,
    ChatListInclusion,
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionItem,
    MessageHistoryHoleSpace,
    PeerGroupId,
    PeerId,
    PeerNotificationSettings,
    Postbox,
    StateCursor,
    Transaction,
)
from sync.connection import ServerConnection
from sync.engine.convert import (
    CLOUD,
    media_from_wire,
    message_from_wire,
    peer_from_wire,
    presence_from_wire,
    read_state_from_dialog,
)
from sync.engine.item_collections import PACKS, SAVED_GIFS, SAVED_GIFS_TITLE, set_info
from sync.protocol import (
    Auth,
    GetFullPeer,
    GetHistory,
    GetState,
    Media,
    PeerKind,
    collection_hash,
    peer_kind,
)
from sync.server.server import EmbeddedServer
from sync.verify import Report, server_side, verify
from sync.verify.compare_stickers import server_collections
from sync.verify.local_side import TAGGED_KINDS


async def _connect(server: EmbeddedServer, token: str) -> ServerConnection:
    connection = await ServerConnection.open("127.0.0.1", server.port)
    await connection.call(Auth(token))
    return connection


def profile_peer(server: EmbeddedServer) -> int:
    """The user whose profile the mirror loads: the busiest private chat with media."""
    sizes = server.call(lambda s: s.service.store.chat_sizes())
    return max((n, p) for p, n in sizes if peer_kind(p) is PeerKind.USER)[1]


async def _mirror(server: EmbeddedServer, token: str, db: Path) -> None:
    connection = await _connect(server, token)
    call = connection.call
    try:
        state = await call(GetState())
        listed = await server_side.dialogs(call)
        peers = [d.peer for d in listed.dialogs]
        everything = [(1, MAX_MESSAGE_ID)]
        fetched = await server_side.histories(call, dict.fromkeys(peers, everything))
        histories = {peer: history.messages for peer, history in fetched.items()}
        authors = {m.author for h in histories.values() for m in h.values() if m.author}
        records, presences = await server_side.peers(call, {*peers, *authors})
        profile = profile_peer(server)
        full = await call(GetFullPeer(profile))
        counts: dict[Any, Any] = {}
        for kind, tag in TAGGED_KINDS:
            page = await call(GetHistory(profile, limit=1, filter=kind))
            counts[tag] = (page.count, max((m.id for m in page.messages), default=0))
        collections = await server_collections(call)
    finally:
        await connection.close()

    def store(tx: Transaction) -> None:
        tx.update_peers(peer_from_wire(p) for p in records.values())
        tx.update_peer_presences(dict(presence_from_wire(p) for p in presences.values()))
        for dialog in listed.dialogs:
            peer_id = PeerId(dialog.peer)
            group = PeerGroupId.ARCHIVE if dialog.folder else PeerGroupId.ROOT
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion(group))
            tx.add_messages(message_from_wire(m) for m in histories[dialog.peer].values())
            tx.remove_hole(peer_id, CLOUD, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)
            tx.reset_read_state(peer_id, CLOUD, read_state_from_dialog(dialog))
            settings = PeerNotificationSettings(muted_until=dialog.muted_until)
            tx.update_notification_settings(peer_id, settings)
            if dialog.pts is not None:
                tx.set_peer_chat_state(peer_id, ChannelState(dialog.pts))
            for _kind, tag in TAGGED_KINDS:
                if tx.get_tag_summary(peer_id, tag, CLOUD) is not None:
                    # Counted from the stored history, which here is all of it.
                    count = len(tx.get_tagged_message_indices(peer_id, tag, CLOUD))
                    newest = max(histories[dialog.peer], default=0)
                    tx.replace_tag_summary(peer_id, tag, CLOUD, count, newest)
        for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
            tx.remove_chat_list_hole(group, ChatListHole.top())  # the whole list is loaded
            pins = [p for p in listed.pinned if _folder(listed, p) == group]
            tx.set_pinned_peer_ids(group, [PeerId(p) for p in pins])
        tx.update_cached_peer_data(PeerId(profile), CachedPeerData(about=full.about))
        tx.replace_contact_peer_ids([PeerId(profile)] if full.contact else [])
        for tag, (count, newest) in counts.items():
            tx.replace_tag_summary(PeerId(profile), tag, CLOUD, count, newest)
        tx.replace_item_collection_infos(
            PACKS,
            [(ItemCollectionId(PACKS, found.id), set_info(found)) for found, _ in collections.sets],
        )
        for found, documents in collections.sets:
            tx.replace_item_collection_items(ItemCollectionId(PACKS, found.id), _items(documents))
        gifs_hash = collection_hash(gif.id for gif in collections.gifs)
        gifs = ItemCollectionInfo(SAVED_GIFS_TITLE, len(collections.gifs), gifs_hash)
        tx.replace_item_collection_infos(SAVED_GIFS.namespace, [(SAVED_GIFS, gifs)])
        tx.replace_item_collection_items(SAVED_GIFS, _items(collections.gifs))
        tx.set_state(StateCursor(state.pts, state.qts, state.seq, state.date))

    postbox = Postbox(db)
    try:
        await asyncio.wrap_future(postbox.transaction(store))
    finally:
        postbox.close()


def _items(documents: tuple[Media, ...]) -> list[ItemCollectionItem]:
    return [ItemCollectionItem(i, media_from_wire(d)) for i, d in enumerate(documents)]


def _folder(listed: server_side.ServerDialogs, peer: int) -> int:
    dialog = next(d for d in listed.dialogs if d.peer == peer)
    return PeerGroupId.ARCHIVE if dialog.folder else PeerGroupId.ROOT


def mirror(server: EmbeddedServer, token: str, db: Path) -> None:
    asyncio.run(_mirror(server, token, db))


def report_for(
    server: EmbeddedServer,
    token: str,
    db: Path,
    answer: Callable[[Any], Any | None] | None = None,
) -> Report:
    """``verify`` of ``db`` against ``server``; ``answer`` may answer a request in the
    server's stead (``None``: let the server answer)."""

    async def run() -> Report:
        connection = await _connect(server, token)
        postbox = Postbox(db)

        async def call(params: Any) -> Any:
            answered = None if answer is None else answer(params)
            return answered if answered is not None else await connection.call(params)

        try:
            return await verify(postbox, call)
        finally:
            postbox.close()
            await connection.close()

    return asyncio.run(run())
