"""Processes benchmark: how soon an open view shows what another process committed.

A watcher Postbox in this process holds a chat's history view open (a callback
subscription on ``MessageHistoryViewKey``, the newest 50 messages of a fully loaded
chat). A writer process opens the same file and, on each request, adds one message in
one transaction and prints ``time.monotonic()`` as taken by a commit listener, just
after SQLite's COMMIT returned; the figure is the time from then to the watcher's
callback holding the message (a watcher woken by the log's write can be a little
ahead of the writer's COMMIT returning)
(``CLOCK_MONOTONIC`` is one clock for every process on Linux). Requests are spaced by a
seeded random pause, so that commits fall at every phase of the watcher's idle tick.

a. **Idle tick only**: the watcher notices another process's commit only on its idle
   check of SQLite's ``data_version``.
b. **File watch**: the watcher is also woken when the database's write-ahead log is
   written (inotify), and checks ``data_version`` then.

c. **Own commits**: what the watch costs a process's own commits (each wakes its watch,
   which finds nothing new): the median ``postbox.run`` adding one message with the
   history view open, with the watch and without, in alternating rounds.

Also shown: what one idle ``data_version`` check costs when nothing changed.
"""

from __future__ import annotations

import functools
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Final

from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from postbox import (
    MAX_MESSAGE_ID,
    CombinedView,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.value_box import ValueBox

__all__ = ["run"]

_CHAT: Final = PeerId.make(PeerNamespace.USER, 1_000)
_CLOUD: Final = int(MessageNamespace.CLOUD)
_FULL_COMMITS: Final = 60
_QUICK_COMMITS: Final = 20
_ARRIVAL_TIMEOUT: Final = 10.0
_DATA_VERSION_CHECKS: Final = 20_000
_OWN_ROUNDS: Final = 6
_OWN_COMMITS: Final = 200

#: Runs in the writer process: one message per line read, the commit time printed.
_WRITER: Final = """
import sys, time
from postbox import MessageFlags, PeerId, Postbox, StoreMessage
chat = PeerId(int(sys.argv[2]))
committed = []
with Postbox(sys.argv[1], watch_file=False) as postbox:
    postbox.add_commit_listener(lambda _record: committed.append(time.monotonic()))
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        message = StoreMessage(chat, 0, n, 1_700_000_000 + n, MessageFlags.INCOMING,
                               author_id=chat.id, text=f"message {n}")
        postbox.run(lambda tx: tx.add_messages([message]))
        print(committed[-1], flush=True)
"""


def _setup(path: Path) -> None:
    def fn(tx: Transaction) -> None:
        tx.update_peers([Peer(_CHAT, "open chat")])
        tx.remove_hole(_CHAT, _CLOUD, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)

    with Postbox(path) as postbox:
        postbox.run(fn)


def _latencies(path: Path, commits: int, *, watch_file: bool) -> list[float]:
    """Milliseconds from each of the writer's commits to the watcher's snapshot."""
    arrived: dict[int, float] = {}
    condition = threading.Condition()

    def on_snapshot(snapshot: CombinedView) -> None:
        view = snapshot[key]
        if view.entries:
            with condition:
                arrived.setdefault(view.entries[-1].id.id, time.monotonic())
                condition.notify_all()

    key = MessageHistoryViewKey(_CHAT, HistoryAnchor.upper_bound(), 50)
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(int(_CHAT))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert writer.stdin is not None and writer.stdout is not None
    rng = random.Random(7)
    samples: list[float] = []
    try:
        if writer.stdout.readline().strip() != "ready":
            raise RuntimeError("the writer process did not start")
        with Postbox(path, watch_file=watch_file) as watcher:
            subscription = watcher.combined_view([key], on_snapshot)
            subscription.ready.result()
            first = 1 + max(arrived, default=0)
            for n in range(first, first + commits):
                time.sleep(rng.uniform(0.0, 0.3))  # any phase of the idle tick
                writer.stdin.write(f"{n}\n")
                writer.stdin.flush()
                committed = float(writer.stdout.readline())
                with condition:
                    if not condition.wait_for(
                        functools.partial(arrived.__contains__, n), _ARRIVAL_TIMEOUT
                    ):
                        raise RuntimeError(f"message {n} never reached the open view")
                    samples.append((arrived[n] - committed) * 1e3)
            subscription.dispose()
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    return samples


def _own_commits(path: Path, rounds: int) -> dict[bool, float]:
    """Median µs of this process's own one-message commits, by whether it watches."""
    key = MessageHistoryViewKey(_CHAT, HistoryAnchor.upper_bound(), 50)
    samples: dict[bool, list[float]] = {False: [], True: []}
    next_id = 1_000_000
    for round_ in range(rounds):
        watch_file = round_ % 2 == 1
        with Postbox(path, watch_file=watch_file) as postbox:
            subscription = postbox.combined_view([key], lambda _snapshot: None)
            subscription.ready.result()
            for _ in range(_OWN_COMMITS):
                next_id += 1
                message = StoreMessage(
                    _CHAT, _CLOUD, next_id, 1_700_000_000 + next_id,
                    int(MessageFlags.INCOMING), author_id=_CHAT.id, text="own",
                )  # fmt: skip
                start = time.perf_counter()
                postbox.run(functools.partial(_add, message))
                samples[watch_file].append((time.perf_counter() - start) * 1e6)
            subscription.dispose()
    return {watching: percentile(values, 50) for watching, values in samples.items()}


def _add(message: StoreMessage, tx: Transaction) -> None:
    tx.add_messages([message])


def _data_version_check(path: Path) -> float:
    """Microseconds per ``PRAGMA data_version`` when nothing changed."""
    box = ValueBox(str(path))
    try:
        box.data_version()
        start = time.perf_counter()
        for _ in range(_DATA_VERSION_CHECKS):
            box.data_version()
        return (time.perf_counter() - start) / _DATA_VERSION_CHECKS * 1e6
    finally:
        box.close()


@benchmark("processes")
def run(ctx: BenchContext) -> list[Figure]:
    commits = _QUICK_COMMITS if ctx.quick else _FULL_COMMITS
    path = ctx.scratch / "processes.sqlite"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    _setup(path)
    figures: list[Figure] = []
    for label, watch_file in (("(a) idle tick only", False), ("(b) file watch", True)):
        samples = _latencies(path, commits, watch_file=watch_file)
        note = f"{commits} commits by another process"
        figures += [
            Figure(f"{label}: commit -> view, median", percentile(samples, 50), "ms", note),
            Figure(f"{label}: commit -> view, p90", percentile(samples, 90), "ms"),
            Figure(f"{label}: commit -> view, max", max(samples), "ms"),
        ]
    rounds = 2 if ctx.quick else _OWN_ROUNDS
    own = _own_commits(path, rounds)
    note = f"{rounds // 2 * _OWN_COMMITS} commits each, view open"
    figures += [
        Figure("(c) own commit, no watch, median", own[False], "µs", note),
        Figure("(c) own commit, watched, median", own[True], "µs", note),
        Figure("data_version check", _data_version_check(path), "µs", "nothing changed"),
    ]
    return figures
