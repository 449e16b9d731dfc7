"""The chat list: inclusion rules, pinned chats first, then the newest top message."""

from __future__ import annotations

import pytest

from postbox import (
    ChangeRecord,
    ChatListEntryKey,
    ChatListHole,
    ChatListInclusion,
    ChatListOperationKind,
    InvalidArgumentError,
    MessageId,
    MessageIndex,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.chat_list import ChatListEntryType

ROOT, ARCHIVE = PeerGroupId.ROOT, PeerGroupId.ARCHIVE
peers = [PeerId.make(PeerNamespace.USER, i) for i in range(1, 7)]


def chats(entries: list[ChatListEntryKey]) -> list[PeerId]:
    return [e.peer_id for e in entries if e.type is ChatListEntryType.MESSAGE]


def list_peers(postbox: Postbox, group: int = ROOT) -> list[PeerId]:
    return chats(postbox.run(lambda tx: tx.get_chat_list(group)))


@pytest.fixture
def listed(postbox: Postbox) -> Postbox:
    """Six chats whose top messages are at timestamps 100, 200, ... 600."""

    def fill(tx: Transaction) -> None:
        for n, peer in enumerate(peers, start=1):
            tx.update_chat_list_inclusion(peer, ChatListInclusion())
            tx.add_messages([StoreMessage(peer, 0, n * 10, n * 100)])

    postbox.run(fill)
    return postbox


def test_newest_top_message_first(listed: Postbox) -> None:
    assert list_peers(listed) == list(reversed(peers))


def test_a_new_message_moves_a_chat_to_the_top(listed: Postbox) -> None:
    records: list[ChangeRecord] = []
    listed.add_commit_listener(records.append)
    listed.run(lambda tx: tx.add_messages([StoreMessage(peers[0], 0, 99, 1000)]))
    assert list_peers(listed)[0] == peers[0]
    kinds = [op.kind for op in records[0].chat_list_operations[ROOT]]
    assert kinds == [ChatListOperationKind.REMOVE_ENTRY, ChatListOperationKind.INSERT_ENTRY]
    position = records[0].updated_chat_list_positions[peers[0]]
    assert position is not None
    group, index = position
    assert index.message_index == MessageIndex(MessageId(peers[0], 0, 99), 1000)


def test_deleting_the_top_message_moves_a_chat_down(listed: Postbox) -> None:
    listed.run(lambda tx: tx.add_messages([StoreMessage(peers[5], 0, 5, 50)]))
    listed.run(lambda tx: tx.delete_messages([MessageId(peers[5], 0, 60)]))
    assert list_peers(listed)[-1] == peers[5]


def test_pinned_chats_come_first_in_pinning_order(listed: Postbox) -> None:
    listed.run(lambda tx: tx.set_pinned_peer_ids(ROOT, [peers[1], peers[0]]))
    assert list_peers(listed) == [peers[1], peers[0], peers[5], peers[4], peers[3], peers[2]]
    assert listed.run(lambda tx: tx.get_pinned_peer_ids(ROOT)) == [peers[1], peers[0]]
    # A new message does not lift an unpinned chat above pinned ones.
    listed.run(lambda tx: tx.add_messages([StoreMessage(peers[2], 0, 99, 5000)]))
    assert list_peers(listed)[:3] == [peers[1], peers[0], peers[2]]
    # Re-pinning replaces the set and the order.
    listed.run(lambda tx: tx.set_pinned_peer_ids(ROOT, [peers[0]]))
    assert list_peers(listed)[:2] == [peers[0], peers[2]]
    with pytest.raises(InvalidArgumentError):
        listed.run(lambda tx: tx.set_pinned_peer_ids(ROOT, [peers[0], peers[0]]))


def test_inclusion_rules(postbox: Postbox) -> None:
    empty, pinned, dated, excluded = peers[:4]

    def fill(tx: Transaction) -> None:
        tx.update_chat_list_inclusion(empty, ChatListInclusion())
        tx.update_chat_list_inclusion(pinned, ChatListInclusion(pinning_index=0))
        tx.update_chat_list_inclusion(dated, ChatListInclusion(min_timestamp=700))
        tx.add_messages([StoreMessage(excluded, 0, 1, 900)])

    postbox.run(fill)
    # No messages and not pinned: not listed. Not included at all: not listed.
    assert list_peers(postbox) == [pinned, dated]
    position = postbox.run(lambda tx: tx.get_chat_list_position(pinned))
    assert position is not None and position[1].message_index.timestamp == 0
    assert postbox.run(lambda tx: tx.get_chat_list_position(excluded)) is None
    # Messages list a peer that is included.
    postbox.run(lambda tx: tx.add_messages([StoreMessage(empty, 0, 1, 800)]))
    assert list_peers(postbox) == [pinned, empty, dated]
    postbox.run(lambda tx: tx.update_chat_list_inclusion(empty, None))
    assert list_peers(postbox) == [pinned, dated]


def test_archive_is_a_separate_group(listed: Postbox) -> None:
    listed.run(lambda tx: tx.update_chat_list_inclusion(peers[5], ChatListInclusion(ARCHIVE)))
    assert list_peers(listed, ARCHIVE) == [peers[5]]
    assert peers[5] not in list_peers(listed)


def test_local_messages_count_for_the_top_message(listed: Postbox) -> None:
    listed.run(lambda tx: tx.add_messages([StoreMessage(peers[0], 1, None, 9999, flags=2)]))
    assert list_peers(listed)[0] == peers[0]


def test_windows_below_an_index(listed: Postbox) -> None:
    entries = listed.run(lambda tx: tx.get_chat_list(ROOT, count=3))
    assert [e.type for e in entries] == [ChatListEntryType.HOLE] + [ChatListEntryType.MESSAGE] * 2
    below = listed.run(lambda tx: tx.get_chat_list(ROOT, below=entries[-1].index, count=10))
    assert chats(below) == list(reversed(peers))[2:]


def test_chat_list_holes(postbox: Postbox) -> None:
    # A new database starts with one hole at the top of each group.
    assert postbox.run(lambda tx: tx.get_chat_list_holes(ROOT)) == [ChatListHole.top()]
    assert postbox.run(lambda tx: tx.get_chat_list_holes(ARCHIVE)) == [ChatListHole.top()]
    lower = ChatListHole(MessageIndex(MessageId(peers[0], 0, 5), 300))
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)

    def page(tx: Transaction) -> None:
        tx.remove_chat_list_hole(ROOT, ChatListHole.top())
        tx.add_chat_list_hole(ROOT, lower)
        tx.add_chat_list_hole(ROOT, lower)

    postbox.run(page)
    assert postbox.run(lambda tx: tx.get_chat_list_holes(ROOT)) == [lower]
    kinds = [op.kind for op in records[0].chat_list_operations[ROOT]]
    assert kinds == [ChatListOperationKind.REMOVE_HOLE, ChatListOperationKind.INSERT_HOLE]


def test_positions_are_consistent_inside_one_transaction(postbox: Postbox) -> None:
    def moves(tx: Transaction) -> list[PeerId]:
        tx.update_chat_list_inclusion(peers[0], ChatListInclusion())
        tx.update_chat_list_inclusion(peers[1], ChatListInclusion())
        tx.add_messages([StoreMessage(peers[0], 0, 1, 100), StoreMessage(peers[1], 0, 2, 200)])
        first = chats(tx.get_chat_list())
        tx.add_messages([StoreMessage(peers[0], 0, 3, 300)])
        return first + chats(tx.get_chat_list())

    assert postbox.run(moves) == [peers[1], peers[0], peers[0], peers[1]]
    assert list_peers(postbox) == [peers[0], peers[1]]


def test_pins_inside_one_transaction_see_each_other(listed: Postbox) -> None:
    def pin_twice(tx: Transaction) -> list[PeerId]:
        tx.set_pinned_peer_ids(ROOT, [peers[0]])
        seen = tx.get_pinned_peer_ids(ROOT)
        tx.set_pinned_peer_ids(ROOT, [peers[1]])
        return seen

    assert listed.run(pin_twice) == [peers[0]]
    assert listed.run(lambda tx: tx.get_pinned_peer_ids(ROOT)) == [peers[1]]
    assert list_peers(listed)[:2] == [peers[1], peers[5]]


def test_a_change_read_and_undone_leaves_the_chat_where_it_was(listed: Postbox) -> None:
    records: list[ChangeRecord] = []
    listed.add_commit_listener(records.append)

    def change_read_undo(tx: Transaction) -> None:
        tx.update_chat_list_inclusion(peers[0], ChatListInclusion(pinning_index=0))
        assert chats(tx.get_chat_list())[0] == peers[0]
        tx.update_chat_list_inclusion(peers[0], ChatListInclusion())

    listed.run(change_read_undo)
    assert list_peers(listed) == list(reversed(peers))
    assert listed.run(lambda tx: tx.get_pinned_peer_ids(ROOT)) == []
    assert records == []  # nothing changed in the end
