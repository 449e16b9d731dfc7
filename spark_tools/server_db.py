"""The server database ``postbox-server --db`` serves, written by ``postbox-seed
--server-db`` at SQLite speed.

Each slice of messages (a Spark task, or one step of the local loop) converts its
dataset rows into the server's ``messages`` and ``media_index`` rows
(``sync.server.importer.server_message_rows``, the import's own conversion) and writes
them, in key order, to a shard: a small SQLite file beside the output, written with the
journal off. The driver then merges the shards into the database in slice order with
``ATTACH`` and ``INSERT ... SELECT``, so the rows never pass through Python: the
messages shard after shard (their primary key is the slices' order, so every insert is
an append), the shared-media index last in one sorted statement, then the small
tables, the dialogs and the update log as ``import_dataset`` writes them.

The sequence of inserts does not depend on how the messages were cut into slices, so
the file is byte-identical for any partition count and on Spark or locally. The merge
runs in WAL mode: one transaction per shard (``ATTACH`` cannot run inside one), and
unlike a rollback journal WAL keeps no per-transaction counter in the file header.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import apsw

from dataset import DemoDataset, MessageRow
from spark_tools.errors import OutputError
from spark_tools.progress import Progress
from sync.errors import SyncError
from sync.server.importer import server_message_rows
from sync.server.schema import DATASET_COLUMNS
from sync.server.store import ServerStore

__all__ = [
    "remove_shards",
    "shard_directory",
    "shard_path",
    "tee_into_shard",
    "write_server_db",
]

#: Rows converted and inserted per batch while a shard is written.
_SHARD_BATCH = 10_000
_SHARD_SCHEMA = (
    f"CREATE TABLE messages ({DATASET_COLUMNS})",
    "CREATE TABLE media (peer, kind, id)",
)


def shard_directory(server_db: Path) -> Path:
    """A fresh hidden directory beside ``server_db`` for its shards (not created)."""
    return server_db.parent / f".{server_db.name}.{secrets.token_hex(6)}.shards"


def shard_path(directory: Path | str, number: int) -> Path:
    return Path(directory) / f"shard-{number:05d}.db"


def tee_into_shard(path: Path, rows: Iterable[MessageRow]) -> Iterator[MessageRow]:
    """Pass ``rows`` (dataset message rows, in key order) through, writing their server
    rows to a new shard at ``path`` as they go; the shard is complete once the
    iterator is exhausted."""
    db = apsw.Connection(str(path))
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        for statement in _SHARD_SCHEMA:
            db.execute(statement)
        source = iter(rows)
        with db:
            while batch := list(itertools.islice(source, _SHARD_BATCH)):
                messages, media = server_message_rows(batch)
                db.executemany(f"INSERT INTO messages VALUES ({', '.join('?' * 9)})", messages)
                db.executemany("INSERT INTO media VALUES (?, ?, ?)", media)
                yield from batch
    finally:
        db.close()


def write_server_db(
    path: Path, head: DemoDataset, shards: Sequence[Path], rows: int, progress: Progress
) -> None:
    """Write the server database at ``path`` (which must not exist) from the dataset's
    small tables (``head``, its messages ignored) and the message ``shards`` in slice
    order; the file is written beside ``path`` and renamed once complete."""
    if path.exists():
        raise OutputError(f"{path}: exists; refusing to overwrite a database")
    staging = path.parent / f".{path.name}.{secrets.token_hex(6)}.partial"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        store = ServerStore(staging, clock=lambda: head.now)
        try:
            _merge(store.database.connection, shards, rows, progress)
            progress.stage("server database: dialogs and log")
            store.import_dataset(head, rows=())
        finally:
            store.close()
        os.replace(staging, path)
    except (apsw.Error, SyncError) as error:
        raise OutputError(f"{path}: {error}") from None
    except OSError as error:
        raise OutputError(f"{path}: cannot be written: {error.strerror or error}") from None
    finally:
        for leftover in (staging, *(Path(f"{staging}{s}") for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def _merge(db: apsw.Connection, shards: Sequence[Path], rows: int, progress: Progress) -> None:
    progress.stage("server database: messages", rows)
    db.execute("PRAGMA temp_store = FILE")
    db.execute("CREATE TEMP TABLE media_load (peer, kind, id)")
    for shard in shards:
        db.execute("ATTACH DATABASE ? AS shard", (str(shard),))
        try:
            with db:
                db.execute(
                    f"INSERT INTO main.messages ({DATASET_COLUMNS}) "
                    f"SELECT {DATASET_COLUMNS} FROM shard.messages ORDER BY rowid"
                )
                db.execute("INSERT INTO temp.media_load SELECT * FROM shard.media ORDER BY rowid")
            count = db.execute("SELECT count(*) FROM shard.messages").fetchall()[0][0]
        finally:
            db.execute("DETACH DATABASE shard")
        progress.advance(count if isinstance(count, int) else 0)
    progress.stage("server database: media index")
    with db:
        db.execute(
            "INSERT OR IGNORE INTO main.media_index (peer, kind, id) "
            "SELECT peer, kind, id FROM temp.media_load ORDER BY peer, kind, id"
        )
        db.execute("DROP TABLE temp.media_load")


def remove_shards(directory: Path) -> None:
    """Delete a shard directory and everything in it."""
    shutil.rmtree(directory, ignore_errors=True)
