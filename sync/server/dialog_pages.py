"""The chat list as the server pages it: dialogs with their unread counts and top messages.

``dialogs`` answers ``getDialogs`` under Telegram's rules: the first page (no offset)
starts with every pinned chat in pinning order; then, on every page, up to ``limit``
unpinned chats by (top date, top id, peer), newest first, older than the offset. An
unpinned chat with no message left is not listed (as in a client's chat list, which
orders chats by their last one). ``peer_dialogs`` answers ``getPeerDialogs``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sync.protocol import Dialog, Dialogs, ErrorCode, GetDialogs, PeerDialogs

if TYPE_CHECKING:
    from sync.server.store import ServerStore

__all__ = ["dialog", "dialogs", "peer_dialogs"]

_COLUMNS = "peer, top_id, top_date, read_inbox, read_outbox, pinned, folder, muted_until, pts"


def _dialog(store: ServerStore, row: Sequence[Any]) -> Dialog:
    peer, top_id, _date, read_inbox, read_outbox, pinned, folder, muted, pts = row
    unread = store.unread_count(peer, read_inbox)
    return Dialog(
        peer,
        top_id,
        read_inbox,
        read_outbox,
        unread,
        pinned is not None,
        folder,
        muted,
        pts,
        store.draft(peer),
    )


def dialog(store: ServerStore, peer_id: int) -> Dialog:
    row = store.database.one(f"SELECT {_COLUMNS} FROM dialogs WHERE peer = ?", (peer_id,))
    if row is None:
        from sync.server.store import StoreError  # the store imports this module

        raise StoreError(f"no chat with peer {peer_id}", ErrorCode.PEER_ID_INVALID)
    return _dialog(store, row)


def dialogs(store: ServerStore, request: GetDialogs) -> Dialogs:
    """A page of the chat list after the request's offset."""
    db = store.database
    where, args = "WHERE pinned IS NULL AND top_id > 0", []
    first_page = not (request.offset_date or request.offset_id or request.offset_peer)
    if not first_page:
        where += " AND (top_date, top_id, peer) < (?, ?, ?)"
        args = [request.offset_date, request.offset_id, request.offset_peer]
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM dialogs {where}"  # noqa: S608
        " ORDER BY top_date DESC, top_id DESC, peer DESC LIMIT ?",
        (*args, request.limit),
    )
    pinned_rows = []
    if first_page:
        pinned_rows = db.execute(
            f"SELECT {_COLUMNS} FROM dialogs WHERE pinned IS NOT NULL ORDER BY pinned"  # noqa: S608
        )
    found = tuple(_dialog(store, row) for row in (*pinned_rows, *rows))
    tops = [store.message(d.peer, d.top_message) for d in found if d.top_message]
    messages = tuple(m for m in tops if m is not None)
    (count,) = db.one("SELECT count(*) FROM dialogs WHERE pinned IS NOT NULL OR top_id > 0") or (0,)
    pinned = tuple(row[0] for row in pinned_rows)
    peers = store.peers_of(messages, (d.peer for d in found))
    return Dialogs(found, messages, peers, count, pinned, store.state())


def peer_dialogs(store: ServerStore, peer_ids: Iterable[int]) -> PeerDialogs:
    """The dialogs of ``peer_ids`` that exist, as of the current state."""
    found = []
    for peer_id in dict.fromkeys(peer_ids):
        row = store.database.one(f"SELECT {_COLUMNS} FROM dialogs WHERE peer = ?", (peer_id,))
        if row is not None:
            found.append(_dialog(store, row))
    tops = [store.message(d.peer, d.top_message) for d in found if d.top_message]
    messages = tuple(m for m in tops if m is not None)
    peers = store.peers_of(messages, (d.peer for d in found))
    return PeerDialogs(tuple(found), messages, peers, store.state())
