"""``ReadStateValidator``: asks the server for the read states queued for validation.

The queue and the rule for taking an answer are in ``read_states``; this part drains the
queue through the state manager's serial queue, catching up between attempts.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from postbox import OperationLogViewKey, PeerId, PeerNamespace, Postbox, Transaction
from sync.engine.log_tags import VALIDATE_READ_STATE_TAG as VALIDATE_TAG
from sync.engine.read_states import VALIDATE_AT_ONCE, apply_peer_dialogs
from sync.engine.state_manager import StateManager, Timeouts
from sync.notifier import ChangeNotifier
from sync.protocol import GetPeerDialogs, PeerDialogs

__all__ = ["ReadStateValidator"]

log = logging.getLogger("postbox.sync")


class ReadStateValidator:
    """Drains the validation entries through the state manager's queue."""

    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        state_manager: StateManager,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        changes: ChangeNotifier | None = None,
    ) -> None:
        self.postbox = postbox
        self._call = call
        self._state_manager = state_manager
        self.timeouts = timeouts
        self.changes = changes or ChangeNotifier()
        self._wake = asyncio.Event()
        #: Chats waiting for validation.
        self.pending = 0
        self.validated = 0
        self.corrected = 0

    @property
    def idle(self) -> bool:
        return self.pending == 0

    async def run(self) -> None:
        key = OperationLogViewKey(VALIDATE_TAG)
        subscription = self.postbox.combined_view([key])
        watcher = asyncio.create_task(self._follow(subscription, key))
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                await self._drain()
        finally:
            watcher.cancel()
            subscription.dispose()

    async def _follow(self, subscription: Any, key: OperationLogViewKey) -> None:
        async for snapshot in subscription:
            self.pending = len(snapshot[key].entries)
            self.changes.notify()
            if self.pending:
                self._wake.set()

    async def _read(self, fn: Callable[[Transaction], Any]) -> Any:
        return await asyncio.wrap_future(self.postbox.transaction(fn))

    async def _drain(self) -> None:
        pause = self.timeouts.retry_min
        while True:
            peers: list[PeerId] = await self._read(
                lambda tx: list(
                    dict.fromkeys(
                        entry.peer_id
                        for entry in tx.get_merged_operation_log_entries(
                            VALIDATE_TAG, limit=VALIDATE_AT_ONCE
                        )
                    )
                )
            )
            if not peers:
                return
            try:
                waiting = await self._state_manager.custom(functools.partial(self._validate, peers))
            except ConnectionError as error:
                log.info("read-state validation retried in %.1f s: %s", pause, error)
                waiting = peers
            if not waiting:
                pause = self.timeouts.retry_min
                continue
            # Updates are still on their way: catch up, then ask again.
            for peer_id in waiting:
                if peer_id.namespace == PeerNamespace.CHANNEL:
                    self._state_manager.request_channel_poll(int(peer_id))
            await self._state_manager.poll_completion()
            await asyncio.sleep(pause)
            pause = min(self.timeouts.retry_max, pause * 2)

    async def _validate(self, peers: list[PeerId]) -> list[PeerId]:
        answer: PeerDialogs = await self._call(GetPeerDialogs(tuple(int(p) for p in peers)))
        waiting, corrected = await self._read(
            functools.partial(apply_peer_dialogs, peers=peers, answer=answer)
        )
        self.validated += len(peers) - len(waiting)
        self.corrected += corrected
        return list(waiting)
