"""Frames: a 4-byte big-endian length, then one msgpack map.

``encode_frame`` turns a map into bytes. ``FrameDecoder`` takes bytes as they arrive
and hands back complete frame bodies; ``decode_body`` turns one body into a map,
with limits on size, nesting and collection lengths, and no extension types;
``check_part`` applies the same checks to a part of a frame left undecoded.

Two kinds of failure are kept apart: a length over the limit is a ``FramingError``
(the stream cannot be trusted past it, so the connection closes), while a body that
is not a valid map is a ``MalformedFrameError`` (the next frame starts at a known
place, so the connection can answer with an error frame and go on).
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack
import msgspec

from sync.protocol.errors import FrameTooLargeError, MalformedFrameError

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "MAX_COLLECTION_LENGTH",
    "MAX_DEPTH",
    "FrameDecoder",
    "check_part",
    "decode_body",
    "encode_frame",
]

_LENGTH = struct.Struct(">I")
#: Frames larger than this are refused (4 MiB holds a 100-message history page many times).
DEFAULT_MAX_FRAME_SIZE = 4 * 1024 * 1024
#: Deepest nesting of maps and lists a frame may have (the protocol needs about 6).
MAX_DEPTH = 16
#: Most items a single list or map may have.
MAX_COLLECTION_LENGTH = 100_000

_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_ENCODER = msgspec.msgpack.Encoder()


def _refuse_extension(code: int, data: bytes) -> Any:
    raise MalformedFrameError(f"msgpack extension type {code} is not allowed")


def encode_frame(payload: dict[str, Any]) -> bytes:
    """The frame for ``payload``: its msgpack encoding behind a 4-byte length."""
    body = _ENCODER.encode(payload)
    return _LENGTH.pack(len(body)) + body


def decode_body(body: bytes, max_size: int = DEFAULT_MAX_FRAME_SIZE) -> dict[str, Any]:
    """The map in one frame body; ``MalformedFrameError`` for anything else."""
    if len(body) > max_size:
        raise FrameTooLargeError(f"frame of {len(body)} bytes exceeds the limit of {max_size}")
    value = _unpack(body, max_size)
    if not isinstance(value, dict):
        raise MalformedFrameError(f"a frame must hold a map, not {type(value).__name__}")
    _check_shape(value, 1)
    return value


def check_part(data: bytes | memoryview, depth: int) -> None:
    """``decode_body``'s checks on one msgpack value that sits ``depth`` levels deep in a
    frame (the frame's own map is level 1): ``MalformedFrameError`` if it fails them."""
    value = _unpack(data, DEFAULT_MAX_FRAME_SIZE)
    kind = type(value)
    if kind is dict or kind is list:
        _check_shape(value, depth)
    elif kind not in _SCALARS:
        raise MalformedFrameError(f"values of type {kind.__name__} are not allowed")


def _unpack(data: bytes | memoryview, max_size: int) -> Any:
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            ext_hook=_refuse_extension,
            timestamp=0,
            max_str_len=max_size,
            max_bin_len=max_size,
            max_array_len=MAX_COLLECTION_LENGTH,
            max_map_len=MAX_COLLECTION_LENGTH,
            max_ext_len=0,
        )
    except MalformedFrameError:
        raise
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError) as error:
        raise MalformedFrameError(f"frame body is not valid msgpack: {error}") from None
    except Exception as error:  # noqa: BLE001 - msgpack raises several undocumented types
        raise MalformedFrameError(f"frame body is not valid msgpack: {error!r}") from None


def _check_shape(top: Any, top_depth: int) -> None:
    """Refuse deep nesting, non-string keys and values of types the protocol never sends
    (e.g. msgpack timestamps). Only containers go on the stack; scalars are checked in place."""
    stack: list[tuple[Any, int]] = [(top, top_depth)]
    scalars = _SCALARS
    while stack:
        container, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise MalformedFrameError(f"frame nests deeper than {MAX_DEPTH} levels")
        if type(container) is dict:
            if not all(type(key) is str for key in container):
                raise MalformedFrameError("map keys must be strings")
            children: Any = container.values()
        else:
            children = container
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind not in scalars:
                raise MalformedFrameError(f"values of type {kind.__name__} are not allowed")


class FrameDecoder:
    """Cuts a byte stream into frame bodies; refuses a length over ``max_size`` at once.

    ``feed`` hands back every frame the bytes complete. ``add`` and ``next_body`` hand
    them out one at a time instead, each checked against ``max_size`` as it is then (a
    server raises the limit once a connection has authorized).
    """

    __slots__ = ("_buffer", "max_size")

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_size = max_size
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data``; return the bodies of the frames it completes, in order.

        Raises ``FrameTooLargeError`` as soon as a length prefix exceeds the limit,
        before the body arrives, so a hostile peer cannot make the buffer grow. Frames
        completed before such a prefix are returned first; the next call raises (call
        ``feed(b"")`` to find out at once).
        """
        self._buffer += data
        bodies: list[bytes] = []
        offset = 0
        buffer = self._buffer
        while len(buffer) - offset >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer, offset)
            if length > self.max_size:
                del buffer[:offset]
                if bodies:  # hand these over first; the next feed raises
                    return bodies
                raise FrameTooLargeError(
                    f"frame of {length} bytes exceeds the limit of {self.max_size}"
                )
            end = offset + _LENGTH.size + length
            if end > len(buffer):
                break
            bodies.append(bytes(buffer[offset + _LENGTH.size : end]))
            offset = end
        del buffer[:offset]
        return bodies

    def add(self, data: bytes) -> None:
        """Add ``data`` without cutting it yet (see ``next_body``)."""
        self._buffer += data

    def next_body(self) -> bytes | None:
        """The body of the next complete frame, or ``None`` until one is complete.

        Raises ``FrameTooLargeError`` as soon as the next length prefix exceeds
        ``max_size``, before its body arrives (and again on every later call).
        """
        buffer = self._buffer
        if len(buffer) < _LENGTH.size:
            return None
        (length,) = _LENGTH.unpack_from(buffer)
        if length > self.max_size:
            raise FrameTooLargeError(
                f"frame of {length} bytes exceeds the limit of {self.max_size}"
            )
        end = _LENGTH.size + length
        if end > len(buffer):
            return None
        body = bytes(buffer[_LENGTH.size : end])
        del buffer[:end]
        return body
