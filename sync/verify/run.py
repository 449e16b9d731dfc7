"""``verify``: read the server's chat list, the local state, then what the local state
makes worth asking, and compare every category."""

from __future__ import annotations

import asyncio

from postbox import PeerId, Postbox
from sync.protocol import GetState, State
from sync.verify import server_side
from sync.verify.compare_chats import (
    compare_chat_list,
    compare_drafts,
    compare_notification_settings,
    compare_read_state,
    server_chats,
    unloaded,
)
from sync.verify.compare_history import (
    compare_cursor,
    compare_messages,
    compare_pending,
    compare_tag_summaries,
    failed_random_id,
)
from sync.verify.compare_peers import (
    compare_contacts,
    compare_peers,
    compare_presences,
    contact_claims,
)
from sync.verify.compare_stickers import (
    compare_collections,
    read_local_collections,
    server_collections,
)
from sync.verify.local_side import LocalState, read_local
from sync.verify.report import Report
from sync.verify.server_side import Call

__all__ = ["verify"]

_NOTHING = server_side.ServerHistory({}, 0)


def _required_peers(local: LocalState) -> frozenset[PeerId]:
    """Peers a screen names: listed chats and the authors of stored messages."""
    required: set[PeerId] = set()
    for chat in local.chats.values():
        if chat.position is not None:
            required.add(chat.peer_id)
        required.update(PeerId(m.author_id) for m in chat.messages if m.author_id is not None)
    return frozenset(required)


async def verify(postbox: Postbox, call: Call, *, cursor: bool = True) -> Report:
    """Compare ``postbox`` with the server reached through ``call`` (a typed request).

    ``cursor=False`` leaves out the cursor category (for a client that is not at rest).
    """
    report = Report()
    call = server_side.waiting_out_floods(call)
    state: State = await call(GetState())
    server = await server_side.dialogs(call)
    report.chats = len(server.dialogs)
    peers = [d.peer for d in server.dialogs]
    local = await asyncio.wrap_future(postbox.transaction(lambda tx: read_local(tx, peers)))
    chats = server_chats(server)
    excused = unloaded(local, chats)
    compared = [
        chat
        for peer_id, chat in local.chats.items()
        if int(peer_id) not in excused or chat.messages or chat.holes
    ]
    tagged = [
        (int(chat.peer_id), kind)
        for chat in local.chats.values()
        if int(chat.peer_id) in chats
        for kind, _ in chat.tag_summaries
    ]
    stored_collections = await asyncio.wrap_future(postbox.transaction(read_local_collections))
    histories, (peer_records, presences), contacts, tag_counts, collections = await asyncio.gather(
        server_side.histories(
            call, {int(c.peer_id): c.known_ranges() for c in compared if int(c.peer_id) in chats}
        ),
        server_side.peers(call, (int(peer_id) for peer_id in local.peers)),
        server_side.contact_status(call, (int(peer_id) for peer_id in contact_claims(local))),
        server_side.tag_counts(call, tagged),
        server_collections(call),
    )
    for chat in compared:
        compare_messages(report, chat, histories.get(int(chat.peer_id), _NOTHING))
    random_ids = [failed_random_id(failure.request) for failure in local.failures.values()]
    asked = [random_id for random_id in random_ids if random_id is not None]
    arrived = await server_side.sent_messages(call, asked) if asked else {}
    compare_pending(report, local, arrived)
    compare_chat_list(report, local, server, chats, excused)
    for chat in local.chats.values():
        server_chat = chats.get(int(chat.peer_id))
        dialog = None if server_chat is None else server_chat.dialog
        compare_read_state(report, chat, dialog)
        if dialog is not None:
            compare_notification_settings(report, chat, dialog)
            compare_drafts(report, chat, dialog)
        compare_tag_summaries(report, chat, tag_counts)
    compare_peers(report, local, peer_records, _required_peers(local))
    compare_presences(report, local, presences)
    compare_contacts(report, local, contacts)
    compare_collections(report, stored_collections, collections)
    if cursor:
        compare_cursor(report, local, state, server, excused)
    return report
