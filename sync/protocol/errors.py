"""Typed protocol errors, and the error codes both sides put in error frames."""

from __future__ import annotations

import enum
from typing import Any

from sync.errors import SyncError

__all__ = [
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
    INTERNAL = "INTERNAL"


class ProtocolError(SyncError):
    """A frame or a request that breaks the protocol; answered with an error frame."""

    code: ErrorCode = ErrorCode.MALFORMED_FRAME

    def __init__(self, message: str, code: ErrorCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def to_wire(self) -> dict[str, Any]:
        return {"code": str(self.code), "message": self.message}

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
        if isinstance(raw_code, str) and raw_code in ErrorCode.__members__:
            return cls(text, ErrorCode(raw_code))
        return cls(f"unknown error code {raw_code!r}: {text}", ErrorCode.INTERNAL)
