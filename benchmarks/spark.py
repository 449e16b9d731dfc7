"""postbox-seed: the Spark path against the local path, and the SQLite writes of the
server database and of a client file against raw APSW writing the same rows, in the
same run.

Sizes: 1,000,000 and 10,000,000 messages (``--quick``: 100,000 and 1,000,000). Spark
time includes starting the JVM and the session for the first size.

The raw APSW baselines write exactly the rows the output file holds, into the same
tables (their own ``CREATE`` statements, secondary indexes after the rows), every table
in key order, prebuilt in memory, in one transaction with the journal off, then switch
the file to WAL: the cheapest way APSW has to write that file. The seed's own write is
timed by its stages: for the server database the merge of the shards its tasks wrote
and what ``import_dataset`` adds (dialogs, update log); for the client file the
transaction of the chats and the insert of the messages (their generation and sort are
Spark's and not counted).
"""

from __future__ import annotations

import functools
import shutil
import time
from pathlib import Path
from typing import Any

import apsw

from benchmarks.harness import BenchContext, Figure, benchmark, timed
from dataset import (
    AccountSpec,
    account_tables,
    build_message,
    iter_message_rows,
    plan_account,
    read_dataset,
)
from postbox import Postbox, StoreMessage, Transaction
from spark_tools.cli import seed
from spark_tools.client_db import ClientSpec, client_layout, window_rows, windows
from spark_tools.progress import Progress
from sync.server.store import ServerStore

#: A client file holding (nearly) every message sent before the offline point.
_WHOLE_CLIENT = ClientSpec(dialogs=None, active_chats=10_000, window=100_000)


def _spec(messages: int) -> AccountSpec:
    return AccountSpec(1, 5_000, 1_500, 1_000, messages, 30, log_days=1, delete_share=0.01)


def _parts(size: int) -> int:
    return max(4, size // 250_000)


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
        with timed() as spark_time:
            seed(spark, spec, out, _parts(size), quiet)
        local_out = ctx.scratch / f"local-{size}"
        with timed() as local_time:
            seed(None, spec, local_out, _parts(size), quiet)
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
            figures += _server_db(ctx, spark, spec, out)
            figures += _client_db(ctx, spark, spec)
        shutil.rmtree(out)
    spark.stop()
    return figures


def _stage_seconds(progress: Progress, prefix: str, skip: tuple[str, ...] = ()) -> float:
    return sum(
        seconds
        for name, seconds in progress.durations.items()
        if name.startswith(prefix) and name not in skip
    )


def _server_db(ctx: BenchContext, spark: Any, spec: AccountSpec, dataset: Path) -> list[Figure]:
    """The server database postbox-seed writes, and the import of a dataset directory,
    against raw APSW writing that database's rows."""
    path = ctx.scratch / "server.db"
    progress = Progress(quiet=True)
    with timed() as seed_time:
        seed(spark, spec, ctx.scratch / "with-server-db", _parts(spec.messages), progress,
             server_db=path)  # fmt: skip
    progress.close()
    write_seconds = _stage_seconds(progress, "server database")
    imported = ctx.scratch / "imported.db"
    with timed() as import_time:
        store = ServerStore(imported, clock=lambda: spec.now)
        store.import_dataset(read_dataset(dataset, with_messages=False),
                             rows=iter_message_rows(dataset))  # fmt: skip
        store.close()
    stored, raw_seconds = _raw_rewrite(path, ctx.scratch / "server-raw.db")
    shutil.rmtree(ctx.scratch / "with-server-db")
    messages = spec.messages
    return [
        Figure("seed with --server-db, spark wall", seed_time.seconds, "s",
               f"{messages:,} messages, dataset and server database"),
        Figure("server database write", messages / write_seconds, "rows/s",
               "merge of the task's shards, dialogs, update log"),
        Figure("raw APSW of the server database's rows", stored / raw_seconds, "rows/s",
               f"{stored:,} rows in every table"),
        Figure("server import / raw APSW", write_seconds / raw_seconds, "x",
               "postbox-seed --server-db's write against raw APSW writing the same rows"),
        Figure("dataset directory import / raw APSW", import_time.seconds / raw_seconds, "x",
               "postbox-server --dataset: reads and checks the files in one process"),
    ]  # fmt: skip


def _add(tx: Transaction, batch: list[StoreMessage]) -> None:
    tx.add_messages(batch)


def _client_db(ctx: BenchContext, spark: Any, spec: AccountSpec) -> list[Figure]:
    """A client file holding nearly every message, written by postbox-seed and through
    Postbox transactions, against raw APSW writing the rows it holds."""
    path = ctx.scratch / "client.db"
    progress = Progress(quiet=True)
    seed(spark, spec, ctx.scratch / "with-client-db", _parts(spec.messages), progress, path,
         _WHOLE_CLIENT)  # fmt: skip
    progress.close()
    shutil.rmtree(ctx.scratch / "with-client-db")
    write_seconds = _stage_seconds(progress, "client database", ("client database: sort",))
    stored, raw_seconds = _raw_rewrite(path, ctx.scratch / "client-raw.db")
    plan = plan_account(spec)
    layout = client_layout(plan, account_tables(plan), _WHOLE_CLIENT)
    rows = [
        build_message(row)
        for _, row in sorted(row for window in windows(layout) for row in window_rows(plan, window))
    ]
    through = ctx.scratch / "client-transactions.db"
    with timed() as postbox_time:
        postbox = Postbox(through)
        for start in range(0, len(rows), 20_000):
            postbox.run(functools.partial(_add, batch=rows[start : start + 20_000]))
        postbox.close()
    count = len(rows)
    return [
        Figure("client file write", count / write_seconds, "rows/s",
               f"{count:,} messages: history, id index, tags, text index, chats"),
        Figure("raw APSW of the client file's rows", stored / raw_seconds, "rows/s",
               f"{stored:,} rows in every table"),
        Figure("Postbox / raw APSW of its own rows", write_seconds / raw_seconds, "x",
               "postbox-seed --client-db's write against raw APSW writing the same rows"),
        Figure("Postbox add_messages / raw APSW of its own rows",
               postbox_time.seconds / raw_seconds, "x",
               "the same messages through transactions of 20,000"),
    ]  # fmt: skip


def _raw_rewrite(source: Path, target: Path) -> tuple[int, float]:
    """Time raw APSW writing exactly the rows the database at ``source`` holds into a
    file of the same schema (every table in key order, the text index through its own
    virtual table, secondary indexes after the rows); returns the rows and seconds."""
    db = apsw.Connection(str(source))
    schema = db.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
    ).fetchall()
    tables = [
        (str(name), str(sql))
        for kind, name, sql in schema
        if kind == "table" and not str(name).startswith(("ft_message_text_", "sqlite_"))
    ]
    indexes = [str(sql) for kind, _, sql in schema if kind == "index"]
    pragmas = [
        f"PRAGMA {name} = {db.execute(f'PRAGMA {name}').fetchall()[0][0]}"
        for name in ("application_id", "user_version")
    ]
    contents: dict[str, list[tuple[Any, ...]]] = {}
    for name, sql in tables:
        virtual = sql.upper().startswith("CREATE VIRTUAL TABLE")
        contents[name] = db.execute(
            f'SELECT {"rowid, " if virtual else ""}* FROM "{name}"'
        ).fetchall()
    db.close()
    with timed() as raw_time:
        out = apsw.Connection(str(target))
        out.execute("PRAGMA journal_mode = OFF")
        out.execute("PRAGMA synchronous = OFF")
        with out:
            for pragma in pragmas:
                out.execute(pragma)
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
            for sql in indexes:
                out.execute(sql)
        out.execute("PRAGMA journal_mode = WAL")
        out.close()
    return sum(len(rows) for rows in contents.values()), raw_time.seconds
