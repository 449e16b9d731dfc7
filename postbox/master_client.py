"""Which of the processes sharing a database talks to the server: the master client.

Every process that opens a Postbox to sync it (a window, a second window, ``postbox-chat
sync``) draws a random client id. The master is the process holding an advisory lock
(``flock``) on a sidecar file next to the database, ``DB.master``; it records its id in
the metadata table as ``MasterClientId``, as Telegram's Postbox does, so the others can
say who syncs. The lock, not the record, decides: the operating system drops the lock
of a master that exits or is killed, so a stale record never blocks a takeover, and two
processes can never both hold it.

``next_master_step`` is the decision, pure: from the role now, whether this process
holds the lock of the file now at the sidecar's path, and the recorded id, it gives the
next role and whether to record this client or let the lock go. ``MasterClientLock`` is
the lock. The sidecar is never deleted: removing a lock file races with its next owner.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from postbox.errors import MasterLockError

__all__ = [
    "MASTER_SUFFIX",
    "MasterClientLock",
    "MasterLock",
    "MasterRole",
    "MasterStep",
    "new_client_id",
    "next_master_step",
]

#: The sidecar's name is the database's with this appended.
MASTER_SUFFIX: Final = ".master"
_PRIVATE_FILE_MODE: Final = 0o600


class MasterRole(enum.Enum):
    """Whether a process syncs the database (master) or only shows it (standby)."""

    MASTER = "master"
    STANDBY = "standby"


@dataclass(frozen=True, slots=True)
class MasterStep:
    """What a process does after one look at the lock and the record."""

    role: MasterRole
    #: Store this client's id as ``MasterClientId``.
    record: bool = False
    #: Let go of the lock (this process stops being the master).
    release: bool = False


def next_master_step(
    role: MasterRole, *, holds_lock: bool, recorded: int | None, client_id: int
) -> MasterStep:
    """The next role of a process whose role is ``role``.

    ``holds_lock``: it holds, now, the lock of the file at the sidecar's path (it just
    took it, or still has it and nobody replaced the file). Holding it makes it the
    master, which records itself unless the record already names it (a stale record of
    a master that was killed is overwritten; one written by a process whose lock is on a
    sidecar since replaced is corrected, and that process steps down when it sees its
    file gone). Not holding it makes it a standby, which lets go of a lock it had on a
    replaced file.
    """
    if not holds_lock:
        return MasterStep(MasterRole.STANDBY, release=role is MasterRole.MASTER)
    return MasterStep(MasterRole.MASTER, record=recorded != client_id)


def new_client_id() -> int:
    """A random client id, in ``1..2**63-1`` (what the metadata table stores)."""
    return secrets.randbelow(2**63 - 1) + 1


class MasterLock(Protocol):
    """What the election needs of the lock (tests pass a model of it)."""

    def try_acquire(self) -> bool: ...

    def release(self) -> None: ...


class MasterClientLock:
    """The advisory lock on ``DB.master``: at most one holder across processes.

    ``try_acquire`` never waits: it takes the lock if it is free, and, if this object
    holds it already, says whether it still does (the file at the path is still the one
    locked). Locks are per open file, so two of these in one process exclude each other
    too. ``release`` (or the process ending in any way) lets it go.
    """

    def __init__(self, database: str | Path) -> None:
        self.path = Path(str(database) + MASTER_SUFFIX)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            if self._is_current(self._fd):
                return True
            self.release()  # the sidecar was replaced: this lock excludes nobody now
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, _PRIVATE_FILE_MODE)
        except OSError as error:
            raise MasterLockError(f"cannot open {self.path}: {error.strerror}") from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise MasterLockError(f"cannot lock {self.path}: {error.strerror}") from error
        if not self._is_current(fd):  # replaced between the open and the lock
            os.close(fd)
            return False
        self._fd = fd
        return True

    def _is_current(self, fd: int) -> bool:
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as error:
            raise MasterLockError(f"cannot read {self.path}: {error.strerror}") from error
        locked = os.fstat(fd)
        return (current.st_dev, current.st_ino) == (locked.st_dev, locked.st_ino)

    def release(self) -> None:
        """Let the lock go (closing the file does). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __repr__(self) -> str:
        return f"MasterClientLock({str(self.path)!r}, held={self.held})"
