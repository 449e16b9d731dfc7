"""Value encoding: compact, versioned msgpack arrays.

Every stored value is a msgpack array whose first element is the layout
version; optional fields are announced by a presence-flags integer, as the
seeds' ``MessageDataFlags`` do, so absent fields cost nothing.
"""

from __future__ import annotations

import struct
import threading
from types import TracebackType
from typing import Any

import msgpack

from postbox.errors import CorruptValueError, InvalidArgumentError, PostboxError

__all__ = ["Decoding", "decoding", "pack", "stored_number", "unpack"]

_UNPACK_LIMIT = 16 * 1024 * 1024


class _Packers(threading.local):
    """One reusable packer per thread: much cheaper than ``packb``'s packer per call."""

    def __init__(self) -> None:
        self.packer = msgpack.Packer(use_bin_type=True)


_packers = _Packers()


def pack(value: Any) -> bytes:
    """Encode a value to store; one msgpack cannot hold is an ``InvalidArgumentError``."""
    try:
        return _packers.packer.pack(value)  # type: ignore[no-any-return]
    except (OverflowError, TypeError, ValueError) as exc:
        _packers.packer = msgpack.Packer(use_bin_type=True)  # drop any half-packed state
        raise InvalidArgumentError(f"cannot store {type(value).__name__} value: {exc}") from exc


def unpack(data: bytes, what: str = "value") -> Any:
    """Decode a stored value; anything undecodable is a ``CorruptValueError``."""
    try:
        return msgpack.unpackb(
            data, raw=False, strict_map_key=False, use_list=False, max_bin_len=_UNPACK_LIMIT
        )
    except (
        ValueError,
        TypeError,
        msgpack.ExtraData,
        msgpack.FormatError,
        msgpack.StackError,
    ) as exc:
        raise CorruptValueError(f"stored {what} cannot be decoded: {exc}") from exc


#: What decoding a damaged value raises: a wrong size, type, shape or enum value.
_DECODE_ERRORS = (ValueError, TypeError, IndexError, KeyError, OverflowError, struct.error)


class Decoding:
    """``with decoding("read state"):`` makes any failure to decode a stored value inside
    the block a ``CorruptValueError`` naming it (free unless something fails)."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None or isinstance(error, PostboxError):
            return
        if isinstance(error, _DECODE_ERRORS):
            raise CorruptValueError(f"stored {self.what} cannot be decoded: {error}") from error


def decoding(what: str) -> Decoding:
    return Decoding(what)


def stored_number(codec: struct.Struct, data: bytes, what: str) -> int:
    """The one number ``codec`` packed in a stored value."""
    try:
        return int(codec.unpack(data)[0])
    except (struct.error, TypeError) as error:
        raise CorruptValueError(f"stored {what} is malformed: {error}") from error
