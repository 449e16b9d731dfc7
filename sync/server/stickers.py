"""The server's sticker sets and saved GIFs: drawn once from the seed, kept in its file.

A sticker or GIF is a document: an id, an emoji, a shape and a colour (``Glyph``), so a
client draws it without any image file. The account has a few installed sets, each a
themed run of emoji on one shape in a palette of colours, and a few saved GIFs. They are
generated the first time a store is served under a seed (an older file gains them
then) and never change afterwards, so their hashes (``sync.protocol.stickers``) stay
equal and a client that has them is told "not modified".
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from sync.protocol import (
    AllStickers,
    AnyAllStickers,
    AnySavedGifs,
    AnyStickerSet,
    ErrorCode,
    GetStickerSet,
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    ProtocolError,
    SavedGifs,
    SavedGifsNotModified,
    StickerSet,
    StickerSetContents,
    StickerSetNotModified,
    StickerSetsNotModified,
    collection_hash,
    documents_hash,
    set_hash,
)
from sync.server.database import ServerDatabase

__all__ = ["GIF_POOL", "STICKER_THEMES", "StickerStore"]

#: Themes a set is drawn from: a title and its emoji, one per sticker.
STICKER_THEMES: tuple[tuple[str, str], ...] = (
    ("Cats and Dogs", "🐱🐶😺🐕🐈🐾😸🐩🙀🦮"),
    ("Food Fest", "🍕🍔🍣🍩🍜🌮🥐🍰🍦🥨"),
    ("Party Time", "🎉🥳🎂🎈🎁🍾🎊🪅🕺💃"),
    ("Space Trip", "🚀🪐🌟👽🛸🌌🌍🌙🔭👾"),
    ("Reactions", "👍👎😂😮😢😡🔥👏🙏🤔"),
    ("Sports Day", "⚽🏀🏈🎾🏐🏓🥊🏆🚴🏊"),
    ("Green Things", "🌵🌻🌷🍀🌲🍄🌴🌱🥦🐸"),
    ("Sea Life", "🐳🐙🦀🐠🐬🦈🐚🐢🦑🌊"),
)
#: What saved GIFs show.
GIF_POOL = "🎬🤖🐧🦄🏄🎸🐼🌋🎯🧊"
#: Colours stickers are drawn in (0xRRGGBB), soft enough for a light and a dark theme.
_PALETTE = (
    0xF4A261, 0xE76F51, 0x2A9D8F, 0xE9C46A, 0x8AB17D, 0x6C8EBF, 0xB48EAD, 0xF28482,
    0x84A59D, 0xF6BD60, 0x9D8DF1, 0x5FA8D3,
)  # fmt: skip
_SET_SHAPES = (GlyphShape.CIRCLE, GlyphShape.ROUNDED_SQUARE, GlyphShape.DIAMOND,
               GlyphShape.HEXAGON, GlyphShape.STAR)  # fmt: skip
#: Sets an account has installed, and stickers in each.
_SETS = (3, 5)
_STICKERS_PER_SET = (6, 10)
_GIFS = (5, 8)
_ID_BITS = 62

_COLUMNS = "id, kind, set_id, position, emoji, shape, colour"


class StickerStore:
    """The sticker sets and saved GIFs in the server database ``db``."""

    def __init__(self, db: ServerDatabase) -> None:
        self._db = db

    # -- generating ------------------------------------------------------------------

    def ensure_seeded(self, seed: int) -> None:
        """Generate the account's sets and GIFs from ``seed`` unless the file has some."""
        if self._db.one("SELECT 1 FROM sticker_sets LIMIT 1") is not None:
            return
        rng = random.Random(f"stickers:{seed}")
        themes = rng.sample(STICKER_THEMES, rng.randint(*_SETS))
        sets: list[tuple[Any, ...]] = []
        documents: list[tuple[Any, ...]] = []
        for position, (title, emoji) in enumerate(themes):
            set_id = rng.getrandbits(_ID_BITS) + 1
            short_name = "".join(c for c in title.lower() if c.isalnum()) + str(rng.randint(1, 99))
            sets.append((set_id, position, rng.getrandbits(_ID_BITS), title, short_name))
            shape = rng.choice(_SET_SHAPES)
            count = rng.randint(*_STICKERS_PER_SET)
            for index, symbol in enumerate(list(emoji)[:count]):
                documents.append(
                    (rng.getrandbits(_ID_BITS) + 1, str(MediaKind.STICKER), set_id, index, symbol,
                     str(shape), rng.choice(_PALETTE))
                )  # fmt: skip
        for index, symbol in enumerate(rng.sample(list(GIF_POOL), rng.randint(*_GIFS))):
            documents.append(
                (rng.getrandbits(_ID_BITS) + 1, str(MediaKind.GIF), 0, index, symbol,
                 str(GlyphShape.ROUNDED_SQUARE), rng.choice(_PALETTE))
            )  # fmt: skip
        with self._db.transaction():
            self._db.execute_many("INSERT INTO sticker_sets VALUES (?, ?, ?, ?, ?)", sets)
            self._db.execute_many(
                f"INSERT INTO sticker_documents ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                documents,
            )

    # -- reading ---------------------------------------------------------------------

    def _documents(self, where: str, bindings: Sequence[Any]) -> list[Media]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM sticker_documents WHERE {where} ORDER BY position",  # noqa: S608
            bindings,
        )
        return [_document(row) for row in rows]

    def _set(self, row: Sequence[Any]) -> tuple[StickerSet, list[Media]]:
        set_id, access_hash, title, short_name = row
        documents = self._documents("set_id = ? AND kind = ?", (set_id, str(MediaKind.STICKER)))
        return (
            StickerSet(
                set_id, access_hash, title, short_name, len(documents), set_hash(title, documents)
            ),
            documents,
        )

    def sets(self) -> list[tuple[StickerSet, list[Media]]]:
        """The installed sets in their order, each with its stickers."""
        rows = self._db.execute(
            "SELECT id, access_hash, title, short_name FROM sticker_sets ORDER BY position"
        )
        return [self._set(row) for row in rows]

    def gifs(self) -> list[Media]:
        """The saved GIFs, newest first."""
        return self._documents("set_id = 0 AND kind = ?", (str(MediaKind.GIF),))

    def document(self, document_id: int) -> Media | None:
        """The sticker or GIF ``document_id``, if the server has it."""
        found = self._documents("id = ?", (document_id,))
        return found[0] if found else None

    # -- the methods -----------------------------------------------------------------

    def all_stickers(self, known_hash: int) -> AnyAllStickers:
        sets = [found for found, _ in self.sets()]
        current = collection_hash(found.hash for found in sets)
        if known_hash and known_hash == current:
            return StickerSetsNotModified()
        return AllStickers(current, tuple(sets))

    def sticker_set(self, request: GetStickerSet) -> AnyStickerSet:
        row = self._db.one(
            "SELECT id, access_hash, title, short_name FROM sticker_sets WHERE id = ?",
            (request.id,),
        )
        if row is None or row[1] != request.access_hash:
            raise ProtocolError(
                f"no sticker set {request.id} with that access hash", ErrorCode.STICKERSET_INVALID
            )
        found, documents = self._set(row)
        if request.hash and request.hash == found.hash:
            return StickerSetNotModified()
        return StickerSetContents(found, tuple(documents))

    def saved_gifs(self, known_hash: int) -> AnySavedGifs:
        gifs = self.gifs()
        current = documents_hash(gifs)
        if known_hash and known_hash == current:
            return SavedGifsNotModified()
        return SavedGifs(current, tuple(gifs))

    def checked_media(self, media: Sequence[Media], text: str) -> tuple[Media, ...]:
        """``media`` with each sticker and GIF as the server has it; ``MEDIA_INVALID`` if one
        is unknown, or a sticker comes with anything else (text or other media)."""
        checked = []
        for item in media:
            if item.kind not in (MediaKind.STICKER, MediaKind.GIF):
                checked.append(item)
                continue
            document = self.document(item.id)
            if document is None or document.kind is not item.kind:
                raise ProtocolError(
                    f"no {item.kind} {item.id} on this server", ErrorCode.MEDIA_INVALID
                )
            if item.kind is MediaKind.STICKER and (len(media) > 1 or text.strip()):
                raise ProtocolError(
                    "a sticker is sent alone, without text or other media", ErrorCode.MEDIA_INVALID
                )
            checked.append(document)
        return tuple(checked)


def _document(row: Sequence[Any]) -> Media:
    document_id, kind, set_id, _position, emoji, shape, colour = row
    return Media(MediaKind(kind), document_id, 0, None, None,
                 Glyph(emoji, GlyphShape(shape), colour, set_id))  # fmt: skip
