"""One-message commits: Postbox ``run()`` against raw APSW executing the same statements.

The storage benchmark calls :func:`commit_figures`. A database holds ``peers`` chats of
``history`` messages each, and one open chat (a user whose history is fully loaded, in
the root chat list). Every commit is ``postbox.run(fn)`` where ``fn`` adds one new
incoming message with text to the open chat: history, id index, full-text index, read
state, chat list, transaction version, the change record and (where views are open)
their replay. The ``StoreMessage`` is built before the clock starts.

Each scenario (no view open; the chat's history view and the root chat list open) runs
on three identical copies of the database:

1. **Capture** (not timed): the commits run through Postbox on copy A with an APSW exec
   tracer on its connection, which records every statement executed during each
   ``run()`` and its bindings: what the commit costs SQLite.
2. **Timed**, alternating so both sides see the same machine noise: the same commits
   through Postbox (untraced) on copy B, and raw APSW on copy C executing each commit's
   captured statements with their bindings, reads stepped to the end as Postbox does
   (the BEGIN IMMEDIATE and COMMIT are among them), on a connection with the same pragmas.
3. **Check**: copies B and C end with the same rows in every table.

Figures: median and p99 µs of both sides, their ratio (aim <= 2), the statements per
commit, and the Python overhead (Postbox median - raw median: everything but SQLite,
the thread hop included). An empty ``run()`` against raw ``BEGIN IMMEDIATE; COMMIT``
gives the fixed cost of a transaction.
"""

from __future__ import annotations

import gc
import hashlib
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import apsw

from benchmarks.harness import Figure, percentile
from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    ChatListViewKey,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Subscription,
    Transaction,
)
from postbox.view_keys import AnyViewKey

__all__ = [
    "CHAT",
    "FIRST_TIMESTAMP",
    "FULL",
    "QUICK",
    "CommitConfig",
    "adder",
    "build",
    "commit_figures",
    "message",
]


@dataclass(frozen=True)
class CommitConfig:
    peers: int
    history: int
    commits: int


FULL: Final = CommitConfig(peers=500, history=40, commits=2_000)
QUICK: Final = CommitConfig(peers=100, history=20, commits=400)

_WARMUP: Final = 100
_CLOUD: Final = 0
CHAT: Final = PeerId.make(PeerNamespace.USER, 1_000)
FIRST_TIMESTAMP: Final = 1_700_000_000
_PRAGMAS: Final = (("journal_mode", "WAL"), ("synchronous", "NORMAL"), ("temp_store", "MEMORY"))
#: WAL pages past which a busy postbox folds the WAL back (``postbox.BUSY_CHECKPOINT_PAGES``).
_CHECKPOINT_PAGES: Final = 8_000

_SHADOW_SUFFIXES: Final = ("_data", "_idx", "_content", "_docsize", "_config")

#: A statement and its bindings as the exec tracer saw them.
_Statement = tuple[str, Any]


def _ok(condition: bool) -> str:
    return "OK" if condition else "MISSED"


# -- the database -------------------------------------------------------------------


def message(peer_id: PeerId, id_: int, timestamp: int) -> StoreMessage:
    return StoreMessage(
        peer_id,
        _CLOUD,
        id_,
        timestamp,
        int(MessageFlags.INCOMING),
        author_id=peer_id.id,
        text=f"message {id_} of chat {peer_id.id}",
    )


def build(path: Path, config: CommitConfig) -> None:
    """The database every copy starts from, checkpointed and closed."""
    kinds = (PeerNamespace.USER, PeerNamespace.GROUP, PeerNamespace.CHANNEL)
    others = [PeerId.make(kinds[i % 3], 10_000 + i) for i in range(config.peers)]

    def setup(tx: Transaction) -> None:
        tx.update_peers(Peer(peer_id, f"peer {peer_id.id}") for peer_id in [CHAT, *others])
        for peer_id in [CHAT, *others]:
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion())
        tx.remove_hole(CHAT, _CLOUD, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)
        timestamp = FIRST_TIMESTAMP - 10 * config.history * (config.peers + 1)
        messages = []
        for i in range(1, config.history + 1):
            for peer_id in [CHAT, *others]:
                timestamp += 1
                messages.append(message(peer_id, i, timestamp))
        tx.add_messages(messages)

    with Postbox(path, watch_file=False) as postbox:
        postbox.run(setup)


def _copy(source: Path, target: Path) -> None:
    """Copy a closed database; each copy gets its own folder: a postbox watches its
    folder's writes, which must not wake it for the raw side's."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    shutil.copyfile(source, target)


def _connection(postbox: Postbox) -> apsw.Connection:
    """The postbox's APSW connection, for the exec tracer (a benchmark's privilege)."""
    box = postbox._box
    assert box is not None
    return box._db


class _RawDatabase:
    """A plain APSW connection with the postbox's pragmas and checkpoint rule."""

    def __init__(self, path: Path) -> None:
        self.db = apsw.Connection(str(path), statementcachesize=512)
        for name, value in _PRAGMAS:
            self.db.execute(f"PRAGMA {name} = {value}").fetchall()
        self.cursor = self.db.cursor()
        self.wal_pages = 0
        # As a postbox: a WAL hook replaces SQLite's checkpoints inside COMMIT; the WAL is
        # folded back after a commit that leaves it long (timed with that commit).
        self.db.set_wal_hook(self._on_wal_commit)

    def _on_wal_commit(self, connection: apsw.Connection, name: str, pages: int) -> int:
        self.wal_pages = pages
        return apsw.SQLITE_OK

    def checkpoint_if_long(self) -> None:
        if self.wal_pages > _CHECKPOINT_PAGES:
            log, done = self.db.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            self.wal_pages = max(0, log - done)

    def close(self) -> None:
        self.db.close()


def _digest(path: Path) -> str:
    """A hash of every row of every table (FTS5 content included, shadow tables not)."""
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        digest = hashlib.sha256()
        tables = [
            str(name)
            for (name,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        ]
        full_text = [name for name in tables if name.startswith("ft_")]
        shadows = {f"{name}{suffix}" for name in full_text for suffix in _SHADOW_SUFFIXES}
        names = sorted(name for name in tables if name not in shadows)
        for name in names:
            digest.update(name.encode())
            order = "rowid" if name.startswith("ft_") else "1"
            columns = "rowid, *" if name.startswith("ft_") else "*"
            for row in db.execute(f'SELECT {columns} FROM "{name}" ORDER BY {order}'):
                digest.update(repr(tuple(row)).encode())
        return digest.hexdigest()
    finally:
        db.close()


# -- one scenario -------------------------------------------------------------------


@dataclass
class _Samples:
    postbox: list[float]
    raw: list[float]
    #: Statements per captured commit, and those of them outside the write transaction.
    statements: list[int]
    outside_write: list[int]


def _open_views(postbox: Postbox, keys: Sequence[AnyViewKey]) -> Subscription | None:
    if not keys:
        return None
    subscription = postbox.combined_view(keys, lambda snapshot: None)
    subscription.ready.result()
    return subscription


def adder(new: StoreMessage) -> Callable[[Transaction], None]:
    batch = [new]

    def fn(tx: Transaction) -> None:
        tx.add_messages(batch)

    return fn


def _capture(path: Path, keys: Sequence[AnyViewKey], messages: Sequence[StoreMessage]) -> Any:
    """Every statement each commit's ``run()`` executed, with its bindings."""
    postbox = Postbox(path)
    try:
        subscription = _open_views(postbox, keys)
        current: list[_Statement] = []
        recording = False

        def tracer(cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
            if recording:
                current.append((sql, bindings))
            return True

        db = _connection(postbox)
        db.exec_trace = tracer
        captured: list[list[_Statement]] = []
        for new in messages:
            fn = adder(new)
            current = []
            recording = True
            postbox.run(fn)
            recording = False
            captured.append(current)
        db.exec_trace = None
        if subscription is not None:
            subscription.dispose()
        return captured
    finally:
        postbox.close()


def _replay(cursor: apsw.Cursor, statements: Sequence[_Statement]) -> None:
    for sql, bindings in statements:
        cursor.execute(sql, bindings).fetchall()


def _run_scenario(
    base: Path, scratch: Path, keys: Sequence[AnyViewKey], config: CommitConfig
) -> _Samples:
    captured_path, postbox_path, raw_path = (
        scratch / "capture" / "commit.sqlite",
        scratch / "postbox" / "commit.sqlite",
        scratch / "raw" / "commit.sqlite",
    )
    for path in (captured_path, postbox_path, raw_path):
        _copy(base, path)
    count = config.commits + _WARMUP
    messages = [message(CHAT, config.history + i, FIRST_TIMESTAMP + i) for i in range(1, count + 1)]
    captured = _capture(captured_path, keys, messages)

    samples = _Samples([], [], [], [])
    clock = time.perf_counter
    postbox = Postbox(postbox_path)
    raw = _RawDatabase(raw_path)
    try:
        subscription = _open_views(postbox, keys)
        gc.collect()
        for i, (new, statements) in enumerate(zip(messages, captured, strict=True)):
            fn = adder(new)
            start = clock()
            postbox.run(fn)
            postbox_us = (clock() - start) * 1e6
            start = clock()
            _replay(raw.cursor, statements)
            raw.checkpoint_if_long()
            raw_us = (clock() - start) * 1e6
            if i >= _WARMUP:
                samples.postbox.append(postbox_us)
                samples.raw.append(raw_us)
                samples.statements.append(len(statements))
                samples.outside_write.append(_outside_write(statements))
        if subscription is not None:
            subscription.dispose()
    finally:
        postbox.close()
        raw.close()
    if _digest(postbox_path) != _digest(raw_path):
        raise AssertionError("postbox and the raw replay left different rows")
    return samples


def _outside_write(statements: Sequence[_Statement]) -> int:
    """Statements after the write transaction's COMMIT (the views' replay)."""
    for position, (sql, _) in enumerate(statements):
        if sql == "COMMIT":
            return len(statements) - position - 1
    return len(statements)


def _empty_transactions(base: Path, scratch: Path, count: int) -> tuple[list[float], list[float]]:
    """µs of an empty ``run()`` and of raw ``BEGIN IMMEDIATE; COMMIT``, alternating."""
    postbox_path, raw_path = scratch / "postbox" / "empty.sqlite", scratch / "raw" / "empty.sqlite"
    _copy(base, postbox_path)
    _copy(base, raw_path)
    postbox = Postbox(postbox_path)
    raw = _RawDatabase(raw_path)
    clock = time.perf_counter
    postbox_samples: list[float] = []
    raw_samples: list[float] = []
    try:
        cursor = raw.cursor
        for i in range(count + _WARMUP):
            start = clock()
            postbox.run(_nothing)
            postbox_us = (clock() - start) * 1e6
            start = clock()
            cursor.execute("BEGIN IMMEDIATE")
            cursor.execute("COMMIT")
            raw_us = (clock() - start) * 1e6
            if i >= _WARMUP:
                postbox_samples.append(postbox_us)
                raw_samples.append(raw_us)
    finally:
        postbox.close()
        raw.close()
    return postbox_samples, raw_samples


def _nothing(tx: Transaction) -> None:
    return None


# -- figures ------------------------------------------------------------------------


def _scenario_figures(label: str, samples: _Samples) -> list[Figure]:
    pb_median, pb_p99 = percentile(samples.postbox, 50), percentile(samples.postbox, 99)
    raw_median, raw_p99 = percentile(samples.raw, 50), percentile(samples.raw, 99)
    ratio = pb_median / raw_median
    overhead = pb_median - raw_median
    statements = percentile(samples.statements, 50)
    outside = percentile(samples.outside_write, 50)
    return [
        Figure(f"commit {label} postbox median", pb_median, "µs", "run(), thread hop included"),
        Figure(f"commit {label} postbox p99", pb_p99, "µs"),
        Figure(f"commit {label} raw median", raw_median, "µs", "same statements, same bindings"),
        Figure(f"commit {label} raw p99", raw_p99, "µs"),
        Figure(f"commit {label} ratio median", ratio, "x", f"aim <= 2: {_ok(ratio <= 2)}"),
        Figure(f"commit {label} ratio p99", pb_p99 / raw_p99, "x"),
        Figure(
            f"commit {label} statements",
            statements,
            "",
            f"median per commit, BEGIN/COMMIT included; {outside:.0f} after the COMMIT",
        ),
        Figure(
            f"commit {label} Python overhead",
            overhead,
            "µs",
            f"postbox - raw median: {overhead / pb_median:.0%} of the commit",
        ),
    ]


def commit_figures(scratch: Path, config: CommitConfig) -> list[Figure]:
    """The one-message commit figure set (see the module docstring)."""
    scratch.mkdir(parents=True, exist_ok=True)
    base = scratch / "commit-base.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(base) + suffix).unlink(missing_ok=True)
    build(base, config)
    views: list[AnyViewKey] = [
        MessageHistoryViewKey(CHAT, HistoryAnchor.upper_bound(), count=50),
        ChatListViewKey(count=50),
    ]
    note = f"{config.commits:,} commits, {config.peers + 1:,} chats of {config.history} messages"
    figures = [Figure("commit set-up", config.commits, "commits", note)]
    for label, keys in (("no view", []), ("2 views", views)):
        figures += _scenario_figures(label, _run_scenario(base, scratch, keys, config))
    empty_postbox, empty_raw = _empty_transactions(base, scratch, config.commits)
    empty_median, raw_median = percentile(empty_postbox, 50), percentile(empty_raw, 50)
    figures += [
        Figure(
            "empty run() postbox median",
            empty_median,
            "µs",
            "a transaction that does nothing: thread hop, BEGIN, COMMIT",
        ),
        Figure("empty transaction raw median", raw_median, "µs", "BEGIN IMMEDIATE; COMMIT"),
    ]
    return figures
