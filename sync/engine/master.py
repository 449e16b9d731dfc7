"""The engine's part in choosing the one process that syncs a database.

Several processes may open one database: two windows, a window and ``postbox-chat
sync``. Only the master client connects, fills holes and sends; the others keep their
live views, which follow the master's commits (``postbox.master_client`` has the rule).
``MasterElection`` looks at the lock and the recorded ``MasterClientId`` every
``Timeouts.master_check`` seconds, and at once when another process commits: a master
that exits lets its lock go and then clears its record, and that commit wakes the
standby, which takes over without waiting for its next look. A master killed outright
leaves no commit: its lock is gone all the same, and the next look finds it free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TypeVar

from postbox import (
    MasterLock,
    MasterRole,
    Postbox,
    PostboxError,
    Transaction,
    new_client_id,
    next_master_step,
)
from sync.notifier import ChangeNotifier

__all__ = ["MasterElection"]

log = logging.getLogger("postbox.sync")

T = TypeVar("T")


class MasterElection:
    """One process's claim: its client id, its role, and the master it knows of."""

    def __init__(
        self,
        postbox: Postbox,
        lock: MasterLock,
        *,
        interval: float,
        client_id: int | None = None,
        changes: ChangeNotifier | None = None,
    ) -> None:
        self.postbox = postbox
        self.lock = lock
        self.interval = interval
        self.client_id = new_client_id() if client_id is None else client_id
        self.role = MasterRole.STANDBY
        #: Whether this process has been the master at any time (a summary's role).
        self.was_master = False
        #: The master's client id as last read (this client's own while it is the master).
        self.master_client_id: int | None = None
        #: Why this process cannot take part (the sidecar cannot be locked), if so.
        self.problem: str | None = None
        #: Told when the role or the known master changes.
        self.changes = changes or ChangeNotifier()
        self._record_stale = True
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    @property
    def is_master(self) -> bool:
        return self.role is MasterRole.MASTER

    def external_change(self) -> None:
        """Another process committed (any thread): the record may have changed; look now."""
        self._record_stale = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    async def step(self) -> MasterRole:
        """Look at the lock (and the record, if it may have changed) once; act on it."""
        self._bind()
        try:
            holds_lock = self.lock.try_acquire()
        except PostboxError as error:
            self.problem = f"cannot take part in choosing the syncing process: {error}"
            holds_lock = False
        else:
            self.problem = None
        recorded = self.master_client_id
        if self._record_stale or holds_lock is not self.is_master:  # or the role changes
            recorded = await self._recorded()
        step = next_master_step(
            self.role, holds_lock=holds_lock, recorded=recorded, client_id=self.client_id
        )
        if step.release:
            self.lock.release()
        if step.record and await self._record():
            recorded = self.client_id
        changed = (step.role, recorded) != (self.role, self.master_client_id)
        if step.role is not self.role:
            log.info("client %x is now %s", self.client_id, step.role.value)
        self.role = step.role
        self.was_master = self.was_master or self.is_master
        self.master_client_id = recorded
        if changed:
            self.changes.notify()
        return step.role

    async def wait_until_master(self) -> None:
        """Look, and again after each pause, until this process is the master."""
        while await self.step() is not MasterRole.MASTER:
            await self._pause()

    async def wait_until_standby(self) -> None:
        """Return once this process is no longer the master (its sidecar was replaced)."""
        while True:
            await self._pause()
            if await self.step() is MasterRole.STANDBY:
                return

    async def resign(self) -> None:
        """Stop being the master: let the lock go, then clear the record if it is ours
        (a standby may have taken over in between; its record stays)."""
        was_master = self.is_master
        self.lock.release()
        self.role = MasterRole.STANDBY
        if not was_master:
            return
        client_id = self.client_id

        def clear(tx: Transaction) -> None:
            if tx.get_master_client_id() == client_id:
                tx.set_master_client_id(None)

        try:
            await self._run(clear)
        except PostboxError as error:  # the lock is gone: the next master records itself
            log.warning("could not clear the master client record: %s", error)
        self.master_client_id = None
        self.changes.notify()

    def _bind(self) -> asyncio.Event:
        if self._wake is None:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
        return self._wake

    async def _pause(self) -> None:
        wake = self._bind()
        # Not ``asyncio.wait_for``: on Python 3.11 it can swallow a cancellation that
        # comes as the event is set, and the engine would never stop.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.interval):
                await wake.wait()
        wake.clear()

    async def _recorded(self) -> int | None:
        self._record_stale = False
        try:
            return await self._run(lambda tx: tx.get_master_client_id())
        except PostboxError as error:
            self._record_stale = True
            log.warning("could not read the master client record: %s", error)
            return self.master_client_id

    async def _record(self) -> bool:
        """Store this client as the master; the lock decides, so a failure only leaves
        the record to the next look."""
        client_id = self.client_id
        try:
            await self._run(lambda tx: tx.set_master_client_id(client_id))
        except PostboxError as error:
            self._record_stale = True
            log.warning("could not record the master client: %s", error)
            return False
        return True

    async def _run(self, fn: Callable[[Transaction], T]) -> T:
        return await asyncio.wrap_future(self.postbox.transaction(fn))
