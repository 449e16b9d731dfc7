"""Where the boxes of the accounts other than the primary one are kept.

With a server database file ``srv.db``, each other account's box is ``srv.db.accounts/
<user id>.db`` (the folder and files readable by their owner only), so a restarted server
finds the accounts that logged in before; with none, each box lives in memory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from sync.server.store import ServerStore

__all__ = ["AccountBoxFiles"]


class AccountBoxFiles:
    """Opens account boxes next to the primary database ``db`` (in memory if ``None``)."""

    def __init__(self, db: Path | None, *, clock: Callable[[], int], log_window: int) -> None:
        self.folder = None if db is None else Path(f"{db}.accounts")
        self._clock = clock
        self._log_window = log_window

    def known(self) -> tuple[int, ...]:
        """The accounts that have a box already, in id order."""
        if self.folder is None or not self.folder.is_dir():
            return ()
        found = (path.stem for path in self.folder.glob("*.db"))
        return tuple(sorted(int(stem) for stem in found if stem.isdigit()))

    def open(self, user_id: int) -> ServerStore:
        path: str | Path = ":memory:"
        if self.folder is not None:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.folder, 0o700)
            path = self.folder / f"{user_id}.db"
        return ServerStore(path, clock=self._clock, log_window=self._log_window)
