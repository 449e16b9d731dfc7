"""The server's SQLite file, and the few statements every part of the store runs on it.

``ServerStore`` and its ``UpdateLogs`` share one ``ServerDatabase``: plain SQL with the
rows fetched at once, bulk inserts, the ``meta`` table of named counters, and
transactions that nest (an inner one is a savepoint).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw

from sync.errors import NotAServerDatabaseError, ServerDatabaseError
from sync.server.schema import database_digest, open_database

__all__ = ["ServerDatabase", "database_error"]


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
            self._connection = open_database(path)
        except apsw.Error as error:
            raise database_error(error, path) from error
        except OSError as error:  # the file could not even be created
            raise ServerDatabaseError(f"cannot create {path}: {error.strerror}") from error

    def close(self) -> None:
        self._connection.close()

    def transaction(self) -> apsw.Connection:
        """A context manager: the changes made inside it land together or not at all."""
        return self._connection

    def execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all of its rows."""
        return self._connection.execute(sql, bindings).fetchall()

    def one(self, sql: str, bindings: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or ``None`` if it has none."""
        rows = self.execute(sql, bindings)
        return rows[0] if rows else None

    def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once for each row of bindings."""
        self._connection.executemany(sql, rows)

    def meta(self, key: str, default: int) -> int:
        """The counter ``key`` of the ``meta`` table, or ``default`` if it was never set."""
        row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
        return default if row is None else int(row[0])

    def set_meta(self, key: str, value: int) -> None:
        self.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def digest(self) -> str:
        """A hash of every row of every table: equal digests, equal truth."""
        return database_digest(self._connection)
