"""Progress on stderr: the stage, rows done out of rows planned, rate and ETA; and how
long each stage took (``durations``), for the benchmarks."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Reports one stage at a time; ``advance`` may be called from any thread."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._quiet = quiet
        self._lock = threading.Lock()
        self._stage = ""
        self._total = 0
        self._done = 0
        self._started = time.monotonic()
        self._shown = 0.0
        # A terminal gets one line redrawn in place; a pipe or file one line per stage.
        self._live = bool(getattr(self._stream, "isatty", lambda: False)())
        #: Seconds spent in each stage so far, by name (a name used twice adds up).
        self.durations: dict[str, float] = {}
        self._timing = False

    def stage(self, name: str, total: int = 0) -> None:
        self._end_timing()
        self._finish_line()
        with self._lock:
            self._stage, self._total, self._done = name, total, 0
            self._started = time.monotonic()
            self._timing = True
        self._show(force=True)

    def advance(self, rows: int) -> None:
        with self._lock:
            self._done += rows
        self._show()

    def set_done(self, rows: int) -> None:
        with self._lock:
            self._done = rows
        self._show()

    def close(self) -> None:
        self._end_timing()
        self._finish_line()

    def _end_timing(self) -> None:
        with self._lock:
            if self._timing:
                elapsed = time.monotonic() - self._started
                self.durations[self._stage] = self.durations.get(self._stage, 0.0) + elapsed
                self._timing = False

    def _finish_line(self) -> None:
        if self._stage and not self._quiet:
            self._show(force=True, final=True)
            print(file=self._stream, flush=True)
            self._stage = ""

    def _show(self, *, force: bool = False, final: bool = False) -> None:
        if self._quiet or not (self._live or final):
            return
        now = time.monotonic()
        if not force and now - self._shown < 0.5:
            return
        self._shown = now
        with self._lock:
            stage, total, done = self._stage, self._total, self._done
            elapsed = now - self._started
        prefix = "\r" if self._live else ""
        line = f"{prefix}{stage:<28} {elapsed:6.1f} s"
        if total:
            rate = done / elapsed if elapsed > 0 else 0.0
            eta = f"{(total - done) / rate:5.0f} s" if rate > 0 and done < total else "    -"
            line += f"  {done:>12,} / {total:,} rows  {rate:>11,.0f} rows/s  ETA {eta}"
        print(line, end="", file=self._stream, flush=True)
