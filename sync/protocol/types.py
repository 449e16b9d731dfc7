"""The records the client and server exchange: peers, messages, updates, results.

Peer ids on the wire are the same int64 as postbox's ``PeerId``: the kind in the top
byte (0 user, 1 group, 2 channel, 3 secret chat), the id in the low 56 bits. Private
chats and groups share one message-id sequence and one ``pts`` (the account's); each
channel numbers its own messages and has its own ``pts``, as on Telegram. A secret
chat numbers its own messages too, and its new messages move the account's ``qts``, a
third counter: one point per message, applied when ``local_qts + 1 == qts``.

An update that moves a ``pts`` says where it ends (``pts``) and how many points it
covers (``pts_count``): it applies when ``local_pts + pts_count == pts``, is old when
``local_pts >= pts``, and reveals a gap otherwise.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar

from msgspec import Meta

from sync.protocol.schema import (
    Counter,
    Date,
    Int64,
    ListOf,
    MessageDate,
    MessageRef,
    PeerRef,
    TaggedRecord,
    Text,
    WireRecord,
    WireType,
)

__all__ = [
    "ANY_CHANNEL_DIFFERENCE",
    "ANY_DIFFERENCE",
    "ANY_UPDATE",
    "ANY_UPDATES",
    "PEER_ID_MAX",
    "AnyChannelDifference",
    "AnyDifference",
    "AnyUpdate",
    "AnyUpdates",
    "ChannelDifference",
    "ChannelDifferenceEmpty",
    "ChannelDifferenceTooLong",
    "ChannelPts",
    "Dialog",
    "DraftMessage",
    "Difference",
    "DifferenceEmpty",
    "DifferenceSlice",
    "DifferenceTooLong",
    "ForwardHeader",
    "FullPeer",
    "Glyph",
    "GlyphShape",
    "Media",
    "MediaKind",
    "Message",
    "Peer",
    "PeerKind",
    "Presence",
    "PresenceStatus",
    "ShortMessage",
    "State",
    "UpdateChannel",
    "UpdateChannelTooLong",
    "UpdateContact",
    "UpdateDeleteChannelMessages",
    "UpdateDeleteMessages",
    "UpdateDraftMessage",
    "UpdateEditChannelMessage",
    "UpdateEditMessage",
    "UpdateNewChannelMessage",
    "UpdateNewEncryptedMessage",
    "UpdateNewMessage",
    "UpdatePeer",
    "UpdateReadChannelInbox",
    "UpdateReadHistoryInbox",
    "UpdateNotifySettings",
    "UpdateReadHistoryOutbox",
    "UpdateUserStatus",
    "Updates",
    "UpdatesTooLong",
    "decode_channel_difference",
    "decode_difference",
    "decode_update",
    "decode_updates",
    "make_peer_id",
    "peer_kind",
]

_KIND_SHIFT = 56
PEER_ID_MAX = 2**63 - 1


class PeerKind(enum.IntEnum):
    USER = 0
    GROUP = 1
    CHANNEL = 2
    #: An end-to-end chat with one user, opened on this device. This server keeps its
    #: messages as well (so a reinstall can fill its history); what matters for sync is
    #: that its new messages travel in the qts stream, not in a pts one.
    SECRET = 3


def make_peer_id(kind: PeerKind, local_id: int) -> int:
    return (int(kind) << _KIND_SHIFT) | local_id


def peer_kind(peer_id: int) -> PeerKind | None:
    """The kind of a wire peer id, or ``None`` if its top byte names no kind."""
    try:
        return PeerKind(peer_id >> _KIND_SHIFT)
    except ValueError:
        return None


class MediaKind(enum.StrEnum):
    PHOTO = "photo"
    VIDEO = "video"
    FILE = "file"
    VOICE = "voice"
    LINK = "link"
    STICKER = "sticker"
    GIF = "gif"


class GlyphShape(enum.StrEnum):
    CIRCLE = "circle"
    ROUNDED_SQUARE = "rounded_square"
    DIAMOND = "diamond"
    HEXAGON = "hexagon"
    STAR = "star"


class PresenceStatus(enum.StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"
    RECENTLY = "recently"
    LONG_AGO = "long_ago"


# -- entities -------------------------------------------------------------------


class Peer(WireRecord, frozen=True):
    """A user, group or channel. ``flags``: 1 verified, 2 bot, 4 broadcast, 8 self,
    16 the account may post in this broadcast channel (its creator or an admin)."""

    id: PeerRef
    name: Annotated[str, Meta(max_length=256)]
    username: Annotated[str, Meta(max_length=64)] | None = None
    access_hash: Int64 = 0
    flags: Counter = 0

    BROADCAST: ClassVar[int] = 4
    CAN_POST: ClassVar[int] = 16

    @property
    def kind(self) -> PeerKind | None:
        return peer_kind(self.id)

    @property
    def can_post(self) -> bool:
        """Whether the account may write here: anywhere but a broadcast channel it
        only reads."""
        return not self.flags & Peer.BROADCAST or bool(self.flags & Peer.CAN_POST)


class Presence(WireRecord, frozen=True):
    """``expires`` for ONLINE, ``was_online`` for OFFLINE (unix seconds); else 0."""

    user: PeerRef
    status: PresenceStatus
    timestamp: Date = 0


class FullPeer(WireRecord, frozen=True):
    """What a profile screen shows beyond the peer itself."""

    peer: Peer
    about: Text = ""
    participant_count: PeerRef | None = None
    members: ListOf[PeerRef] = ()
    pinned_message_id: MessageRef | None = None
    presence: Presence | None = None
    #: A user in the account's contacts (always false for groups and channels).
    contact: bool = False


class Glyph(WireRecord, frozen=True):
    """How a sticker or GIF is drawn, with no image file: an emoji on a coloured shape
    (``colour`` 0xRRGGBB). ``set_id`` names a sticker's set (0 for a GIF)."""

    emoji: Annotated[str, Meta(min_length=1, max_length=16)]
    shape: GlyphShape
    colour: Annotated[int, Meta(ge=0, le=0xFFFFFF)]
    set_id: Int64 = 0


class Media(WireRecord, frozen=True):
    """A media item; a sticker or GIF (a document the server keeps) carries its glyph."""

    kind: MediaKind
    id: Int64
    size: PeerRef = 0
    url: Annotated[str, Meta(max_length=2048)] | None = None
    title: Annotated[str, Meta(max_length=256)] | None = None
    glyph: Glyph | None = None


class ForwardHeader(WireRecord, frozen=True):
    """Where a forwarded message first appeared: its first author (a user, or the channel
    of a post) and date; for a channel post also the channel and the post's id there.
    Forwarding a forwarded message keeps its header, as Telegram does."""

    author: PeerRef
    date: MessageDate
    channel: PeerRef | None = None
    channel_post: MessageRef | None = None


class Message(WireRecord, frozen=True):
    """A message as the server has it. ``out``: sent by this account."""

    peer: PeerRef
    id: MessageRef
    date: MessageDate
    out: bool
    text: Text = ""
    author: PeerRef | None = None
    media: Annotated[tuple[Media, ...], Meta(max_length=10)] = ()
    reply_to: MessageRef | None = None
    edit_date: Date | None = None
    forward: ForwardHeader | None = None


class State(WireRecord, frozen=True):
    """The account's position in its update stream.

    ``date`` is the server's date of the last *final* difference (or getState): peers,
    presences and channels changed since then are listed in the next final difference.
    A client moves it only from those answers, not from pushes, or it could skip a
    change it missed.
    """

    pts: Counter
    qts: Counter
    seq: Counter
    date: Date


class ChannelPts(WireRecord, frozen=True):
    """A channel's current pts, as a hint that it may have news."""

    channel: PeerRef
    pts: Counter


class DraftMessage(WireRecord, frozen=True):
    """A chat's draft as the account's devices share it: ``date`` is when it was saved."""

    text: Text
    date: Date
    reply_to: MessageRef | None = None


class Dialog(WireRecord, frozen=True):
    """One chat-list entry. ``pts`` is the channel's own pts (channels only)."""

    peer: PeerRef
    top_message: Counter
    read_inbox_max_id: Counter
    read_outbox_max_id: Counter
    unread_count: Counter
    pinned: bool = False
    folder: Annotated[int, Meta(ge=0, le=1)] = 0
    muted_until: Date = 0
    pts: Counter | None = None
    draft: DraftMessage | None = None


# -- updates ----------------------------------------------------------------------


class UpdateNewMessage(TaggedRecord, frozen=True, tag="newMessage"):
    message: Message
    pts: Counter
    pts_count: Counter


class UpdateEditMessage(TaggedRecord, frozen=True, tag="editMessage"):
    message: Message
    pts: Counter
    pts_count: Counter


class UpdateDeleteMessages(TaggedRecord, frozen=True, tag="deleteMessages"):
    peer: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Meta(max_length=1000)]
    pts: Counter
    pts_count: Counter


class UpdateReadHistoryInbox(TaggedRecord, frozen=True, tag="readHistoryInbox"):
    """This account read the chat up to ``max_id`` (here or on another connection)."""

    peer: PeerRef
    max_id: Counter
    still_unread_count: Counter
    pts: Counter
    pts_count: Counter


class UpdateNotifySettings(TaggedRecord, frozen=True, tag="notifySettings"):
    """The account muted a chat until ``muted_until`` (0: unmuted), on any device; it
    takes the account's pts so that every device learns it."""

    peer: PeerRef
    muted_until: Date
    pts: Counter
    pts_count: Counter


class UpdateDraftMessage(TaggedRecord, frozen=True, tag="draftMessage"):
    """The account saved a chat's draft on some device (``None``: cleared). It takes the
    account's pts, as mute does here, so a device that was away gets it in its difference."""

    peer: PeerRef
    draft: DraftMessage | None
    pts: Counter
    pts_count: Counter


class UpdateContact(TaggedRecord, frozen=True, tag="contact"):
    """The account added a user to its contacts or removed one, on some device. It takes
    the account's pts, so every device learns it, one that was away in its difference."""

    peer: PeerRef
    contact: bool
    pts: Counter
    pts_count: Counter


class UpdateReadHistoryOutbox(TaggedRecord, frozen=True, tag="readHistoryOutbox"):
    """The other side read this account's messages up to ``max_id``."""

    peer: PeerRef
    max_id: Counter
    pts: Counter
    pts_count: Counter


class UpdateNewChannelMessage(TaggedRecord, frozen=True, tag="newChannelMessage"):
    message: Message
    pts: Counter
    pts_count: Counter


class UpdateEditChannelMessage(TaggedRecord, frozen=True, tag="editChannelMessage"):
    message: Message
    pts: Counter
    pts_count: Counter


class UpdateDeleteChannelMessages(TaggedRecord, frozen=True, tag="deleteChannelMessages"):
    channel: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Meta(max_length=1000)]
    pts: Counter
    pts_count: Counter


class UpdateReadChannelInbox(TaggedRecord, frozen=True, tag="readChannelInbox"):
    channel: PeerRef
    max_id: Counter
    still_unread_count: Counter
    pts: Counter
    pts_count: Counter


class UpdateNewEncryptedMessage(TaggedRecord, frozen=True, tag="newEncryptedMessage"):
    """A new message in a secret chat: ordered by the account's qts, one point each."""

    message: Message
    qts: Counter


class UpdateChannel(TaggedRecord, frozen=True, tag="channel"):
    """The account's standing in a channel changed (Telegram's ``updateChannel``; here:
    it was removed from it): ask the channel's difference to learn how. It takes the
    account's pts, as a mute does, so a device that was away learns it too."""

    channel: PeerRef
    pts: Counter
    pts_count: Counter


class UpdateChannelTooLong(TaggedRecord, frozen=True, tag="channelTooLong"):
    """The channel has more news than a push can carry: ask getChannelDifference."""

    channel: PeerRef
    pts: Counter | None = None


class UpdateUserStatus(TaggedRecord, frozen=True, tag="userStatus"):
    """A presence change; it moves no counter."""

    presence: Presence


class UpdatePeer(TaggedRecord, frozen=True, tag="peer"):
    """A peer's name, username or flags changed; travels in a container with a seq."""

    peer: Peer


AnyUpdate = (
    UpdateNewMessage
    | UpdateEditMessage
    | UpdateDeleteMessages
    | UpdateReadHistoryInbox
    | UpdateReadHistoryOutbox
    | UpdateNotifySettings
    | UpdateDraftMessage
    | UpdateContact
    | UpdateNewChannelMessage
    | UpdateEditChannelMessage
    | UpdateDeleteChannelMessages
    | UpdateReadChannelInbox
    | UpdateNewEncryptedMessage
    | UpdateChannelTooLong
    | UpdateChannel
    | UpdateUserStatus
    | UpdatePeer
)
#: Any update, as the update logs and the lists of a difference hold it.
ANY_UPDATE: WireType[AnyUpdate] = WireType(AnyUpdate, "update")


def decode_update(value: Any, path: str = "update") -> AnyUpdate:
    return ANY_UPDATE.from_wire(value, path)


# -- pushed containers --------------------------------------------------------------


class Updates(TaggedRecord, frozen=True, tag="updates"):
    """A batch of updates with the peers they mention.

    ``seq == 0``: the batch carries no seq-ordered update. Otherwise it covers
    ``seq_start..seq`` and applies when ``local_seq + 1 == seq_start``.
    """

    updates: Annotated[tuple[AnyUpdate, ...], Meta(max_length=1000)]
    peers: Annotated[tuple[Peer, ...], Meta(max_length=1000)] = ()
    date: Date = 0
    seq_start: Counter = 0
    seq: Counter = 0


class ShortMessage(TaggedRecord, frozen=True, tag="shortMessage"):
    """A plain text message in a private chat (no media, not a forward), in the compact
    form."""

    id: MessageRef
    user: PeerRef
    out: bool
    text: Text
    date: MessageDate
    pts: Counter
    pts_count: Counter
    reply_to: MessageRef | None = None

    def as_update(self, self_id: int) -> UpdateNewMessage:
        """The full update this compact form stands for (``self_id``: the account's user)."""
        author = self_id if self.out else self.user
        message = Message(
            self.user, self.id, self.date, self.out, self.text, author, (), self.reply_to
        )
        return UpdateNewMessage(message, self.pts, self.pts_count)


class UpdatesTooLong(TaggedRecord, frozen=True, tag="updatesTooLong"):
    """Too much happened to push: the client must call getDifference."""


AnyUpdates = Updates | ShortMessage | UpdatesTooLong
#: What a push carries.
ANY_UPDATES: WireType[AnyUpdates] = WireType(AnyUpdates, "updates")


def decode_updates(value: Any, path: str = "updates") -> AnyUpdates:
    return ANY_UPDATES.from_wire(value, path)


# -- difference results ---------------------------------------------------------


class DifferenceEmpty(TaggedRecord, frozen=True, tag="differenceEmpty"):
    """Nothing happened since the client's state."""

    date: Date
    seq: Counter


class Difference(TaggedRecord, frozen=True, tag="difference"):
    """Everything since the client's state; ``state`` is where it leaves the client.

    ``new_messages`` come first, then ``other_updates`` in pts order.
    ``new_encrypted_messages`` are the secret chats' new messages after the request's
    qts, in qts order. ``peers`` and ``presences`` changed since the request's date;
    ``channels`` had news since then and their current pts (compare with the local
    pts, then getChannelDifference).
    """

    new_messages: ListOf[Message]
    other_updates: ListOf[AnyUpdate]
    peers: ListOf[Peer]
    state: State
    presences: ListOf[Presence] = ()
    channels: ListOf[ChannelPts] = ()
    new_encrypted_messages: ListOf[Message] = ()


class DifferenceSlice(TaggedRecord, frozen=True, tag="differenceSlice"):
    """Part of the difference: apply it, move to ``intermediate_state`` and ask again."""

    new_messages: ListOf[Message]
    other_updates: ListOf[AnyUpdate]
    peers: ListOf[Peer]
    intermediate_state: State
    new_encrypted_messages: ListOf[Message] = ()


class DifferenceTooLong(TaggedRecord, frozen=True, tag="differenceTooLong"):
    """The pts gap is older than the server keeps: reset to ``pts`` and reload history.
    The qts stream is kept whole: ask again from the new pts and the old qts."""

    pts: Counter


AnyDifference = DifferenceEmpty | Difference | DifferenceSlice | DifferenceTooLong
ANY_DIFFERENCE: WireType[AnyDifference] = WireType(AnyDifference, "result")


def decode_difference(value: Any, path: str = "result") -> AnyDifference:
    return ANY_DIFFERENCE.from_wire(value, path)


class ChannelDifferenceEmpty(TaggedRecord, frozen=True, tag="channelDifferenceEmpty"):
    """Nothing new after the requested pts. ``timeout`` (in every channel difference,
    as Telegram's): seconds the client is not to poll this channel again for."""

    pts: Counter
    final: bool = True
    timeout: Counter | None = None


class ChannelDifference(TaggedRecord, frozen=True, tag="channelDifference"):
    """Channel news after the requested pts up to ``pts``; ask again unless ``final``."""

    new_messages: ListOf[Message]
    other_updates: ListOf[AnyUpdate]
    peers: ListOf[Peer]
    pts: Counter
    final: bool = True
    timeout: Counter | None = None


class ChannelDifferenceTooLong(TaggedRecord, frozen=True, tag="channelDifferenceTooLong"):
    """Too far behind: here are the dialog and the newest messages; the rest is a hole."""

    dialog: Dialog
    messages: ListOf[Message]
    peers: ListOf[Peer]
    timeout: Counter | None = None


AnyChannelDifference = ChannelDifferenceEmpty | ChannelDifference | ChannelDifferenceTooLong
ANY_CHANNEL_DIFFERENCE: WireType[AnyChannelDifference] = WireType(AnyChannelDifference, "result")


def decode_channel_difference(value: Any, path: str = "result") -> AnyChannelDifference:
    return ANY_CHANNEL_DIFFERENCE.from_wire(value, path)
