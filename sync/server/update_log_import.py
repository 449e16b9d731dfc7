"""Replaying a dataset's recent past into the server's update logs.

A dataset with ``log_from`` describes an account whose last days are history the
server must be able to replay: every message sent, edited or deleted from ``log_from``
on becomes an update with its own pts (the account's for private chats and groups, the
channel's for channels), in date order, exactly as if it had happened live; a read
mark that moved past the chat's top at ``log_from`` becomes a read made after them.
The state before the first of them is pts 1 for the account and for every channel: a
client database seeded at ``log_from`` stores that cursor and catches up by
getDifference.
Logs keep the store's ``log_window`` newest points, as live ones do
(``UpdateLogs.load``).
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
    for message in store.messages_since(since):
        events.append((message.date, _NEW, message.peer, message.id, message))
    for message in store.messages_edited_since(since):
        assert message.edit_date is not None
        events.append((message.edit_date, _EDIT, message.peer, message.id, message))
    for peer_id, message_id, when in dataset.deletions:
        events.append((when + shift, _DELETE, int(peer_id), message_id, None))
    events += _reads_since(store, since, max((event[0] for event in events), default=since))
    events.sort(key=lambda event: event[:4])
    account_pts = 1
    channel_pts: dict[int, int] = {}
    account_log: list[tuple[Any, int]] = []
    channel_log: list[tuple[int, Any, int]] = []
    for date, kind, peer, message_id, message in events:
        if peer_kind(peer) is PeerKind.CHANNEL:
            pts = channel_pts[peer] = channel_pts.get(peer, 1) + 1
            update: Any
            if kind == _NEW:
                update = UpdateNewChannelMessage(message, pts, 1)
            elif kind == _EDIT:
                update = UpdateEditChannelMessage(message, pts, 1)
            elif kind == _READ_INBOX:
                update = UpdateReadChannelInbox(peer, message_id, message, pts, 1)
            else:
                update = UpdateDeleteChannelMessages(peer, (message_id,), pts, 1)
            channel_log.append((peer, update, date))
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
            account_log.append((update, date))
    store.logs.load(account_log, channel_log)


def _reads_since(store: ServerStore, since: int, last: int) -> list[tuple[int, int, int, int, Any]]:
    """Read marks that moved past where they could be at ``since``, as reads made at
    ``last`` (after every other event): a client seeded at ``since`` has each mark at
    most at the chat's top then, and learns the rest from these updates."""
    reads: list[tuple[int, int, int, int, Any]] = []
    for peer, read_inbox, read_outbox in store.all_read_marks():
        top_then = store.top_id_before(peer, since)
        if read_inbox > top_then:
            reads.append(
                (last, _READ_INBOX, peer, read_inbox, store.unread_count(peer, read_inbox))
            )
        if read_outbox > top_then and peer_kind(peer) is not PeerKind.CHANNEL:
            reads.append((last, _READ_OUTBOX, peer, read_outbox, None))
    return reads
