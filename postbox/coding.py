"""Value encoding: compact, versioned msgpack arrays.

Every stored value is a msgpack array whose first element is the layout
version; optional fields are announced by a presence-flags integer, as the
seeds' ``MessageDataFlags`` do, so absent fields cost nothing.
"""

from __future__ import annotations

import threading
from typing import Any

import msgpack

from postbox.errors import CorruptValueError, InvalidArgumentError

__all__ = ["pack", "unpack"]

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
