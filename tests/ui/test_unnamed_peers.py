"""A peer whose name has not arrived yet (a min peer being fetched) is shown by its kind,
and its name replaces that live once it is stored. Presenters alone, without Qt."""

from __future__ import annotations

from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    ChatListViewKey,
    ForwardInfo,
    HistoryAnchor,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from tests.postbox.live_views import Recorder
from ui.rows import MessageRow, chat_list_rows, history_rows

NOW = 1_800_000_000
GROUP = PeerId.make(PeerNamespace.GROUP, 7)
BOB = PeerId.make(PeerNamespace.USER, 9)
NEWS = PeerId.make(PeerNamespace.CHANNEL, 3)


def _seed(tx: Transaction) -> None:
    tx.update_chat_list_inclusion(GROUP, ChatListInclusion())
    tx.remove_hole(GROUP, 0, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)
    forward = ForwardInfo(NEWS, NOW - 500, NEWS, 4)
    tx.add_messages(
        [
            StoreMessage(GROUP, 0, 1, NOW - 60, flags=1, author_id=BOB, text="hi"),
            StoreMessage(GROUP, 0, 2, NOW - 30, flags=1, author_id=BOB, forward_info=forward),
        ]
    )


def test_a_peer_not_stored_yet_shows_its_kind_until_its_name_arrives(tmp_path) -> None:
    postbox = Postbox(tmp_path / "client.db", inline=True)
    postbox.run(_seed)
    chats = ChatListViewKey(count=10)
    history = MessageHistoryViewKey(GROUP, HistoryAnchor.upper_bound(), 10)
    recorder = Recorder()
    subscription = postbox.combined_view([chats, history], callback=recorder)
    try:

        def shown() -> tuple[str, str, list[tuple[str, str | None]]]:
            view = recorder.last[history]
            names = {int(peer_id): peer.name for peer_id, peer in view.peers.items()}
            rows = history_rows(view, NOW, authors=names, peer_names=names)
            messages = [(r.author, r.forwarded_from) for r in rows if isinstance(r, MessageRow)]
            (chat,) = [r for r in chat_list_rows(recorder.last[chats], NOW) if r.peer_id == GROUP]
            return chat.title, chat.initials, messages

        subscription.ready.result()
        assert shown() == (
            "Loading group…",
            "…",
            [("Loading user…", None), ("", "Loading channel…")],
        )
        before = recorder.count
        postbox.run(
            lambda tx: tx.update_peers([Peer(GROUP, "Team"), Peer(BOB, "Bob"), Peer(NEWS, "News")])
        )
        assert recorder.count > before  # replaced live, by the commit that stored them
        assert shown() == ("Team", "T", [("Bob", None), ("", "News")])
    finally:
        subscription.dispose()
        postbox.close()
