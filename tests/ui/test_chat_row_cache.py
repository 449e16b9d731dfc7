"""Chat rows are built again only for the entries a snapshot changed. Pure Python."""

from __future__ import annotations

import threading

from postbox import (
    ChatListInclusion,
    ChatListViewKey,
    MessageFlags,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
)
from ui.rows import ChatRowCache, chat_list_rows

NOW = 1_800_000_000
PEERS = [PeerId.make(PeerNamespace.USER, 500 + i) for i in range(6)]
KEY = ChatListViewKey(PeerGroupId.ROOT, 20)


def message(peer: PeerId, id_: int) -> StoreMessage:
    return StoreMessage(peer, 0, id_, NOW - 1_000 + id_, flags=int(MessageFlags.INCOMING))


def test_unchanged_chats_keep_their_rows_and_every_row_is_right() -> None:
    views = []
    arrived = threading.Condition()
    with Postbox(None) as postbox:

        def seed(tx) -> None:
            for number, peer in enumerate(PEERS):
                tx.update_peers([Peer(peer, f"Person {number}")])
                tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))
                tx.add_messages([message(peer, 10 + number)])
            for hole in tx.get_chat_list_holes(PeerGroupId.ROOT):
                tx.remove_chat_list_hole(PeerGroupId.ROOT, hole)

        postbox.run(seed)

        def keep(combined) -> None:
            with arrived:
                views.append(combined[KEY])
                arrived.notify_all()

        subscription = postbox.combined_view([KEY], callback=keep)
        subscription.ready.result(10)
        postbox.run(lambda tx: tx.add_messages([message(PEERS[2], 100)]))
        with arrived:
            assert arrived.wait_for(lambda: len(views) == 2, timeout=10)
        subscription.dispose()
    cache = ChatRowCache()
    first = cache.rows(views[0], NOW)
    second = cache.rows(views[1], NOW)
    assert first == chat_list_rows(views[0], NOW)
    assert second == chat_list_rows(views[1], NOW)
    assert second[0].peer_id == int(PEERS[2])  # moved to the top
    reused = {row.peer_id for row in second if any(row is old for old in first)}
    assert int(PEERS[2]) not in reused
    assert len(reused) == len(PEERS) - 1
    # A minute later every row is built again (times, mutes and presences follow the clock).
    later = cache.rows(views[1], NOW + 60)
    assert later == chat_list_rows(views[1], NOW + 60)
    assert not any(row is old for row in later for old in second)
