"""Update grouping and counter checks: pure logic, no sockets and no database.

``group_push`` sorts one push into what each counter orders: the account's pts, each
channel's pts, the account's qts (secret chats' new messages), the seq of containers,
and date-only updates (presence). A container with
a seq is checked by its seq first; then its contents go through their own checks, so a
pts update inside it is applied once and in pts order, as if it had come alone. A
``Sequencer`` then holds a counter's position and the updates that arrived early:
``offer`` returns the updates that are now contiguous, in order, drops the ones
already applied, and keeps the rest until the missing ones arrive or the caller gives
up waiting and asks for the difference.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    Peer,
    ShortMessage,
    UpdateChannelTooLong,
    UpdateDeleteChannelMessages,
    UpdateEditChannelMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateReadChannelInbox,
    Updates,
    UpdatesTooLong,
)

__all__ = [
    "Grouped",
    "Sequenced",
    "Sequencer",
    "channel_of",
    "group_push",
    "group_updates",
    "pts_of",
    "qts_of",
]

T = TypeVar("T")


def channel_of(update: AnyUpdate) -> int | None:
    """The channel whose own pts orders ``update``; ``None`` for the account's updates."""
    if isinstance(update, UpdateNewChannelMessage | UpdateEditChannelMessage):
        return update.message.peer
    if isinstance(update, UpdateDeleteChannelMessages | UpdateReadChannelInbox):
        return update.channel
    return None


def pts_of(update: AnyUpdate) -> tuple[int, int] | None:
    """(pts, pts_count) of an update that moves a pts counter."""
    pts = getattr(update, "pts", None)
    count = getattr(update, "pts_count", None)
    if isinstance(pts, int) and isinstance(count, int):
        return pts, count
    return None


def qts_of(update: AnyUpdate) -> int | None:
    """The qts an update takes (one point each), if the qts stream orders it."""
    return update.qts if isinstance(update, UpdateNewEncryptedMessage) else None


@dataclass(slots=True)
class Grouped:
    """One push, sorted by the counter that orders each part."""

    pts: list[AnyUpdate] = field(default_factory=list)
    channels: dict[int, list[AnyUpdate]] = field(default_factory=dict)
    qts: list[UpdateNewEncryptedMessage] = field(default_factory=list)
    #: Channels the server says to ask about (channelTooLong).
    channel_hints: list[UpdateChannelTooLong] = field(default_factory=list)
    #: Updates with no counter (presence), applied as they come.
    unordered: list[AnyUpdate] = field(default_factory=list)
    #: (seq_start, seq, contents) of a container that carries a seq: its contents are
    #: sorted by counter too, and go to their own checks once the seq is next.
    seq: tuple[int, int, Grouped] | None = None
    peers: list[Peer] = field(default_factory=list)
    #: The container's date. Peers and presences pushed before the stored cursor's date
    #: are older than what the last difference said (it lists every peer and presence
    #: changed since the date before it), so they are not applied over it.
    date: int = 0
    too_long: bool = False
    #: The user a short message names without carrying: if the client does not know
    #: them, the push cannot be shown and the difference must bring it.
    needs_peer: int | None = None


def group_push(push: AnyUpdates, self_id: int) -> Grouped:
    """Sort a push by counter (``self_id``: the account's user, for the short form)."""
    grouped = Grouped()
    if isinstance(push, UpdatesTooLong):
        grouped.too_long = True
        return grouped
    if isinstance(push, ShortMessage):
        grouped.pts.append(push.as_update(self_id))
        grouped.needs_peer = push.user
        return grouped
    assert isinstance(push, Updates)
    if push.seq:
        contents = group_updates(push.updates)
        contents.peers.extend(push.peers)
        contents.date = push.date
        grouped.seq = (push.seq_start or push.seq, push.seq, contents)
        return grouped
    grouped = group_updates(push.updates)
    grouped.peers.extend(push.peers)
    grouped.date = push.date
    return grouped


def group_updates(updates: Iterable[AnyUpdate]) -> Grouped:
    """Sort the updates of one container by the counter that orders each."""
    grouped = Grouped()
    for update in updates:
        if isinstance(update, UpdateChannelTooLong):
            grouped.channel_hints.append(update)
            continue
        if isinstance(update, UpdateNewEncryptedMessage):
            grouped.qts.append(update)
            continue
        channel = channel_of(update)
        if channel is not None:
            grouped.channels.setdefault(channel, []).append(update)
        elif pts_of(update) is not None:
            grouped.pts.append(update)
        else:
            grouped.unordered.append(update)
    return grouped


@dataclass(frozen=True, slots=True)
class Sequenced(Generic[T]):
    """What one ``offer`` found: updates ready in order, and whether a gap remains."""

    ready: list[T]
    gap: bool
    #: An update overlapped the position (started below it, ended above): the counter
    #: cannot be trusted and only a difference can resolve it.
    inconsistent: bool = False


@dataclass(slots=True)
class Sequencer(Generic[T]):
    """One counter's position, and the updates that arrived ahead of it.

    Items are ``(end, count, payload)``: an item applies when ``position + count ==
    end``, is old when ``end <= position``, and is held while it starts further on.
    """

    position: int
    held: dict[tuple[int, int], T] = field(default_factory=dict)

    def offer(self, items: Iterable[tuple[int, int, T]]) -> Sequenced[T]:
        for end, count, payload in items:
            if end > self.position:
                self.held.setdefault((end - count, end), payload)
        ready: list[T] = []
        inconsistent = False
        for start, end in sorted(self.held):
            if end <= self.position:
                del self.held[(start, end)]
            elif start == self.position:
                ready.append(self.held.pop((start, end)))
                self.position = end
            elif start < self.position:
                del self.held[(start, end)]
                inconsistent = True
            else:
                break
        return Sequenced(ready, bool(self.held) or inconsistent, inconsistent)

    def reset(self, position: int) -> None:
        """Move to ``position`` (after a difference) and forget what is held below it."""
        self.position = position
        self.held = {key: value for key, value in self.held.items() if key[1] > position}
