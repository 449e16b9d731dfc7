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
from dataclasses import dataclass
from typing import Annotated, Any

from sync.protocol.schema import (
    MAX_TEXT,
    Counter,
    Limit,
    MessageRef,
    PeerRef,
    WireRecord,
    decode_union,
)

__all__ = [
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
    "Difference",
    "DifferenceEmpty",
    "DifferenceSlice",
    "DifferenceTooLong",
    "ForwardHeader",
    "FullPeer",
    "Media",
    "MediaKind",
    "Message",
    "Peer",
    "PeerKind",
    "Presence",
    "PresenceStatus",
    "ShortMessage",
    "State",
    "UpdateChannelTooLong",
    "UpdateDeleteChannelMessages",
    "UpdateDeleteMessages",
    "UpdateEditChannelMessage",
    "UpdateEditMessage",
    "UpdateNewChannelMessage",
    "UpdateNewEncryptedMessage",
    "UpdateNewMessage",
    "UpdatePeer",
    "UpdateReadChannelInbox",
    "UpdateReadHistoryInbox",
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


class PresenceStatus(enum.StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"
    RECENTLY = "recently"
    LONG_AGO = "long_ago"


# -- entities -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Peer(WireRecord):
    """A user, group or channel. ``flags``: 1 verified, 2 bot, 4 broadcast, 8 self."""

    id: PeerRef
    name: Annotated[str, Limit(max_len=256)]
    username: Annotated[str, Limit(max_len=64)] | None = None
    access_hash: int = 0
    flags: Counter = 0

    @property
    def kind(self) -> PeerKind | None:
        return peer_kind(self.id)


@dataclass(frozen=True, slots=True)
class Presence(WireRecord):
    """``expires`` for ONLINE, ``was_online`` for OFFLINE (unix seconds); else 0."""

    user: PeerRef
    status: PresenceStatus
    timestamp: Counter = 0


@dataclass(frozen=True, slots=True)
class FullPeer(WireRecord):
    """What a profile screen shows beyond the peer itself."""

    peer: Peer
    about: Annotated[str, Limit(max_len=MAX_TEXT)] = ""
    participant_count: PeerRef | None = None
    members: tuple[PeerRef, ...] = ()
    pinned_message_id: MessageRef | None = None
    presence: Presence | None = None
    #: A user in the account's contacts (always false for groups and channels).
    contact: bool = False


@dataclass(frozen=True, slots=True)
class Media(WireRecord):
    kind: MediaKind
    id: int
    size: PeerRef = 0
    url: Annotated[str, Limit(max_len=2048)] | None = None
    title: Annotated[str, Limit(max_len=256)] | None = None


@dataclass(frozen=True, slots=True)
class ForwardHeader(WireRecord):
    """Where a forwarded message first appeared: its first author (a user, or the channel
    of a post) and date; for a channel post also the channel and the post's id there.
    Forwarding a forwarded message keeps its header, as Telegram does."""

    author: PeerRef
    date: Counter
    channel: PeerRef | None = None
    channel_post: MessageRef | None = None


@dataclass(frozen=True, slots=True)
class Message(WireRecord):
    """A message as the server has it. ``out``: sent by this account."""

    peer: PeerRef
    id: MessageRef
    date: Counter
    out: bool
    text: Annotated[str, Limit(max_len=MAX_TEXT)] = ""
    author: PeerRef | None = None
    media: Annotated[tuple[Media, ...], Limit(max_len=10)] = ()
    reply_to: MessageRef | None = None
    edit_date: Counter | None = None
    forward: ForwardHeader | None = None


@dataclass(frozen=True, slots=True)
class State(WireRecord):
    """The account's position in its update stream.

    ``date`` is the server's date of the last *final* difference (or getState): peers,
    presences and channels changed since then are listed in the next final difference.
    A client moves it only from those answers, not from pushes, or it could skip a
    change it missed.
    """

    pts: Counter
    qts: Counter
    seq: Counter
    date: Counter


@dataclass(frozen=True, slots=True)
class ChannelPts(WireRecord):
    """A channel's current pts, as a hint that it may have news."""

    channel: PeerRef
    pts: Counter


@dataclass(frozen=True, slots=True)
class Dialog(WireRecord):
    """One chat-list entry. ``pts`` is the channel's own pts (channels only)."""

    peer: PeerRef
    top_message: Counter
    read_inbox_max_id: Counter
    read_outbox_max_id: Counter
    unread_count: Counter
    pinned: bool = False
    folder: Annotated[int, Limit(low=0, high=1)] = 0
    muted_until: Counter = 0
    pts: Counter | None = None


# -- updates ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UpdateNewMessage(WireRecord):
    TAG = "newMessage"
    message: Message
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateEditMessage(WireRecord):
    TAG = "editMessage"
    message: Message
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateDeleteMessages(WireRecord):
    TAG = "deleteMessages"
    peer: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Limit(max_len=1000)]
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateReadHistoryInbox(WireRecord):
    """This account read the chat up to ``max_id`` (here or on another connection)."""

    TAG = "readHistoryInbox"
    peer: PeerRef
    max_id: Counter
    still_unread_count: Counter
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateReadHistoryOutbox(WireRecord):
    """The other side read this account's messages up to ``max_id``."""

    TAG = "readHistoryOutbox"
    peer: PeerRef
    max_id: Counter
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateNewChannelMessage(WireRecord):
    TAG = "newChannelMessage"
    message: Message
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateEditChannelMessage(WireRecord):
    TAG = "editChannelMessage"
    message: Message
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateDeleteChannelMessages(WireRecord):
    TAG = "deleteChannelMessages"
    channel: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Limit(max_len=1000)]
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateReadChannelInbox(WireRecord):
    TAG = "readChannelInbox"
    channel: PeerRef
    max_id: Counter
    still_unread_count: Counter
    pts: Counter
    pts_count: Counter


@dataclass(frozen=True, slots=True)
class UpdateNewEncryptedMessage(WireRecord):
    """A new message in a secret chat: ordered by the account's qts, one point each."""

    TAG = "newEncryptedMessage"
    message: Message
    qts: Counter


@dataclass(frozen=True, slots=True)
class UpdateChannelTooLong(WireRecord):
    """The channel has more news than a push can carry: ask getChannelDifference."""

    TAG = "channelTooLong"
    channel: PeerRef
    pts: Counter | None = None


@dataclass(frozen=True, slots=True)
class UpdateUserStatus(WireRecord):
    """A presence change; it moves no counter."""

    TAG = "userStatus"
    presence: Presence


@dataclass(frozen=True, slots=True)
class UpdatePeer(WireRecord):
    """A peer's name, username or flags changed; travels in a container with a seq."""

    TAG = "peer"
    peer: Peer


AnyUpdate = (
    UpdateNewMessage
    | UpdateEditMessage
    | UpdateDeleteMessages
    | UpdateReadHistoryInbox
    | UpdateReadHistoryOutbox
    | UpdateNewChannelMessage
    | UpdateEditChannelMessage
    | UpdateDeleteChannelMessages
    | UpdateReadChannelInbox
    | UpdateNewEncryptedMessage
    | UpdateChannelTooLong
    | UpdateUserStatus
    | UpdatePeer
)
_UPDATES: dict[str, type[Any]] = {
    kind.TAG: kind
    for kind in (
        UpdateNewMessage,
        UpdateEditMessage,
        UpdateDeleteMessages,
        UpdateReadHistoryInbox,
        UpdateReadHistoryOutbox,
        UpdateNewChannelMessage,
        UpdateEditChannelMessage,
        UpdateDeleteChannelMessages,
        UpdateReadChannelInbox,
        UpdateNewEncryptedMessage,
        UpdateChannelTooLong,
        UpdateUserStatus,
        UpdatePeer,
    )
}


def decode_update(value: Any, path: str = "update") -> AnyUpdate:
    result: AnyUpdate = decode_union(_UPDATES, value, path)
    return result


# -- pushed containers --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Updates(WireRecord):
    """A batch of updates with the peers they mention.

    ``seq == 0``: the batch carries no seq-ordered update. Otherwise it covers
    ``seq_start..seq`` and applies when ``local_seq + 1 == seq_start``.
    """

    TAG = "updates"
    updates: Annotated[tuple[AnyUpdate, ...], Limit(max_len=1000)]
    peers: Annotated[tuple[Peer, ...], Limit(max_len=1000)] = ()
    date: Counter = 0
    seq_start: Counter = 0
    seq: Counter = 0


@dataclass(frozen=True, slots=True)
class ShortMessage(WireRecord):
    """A plain text message in a private chat (no media, not a forward), in the compact
    form."""

    TAG = "shortMessage"
    id: MessageRef
    user: PeerRef
    out: bool
    text: Annotated[str, Limit(max_len=MAX_TEXT)]
    date: Counter
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


@dataclass(frozen=True, slots=True)
class UpdatesTooLong(WireRecord):
    """Too much happened to push: the client must call getDifference."""

    TAG = "updatesTooLong"


AnyUpdates = Updates | ShortMessage | UpdatesTooLong
_CONTAINERS: dict[str, type[Any]] = {
    kind.TAG: kind for kind in (Updates, ShortMessage, UpdatesTooLong)
}


def decode_updates(value: Any, path: str = "updates") -> AnyUpdates:
    result: AnyUpdates = decode_union(_CONTAINERS, value, path)
    return result


# -- difference results ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DifferenceEmpty(WireRecord):
    """Nothing happened since the client's state."""

    TAG = "differenceEmpty"
    date: Counter
    seq: Counter


@dataclass(frozen=True, slots=True)
class Difference(WireRecord):
    """Everything since the client's state; ``state`` is where it leaves the client.

    ``new_messages`` come first, then ``other_updates`` in pts order.
    ``new_encrypted_messages`` are the secret chats' new messages after the request's
    qts, in qts order. ``peers`` and ``presences`` changed since the request's date;
    ``channels`` had news since then and their current pts (compare with the local
    pts, then getChannelDifference).
    """

    TAG = "difference"
    new_messages: tuple[Message, ...]
    other_updates: tuple[AnyUpdate, ...]
    peers: tuple[Peer, ...]
    state: State
    presences: tuple[Presence, ...] = ()
    channels: tuple[ChannelPts, ...] = ()
    new_encrypted_messages: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class DifferenceSlice(WireRecord):
    """Part of the difference: apply it, move to ``intermediate_state`` and ask again."""

    TAG = "differenceSlice"
    new_messages: tuple[Message, ...]
    other_updates: tuple[AnyUpdate, ...]
    peers: tuple[Peer, ...]
    intermediate_state: State
    new_encrypted_messages: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class DifferenceTooLong(WireRecord):
    """The pts gap is older than the server keeps: reset to ``pts`` and reload history.
    The qts stream is kept whole: ask again from the new pts and the old qts."""

    TAG = "differenceTooLong"
    pts: Counter


AnyDifference = DifferenceEmpty | Difference | DifferenceSlice | DifferenceTooLong
_DIFFERENCES: dict[str, type[Any]] = {
    kind.TAG: kind for kind in (DifferenceEmpty, Difference, DifferenceSlice, DifferenceTooLong)
}


def decode_difference(value: Any, path: str = "result") -> AnyDifference:
    result: AnyDifference = decode_union(_DIFFERENCES, value, path)
    return result


@dataclass(frozen=True, slots=True)
class ChannelDifferenceEmpty(WireRecord):
    TAG = "channelDifferenceEmpty"
    pts: Counter
    final: bool = True


@dataclass(frozen=True, slots=True)
class ChannelDifference(WireRecord):
    """Channel news after the requested pts up to ``pts``; ask again unless ``final``."""

    TAG = "channelDifference"
    new_messages: tuple[Message, ...]
    other_updates: tuple[AnyUpdate, ...]
    peers: tuple[Peer, ...]
    pts: Counter
    final: bool = True


@dataclass(frozen=True, slots=True)
class ChannelDifferenceTooLong(WireRecord):
    """Too far behind: here are the dialog and the newest messages; the rest is a hole."""

    TAG = "channelDifferenceTooLong"
    dialog: Dialog
    messages: tuple[Message, ...]
    peers: tuple[Peer, ...]


AnyChannelDifference = ChannelDifferenceEmpty | ChannelDifference | ChannelDifferenceTooLong
_CHANNEL_DIFFERENCES: dict[str, type[Any]] = {
    kind.TAG: kind for kind in (ChannelDifferenceEmpty, ChannelDifference, ChannelDifferenceTooLong)
}


def decode_channel_difference(value: Any, path: str = "result") -> AnyChannelDifference:
    result: AnyChannelDifference = decode_union(_CHANNEL_DIFFERENCES, value, path)
    return result
