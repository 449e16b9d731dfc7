"""Sticker sets and saved GIFs on the wire: the records, the methods' parameters and
results, and the hash that spares a client what it has already.

A sticker or GIF is a ``Media`` of kind ``sticker`` or ``gif`` whose ``glyph`` says how it
is drawn. As on Telegram, each list the server gives comes with a 64-bit hash of what it
holds, in order (``collection_hash``): the installed sets' list hashes each set's own
hash, a set hashes its documents' ids and its title, the saved GIFs hash their ids. A
client asks with the hash of what it stored; the same hash is answered with a "not
modified" record and nothing else. A hash of 0 is never "not modified": it asks for
everything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Annotated

from msgspec import Meta

from sync.protocol.schema import Counter, Int64, ListOf, TaggedRecord, WireRecord, WireType
from sync.protocol.types import Media

__all__ = [
    "ANY_ALL_STICKERS",
    "ANY_SAVED_GIFS",
    "ANY_STICKER_SET",
    "AllStickers",
    "AnyAllStickers",
    "AnySavedGifs",
    "AnyStickerSet",
    "GetAllStickers",
    "GetSavedGifs",
    "GetStickerSet",
    "SavedGifs",
    "SavedGifsNotModified",
    "StickerSet",
    "StickerSetContents",
    "StickerSetNotModified",
    "StickerSetsNotModified",
    "collection_hash",
    "documents_hash",
    "set_hash",
    "text_hash",
]

_MASK64 = (1 << 64) - 1


def collection_hash(values: Iterable[int]) -> int:
    """A 64-bit hash of ``values`` in order, as a signed int64: each step scrambles the
    running value with three xor-shifts and adds the next value (Telegram's scheme for
    its ``hash`` parameters). Order matters, and so does every value."""
    acc = 0
    for value in values:
        acc ^= acc >> 21
        acc ^= (acc << 35) & _MASK64
        acc ^= acc >> 4
        acc = (acc + (value & _MASK64)) & _MASK64
    return acc - (1 << 64) if acc >> 63 else acc


def text_hash(text: str) -> int:
    """A 64-bit value standing for ``text`` in a ``collection_hash``."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class StickerSet(WireRecord, frozen=True):
    """An installed sticker set: ``count`` stickers, ``hash`` of its contents."""

    id: Int64
    access_hash: Int64
    title: Annotated[str, Meta(max_length=64)]
    short_name: Annotated[str, Meta(max_length=64)]
    count: Counter
    hash: Int64


# -- parameters -------------------------------------------------------------------


class GetAllStickers(WireRecord, frozen=True):
    """The installed sticker sets; ``hash``: of the list the client has."""

    hash: Int64 = 0


class GetStickerSet(WireRecord, frozen=True):
    """A set and its stickers; ``hash``: the set's hash the client has."""

    id: Int64
    access_hash: Int64 = 0
    hash: Int64 = 0


class GetSavedGifs(WireRecord, frozen=True):
    """The saved GIFs; ``hash``: of the list the client has."""

    hash: Int64 = 0


# -- results ----------------------------------------------------------------------


class AllStickers(TaggedRecord, frozen=True, tag="allStickers"):
    """The installed sets in the order a picker shows them, and the hash of that list."""

    hash: Int64
    sets: ListOf[StickerSet]


class StickerSetsNotModified(TaggedRecord, frozen=True, tag="stickerSetsNotModified"):
    """The installed sets are as the client's hash says."""


class StickerSetContents(TaggedRecord, frozen=True, tag="stickerSet"):
    """A set and its stickers (each a ``Media`` of kind ``sticker`` with its glyph)."""

    set: StickerSet
    documents: Annotated[tuple[Media, ...], Meta(max_length=200)]


class StickerSetNotModified(TaggedRecord, frozen=True, tag="stickerSetNotModified"):
    """The set is as the client's hash says."""


class SavedGifs(TaggedRecord, frozen=True, tag="savedGifs"):
    """The saved GIFs, newest first, and the hash of that list."""

    hash: Int64
    gifs: Annotated[tuple[Media, ...], Meta(max_length=200)]


class SavedGifsNotModified(TaggedRecord, frozen=True, tag="savedGifsNotModified"):
    """The saved GIFs are as the client's hash says."""


AnyAllStickers = AllStickers | StickerSetsNotModified
AnyStickerSet = StickerSetContents | StickerSetNotModified
AnySavedGifs = SavedGifs | SavedGifsNotModified
ANY_ALL_STICKERS: WireType[AnyAllStickers] = WireType(AnyAllStickers, "result")
ANY_STICKER_SET: WireType[AnyStickerSet] = WireType(AnyStickerSet, "result")
ANY_SAVED_GIFS: WireType[AnySavedGifs] = WireType(AnySavedGifs, "result")


def documents_hash(documents: Iterable[Media]) -> int:
    """The hash of a list of stickers or GIFs: their ids in order."""
    return collection_hash(document.id for document in documents)


def set_hash(title: str, documents: Iterable[Media]) -> int:
    """A set's hash: its documents' ids in order, then its title."""
    return collection_hash([*(document.id for document in documents), text_hash(title)])
