"""Cyclic garbage made on another thread is collected on the main thread."""

from __future__ import annotations

import gc
import threading

from ui.garbage import MainThreadCollector, due_generation


class _Cycle:
    """Two objects that hold each other; records the thread that finally frees them."""

    def __init__(self, freed_on: list[str]) -> None:
        self.other = self
        self.freed_on = freed_on

    def __del__(self) -> None:
        self.freed_on.append(threading.current_thread().name)


def _on_a_worker(freed_on: list[str]) -> list[list[object]]:
    """On a worker: make a cycle unreachable, then allocate (and keep) well past the
    threshold at which the automatic collector runs on the thread that allocates."""
    kept: list[list[object]] = []

    def work() -> None:
        _Cycle(freed_on)
        kept.extend([] for _ in range(10 * gc.get_threshold()[0]))

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()  # the main thread's timer cannot fire meanwhile
    return kept


def test_the_generation_due_is_the_oldest_past_its_threshold() -> None:
    thresholds = (700, 10, 10)
    assert due_generation((0, 0, 0), thresholds) is None
    assert due_generation((700, 10, 10), thresholds) is None  # at the threshold, not past
    assert due_generation((701, 0, 0), thresholds) == 0
    assert due_generation((701, 11, 0), thresholds) == 1
    assert due_generation((5, 11, 11), thresholds) == 2
    assert due_generation((10**6, 0, 0), (0, 10, 10)) is None  # threshold 0: never


def test_without_it_a_worker_frees_the_cycle(collector_stopped) -> None:
    assert gc.isenabled()
    freed_on: list[str] = []
    kept = _on_a_worker(freed_on)  # counted by the collector while alive
    assert len(kept) > gc.get_threshold()[0]
    assert freed_on == ["worker"]  # what would delete a Qt object off the main thread


def test_with_it_the_main_thread_frees_the_cycle(garbage_on_the_main_thread) -> None:
    assert not gc.isenabled()  # the fixture's collector is on, as in the app
    freed_on: list[str] = []
    kept = _on_a_worker(freed_on)  # counted by the collector while alive
    assert len(kept) > gc.get_threshold()[0]
    assert freed_on == []  # nothing collected on the worker
    assert garbage_on_the_main_thread.collect_due() is not None
    assert freed_on == [threading.current_thread().name]


def test_it_runs_from_the_event_loop_and_gives_the_collector_back(qtbot, collector_stopped) -> None:
    assert gc.isenabled()
    collector = MainThreadCollector(interval_ms=1).start()
    assert not gc.isenabled()
    freed_on: list[str] = []
    kept = _on_a_worker(freed_on)  # counted by the collector while alive
    assert len(kept) > gc.get_threshold()[0]
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5_000)
    assert freed_on == [threading.current_thread().name]
    assert sum(collector.collections) >= 1
    collector.stop()
    assert gc.isenabled()
