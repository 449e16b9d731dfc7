"""Item collections: ordered collections of items, such as sticker packs and saved GIFs.

A collection is named by an ``ItemCollectionId`` (a namespace and an id), described by
an ``ItemCollectionInfo`` (title, short name, item count, the server's hash of its
contents) and holds ``ItemCollectionItem``s in index order. The infos of a namespace
form an ordered list (the order a picker shows the packs in); each collection's items
are stored apart, so listing the packs does not load every sticker (the seeds'
``ItemCollectionInfoTable`` and ``ItemCollectionItemTable``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError, InvalidArgumentError
from postbox.message import Media

__all__ = [
    "checked_infos",
    "checked_items",
    "ItemCollectionId",
    "ItemCollectionInfo",
    "ItemCollectionItem",
    "ItemCollectionNamespace",
]

_VERSION = 1
_INT32 = range(-(2**31), 2**31)
_INT64 = range(-(2**63), 2**63)
#: Item indexes: a collection's positions, from 0.
_INDEXES = range(2**31)
# Presence flags of the optional fields of a stored info and item.
_HAS_SHORT_NAME = 1 << 0
_HAS_ACCESS_HASH = 1 << 1
_HAS_KEYS = 1 << 0


class ItemCollectionNamespace(enum.IntEnum):
    """The kinds of collection: the installed sticker packs, and the saved GIFs (one
    collection)."""

    STICKER_PACKS = 0
    SAVED_GIFS = 1


class ItemCollectionId(NamedTuple):
    namespace: int
    id: int


@dataclass(frozen=True, slots=True)
class ItemCollectionInfo:
    """What a collection is: its title and short name (a pack's link name), how many
    items it holds, the server's hash of its contents (sent back to learn whether it
    changed) and the access hash that names it to the server."""

    title: str
    count: int = 0
    hash: int = 0
    short_name: str = ""
    access_hash: int = 0

    def encode(self, collection_id: int) -> bytes:
        present = 0
        optional: list[Any] = []
        if self.short_name:
            present |= _HAS_SHORT_NAME
            optional.append(self.short_name)
        if self.access_hash:
            present |= _HAS_ACCESS_HASH
            optional.append(self.access_hash)
        return pack(
            (_VERSION, present, collection_id, self.title, self.count, self.hash, *optional)
        )

    @classmethod
    def decode(cls, data: bytes) -> tuple[int, ItemCollectionInfo]:
        """The collection id and info of a stored info value."""
        fields = unpack(data, "item collection info")
        with decoding("item collection info"):
            version, present, collection_id, title, count, hash_, *rest = fields
            if version != _VERSION:
                raise CorruptValueError(f"stored item collection info has layout {version}")
            optional = iter(rest)
            short_name = next(optional) if present & _HAS_SHORT_NAME else ""
            access_hash = next(optional) if present & _HAS_ACCESS_HASH else 0
            _require_types((collection_id, int), (title, str), (count, int), (hash_, int),
                           (short_name, str), (access_hash, int))  # fmt: skip
            return collection_id, cls(title, count, hash_, short_name, access_hash)


@dataclass(frozen=True, slots=True)
class ItemCollectionItem:
    """One item at ``index`` in its collection: a sticker or GIF (``media``), and the keys
    it is found by (a sticker's emoji)."""

    index: int
    media: Media
    keys: tuple[str, ...] = ()

    def encode(self) -> bytes:
        if not self.keys:
            return pack((_VERSION, 0, self.media.encode()))
        return pack((_VERSION, _HAS_KEYS, self.media.encode(), self.keys))

    @classmethod
    def decode(cls, index: int, data: bytes) -> ItemCollectionItem:
        fields = unpack(data, "item collection item")
        with decoding("item collection item"):
            version, present, media, *rest = fields
            if version != _VERSION:
                raise CorruptValueError(f"stored item collection item has layout {version}")
            keys = tuple(rest[0]) if present & _HAS_KEYS else ()
            if any(type(key) is not str for key in keys):
                raise CorruptValueError("stored item collection item has a key that is no text")
            return cls(index, Media.decode(media), keys)


def _require_types(*fields: tuple[Any, type]) -> None:
    for value, kind in fields:
        if type(value) is not kind:
            raise CorruptValueError(
                f"stored item collection info holds {value!r} where a {kind.__name__} belongs"
            )


def _check_id(collection_id: object) -> ItemCollectionId:
    if (
        not isinstance(collection_id, tuple)
        or len(collection_id) != 2
        or not all(type(part) is int for part in collection_id)
        or collection_id[0] not in _INT32
        or collection_id[1] not in _INT64
    ):
        raise InvalidArgumentError(
            f"{collection_id!r} is not an item collection id (an int32 namespace, an int64 id)"
        )
    return ItemCollectionId(*collection_id)


def checked_infos(
    namespace: int, infos: Iterable[tuple[ItemCollectionId, ItemCollectionInfo]]
) -> list[tuple[ItemCollectionId, ItemCollectionInfo]]:
    """``infos`` as a list, each collection once and of ``namespace``; else an
    ``InvalidArgumentError`` saying what is wrong."""
    if type(namespace) is not int or namespace not in _INT32:
        raise InvalidArgumentError(f"{namespace!r} is not an item collection namespace")
    listed: list[tuple[ItemCollectionId, ItemCollectionInfo]] = []
    seen: set[ItemCollectionId] = set()
    for collection_id, info in infos:
        checked = _check_id(collection_id)
        if checked.namespace != namespace:
            raise InvalidArgumentError(f"collection {checked} is not of namespace {namespace}")
        if checked in seen:
            raise InvalidArgumentError(f"collection {checked} is listed twice")
        if not isinstance(info, ItemCollectionInfo):
            raise InvalidArgumentError(f"{info!r} is not an ItemCollectionInfo")
        seen.add(checked)
        listed.append((checked, info))
    return listed


def checked_items(
    collection_id: ItemCollectionId, items: Iterable[ItemCollectionItem]
) -> tuple[ItemCollectionId, list[ItemCollectionItem]]:
    """The collection id checked, and ``items`` as a list with distinct indexes from 0."""
    checked = _check_id(collection_id)
    listed = list(items)
    indexes = set()
    for item in listed:
        if not isinstance(item, ItemCollectionItem):
            raise InvalidArgumentError(f"{item!r} is not an ItemCollectionItem")
        if type(item.index) is not int or item.index not in _INDEXES:
            raise InvalidArgumentError(f"item index {item.index!r} is out of 0..2**31-1")
        if item.index in indexes:
            raise InvalidArgumentError(f"item index {item.index} is given twice in {checked}")
        indexes.add(item.index)
    return checked, listed
