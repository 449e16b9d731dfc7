"""Errors raised by postbox.

Every failure that leaves this package is a ``PostboxError``; APSW and msgpack
exceptions are translated at the boundary (``translate_sqlite_error``) so callers
never see them.

    PostboxError
    ├── DatabaseError                the database file or its environment
    │   ├── NotADatabaseError        the file is not a SQLite database, or is corrupt
    │   ├── DatabaseLockedError      another process holds a lock for too long
    │   ├── ReadOnlyDatabaseError    the file or its directory cannot be written
    │   ├── StorageFullError         the disk (or the size limit) is full
    │   ├── SchemaVersionError       the file was written by a newer schema
    │   └── MasterLockError          the master client's sidecar file cannot be locked
    ├── CorruptValueError            a stored value cannot be decoded
    ├── InvalidSearchQueryError      a full-text query that FTS5 cannot parse
    ├── InvalidArgumentError         a caller passed a value the tables cannot store
    └── PostboxClosedError           the postbox was closed

``is_final(error)`` tells the errors that trying again cannot cure (the file's
content is damaged) from those that pass (a full disk, a lock held for a while).
"""

from __future__ import annotations

import apsw

__all__ = [
    "CorruptValueError",
    "DatabaseError",
    "DatabaseLockedError",
    "InvalidArgumentError",
    "InvalidSearchQueryError",
    "MasterLockError",
    "NotADatabaseError",
    "PostboxClosedError",
    "PostboxError",
    "ReadOnlyDatabaseError",
    "SchemaVersionError",
    "StorageFullError",
    "is_final",
    "translate_sqlite_error",
]


class PostboxError(Exception):
    """Root of every error raised by postbox."""


class DatabaseError(PostboxError):
    """The database file or its environment failed; stored data is left as it was."""


class NotADatabaseError(DatabaseError):
    """The file is not a SQLite database, or its pages are corrupt."""


class DatabaseLockedError(DatabaseError):
    """Another connection held a lock longer than the busy timeout."""


class ReadOnlyDatabaseError(DatabaseError):
    """The database file, its journal or its directory cannot be written."""


class StorageFullError(DatabaseError):
    """The disk, or the database's configured size limit, is full."""


class SchemaVersionError(DatabaseError):
    """The file was written by a newer version of the schema than this code knows."""


class MasterLockError(DatabaseError):
    """The sidecar file that decides the master client cannot be opened or locked."""


class CorruptValueError(PostboxError):
    """A stored value could not be decoded."""


class InvalidSearchQueryError(PostboxError):
    """A full-text query that the FTS5 query syntax does not accept."""


class InvalidArgumentError(PostboxError, ValueError):
    """A value outside what the tables can store (an id out of range, say)."""


class PostboxClosedError(PostboxError):
    """The postbox was closed; no more transactions run."""


def is_final(error: BaseException) -> bool:
    """Whether ``error`` says the stored data itself is damaged, so that no retry can
    cure it: a value that cannot be decoded, pages SQLite finds corrupt or a file that
    is no database. Everything else a retry may cure (a full disk or a lock is freed,
    a permission is fixed) or is a bug, and is not final: callers keep retrying it."""
    return isinstance(
        error, CorruptValueError | NotADatabaseError | apsw.CorruptError | apsw.NotADBError
    )


def translate_sqlite_error(exc: BaseException, path: str) -> PostboxError:
    """Map an APSW exception to a ``PostboxError`` a person can act on.

    Errors caused by the environment (disk full, locks, permissions, a foreign
    file) become ``DatabaseError`` subclasses; anything else is our bug and is
    wrapped in a plain ``PostboxError`` that keeps the original as its cause.
    """
    where = path or "the in-memory database"
    if isinstance(exc, apsw.NotADBError | apsw.CorruptError):
        return NotADatabaseError(f"{where} is not a postbox database or is corrupt: {exc}")
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return DatabaseLockedError(
            f"{where} is locked by another process; close it there and try again ({exc})"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyDatabaseError(f"{where} cannot be written: {exc}")
    if isinstance(exc, apsw.CantOpenError):
        return ReadOnlyDatabaseError(
            f"cannot open {where}: check that the file and its folder exist and are writable"
        )
    if isinstance(exc, apsw.FullError):
        return StorageFullError(f"no space left for {where}; free some disk space ({exc})")
    if isinstance(exc, apsw.IOError):
        return DatabaseError(f"input/output error on {where}: {exc}")
    return PostboxError(f"unexpected SQLite error on {where}: {exc}")
