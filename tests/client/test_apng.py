"""Animated PNG assembly (``client.apng``), checked by reading the result back chunk by
chunk as a viewer would."""

from __future__ import annotations

import struct
import zlib

import pytest

from client.apng import SIGNATURE, ApngError, Frame, apng, png_chunks


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, pixel: bytes, *, colour_type: int = 2) -> bytes:
    """A PNG of one colour, 8 bits per channel."""
    rows = b"".join(b"\x00" + pixel * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def test_frames_become_one_animation_a_viewer_can_read_back() -> None:
    frames = [
        Frame(png(4, 3, b"\xff\x00\x00"), 500),
        Frame(png(2, 1, b"\x00\xff\x00"), 250, x=1, y=2),
        Frame(png(4, 3, b"\x00\x00\xff"), 70_000),
    ]
    chunks = list(png_chunks(apng(frames, plays=2)))
    kinds = [kind for kind, _ in chunks]
    assert kinds == [
        b"IHDR",
        b"acTL",
        b"fcTL",
        b"IDAT",
        b"fcTL",
        b"fdAT",
        b"fcTL",
        b"fdAT",
        b"IEND",
    ]
    assert struct.unpack(">II", chunks[1][1]) == (3, 2)
    controls = [struct.unpack(">IIIIIHHBB", data) for kind, data in chunks if kind == b"fcTL"]
    assert [c[:5] for c in controls] == [(0, 4, 3, 0, 0), (1, 2, 1, 1, 2), (3, 4, 3, 0, 0)]
    # Delays in milliseconds, the longest capped at what the field holds.
    assert [(c[5], c[6]) for c in controls] == [(500, 1000), (250, 1000), (65_535, 1000)]
    # Sequence numbers run over fcTL and fdAT together, without a gap.
    data = [(kind, payload) for kind, payload in chunks if kind == b"fdAT"]
    assert [struct.unpack(">I", payload[:4])[0] for _, payload in data] == [2, 4]
    green = zlib.decompress(data[0][1][4:])
    assert green == b"\x00" + b"\x00\xff\x00" * 2


@pytest.mark.parametrize(
    ("frames", "message"),
    [
        ([], "needs a frame"),
        ([Frame(b"GIF89a", 100)], "not a PNG"),
        ([Frame(png(2, 2, b"\x00\x00\x00"), 100, x=1)], "from its corner"),
        (
            [
                Frame(png(2, 2, b"\x00\x00\x00"), 100),
                Frame(png(2, 2, b"\x00" * 4, colour_type=6), 1),
            ],
            "not coded as the first",
        ),
        (
            [Frame(png(2, 2, b"\x00\x00\x00"), 100), Frame(png(2, 2, b"\x00\x00\x00"), 1, x=1)],
            "outside the canvas",
        ),
        (
            [Frame(png(2, 2, b"\x00\x00\x00"), 100), Frame(png(1, 1, b"\x00\x00\x00"), 1, y=-1)],
            "outside the canvas",
        ),
        ([Frame(png(2, 2, b"\x00", colour_type=3), 100)], "palette"),
    ],
)
def test_frames_that_cannot_animate_together_are_refused(frames, message) -> None:
    with pytest.raises(ApngError, match=message):
        apng(frames)


def test_a_damaged_chunk_is_found() -> None:
    good = png(2, 2, b"\x00\x00\x00")
    damaged = good[:-20] + bytes([good[-20] ^ 1]) + good[-19:]
    with pytest.raises(ApngError, match="damaged"):
        apng([Frame(damaged, 100)])
