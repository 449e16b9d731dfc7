"""Outgoing changes: written locally first (``enqueue``), then delivered to the server
exactly once.

``Outbound`` drains the operation log in merged
order: it sends each entry (a message with its ``random_id``, so a resend after a
crash returns the same message), then, in one transaction, replaces the local message
by the server's, removes the entry and applies the answer's pts if it is the next one
(else it asks the state manager for the difference). A refusal no retry can cure
(``failed_sends.permanent_refusal``) takes the entry off the queue, a send becoming a
failed message with the server's reason, and the next entry goes; the rest are retried
with a growing pause.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    MessageHistoryHoleSpace,
    MessageId,
    MessageNamespace,
    OperationLogViewKey,
    PeerId,
    PeerNamespace,
    PeerOperationLogEntry,
    Postbox,
    Transaction,
)
from postbox.errors import is_final
from sync.engine.channel_access import channel_gone
from sync.engine.convert import CLOUD, message_from_wire
from sync.engine.crash_points import crash_point
from sync.engine.failed_sends import failure_of, permanent_refusal
from sync.engine.log_tags import (
    DELETE_TAG,
    DRAFT_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
)
from sync.engine.payloads import PayloadError, edit_request, local_id_of, send_request
from sync.engine.read_states import request_validation
from sync.engine.recent import RecentChanges
from sync.engine.timing import Backoff, Timeouts
from sync.notifier import ChangeNotifier
from sync.protocol import (
    AffectedMessages,
    DeleteMessages,
    ErrorCode,
    ProtocolError,
    ReadHistory,
    RpcError,
    SaveDraft,
    SendMessage,
    SentMessage,
    SentMessages,
    SetNotifySettings,
)

__all__ = ["Outbound"]

log = logging.getLogger("postbox.sync")

#: The kinds of outgoing change, in the order they are delivered.
_TAGS = (SEND_TAG, READ_TAG, EDIT_TAG, DELETE_TAG, SETTINGS_TAG, DRAFT_TAG)
#: Changes that are the account's own, whatever the chat: they take the account's pts.
_ACCOUNT_TAGS = frozenset({SETTINGS_TAG, DRAFT_TAG})
_LOCAL = int(MessageNamespace.LOCAL)
_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


class Outbound:
    """Drains the outgoing operation log; ``on_gap`` asks for the difference."""

    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        *,
        on_gap: Callable[[str], None],
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        recent: RecentChanges | None = None,
        changes: ChangeNotifier | None = None,
        rng: random.Random | None = None,
        on_channel_refused: Callable[[int], None] = lambda _channel: None,
        on_channel_check: Callable[[int], None] = lambda _channel: None,
        account_checked: asyncio.Event | None = None,
    ) -> None:
        self.postbox = postbox
        #: Set once the token's account is known to own the database: nothing in the
        #: queue is sent or given up before (``None``: no such check).
        self._account_checked = account_checked
        self._rng = rng or random.Random()
        #: Told of a channel the server refuses for good (the account left it), and of
        #: one that may be refused (a forward from or into it was).
        self._on_channel_refused = on_channel_refused
        self._on_channel_check = on_channel_check
        self.recent = recent or RecentChanges()
        #: Notified when the queue changes or an entry is delivered or given up.
        self.changes = changes or ChangeNotifier()
        self._call = call
        self._on_gap = on_gap
        self.timeouts = timeouts
        self._wake = asyncio.Event()
        self.pending = 0
        self.sent = 0
        self.failed = 0
        #: The last failure, until an entry is delivered again (for the status line).
        self.problem: str | None = None

    @property
    def idle(self) -> bool:
        return self.pending == 0

    async def run(self) -> None:
        keys = [OperationLogViewKey(tag) for tag in _TAGS]
        subscription = self.postbox.combined_view(keys)
        watcher = asyncio.create_task(self._follow(subscription, keys))
        try:
            if self._account_checked is not None:
                await self._account_checked.wait()
            while True:
                await self._wake.wait()
                self._wake.clear()
                await self._drain()
        finally:
            watcher.cancel()
            subscription.dispose()

    async def _follow(self, subscription: Any, keys: list[OperationLogViewKey]) -> None:
        async for snapshot in subscription:
            self.pending = sum(len(snapshot[key].entries) for key in keys)
            self.changes.notify()
            if self.pending:
                self._wake.set()

    async def _read(self, fn: Callable[[Transaction], Any]) -> Any:
        return await asyncio.wrap_future(self.postbox.transaction(fn))

    async def _drain(self) -> None:
        backoff = Backoff(self.timeouts.retry_min, self.timeouts.retry_max, self._rng)
        while True:
            try:
                entries: list[PeerOperationLogEntry] = await self._read(
                    lambda tx: [
                        entry
                        for tag in _TAGS
                        for entry in tx.get_merged_operation_log_entries(tag, limit=1)
                    ]
                )
                if not entries:
                    self.problem = None
                    return
                entry = min(entries, key=lambda e: (_TAGS.index(e.tag), e.merged_index or 0))
                await self._attempt(entry)
                backoff.reset()
                self.problem = None
            except (RpcError, ConnectionError) as error:
                pause = backoff.next()
                log.info("retrying in %.1f s: %s", pause, error)
                await asyncio.sleep(pause)
            except Exception as error:
                # The database full or locked, a broken answer: shown, and tried again.
                if is_final(error):  # the database is damaged: the engine stops
                    raise
                pause = backoff.next()
                self.problem = f"sending failed: {error}"
                log.error("outgoing change failed, retrying in %.1f s: %s", pause, error)
                self.changes.notify()
                await asyncio.sleep(pause)

    async def _attempt(self, entry: PeerOperationLogEntry) -> None:
        """Deliver one entry; one the server refuses for good is given up."""
        try:
            await self._deliver(entry)
        except ProtocolError as error:
            refusal = permanent_refusal(error)
            if refusal is None:
                raise
            log.warning("giving up on %s for %r: %s", _tag_name(entry.tag), entry.peer_id, error)
            contents = entry.contents if isinstance(entry.contents, dict) else {}
            forward = contents.get("forward")
            gone = channel_gone(refusal)
            # A forward out of a channel the account left, or into one, can never go:
            # dropped as one whose source is gone.
            source_gone = forward is not None and (
                error.code is ErrorCode.MESSAGE_ID_INVALID or gone
            )
            await self._read(
                functools.partial(_give_up, entry=entry, refusal=refusal, drop=source_gone)
            )
            crash_point("outbound.attempt.given_up")
            self.failed += 1
            self.changes.notify()
            if gone and forward is not None:
                # Which of the two channels refused, their polls tell.
                source = forward[0] if isinstance(forward, list | tuple) and forward else 0
                for peer in (int(entry.peer_id), source):
                    if isinstance(peer, int) and PeerId(peer).namespace == PeerNamespace.CHANNEL:
                        self._on_channel_check(peer)
            elif gone and entry.peer_id.namespace == PeerNamespace.CHANNEL:
                self._on_channel_refused(int(entry.peer_id))

    async def _deliver(self, entry: PeerOperationLogEntry) -> None:
        peer = int(entry.peer_id)
        contents = entry.contents
        if entry.tag == SEND_TAG:
            sent = await self._send(peer, contents)
            self.recent.record(entry.peer_id, (sent.message.id,))
            gap = await self._read(lambda tx: _sent(tx, entry, sent))
            crash_point("outbound.deliver.send_stored")
            self.sent += 1
            self.changes.notify()
        elif entry.tag == READ_TAG:
            affected: AffectedMessages = await self._call(ReadHistory(peer, contents["max_id"]))
            crash_point("outbound.deliver.read_answered")
            gap = await self._read(lambda tx: _read_done(tx, entry, affected))
            crash_point("outbound.deliver.read_stored")
        elif entry.tag == SETTINGS_TAG:
            saved: AffectedMessages = await self._call(
                SetNotifySettings(peer, contents["muted_until"])
            )
            crash_point("outbound.deliver.mute_answered")
            gap = await self._read(lambda tx: _kept_unless_changed(tx, entry, saved))
            crash_point("outbound.deliver.mute_stored")
        elif entry.tag == DRAFT_TAG:
            drafted: AffectedMessages = await self._call(
                SaveDraft(peer, contents["text"], contents["reply_to"])
            )
            crash_point("outbound.deliver.draft_answered")
            gap = await self._read(lambda tx: _kept_unless_changed(tx, entry, drafted))
            crash_point("outbound.deliver.draft_stored")
        elif entry.tag == EDIT_TAG:
            fields = contents if isinstance(contents, dict) else {}
            edited: SentMessage = await self._call(
                edit_request(peer, fields.get("id"), fields.get("text"))
            )
            crash_point("outbound.deliver.edit_answered")
            self.recent.record(entry.peer_id, (edited.message.id,))
            gap = await self._read(lambda tx: _edited(tx, entry, edited))
            crash_point("outbound.deliver.edit_stored")
        else:
            ids = tuple(contents["ids"])
            deleted: AffectedMessages = await self._call(
                DeleteMessages(peer, ids, contents["revoke"])
            )
            crash_point("outbound.deliver.delete_answered")
            self.recent.record(entry.peer_id, ids)
            gap = await self._read(lambda tx: _deleted(tx, entry, deleted))
            crash_point("outbound.deliver.delete_stored")
        if gap and _on_channel_pts(entry.peer_id, entry.tag):
            # The channel's own pts skipped: its difference brings what came between
            # (the account's names only channels whose news it carries).
            self._on_channel_check(peer)
        elif gap:
            self._on_gap(f"the answer to {_tag_name(entry.tag)} skipped pts")

    async def _send(self, peer: int, contents: dict[str, Any]) -> SentMessage:
        # Read back and checked as the server would: an entry no request can carry (a
        # text too long, a field of the wrong type) is refused here, for good.
        local_id_of(contents)
        request = send_request(peer, contents)
        if isinstance(request, SendMessage):
            sent: SentMessage = await self._call(request)
            crash_point("outbound.send.answered")
            return sent
        copies: SentMessages = await self._call(request)
        crash_point("outbound.forward.answered")
        if len(copies.messages) != 1:
            raise ProtocolError(f"forwarding one message stored {len(copies.messages)}")
        return SentMessage(copies.messages[0], copies.pts, copies.pts_count)


def _tag_name(tag: int) -> str:
    return {
        SEND_TAG: "sendMessage",
        READ_TAG: "readHistory",
        SETTINGS_TAG: "setNotifySettings",
        DRAFT_TAG: "saveDraft",
        EDIT_TAG: "editMessage",
        DELETE_TAG: "deleteMessages",
    }[tag]


def _on_qts(peer_id: PeerId, tag: int) -> bool:
    """Whether a change of this kind to this chat moves the account's qts: a secret
    chat's new messages do; its reads and mutes, like every other chat's, the pts."""
    return peer_id.namespace == PeerNamespace.SECRET_CHAT and tag == SEND_TAG


def _on_channel_pts(peer_id: PeerId, tag: int) -> bool:
    """Whether a change of this kind to this chat moves the channel's own pts: its
    messages and reads do; a mute or a draft is the account's, on the account's pts."""
    return peer_id.namespace == PeerNamespace.CHANNEL and tag not in _ACCOUNT_TAGS


def _stored_point(tx: Transaction, peer_id: PeerId, tag: int = SEND_TAG) -> int | None:
    """Where the counter a change of kind ``tag`` to a chat moves stands: the channel's
    own pts (``_on_channel_pts``), the account's qts (``_on_qts``), else the account's
    pts (``None``: not synced)."""
    if _on_channel_pts(peer_id, tag):
        state = tx.get_peer_chat_state(peer_id)
        return None if state is None else state.pts
    cursor = tx.get_state()
    if cursor is None:
        return None
    return cursor.qts if _on_qts(peer_id, tag) else cursor.pts


def _move_point(tx: Transaction, peer_id: PeerId, point: int, tag: int) -> None:
    if _on_channel_pts(peer_id, tag):
        tx.set_peer_chat_state(peer_id, ChannelState(point))
        return
    cursor = tx.get_state()
    assert cursor is not None
    if _on_qts(peer_id, tag):
        tx.set_state(replace(cursor, qts=point))
    else:
        tx.set_state(replace(cursor, pts=point))


def _apply_pts(tx: Transaction, peer_id: PeerId, pts: int, count: int, tag: int = SEND_TAG) -> bool:
    """Move the counter a change of kind ``tag`` follows (see ``_stored_point``) if the
    answer is the next; ``True`` if it was not (a gap the difference will close)."""
    if count == 0:
        return False
    stored = _stored_point(tx, peer_id, tag)
    if stored is not None and stored + count == pts:
        _move_point(tx, peer_id, pts, tag)
        return False
    return stored is None or stored < pts


def _sent(tx: Transaction, entry: PeerOperationLogEntry, sent: SentMessage) -> bool:
    peer_id = entry.peer_id
    tx.delete_messages([MessageId(peer_id, _LOCAL, entry.contents["local_id"])])
    message = message_from_wire(sent.message)
    reached = _pts_reached(tx, peer_id, sent.pts)
    if not tx.message_exists(MessageId(peer_id, CLOUD, message.id or 0)):
        if reached:
            # The stored pts is past the send's: either its update was applied and the
            # message deleted since (it must not come back), or the cursor started after
            # it (a first sync, a reset) and it is history. The server says which: the id
            # becomes a hole, filled when shown.
            tx.add_hole(peer_id, CLOUD, _EVERYWHERE, message.id or 0, message.id or 0)
        else:
            tx.add_messages([message])
    tx.remove_operation_log_entry(peer_id, SEND_TAG, entry.tag_local_index)
    gap = _apply_pts(tx, peer_id, sent.pts, sent.pts_count)
    if gap:
        # Stored ahead of updates not applied yet: messages before it that they bring
        # are not counted unread here, so the server is asked.
        request_validation(tx, peer_id)
    if not reached and not gap and _is_applied(tx, peer_id, sent.pts):
        # The message was the next update: all before it is known through the cursor,
        # so the range above it is too. Otherwise the difference brings it with that claim;
        # and a cursor that was there already (a fresh one) says nothing of the range.
        tx.remove_hole(peer_id, CLOUD, _EVERYWHERE, message.id or 0, MAX_MESSAGE_ID)
    return gap


def _pts_reached(tx: Transaction, peer_id: PeerId, pts: int) -> bool:
    """Whether the chat's stored counter is at ``pts`` or beyond."""
    stored = _stored_point(tx, peer_id)
    return stored is not None and stored >= pts


def _is_applied(tx: Transaction, peer_id: PeerId, pts: int) -> bool:
    """Whether the chat's stored counter is exactly ``pts``."""
    return _stored_point(tx, peer_id) == pts


def _edited(tx: Transaction, entry: PeerOperationLogEntry, edited: SentMessage) -> bool:
    message = message_from_wire(edited.message)
    message_id = MessageId(entry.peer_id, CLOUD, message.id or 0)
    if tx.message_exists(message_id):
        tx.update_message(message_id, message)
    tx.remove_operation_log_entry(entry.peer_id, EDIT_TAG, entry.tag_local_index)
    return _apply_pts(tx, entry.peer_id, edited.pts, edited.pts_count)


def _done(tx: Transaction, entry: PeerOperationLogEntry, pts: int, count: int) -> bool:
    tx.remove_operation_log_entry(entry.peer_id, entry.tag, entry.tag_local_index)
    return _apply_pts(tx, entry.peer_id, pts, count, entry.tag)


def _deleted(tx: Transaction, entry: PeerOperationLogEntry, affected: AffectedMessages) -> bool:
    # An update applied since (an edit from elsewhere) may have stored one again: the
    # deletion's own update never comes here, its pts is taken from this answer.
    ids = entry.contents["ids"]
    tx.delete_messages(MessageId(entry.peer_id, CLOUD, i) for i in ids)
    # The chat's top and unread count as the server has them now, without these.
    request_validation(tx, entry.peer_id)
    return _done(tx, entry, affected.pts, affected.pts_count)


def _kept_unless_changed(
    tx: Transaction, entry: PeerOperationLogEntry, saved: AffectedMessages
) -> bool:
    """The server has the mute or draft ``entry`` held when it was sent. If it was
    changed again here meanwhile (the entry now holds another choice), the entry stays,
    to send that one; only the counter moves."""
    for current in tx.get_operation_log_entries(entry.peer_id, entry.tag):
        if current.tag_local_index == entry.tag_local_index and current.contents != entry.contents:
            return _apply_pts(tx, entry.peer_id, saved.pts, saved.pts_count, entry.tag)
    return _done(tx, entry, saved.pts, saved.pts_count)


def _read_done(tx: Transaction, entry: PeerOperationLogEntry, affected: AffectedMessages) -> bool:
    gap = _done(tx, entry, affected.pts, affected.pts_count)
    # What is left unread was counted here, over a range that may have holes, and the
    # server keeps its mark at its newest message: its word is asked.
    request_validation(tx, entry.peer_id)
    return gap


def _give_up(
    tx: Transaction, entry: PeerOperationLogEntry, *, refusal: ProtocolError, drop: bool = False
) -> None:
    """Stop trying ``entry`` (the server refused it for good): a message not sent stays,
    failed for ``refusal`` with the request to send it again, unless ``drop`` (a forward
    whose source is gone, which no retry can send)."""
    tx.remove_operation_log_entry(entry.peer_id, entry.tag, entry.tag_local_index)
    if entry.tag == DELETE_TAG:
        # The server keeps them: their range is fetched from it again when shown.
        ids = entry.contents["ids"]
        tx.add_hole(entry.peer_id, CLOUD, _EVERYWHERE, min(ids), max(ids))
        return
    if entry.tag != SEND_TAG:
        return
    try:
        local_id = local_id_of(entry.contents)
    except PayloadError as error:
        log.error("dropped a queued send: %s", error)
        return
    message_id = MessageId(entry.peer_id, _LOCAL, local_id)
    if drop:
        tx.delete_messages([message_id])
        return
    tx.mark_message_failed(message_id, failure_of(refusal, entry.contents))
