"""Differences: what a client missed, replayed from the server's update logs.

``difference`` answers getDifference from the account's ``update_log`` (pts) and the
whole ``qts_log`` (secret chats' new messages), in slices that cover at most
``pts_total_limit`` points of each; ``channel_difference`` answers getChannelDifference
from one channel's ``channel_log``. A client older than a log's window gets "too long".
Both read the store through ``DifferenceSource``: its SQL, counters and the peers and
history the answers name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sync.protocol import (
    ANY_UPDATE,
    AnyChannelDifference,
    AnyDifference,
    AnyUpdate,
    ChannelDifference,
    ChannelDifferenceEmpty,
    ChannelDifferenceTooLong,
    ChannelPts,
    Dialog,
    Difference,
    DifferenceEmpty,
    DifferenceSlice,
    DifferenceTooLong,
    ErrorCode,
    GetChannelDifference,
    GetDifference,
    GetHistory,
    Message,
    MessagesSlice,
    Peer,
    Presence,
    ProtocolError,
    State,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
)

__all__ = ["DIFFERENCE_LIMIT", "DifferenceSource", "channel_difference", "difference"]

#: pts points one getDifference answer covers when the client sets no limit.
DIFFERENCE_LIMIT = 1_000


class DifferenceSource(Protocol):
    """What a difference reads of the server's store."""

    def _execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def _one(self, sql: str, bindings: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...

    def _meta(self, key: str, default: int) -> int: ...

    def _peers_of(
        self, messages: Iterable[Message], extra: Iterable[int] = ()
    ) -> tuple[Peer, ...]: ...

    def state(self) -> State: ...

    def presences(self, ids: Iterable[int]) -> tuple[Presence, ...]: ...

    def history(self, request: GetHistory) -> MessagesSlice: ...

    def dialog(self, peer_id: int) -> Dialog: ...


@dataclass(frozen=True, slots=True)
class LogEntry:
    pts: int
    pts_count: int
    date: int
    update: AnyUpdate


def _log_entries(store: DifferenceSource, sql: str, args: Sequence[Any]) -> list[LogEntry]:
    return [
        LogEntry(pts, count, date, ANY_UPDATE.decode(body))
        for pts, count, date, body in store._execute(sql, args)
    ]


def _take(entries: list[LogEntry], limit: int) -> tuple[list[LogEntry], bool]:
    """The first entries covering at most ``limit`` points (one at least); more left?"""
    taken: list[LogEntry] = []
    points = 0
    for entry in entries:
        if taken and points + entry.pts_count > limit:
            return taken, True
        taken.append(entry)
        points += entry.pts_count
    return taken, False


def _split(entries: Iterable[LogEntry]) -> tuple[tuple[Message, ...], tuple[AnyUpdate, ...]]:
    messages: list[Message] = []
    others: list[AnyUpdate] = []
    for entry in entries:
        update = entry.update
        if isinstance(update, UpdateNewMessage | UpdateNewChannelMessage):
            messages.append(update.message)
        else:
            others.append(update)
    return tuple(messages), tuple(others)


def difference(
    store: DifferenceSource, request: GetDifference, *, force_too_long: bool = False
) -> AnyDifference:
    """What happened after the client's state, in slices of ``pts_total_limit`` points."""
    state = store.state()
    log_start = store._meta("log_start", 0)
    if force_too_long and request.pts < state.pts:
        return DifferenceTooLong(state.pts)
    if request.pts < log_start or request.pts > state.pts:
        return DifferenceTooLong(state.pts)
    limit = request.pts_total_limit or DIFFERENCE_LIMIT
    entries = _log_entries(
        store,
        "SELECT pts, pts_count, date, body FROM update_log WHERE pts > ? ORDER BY pts LIMIT ?",
        (request.pts, limit + 1),
    )
    taken, more = _take(entries, limit)
    messages, others = _split(entry for entry in taken)
    secret = _qts_updates(store, request.qts, limit + 1)
    more = more or len(secret) > limit
    secret = secret[:limit]
    encrypted = tuple(update.message for update in secret)
    peers = store._peers_of((*messages, *encrypted, *_messages_in(others)))
    if more:
        # The date stays the request's, so the final answer's hints (peers, presences,
        # channels changed since that date) cover every slice of the chain.
        intermediate = State(
            taken[-1].pts if taken else request.pts,
            secret[-1].qts if secret else request.qts,
            state.seq,
            request.date,
        )
        return DifferenceSlice(messages, others, peers, intermediate, encrypted)
    changed = [
        row[0]
        for row in store._execute(
            "SELECT id FROM peers WHERE changed_date >= ? AND changed_date > 0", (request.date,)
        )
    ]
    presences = store.presences(
        row[0]
        for row in store._execute(
            "SELECT id FROM peers WHERE status_date >= ? AND status_date > 0", (request.date,)
        )
    )
    channels = tuple(
        ChannelPts(peer, pts)
        for peer, pts in store._execute(
            "SELECT peer, pts FROM dialogs WHERE pts IS NOT NULL AND event_date >= ? ORDER BY peer",
            (request.date,),
        )
    )
    if not taken and not secret and not changed and not presences and not channels:
        return DifferenceEmpty(state.date, state.seq)
    peers = store._peers_of((*messages, *encrypted, *_messages_in(others)), changed)
    return Difference(messages, others, peers, state, presences, channels, encrypted)


def _qts_updates(
    store: DifferenceSource, after: int, limit: int
) -> list[UpdateNewEncryptedMessage]:
    """The secret chats' new messages after qts ``after``, in qts order."""
    rows = store._execute(
        "SELECT body FROM qts_log WHERE qts > ? ORDER BY qts LIMIT ?", (after, limit)
    )
    updates = [ANY_UPDATE.decode(body) for (body,) in rows]
    return [u for u in updates if isinstance(u, UpdateNewEncryptedMessage)]


def channel_difference(
    store: DifferenceSource, request: GetChannelDifference, *, force_too_long: bool = False
) -> AnyChannelDifference:
    row = store._one(
        "SELECT pts, log_start FROM dialogs WHERE peer = ? AND pts IS NOT NULL",
        (request.channel,),
    )
    if row is None:
        raise ProtocolError(f"no channel with id {request.channel}", ErrorCode.CHANNEL_INVALID)
    pts, log_start = row
    if request.pts < log_start or request.pts > pts or force_too_long and request.pts < pts:
        page = store.history(GetHistory(request.channel, limit=min(request.limit, 100)))
        return ChannelDifferenceTooLong(store.dialog(request.channel), page.messages, page.peers)
    entries = _log_entries(
        store,
        "SELECT pts, pts_count, date, body FROM channel_log WHERE channel = ? AND pts > ?"
        " ORDER BY pts LIMIT ?",
        (request.channel, request.pts, request.limit + 1),
    )
    if not entries:
        return ChannelDifferenceEmpty(pts)
    taken, more = _take(entries, request.limit)
    messages, others = _split(taken)
    return ChannelDifference(
        messages,
        others,
        store._peers_of((*messages, *_messages_in(others)), (request.channel,)),
        taken[-1].pts,
        not more,
    )


def _messages_in(updates: Iterable[AnyUpdate]) -> list[Message]:
    """The messages updates carry (edits): their authors must come with them too."""
    return [message for u in updates if isinstance(message := getattr(u, "message", None), Message)]
