"""Messages as stored and as read back, with their flags, tags and media."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgpack

from postbox.coding import pack
from postbox.errors import CorruptValueError
from postbox.ids import MessageId, MessageIndex, PeerId

__all__ = [
    "ForwardInfo",
    "Glyph",
    "GlyphShape",
    "Media",
    "MediaKind",
    "Message",
    "MessageFlags",
    "MessageTags",
    "StoreMessage",
]


class MessageFlags(enum.IntFlag):
    INCOMING = 1 << 0
    UNSENT = 1 << 1
    FAILED = 1 << 2


class MessageTags(enum.IntFlag):
    """Shared-media categories; one bit each, so a message can carry several."""

    PHOTO = 1 << 0
    VIDEO = 1 << 1
    FILE = 1 << 2
    LINK = 1 << 3
    VOICE = 1 << 4

    @classmethod
    def split(cls, tags: int) -> tuple[int, ...]:
        """The single-bit tags set in ``tags``, lowest first."""
        tags = int(tags)
        if not tags & (tags - 1):
            return (tags,) if tags else ()
        bits: list[int] = []
        while tags:
            bit = tags & -tags
            bits.append(bit)
            tags ^= bit
        return tuple(bits)


class MediaKind(enum.IntEnum):
    PHOTO = 0
    VIDEO = 1
    FILE = 2
    VOICE = 3
    LINK = 4
    STICKER = 5
    GIF = 6


class GlyphShape(enum.IntEnum):
    """The shape a sticker or GIF is drawn on."""

    CIRCLE = 0
    ROUNDED_SQUARE = 1
    DIAMOND = 2
    HEXAGON = 3
    STAR = 4


@dataclass(frozen=True, slots=True)
class Glyph:
    """How a sticker or GIF looks here, with no image file: an emoji on a coloured shape.

    ``colour`` is 0xRRGGBB; ``set_id`` names the sticker set it comes from (0: none, as
    for a GIF), as Telegram's sticker attribute names its pack.
    """

    emoji: str
    shape: GlyphShape
    colour: int
    set_id: int = 0

    def encode(self) -> tuple[Any, ...]:
        return (self.emoji, int(self.shape), self.colour, self.set_id)

    @classmethod
    def decode(cls, data: Any) -> Glyph:
        emoji, shape, colour, set_id = data
        if type(emoji) is not str or type(colour) is not int or type(set_id) is not int:
            raise TypeError(f"a glyph holds {data!r}")
        return cls(emoji, _GLYPH_SHAPES[shape], colour, set_id)


_GLYPH_SHAPES = tuple(GlyphShape)


@dataclass(frozen=True, slots=True)
class Media:
    """A media item; a sticker or GIF carries the ``glyph`` it is drawn as."""

    kind: MediaKind
    id: int
    size: int = 0
    url: str | None = None
    title: str | None = None
    glyph: Glyph | None = None

    def encode(self) -> tuple[Any, ...]:
        if self.glyph is None:  # the layout from before glyphs: stored bytes unchanged
            return (int(self.kind), self.id, self.size, self.url, self.title)
        return (int(self.kind), self.id, self.size, self.url, self.title, self.glyph.encode())

    @classmethod
    def decode(cls, data: Any) -> Media:
        kind, media_id, size, url, title, *rest = data
        if not rest:
            return cls(_MEDIA_KINDS[kind], media_id, size, url, title)
        (glyph,) = rest
        return cls(_MEDIA_KINDS[kind], media_id, size, url, title, Glyph.decode(glyph))


_MEDIA_KINDS = tuple(MediaKind)


@dataclass(frozen=True, slots=True)
class ForwardInfo:
    """Where a forwarded message comes from: its first author and date, and for a channel
    post the channel and the post's id there (the seeds' ``StoreMessageForwardInfo``)."""

    author_id: int
    timestamp: int
    source_id: int | None = None
    source_message_id: int | None = None

    def encode(self) -> tuple[Any, ...]:
        return (int(self.author_id), self.timestamp, self.source_id, self.source_message_id)

    @classmethod
    def decode(cls, data: Any) -> ForwardInfo:
        author_id, timestamp, source_id, source_message_id = data
        return cls(PeerId(author_id), timestamp, source_id, source_message_id)


# Presence flags of the optional fields of a stored message.
_HAS_MEDIA = 1 << 0
_HAS_REPLY = 1 << 1
_HAS_EDIT = 1 << 2
_HAS_UNIQUE_ID = 1 << 3
_HAS_THREAD = 1 << 4
_HAS_FORWARD = 1 << 5
_VERSION = 1

_unpackb = msgpack.unpackb
_new_message = tuple.__new__
_NO_EXTRAS = ((), None, None, None, None)


class StoreMessage(NamedTuple):
    """A message to store. ``id=None`` asks postbox for the next local id of its namespace.

    Messages are tuples, not frozen dataclasses: a chat reads and writes them by the
    thousand, and a tuple is built several times faster. Change one with ``_replace``.
    """

    peer_id: PeerId
    namespace: int
    id: int | None
    timestamp: int
    flags: int = 0
    tags: int = 0
    author_id: int | None = None
    text: str = ""
    media: tuple[Media, ...] = ()
    reply_to_id: int | None = None
    edit_timestamp: int | None = None
    globally_unique_id: int | None = None
    thread_id: int | None = None
    forward_info: ForwardInfo | None = None

    def encode(self) -> bytes:
        """The stored value; the id and timestamp live in the key."""
        (_, _, _, _, flags, tags, author_id, text, media, reply, edit, unique, thread, forward) = (
            self
        )
        if (
            not media
            and reply is None
            and edit is None
            and unique is None
            and thread is None
            and forward is None
        ):
            return pack((_VERSION, 0, flags, tags, author_id, text))
        present = 0
        optional: list[Any] = []
        if media:
            present |= _HAS_MEDIA
            optional.append([m.encode() for m in media])
        if reply is not None:
            present |= _HAS_REPLY
            optional.append(reply)
        if edit is not None:
            present |= _HAS_EDIT
            optional.append(edit)
        if unique is not None:
            present |= _HAS_UNIQUE_ID
            optional.append(unique)
        if thread is not None:
            present |= _HAS_THREAD
            optional.append(thread)
        if forward is not None:
            present |= _HAS_FORWARD
            optional.append(forward.encode())
        return pack((_VERSION, present, flags, tags, author_id, text, *optional))


class Message(NamedTuple):
    """A stored message as read back from the history table (a tuple, as ``StoreMessage``)."""

    index: MessageIndex  # type: ignore[assignment]  # shadows tuple.index on purpose
    flags: int
    tags: int
    author_id: int | None
    text: str
    media: tuple[Media, ...] = ()
    reply_to_id: int | None = None
    edit_timestamp: int | None = None
    globally_unique_id: int | None = None
    thread_id: int | None = None
    forward_info: ForwardInfo | None = None

    @property
    def id(self) -> MessageId:
        return self.index.id

    @property
    def peer_id(self) -> PeerId:
        return self.index.id.peer_id

    @property
    def timestamp(self) -> int:
        return self.index.timestamp

    @property
    def incoming(self) -> bool:
        return bool(self.flags & MessageFlags.INCOMING)

    @classmethod
    def decode(cls, index: MessageIndex, data: bytes) -> Message:
        try:
            fields = _unpackb(data, raw=False, use_list=False)
            version, present, flags, tags, author_id, text = fields[:6]
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            raise CorruptValueError(f"message {index.id} cannot be decoded: {exc}") from exc
        if version != _VERSION:
            raise CorruptValueError(f"message {index.id} has unknown layout {version}")
        if not present:
            return _new_message(
                cls, (index, flags, tags, author_id, text, (), None, None, None, None, None)
            )
        try:
            rest = iter(fields[6:])
            media = tuple(Media.decode(m) for m in next(rest)) if present & _HAS_MEDIA else ()
            reply_to_id = next(rest) if present & _HAS_REPLY else None
            edit_timestamp = next(rest) if present & _HAS_EDIT else None
            unique_id = next(rest) if present & _HAS_UNIQUE_ID else None
            thread_id = next(rest) if present & _HAS_THREAD else None
            forward = ForwardInfo.decode(next(rest)) if present & _HAS_FORWARD else None
        except (ValueError, TypeError, IndexError, StopIteration) as exc:
            raise CorruptValueError(f"message {index.id} is malformed: {exc}") from exc
        return cls(
            index,
            flags,
            tags,
            author_id,
            text,
            media,
            reply_to_id,
            edit_timestamp,
            unique_id,
            thread_id,
            forward,
        )

    def to_store(self) -> StoreMessage:
        """The message as a ``StoreMessage``, to be changed with ``dataclasses.replace``."""
        message_id = self.index.id
        return StoreMessage(
            message_id.peer_id,
            message_id.namespace,
            message_id.id,
            self.index.timestamp,
            self.flags,
            self.tags,
            self.author_id,
            self.text,
            self.media,
            self.reply_to_id,
            self.edit_timestamp,
            self.globally_unique_id,
            self.thread_id,
            self.forward_info,
        )
