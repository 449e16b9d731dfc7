"""What is wrong with a ``--db`` path, said in one line before anything opens it.

Postbox itself refuses another application's SQLite file before changing anything in
it. These checks come first, for what Postbox cannot tell or would get wrong: a path
that is a directory, or whose folder is missing, is named for what it is; and a 0-byte
file is refused, where SQLite would take it for a new database and write one into it
(it may be a database cut short, or a file meant for something else). Either way the
file stays as it was.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

__all__ = ["DatabasePathError", "check_database_path"]

#: The first 16 bytes of every SQLite database file.
SQLITE_HEADER: Final = b"SQLite format 3\x00"


class DatabasePathError(Exception):
    """A ``--db`` path that cannot hold a postbox database (the file is left as it was).

    ``usage`` is true when the path itself is wrong (a directory, a missing file or
    folder: exit status 2, like any wrong command line), false when the file there
    cannot be used (exit status 1)."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage

    @property
    def exit_status(self) -> int:
        return 2 if self.usage else 1


def check_database_path(path: Path, *, create: bool) -> None:
    """Raise ``DatabasePathError`` if ``path`` cannot be a postbox database file:
    missing (unless ``create``: then its folder must exist), a directory or another
    non-file, empty, or not a SQLite file. A SQLite file passes; Postbox decides
    whether it is one of its own."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if not create:
            raise DatabasePathError(
                f"{path} does not exist: give a database the app or sync created", usage=True
            ) from None
        _check_folder(path)
        return
    except OSError as error:  # the path cannot name a file (too long, through a file) or
        wrong_path = error.errno in (errno.ENAMETOOLONG, errno.ENOTDIR, errno.ELOOP)
        raise DatabasePathError(  # it is out of reach (permissions)
            f"{path} cannot be used ({error.strerror})", usage=wrong_path
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise DatabasePathError(f"{path} is a directory, not a database file", usage=True)
    if not stat.S_ISREG(info.st_mode):
        raise DatabasePathError(f"{path} is not a regular file", usage=True)
    if info.st_size == 0 and not _has_wal(path):
        hint = "; delete it to start a new database there" if create else ""
        raise DatabasePathError(
            f"{path} is an empty file, not a postbox database (left as it was{hint})",
            usage=False,
        )
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise DatabasePathError(f"{path} cannot be read ({error.strerror})", usage=False) from None
    if header and header != SQLITE_HEADER:
        raise DatabasePathError(
            f"{path} is not a SQLite file, so not a postbox database (left as it was)",
            usage=False,
        )


def _check_folder(path: Path) -> None:
    folder = path.parent
    if not folder.exists():
        raise DatabasePathError(f"{path}: the folder {folder} does not exist", usage=True)
    if not folder.is_dir():
        raise DatabasePathError(f"{path}: {folder} is not a folder", usage=True)


def _has_wal(path: Path) -> bool:
    """A write-ahead log with content: the file's pages may all be in it still."""
    try:
        return os.path.getsize(str(path) + "-wal") > 0
    except OSError:
        return False
