"""Methods: their parameters and results, and the frames that carry them.

Requests are ``{id, method, params}``; the answer to one is ``{id, result}`` or
``{id, error: {code, message}}``; the server pushes ``{push: "updates", updates}``.
``parse_request`` validates a request completely before the server acts on it, and
``parse_server_frame`` does the same for what a client receives. A client decodes its
frames with ``decode_server_frame``, straight from the bytes to records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

import msgspec
from msgspec import UNSET, Meta, UnsetType

from sync.protocol.errors import (
    FrameTooLargeError,
    InvalidParamsError,
    MalformedFrameError,
    ProtocolError,
    RpcError,
    UnknownMethodError,
)
from sync.protocol.framing import DEFAULT_MAX_FRAME_SIZE, decode_body
from sync.protocol.schema import (
    Counter,
    Date,
    Int64,
    ListOf,
    MessageRef,
    PeerRef,
    Text,
    WireRecord,
    WireType,
)
from sync.protocol.stickers import (
    ANY_ALL_STICKERS,
    ANY_SAVED_GIFS,
    ANY_STICKER_SET,
    GetAllStickers,
    GetSavedGifs,
    GetStickerSet,
)
from sync.protocol.types import (
    ANY_CHANNEL_DIFFERENCE,
    ANY_DIFFERENCE,
    ANY_UPDATES,
    AnyUpdates,
    Dialog,
    FullPeer,
    Media,
    MediaKind,
    Message,
    Peer,
    Presence,
    State,
    decode_updates,
)

__all__ = [
    "HISTORY_LIMIT",
    "MAX_TOKEN_LENGTH",
    "METHODS",
    "AffectedMessages",
    "Auth",
    "Authorization",
    "Authorizations",
    "DeviceSession",
    "DeleteMessages",
    "Dialogs",
    "EditMessage",
    "ErrorFrame",
    "ForwardMessages",
    "GetChannelDifference",
    "GetDialogs",
    "GetAuthorizations",
    "GetDifference",
    "GetFullPeer",
    "GetHistory",
    "GetPeerDialogs",
    "GetPeers",
    "GetSentMessages",
    "GetState",
    "MessagesSlice",
    "Method",
    "PeerDialogs",
    "Peers",
    "PushFrame",
    "ReadHistory",
    "ResetAuthorization",
    "Request",
    "ResultFrame",
    "SendMessage",
    "SentMessage",
    "SentMessageId",
    "SentMessageIds",
    "SentMessages",
    "SaveDraft",
    "SetNotifySettings",
    "encode_error",
    "encode_push",
    "encode_request",
    "encode_result",
    "decode_server_frame",
    "method_name",
    "parse_request",
    "parse_server_frame",
    "request_id_of",
]

#: Most messages one getHistory call returns, as on Telegram.
HISTORY_LIMIT = 100
#: Most dialogs one getDialogs call returns.
DIALOGS_LIMIT = 100
#: Longest token ``auth`` takes, in characters.
MAX_TOKEN_LENGTH = 256
#: Largest request id: ids must survive a round trip through a double.
MAX_REQUEST_ID = 2**53

P = TypeVar("P", bound=WireRecord)
R = TypeVar("R", bound=WireRecord)
T = TypeVar("T")

# -- parameters -------------------------------------------------------------------


class Auth(WireRecord, frozen=True):
    """``device``: a random id the client keeps for its database (0: none), so that its
    session can be listed and terminated; ``device_name`` says what it is."""

    token: Annotated[str, Meta(max_length=MAX_TOKEN_LENGTH)]
    device: Int64 = 0
    device_name: Annotated[str, Meta(max_length=128)] = ""


class GetAuthorizations(WireRecord, frozen=True):
    """The account's devices (sessions), for a devices screen."""


class ResetAuthorization(WireRecord, frozen=True):
    """Terminate another device's session: its connections close and it cannot log in
    again (``SESSION_REVOKED``)."""

    device: Int64


class GetState(WireRecord, frozen=True):
    pass


class GetDifference(WireRecord, frozen=True):
    """``pts_total_limit``: the most pts points one answer may cover (then a slice)."""

    pts: Counter
    qts: Counter
    date: Date
    pts_total_limit: Annotated[int, Meta(ge=1, le=100_000)] | None = None


class GetChannelDifference(WireRecord, frozen=True):
    channel: PeerRef
    pts: Counter
    limit: Annotated[int, Meta(ge=1, le=1000)] = 100


class GetDialogs(WireRecord, frozen=True):
    """Unpinned dialogs older than the chat-list index (offset_date, offset_id,
    offset_peer), newest first. All zero means from the top, and then the answer starts
    with every pinned dialog (beyond ``limit``), as on Telegram.
    """

    offset_date: Date = 0
    offset_id: Counter = 0
    offset_peer: PeerRef = 0
    limit: Annotated[int, Meta(ge=1, le=DIALOGS_LIMIT)] = DIALOGS_LIMIT


class GetPeerDialogs(WireRecord, frozen=True):
    """The dialogs of some chats, with the state they are as of (to validate read states)."""

    peers: Annotated[tuple[PeerRef, ...], Meta(max_length=100)]


class GetHistory(WireRecord, frozen=True):
    """A page of one chat's history, newest first, with Telegram's paging rules.

    The candidates are the chat's messages (only those with media of kind ``filter``
    if given) with ``min_id < id < max_id`` (a bound of 0 is no bound). The page
    starts ``add_offset`` places after the first candidate older than ``offset_id``
    (the newest candidate if ``offset_id`` is 0); a negative ``add_offset`` reaches
    back to newer ones. It holds at most ``limit`` messages.
    """

    peer: PeerRef
    offset_id: Counter = 0
    add_offset: Annotated[int, Meta(ge=-HISTORY_LIMIT, le=1_000_000)] = 0
    limit: Annotated[int, Meta(ge=1, le=HISTORY_LIMIT)] = HISTORY_LIMIT
    max_id: Counter = 0
    min_id: Counter = 0
    filter: MediaKind | None = None


class GetPeers(WireRecord, frozen=True):
    ids: Annotated[tuple[PeerRef, ...], Meta(max_length=200)]


class GetFullPeer(WireRecord, frozen=True):
    peer: PeerRef


class SendMessage(WireRecord, frozen=True):
    """``random_id`` is the client's key: sending it again returns the same message. The
    text may be empty when media is attached (a sticker is sent so)."""

    peer: PeerRef
    text: Text
    random_id: Int64
    reply_to: MessageRef | None = None
    media: Annotated[tuple[Media, ...], Meta(max_length=10)] = ()


class GetSentMessages(WireRecord, frozen=True):
    """Which of ``random_ids`` the server stored a message for. It changes nothing, so a
    client can learn whether a send it holds as failed arrived after all."""

    random_ids: Annotated[tuple[Int64, ...], Meta(max_length=100)]


class EditMessage(WireRecord, frozen=True):
    peer: PeerRef
    id: MessageRef
    text: Text


class ForwardMessages(WireRecord, frozen=True):
    """Copy messages of ``from_peer`` into ``to_peer`` with a forward header; one
    ``random_id`` per message, the same key as ``SendMessage``'s."""

    from_peer: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Meta(max_length=100)]
    to_peer: PeerRef
    random_ids: Annotated[tuple[Int64, ...], Meta(max_length=100)]


class DeleteMessages(WireRecord, frozen=True):
    """``revoke``: for everyone (else only from this account's history). This server holds
    one account, so both remove the messages from the history it serves."""

    peer: PeerRef
    ids: Annotated[tuple[MessageRef, ...], Meta(max_length=100)]
    revoke: bool = True


class ReadHistory(WireRecord, frozen=True):
    peer: PeerRef
    max_id: Counter


class SetNotifySettings(WireRecord, frozen=True):
    """Mute a chat until ``muted_until`` (unix seconds; 0 unmutes) on every device."""

    peer: PeerRef
    muted_until: Date


class SaveDraft(WireRecord, frozen=True):
    """Keep a chat's draft for the account's other devices; an empty text with no reply
    clears it."""

    peer: PeerRef
    text: Text
    reply_to: MessageRef | None = None


# -- results ----------------------------------------------------------------------


class Authorization(WireRecord, frozen=True):
    user: Peer


class DeviceSession(WireRecord, frozen=True):
    """One device of the account: ``current`` is the one asking, ``online`` has a
    connection open now, ``last_active`` is when it last logged in or spoke."""

    device: Int64
    name: Annotated[str, Meta(max_length=128)]
    current: bool
    online: bool
    last_active: Counter


class Authorizations(WireRecord, frozen=True):
    sessions: ListOf[DeviceSession]


class Dialogs(WireRecord, frozen=True):
    """A page of the chat list, its top messages and peers; ``count`` is the total."""

    dialogs: ListOf[Dialog]
    messages: ListOf[Message]
    peers: ListOf[Peer]
    count: PeerRef
    pinned: ListOf[Int64] = ()
    #: The account's state the page is as of (its read states and counts).
    state: State | None = None


class PeerDialogs(WireRecord, frozen=True):
    """The dialogs asked for (unknown peers left out), their top messages and peers, and
    the account's state they are as of; a channel's dialog carries its own pts."""

    dialogs: ListOf[Dialog]
    messages: ListOf[Message]
    peers: ListOf[Peer]
    state: State


class MessagesSlice(WireRecord, frozen=True):
    """A page of history, newest first; ``count`` is the number of candidates."""

    messages: ListOf[Message]
    peers: ListOf[Peer]
    count: PeerRef


class Peers(WireRecord, frozen=True):
    peers: ListOf[Peer]
    presences: ListOf[Presence] = ()


class SentMessage(WireRecord, frozen=True):
    """The stored message and the counter point it took: the account's pts, the
    channel's own pts in a channel, the account's qts in a secret chat."""

    message: Message
    pts: Counter
    pts_count: Counter


class SentMessages(WireRecord, frozen=True):
    """Messages stored by one request, in the order asked, and the counter points they
    took together: they end at ``pts`` and cover ``pts_count``."""

    messages: Annotated[tuple[Message, ...], Meta(max_length=100)]
    pts: Counter
    pts_count: Counter


class SentMessageId(WireRecord, frozen=True):
    """Where the send with ``random_id`` was stored (the message may be deleted since)."""

    random_id: Int64
    peer: PeerRef
    id: MessageRef


class SentMessageIds(WireRecord, frozen=True):
    """The stored sends among those asked, in the order asked."""

    sent: Annotated[tuple[SentMessageId, ...], Meta(max_length=100)]


class AffectedMessages(WireRecord, frozen=True):
    pts: Counter
    pts_count: Counter


# -- the method table -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Method(Generic[P, T]):
    """A method: its name, the record of its parameters and the type of its result."""

    name: str
    params: type[P]
    result: WireType[T]

    def decode_result(self, value: Any) -> T:
        """The typed result, from a decoded map or from the msgpack bytes
        ``decode_server_frame`` left undecoded (``msgspec.Raw``)."""
        if isinstance(value, msgspec.Raw):
            return self.result.decode_part(value, _RESULT_DEPTH)
        return self.result.from_wire(value)


def _record(kind: type[R]) -> WireType[R]:
    return WireType(kind, "result")


METHODS: dict[str, Method[Any, Any]] = {
    method.name: method
    for method in (
        Method("auth", Auth, _record(Authorization)),
        Method("getState", GetState, _record(State)),
        Method("getDifference", GetDifference, ANY_DIFFERENCE),
        Method("getChannelDifference", GetChannelDifference, ANY_CHANNEL_DIFFERENCE),
        Method("getDialogs", GetDialogs, _record(Dialogs)),
        Method("getPeerDialogs", GetPeerDialogs, _record(PeerDialogs)),
        Method("getHistory", GetHistory, _record(MessagesSlice)),
        Method("getPeers", GetPeers, _record(Peers)),
        Method("getFullPeer", GetFullPeer, _record(FullPeer)),
        Method("sendMessage", SendMessage, _record(SentMessage)),
        Method("getSentMessages", GetSentMessages, _record(SentMessageIds)),
        Method("editMessage", EditMessage, _record(SentMessage)),
        Method("forwardMessages", ForwardMessages, _record(SentMessages)),
        Method("deleteMessages", DeleteMessages, _record(AffectedMessages)),
        Method("readHistory", ReadHistory, _record(AffectedMessages)),
        Method("setNotifySettings", SetNotifySettings, _record(AffectedMessages)),
        Method("saveDraft", SaveDraft, _record(AffectedMessages)),
        Method("getAuthorizations", GetAuthorizations, _record(Authorizations)),
        Method("resetAuthorization", ResetAuthorization, _record(Authorizations)),
        Method("getAllStickers", GetAllStickers, ANY_ALL_STICKERS),
        Method("getStickerSet", GetStickerSet, ANY_STICKER_SET),
        Method("getSavedGifs", GetSavedGifs, ANY_SAVED_GIFS),
    )
}
_METHOD_NAMES = {method.params: name for name, method in METHODS.items()}

# -- frames ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    id: int
    method: str
    params: WireRecord


@dataclass(frozen=True, slots=True)
class ResultFrame:
    """An answer; ``result`` is undecoded (a map, or msgpack bytes as ``msgspec.Raw``)
    until ``Method.decode_result`` decodes it for the method that was called."""

    id: int
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    id: int | None
    error: RpcError


@dataclass(frozen=True, slots=True)
class PushFrame:
    updates: AnyUpdates


def request_id_of(frame: dict[str, Any]) -> int | None:
    """The request id of a frame, if it has a valid one (for error frames)."""
    value = frame.get("id")
    if type(value) is int and 0 <= value <= MAX_REQUEST_ID:
        return value
    return None


def parse_request(frame: dict[str, Any]) -> Request:
    """Validate a request frame: its id, a known method and well-formed params."""
    request_id = request_id_of(frame)
    if request_id is None:
        raise InvalidParamsError(f"id: expected an integer within 0..{MAX_REQUEST_ID}")
    name = frame.get("method")
    if not isinstance(name, str):
        raise InvalidParamsError("method: expected a method name")
    method = METHODS.get(name)
    if method is None:
        shown = name if len(name) <= 40 else name[:37] + "..."
        raise UnknownMethodError(f"unknown method {shown!r}")
    params = frame.get("params", {})
    return Request(request_id, name, method.params.from_wire(params, "params"))


def parse_server_frame(frame: dict[str, Any]) -> ResultFrame | ErrorFrame | PushFrame:
    """What a client received: a result, an error, or pushed updates (results undecoded)."""
    if "push" in frame:
        if frame["push"] != "updates":
            raise MalformedFrameError(f"unknown push {frame['push']!r}")
        return PushFrame(decode_updates(frame.get("updates"), "updates"))
    if "error" in frame:
        return ErrorFrame(request_id_of(frame), RpcError.from_wire(frame["error"]))
    request_id = request_id_of(frame)
    if request_id is None or "result" not in frame:
        raise MalformedFrameError("a frame needs a push, an error, or an id and a result")
    return ResultFrame(request_id, frame["result"])


class _ServerFrame(msgspec.Struct, forbid_unknown_fields=True):
    """A result or a push exactly as a server writes one; parts left undecoded."""

    id: int | None = None
    result: msgspec.Raw | UnsetType = UNSET
    push: str | UnsetType = UNSET
    updates: msgspec.Raw | UnsetType = UNSET


_SERVER_FRAME = msgspec.msgpack.Decoder(_ServerFrame)
#: How deep a result or a push's updates sit in their frame (the frame's map is level 1).
_RESULT_DEPTH = 2


def decode_server_frame(
    body: bytes, max_size: int = DEFAULT_MAX_FRAME_SIZE
) -> ResultFrame | ErrorFrame | PushFrame:
    """``parse_server_frame(decode_body(body))``, but with the result left as msgpack bytes
    for ``Method.decode_result`` and a push's updates decoded straight from the bytes.

    A frame with anything else in it (an error, a key no server writes, a push with a
    result, an id out of range) takes the general way, ``decode_body`` then
    ``parse_server_frame``.
    """
    if len(body) > max_size:
        raise FrameTooLargeError(f"frame of {len(body)} bytes exceeds the limit of {max_size}")
    try:
        frame = _SERVER_FRAME.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return parse_server_frame(decode_body(body, max_size))
    request_id, result, push, updates = frame.id, frame.result, frame.push, frame.updates
    if push == "updates" and updates is not UNSET and result is UNSET and request_id is None:
        return PushFrame(ANY_UPDATES.decode_part(updates, _RESULT_DEPTH))
    if (
        result is not UNSET
        and push is UNSET
        and updates is UNSET
        and request_id is not None
        and 0 <= request_id <= MAX_REQUEST_ID
    ):
        return ResultFrame(request_id, result)
    return parse_server_frame(decode_body(body, max_size))


def method_name(params: WireRecord) -> str:
    """The method whose parameters ``params`` are."""
    name = _METHOD_NAMES.get(type(params))
    if name is None:
        raise TypeError(f"{type(params).__name__} is not a method's parameters")
    return name


def encode_request(request_id: int, params: WireRecord) -> dict[str, Any]:
    return {"id": request_id, "method": method_name(params), "params": params.to_wire()}


def encode_result(request_id: int, result: WireRecord) -> dict[str, Any]:
    return {"id": request_id, "result": result.to_wire()}


def encode_error(request_id: int | None, error: ProtocolError) -> dict[str, Any]:
    return {"id": request_id, "error": error.to_wire()}


def encode_push(updates: AnyUpdates) -> dict[str, Any]:
    return {"push": "updates", "updates": updates.to_wire()}
