"""ValueBox: pragmas, range scans, and errors that name the problem and lose nothing."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import apsw
import pytest

from postbox import (
    DatabaseLockedError,
    MessageId,
    NotADatabaseError,
    Peer,
    PeerId,
    Postbox,
    PostboxClosedError,
    ReadOnlyDatabaseError,
    ReadStateViewKey,
    SchemaVersionError,
    StorageFullError,
    StoreMessage,
    Transaction,
)
from postbox import schema as schema_module
from postbox.errors import translate_sqlite_error
from postbox.value_box import KeyType, ValueBox, ValueBoxTable


@pytest.fixture
def box(db_path: Path) -> Iterator[ValueBox]:
    value_box = ValueBox(str(db_path))
    yield value_box
    value_box.close()


def test_pragmas_are_set_one_by_one_and_read_back(box: ValueBox) -> None:
    assert box.pragma("journal_mode") == "wal"
    assert box.pragma("synchronous") == 1  # NORMAL
    assert box.pragma("temp_store") == 2  # MEMORY


def test_tables_are_without_rowid_blob_tables_or_integer_tables(box: ValueBox) -> None:
    box.ensure_table(ValueBoxTable("binary"))
    box.ensure_table(ValueBoxTable("numbers", KeyType.INT64))
    rows = box.execute_raw("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
    sql = {name: text for name, text in rows}
    assert "WITHOUT ROWID" in str(sql["t_binary"])
    assert "key BLOB PRIMARY KEY" in str(sql["t_binary"])
    assert "key INTEGER PRIMARY KEY" in str(sql["t_numbers"])


def test_range_scans_both_directions_with_limits(box: ValueBox) -> None:
    table = ValueBoxTable("scan")
    box.ensure_table(table)
    with box.write_transaction():
        box.set_many(table, [(bytes([i]), bytes([i * 2])) for i in range(10)])
    keys = [key for key, _ in box.range(table, b"\x02", b"\x08")]
    assert keys == [bytes([i]) for i in range(2, 8)]
    keys = [key for key, _ in box.range(table, b"\x02", b"\x08", limit=3, reverse=True)]
    assert keys == [b"\x07", b"\x06", b"\x05"]
    assert box.count(table, b"\x00", b"\xff") == 10


def test_new_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "private.db"
    with Postbox(path) as postbox:
        postbox.run(lambda tx: tx.update_peers([Peer(PeerId(1), "x")]))
        for name in ["private.db", "private.db-wal", "private.db-shm"]:
            mode = stat.S_IMODE(os.stat(tmp_path / name).st_mode)
            assert mode == 0o600, name


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is a text file, not a database\n" * 200)
    before = path.read_bytes()
    with pytest.raises(NotADatabaseError, match="not a postbox database or is corrupt"):
        Postbox(path)
    assert path.read_bytes() == before


def test_another_applications_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    connection = apsw.Connection(str(path))
    connection.execute("CREATE TABLE notes (body TEXT)")
    connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.close()
    before = path.read_bytes()
    with pytest.raises(NotADatabaseError, match="not a postbox database"):
        Postbox(path)
    # Refused before anything changed: not even the journal mode in its header.
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    Postbox(path).close()
    path.chmod(0o444)
    # Root writes through file modes; an immutable file stops it too.
    immutable = os.geteuid() == 0
    if immutable:
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "+i", str(path)], check=False).returncode:
            pytest.skip("running as root on a file system without immutable files (chattr +i)")
    try:
        with pytest.raises(ReadOnlyDatabaseError, match="read-only"):
            Postbox(path)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o600)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (apsw.ReadOnlyError("attempt to write a readonly database"), ReadOnlyDatabaseError),
        (apsw.FullError("database or disk is full"), StorageFullError),
        (apsw.BusyError("database is locked"), DatabaseLockedError),
        (apsw.NotADBError("file is not a database"), NotADatabaseError),
        (apsw.CorruptError("database disk image is malformed"), NotADatabaseError),
    ],
)
def test_environment_errors_are_translated(error: apsw.Error, expected: type) -> None:
    translated = translate_sqlite_error(error, "/data/chat.db")
    assert type(translated) is expected
    assert "/data/chat.db" in str(translated)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ReadOnlyDatabaseError, match="cannot create"):
        Postbox(tmp_path / "missing" / "x.db")


def test_locked_database(db_path: Path, alice: PeerId) -> None:
    with Postbox(db_path, busy_timeout_ms=50) as postbox:
        holder = apsw.Connection(str(db_path))
        holder.execute("BEGIN IMMEDIATE")
        try:
            future = postbox.transaction(lambda tx: tx.update_peers([Peer(alice, "A")]))
            with pytest.raises(DatabaseLockedError, match="locked by another process"):
                future.result()
            with pytest.raises(DatabaseLockedError):
                Postbox(db_path, busy_timeout_ms=50)
            holder.execute("ROLLBACK")
        finally:
            holder.close()
        postbox.run(lambda tx: tx.update_peers([Peer(alice, "A")]))
        assert postbox.run(lambda tx: tx.get_peer(alice)) == Peer(alice, "A")


def test_full_disk_rolls_back_and_keeps_data(db_path: Path, alice: PeerId) -> None:
    with Postbox(db_path) as postbox:
        postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, text="kept")]))
        assert postbox._box is not None
        pages = postbox._box.pragma("page_count")
        postbox._box.pragma("max_page_count", str(pages))
        big = [StoreMessage(alice, 0, i, 10 + i, text="x" * 500) for i in range(2, 2000)]
        with pytest.raises(StorageFullError, match="no space left"):
            postbox.run(lambda tx: tx.add_messages(big))
        assert postbox.run(lambda tx: tx.message_count(alice, 0)) == 1
        assert postbox.run(lambda tx: tx.get_message(MessageId(alice, 0, 2))) is None
        kept = postbox.run(lambda tx: tx.get_message(MessageId(alice, 0, 1)))
        assert kept is not None and kept.text == "kept"


def test_newer_schema_is_refused(db_path: Path) -> None:
    Postbox(db_path).close()
    connection = apsw.Connection(str(db_path))
    connection.execute(f"PRAGMA user_version = {schema_module.SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(SchemaVersionError, match="newer postbox"):
        Postbox(db_path)


def test_migrations_run_in_order(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Postbox(db_path).close()
    current = schema_module.SCHEMA_VERSION
    ran: list[int] = []
    box = ValueBox(str(db_path))
    try:
        with box.write_transaction():
            schema_module.migrate(
                box,
                target=current + 2,
                migrations={
                    current: lambda b: ran.append(current),
                    current + 1: lambda b: ran.append(current + 1),
                },
            )
        assert ran == [current, current + 1]
        assert box.user_version == current + 2
    finally:
        box.close()


def test_missing_migration_is_an_error(db_path: Path) -> None:
    Postbox(db_path).close()
    box = ValueBox(str(db_path))
    try:
        with pytest.raises(SchemaVersionError, match="no migration"), box.write_transaction():
            schema_module.migrate(box, target=schema_module.SCHEMA_VERSION + 1, migrations={})
        assert box.user_version == schema_module.SCHEMA_VERSION
    finally:
        box.close()


def test_closed_postbox_refuses_transactions(db_path: Path) -> None:
    postbox = Postbox(db_path)
    postbox.close()
    postbox.close()
    with pytest.raises(PostboxClosedError):
        postbox.transaction(lambda tx: None)


def test_reads_leave_no_snapshot_open_so_the_wal_folds_back(
    postbox: Postbox, alice: PeerId
) -> None:
    # An open view makes every commit run its replay (and version checks) too.
    postbox.combined_view([ReadStateViewKey(alice)]).ready.result()
    messages = [StoreMessage(alice, 0, i, 10 + i, text="x" * 200) for i in range(1, 3000)]
    postbox.run(lambda tx: tx.add_messages(messages))
    for i in range(1, 50):
        postbox.run(functools.partial(Transaction.get_message, message_id=MessageId(alice, 0, i)))
    postbox.run(lambda tx: tx.message_count(alice, 0))
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "last write")]))

    def fold() -> tuple[int, int]:
        box = postbox._box
        assert box is not None
        frames, folded = box._db.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        return frames, folded

    done: Future[tuple[int, int]] = Future()
    postbox._submit(fold, done)  # between transactions, on the postbox thread
    frames, folded = done.result()
    assert frames > 0 and folded == frames  # no statement left open pins a frame
