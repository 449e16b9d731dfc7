"""The installed sticker sets and the saved GIFs, fetched with the hash of what is stored.

``ItemCollectionSync`` runs a round whenever it is asked (the engine asks on every
connection): getAllStickers with the hash of the stored sets' hashes, in their order; if
the list changed, getStickerSet for each set whose stored hash differs from the listed
one (and no other), then getSavedGifs with the stored GIFs' hash. What changed lands in
one Postbox transaction: the sets' ordered list (a set no longer listed goes with its
stickers), the stickers of each set fetched, the GIFs. An answer of "not modified"
writes nothing, so an unchanged account costs two small requests and no commit.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from postbox import (
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionItem,
    ItemCollectionNamespace,
    Postbox,
    Transaction,
)
from postbox.errors import is_final
from sync.engine.convert import media_from_wire
from sync.engine.crash_points import crash_point
from sync.engine.timing import Backoff, Timeouts
from sync.notifier import ChangeNotifier
from sync.protocol import (
    AllStickers,
    AnyAllStickers,
    AnySavedGifs,
    AnyStickerSet,
    GetAllStickers,
    GetSavedGifs,
    GetStickerSet,
    Media,
    ProtocolError,
    RpcError,
    SavedGifs,
    StickerSet,
    StickerSetContents,
    collection_hash,
)

__all__ = [
    "PACKS",
    "SAVED_GIFS",
    "SAVED_GIFS_TITLE",
    "ItemCollectionSync",
    "StoredCollections",
    "read_stored",
    "set_info",
]

log = logging.getLogger("postbox.sync")

PACKS = int(ItemCollectionNamespace.STICKER_PACKS)
#: The saved GIFs are one collection of their namespace.
SAVED_GIFS = ItemCollectionId(int(ItemCollectionNamespace.SAVED_GIFS), 0)
SAVED_GIFS_TITLE = "Saved GIFs"

Call = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class StoredCollections:
    """What the Postbox holds: the sets in order, and the saved GIFs' info."""

    sets: tuple[tuple[ItemCollectionId, ItemCollectionInfo], ...]
    gifs: ItemCollectionInfo | None

    def sets_hash(self) -> int:
        """The hash getAllStickers compares: the stored sets' own hashes in order."""
        return collection_hash(info.hash for _, info in self.sets)


def read_stored(tx: Transaction) -> StoredCollections:
    return StoredCollections(
        tuple(tx.get_item_collection_infos(PACKS)), tx.get_item_collection_info(SAVED_GIFS)
    )


def set_info(found: StickerSet) -> ItemCollectionInfo:
    """How a set's info is stored."""
    return ItemCollectionInfo(
        found.title, found.count, found.hash, found.short_name, found.access_hash
    )


def _items(documents: Sequence[Media]) -> list[ItemCollectionItem]:
    return [
        ItemCollectionItem(
            index,
            media_from_wire(document),
            (document.glyph.emoji,) if document.glyph is not None else (),
        )
        for index, document in enumerate(documents)
    ]


@dataclass(slots=True)
class _Changes:
    """What one round learned and will write: the sets' list if it changed, each fetched
    set's stickers, the GIFs if they changed."""

    sets: list[tuple[ItemCollectionId, ItemCollectionInfo]] | None = None
    stickers: dict[ItemCollectionId, list[ItemCollectionItem]] = field(default_factory=dict)
    gifs: SavedGifs | None = None

    def apply(self, tx: Transaction) -> None:
        if self.sets is not None:
            tx.replace_item_collection_infos(PACKS, self.sets)
        for collection_id, items in self.stickers.items():
            tx.replace_item_collection_items(collection_id, items)
        if self.gifs is not None:
            info = ItemCollectionInfo(SAVED_GIFS_TITLE, len(self.gifs.gifs), self.gifs.hash)
            tx.replace_item_collection_infos(SAVED_GIFS.namespace, [(SAVED_GIFS, info)])
            tx.replace_item_collection_items(SAVED_GIFS, _items(self.gifs.gifs))


class ItemCollectionSync:
    """Keeps the stored sticker sets and saved GIFs equal to the server's."""

    def __init__(
        self,
        postbox: Postbox,
        call: Call,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        changes: ChangeNotifier | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.postbox = postbox
        self._call = call
        self.timeouts = timeouts
        self.changes = changes or ChangeNotifier()
        self._rng = rng or random.Random()
        self._wake = asyncio.Event()
        self._requested = False
        self._running = False
        #: Rounds completed; sets whose stickers were fetched; "not modified" answers.
        self.rounds = 0
        self.sets_fetched = 0
        self.not_modified = 0
        #: The last failure, until a round completes again (for the status line).
        self.problem: str | None = None

    @property
    def idle(self) -> bool:
        return not (self._requested or self._running)

    def request(self, reason: str) -> None:
        """Run a round soon (on a connection, or when the app asks)."""
        log.debug("sticker sets requested: %s", reason)
        self._requested = True
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            backoff = Backoff(self.timeouts.retry_min, self.timeouts.retry_max, self._rng)
            while self._requested:
                self._requested = False
                self._running = True
                try:
                    await self.sync_once()
                    backoff.reset()
                    self.problem = None
                except (RpcError, ConnectionError, OSError) as error:
                    self._requested = True
                    pause = backoff.next()
                    log.info("sticker sets: retrying in %.1f s: %s", pause, error)
                    await asyncio.sleep(pause)
                except Exception as error:
                    # The database full or locked, a broken answer: shown, and tried again.
                    if is_final(error):  # the database is damaged: the engine stops
                        raise
                    self._requested = True
                    pause = backoff.next()
                    self.problem = f"fetching sticker sets failed: {error}"
                    log.error("%s; retrying in %.1f s", self.problem, pause)
                    self.changes.notify()
                    await asyncio.sleep(pause)
                finally:
                    self._running = False
                    self.changes.notify()

    async def _read(self, fn: Callable[[Transaction], Any]) -> Any:
        return await asyncio.wrap_future(self.postbox.transaction(fn))

    async def sync_once(self) -> bool:
        """One round; ``True`` if it wrote anything."""
        stored: StoredCollections = await self._read(read_stored)
        found = _Changes()
        listed: AnyAllStickers = await self._call(GetAllStickers(stored.sets_hash()))
        crash_point("sticker_sets.sync_once.list_answered")
        if isinstance(listed, AllStickers):
            found.sets = await self._fetch_sets(listed, stored, found)
        else:
            self.not_modified += 1
        known_gifs = 0 if stored.gifs is None else stored.gifs.hash
        gifs: AnySavedGifs = await self._call(GetSavedGifs(known_gifs))
        crash_point("sticker_sets.sync_once.gifs_answered")
        if isinstance(gifs, SavedGifs):
            found.gifs = gifs
        else:
            self.not_modified += 1
        self.rounds += 1
        if found.sets is None and found.gifs is None:
            return False
        await self._read(found.apply)
        crash_point("sticker_sets.sync_once.stored")
        return True

    async def _fetch_sets(
        self, listed: AllStickers, stored: StoredCollections, found: _Changes
    ) -> list[tuple[ItemCollectionId, ItemCollectionInfo]]:
        """The sets' new list, fetching the stickers of each set whose hash moved."""
        known = {collection_id.id: info for collection_id, info in stored.sets}
        infos = []
        for listed_set in listed.sets:
            collection_id = ItemCollectionId(PACKS, listed_set.id)
            before = known.get(listed_set.id)
            if before is not None and before.hash == listed_set.hash:
                infos.append((collection_id, before))  # unchanged: not asked again
                continue
            answer: AnyStickerSet = await self._call(
                GetStickerSet(
                    listed_set.id, listed_set.access_hash, 0 if before is None else before.hash
                )
            )
            crash_point("sticker_sets.fetch_sets.set_answered")
            if isinstance(answer, StickerSetContents):
                self.sets_fetched += 1
                found.stickers[collection_id] = _items(answer.documents)
                infos.append((collection_id, set_info(answer.set)))
            elif before is None:
                raise ProtocolError(f"sticker set {listed_set.id} was 'not modified' from nothing")
            else:
                # The set changed back to what is stored since it was listed.
                self.not_modified += 1
                infos.append((collection_id, before))
        return infos
