"""Animated PNG (APNG) from PNG frames, with nothing but the standard library.

Each frame is a whole PNG file (as Qt writes one). The first is the image every viewer
shows, animated or not; each later frame may be a smaller rectangle placed at an offset
over the one before, so a capture where little moves stays small. The chunks follow
the APNG specification: ``acTL`` after ``IHDR``, then an ``fcTL`` before each frame's
data, ``IDAT`` for the first and ``fdAT`` (with a sequence number) for the others.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["ApngError", "Frame", "apng", "png_chunks"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The colour type of a PNG with a palette, whose PLTE chunk this writer does not carry.
_PALETTE = 3


class ApngError(ValueError):
    """The frames cannot make one animation (not PNG, or not alike)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: a PNG file, where it goes on the canvas, and how long it shows."""

    png: bytes
    delay_ms: int
    x: int = 0
    y: int = 0


def png_chunks(png: bytes) -> Iterator[tuple[bytes, bytes]]:
    """The (type, data) chunks of a PNG file, their checksums checked."""
    if not png.startswith(SIGNATURE):
        raise ApngError("not a PNG file")
    offset = len(SIGNATURE)
    while offset < len(png):
        if offset + 8 > len(png):
            raise ApngError("a PNG chunk is cut short")
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind = png[offset + 4 : offset + 8]
        data = png[offset + 8 : offset + 8 + length]
        end = offset + 12 + length
        if end > len(png):
            raise ApngError(f"the PNG chunk {kind!r} is cut short")
        (crc,) = struct.unpack(">I", png[end - 4 : end])
        if zlib.crc32(kind + data) != crc:
            raise ApngError(f"the PNG chunk {kind!r} is damaged")
        yield kind, data
        offset = end


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _header(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and the rest of the header (depth, colour type, ...) of a PNG."""
    for kind, data in png_chunks(png):
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[:8])
            return width, height, data[8:]
        break
    raise ApngError("a PNG file without its header")


def apng(frames: Sequence[Frame], *, plays: int = 0) -> bytes:
    """The APNG of ``frames`` (the first covers the canvas), played ``plays`` times
    (0: for ever)."""
    if not frames:
        raise ApngError("an animation needs a frame")
    width, height, form = _header(frames[0].png)
    if form[1] == _PALETTE:
        raise ApngError("palette frames are not supported: give RGB or RGBA ones")
    if (frames[0].x, frames[0].y) != (0, 0):
        raise ApngError("the first frame covers the canvas from its corner")
    out = [SIGNATURE]
    first_header = next(data for kind, data in png_chunks(frames[0].png) if kind == b"IHDR")
    out.append(_chunk(b"IHDR", first_header))
    out.append(_chunk(b"acTL", struct.pack(">II", len(frames), plays)))
    sequence = 0
    for number, frame in enumerate(frames):
        frame_width, frame_height, frame_form = _header(frame.png)
        if frame_form != form:
            raise ApngError(f"frame {number} is not coded as the first one is")
        if (
            min(frame.x, frame.y) < 0
            or frame.x + frame_width > width
            or frame.y + frame_height > height
        ):
            raise ApngError(f"frame {number} reaches outside the canvas")
        delay = max(1, min(frame.delay_ms, 65_535))
        control = struct.pack(
            ">IIIIIHHBB", sequence, frame_width, frame_height, frame.x, frame.y, delay, 1000, 0, 0
        )
        out.append(_chunk(b"fcTL", control))
        sequence += 1
        for kind, data in png_chunks(frame.png):
            if kind != b"IDAT":
                continue
            if number == 0:
                out.append(_chunk(b"IDAT", data))
            else:
                out.append(_chunk(b"fdAT", struct.pack(">I", sequence) + data))
                sequence += 1
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)
