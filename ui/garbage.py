"""Python's cyclic garbage collected on the main thread only.

The collector runs on whichever thread happens to allocate past its threshold: here
the postbox thread, the sync worker or the demo's server as often as the main thread.
A cycle that holds a Qt object it owns (a closure kept by a future, a slot's lambda)
is then destroyed on that thread, and Qt crashes or deadlocks when a widget or a
QObject with pending events is deleted away from the thread it lives in.

``MainThreadCollector`` turns the automatic collector off and runs it from a timer on
the main thread instead, with CPython's own policy: the oldest generation whose count
is past its threshold is collected. Reference counting, which frees everything that is
not in a cycle, goes on as before on every thread.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["CHECK_INTERVAL_MS", "MainThreadCollector", "due_generation"]

#: How often the main thread looks at the collector's counts.
CHECK_INTERVAL_MS = 200


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, int, int]) -> int | None:
    """The generation the automatic collector would collect now (the oldest one whose
    count is past its threshold), or ``None`` while none is."""
    for generation in (2, 1, 0):
        threshold = thresholds[generation]
        if threshold and counts[generation] > threshold:
            return generation
    return None


class MainThreadCollector(QObject):
    """While started, cyclic garbage is collected on this object's thread, from its
    event loop; ``stop()`` collects what is left and gives the collector back."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = CHECK_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self._was_enabled = False
        #: Collections made, by generation (what a profile of the app can read).
        self.collections = [0, 0, 0]

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self) -> MainThreadCollector:
        if not self.active:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._timer.start()
        return self

    def stop(self) -> None:
        if not self.active:
            return
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()

    def collect_due(self) -> int | None:
        """Collect the generation that is due, if one is; which one it was."""
        counts = gc.get_count()
        generation = due_generation(counts, gc.get_threshold())
        if generation is not None:
            gc.collect(generation)
            self.collections[generation] += 1
        return generation
