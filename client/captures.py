"""Animated captures of the real app, made offscreen, for the README.

``python -m client.captures [OUT_DIR]`` (default ``resources/captures``) starts the demo's
server with a fixed seed and no live traffic, the sync worker and the window on the
offscreen platform, and records two of the guided tour's steps as animated PNGs:

* ``live-insert.png``: a message arrives in the open chat and slides in (Generic); the
  inspector names the commit and counts the views it left silent;
* ``hole-fill.png``: in slow motion, scrolling up reaches a hole, a loading row shows,
  the fetch is drawn in flight on the hole map, and the FillHole puts the rows in place.

Frames are grabbed every ``FRAME_MS`` while the step runs; a frame equal to the one
before only lengthens it, and one that differs is stored as the rectangle that changed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from client.apng import Frame, apng
from client.screenshots import offscreen_app, run_until, shut_down_qt

__all__ = ["record_captures"]

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


def _record(app: Any, window: Any, until: Any) -> list[tuple[Any, float]]:
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


def record_captures(out: Path) -> list[Path]:
    app = offscreen_app()
    from client.account import Account
    from client.demo_stage import DemoStage
    from client.slow_motion import SlowMotion
    from sync.server import EmbeddedServer, ServerConfig
    from ui.main_window import MainWindow
    from ui.rows import ChatRow

    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    config = ServerConfig(token="captures", seed=1, rate=0, messages=20_000)
    with tempfile.TemporaryDirectory() as scratch, EmbeddedServer(config) as server:
        account = Account(Path(scratch) / "client.db", "127.0.0.1", server.port, "captures")
        account.start()

        def set_latency(seconds: float) -> None:
            server.call(lambda mock: mock.set_latency(seconds))

        window = MainWindow(
            account, slow_motion=SlowMotion(0.8, set_latency), stage=DemoStage(server)
        )
        window.resize(1100, 720)
        window.show()
        try:
            run_until(
                app,
                lambda: (
                    sum(isinstance(r, ChatRow) and not r.is_hole for r in window.chat_model.rows)
                    >= 20
                ),
            )
            window.start_tour()
            card = window.tour
            assert card is not None
            for name, step in (("live-insert.png", 1), ("hole-fill.png", 2)):
                card.show_step(step)
                shots = _record(app, window, lambda: not card.runner.running)
                if not card.runner.succeeded:
                    raise RuntimeError(f"the tour's step {step} failed: {card.runner.outcome}")
                path = out / name
                path.write_bytes(apng(frames_of(shots)))
                saved.append(path)
        finally:
            window.close_feeds()
            window.close()
            account.close()
    return saved


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("resources/captures")
    for path in record_captures(target):
        print(f"{path}: {path.stat().st_size:,} bytes")
    shut_down_qt()
    return 0


if __name__ == "__main__":
    sys.exit(main())
