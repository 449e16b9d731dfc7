"""The server's SQLite file, and the few statements every part of the store runs on it.

``ServerStore`` and its ``UpdateLogs`` share one ``ServerDatabase``: plain SQL with the
rows fetched at once, bulk inserts, the ``meta`` table of named counters, and
transactions that nest (an inner one is a savepoint). Every apsw error on the file is a
``ServerDatabaseError`` saying what is wrong (``database_error``): a damaged page read
at start ends the server in one line, and one read while serving fails that request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import apsw

from sync.errors import NotAServerDatabaseError, ServerDatabaseError
from sync.server.schema import database_digest, open_database

__all__ = ["ServerDatabase", "ServerTransaction", "database_error"]


def database_error(error: apsw.Error, path: str | Path) -> ServerDatabaseError:
    """apsw's error on the server database, as one a person can act on."""
    if isinstance(error, apsw.NotADBError | apsw.CorruptError):
        return NotAServerDatabaseError(
            f"{path} is not a database or is damaged ({error}); it was left unchanged"
        )
    if isinstance(error, apsw.BusyError | apsw.LockedError):
        return ServerDatabaseError(f"{path} is locked by another process ({error})")
    if isinstance(error, apsw.ReadOnlyError | apsw.CantOpenError):
        return ServerDatabaseError(f"cannot write {path}: check the file and its folder")
    if isinstance(error, apsw.FullError):
        return ServerDatabaseError(f"no space left for {path}")
    return ServerDatabaseError(f"the server database {path} failed: {error}")


class ServerDatabase:
    """The open server database at ``path`` (``:memory:`` for none); one thread uses it.

    A file that cannot be opened raises a ``ServerDatabaseError`` saying why.
    """

    def __init__(self, path: str | Path) -> None:
        try:
            if _closed_uncleanly(path):
                _check_pages(path)
            self._connection = open_database(path)
        except apsw.Error as error:
            raise database_error(error, path) from error
        except OSError as error:  # the file could not even be created
            raise ServerDatabaseError(f"cannot create {path}: {error.strerror}") from error
        self._path = path

    def close(self) -> None:
        self._connection.close()

    @property
    def connection(self) -> apsw.Connection:
        """The apsw connection itself, for bulk tools that run their own SQL (their apsw
        errors are theirs to translate)."""
        return self._connection

    def transaction(self) -> ServerTransaction:
        """A context manager: the changes made inside it land together or not at all."""
        return ServerTransaction(self._connection, self._path)

    def execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all of its rows."""
        try:
            return self._connection.execute(sql, bindings).fetchall()
        except apsw.Error as error:
            raise database_error(error, self._path) from error

    def one(self, sql: str, bindings: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or ``None`` if it has none."""
        rows = self.execute(sql, bindings)
        return rows[0] if rows else None

    def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once for each row of bindings."""
        try:
            self._connection.executemany(sql, rows)
        except apsw.Error as error:
            raise database_error(error, self._path) from error

    def meta(self, key: str, default: int) -> int:
        """The counter ``key`` of the ``meta`` table, or ``default`` if it was never set."""
        row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
        return default if row is None else int(row[0])

    def set_meta(self, key: str, value: int) -> None:
        self.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def digest(self) -> str:
        """A hash of every row of every table: equal digests, equal truth."""
        try:
            return database_digest(self._connection)
        except apsw.Error as error:
            raise database_error(error, self._path) from error


def _closed_uncleanly(path: str | Path) -> bool:
    """A write-ahead log left behind: the server was killed, or lost power, while writing."""
    if str(path) == ":memory:":
        return False
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except OSError:
        return False


def _check_pages(path: str | Path) -> None:
    """Look over every page (SQLite's ``quick_check``) before anything writes, as the client
    does after an unclean close: damage in a table read only by some requests is found
    now, not by them. The file is closed without folding the log into it."""
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        try:
            problems = [str(row[0]) for row in db.execute("PRAGMA quick_check(5)")]
        except apsw.CorruptError as error:
            problems = [str(error)]
        if problems != ["ok"]:
            raise NotAServerDatabaseError(
                f"{path} is damaged ({problems[0]}); it was left unchanged: restore it from a "
                "copy, or start over from the dataset"
            )
    finally:
        db.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        db.close()


class ServerTransaction:
    """``with database.transaction():`` as apsw's own (a savepoint when nested), whose
    failure to begin, commit or roll back is a ``ServerDatabaseError``."""

    __slots__ = ("_connection", "_path")

    def __init__(self, connection: apsw.Connection, path: str | Path) -> None:
        self._connection = connection
        self._path = path

    def __enter__(self) -> apsw.Connection:
        try:
            return self._connection.__enter__()
        except apsw.Error as error:
            raise database_error(error, self._path) from error

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        try:
            return self._connection.__exit__(kind, value, traceback)
        except apsw.Error as error:
            raise database_error(error, self._path) from error
