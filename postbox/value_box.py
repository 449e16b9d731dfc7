"""ValueBox: ordered key/value tables over one APSW connection.

As Telegram's SqliteValueBox, each Postbox table is one SQLite table
``(key, value)``: ``key BLOB PRIMARY KEY ... WITHOUT ROWID`` for binary keys,
``key INTEGER PRIMARY KEY`` for int64 keys. Statements are kept as constant
strings per table so APSW's statement cache prepares each one once. Every APSW
exception is translated into a ``PostboxError`` here.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, TypeAlias

import apsw

from postbox.errors import (
    CorruptValueError,
    DatabaseError,
    InvalidSearchQueryError,
    NotADatabaseError,
    ReadOnlyDatabaseError,
    translate_sqlite_error,
)

__all__ = ["FullTextTable", "Key", "KeyType", "ValueBox", "ValueBoxTable"]

Key: TypeAlias = bytes | int

#: Marks a file as written by postbox ("PBOX").
APPLICATION_ID: Final = 0x50424F58
#: The file mode of new database files and their WAL/SHM companions.
PRIVATE_FILE_MODE: Final = 0o600
DEFAULT_BUSY_TIMEOUT_MS: Final = 5000
#: WAL pages past which an idle postbox folds the WAL back (SQLite's own default).
CHECKPOINT_PAGES: Final = 1000


class KeyType(enum.Enum):
    BINARY = "binary"
    INT64 = "int64"


@dataclass(frozen=True, slots=True)
class ValueBoxTable:
    """A table's name and key type; the SQL for it is derived once."""

    name: str
    key_type: KeyType = KeyType.BINARY

    @property
    def sql_name(self) -> str:
        return f"t_{self.name}"


@dataclass(frozen=True, slots=True)
class FullTextTable:
    """An FTS5 table holding (collection, item, contents) rows keyed by rowid."""

    name: str

    @property
    def sql_name(self) -> str:
        return f"ft_{self.name}"


class _Statements:
    """The constant SQL strings for one table."""

    __slots__ = ("count", "delete", "get", "range_asc", "range_desc", "upsert")

    def __init__(self, table: ValueBoxTable) -> None:
        name = table.sql_name
        self.get = f"SELECT value FROM {name} WHERE key = ?"
        self.upsert = f"INSERT OR REPLACE INTO {name} (key, value) VALUES (?, ?)"
        self.delete = f"DELETE FROM {name} WHERE key = ?"
        where = "key >= ? AND key < ?"
        # SQLite compiles a bare ``LIMIT ?`` with the bound value, so every execution
        # would prepare the statement again; an expression is bound like any other.
        limit = "LIMIT CAST(? AS INTEGER)"
        self.range_asc = f"SELECT key, value FROM {name} WHERE {where} ORDER BY key ASC {limit}"
        self.range_desc = f"SELECT key, value FROM {name} WHERE {where} ORDER BY key DESC {limit}"
        self.count = f"SELECT count(*) FROM {name} WHERE {where}"


class ValueBox:
    """One SQLite database file (or memory) holding every Postbox table.

    Not thread-safe by design: the postbox thread is its only user.
    """

    def __init__(
        self,
        path: str | None,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        check_pages: bool = False,
    ) -> None:
        """``check_pages``: look over every page before anything is written, even after a
        clean close (a file damaged since, by the disk or another program)."""
        self.path = path or ""
        self._statements: dict[str, _Statements] = {}
        self._in_transaction = False
        created = False
        #: A write-ahead log left behind: the last close was not clean (a crash, a kill,
        #: power lost) or another process has the file open.
        unclean = path is not None and _has_wal(path)
        if path is not None:
            created = _create_private_file(path)
        try:
            self._db = apsw.Connection(
                path or ":memory:",
                flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE,
                statementcachesize=512,
            )
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        try:
            self._db.set_busy_timeout(busy_timeout_ms)
            self._configure(new_file=created)
            if unclean or (check_pages and not created):
                self._check_pages()
        except BaseException:
            # Refused: close without folding the log into the file (a checkpoint writes).
            with contextlib.suppress(apsw.Error):
                self._db.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            self._db.close()
            raise
        self._cursor = self._db.cursor()
        self.wal_pages = 0
        #: The file's change counter as this connection's last transaction left it
        #: (``None``: not known).
        self._file_version: int | None = None
        #: A read transaction asked for lazily: BEGIN runs before the first read.
        self._begin_pending = False
        if path is not None:
            # Checkpoints are ours to schedule (between transactions, not inside a
            # commit, where they would delay the views' snapshots by milliseconds).
            self._db.set_wal_hook(self._on_wal_commit)

    # -- set-up ---------------------------------------------------------------

    def _configure(self, *, new_file: bool) -> None:
        try:
            if self.path and self._db.readonly("main"):
                raise ReadOnlyDatabaseError(
                    f"{self.path} is read-only; postbox needs to write to it and its folder"
                )
            # Whose file it is, before anything in it changes (WAL mode rewrites the header).
            application_id = self.pragma("application_id")
            claim = application_id != APPLICATION_ID
            if claim and (application_id != 0 or self._has_tables()):
                raise NotADatabaseError(
                    f"{self.path} is a SQLite database but not a postbox database"
                )
            # One pragma per call: APSW runs later statements of a string only when iterated.
            if self.path:
                mode = self.pragma("journal_mode", "WAL")
                if str(mode).lower() != "wal":
                    raise DatabaseError(f"{self.path} could not switch to WAL mode (got {mode})")
            self.pragma("synchronous", "NORMAL")
            self.pragma("temp_store", "MEMORY")
            if claim:
                self.pragma("application_id", str(APPLICATION_ID))
            if new_file:
                _restrict_companions(self.path)
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def _check_pages(self) -> None:
        """Look over every page once (SQLite's ``quick_check``: structure and formats, not
        indexes against rows) so a damaged file is refused before anything is written
        into it, not found later in a table rarely read. About 9 ms per MiB of file."""
        try:
            problems = [str(row[0]) for row in self._db.execute("PRAGMA quick_check(5)")]
        except apsw.CorruptError as exc:
            problems = [str(exc)]
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        if problems != ["ok"]:
            raise NotADatabaseError(
                f"{self.path} is damaged ({problems[0]}); restore it from a copy or delete it "
                "to sync again from the server"
            )

    def pragma(self, name: str, value: str | None = None) -> object:
        """Set (if ``value``) and read back one pragma."""
        if value is not None:
            self._db.execute(f"PRAGMA {name} = {value}").fetchall()
        rows = self._db.execute(f"PRAGMA {name}").fetchall()
        return rows[0][0] if rows else None

    def _has_tables(self) -> bool:
        rows = self._db.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        return bool(rows and rows[0][0])

    def ensure_table(self, table: ValueBoxTable) -> None:
        if table.key_type is KeyType.INT64:
            ddl = (
                f"CREATE TABLE IF NOT EXISTS {table.sql_name} (key INTEGER PRIMARY KEY, value BLOB)"
            )
        else:
            ddl = (
                f"CREATE TABLE IF NOT EXISTS {table.sql_name} "
                "(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID"
            )
        self._execute_ddl(ddl)
        self._statements[table.name] = _Statements(table)

    def ensure_full_text_table(self, table: FullTextTable) -> None:
        self._execute_ddl(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table.sql_name} USING fts5("
            "collection UNINDEXED, item UNINDEXED, contents, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )

    def _execute_ddl(self, ddl: str) -> None:
        try:
            self._db.execute(ddl).fetchall()
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    @property
    def user_version(self) -> int:
        value = self.pragma("user_version")
        return value if isinstance(value, int) else 0

    def set_user_version(self, version: int) -> None:
        self.pragma("user_version", str(int(version)))

    def close(self) -> None:
        with contextlib.suppress(apsw.Error):
            self._db.close()

    # -- transactions ---------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self._in_transaction

    def begin(self) -> None:
        """BEGIN IMMEDIATE: take the write lock now, not at the first write."""
        try:
            self._cursor.execute("BEGIN IMMEDIATE")
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        self._in_transaction = True

    def begin_read(self, *, lazy: bool = False) -> None:
        """BEGIN (deferred): a consistent read snapshot without taking the write lock.

        ``lazy``: the BEGIN waits for the first read, so a read transaction that reads
        nothing (views whose replay needs no look-up) costs no statement.
        """
        self._in_transaction = True
        if lazy:
            self._begin_pending = True
            return
        self._begin()

    def _begin(self) -> None:
        self._begin_pending = False
        try:
            self._cursor.execute("BEGIN")
        except apsw.Error as exc:
            self._in_transaction = False
            raise translate_sqlite_error(exc, self.path) from exc

    def others_committed(self) -> bool:
        """Inside a transaction that read or took the write lock: whether another
        connection committed since this one's last transaction ended.

        SQLite's file change counter (``SQLITE_FCNTL_DATA_VERSION``, no statement) moves
        with every commit to the file, this connection's included; each end of a
        transaction here notes where it stands. True when unsure.
        """
        if self._begin_pending:
            return False  # nothing read yet: nothing seen of anyone's commits
        try:
            return self._db.data_version() != self._file_version
        except apsw.Error:
            return True

    def _note_file_version(self) -> None:
        try:
            self._file_version = self._db.data_version()
        except apsw.Error:
            self._file_version = None

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file (a cheap check)."""
        try:
            rows = self._cursor.execute("PRAGMA data_version").fetchall()
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        return int(rows[0][0]) if rows else 0  # type: ignore[arg-type]

    def commit(self) -> None:
        try:
            self._cursor.execute("COMMIT")
        except apsw.Error as exc:
            self.rollback()
            raise translate_sqlite_error(exc, self.path) from exc
        self._in_transaction = False
        self._note_file_version()

    def rollback(self) -> None:
        if self._begin_pending:
            self._begin_pending = False
            self._in_transaction = False
            return
        if self._db.in_transaction:
            with contextlib.suppress(apsw.Error):
                self._db.execute("ROLLBACK")
        self._in_transaction = False
        self._note_file_version()

    @contextlib.contextmanager
    def write_transaction(self) -> Iterator[None]:
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    # -- key/value access -----------------------------------------------------

    def get(self, table: ValueBoxTable, key: Key) -> bytes | None:
        if self._begin_pending:
            self._begin()
        try:
            # fetchall steps the statement to its end: one left mid-way would keep a
            # read snapshot open, pinning the WAL and hiding other processes' commits.
            rows = self._cursor.execute(self._statements[table.name].get, (key,)).fetchall()
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        return rows[0][0] if rows else None  # type: ignore[return-value]

    def set(self, table: ValueBoxTable, key: Key, value: bytes) -> None:
        try:
            self._cursor.execute(self._statements[table.name].upsert, (key, value))
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def remove(self, table: ValueBoxTable, key: Key) -> None:
        try:
            self._cursor.execute(self._statements[table.name].delete, (key,))
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def set_many(self, table: ValueBoxTable, items: Iterable[tuple[Key, bytes]]) -> None:
        """Write rows; pass them sorted by key, since SQLite inserts sorted keys much faster."""
        try:
            self._cursor.executemany(self._statements[table.name].upsert, items)
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def remove_many(self, table: ValueBoxTable, keys: Iterable[Key]) -> None:
        try:
            self._cursor.executemany(self._statements[table.name].delete, ((k,) for k in keys))
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def range(
        self,
        table: ValueBoxTable,
        lower: Key,
        upper: Key,
        *,
        limit: int = -1,
        reverse: bool = False,
    ) -> Iterator[tuple[Key, bytes]]:
        """Rows with ``lower <= key < upper``, ascending (or descending with ``reverse``).

        Lazy: rows are read as the iterator advances, so stopping early costs nothing.
        """
        if self._begin_pending:
            self._begin()
        statements = self._statements[table.name]
        sql = statements.range_desc if reverse else statements.range_asc
        try:
            cursor = self._db.execute(sql, (lower, upper, limit))
            yield from cursor
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def range_list(
        self,
        table: ValueBoxTable,
        lower: Key,
        upper: Key,
        *,
        limit: int = -1,
        reverse: bool = False,
    ) -> list[tuple[Key, bytes]]:
        """``range`` read at once: cheaper than iterating when every row is wanted."""
        if self._begin_pending:
            self._begin()
        statements = self._statements[table.name]
        sql = statements.range_desc if reverse else statements.range_asc
        try:
            return self._db.execute(sql, (lower, upper, limit)).fetchall()  # type: ignore[return-value]
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def count(self, table: ValueBoxTable, lower: Key, upper: Key) -> int:
        if self._begin_pending:
            self._begin()
        try:
            rows = self._cursor.execute(
                self._statements[table.name].count, (lower, upper)
            ).fetchall()
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        return int(rows[0][0]) if rows else 0  # type: ignore[arg-type]

    # -- full text ------------------------------------------------------------

    def full_text_set_many(
        self, table: FullTextTable, rows: Iterable[tuple[int, int, bytes, str]]
    ) -> None:
        """Insert ``(rowid, collection, item, contents)`` rows."""
        sql = (
            f"INSERT INTO {table.sql_name} (rowid, collection, item, contents) VALUES (?, ?, ?, ?)"
        )
        try:
            self._cursor.executemany(sql, rows)
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def full_text_remove_many(self, table: FullTextTable, rowids: Iterable[int]) -> None:
        sql = f"DELETE FROM {table.sql_name} WHERE rowid = ?"
        try:
            self._cursor.executemany(sql, ((r,) for r in rowids))
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc

    def full_text_max_rowid(self, table: FullTextTable) -> int:
        if self._begin_pending:
            self._begin()
        sql = f"SELECT rowid FROM {table.sql_name} ORDER BY rowid DESC LIMIT 1"
        try:
            rows = self._cursor.execute(sql).fetchall()
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        return int(rows[0][0]) if rows else 0  # type: ignore[arg-type]

    def full_text_match(
        self, table: FullTextTable, query: str, *, collection: int | None, limit: int
    ) -> list[tuple[int, bytes]]:
        """``(collection, item)`` of rows matching an FTS5 query, newest rowid first."""
        sql = f"SELECT collection, item FROM {table.sql_name} WHERE {table.sql_name} MATCH ?"
        bindings: tuple[object, ...] = (query,)
        if collection is not None:
            sql += " AND collection = ?"
            bindings += (collection,)
        sql += " ORDER BY rowid DESC LIMIT ?"
        bindings += (limit,)
        if self._begin_pending:
            self._begin()
        try:
            rows = self._db.execute(sql, bindings).fetchall()
        except apsw.SQLError as exc:
            # The statement is fixed: an SQL error here can only come from the query text.
            raise InvalidSearchQueryError(f"cannot search for {query!r}: {exc}") from exc
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        for found, item in rows:
            if type(found) is not int or type(item) is not bytes:
                raise CorruptValueError(
                    f"stored full-text entry ({found!r:.40}, {item!r:.40}) is malformed"
                )
        return rows  # type: ignore[return-value]

    # -- maintenance ----------------------------------------------------------

    def _on_wal_commit(self, connection: apsw.Connection, name: str, pages: int) -> int:
        self.wal_pages = pages
        return apsw.SQLITE_OK

    def checkpoint_if_over(self, pages: int = CHECKPOINT_PAGES) -> bool:
        """Fold the WAL back into the file if it holds more than ``pages``; True if done."""
        if self.wal_pages <= pages or self._in_transaction:
            return False
        try:
            log, done = self._db.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc
        self.wal_pages = max(0, log - done)
        return True

    def execute_raw(self, sql: str, bindings: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Run one statement; for migrations and tests, never for the tables' hot paths."""
        if self._begin_pending:
            self._begin()
        try:
            return [tuple(row) for row in self._db.execute(sql, bindings)]
        except apsw.Error as exc:
            raise translate_sqlite_error(exc, self.path) from exc


def _has_wal(path: str) -> bool:
    try:
        return os.path.getsize(path + "-wal") > 0
    except OSError:
        return False


def _create_private_file(path: str) -> bool:
    """Create ``path`` readable by its owner only if it does not exist; True if created."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE_MODE)
    except FileExistsError:
        return False
    except OSError as exc:
        raise ReadOnlyDatabaseError(f"cannot create {path}: {exc.strerror}") from exc
    os.close(fd)
    return True


def _restrict_companions(path: str) -> None:
    """SQLite gives -wal/-shm the main file's mode; make sure of it for new files."""
    for suffix in ("-wal", "-shm"):
        companion = path + suffix
        try:
            mode = stat.S_IMODE(os.stat(companion).st_mode)
        except FileNotFoundError:
            continue
        if mode != PRIVATE_FILE_MODE:
            os.chmod(companion, PRIVATE_FILE_MODE)
