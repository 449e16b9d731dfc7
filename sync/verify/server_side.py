"""The server's truth, asked through the ordinary read-only methods.

Requests run a few at a time on the one connection (``CONCURRENCY``), so a large
account costs round trips in parallel rather than one after another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from postbox import MAX_MESSAGE_ID
from sync.protocol import (
    Dialog,
    Dialogs,
    ErrorCode,
    FullPeer,
    GetDialogs,
    GetFullPeer,
    GetHistory,
    GetPeers,
    GetSentMessages,
    MediaKind,
    Message,
    MessagesSlice,
    Peer,
    Peers,
    Presence,
    RpcError,
    SentMessageIds,
    method_name,
)
from sync.state import FloodWaits, flood_kind

__all__ = [
    "CONCURRENCY",
    "Call",
    "waiting_out_floods",
    "ServerDialogs",
    "ServerHistory",
    "contact_status",
    "dialogs",
    "histories",
    "peers",
    "sent_messages",
    "tag_counts",
]

Call = Callable[[Any], Awaitable[Any]]


def waiting_out_floods(call: Call) -> Call:
    """``call``, but a request the server refuses with ``FLOOD_WAIT`` is asked again once
    the wait is over, and no request of its kind goes before then (``FloodWaits``):
    verify reads a great deal, and a server with rate limits answers it so."""
    floods = FloodWaits()

    async def waiting(params: Any) -> Any:
        kind = flood_kind(method_name(params))
        loop = asyncio.get_running_loop()
        while True:
            delay = floods.delay(kind, loop.time())
            if delay > 0:
                await asyncio.sleep(delay)
                continue
            try:
                return await call(params)
            except RpcError as error:
                if error.code is not ErrorCode.FLOOD_WAIT:
                    raise
                floods.observe(kind, float(error.seconds or 0), loop.time())

    return waiting


#: Requests in flight at once.
CONCURRENCY = 8
_PAGE = 100
_PEERS_PAGE = 200
T = TypeVar("T")
K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class ServerDialogs:
    """The whole chat list: pinned chats in pinning order, then the rest newest first."""

    dialogs: tuple[Dialog, ...]
    pinned: tuple[int, ...]
    #: Each chat's top message date (0 for a chat without messages).
    top_dates: dict[int, int]


async def dialogs(call: Call) -> ServerDialogs:
    found: list[Dialog] = []
    pinned: tuple[int, ...] = ()
    dates: dict[int, int] = {}
    seen: set[int] = set()
    request = GetDialogs(limit=_PAGE)
    while True:
        page: Dialogs = await call(request)
        if not found:
            pinned = page.pinned
        tops = {(m.peer, m.id): m.date for m in page.messages}
        for dialog in page.dialogs:
            if dialog.peer not in seen:
                seen.add(dialog.peer)
                found.append(dialog)
                dates[dialog.peer] = tops.get((dialog.peer, dialog.top_message), 0)
        unpinned = [d for d in page.dialogs if d.peer not in page.pinned]
        if len(unpinned) < _PAGE:
            return ServerDialogs(tuple(found), pinned, dates)
        last = unpinned[-1]
        request = GetDialogs(
            offset_date=dates[last.peer],
            offset_id=last.top_message,
            offset_peer=last.peer,
            limit=_PAGE,
        )


async def _gather(
    keys: Sequence[K], fetch: Callable[[K], Awaitable[T]], limit: int = CONCURRENCY
) -> dict[K, T]:
    """``fetch`` for every key, at most ``limit`` at a time."""
    gate = asyncio.Semaphore(limit)

    async def one(key: K) -> T:
        async with gate:
            return await fetch(key)

    results = await asyncio.gather(*(one(key) for key in keys))
    return dict(zip(keys, results, strict=True))


@dataclass(frozen=True, slots=True)
class ServerHistory:
    """A chat's messages within the ranges asked for, by id, and its total count."""

    messages: dict[int, Message]
    count: int


async def _history(call: Call, peer: int, ranges: Sequence[tuple[int, int]]) -> ServerHistory:
    messages: dict[int, Message] = {}
    count = None
    for lower, upper in ranges:
        offset = 0
        while True:
            page: MessagesSlice = await call(
                GetHistory(
                    peer,
                    offset_id=offset,
                    limit=_PAGE,
                    min_id=max(0, lower - 1),
                    max_id=0 if upper >= MAX_MESSAGE_ID else upper + 1,
                )
            )
            if (lower, upper) == (1, MAX_MESSAGE_ID):
                count = page.count  # unbounded: the chat's total
            messages.update((message.id, message) for message in page.messages)
            if len(page.messages) < _PAGE:
                break
            offset = page.messages[-1].id
    if count is None:
        count = (await call(GetHistory(peer, limit=1))).count
    return ServerHistory(messages, count)


async def histories(
    call: Call, wanted: Mapping[int, Sequence[tuple[int, int]]]
) -> dict[int, ServerHistory]:
    """Each chat's messages with ids inside the given (lower, upper) ranges, by id."""
    return await _gather(sorted(wanted), lambda peer: _history(call, peer, wanted[peer]))


async def peers(call: Call, ids: Iterable[int]) -> tuple[dict[int, Peer], dict[int, Presence]]:
    """The peers the server knows among ``ids``, and their presences."""
    wanted = sorted(set(ids))
    pages = [tuple(wanted[i : i + _PEERS_PAGE]) for i in range(0, len(wanted), _PEERS_PAGE)]
    answers: dict[tuple[int, ...], Peers] = await _gather(pages, lambda ids: call(GetPeers(ids)))
    found: dict[int, Peer] = {}
    presences: dict[int, Presence] = {}
    for answer in answers.values():
        found.update((peer.id, peer) for peer in answer.peers)
        presences.update((presence.user, presence) for presence in answer.presences)
    return found, presences


async def contact_status(call: Call, ids: Iterable[int]) -> dict[int, bool | None]:
    """Whether each peer is one of the account's contacts; ``None`` for an unknown peer."""

    async def one(peer: int) -> bool | None:
        try:
            full: FullPeer = await call(GetFullPeer(peer))
        except RpcError as error:
            if error.code == ErrorCode.PEER_ID_INVALID:
                return None
            raise
        return full.contact

    return await _gather(sorted(set(ids)), one)


async def tag_counts(
    call: Call, wanted: Iterable[tuple[int, MediaKind]]
) -> dict[tuple[int, MediaKind], int]:
    """How many messages of a chat carry media of a kind (one filtered getHistory each)."""

    async def one(key: tuple[int, MediaKind]) -> int:
        page: MessagesSlice = await call(GetHistory(key[0], limit=1, filter=key[1]))
        return page.count

    return await _gather(sorted(set(wanted)), one)


async def sent_messages(call: Call, random_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Where the server stored the sends with ``random_ids``: random id to (peer, id),
    for those it stored."""
    wanted = sorted(set(random_ids))
    pages = [tuple(wanted[i : i + _PAGE]) for i in range(0, len(wanted), _PAGE)]
    answers: dict[tuple[int, ...], SentMessageIds] = await _gather(
        pages, lambda ids: call(GetSentMessages(ids))
    )
    return {
        sent.random_id: (sent.peer, sent.id) for answer in answers.values() for sent in answer.sent
    }
