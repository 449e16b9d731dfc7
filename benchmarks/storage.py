"""Storage benchmark: Postbox against raw APSW on the same rows, schema and pragmas.

One run measures, on a database of N messages (1,000,000; 50,000 with ``--quick``):

1. **Bulk insert through Postbox.** Pre-built ``StoreMessage`` objects (building them is
   not timed) go through ``Postbox.run(lambda tx: tx.add_messages(chunk))`` in
   transactions of 100,000 messages (10,000 with ``--quick``), each followed by an empty
   transaction, timed too, so that any clean-up a write leaves behind is charged to it.
   The mix is realistic: 200 peers (users,
   groups, channels) with a Zipf-like skew, interleaved in one timeline, ids ascending per
   peer with a few gaps, timestamps ascending, ~30% incoming, ~9% with a shared-media tag
   (and media), short texts. Every message with text also goes into the FTS5 index.
   Reported as messages/s and as rows/s (rows = every row Postbox left in the file, FTS
   rows included).
2. **The raw baseline.** Every table of the Postbox file is copied, schema (``sqlite_schema``)
   and rows, into a fresh file with the same pragmas (WAL, ``synchronous=NORMAL``,
   ``temp_store=MEMORY``): regular tables sorted by key, the FTS5 table by rowid with the same
   (rowid, collection, item, contents). Reading the rows is not timed; only the
   ``executemany`` inserts (plain ``INSERT``) are, in as many transactions as Postbox used,
   each holding the same share of every table. Reported as messages/s (N / time, to compare
   with 1.), rows/s, and the ratio Postbox/raw. A second replay writes the rows in Postbox's
   own transaction grouping (each row goes into the transaction that first wrote it), which
   gives the file the same page layout as Postbox's; the difference between the two replays
   is the cost of appending to 200 histories at once rather than writing one sorted run.
3. **A 50-message history window through Postbox** at random anchors (existing messages with
   at least 50 neighbours on each side): ``tx.get_messages(peer, 0, lower=anchor, limit=50)``
   (oldest first) and ``upper=anchor, newest_first=True``. The read is timed inside the
   transaction function with ``perf_counter``, so the thread hop, BEGIN and COMMIT are
   excluded; the full ``Postbox.run`` round trip is reported separately. Median and p99 in µs.
4. **The same windows by raw APSW** on the Postbox file (same pages), each in a read
   transaction whose BEGIN and COMMIT are not timed, alternating with the Postbox reads so
   both see the same machine noise: ``SELECT key, value ... WHERE key >= ? AND key < ?
   ORDER BY key LIMIT 50`` and ``msgpack.unpackb`` of each value. Median, p99 and the ratio
   Postbox/raw.
5. **Point look-ups by MessageId**: ``tx.get_message(id)`` for random stored ids, many per
   transaction (timed inside the function), against raw APSW doing the same two look-ups
   (id index, then history) and ``msgpack.unpackb``; batches alternate between the two.

6. **One-message commits** (``benchmarks/_storage_commit.py``): ``Postbox.run`` adding one
   message to a chat, with no view and with two views open, against raw APSW executing the
   statements Postbox executed, with the same bindings, on a copy of the same file.

The notes show the aims: insert ratio >= 0.5, window p99 < 300 µs and within 3x raw, a
one-message commit within 2x raw.
"""

from __future__ import annotations

import gc
import itertools
import random
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import apsw
import msgpack

from benchmarks import _storage_commit
from benchmarks.harness import BenchContext, Figure, benchmark, percentile, timed
from postbox import (
    ChatListInclusion,
    Media,
    MediaKind,
    Message,
    MessageFlags,
    MessageId,
    MessageIndex,
    MessageTags,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.keys import MESSAGE_ID, MESSAGE_INDEX, O32, O64, peer_namespace_prefix
from postbox.tables.message_history_index_table import INDEX_VALUE

__all__ = ["run"]


@dataclass(frozen=True)
class _Config:
    messages: int
    chunk: int
    peers: int
    window_samples: int
    lookups: int
    lookups_per_tx: int


_FULL: Final = _Config(
    messages=1_000_000,
    chunk=100_000,
    peers=200,
    window_samples=2_000,
    lookups=50_000,
    lookups_per_tx=1_000,
)
_QUICK: Final = _Config(
    messages=50_000, chunk=10_000, peers=200, window_samples=500, lookups=5_000, lookups_per_tx=500
)

_SEED: Final = 0x50B0
_WINDOW: Final = 50
_WARMUP: Final = 200
_PRAGMAS: Final = (("journal_mode", "WAL"), ("synchronous", "NORMAL"), ("temp_store", "MEMORY"))
_CLOUD: Final = 0
_OWN_USER_ID: Final = 1
_FIRST_TIMESTAMP: Final = 1_600_000_000
_HISTORY_TABLE: Final = "t_message_history"
_INDEX_TABLE: Final = "t_message_history_index"
_INCOMING: Final = int(MessageFlags.INCOMING)


# -- the workload ---------------------------------------------------------------


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(syllables, k=rng.choice((1, 2, 2, 3, 3, 4)))))
    return sorted(words)


class _Workload:
    """Deterministic messages: skewed peers, ascending ids and timestamps, a realistic mix."""

    def __init__(self, peer_count: int, seed: int = _SEED) -> None:
        rng = self.rng = random.Random(seed)
        kinds = (
            (PeerNamespace.USER,) * 12 + (PeerNamespace.GROUP,) * 5 + (PeerNamespace.CHANNEL,) * 3
        )
        self.peers = [PeerId.make(kinds[i % len(kinds)], 10_000 + i * 7) for i in range(peer_count)]
        weights = [1.0 / (rank + 1) for rank in range(peer_count)]
        rng.shuffle(weights)
        self.cum_weights = list(itertools.accumulate(weights))
        self.next_id = [rng.randint(1, 1_000) for _ in range(peer_count)]
        #: Per peer, the ids and timestamps stored so far (ascending).
        self.ids: list[list[int]] = [[] for _ in range(peer_count)]
        self.timestamps: list[list[int]] = [[] for _ in range(peer_count)]
        self.timestamp = _FIRST_TIMESTAMP
        self.members = [rng.randrange(100_000, 10**9) for _ in range(500)]
        vocabulary = _vocabulary(rng, 4_000)
        zipf = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocabulary))))
        lengths = (1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16, 24)
        self.texts = [
            " ".join(rng.choices(vocabulary, cum_weights=zipf, k=rng.choice(lengths)))
            for _ in range(30_000)
        ]

    def chunk(self, size: int) -> list[StoreMessage]:
        rng = self.rng
        random_ = rng.random
        peers, next_id, ids, timestamps = self.peers, self.next_id, self.ids, self.timestamps
        texts, members = self.texts, self.members
        result: list[StoreMessage] = []
        for p in rng.choices(range(len(peers)), cum_weights=self.cum_weights, k=size):
            peer_id = peers[p]
            id_ = next_id[p]
            next_id[p] = id_ + (1 if random_() < 0.97 else rng.randint(2, 4))
            self.timestamp += rng.randint(1, 40)
            timestamp = self.timestamp
            ids[p].append(id_)
            timestamps[p].append(timestamp)
            incoming = random_() < 0.3
            if not incoming:
                author = _OWN_USER_ID
            elif peer_id.namespace == PeerNamespace.USER:
                author = peer_id.id
            else:
                author = rng.choice(members)
            text = rng.choice(texts)
            tags = 0
            media: tuple[Media, ...] = ()
            kind = random_()
            if kind < 0.09:
                if kind < 0.04:
                    tags, media_kind = MessageTags.PHOTO, MediaKind.PHOTO
                elif kind < 0.055:
                    tags, media_kind = MessageTags.VIDEO, MediaKind.VIDEO
                elif kind < 0.065:
                    tags, media_kind = MessageTags.FILE, MediaKind.FILE
                elif kind < 0.07:
                    tags, media_kind = MessageTags.VOICE, MediaKind.VOICE
                else:
                    tags, media_kind = MessageTags.LINK, MediaKind.LINK
                media_id = rng.getrandbits(62)
                if media_kind == MediaKind.LINK:
                    url = f"https://example.com/{media_id % 100_000}"
                    media = (Media(media_kind, media_id, 0, url, text[:40]),)
                    text = f"{text} {url}"
                else:
                    media = (Media(media_kind, media_id, rng.randrange(10_000, 50_000_000)),)
                    if random_() < 0.6:
                        text = ""  # media without a caption
            reply_to = None
            if random_() < 0.05 and len(ids[p]) > 1:
                reply_to = ids[p][-1 - rng.randrange(min(len(ids[p]) - 1, 30)) - 1]
            result.append(
                StoreMessage(
                    peer_id,
                    _CLOUD,
                    id_,
                    timestamp,
                    _INCOMING if incoming else 0,
                    int(tags),
                    author,
                    text,
                    media,
                    reply_to,
                )
            )
        return result

    def random_index(self, rng: random.Random, margin: int) -> MessageIndex:
        """A stored message with at least ``margin`` messages of its peer on each side."""
        counts = [max(0, len(ids) - 2 * margin) for ids in self.ids]
        if not any(counts):
            raise ValueError(f"no peer has {2 * margin + 1} messages")
        [p] = rng.choices(range(len(counts)), weights=counts)
        position = margin + rng.randrange(counts[p])
        peer_id = self.peers[p]
        return MessageIndex(
            MessageId(peer_id, _CLOUD, self.ids[p][position]), self.timestamps[p][position]
        )


# -- helpers ----------------------------------------------------------------------


def _connect(path: Path, *, readonly: bool = False) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    if not readonly:
        flags |= apsw.SQLITE_OPEN_CREATE
    db = apsw.Connection(str(path), flags=flags, statementcachesize=512)
    for name, value in _PRAGMAS:
        if not readonly or name != "journal_mode":
            db.execute(f"PRAGMA {name} = {value}").fetchall()
    return db


def _rows(db: apsw.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` (run to completion, so no statement is left holding a snapshot)."""
    return [tuple(row) for row in db.execute(sql).fetchall()]


def _index_key(index: MessageIndex) -> bytes:
    (peer_id, namespace, id_), timestamp = index
    return MESSAGE_INDEX.pack(peer_id + O64, namespace + O32, timestamp + O32, id_ + O32)


def _median_p99(samples: Sequence[float]) -> tuple[float, float]:
    return percentile(samples, 50), percentile(samples, 99)


def _mib(path: Path) -> float:
    """The database's size in pages (WAL content included), in MiB."""
    db = _connect(path, readonly=True)
    try:
        [(pages,)] = _rows(db, "PRAGMA page_count")
        [(page_size,)] = _rows(db, "PRAGMA page_size")
    finally:
        db.close()
    return int(pages) * int(page_size) / 2**20


def _ok(condition: bool) -> str:
    return "OK" if condition else "MISSED"


# -- 1. Postbox insert --------------------------------------------------------------


def _setup_peers(postbox: Postbox, peers: Sequence[PeerId]) -> None:
    def fn(tx: Transaction) -> None:
        tx.update_peers(Peer(peer_id, f"peer {peer_id.id}") for peer_id in peers)
        for peer_id in peers:
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion())

    postbox.run(fn)


def _nothing(tx: Transaction) -> None:
    return None


def _insert_chunk(postbox: Postbox, chunk: list[StoreMessage]) -> float:
    """Seconds to store ``chunk`` in one transaction, deferred clean-up included.

    An empty transaction after the write charges to it anything the write left for the
    next transaction to do. ``chunk`` stays referenced
    throughout, so freeing the benchmark's own input objects is not timed, nor is the
    cycle collection run before the write.
    """

    def fn(tx: Transaction) -> None:
        tx.add_messages(chunk)

    gc.collect()
    with timed() as t:
        postbox.run(fn)
        postbox.run(_nothing)
    return t.seconds


# -- 2. raw baseline ----------------------------------------------------------------


@dataclass
class _TableCopy:
    name: str
    insert: str
    rows: list[tuple[Any, ...]]
    #: For the replay in Postbox's grouping: the transaction each row went into.
    groups: list[int]


_SHADOW_SUFFIXES: Final = ("_data", "_idx", "_content", "_docsize", "_config")


#: A statement and its bindings, run before the timed inserts.
_Setup = tuple[str, tuple[Any, ...]]


def _read_copy(
    source: Path, group_of: Callable[[str, tuple[Any, ...]], int]
) -> tuple[list[_Setup], list[_TableCopy]]:
    """The Postbox file's schema and every table's rows, in key order.

    The schema is the DDL (tables before indices) and the FTS5 tables' settings (their
    ``_config`` rows); FTS5's other shadow tables are the index itself, rebuilt by inserting.
    """
    db = _connect(source, readonly=True)
    try:
        schema = [
            (str(kind), str(name), str(sql))
            for kind, name, sql in _rows(
                db, "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid"
            )
        ]
        virtual = [name for _, name, sql in schema if sql.upper().startswith("CREATE VIRTUAL")]
        shadows = {v + s for v in virtual for s in _SHADOW_SUFFIXES}
        setup: list[_Setup] = [
            (sql, ()) for kind, name, sql in schema if kind == "table" and name not in shadows
        ]
        setup += [
            (sql, ()) for kind, name, sql in schema if kind == "index" and name not in shadows
        ]
        existing = {name for _, name, _ in schema}
        for table in virtual:
            if f"{table}_config" in existing:
                setup += [
                    (f'INSERT OR REPLACE INTO "{table}_config" (k, v) VALUES (?, ?)', row)
                    for row in _rows(db, f'SELECT k, v FROM "{table}_config"')
                ]
        copies = []
        for kind, name, _ in schema:
            if kind != "table" or name in shadows:
                continue
            info = _rows(db, f'PRAGMA table_info("{name}")')
            columns = [str(row[1]) for row in info]
            if name in virtual:
                select_columns, order = ["rowid", *columns], "rowid"
            else:
                pk = [str(row[1]) for row in sorted(info, key=lambda row: row[5]) if row[5]]
                select_columns, order = columns, ", ".join(pk) or "rowid"
            names = ", ".join(select_columns)
            rows = _rows(db, f'SELECT {names} FROM "{name}" ORDER BY {order}')
            placeholders = ", ".join("?" * len(select_columns))
            copies.append(
                _TableCopy(
                    name,
                    f'INSERT INTO "{name}" ({names}) VALUES ({placeholders})',
                    rows,
                    [group_of(name, row) for row in rows],
                )
            )
        return setup, copies
    finally:
        db.close()


def _raw_insert(
    path: Path,
    setup: Sequence[_Setup],
    copies: Sequence[_TableCopy],
    transactions: int,
    *,
    grouped: bool,
) -> float:
    """Create the schema in a fresh file and insert every row; returns the insert seconds.

    Not grouped: transaction ``i`` holds the ``i``-th of ``transactions`` equal slices of every
    table (so one sorted run per table). Grouped: the rows Postbox wrote in its transaction
    ``i``, in key order per table.
    """
    db = _connect(path)
    try:
        with db:
            for statement, bindings in setup:
                db.execute(statement, bindings).fetchall()
        batches: list[list[tuple[str, list[tuple[Any, ...]]]]] = [[] for _ in range(transactions)]
        for copy in copies:
            if grouped:
                slices: list[list[tuple[Any, ...]]] = [[] for _ in range(transactions)]
                for row, group in zip(copy.rows, copy.groups, strict=True):
                    slices[group].append(row)
            else:
                n = len(copy.rows)
                bounds = [n * i // transactions for i in range(transactions + 1)]
                slices = [copy.rows[bounds[i] : bounds[i + 1]] for i in range(transactions)]
            for i, rows in enumerate(slices):
                if rows:
                    batches[i].append((copy.insert, rows))
        cursor = db.cursor()
        gc.collect()
        total = 0.0
        for batch in batches:
            with timed() as t:
                cursor.execute("BEGIN IMMEDIATE")
                for sql, rows in batch:
                    cursor.executemany(sql, rows)
                cursor.execute("COMMIT")
            total += t.seconds
        return total
    finally:
        db.close()


class _Grouping:
    """Which Postbox transaction first wrote a row, from the timestamps and FTS rowids.

    Message-derived rows carry their message's timestamp (history and tag keys, the id
    index's value) or an FTS rowid (the full-text table's rowid, the value of a rowid
    companion table if there is one); timestamps and rowids both ascend across the
    transactions. The few bookkeeping rows every transaction rewrites (read states, chat
    list, holes, metadata) go into the last one.
    """

    def __init__(self, transactions: int) -> None:
        self.last = transactions - 1
        self.first_timestamps: list[int] = []
        #: Per full-text (virtual) table, the first rowid each transaction used.
        self.first_rowids: dict[str, list[int]] = {}

    def record(self, db: apsw.Connection, first_timestamp: int) -> None:
        """Note where the next transaction starts; call before running it."""
        self.first_timestamps.append(first_timestamp)
        names = _rows(db, "SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")
        for (name,) in names:
            # Run to completion: a statement left unfinished would pin the WAL (no checkpoints).
            [(max_rowid,)] = _rows(db, f'SELECT max(rowid) FROM "{name}"')
            self.first_rowids.setdefault(name, []).append(int(max_rowid or 0) + 1)

    def _by_timestamp(self, timestamp: int) -> int:
        return max(0, bisect_right(self.first_timestamps, timestamp) - 1)

    def _by_rowid(self, table: str, rowid: int) -> int:
        firsts = self.first_rowids.get(table)
        if firsts is None:
            return self.last
        return max(0, bisect_right(firsts, rowid) - 1)

    def __call__(self, table: str, row: tuple[Any, ...]) -> int:
        if table == _HISTORY_TABLE:
            return self._by_timestamp(MESSAGE_INDEX.unpack(row[0])[2] - O32)
        if table == _INDEX_TABLE:
            return self._by_timestamp(INDEX_VALUE.unpack(row[1])[0] - O32)
        if table == "t_message_history_tags":
            return self._by_timestamp(int.from_bytes(row[0][16:20], "big") - O32)
        if table == "t_text_index_rowids" and len(self.first_rowids) == 1:
            [full_text] = self.first_rowids
            return self._by_rowid(full_text, int.from_bytes(row[1], "big", signed=True))
        if table in self.first_rowids:
            return self._by_rowid(table, int(row[0]))
        return self.last


# -- 3./4. windows ------------------------------------------------------------------


@dataclass
class _WindowSamples:
    inside: list[float]
    round_trip: list[float]
    raw: list[float]


def _postbox_window(
    postbox: Postbox, anchor: MessageIndex, newest_first: bool
) -> tuple[float, float, list[bytes]]:
    """µs inside the function, µs of the whole ``run``, and the keys read."""
    clock = time.perf_counter
    peer_id = anchor.id.peer_id

    def fn(tx: Transaction) -> tuple[float, list[Message]]:
        start = clock()
        if newest_first:
            messages = tx.get_messages(
                peer_id, _CLOUD, upper=anchor, limit=_WINDOW, newest_first=True
            )
        else:
            messages = tx.get_messages(peer_id, _CLOUD, lower=anchor, limit=_WINDOW)
        return clock() - start, messages

    start = clock()
    elapsed, messages = postbox.run(fn)
    round_trip = clock() - start
    return elapsed * 1e6, round_trip * 1e6, [_index_key(m.index) for m in messages]


_RANGE: Final = f"SELECT key, value FROM {_HISTORY_TABLE} WHERE key >= ? AND key < ? ORDER BY key"
_RANGE_ASC: Final = f"{_RANGE} LIMIT {_WINDOW}"
_RANGE_DESC: Final = f"{_RANGE} DESC LIMIT {_WINDOW}"


def _raw_window(
    cursor: apsw.Cursor, anchor: MessageIndex, newest_first: bool
) -> tuple[float, list[bytes]]:
    """µs of the range scan and the decoding (BEGIN and COMMIT not timed), and the keys read."""
    clock = time.perf_counter
    unpackb = msgpack.unpackb
    peer_id = anchor.id.peer_id
    if newest_first:
        sql = _RANGE_DESC
        bounds = (peer_namespace_prefix(peer_id, _CLOUD), _index_key(anchor))
    else:
        sql = _RANGE_ASC
        bounds = (_index_key(anchor), peer_namespace_prefix(peer_id, _CLOUD + 1))
    cursor.execute("BEGIN")
    try:
        start = clock()
        rows = [
            (key, unpackb(value, raw=False, use_list=False))
            for key, value in cursor.execute(sql, bounds)
        ]
        elapsed = clock() - start
    finally:
        cursor.execute("COMMIT")
    return elapsed * 1e6, [row[0] for row in rows]


def _windows(
    postbox: Postbox, raw_db: apsw.Connection, anchors: Sequence[MessageIndex], newest_first: bool
) -> _WindowSamples:
    """Postbox and raw reads of each anchor's window, alternating so both see the same noise."""
    samples = _WindowSamples([], [], [])
    cursor = raw_db.cursor()
    for anchor in anchors:
        inside, round_trip, postbox_keys = _postbox_window(postbox, anchor, newest_first)
        raw, raw_keys = _raw_window(cursor, anchor, newest_first)
        if postbox_keys != raw_keys or len(raw_keys) != _WINDOW:
            raise AssertionError(f"postbox and raw read different windows at {anchor}")
        samples.inside.append(inside)
        samples.round_trip.append(round_trip)
        samples.raw.append(raw)
    return samples


# -- 5. point look-ups --------------------------------------------------------------


def _postbox_lookups(postbox: Postbox, batch: Sequence[MessageId]) -> float:
    """Seconds spent inside the transaction function."""
    clock = time.perf_counter

    def fn(tx: Transaction) -> float:
        start = clock()
        for message_id in batch:
            if tx.get_message(message_id) is None:
                raise AssertionError(f"{message_id} is not stored")
        return clock() - start

    return postbox.run(fn)


def _raw_lookups(cursor: apsw.Cursor, batch: Sequence[MessageId]) -> float:
    """Seconds of the look-ups (BEGIN and COMMIT not timed)."""
    get_index = f"SELECT value FROM {_INDEX_TABLE} WHERE key = ?"
    get_history = f"SELECT value FROM {_HISTORY_TABLE} WHERE key = ?"
    id_pack, index_pack, value_unpack = MESSAGE_ID.pack, MESSAGE_INDEX.pack, INDEX_VALUE.unpack
    unpackb = msgpack.unpackb
    cursor.execute("BEGIN")
    try:
        with timed() as t:
            for peer_id, namespace, id_ in batch:
                peer, ns, id_key = peer_id + O64, namespace + O32, id_ + O32
                index_row: Any = cursor.execute(get_index, (id_pack(peer, ns, id_key),)).fetchone()
                timestamp = value_unpack(index_row[0])[0]
                row: Any = cursor.execute(get_history, (index_pack(peer, ns, timestamp, id_key),))
                unpackb(row.fetchone()[0], raw=False, use_list=False)
    finally:
        cursor.execute("COMMIT")
    return t.seconds


# -- the benchmark ------------------------------------------------------------------


@benchmark("storage")
def run(ctx: BenchContext) -> list[Figure]:
    config = _QUICK if ctx.quick else _FULL
    n, chunk = config.messages, config.chunk
    transactions = -(-n // chunk)
    postbox_path = ctx.scratch / "postbox.sqlite"
    raw_path = ctx.scratch / "raw.sqlite"
    raw_grouped_path = ctx.scratch / "raw-grouped.sqlite"
    for path in (postbox_path, raw_path, raw_grouped_path):
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    commit_config = _storage_commit.QUICK if ctx.quick else _storage_commit.FULL
    figures = _storage_commit.commit_figures(ctx.scratch / "commit", commit_config)
    tx_note = f"{transactions} tx of {chunk:,} messages"

    # 1. Postbox insert.
    workload = _Workload(config.peers)
    grouping = _Grouping(transactions)
    postbox = Postbox(postbox_path)
    try:
        _setup_peers(postbox, workload.peers)
        check = _connect(postbox_path, readonly=True)
        insert_seconds = 0.0
        for i in range(transactions):
            batch = workload.chunk(min(chunk, n - i * chunk))
            grouping.record(check, batch[0].timestamp)
            insert_seconds += _insert_chunk(postbox, batch)
            del batch
        check.close()

        # 2. Raw baseline: same schema and rows, fresh files.
        setup, copies = _read_copy(postbox_path, grouping)
        row_count = sum(len(copy.rows) for copy in copies)
        stored = {copy.name: len(copy.rows) for copy in copies}
        if stored.get(_HISTORY_TABLE) != n:
            raise AssertionError(f"{stored.get(_HISTORY_TABLE)} messages stored, {n} added")
        raw_seconds = _raw_insert(raw_path, setup, copies, transactions, grouped=False)
        grouped_seconds = _raw_insert(raw_grouped_path, setup, copies, transactions, grouped=True)
        del copies
        gc.collect()

        postbox_rate, raw_rate = n / insert_seconds, n / raw_seconds
        grouped_rate = n / grouped_seconds
        insert_ratio = postbox_rate / raw_rate
        figures += [
            Figure(
                "insert postbox",
                postbox_rate,
                "msg/s",
                f"N={n:,} in {tx_note} (+1 empty tx each); {insert_seconds:.1f} s",
            ),
            Figure(
                "insert postbox rows",
                row_count / insert_seconds,
                "rows/s",
                f"{row_count:,} rows in {len(stored)} tables (FTS rows included)",
            ),
            Figure(
                "insert raw",
                raw_rate,
                "msg/s",
                f"executemany, same rows, {transactions} tx, sorted slices; {raw_seconds:.1f} s",
            ),
            Figure("insert raw rows", row_count / raw_seconds, "rows/s", "same rows"),
            Figure(
                "insert ratio postbox/raw",
                insert_ratio,
                "x",
                f"aim >= 0.5: {_ok(insert_ratio >= 0.5)}",
            ),
            Figure(
                "insert raw, postbox grouping",
                grouped_rate,
                "msg/s",
                f"each row in the tx Postbox wrote it in; {grouped_seconds:.1f} s",
            ),
            Figure(
                "insert ratio postbox/raw grouped",
                postbox_rate / grouped_rate,
                "x",
                "vs the same rows in the same tx and page layout",
            ),
            Figure(
                "file size postbox",
                _mib(postbox_path),
                "MiB",
                f"raw {_mib(raw_path):,.1f} MiB, raw grouped {_mib(raw_grouped_path):,.1f} MiB",
            ),
        ]

        # 3./4. Windows.
        rng = random.Random(_SEED + 1)
        anchors = [
            workload.random_index(rng, _WINDOW) for _ in range(config.window_samples + _WARMUP)
        ]
        raw_db = _connect(postbox_path, readonly=True)
        try:
            for newest_first in (False, True):
                label = "newest first" if newest_first else "oldest first"
                _windows(postbox, raw_db, anchors[:_WARMUP], newest_first)
                gc.collect()
                samples = _windows(postbox, raw_db, anchors[_WARMUP:], newest_first)
                pb_median, pb_p99 = _median_p99(samples.inside)
                rt_median, rt_p99 = _median_p99(samples.round_trip)
                raw_median, raw_p99 = _median_p99(samples.raw)
                count = f"{len(samples.raw):,} anchors, postbox and raw alternating"
                figures += [
                    Figure(f"window {label} postbox median", pb_median, "µs", count),
                    Figure(
                        f"window {label} postbox p99",
                        pb_p99,
                        "µs",
                        f"aim < 300 µs: {_ok(pb_p99 < 300)}",
                    ),
                    Figure(
                        f"window {label} postbox run() median",
                        rt_median,
                        "µs",
                        "whole round trip: queue, thread, BEGIN/COMMIT",
                    ),
                    Figure(f"window {label} postbox run() p99", rt_p99, "µs"),
                    Figure(f"window {label} raw median", raw_median, "µs", "range scan + unpackb"),
                    Figure(f"window {label} raw p99", raw_p99, "µs"),
                    Figure(
                        f"window {label} ratio median",
                        pb_median / raw_median,
                        "x",
                        f"aim <= 3: {_ok(pb_median / raw_median <= 3)}",
                    ),
                    Figure(
                        f"window {label} ratio p99",
                        pb_p99 / raw_p99,
                        "x",
                        f"aim <= 3: {_ok(pb_p99 / raw_p99 <= 3)}",
                    ),
                ]

            # 5. Point look-ups, postbox and raw batches alternating.
            ids = [workload.random_index(rng, 0).id for _ in range(config.lookups)]
            per_tx = config.lookups_per_tx
            batches = [ids[i : i + per_tx] for i in range(0, len(ids), per_tx)]
            cursor = raw_db.cursor()
            _postbox_lookups(postbox, batches[0])
            _raw_lookups(cursor, batches[0])
            gc.collect()
            postbox_seconds = raw_lookup_seconds = 0.0
            for batch_ids in batches:
                postbox_seconds += _postbox_lookups(postbox, batch_ids)
                raw_lookup_seconds += _raw_lookups(cursor, batch_ids)
            postbox_lookup = len(ids) / postbox_seconds
            raw_lookup = len(ids) / raw_lookup_seconds
            figures += [
                Figure(
                    "get_message postbox",
                    postbox_lookup,
                    "lookups/s",
                    f"{len(ids):,} random ids, {per_tx:,} per tx, timed inside the function",
                ),
                Figure("get_message raw", raw_lookup, "lookups/s", "id index + history + unpackb"),
                Figure("get_message ratio postbox/raw", postbox_lookup / raw_lookup, "x"),
            ]
        finally:
            raw_db.close()
    finally:
        postbox.close()
    return figures
