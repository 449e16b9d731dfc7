"""Differences: what a client missed, replayed from the server's update logs.

``difference`` answers getDifference from the account's ``update_log`` (pts) and the
whole ``qts_log`` (secret chats' new messages), in slices that cover at most
``pts_total_limit`` points of each; ``channel_difference`` answers getChannelDifference
from one channel's ``channel_log``. A client older than a log's window gets "too long".
Both read the store through ``DifferenceSource``: its update logs (``UpdateLogs``), its
state, and the peers and history the answers name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from sync.protocol import (
    AnyChannelDifference,
    AnyDifference,
    AnyUpdate,
    ChannelDifference,
    ChannelDifferenceEmpty,
    ChannelDifferenceTooLong,
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
    UpdateContact,
    UpdateNewChannelMessage,
    UpdateNewMessage,
)
from sync.server.update_logs import LogEntry, UpdateLogs

__all__ = [
    "DIFFERENCE_LIMIT",
    "MIN_PEER_SHARE",
    "DifferenceSource",
    "channel_difference",
    "difference",
    "left_out",
    "without",
]

#: pts points one getDifference answer covers when the client sets no limit.
DIFFERENCE_LIMIT = 1_000
#: One incoming message in this many names its author and forward source without
#: describing them: the client asks getPeers (Telegram's min peers).
MIN_PEER_SHARE = 5


def left_out(messages: Iterable[Message]) -> set[int]:
    """The peers an answer names but leaves out, as Telegram does for a group member or a
    forward's channel the client may never have met: for one incoming message in
    ``MIN_PEER_SHARE``, drawn from its chat and id so that every answer carrying it
    leaves out the same. The chats of the messages are always described."""
    ids: set[int | None] = set()
    chats: set[int | None] = set()
    for message in messages:
        chats.add(message.peer)
        if message.out or (message.peer * 31 + message.id) % MIN_PEER_SHARE:
            continue
        ids.add(message.author)
        if message.forward is not None:
            ids |= {message.forward.author, message.forward.channel}
    return {peer for peer in ids - chats if peer is not None}


def without(peers: tuple[Peer, ...], ids: set[int]) -> tuple[Peer, ...]:
    return tuple(peer for peer in peers if peer.id not in ids) if ids else peers


class DifferenceSource(Protocol):
    """What a difference reads of the server's store."""

    @property
    def logs(self) -> UpdateLogs: ...

    def peers_of(
        self, messages: Iterable[Message], extra: Iterable[int] = ()
    ) -> tuple[Peer, ...]: ...

    def state(self) -> State: ...

    def peers_changed_since(self, date: int) -> list[int]: ...

    def presences_changed_since(self, date: int) -> tuple[Presence, ...]: ...

    def history(self, request: GetHistory) -> MessagesSlice: ...

    def dialog(self, peer_id: int) -> Dialog: ...


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
    log_start = store.logs.start
    if force_too_long and request.pts < state.pts:
        return DifferenceTooLong(state.pts)
    if request.pts < log_start or request.pts > state.pts:
        return DifferenceTooLong(state.pts)
    limit = request.pts_total_limit or DIFFERENCE_LIMIT
    entries = store.logs.entries(request.pts, limit + 1)
    taken, more = _take(entries, limit)
    messages, others = _split(entry for entry in taken)
    secret = store.logs.secret_updates(request.qts, limit + 1)
    more = more or len(secret) > limit
    secret = secret[:limit]
    encrypted = tuple(update.message for update in secret)
    named = (*messages, *encrypted, *_messages_in(others))
    # A contact change names a user no message may name: described, as its push does.
    contacts = [update.peer for update in others if isinstance(update, UpdateContact)]
    peers = without(store.peers_of(named, contacts), left_out(named))
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
    changed = store.peers_changed_since(request.date)
    presences = store.presences_changed_since(request.date)
    channels = store.logs.channels_changed_since(request.date)
    if not taken and not secret and not changed and not presences and not channels:
        return DifferenceEmpty(state.date, state.seq)
    # A peer changed since the client's date is always described: it may hold an old one.
    peers = without(
        store.peers_of(named, (*changed, *contacts)), left_out(named) - {*changed, *contacts}
    )
    return Difference(messages, others, peers, state, presences, channels, encrypted)


def channel_difference(
    store: DifferenceSource,
    request: GetChannelDifference,
    *,
    force_too_long: bool = False,
    timeout: int | None = None,
) -> AnyChannelDifference:
    """What happened in one channel after the client's pts; ``timeout`` is the hint
    every answer carries (seconds before the client polls the channel again)."""
    cursor = store.logs.channel_cursor(request.channel)
    if cursor is None:
        raise ProtocolError(f"no channel with id {request.channel}", ErrorCode.CHANNEL_INVALID)
    pts, log_start = cursor
    if request.pts < log_start or request.pts > pts or force_too_long and request.pts < pts:
        page = store.history(GetHistory(request.channel, limit=min(request.limit, 100)))
        dialog = store.dialog(request.channel)
        return ChannelDifferenceTooLong(dialog, page.messages, page.peers, timeout)
    entries = store.logs.channel_entries(request.channel, request.pts, request.limit + 1)
    if not entries:
        return ChannelDifferenceEmpty(pts, timeout=timeout)
    taken, more = _take(entries, request.limit)
    messages, others = _split(taken)
    named = (*messages, *_messages_in(others))
    return ChannelDifference(
        messages,
        others,
        without(store.peers_of(named, (request.channel,)), left_out(named)),
        taken[-1].pts,
        not more,
        None if more else timeout,  # one that is not final is asked again at once
    )


def _messages_in(updates: Iterable[AnyUpdate]) -> list[Message]:
    """The messages updates carry (edits): their authors must come with them too."""
    return [message for u in updates if isinstance(message := getattr(u, "message", None), Message)]
