"""Typed protocol errors, and the error codes both sides put in error frames."""

from __future__ import annotations

import enum
from typing import Any

from sync.errors import SyncError

__all__ = [
    "FLOOD_LIMITED",
    "MAX_FLOOD_WAIT",
    "ErrorCode",
    "FrameTooLargeError",
    "FramingError",
    "InvalidParamsError",
    "MalformedFrameError",
    "ProtocolError",
    "RpcError",
    "UnknownMethodError",
]


class ErrorCode(enum.StrEnum):
    """What went wrong, as the ``code`` of an error frame."""

    FRAME_TOO_LARGE = "FRAME_TOO_LARGE"
    MALFORMED_FRAME = "MALFORMED_FRAME"
    UNKNOWN_METHOD = "UNKNOWN_METHOD"
    INVALID_PARAMS = "INVALID_PARAMS"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    AUTH_FAILED = "AUTH_FAILED"
    #: This device's session was terminated (from another device): log out.
    SESSION_REVOKED = "SESSION_REVOKED"
    #: The connection did not authorize in time, and is closed.
    AUTH_TIMEOUT = "AUTH_TIMEOUT"
    PEER_ID_INVALID = "PEER_ID_INVALID"
    MESSAGE_ID_INVALID = "MESSAGE_ID_INVALID"
    CHANNEL_INVALID = "CHANNEL_INVALID"
    #: The account may not write in this chat (a broadcast channel it only reads).
    CHAT_WRITE_FORBIDDEN = "CHAT_WRITE_FORBIDDEN"
    MESSAGE_EMPTY = "MESSAGE_EMPTY"
    #: A message's text is over the limit (``MAX_TEXT`` characters).
    MESSAGE_TOO_LONG = "MESSAGE_TOO_LONG"
    MEDIA_INVALID = "MEDIA_INVALID"
    STICKERSET_INVALID = "STICKERSET_INVALID"
    #: No such device of the account to terminate (or the asking one itself).
    DEVICE_INVALID = "DEVICE_INVALID"
    #: Too much at once (e.g. too many connections): try again later.
    FLOOD = "FLOOD"
    #: The account called one kind of method too often: that kind waits ``seconds``
    #: (Telegram's ``FLOOD_WAIT_X``); the others go on.
    FLOOD_WAIT = "FLOOD_WAIT"
    #: The account may not read this channel (it was removed from it): for good.
    CHANNEL_PRIVATE = "CHANNEL_PRIVATE"
    INTERNAL = "INTERNAL"


#: The longest flood wait an error frame may name, in seconds (a day, as Telegram's
#: longest); a frame naming more, or none, is malformed.
MAX_FLOOD_WAIT = 86_400

#: Methods that share one rate limit (Telegram limits per method; sends share one):
#: the server counts calls by these names, the client waits by them. Any other method
#: is its own kind.
FLOOD_LIMITED: dict[str, str] = {
    "sendMessage": "send",
    "forwardMessages": "send",
    "getDifference": "difference",
    "getChannelDifference": "channelDifference",
    "getHistory": "history",
}


class ProtocolError(SyncError):
    """A frame or a request that breaks the protocol; answered with an error frame.

    ``seconds`` is how long a ``FLOOD_WAIT`` asks the caller to wait.
    """

    code: ErrorCode = ErrorCode.MALFORMED_FRAME

    def __init__(
        self, message: str, code: ErrorCode | None = None, *, seconds: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.seconds = seconds
        if code is not None:
            self.code = code

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"code": str(self.code), "message": self.message}
        if self.seconds is not None:
            wire["seconds"] = self.seconds
        return wire

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class FramingError(ProtocolError):
    """The byte stream itself is broken: the connection cannot be read any further."""


class FrameTooLargeError(FramingError):
    code = ErrorCode.FRAME_TOO_LARGE


class MalformedFrameError(ProtocolError):
    """A well-delimited frame whose body is not a valid msgpack map within the limits."""

    code = ErrorCode.MALFORMED_FRAME


class UnknownMethodError(ProtocolError):
    code = ErrorCode.UNKNOWN_METHOD


class InvalidParamsError(ProtocolError):
    """A missing field, a field of the wrong type or a value out of range."""

    code = ErrorCode.INVALID_PARAMS


class RpcError(ProtocolError):
    """An error frame received from the other side, as the caller sees it."""

    @classmethod
    def from_wire(cls, error: Any) -> RpcError:
        if not isinstance(error, dict):
            return cls("the error frame carries no error map", ErrorCode.MALFORMED_FRAME)
        raw_code = error.get("code")
        message = error.get("message")
        text = message if isinstance(message, str) else ""
        if raw_code == ErrorCode.FLOOD_WAIT:
            seconds = error.get("seconds")
            if type(seconds) is not int or not 0 <= seconds <= MAX_FLOOD_WAIT:
                return cls(
                    f"a flood wait of {seconds!r} seconds, not 0..{MAX_FLOOD_WAIT}",
                    ErrorCode.MALFORMED_FRAME,
                )
            return cls(text, ErrorCode.FLOOD_WAIT, seconds=seconds)
        if isinstance(raw_code, str) and raw_code in ErrorCode.__members__:
            return cls(text, ErrorCode(raw_code))
        return cls(f"unknown error code {raw_code!r}: {text}", ErrorCode.INTERNAL)
