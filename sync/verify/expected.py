"""What the client must have stored for a server record, derived here from the protocol's
definitions and not by the sync engine's converters: a converter that drops or mangles a
field then shows as a divergence instead of agreeing with itself."""

from __future__ import annotations

from typing import Any

import postbox
from postbox import ForwardInfo, MessageFlags, MessageTags, PeerId, PeerPresence
from sync.protocol import Glyph, Media, MediaKind, Message, Presence, PresenceStatus

__all__ = [
    "MEDIA_TAGS",
    "expected_glyph",
    "expected_media",
    "expected_message",
    "expected_presence",
    "stored_message",
]

#: Each wire media kind: the kind postbox stores and the shared-media tag it files under
#: (stickers and GIFs under none).
_MEDIA: dict[MediaKind, tuple[postbox.MediaKind, int]] = {
    MediaKind.PHOTO: (postbox.MediaKind.PHOTO, MessageTags.PHOTO),
    MediaKind.VIDEO: (postbox.MediaKind.VIDEO, MessageTags.VIDEO),
    MediaKind.FILE: (postbox.MediaKind.FILE, MessageTags.FILE),
    MediaKind.LINK: (postbox.MediaKind.LINK, MessageTags.LINK),
    MediaKind.VOICE: (postbox.MediaKind.VOICE, MessageTags.VOICE),
    MediaKind.STICKER: (postbox.MediaKind.STICKER, 0),
    MediaKind.GIF: (postbox.MediaKind.GIF, 0),
}
#: The shared-media tag of each tagged wire media kind, in the order the counts are checked.
MEDIA_TAGS: dict[MediaKind, int] = {kind: int(tag) for kind, (_, tag) in _MEDIA.items() if tag}
_PRESENCE = {
    PresenceStatus.ONLINE: postbox.PresenceStatus.ONLINE,
    PresenceStatus.OFFLINE: postbox.PresenceStatus.OFFLINE,
    PresenceStatus.RECENTLY: postbox.PresenceStatus.RECENTLY,
    PresenceStatus.LONG_AGO: postbox.PresenceStatus.LONG_AGO,
}


def stored_message(message: postbox.Message) -> tuple[Any, ...]:
    """The fields of a stored message that must equal the server's."""
    return (
        message.timestamp,
        message.flags,
        message.tags,
        None if message.author_id is None else int(message.author_id),
        message.text,
        tuple(message.media),
        message.reply_to_id,
        message.edit_timestamp,
        message.forward_info,
    )


def expected_message(message: Message) -> tuple[Any, ...]:
    """``stored_message`` of the message the client must hold for ``message``."""
    tags = 0
    media = []
    for item in message.media:
        kind, tag = _MEDIA[item.kind]
        tags |= tag
        media.append(
            postbox.Media(
                kind, item.id, item.size, item.url, item.title, expected_glyph(item.glyph)
            )
        )
    forward = message.forward
    return (
        message.date,
        0 if message.out else int(MessageFlags.INCOMING),
        tags,
        message.author,
        message.text,
        tuple(media),
        message.reply_to,
        message.edit_date,
        None
        if forward is None
        else ForwardInfo(
            PeerId(forward.author),
            forward.date,
            None if forward.channel is None else PeerId(forward.channel),
            forward.channel_post,
        ),
    )


def expected_media(item: Media) -> postbox.Media:
    """The media item the client must store for ``item``."""
    kind = _MEDIA[item.kind][0]
    return postbox.Media(kind, item.id, item.size, item.url, item.title, expected_glyph(item.glyph))


def expected_glyph(glyph: Glyph | None) -> postbox.Glyph | None:
    """The glyph a sticker or GIF must be stored with (shapes match by name)."""
    if glyph is None:
        return None
    return postbox.Glyph(
        glyph.emoji, postbox.GlyphShape[glyph.shape.name], glyph.colour, glyph.set_id
    )


def expected_presence(presence: Presence) -> PeerPresence:
    return PeerPresence(_PRESENCE[presence.status], presence.timestamp)
