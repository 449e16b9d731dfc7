"""Parts that ask the server for what the client cannot count itself.

Each follows one operation-log tag (``log_tags``): a chat's entry says its read state
(``read_states``) or its shared-media counts (``tag_summaries``) wait for the server's
word. A part drains its entries in batches, retrying with a growing pause while the
answer cannot be trusted yet, and removes an entry only once the server's value is
stored. ``idle`` is true when nothing waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
from collections.abc import Callable
from typing import Any

import msgspec

from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    MessageNamespace,
    OperationLogViewKey,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerReadState,
    Postbox,
    Transaction,
)
from postbox.errors import is_final
from sync.engine.channel_access import channel_gone, inaccessible_channels
from sync.engine.convert import (
    CLOUD,
    draft_from_wire,
    message_from_wire,
    peer_from_wire,
    read_state_from_dialog,
    tags_of,
)
from sync.engine.crash_points import crash_point
from sync.engine.log_tags import (
    DELETE_TAG,
    READ_TAG,
    VALIDATE_READ_STATE_TAG,
    VALIDATE_TAG_SUMMARIES_TAG,
)
from sync.engine.read_states import VALIDATE_AT_ONCE, requests_of
from sync.engine.recent import RecentChanges
from sync.engine.replay import replace_range, set_draft_from_server, set_muted_from_server
from sync.engine.state_manager import StateManager
from sync.engine.timing import Backoff, Timeouts
from sync.notifier import ChangeNotifier
from sync.protocol import (
    Dialog,
    GetHistory,
    GetPeerDialogs,
    InvalidParamsError,
    Media,
    MediaKind,
    MessagesSlice,
    PeerDialogs,
)
from sync.state import ServerLiedError, check_dialogs, referenced_peers

__all__ = ["MEDIA_KINDS", "ReadStateValidator", "TagSummaryValidator"]

log = logging.getLogger("postbox.sync")

#: The shared-media kinds a chat's summaries count.
MEDIA_KINDS = (MediaKind.PHOTO, MediaKind.VIDEO, MediaKind.FILE, MediaKind.LINK, MediaKind.VOICE)


class _Validator:
    """Follows one operation-log tag and drains it with ``validate`` (a subclass's)."""

    tag: int
    batch: int = VALIDATE_AT_ONCE

    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        state_manager: StateManager,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        changes: ChangeNotifier | None = None,
        recent: RecentChanges | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.postbox = postbox
        self._rng = rng or random.Random()
        self._call = call
        self._state_manager = state_manager
        self.timeouts = timeouts
        self.changes = changes or ChangeNotifier()
        self.recent = recent or RecentChanges()
        self._wake = asyncio.Event()
        #: Chats waiting.
        self.pending = 0
        #: Chats whose server value was stored; of them, the ones it changed.
        self.validated = 0
        self.corrected = 0
        #: The last failure, until a batch is validated again (for the status line).
        self.problem: str | None = None
        #: Answers refused for breaking the protocol's rules (nothing of them stored).
        self.lies_refused = 0

    @property
    def idle(self) -> bool:
        return self.pending == 0

    async def run(self) -> None:
        key = OperationLogViewKey(self.tag)
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
        backoff = Backoff(self.timeouts.retry_min, self.timeouts.retry_max, self._rng)
        while True:
            try:
                peers: list[PeerId] = await self._read(self._next_batch)
                if not peers:
                    return
                await self._caught_up()
                waiting = await self.validate(peers)
                self.problem = None
            except ConnectionError as error:
                log.info("%s interrupted: %s", type(self).__name__, error)
                await asyncio.sleep(backoff.next())
                continue
            except Exception as error:
                # The database full or locked, a broken answer: shown, and tried again.
                if is_final(error):  # the database is damaged: the engine stops
                    raise
                if isinstance(error, ServerLiedError | InvalidParamsError):
                    self.lies_refused += 1
                log.error("%s failed: %s", type(self).__name__, error)
                self.problem = f"{type(self).__name__} failed: {error}"
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            if waiting:
                # Updates were still coming: ask again shortly, at most this often.
                await asyncio.sleep(self.timeouts.validation_retry)

    async def _caught_up(self) -> None:
        """Wait (a while at most) until the state manager has nothing queued: while a
        catch-up runs, the server's answers are from a pts not stored yet."""
        manager = self._state_manager
        with contextlib.suppress(TimeoutError):
            await self.changes.wait_for(lambda: manager.idle, self.timeouts.validation_retry * 5)

    def _next_batch(self, tx: Transaction) -> list[PeerId]:
        entries = tx.get_merged_operation_log_entries(self.tag, limit=self.batch)
        gone = inaccessible_channels(tx)
        peers = []
        for entry in entries:
            if entry.peer_id.namespace == PeerNamespace.CHANNEL and int(entry.peer_id) in gone:
                # Refused for good: no answer will ever come, and nothing is shown of it.
                tx.remove_operation_log_entry(entry.peer_id, self.tag, entry.tag_local_index)
            else:
                peers.append(entry.peer_id)
        return list(dict.fromkeys(peers))

    async def validate(self, peers: list[PeerId]) -> list[PeerId]:
        """Fetch and store the server's values; the chats to try again later."""
        raise NotImplementedError

    def _remove_entries(self, tx: Transaction, peer_id: PeerId) -> None:
        for entry in tx.get_operation_log_entries(peer_id, self.tag):
            tx.remove_operation_log_entry(peer_id, self.tag, entry.tag_local_index)


class ReadStateValidator(_Validator):
    """Read states, from ``getPeerDialogs`` asked in the state manager's queue (so no
    update is applied while the answer travels) and taken at the answer's state."""

    tag = VALIDATE_READ_STATE_TAG

    async def validate(self, peers: list[PeerId]) -> list[PeerId]:
        waiting: list[PeerId] = await self._state_manager.custom(
            functools.partial(self._fetch_and_apply, peers)
        )
        if waiting:
            # Updates are still on their way: catch up before asking again.
            for peer_id in waiting:
                if peer_id.namespace == PeerNamespace.CHANNEL:
                    self._state_manager.request_channel_poll(int(peer_id))
            await self._state_manager.poll_completion()
        return waiting

    async def _fetch_and_apply(self, peers: list[PeerId]) -> list[PeerId]:
        # Fills and page stores write outside the queue while the answer travels.
        asked_for = await self._read(
            lambda tx: {peer_id: requests_of(tx, peer_id) for peer_id in peers}
        )
        answer: PeerDialogs = await self._call(GetPeerDialogs(tuple(int(p) for p in peers)))
        crash_point("read_states.fetch_and_apply.answered")
        check_dialogs(answer.dialogs, answer.messages, answer.peers, "getPeerDialogs")
        asked = {int(peer) for peer in peers}
        if any(dialog.peer not in asked for dialog in answer.dialogs):
            raise ServerLiedError("getPeerDialogs answers with a dialog it was not asked for")
        described = await self._state_manager.describer.describe(
            {*referenced_peers(answer.messages), *(d.peer for d in answer.dialogs)},
            (p.id for p in answer.peers),
        )
        if described:
            answer = msgspec.structs.replace(answer, peers=(*answer.peers, *described))
        waiting, corrected = await self._read(
            functools.partial(apply_peer_dialogs, peers=peers, answer=answer, asked_for=asked_for)
        )
        crash_point("read_states.fetch_and_apply.stored")
        self.validated += len(peers) - len(waiting)
        self.corrected += corrected
        return list(waiting)


class TagSummaryValidator(_Validator):
    """Shared-media counts, one filtered one-message ``getHistory`` per kind.

    A page carries no state to compare, so after storing the counts the engine catches
    up; if nothing touched the chat between the request and then, the counts were exact
    and the entry goes. Otherwise they are fetched again.
    """

    tag = VALIDATE_TAG_SUMMARIES_TAG
    batch = 8

    async def validate(self, peers: list[PeerId]) -> list[PeerId]:
        generation = self.recent.generation
        pages = await asyncio.gather(*(self._fetch(peer_id) for peer_id in peers))
        crash_point("tag_summaries.validate.answered")
        self.corrected += await self._read(functools.partial(_store, peers=peers, pages=pages))
        crash_point("tag_summaries.validate.stored")
        await self._state_manager.poll_completion()

        def settle(tx: Transaction) -> list[PeerId]:
            waiting = []
            for peer_id in peers:
                # Changed while the counts were fetched, or deleted here and not yet on
                # the server: the counts may be off by those messages.
                if self.recent.changed_since(
                    generation, int(peer_id)
                ) != set() or tx.get_operation_log_entries(peer_id, DELETE_TAG):
                    waiting.append(peer_id)
                else:
                    self._remove_entries(tx, peer_id)
            return waiting

        waiting: list[PeerId] = await self._read(settle)
        crash_point("tag_summaries.validate.settled")
        self.validated += len(peers) - len(waiting)
        return waiting

    async def _fetch(self, peer_id: PeerId) -> list[MessagesSlice]:
        try:
            return list(
                await asyncio.gather(
                    *(
                        self._call(GetHistory(int(peer_id), limit=1, filter=kind))
                        for kind in MEDIA_KINDS
                    )
                )
            )
        except Exception as error:
            if channel_gone(error):  # forgotten with its entry by the state manager
                self._state_manager.channel_refused(int(peer_id))
            raise


def _store(tx: Transaction, peers: list[PeerId], pages: list[list[MessagesSlice]]) -> int:
    """Store each chat's counts; how many stored summaries they changed."""
    corrected = 0
    for peer_id, kinds in zip(peers, pages, strict=True):
        for kind, page in zip(MEDIA_KINDS, kinds, strict=True):
            tag = tags_of((Media(kind, 0),))
            newest = max((message.id for message in page.messages), default=0)
            stored = tx.get_tag_summary(peer_id, tag, CLOUD)
            if stored is None or (stored.count, stored.max_id) != (page.count, newest):
                corrected += stored is not None
                tx.replace_tag_summary(peer_id, tag, CLOUD, page.count, newest)
    return corrected


def _apply_settings(tx: Transaction, peer_id: PeerId, dialog: Dialog) -> None:
    """What no update orders: the chat's folder and its mute, as the server has them now."""
    group = PeerGroupId.ARCHIVE if dialog.folder else PeerGroupId.ROOT
    inclusion = tx.get_chat_list_inclusion(peer_id)
    if inclusion is not None and inclusion.group_id != group:
        tx.update_chat_list_inclusion(peer_id, ChatListInclusion(group))
    set_muted_from_server(tx, peer_id, dialog.muted_until)
    set_draft_from_server(tx, peer_id, draft_from_wire(dialog.draft))


def _forget_history(tx: Transaction, peer_id: PeerId) -> None:
    """The server has no message of the chat: neither does this client, and the chat
    leaves the list unless a message of it waits to be sent."""
    replace_range(tx, peer_id, 1, MAX_MESSAGE_ID, [])
    if tx.get_chat_list_inclusion(peer_id) is not None and not tx.get_messages(
        peer_id, int(MessageNamespace.LOCAL), limit=1
    ):
        tx.update_chat_list_inclusion(peer_id, None)


def _pending_here(tx: Transaction, peer_id: PeerId) -> bool:
    """Reads or deletions made here that the server has not been told yet."""
    return bool(
        tx.get_operation_log_entries(peer_id, READ_TAG)
        or tx.get_operation_log_entries(peer_id, DELETE_TAG)
    )


def apply_peer_dialogs(
    tx: Transaction,
    peers: list[PeerId],
    answer: PeerDialogs,
    asked_for: dict[PeerId, tuple[tuple[int, object], ...]] | None = None,
) -> tuple[list[PeerId], int]:
    """Take each dialog whose state is the stored one; the chats still to validate, and
    how many read states the server's answer changed. A chat's folder and mute are
    taken from any answer. ``asked_for``: each chat's validation requests when the
    answer was asked for (``requests_of``); a chat asked for again since (a fill that
    stored a message the answer may predate) waits, as the cursor cannot show that."""
    cursor = tx.get_state()
    corrected = 0
    dialogs = {PeerId(dialog.peer): dialog for dialog in answer.dialogs}
    tops = {(message.peer, message.id): message for message in answer.messages}
    tx.update_peers(peer_from_wire(peer) for peer in answer.peers)
    waiting: list[PeerId] = []
    for peer_id in peers:
        entries = tx.get_operation_log_entries(peer_id, VALIDATE_READ_STATE_TAG)
        dialog = dialogs.get(peer_id)
        if asked_for is not None and requests_of(tx, peer_id) != asked_for.get(peer_id, ()):
            if dialog is not None:
                _apply_settings(tx, peer_id, dialog)
            waiting.append(peer_id)
            continue
        if dialog is None and peer_id.namespace in (PeerNamespace.USER, PeerNamespace.GROUP):
            if cursor is None or cursor.pts != answer.state.pts or _pending_here(tx, peer_id):
                waiting.append(peer_id)
                continue
            # At the same state the server knows no such chat: no message of it is left.
            _forget_history(tx, peer_id)
        if dialog is None and peer_id.namespace == PeerNamespace.CHANNEL:
            # The account is in no such channel (removed from it, perhaps in a difference
            # too long to carry the news): its difference tells, and a refusal forgets it.
            waiting.append(peer_id)
            continue
        if dialog is not None:
            if dialog.pts is not None:
                channel = tx.get_peer_chat_state(peer_id)
                current = channel is not None and channel.pts == dialog.pts
            elif peer_id.namespace == PeerNamespace.SECRET_CHAT:
                # Its messages move the qts, its reads the pts: both must match.
                current = (
                    cursor is not None
                    and cursor.qts == answer.state.qts
                    and cursor.pts == answer.state.pts
                )
            else:
                current = cursor is not None and cursor.pts == answer.state.pts
            if (
                not current
                or tx.get_operation_log_entries(peer_id, READ_TAG)
                or tx.get_operation_log_entries(peer_id, DELETE_TAG)
            ):
                _apply_settings(tx, peer_id, dialog)
                waiting.append(peer_id)
                continue
            if not dialog.top_message and not dialog.pinned and dialog.pts is None:
                # No message left on the server (some deleted in a gap this client
                # skipped perhaps): it keeps none either, and the chat leaves the list.
                _forget_history(tx, peer_id)
            top = tops.get((dialog.peer, dialog.top_message))
            if top is not None and tx.get_chat_list_inclusion(peer_id) is not None:
                # A chat listed from an older message shows its real last one.
                replace_range(tx, peer_id, top.id, MAX_MESSAGE_ID, [message_from_wire(top)])
            _apply_settings(tx, peer_id, dialog)
            stored = tx.get_read_state(peer_id)
            previous = (stored.get(CLOUD) if stored else None) or PeerReadState()
            server = read_state_from_dialog(dialog)
            if server != previous:
                log.info(
                    "read state of %s corrected: unread %d -> %d",
                    int(peer_id),
                    previous.count,
                    server.count,
                )
                tx.reset_read_state(peer_id, CLOUD, server)
                corrected += 1
        for entry in entries:
            tx.remove_operation_log_entry(peer_id, VALIDATE_READ_STATE_TAG, entry.tag_local_index)
    return waiting, corrected
