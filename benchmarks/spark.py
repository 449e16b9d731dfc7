"""postbox-seed: the Spark path against the local path, and the SQLite write of a client
file against raw APSW bulk inserts of the same key-ordered rows, in the same run.

Sizes: 1,000,000 and 10,000,000 messages (``--quick``: 100,000 and 1,000,000). Spark
time includes starting the JVM and the session for the first size.
"""

from __future__ import annotations

import functools
import shutil
import time
from pathlib import Path
from typing import Any

import apsw

from benchmarks.harness import BenchContext, Figure, benchmark, timed
from dataset import AccountSpec, build_message, iter_message_rows, read_dataset
from postbox import MessageId, MessageIndex, PeerId, Postbox, StoreMessage, Transaction
from postbox.keys import message_index_key
from spark_tools.cli import seed
from spark_tools.progress import Progress
from sync.protocol import Media as WireMedia
from sync.protocol import MediaKind as WireMediaKind
from sync.server.schema import DATASET_COLUMNS, SCHEMA, media_to_db
from sync.server.store import ServerStore


def _spec(messages: int) -> AccountSpec:
    return AccountSpec(1, 5_000, 1_500, 1_000, messages, 30, log_days=1, delete_share=0.01)


@benchmark("spark")
def run(ctx: BenchContext) -> list[Figure]:
    from spark_tools.session import spark_session

    sizes = (100_000, 1_000_000) if ctx.quick else (1_000_000, 10_000_000)
    quiet = Progress(quiet=True)
    figures: list[Figure] = []
    started = time.monotonic()
    spark = spark_session("local[*]")
    session_seconds = time.monotonic() - started
    figures.append(Figure("JVM and session start", session_seconds, "s"))
    for size in sizes:
        spec = _spec(size)
        out = ctx.scratch / f"spark-{size}"
        parts = max(4, size // 250_000)
        with timed() as spark_time:
            seed(spark, spec, out, parts, quiet)
        local_out = ctx.scratch / f"local-{size}"
        with timed() as local_time:
            seed(None, spec, local_out, parts, quiet)
        label = f"{size:,} messages"
        figures += [
            Figure(f"{label}: spark wall", spark_time.seconds, "s"),
            Figure(f"{label}: spark", size / spark_time.seconds, "rows/s"),
            Figure(f"{label}: local wall", local_time.seconds, "s"),
            Figure(f"{label}: local", size / local_time.seconds, "rows/s"),
            Figure(
                f"{label}: spark speed-up", local_time.seconds / spark_time.seconds, "x",
                "local / spark, same run",
            ),
        ]  # fmt: skip
        shutil.rmtree(local_out)
        if size == sizes[0]:
            figures += _server_import(ctx, out, spec)
            figures += _sqlite_write(ctx, out, min(size, 1_000_000))
        shutil.rmtree(out)
    spark.stop()
    return figures


def _server_import(ctx: BenchContext, dataset: Path, spec: AccountSpec) -> list[Figure]:
    """The server's import of the dataset (read, convert, insert, update log) against raw
    APSW inserting the same message rows, prebuilt, into the same table."""
    path = ctx.scratch / "server.db"
    with timed() as import_time:
        store = ServerStore(path, clock=lambda: spec.now)
        head = read_dataset(dataset, with_messages=False)
        store.import_dataset(head, rows=iter_message_rows(dataset))
        store.close()
    rows = [
        (r[0], r[2], r[3], 0 if r[4] & 1 else 1, r[6], r[7], _media_blob(r[8]), r[9], r[10])
        for r in iter_message_rows(dataset)
    ]
    raw_path = ctx.scratch / "server-raw.db"
    with timed() as raw_time:
        db = apsw.Connection(str(raw_path))
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(next(s for s in SCHEMA if "TABLE IF NOT EXISTS messages" in s))
        with db:
            db.executemany(
                f"INSERT INTO messages ({DATASET_COLUMNS}) VALUES ({', '.join('?' * 9)})", rows
            )
        db.close()
    count = len(rows)
    return [
        Figure("server import", count / import_time.seconds, "rows/s", f"{count:,} rows"),
        Figure("raw APSW insert (server rows)", count / raw_time.seconds, "rows/s", "prebuilt"),
        Figure(
            "server import / raw APSW",
            import_time.seconds / raw_time.seconds,
            "x",
            "import also reads and checks the files",
        ),  # fmt: skip
    ]


_KIND_NAMES = ("photo", "video", "file", "voice", "link")


def _media_blob(media: tuple[tuple[Any, ...], ...]) -> bytes | None:
    """The media column as the server stores it."""
    return media_to_db(
        [WireMedia(WireMediaKind(_KIND_NAMES[k]), i, n, u, t) for k, i, n, u, t in media]
    )


def _add(tx: Transaction, batch: list[StoreMessage]) -> None:
    tx.add_messages(batch)


def _sqlite_write(ctx: BenchContext, dataset: Path, limit: int) -> list[Figure]:
    """Load rows into a Postbox in key order vs raw APSW inserts of (key, value)."""
    rows = []
    for row in iter_message_rows(dataset):
        rows.append(row)
        if len(rows) >= limit:
            break
    messages = [build_message(row) for row in rows]
    keyed = sorted(
        (
            message_index_key(
                MessageIndex(MessageId(PeerId(m.peer_id), m.namespace, m.id or 0), m.timestamp)
            ),
            m.encode(),
        )
        for m in messages
    )
    raw_path = ctx.scratch / "raw.db"
    with timed() as raw_time:
        db = apsw.Connection(str(raw_path))
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE t (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
        with db:
            db.executemany("INSERT INTO t VALUES (?, ?)", keyed)
        db.close()
    postbox_path = ctx.scratch / "client.db"
    with timed() as postbox_time:
        postbox = Postbox(postbox_path)
        for start in range(0, len(messages), 20_000):
            postbox.run(functools.partial(_add, batch=messages[start : start + 20_000]))
        postbox.close()
    count = len(messages)
    stored, same_output_time = _raw_rewrite(postbox_path, ctx.scratch / "client-raw.db")
    return [
        Figure("raw APSW bulk insert", count / raw_time.seconds, "rows/s", f"{count:,} rows"),
        Figure("Postbox write (all indexes)", count / postbox_time.seconds, "rows/s", "same rows"),
        Figure(
            "Postbox / raw APSW",
            postbox_time.seconds / raw_time.seconds,
            "x",
            "history, id index, tags, text index",
        ),  # fmt: skip
        Figure(
            "Postbox / raw APSW of its own rows",
            postbox_time.seconds / same_output_time,
            "x",
            f"raw inserts of the {stored:,} rows the Postbox file holds, same tables, key order",
        ),
    ]


def _raw_rewrite(source: Path, target: Path) -> tuple[int, float]:
    """Time raw APSW writing exactly the rows a Postbox file holds into a file of the same
    schema (every table in key order, the text index through its own virtual table):
    the cost of the output alone, without Postbox's bookkeeping."""
    db = apsw.Connection(str(source))
    tables = [
        (name, sql)
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"
        )
        if not name.startswith(("ft_message_text_", "sqlite_"))
    ]
    contents: dict[str, list[tuple[Any, ...]]] = {}
    for name, sql in tables:
        if sql.upper().startswith("CREATE VIRTUAL TABLE"):
            contents[name] = list(db.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid'))
        else:
            contents[name] = list(db.execute(f'SELECT * FROM "{name}" ORDER BY key'))
    db.close()
    with timed() as raw_time:
        out = apsw.Connection(str(target))
        out.execute("PRAGMA journal_mode = WAL")
        out.execute("PRAGMA synchronous = NORMAL")
        with out:
            for name, sql in tables:
                out.execute(sql)
                rows = contents[name]
                if not rows:
                    continue
                marks = ", ".join("?" * len(rows[0]))
                if sql.upper().startswith("CREATE VIRTUAL TABLE"):
                    names = [column[1] for column in out.execute(f'PRAGMA table_info("{name}")')]
                    columns = ", ".join(["rowid", *names[: len(rows[0]) - 1]])
                    out.executemany(f'INSERT INTO "{name}" ({columns}) VALUES ({marks})', rows)
                else:
                    out.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
        out.close()
    return sum(len(rows) for rows in contents.values()), raw_time.seconds
