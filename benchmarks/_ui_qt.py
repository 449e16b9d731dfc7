"""Qt helpers for the UI benchmark: the application, waiting on conditions, memory.

Import this module only after ``QT_QPA_PLATFORM`` is set (``benchmarks.ui`` does it).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from ui.garbage import MainThreadCollector

__all__ = [
    "application",
    "resident_mib",
    "run_loop",
    "wait_until",
]


def application() -> QApplication:
    """The Qt application, collecting cyclic garbage on the main thread as the app does."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    app = QApplication(sys.argv[:1])
    MainThreadCollector(app).start()
    return app


def run_loop(seconds: float) -> None:
    """Run a real Qt event loop (no polling) for ``seconds``."""
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Run the event loop until ``condition`` holds; ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        run_loop(0.005)


def resident_mib() -> tuple[float, float]:
    """This process's resident memory now and at its peak (VmRSS, VmHWM), in MiB."""
    fields: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]
