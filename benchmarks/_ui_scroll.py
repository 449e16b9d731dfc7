"""Frame time while scrolling a long chat from its newest message to its first.

The chat is stored whole in a Postbox (no server, no hole). The real window opens it
at the bottom; each frame then scrolls the history up by ``STEP_PX`` as a wheel or
trackpad would and handles what is queued for the main thread: a moved window's first
snapshot (which ``show_rows`` diffs and lays out) and the paint of what the scroll
uncovered (a full repaint if, exceptionally, no paint was queued).
Frames are paced to 60 Hz: the main thread sleeps out the rest of each period, and the
postbox thread meanwhile builds the views the scrolling asked for. A frame at the top
of the window while older messages exist is a stall: the reader's scroll went nowhere.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from benchmarks._ui_data import LONG_CHAT, write_long_chat
from benchmarks._ui_qt import application, run_loop, wait_until
from benchmarks.harness import Figure, percentile
from client.account import Account
from postbox import PeerId, Postbox, ViewUpdateType
from ui.history_view import HistoryListView
from ui.main_window import MainWindow
from ui.rows import HistoryRow, MessageRow

__all__ = ["FRAME_MS", "STEP_PX", "OfflineAccount", "measure_scroll"]

#: Pixels scrolled per frame: a brisk wheel or trackpad flick at 60 Hz.
STEP_PX: Final = 120
#: One frame at 60 Hz.
FRAME_MS: Final = 1000 / 60


class OfflineAccount(Account):
    """An account over a stored database with no sync worker: profile fetches are no-ops."""

    def refresh_profile(self, peer_id: PeerId) -> Future[None]:
        done: Future[None] = Future()
        done.set_result(None)
        return done


def _visible_ids(window: MainWindow) -> list[int]:
    visible = window.history.visible_range()
    if visible is None:
        return []
    rows = window.history_model.rows[visible[0] : visible[1] + 1]
    return [row.id for row in rows if isinstance(row, MessageRow)]


class _PaintCounter(QObject):
    """Counts the paint events a widget receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _repaint(history: HistoryListView) -> float:
    started = time.perf_counter()
    history.viewport().repaint()
    return (time.perf_counter() - started) * 1e3


@dataclass
class _Run:
    """Per-frame milliseconds, split by whether a moved window's rows landed in it."""

    frames: list[float] = field(default_factory=list)
    #: Per frame: whether a moved window's rows were shown in it.
    landed: list[bool] = field(default_factory=list)
    stalls: int = 0
    lowest: int = 0


def _frames(window: MainWindow, max_frames: int) -> _Run:
    """Scroll up until message 1 is on screen, a frame at a time."""
    app = application()
    history = window.history
    bar = history.verticalScrollBar()
    period = FRAME_MS / 1e3
    run = _Run(lowest=min(_visible_ids(window), default=0))
    clock: Callable[[], float] = time.perf_counter
    paints = _PaintCounter(history.viewport())
    shown = [0]
    show_rows = history.show_rows

    def counted_show_rows(rows: Sequence[HistoryRow], update_type: ViewUpdateType) -> None:
        shown[0] += 1
        show_rows(rows, update_type)

    history.show_rows = counted_show_rows  # type: ignore[method-assign]
    for _ in range(max_frames):
        started = clock()
        before, applied, painted = bar.value(), shown[0], paints.count
        bar.setValue(before - STEP_PX)
        app.processEvents()  # the snapshot of a moved window, and the scroll's own paint
        if paints.count == painted:
            history.viewport().repaint()
        elapsed = clock() - started
        run.frames.append(elapsed * 1e3)
        run.landed.append(shown[0] != applied)
        ids = _visible_ids(window)
        run.lowest = min([run.lowest, *ids]) if ids else run.lowest
        if 1 in ids and bar.value() == 0:
            break
        if before == 0 and bar.value() == 0:
            run.stalls += 1
        time.sleep(max(0.0, period - elapsed))
    return run


def measure_scroll(scratch: Path, *, messages: int) -> list[Figure]:
    db = scratch / "scroll.db"
    postbox = Postbox(db)
    try:
        write_long_chat(postbox, messages)
    finally:
        postbox.close()
    app = application()
    account = OfflineAccount(db, "127.0.0.1", 1, "offline")
    window = MainWindow(account)
    try:
        window.resize(1100, 720)
        window.show()
        window.open_chat(LONG_CHAT, "Long history")
        wait_until(lambda: messages in _visible_ids(window), 30, "the newest message on screen")
        run_loop(0.3)
        history = window.history
        baseline = statistics.median(_repaint(history) for _ in range(60))
        moves_before = window.chat_pane.window_moves
        run = _frames(window, max_frames=messages * 4)
        moves = window.chat_pane.window_moves - moves_before
        rows_held = len(window.history_model.rows)
    finally:
        window.close_feeds()
        window.close()
        window.deleteLater()
        account.close()
        app.processEvents()
    frames, lowest, count = run.frames, run.lowest, len(run.frames)
    landed = [f for f, moved in zip(frames, run.landed, strict=True) if moved]
    quiet = [f for f, moved in zip(frames, run.landed, strict=True) if not moved]
    p99 = percentile(frames, 99)
    over = sum(1 for f in frames if f > FRAME_MS)
    reached = "reached message 1" if lowest == 1 else f"stopped at message {lowest:,}"
    return [
        Figure(
            "scroll: frames",
            count,
            "frames",
            f"{messages:,} messages, {STEP_PX} px a frame, newest to oldest: {reached}",
        ),
        Figure(
            "scroll: repaint only (baseline)", baseline, "ms", "median, at the bottom, no scroll"
        ),
        Figure(
            "scroll: frame time median",
            statistics.median(frames),
            "ms",
            f"{statistics.median(frames) / baseline:.2f} x the repaint alone",
        ),
        Figure(
            "scroll: frame time p99",
            p99,
            "ms",
            f"aim <= {FRAME_MS:.1f} ms (60 fps): {'met' if p99 <= FRAME_MS else 'MISSED'}",
        ),
        Figure("scroll: frame time max", max(frames), "ms"),
        Figure(
            "scroll: frames where a moved window landed",
            statistics.median(landed) if landed else 0.0,
            "ms",
            f"median of {len(landed):,}; max {max(landed, default=0.0):.1f} ms",
        ),
        Figure(
            "scroll: other frames p99",
            percentile(quiet, 99) if quiet else 0.0,
            "ms",
            f"{len(quiet):,} frames that only scrolled and painted",
        ),
        Figure("scroll: frames over 16.7 ms", 100 * over / count, "%", f"{over:,} frames"),
        Figure(
            "scroll: window moves",
            moves,
            "moves",
            f"model holds {rows_held} rows at the end; {run.stalls} frames stalled at an edge",
        ),
    ]
