"""Compare a local Postbox with the server's truth, message by message.

A hole is the local database saying "I do not claim to know this range". So:

* every stored cloud message outside the holes must be on the server, equal to it;
* every server message outside the holes must be stored;
* no message may be stored twice, and no pending (local) message may be left over;
* at quiescence the cursor (pts, seq) and every channel's pts equal the server's.

Messages stored inside holes are cache the views do not present as complete; they are
counted (``unverified``) and checked only if the server still has them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from postbox import (
    MessageHistoryHoleSpace,
    MessageNamespace,
    PeerId,
    Postbox,
    StoreMessage,
    Transaction,
)
from sync.engine.convert import CLOUD, message_from_wire
from sync.protocol import GetDialogs, GetHistory, GetState, Message

__all__ = ["Divergence", "Report", "verify"]

_LOCAL = int(MessageNamespace.LOCAL)
_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


@dataclass(frozen=True, slots=True)
class Divergence:
    peer_id: int | None
    what: str

    def __str__(self) -> str:
        where = "account" if self.peer_id is None else f"peer {self.peer_id}"
        return f"{where}: {self.what}"


@dataclass(slots=True)
class Report:
    divergences: list[Divergence] = field(default_factory=list)
    chats: int = 0
    server_messages: int = 0
    local_messages: int = 0
    messages_in_holes: int = 0
    unverified: int = 0

    @property
    def ok(self) -> bool:
        return not self.divergences

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "divergences": len(self.divergences),
            "chats": self.chats,
            "server_messages": self.server_messages,
            "local_messages": self.local_messages,
            "server_messages_in_holes": self.messages_in_holes,
            "unverified_local_messages": self.unverified,
        }


def _comparable(message: StoreMessage | Any) -> tuple[Any, ...]:
    return (
        message.timestamp,
        message.flags,
        message.tags,
        None if message.author_id is None else int(message.author_id),
        message.text,
        tuple(message.media),
        message.reply_to_id,
        message.edit_timestamp,
    )


async def _server_history(call: Callable[[Any], Any], peer: int) -> dict[int, Message]:
    messages: dict[int, Message] = {}
    offset = 0
    while True:
        page = await call(GetHistory(peer, offset_id=offset, limit=100))
        for message in page.messages:
            messages[message.id] = message
        if len(page.messages) < 100:
            return messages
        offset = page.messages[-1].id


async def _server_dialogs(call: Callable[[Any], Any]) -> list[Any]:
    dialogs: list[Any] = []
    first = await call(GetDialogs(limit=100))
    page = first
    dialogs.extend(first.dialogs)
    while len(page.dialogs) - len(page.pinned) == 100:
        last = page.dialogs[-1]
        top = next(m for m in page.messages if (m.peer, m.id) == (last.peer, last.top_message))
        page = await call(
            GetDialogs(offset_date=top.date, offset_id=top.id, offset_peer=last.peer, limit=100)
        )
        dialogs.extend(page.dialogs)
    return dialogs


def _local(tx: Transaction, peers: list[PeerId]) -> dict[PeerId, tuple[list[Any], list[Any], Any]]:
    result = {}
    for peer_id in peers:
        messages = tx.get_messages(peer_id, CLOUD)
        holes = tx.get_holes(peer_id, CLOUD, _EVERYWHERE)
        channel = tx.get_peer_chat_state(peer_id)
        result[peer_id] = (messages, holes, channel)
    return result


async def verify(postbox: Postbox, call: Callable[[Any], Any], *, cursor: bool = True) -> Report:
    """Compare ``postbox`` with the server reached through ``call`` (a typed request)."""
    report = Report()
    state = await call(GetState())
    dialogs = await _server_dialogs(call)
    report.chats = len(dialogs)

    def local_overview(tx: Transaction) -> tuple[Any, list[PeerId], int]:
        peers = {PeerId(d.peer) for d in dialogs}
        peers.update(tx.get_all_read_states())
        pending = sum(len(tx.get_messages(peer_id, _LOCAL)) for peer_id in peers)
        return tx.get_state(), sorted(peers), pending

    stored_cursor, peers, pending = await asyncio.wrap_future(postbox.transaction(local_overview))
    add = report.divergences.append
    if pending:
        add(Divergence(None, f"{pending} outgoing messages are still pending"))
    if cursor:
        if stored_cursor is None:
            add(Divergence(None, "no stored cursor"))
        elif (stored_cursor.pts, stored_cursor.seq) != (state.pts, state.seq):
            add(
                Divergence(
                    None,
                    f"cursor pts/seq {stored_cursor.pts}/{stored_cursor.seq}"
                    f" != server {state.pts}/{state.seq}",
                )
            )
    local = await asyncio.wrap_future(postbox.transaction(lambda tx: _local(tx, peers)))
    channel_pts = {d.peer: d.pts for d in dialogs if d.pts is not None}
    for peer_id in peers:
        server = await _server_history(call, int(peer_id))
        messages, holes, channel = local[peer_id]
        report.server_messages += len(server)
        report.local_messages += len(messages)

        def in_hole(id_: int, holes: list[Any] = holes) -> bool:
            return any(hole.lower <= id_ <= hole.upper for hole in holes)

        seen: set[int] = set()
        for message in messages:
            id_ = message.id.id
            if id_ in seen:
                add(Divergence(int(peer_id), f"message {id_} is stored twice"))
            seen.add(id_)
            expected = server.get(id_)
            hidden = in_hole(id_)
            if hidden:
                report.unverified += 1
            if expected is None:
                if not hidden:
                    add(Divergence(int(peer_id), f"message {id_} is not on the server"))
                continue
            if _comparable(message) != _comparable(message_from_wire(expected)) and not hidden:
                add(Divergence(int(peer_id), f"message {id_} differs from the server's"))
        for id_ in server:
            if in_hole(id_):
                report.messages_in_holes += 1
            elif id_ not in seen:
                add(Divergence(int(peer_id), f"message {id_} is missing outside the holes"))
        if cursor and int(peer_id) in channel_pts:
            local_pts = channel.pts if channel is not None else None
            if local_pts != channel_pts[int(peer_id)]:
                add(
                    Divergence(
                        int(peer_id),
                        f"channel pts {local_pts} != server {channel_pts[int(peer_id)]}",
                    )
                )
    return report
