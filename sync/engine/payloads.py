"""Payload limits: what an outgoing change may hold, checked where it is queued and
again where it is sent.

Every sender (the app, ``postbox-chat send``, ``client.Account``) queues through
``enqueue_*``, which checks here before anything is stored: a message's text, a
caption or an edit over ``MAX_TEXT`` characters, a draft over ``MAX_DRAFT_LENGTH``, an
empty message, media or ids the protocol does not carry. The outbound queue reads each
send entry back through ``send_request``: an entry written past these checks (by an
older client or a bug) that no request can carry is refused for good there, and becomes
a failed message instead of being tried again for ever in front of everything queued
after it.

    ProtocolError
    └── PayloadError          a change the protocol cannot carry (INVALID_PARAMS)
        └── MessageTooLongError   a text over its limit (MESSAGE_TOO_LONG)
"""

from __future__ import annotations

from typing import Any, TypeVar

from postbox import Media
from sync.engine.convert import media_to_wire
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    INT32_MAX,
    MAX_TEXT,
    EditMessage,
    ErrorCode,
    ForwardMessages,
    InvalidParamsError,
    ProtocolError,
    SendMessage,
    WireRecord,
    encode_frame,
    encode_request,
)

__all__ = [
    "MAX_DRAFT_LENGTH",
    "MessageTooLongError",
    "PayloadError",
    "check_text",
    "edit_request",
    "local_id_of",
    "send_request",
]

R = TypeVar("R", bound=WireRecord)

#: The longest draft kept: a draft may outgrow a message (the compose box sends it as
#: several, and the server keeps its first ``MAX_TEXT`` characters), up to 16 of them.
MAX_DRAFT_LENGTH = 16 * MAX_TEXT


class PayloadError(ProtocolError):
    """An outgoing change the protocol cannot carry: refused before it is stored, or,
    found in the queue, before it is sent."""

    code = ErrorCode.INVALID_PARAMS


class MessageTooLongError(PayloadError):
    """A text longer than its limit (a message's, a caption's, an edit's, a draft's)."""

    code = ErrorCode.MESSAGE_TOO_LONG


def check_text(text: object, what: str = "a message", limit: int = MAX_TEXT) -> str:
    """``text`` if it is a string of at most ``limit`` characters, else a one-line
    ``PayloadError`` naming ``what`` it is."""
    if not isinstance(text, str):
        raise PayloadError(f"the text of {what} is {type(text).__name__}, not a string")
    if len(text) > limit:
        raise MessageTooLongError(f"{what} holds at most {limit:,} characters, not {len(text):,}")
    return text


def send_request(peer_id: int, contents: object) -> SendMessage | ForwardMessages:
    """The request a queued send (or forward) goes as, checked as the server checks it:
    ``PayloadError`` if ``contents`` cannot make one the protocol carries."""
    if not isinstance(contents, dict):
        raise PayloadError(f"a queued send is a map, not {type(contents).__name__}")
    forward = contents.get("forward")
    if forward is not None:
        if not isinstance(forward, list | tuple) or len(forward) != 2:
            raise PayloadError(f"a forward names its source as [peer, id], not {forward!r:.40}")
        from_peer, source_id = forward
        fields = {"from_peer": from_peer, "ids": [source_id], "to_peer": peer_id}
        return _checked(ForwardMessages, {**fields, "random_ids": [contents.get("random_id")]})
    raw_media = contents.get("media", ())
    if not isinstance(raw_media, list | tuple):
        raise PayloadError(f"the media of a send are a list, not {type(raw_media).__name__}")
    try:
        media = tuple(media_to_wire(Media.decode(item)) for item in raw_media)
    except (TypeError, ValueError, IndexError, KeyError) as error:
        raise PayloadError(f"the media of a send cannot be read: {error}") from None
    text = check_text(contents.get("text"), "a caption" if media else "a message")
    if not text.strip() and not media:
        raise PayloadError("a message needs some text or media", ErrorCode.MESSAGE_EMPTY)
    fields = {"peer": peer_id, "text": text, "media": [item.to_wire() for item in media]}
    return _checked(
        SendMessage,
        {**fields, "random_id": contents.get("random_id"), "reply_to": contents.get("reply_to")},
    )


def local_id_of(contents: object) -> int:
    """The local message a queued send stands for; ``PayloadError`` if it names none."""
    local_id = contents.get("local_id") if isinstance(contents, dict) else None
    if type(local_id) is not int or not 0 < local_id <= INT32_MAX:
        raise PayloadError(f"a queued send names no local message ({local_id!r:.40})")
    return local_id


def edit_request(peer_id: int, message_id: object, text: object) -> EditMessage:
    """The request an edit goes as; ``PayloadError`` if the protocol cannot carry it."""
    text = check_text(text, "an edited message")
    return _checked(EditMessage, {"peer": peer_id, "id": message_id, "text": text})


def _checked(kind: type[R], fields: dict[str, Any]) -> R:
    """The ``kind`` request of ``fields`` as the other side decodes it (types and bounds
    checked), and no larger than a frame may be."""
    try:
        checked = kind.from_wire(fields)
    except InvalidParamsError as error:
        raise PayloadError(error.message) from None
    size = len(encode_frame(encode_request(0, checked))) - 4
    if size > DEFAULT_MAX_FRAME_SIZE:
        raise PayloadError(
            f"a request of {size:,} bytes exceeds the frame limit of {DEFAULT_MAX_FRAME_SIZE:,}",
            ErrorCode.FRAME_TOO_LARGE,
        )
    return checked
