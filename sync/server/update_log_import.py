"""Replaying a dataset's recent past into the server's update logs.

A dataset with ``log_from`` describes an account whose last days are history the
server must be able to replay: every message sent, edited or deleted from ``log_from``
on becomes an update with its own pts (the account's for private chats and groups, the
channel's for channels), in date order, exactly as if it had happened live; a read
mark that moved past the chat's top at ``log_from`` becomes a read made after them.
The state before the first of them is pts 1 for the account and for every channel: a
client database seeded at ``log_from`` stores that cursor and catches up by
getDifference.
Logs keep the store's ``log_window`` newest points, as live ones do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataset import DemoDataset
from sync.protocol import (
    PeerKind,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewMessage,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
    peer_kind,
)
from sync.server.schema import MESSAGE_COLUMNS, message_from_row, pack

if TYPE_CHECKING:
    from sync.server.store import ServerStore

__all__ = ["import_update_log"]

_NEW, _EDIT, _DELETE, _READ_INBOX, _READ_OUTBOX = 0, 1, 2, 3, 4


def import_update_log(store: ServerStore, dataset: DemoDataset, shift: int) -> None:
    """Append the dataset's events since ``log_from`` to the (empty) logs; the caller
    holds the transaction and has imported the messages and dialogs."""
    if dataset.log_from is None:
        return
    since = dataset.log_from + shift
    events: list[tuple[int, int, int, int, Any]] = []
    for row in store._execute(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE date >= ?", (since,)):
        message = message_from_row(row)
        events.append((message.date, _NEW, message.peer, message.id, message))
    for row in store._execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE edit_date >= ?", (since,)
    ):
        message = message_from_row(row)
        assert message.edit_date is not None
        events.append((message.edit_date, _EDIT, message.peer, message.id, message))
    for peer_id, message_id, when in dataset.deletions:
        events.append((when + shift, _DELETE, int(peer_id), message_id, None))
    events += _reads_since(store, since, max((event[0] for event in events), default=since))
    events.sort(key=lambda event: event[:4])
    account_pts = 1
    channel_pts: dict[int, tuple[int, int]] = {}
    account_log: list[tuple[int, int, int, bytes]] = []
    channel_log: list[tuple[int, int, int, int, bytes]] = []
    for date, kind, peer, message_id, message in events:
        if peer_kind(peer) is PeerKind.CHANNEL:
            pts = channel_pts.get(peer, (1, 0))[0] + 1
            channel_pts[peer] = (pts, date)
            update: Any
            if kind == _NEW:
                update = UpdateNewChannelMessage(message, pts, 1)
            elif kind == _EDIT:
                update = UpdateEditChannelMessage(message, pts, 1)
            elif kind == _READ_INBOX:
                update = UpdateReadChannelInbox(peer, message_id, message, pts, 1)
            else:
                update = UpdateDeleteChannelMessages(peer, (message_id,), pts, 1)
            channel_log.append((peer, pts, 1, date, pack(update.to_wire())))
        else:
            account_pts += 1
            pts = account_pts
            if kind == _NEW:
                update = UpdateNewMessage(message, pts, 1)
            elif kind == _EDIT:
                update = UpdateEditMessage(message, pts, 1)
            elif kind == _READ_INBOX:
                update = UpdateReadHistoryInbox(peer, message_id, message, pts, 1)
            elif kind == _READ_OUTBOX:
                update = UpdateReadHistoryOutbox(peer, message_id, pts, 1)
            else:
                update = UpdateDeleteMessages(peer, (message_id,), pts, 1)
            account_log.append((pts, 1, date, pack(update.to_wire())))
    window = store.log_window
    start = max(1, account_pts - window)
    store._db.executemany(
        "INSERT INTO update_log VALUES (?, ?, ?, ?)", [e for e in account_log if e[0] > start]
    )
    store._set_meta("pts", account_pts)
    store._set_meta("log_start", start)
    store._db.executemany(
        "INSERT INTO channel_log VALUES (?, ?, ?, ?, ?)",
        [e for e in channel_log if e[1] > channel_pts[e[0]][0] - window],
    )
    for channel, (pts, date) in channel_pts.items():
        store._execute(
            "UPDATE dialogs SET pts = ?, log_start = ?, event_date = ? WHERE peer = ?",
            (pts, max(1, pts - window), date, channel),
        )


def _reads_since(store: ServerStore, since: int, last: int) -> list[tuple[int, int, int, int, Any]]:
    """Read marks that moved past where they could be at ``since``, as reads made at
    ``last`` (after every other event): a client seeded at ``since`` has each mark at
    most at the chat's top then, and learns the rest from these updates."""
    reads: list[tuple[int, int, int, int, Any]] = []
    for peer, read_inbox, read_outbox in store._execute(
        "SELECT peer, read_inbox, read_outbox FROM dialogs ORDER BY peer"
    ):
        (top_then,) = store._one(
            "SELECT coalesce(max(id), 0) FROM messages WHERE peer = ? AND date < ?",
            (peer, since),
        ) or (0,)
        if read_inbox > top_then:
            (unread,) = store._one(
                "SELECT count(*) FROM messages WHERE peer = ? AND id > ? AND out = 0",
                (peer, read_inbox),
            ) or (0,)
            reads.append((last, _READ_INBOX, peer, read_inbox, unread))
        if read_outbox > top_then and peer_kind(peer) is not PeerKind.CHANNEL:
            reads.append((last, _READ_OUTBOX, peer, read_outbox, None))
    return reads
