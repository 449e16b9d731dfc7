"""Comparing the installed sticker sets and the saved GIFs with the server's.

The server's are read with hash 0 (everything); the stored ones as the picker shows
them. The sets must be the same, in the same order, each with the server's title,
short name, access hash and hash, and the same stickers (id and glyph) in the same
order; the saved GIFs likewise.
"""

from __future__ import annotations

from dataclasses import dataclass

from postbox import ItemCollectionId, ItemCollectionInfo, ItemCollectionItem, Media, Transaction
from sync.engine.item_collections import SAVED_GIFS, read_stored
from sync.protocol import (
    AllStickers,
    GetAllStickers,
    GetSavedGifs,
    GetStickerSet,
    ProtocolError,
    SavedGifs,
    StickerSet,
    StickerSetContents,
)
from sync.protocol import Media as WireMedia
from sync.verify.expected import expected_media
from sync.verify.report import Category, Report
from sync.verify.server_side import Call

__all__ = [
    "LocalCollections",
    "ServerCollections",
    "compare_collections",
    "read_local_collections",
    "server_collections",
]


@dataclass(frozen=True, slots=True)
class ServerCollections:
    sets: tuple[tuple[StickerSet, tuple[WireMedia, ...]], ...]
    gifs: tuple[WireMedia, ...]


@dataclass(frozen=True, slots=True)
class LocalCollections:
    sets: tuple[tuple[ItemCollectionId, ItemCollectionInfo, tuple[ItemCollectionItem, ...]], ...]
    gifs: tuple[ItemCollectionItem, ...]


async def server_collections(call: Call) -> ServerCollections:
    listed = await call(GetAllStickers(0))
    gifs = await call(GetSavedGifs(0))
    if not isinstance(listed, AllStickers) or not isinstance(gifs, SavedGifs):
        raise ProtocolError("the server answered a request for everything with 'not modified'")
    sets = []
    for found in listed.sets:
        contents = await call(GetStickerSet(found.id, found.access_hash, 0))
        if not isinstance(contents, StickerSetContents):
            raise ProtocolError(f"sticker set {found.id} was 'not modified' from nothing")
        sets.append((contents.set, contents.documents))
    return ServerCollections(tuple(sets), gifs.gifs)


def read_local_collections(tx: Transaction) -> LocalCollections:
    stored = read_stored(tx)
    return LocalCollections(
        tuple(
            (collection_id, info, tuple(tx.get_item_collection_items(collection_id)))
            for collection_id, info in stored.sets
        ),
        tuple(tx.get_item_collection_items(SAVED_GIFS)),
    )


def _media(items: tuple[ItemCollectionItem, ...]) -> list[Media]:
    return [item.media for item in items]


def compare_collections(report: Report, local: LocalCollections, server: ServerCollections) -> None:
    here = [collection_id.id for collection_id, _, _ in local.sets]
    there = [found.id for found, _ in server.sets]
    if here != there:
        report.add(Category.STICKERS, None, f"installed sets {here} != server {there}")
    stored = {collection_id.id: (info, items) for collection_id, info, items in local.sets}
    for found, documents in server.sets:
        if found.id not in stored:
            continue
        report.sticker_sets_compared += 1
        info, items = stored[found.id]
        expected = ItemCollectionInfo(
            found.title, found.count, found.hash, found.short_name, found.access_hash
        )
        if info != expected:
            report.add(Category.STICKERS, None, f"set {found.id}: {info} != server {expected}")
        if _media(items) != [expected_media(document) for document in documents]:
            report.add(
                Category.STICKERS,
                None,
                f"set {found.id}: stickers {[m.id for m in _media(items)]} != server "
                f"{[document.id for document in documents]}",
            )
    report.saved_gifs_compared += len(server.gifs)
    if _media(local.gifs) != [expected_media(gif) for gif in server.gifs]:
        report.add(
            Category.SAVED_GIFS,
            None,
            f"saved GIFs {[m.id for m in _media(local.gifs)]} != server "
            f"{[gif.id for gif in server.gifs]}",
        )
