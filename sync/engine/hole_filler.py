"""The hole filler: fetch exactly the history and chat list that open views show as holes.

It follows the two singleton views (the first hole of every open history view, the
boundary holes of every open chat list). One fetch runs at a time per (peer,
namespace, space) or chat-list group; a completed fetch is not repeated for a cooldown;
after each completion the current holes are looked at again; a fetch whose hole left
the views is let finish for a short grace period in case the view comes back, then
cancelled. A fill stores the messages and removes exactly the range the answer covers,
in one transaction (the whole requested range when the server has nothing there).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    ChatListEntryType,
    ChatListHole,
    ChatListHolesEntry,
    ChatListHolesViewKey,
    ChatListInclusion,
    ChatListIndex,
    HoleDirection,
    MessageHistoryHolesEntry,
    MessageHistoryHolesViewKey,
    MessageId,
    MessageIndex,
    MessageTags,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    Subscription,
    Transaction,
)
from postbox.errors import is_final
from sync.engine.channel_access import channel_gone
from sync.engine.convert import (
    CLOUD,
    draft_from_wire,
    message_from_wire,
    peer_from_wire,
    read_state_from_dialog,
)
from sync.engine.crash_points import crash_point
from sync.engine.read_states import request_validation
from sync.engine.recent import RecentChanges
from sync.engine.references import PeerDescriber
from sync.engine.replay import replace_range, set_draft_from_server, set_muted_from_server
from sync.engine.timing import Timeouts, loop_time
from sync.notifier import ChangeNotifier
from sync.protocol import (
    Dialog,
    Dialogs,
    GetDialogs,
    GetHistory,
    InvalidParamsError,
    MediaKind,
    MessagesSlice,
    RpcError,
    peer_kind,
)
from sync.state import (
    ServerLiedError,
    check_dialogs,
    check_message,
    check_peers,
    referenced_peers,
)

__all__ = ["HoleFiller"]

log = logging.getLogger("postbox.sync")

_TAG_FILTERS = {
    int(MessageTags.PHOTO): MediaKind.PHOTO,
    int(MessageTags.VIDEO): MediaKind.VIDEO,
    int(MessageTags.FILE): MediaKind.FILE,
    int(MessageTags.LINK): MediaKind.LINK,
    int(MessageTags.VOICE): MediaKind.VOICE,
}
#: Most messages or dialogs one fill asks for.
FILL_LIMIT = 100

Entry = MessageHistoryHolesEntry | ChatListHolesEntry


def _slot(entry: Entry) -> tuple[Any, ...]:
    """Fetches that must not run at the same time share a slot."""
    if isinstance(entry, ChatListHolesEntry):
        return ("chat list", entry.group_id)
    return ("history", entry.peer_id, entry.namespace, entry.space.tag)


@dataclass(slots=True)
class _Fetch:
    entry: Entry
    task: asyncio.Task[None]
    left_at: float | None = None


class HoleFiller:
    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        on_channel_behind: Callable[[int], None] = lambda _channel: None,
        recent: RecentChanges | None = None,
        changes: ChangeNotifier | None = None,
        clock: Callable[[], float] = loop_time,
        describer: PeerDescriber | None = None,
        on_channel_refused: Callable[[int], None] = lambda _channel: None,
    ) -> None:
        self.postbox = postbox
        self.describer = describer or PeerDescriber(postbox, call, clock=clock)
        #: Answers refused for breaking the protocol's rules (nothing of them stored).
        self.lies_refused = 0
        self._clock = clock
        self.recent = recent or RecentChanges()
        #: Notified when a fetch starts or ends.
        self.changes = changes or ChangeNotifier()
        self._call = call
        self.timeouts = timeouts
        self._on_channel_behind = on_channel_behind
        #: Told of a channel whose history the server refuses for good.
        self._on_channel_refused = on_channel_refused
        self._wanted: frozenset[Entry] = frozenset()
        self._running: dict[tuple[Any, ...], _Fetch] = {}
        #: A damaged database met by a fetch, for ``run`` to raise (``is_final``).
        self._damage: Exception | None = None
        self._done_at: dict[Entry, float] = {}
        self._retry_at: dict[Entry, float] = {}
        self._failures: dict[Entry, int] = {}
        self._wake = asyncio.Event()
        self.fills = 0
        self.messages_filled = 0
        self.dialogs_filled = 0

    @property
    def idle(self) -> bool:
        return not self._running and not self._due()

    def in_flight(self) -> list[Entry]:
        """What is being fetched now (for the inspector)."""
        return [fetch.entry for fetch in self._running.values()]

    async def run(self) -> None:
        """Follow the holes views and fetch; for ever (cancel to stop)."""
        subscription = self.postbox.combined_view(
            [MessageHistoryHolesViewKey(), ChatListHolesViewKey()]
        )
        watcher = asyncio.create_task(self._follow(subscription))
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if self._damage is not None:  # raised to the engine, which stops
                    raise self._damage
                self._evaluate()
        finally:
            watcher.cancel()
            subscription.dispose()
            for fetch in list(self._running.values()):
                fetch.task.cancel()

    async def _follow(self, subscription: Subscription) -> None:
        async for snapshot in subscription:
            history = snapshot[MessageHistoryHolesViewKey()]
            chat_list = snapshot[ChatListHolesViewKey()]
            self._wanted = frozenset(history.entries) | frozenset(chat_list.entries)
            self._wake.set()

    def _due(self) -> list[Entry]:
        now = self._clock()
        cooldown = self.timeouts.fill_cooldown
        return [
            entry
            for entry in self._wanted
            if _slot(entry) not in self._running
            and now - self._done_at.get(entry, -cooldown) >= cooldown
            and now >= self._retry_at.get(entry, 0.0)
        ]

    def _evaluate(self) -> None:
        now = self._clock()
        for slot, fetch in list(self._running.items()):
            if fetch.entry in self._wanted:
                fetch.left_at = None
            elif fetch.left_at is None:
                fetch.left_at = now
                asyncio.get_running_loop().call_later(self.timeouts.fill_grace, self._wake.set)
            elif now - fetch.left_at >= self.timeouts.fill_grace:
                fetch.task.cancel()
                del self._running[slot]
        for entry in sorted(self._due(), key=repr):
            slot = _slot(entry)
            if slot in self._running:
                continue
            task = asyncio.create_task(self._fetch(entry))
            self._running[slot] = _Fetch(entry, task)
            self.changes.notify()

    async def _fetch(self, entry: Entry) -> None:
        loop = asyncio.get_running_loop()
        try:
            if isinstance(entry, ChatListHolesEntry):
                await self._fill_chat_list(entry)
            else:
                await self._fill_history(entry)
        except _StaleFetchError:
            # Fetch again shortly: changes raced the answer, or there is no cursor yet.
            self._retry_at[entry] = self._clock() + self.timeouts.retry_min
            loop.call_later(self.timeouts.retry_min, self._wake.set)
        except Exception as error:
            if is_final(error):  # the database is damaged: no retry would cure it
                self._damage = error
                return
            failures = self._failures.get(entry, 0) + 1
            self._failures[entry] = failures
            pause = min(self.timeouts.retry_max, self.timeouts.retry_min * 2 ** (failures - 1))
            self._retry_at[entry] = self._clock() + pause
            loop.call_later(pause, self._wake.set)
            if isinstance(error, ConnectionError):
                log.info("hole fill interrupted: %s", error)
            elif isinstance(error, RpcError):
                log.warning("hole fill refused (retry in %.1f s): %s", pause, error)
                if isinstance(entry, MessageHistoryHolesEntry) and channel_gone(error):
                    self._on_channel_refused(int(entry.peer_id))  # its holes go with it
            elif isinstance(error, ServerLiedError | InvalidParamsError):
                self.lies_refused += 1
                log.error("hole fill refused an answer from the server: %s", error)
            else:
                log.exception("hole fill failed: %r", entry)
        else:
            self.fills += 1
            self._failures.pop(entry, None)
            self._done_at[entry] = self._clock()
            loop.call_later(self.timeouts.fill_cooldown, self._wake.set)
        finally:
            self._running.pop(_slot(entry), None)
            self._wake.set()
            self.changes.notify()

    async def _write(self, fn: Callable[[Transaction], Any]) -> Any:
        return await asyncio.wrap_future(self.postbox.transaction(fn))

    # -- history ------------------------------------------------------------------------

    async def _fill_history(self, entry: MessageHistoryHolesEntry) -> None:
        lower, upper = entry.hole.lower, entry.hole.upper
        limit = max(1, min(FILL_LIMIT, entry.count))
        tag_filter = None if entry.space.is_everywhere else _TAG_FILTERS.get(entry.space.tag)
        bounds = {"min_id": max(0, lower - 1), "max_id": min(MAX_MESSAGE_ID, upper) + 1}
        peer = int(entry.peer_id)
        if entry.direction is HoleDirection.OLDER:
            request = GetHistory(
                peer, offset_id=upper + 1, limit=limit, **bounds, filter=tag_filter
            )
        elif entry.direction is HoleDirection.NEWER:
            request = GetHistory(
                peer, offset_id=lower, add_offset=-limit, limit=limit, **bounds, filter=tag_filter
            )
        else:
            half = limit // 2
            request = GetHistory(
                peer,
                offset_id=max(lower, min(entry.anchor_id, upper)),
                add_offset=-half,
                limit=limit,
                **bounds,
                filter=tag_filter,
            )
        generation = self.recent.generation
        page: MessagesSlice = await self._call(request)
        crash_point("hole_filler.fill_history.answered")
        _check_page(page, peer, bounds["min_id"], bounds["max_id"])
        described = await self.describer.describe(
            referenced_peers(page.messages), (p.id for p in page.peers)
        )
        ids = sorted(m.id for m in page.messages)
        covered_lower, covered_upper = lower, upper
        # A side that came back full may have more beyond it: the range covered ends
        # at its last message. A side that came back short reached the hole's end.
        full = len(ids) >= limit
        if entry.direction is HoleDirection.OLDER:
            if full:
                covered_lower = ids[0]
        elif entry.direction is HoleDirection.NEWER:
            if full:
                covered_upper = ids[-1]
        else:
            anchor = request.offset_id
            older = [i for i in ids if i < anchor]
            newer = [i for i in ids if i >= anchor]
            if older and len(older) >= limit - half:
                covered_lower = older[0]
            if newer and len(newer) >= half:
                covered_upper = newer[-1]
        messages = [message_from_wire(m) for m in page.messages]
        peers = [peer_from_wire(p) for p in (*page.peers, *described)]
        space = entry.space

        def fill(tx: Transaction) -> None:
            skip = self.recent.changed_since(generation, entry.peer_id)
            if skip is None or tx.get_state() is None:
                raise _StaleFetchError
            read_state = tx.get_read_state(entry.peer_id)
            known = read_state.get(CLOUD) if read_state else None
            if known is not None and any((m.id or 0) > known.max_known_id for m in messages):
                # Messages ahead of the updates applied: the count may not place them.
                request_validation(tx, entry.peer_id)
            tx.update_peers(peers)
            if space.is_everywhere:
                replace_range(tx, entry.peer_id, covered_lower, covered_upper, messages, skip=skip)
            else:
                new = [
                    m
                    for m in messages
                    if m.id not in skip
                    and not tx.message_exists(MessageId(m.peer_id, CLOUD, m.id or 0))
                ]
                if new:
                    tx.add_messages(new)
                tx.remove_hole(entry.peer_id, entry.namespace, space, covered_lower, covered_upper)

        await self._write(fill)
        crash_point("hole_filler.fill_history.stored")
        self.messages_filled += len(messages)

    # -- chat list ----------------------------------------------------------------------

    async def _fill_chat_list(self, entry: ChatListHolesEntry) -> None:
        hole = entry.hole
        if hole == ChatListHole.top():
            request = GetDialogs(limit=FILL_LIMIT)
        else:
            index = hole.index
            request = GetDialogs(
                offset_date=max(0, index.timestamp),
                offset_id=max(0, index.id.id),
                offset_peer=int(index.id.peer_id),
                limit=FILL_LIMIT,
            )
        generation = self.recent.generation
        page: Dialogs = await self._call(request)
        crash_point("hole_filler.fill_chat_list.answered")
        check_dialogs(page.dialogs, page.messages, page.peers, "a chat-list page")
        described = await self.describer.describe(
            {*referenced_peers(page.messages), *(d.peer for d in page.dialogs)},
            (p.id for p in page.peers),
        )
        if described:
            page = msgspec.structs.replace(page, peers=(*page.peers, *described))
        store = functools.partial(
            _store_dialogs, page=page, hole=hole, recent=self.recent, generation=generation
        )
        behind = await self._write(store)
        crash_point("hole_filler.fill_chat_list.stored")
        self.dialogs_filled += len(page.dialogs)
        for channel in behind:
            self._on_channel_behind(channel)


def _check_page(page: MessagesSlice, peer: int, min_id: int, max_id: int) -> None:
    """A page of ``peer``'s history holds its messages alone, within the bounds asked."""
    kind = peer_kind(peer)
    where = f"a history page of {peer}"
    check_peers(page.peers, where)
    for message in page.messages:
        check_message(message, () if kind is None else (kind,), where)
        if message.peer != peer or not min_id < message.id < max_id:
            raise ServerLiedError(f"{where} has message {message.id} of {message.peer}")


class _StaleFetchError(Exception):
    """The answer may miss what changed meanwhile (too many changes to tell, a cursor
    jump, or no cursor stored yet): fetch again."""


def _same_position(tx: Transaction, page: Dialogs, dialog: Dialog) -> bool:
    """Whether the stored counters the chat follows (the channel's own pts, the qts and
    the pts for a secret chat, else the account's pts) are the page's."""
    if dialog.pts is not None:
        stored = tx.get_peer_chat_state(PeerId(dialog.peer))
        return stored is None or stored.pts == dialog.pts
    cursor = tx.get_state()
    if page.state is None or cursor is None:
        return False
    if PeerId(dialog.peer).namespace == PeerNamespace.SECRET_CHAT:  # reads move the pts
        return cursor.qts == page.state.qts and cursor.pts == page.state.pts
    return cursor.pts == page.state.pts


def _store_dialogs(
    tx: Transaction,
    page: Dialogs,
    hole: ChatListHole,
    recent: RecentChanges,
    generation: int,
) -> list[int]:
    """Store a getDialogs page and move the chat-list holes; the channels found behind."""
    if tx.get_state() is None:
        raise _StaleFetchError  # the first cursor is not stored yet: the page may predate it
    tops = {(m.peer, m.id): m for m in page.messages}
    tx.update_peers(peer_from_wire(p) for p in page.peers)
    behind: list[int] = []
    pinned = {peer: position for position, peer in enumerate(page.pinned)}
    groups: dict[int, list[PeerId]] = {}
    for dialog in page.dialogs:
        peer_id = PeerId(dialog.peer)
        group = PeerGroupId.ARCHIVE if dialog.folder else PeerGroupId.ROOT
        current = tx.get_chat_list_inclusion(peer_id)
        tx.update_chat_list_inclusion(
            peer_id,
            ChatListInclusion(
                group,
                current.pinning_index if current and current.group_id == group else None,
                current.min_timestamp if current else None,
            ),
        )
        if dialog.peer in pinned:
            groups.setdefault(int(group), []).append(peer_id)
        skip = recent.changed_since(generation, dialog.peer)
        if skip is None:
            raise _StaleFetchError
        top = tops.get((dialog.peer, dialog.top_message))
        if top is not None:
            stored_top = [message_from_wire(top)]
            replace_range(tx, peer_id, top.id, MAX_MESSAGE_ID, stored_top, skip=skip)
        tx.reset_read_state(peer_id, CLOUD, read_state_from_dialog(dialog))
        if skip or not _same_position(tx, page, dialog):
            # The page's counts are from another point in the update stream than the
            # one stored here: updates applied since, or still to come, would be
            # counted twice or not at all.
            request_validation(tx, peer_id)
        set_muted_from_server(tx, peer_id, dialog.muted_until)
        set_draft_from_server(tx, peer_id, draft_from_wire(dialog.draft))
        if dialog.pts is not None:
            stored = tx.get_peer_chat_state(peer_id)
            if stored is None:
                tx.set_peer_chat_state(peer_id, ChannelState(dialog.pts))
            elif stored.pts != dialog.pts:
                tx.add_channel_to_poll(peer_id, dialog.pts)
                behind.append(dialog.peer)
    for pinned_group, peers in groups.items():
        peers.sort(key=lambda p: pinned[int(p)])
        tx.set_pinned_peer_ids(pinned_group, peers)
    unpinned = [dialog for dialog in page.dialogs if dialog.peer not in pinned]
    returned = {dialog.peer for dialog in page.dialogs}
    for group_id in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
        if hole in tx.get_chat_list_holes(group_id):
            tx.remove_chat_list_hole(group_id, hole)
            below: MessageIndex | None = None
            if len(unpinned) >= FILL_LIMIT:
                last = unpinned[-1]
                top = tops.get((last.peer, last.top_message))
                timestamp = top.date if top else 0
                below = MessageIndex(
                    MessageId(PeerId(last.peer), CLOUD, last.top_message), timestamp
                )
                tx.add_chat_list_hole(group_id, ChatListHole(below))
            _question_unreturned(tx, group_id, hole, below, returned)
    return behind


#: Chat-list rows read at once when looking for chats a page left out.
_QUESTION_PAGE = 100


def _question_unreturned(
    tx: Transaction,
    group_id: int,
    hole: ChatListHole,
    below: MessageIndex | None,
    returned: set[int],
) -> None:
    """Chats listed here inside the range the page covered that the page left out
    (their messages deleted on the server, perhaps in a gap this client skipped): the
    server is asked about each, and one it does not list any more leaves the list."""
    lower = None if below is None else below.sort_key
    # Only the rows under the filled hole are read, a page at a time, down to its end.
    after = ChatListIndex(None, hole.index)
    while rows := tx.get_chat_list(group_id, below=after, count=_QUESTION_PAGE):
        for entry in rows:
            if lower is not None and entry.index.message_index.sort_key < lower:
                return
            if entry.type is ChatListEntryType.MESSAGE and int(entry.peer_id) not in returned:
                request_validation(tx, entry.peer_id)
        after = rows[-1].index
