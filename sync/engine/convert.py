"""Wire records to postbox values: messages, peers, presences, read states, dialogs; and
media (a sticker or GIF's glyph with it) back to the wire, for sending."""

from __future__ import annotations

import postbox
from postbox import (
    MessageFlags,
    MessageNamespace,
    MessageTags,
    PeerId,
    PeerPresence,
    PeerReadState,
    StoreMessage,
)
from sync.protocol import (
    MAX_TEXT,
    Dialog,
    DraftMessage,
    ForwardHeader,
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    Message,
    Peer,
    Presence,
    PresenceStatus,
)

__all__ = [
    "CLOUD",
    "draft_from_wire",
    "synced_part",
    "forward_from_wire",
    "media_from_wire",
    "media_to_wire",
    "message_from_wire",
    "peer_from_wire",
    "presence_from_wire",
    "read_state_from_dialog",
    "tags_of",
]

CLOUD = int(MessageNamespace.CLOUD)

_MEDIA_KINDS = {
    MediaKind.PHOTO: postbox.MediaKind.PHOTO,
    MediaKind.VIDEO: postbox.MediaKind.VIDEO,
    MediaKind.FILE: postbox.MediaKind.FILE,
    MediaKind.VOICE: postbox.MediaKind.VOICE,
    MediaKind.LINK: postbox.MediaKind.LINK,
    MediaKind.STICKER: postbox.MediaKind.STICKER,
    MediaKind.GIF: postbox.MediaKind.GIF,
}
_WIRE_KINDS = {kind: wire for wire, kind in _MEDIA_KINDS.items()}
_SHAPES = {shape: postbox.GlyphShape[shape.name] for shape in GlyphShape}
_WIRE_SHAPES = {shape: wire for wire, shape in _SHAPES.items()}
#: The shared-media tag of each media kind; stickers and GIFs are filed under none.
_MEDIA_TAGS = {
    MediaKind.PHOTO: MessageTags.PHOTO,
    MediaKind.VIDEO: MessageTags.VIDEO,
    MediaKind.FILE: MessageTags.FILE,
    MediaKind.VOICE: MessageTags.VOICE,
    MediaKind.LINK: MessageTags.LINK,
}
_PRESENCE = {
    PresenceStatus.ONLINE: postbox.PresenceStatus.ONLINE,
    PresenceStatus.OFFLINE: postbox.PresenceStatus.OFFLINE,
    PresenceStatus.RECENTLY: postbox.PresenceStatus.RECENTLY,
    PresenceStatus.LONG_AGO: postbox.PresenceStatus.LONG_AGO,
}


def tags_of(media: tuple[Media, ...]) -> int:
    """The shared-media tags of a message with ``media``."""
    tags = 0
    for item in media:
        tags |= _MEDIA_TAGS.get(item.kind, 0)
    return tags


def media_from_wire(item: Media) -> postbox.Media:
    glyph = item.glyph
    return postbox.Media(
        _MEDIA_KINDS[item.kind],
        item.id,
        item.size,
        item.url,
        item.title,
        None
        if glyph is None
        else postbox.Glyph(glyph.emoji, _SHAPES[glyph.shape], glyph.colour, glyph.set_id),
    )


def media_to_wire(item: postbox.Media) -> Media:
    """A stored media item as a request carries it (a sticker to send)."""
    glyph = item.glyph
    return Media(
        _WIRE_KINDS[item.kind],
        item.id,
        item.size,
        item.url,
        item.title,
        None
        if glyph is None
        else Glyph(glyph.emoji, _WIRE_SHAPES[glyph.shape], glyph.colour, glyph.set_id),
    )


def message_from_wire(message: Message) -> StoreMessage:
    """The message as postbox stores it, in the cloud namespace."""
    return StoreMessage(
        PeerId(message.peer),
        CLOUD,
        message.id,
        message.date,
        flags=0 if message.out else int(MessageFlags.INCOMING),
        tags=tags_of(message.media),
        author_id=None if message.author is None else PeerId(message.author),
        text=message.text,
        media=tuple(media_from_wire(item) for item in message.media),
        reply_to_id=message.reply_to,
        edit_timestamp=message.edit_date,
        forward_info=None if message.forward is None else forward_from_wire(message.forward),
    )


def forward_from_wire(header: ForwardHeader) -> postbox.ForwardInfo:
    return postbox.ForwardInfo(
        PeerId(header.author),
        header.date,
        None if header.channel is None else PeerId(header.channel),
        header.channel_post,
    )


def peer_from_wire(peer: Peer) -> postbox.Peer:
    return postbox.Peer(PeerId(peer.id), peer.name, peer.username, peer.access_hash, peer.flags)


def presence_from_wire(presence: Presence) -> tuple[PeerId, PeerPresence]:
    return PeerId(presence.user), PeerPresence(_PRESENCE[presence.status], presence.timestamp)


def read_state_from_dialog(dialog: Dialog) -> PeerReadState:
    return PeerReadState(
        dialog.read_inbox_max_id,
        dialog.read_outbox_max_id,
        dialog.top_message,
        dialog.unread_count,
        False,
    )


def draft_from_wire(draft: DraftMessage | None) -> postbox.SynchronizeableDraft | None:
    if draft is None:
        return None
    return postbox.SynchronizeableDraft(draft.text, draft.reply_to, draft.date)


def synced_part(draft: postbox.SynchronizeableDraft | None) -> tuple[str, int | None] | None:
    """What of a draft the server keeps: its text up to a message's length (a longer one
    stays whole on this device only) and the message it answers."""
    if draft is None:
        return None
    return draft.text[:MAX_TEXT], draft.reply_to_id
