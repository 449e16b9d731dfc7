"""Animated captures of a window: frames grabbed while something happens, made into an
animated PNG (``client.apng``). ``python -m client.screenshots --captures`` records the
README's from the guided tour.

Frames are grabbed every ``FRAME_MS``; a frame equal to the one before only lengthens
it, and one that differs is stored as the rectangle that changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from client.apng import Frame

__all__ = ["changed_rectangle", "frames_of", "record"]

#: How often a frame is grabbed while recording.
FRAME_MS = 60
#: The capture's scale of the window (1100x720 at 1.0).
SCALE = 0.8
#: Seconds recorded after the step is done, so its end can be read.
TAIL = 2.5


def _png(image: Any) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG", 0)  # 0: the smallest file
    return bytes(data.data())


def _first_difference(a: bytes, b: bytes) -> int:
    """The first index where ``a`` and ``b`` (of one length, and different) differ."""
    low, high = 0, len(a)
    while low < high:  # a[:low] == b[:low] holds; a[:high + 1] != b[:high + 1] does
        middle = (low + high) // 2
        if a[: middle + 1] == b[: middle + 1]:
            low = middle + 1
        else:
            high = middle
    return low


def changed_rectangle(before: Any, after: Any) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) of the pixels that differ between two images of one size
    and format, or ``None`` if none does."""
    width, height = after.width(), after.height()
    line = after.bytesPerLine()
    depth = line // width if width else 4
    old, new = bytes(before.constBits()), bytes(after.constBits())
    rows = [
        y for y in range(height) if old[y * line : (y + 1) * line] != new[y * line : (y + 1) * line]
    ]
    if not rows:
        return None
    left, right = width, 0
    for y in rows:
        a, b = old[y * line : (y + 1) * line], new[y * line : (y + 1) * line]
        left = min(left, _first_difference(a, b) // depth)
        right = max(right, width - _first_difference(a[::-1], b[::-1]) // depth)
    return left, rows[0], max(1, right - left), rows[-1] - rows[0] + 1


def frames_of(shots: list[tuple[Any, float]]) -> list[Frame]:
    """Frames from (image, seconds) grabs: equal ones merged, changed ones cropped."""
    kept: list[tuple[Any, float, tuple[int, int, int, int] | None]] = []
    for image, at in shots:
        if not kept:
            kept.append((image, at, None))
            continue
        changed = changed_rectangle(kept[-1][0], image)
        if changed is not None:
            kept.append((image, at, changed))
    frames = []
    for number, (image, at, changed) in enumerate(kept):
        until = kept[number + 1][1] if number + 1 < len(kept) else shots[-1][1] + 1.5
        delay = round((until - at) * 1000)
        if changed is None:
            frames.append(Frame(_png(image), delay))
        else:
            x, y, width, height = changed
            frames.append(Frame(_png(image.copy(x, y, width, height)), delay, x, y))
    return frames


def record(app: Any, window: Any, until: Callable[[], bool]) -> list[tuple[Any, float]]:
    """Grab the window every ``FRAME_MS`` until ``until()`` holds and ``TAIL`` seconds
    more."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    shots: list[tuple[Any, float]] = []
    started = time.monotonic()
    ended: float | None = None
    while ended is None or time.monotonic() - ended < TAIL:
        next_frame = time.monotonic() + FRAME_MS / 1000
        while time.monotonic() < next_frame:
            app.processEvents()
            time.sleep(0.002)
        image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
        size = image.size() * SCALE
        scaled = image.scaled(
            size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
        shots.append((scaled, time.monotonic() - started))
        if ended is None and until():
            ended = time.monotonic()
        if time.monotonic() - started > 60:
            raise TimeoutError("the step did not finish in a minute")
    return shots
