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

d. **Takeover**: a ``postbox-chat sync`` process is the master client of a database
   (against a mock server in this process), an ``Account`` here the standby. The master
   is killed (SIGKILL) after a seeded random pause, so that kills fall at every phase
   of the standby's looks: the time until the standby is the master, and until it is
   connected. Then a second ``Account`` waits as standby while the first is closed: the
   time from calling ``close`` until the second is the master.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from client.account import Account
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
from sync.engine import SyncEngine
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

__all__ = ["run"]

_CHAT: Final = PeerId.make(PeerNamespace.USER, 1_000)
_CLOUD: Final = int(MessageNamespace.CLOUD)
_FULL_COMMITS: Final = 60
_QUICK_COMMITS: Final = 20
_ARRIVAL_TIMEOUT: Final = 10.0
_DATA_VERSION_CHECKS: Final = 20_000
_OWN_ROUNDS: Final = 20
_OWN_COMMITS: Final = 200
_TAKEOVERS: Final = 6
_QUICK_TAKEOVERS: Final = 2
_TOKEN: Final = "processes"

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


def _wait_engine(account: Account, predicate_of: Callable[[SyncEngine], bool]) -> None:
    """Wait (on the engine's change notifications) until ``predicate_of(engine)`` holds."""

    def wait(engine: SyncEngine) -> Any:
        return engine.wait_for(lambda: predicate_of(engine), _ARRIVAL_TIMEOUT)

    account.worker.call(wait)


def _is_master(engine: SyncEngine) -> bool:
    return engine.election is not None and engine.election.is_master


def _is_standby(engine: SyncEngine) -> bool:
    return engine.connection_state == "standby"


def _recorded(db: Path) -> int | None:
    with Postbox(db, watch_file=False) as postbox:
        return postbox.run(lambda tx: tx.get_master_client_id())


def _wait_recorded(db: Path, before: int | None) -> None:
    """Until a new master records itself (on other processes' commits)."""
    changed = threading.Event()
    with Postbox(db) as postbox:
        postbox.add_external_change_listener(lambda _version: changed.set())
        while postbox.run(lambda tx: tx.get_master_client_id()) in (None, before):
            if not changed.wait(_ARRIVAL_TIMEOUT):
                raise RuntimeError("the master process never recorded itself")
            changed.clear()


def _takeovers(scratch: Path, rounds: int) -> dict[str, list[float]]:
    """Seconds from a master's end to the standby's takeover, by how it ended."""
    times: dict[str, list[float]] = {"killed": [], "connected": [], "closed": []}
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    config = ServerConfig(token=_TOKEN, peers=12, messages=300, seed=11)
    rng = random.Random(11)
    with EmbeddedServer(config) as server:
        for round_ in range(rounds):
            db = scratch / f"takeover-{round_}.db"
            before = _recorded(db) if db.exists() else None
            master = subprocess.Popen(
                [sys.executable, "-m", "client.cli", "sync", "--quiet", "--timeout", "600",
                 "--server", f"127.0.0.1:{server.port}", "--token", _TOKEN, "--db", str(db)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            )  # fmt: skip
            try:
                _wait_recorded(db, before)
                standby = Account(db, "127.0.0.1", server.port, _TOKEN).start()
                _wait_engine(standby, _is_standby)
                time.sleep(rng.uniform(0.0, 0.5))  # any phase of the standby's looks
                start = time.monotonic()
                master.kill()
                master.wait()
                _wait_engine(standby, _is_master)
                times["killed"].append(time.monotonic() - start)
                _wait_engine(standby, lambda engine: engine.connected)
                times["connected"].append(time.monotonic() - start)
            finally:
                if master.poll() is None:
                    master.kill()
                    master.wait()
            other = Account(db, "127.0.0.1", server.port, _TOKEN).start()
            try:
                _wait_engine(other, _is_standby)
                start = time.monotonic()
                standby.close()
                _wait_engine(other, _is_master)
                times["closed"].append(time.monotonic() - start)
            finally:
                other.close()
    return times


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
    note = f"{rounds // 2 * _OWN_COMMITS:,} commits each, view open"
    figures += [
        Figure("(c) own commit, no watch, median", own[False], "µs", note),
        Figure("(c) own commit, watched, median", own[True], "µs", note),
        Figure("data_version check", _data_version_check(path), "µs", "nothing changed"),
    ]
    takeovers = _takeovers(ctx.scratch, _QUICK_TAKEOVERS if ctx.quick else _TAKEOVERS)
    count = f"{len(takeovers['killed'])} takeovers"
    for name, key in (
        ("(d) master killed -> standby is master", "killed"),
        ("(d) master killed -> standby connected", "connected"),
        ("(d) master closed -> standby is master", "closed"),
    ):
        values = [seconds * 1e3 for seconds in takeovers[key]]
        figures += [
            Figure(f"{name}, median", percentile(values, 50), "ms", count),
            Figure(f"{name}, max", max(values), "ms"),
        ]
    return figures
