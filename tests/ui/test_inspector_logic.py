"""What the inspector says, without Qt: commits described, hole maps, replay reports."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from client.hole_map import MAX_ID, HoleSegment, SegmentKind, hole_map, read_hole_map
from postbox import (
    ChangeRecord,
    ChatListInclusion,
    ChatListViewKey,
    ClosedRange,
    HistoryAnchor,
    HoleKey,
    HoleOperation,
    HoleOperationKind,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageId,
    MessageIndex,
    OperationLogViewKey,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerPresence,
    PeerViewKey,
    Postbox,
    PresenceStatus,
    StateCursor,
    StoreMessage,
    UpdateKind,
)
from ui.transactions import (
    CommitEntry,
    TransactionLog,
    commit_detail,
    describe_commit,
    describe_key,
    describe_keys,
    describe_topic,
    describe_window,
    unknown_peer_name,
)

ALICE = PeerId.make(PeerNamespace.USER, 7)
BOB = PeerId.make(PeerNamespace.USER, 8)


def names(peer_id: PeerId) -> str:
    return {ALICE: "Alice", BOB: "Bob"}.get(peer_id, "someone")


def test_a_replay_listener_hears_each_commit_with_the_views_it_re_emitted() -> None:
    heard = []
    done = threading.Event()
    history = MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 10)
    with Postbox(None) as postbox:

        def known_chat(tx) -> None:
            tx.update_peers([Peer(ALICE, "Alice")])
            tx.update_chat_list_inclusion(ALICE, ChatListInclusion(PeerGroupId.ROOT, None, None))
            tx.remove_hole(ALICE, 0, MessageHistoryHoleSpace.everywhere(), 1, MAX_ID)
            tx.add_messages([StoreMessage(ALICE, 0, 4, 900, text="earlier")])

        postbox.run(known_chat)
        subscription = postbox.combined_view([history, ChatListViewKey()])
        subscription.ready.result(10)

        def listen(report) -> None:
            heard.append(describe_commit(report, names))
            done.set()

        remove = postbox.add_replay_listener(listen)

        def write(tx) -> None:
            tx.update_peers([Peer(ALICE, "Alice Baker")])
            tx.add_messages([StoreMessage(ALICE, 0, 5, 1_000, text="hi")])
            tx.set_state(StateCursor(3, 0, 1, 1_000))

        postbox.run(write)
        assert done.wait(10)
        remove()
        postbox.run(
            lambda tx: tx.update_peer_presences({ALICE: PeerPresence(PresenceStatus.ONLINE, 9)})
        )
        subscription.dispose()
    assert len(heard) == 1  # removed listeners hear nothing more
    entry = heard[0]
    assert "messages: 1 stored in Alice" in entry.changes
    assert "cursor: pts 3, qts 0, seq 1" in entry.changes
    assert "peers: Alice" in entry.changes
    assert ("history of Alice", "Generic") in entry.views
    assert any(view.startswith("chat list") for view, _ in entry.views)


def test_each_view_re_emitted_says_why_and_the_silent_ones_are_counted() -> None:
    """A new message in Alice's chat wakes what watches Alice's messages and the chat list;
    her profile's view, which watches her place in the chat list, is consulted and stays
    silent; Bob's history is never consulted."""
    bob = PeerId.make(PeerNamespace.USER, 8)
    heard = []
    done = threading.Event()
    keys = [
        MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 10),
        PeerViewKey(ALICE),
        MessageHistoryViewKey(bob, HistoryAnchor.upper_bound(), 10),
        ChatListViewKey(),
    ]
    with Postbox(None) as postbox:

        def known_chats(tx) -> None:
            tx.update_peers([Peer(ALICE, "Alice"), Peer(bob, "Bob")])
            for peer in (ALICE, bob):
                tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))
                tx.remove_hole(peer, 0, MessageHistoryHoleSpace.everywhere(), 1, MAX_ID)
                tx.add_messages([StoreMessage(peer, 0, 4, 900, text="earlier")])

        postbox.run(known_chats)
        subscription = postbox.combined_view(keys)
        subscription.ready.result(10)

        def listen(report) -> None:
            heard.append(describe_commit(report, names_with_bob))
            done.set()

        def names_with_bob(peer_id: PeerId) -> str:
            return "Bob" if peer_id == bob else names(peer_id)

        remove = postbox.add_replay_listener(listen)
        postbox.run(lambda tx: tx.add_messages([StoreMessage(ALICE, 0, 5, 1_000, text="hi")]))
        assert done.wait(10)
        remove()
        subscription.dispose()
    (entry,) = heard
    why = dict(zip(entry.views, entry.reasons, strict=True))
    assert why[("history of Alice", "Generic")].startswith("1 new message in Alice")
    assert entry.silent == (("peer Alice", "Alice moved in the chat list"),)
    assert not any("Bob" in view for view, _ in [*entry.views, *entry.silent])
    assert entry.open_views == 4
    assert entry.consulted == len(entry.views) + 1
    assert entry.headline == f"{len(entry.views)} of 4 re-emitted · 1 silent"


def test_a_topic_reads_as_the_part_of_the_commit_it_stands_for() -> None:
    record = ChangeRecord(
        7,
        hole_operations={
            HoleKey(ALICE, 0, MessageHistoryHoleSpace.everywhere()): (
                HoleOperation(HoleOperationKind.REMOVE, ClosedRange(1, 4_441)),
            )
        },
        updated_read_states={ALICE: None},
    )
    assert describe_topic(("messages", ALICE), record, names) == "hole 1-4,441 removed in Alice"
    assert describe_topic(("read_state", ALICE), record, names) == "read state of Alice"
    assert describe_topic(("holes_shown",), record, names) == "the holes on screen moved"


def test_view_keys_read_as_words() -> None:
    assert describe_key(MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 5), names) == (
        "history of Alice"
    )
    pending = MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 5, namespace=1)
    assert describe_key(pending, names) == "pending of Alice"
    assert describe_key(ChatListViewKey(count=40)) == "chat list (40)"


def test_a_peer_with_no_name_here_is_named_by_its_kind() -> None:
    assert unknown_peer_name(PeerId.make(PeerNamespace.USER, 197456)) == "user 197456"
    assert unknown_peer_name(PeerId.make(PeerNamespace.CHANNEL, 3001)) == "channel 3001"
    assert describe_key(PeerViewKey(PeerId.make(PeerNamespace.GROUP, 12))) == "peer group 12"


def test_two_windows_of_one_chat_say_where_each_sits() -> None:
    newest = MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 40)
    index = MessageIndex(MessageId(ALICE, 0, 1234), 1_700_000_000)
    middle = MessageHistoryViewKey(ALICE, HistoryAnchor.at_index(index), 40)
    wider = MessageHistoryViewKey(ALICE, HistoryAnchor.upper_bound(), 80)
    bob = MessageHistoryViewKey(BOB, HistoryAnchor.upper_bound(), 40)
    described = describe_keys([newest, middle, bob], names)
    assert described == {
        newest: "history of Alice (at the newest)",
        middle: "history of Alice (around message 1,234)",
        bob: "history of Bob",  # alone: as short as before
    }
    assert describe_keys([newest, wider], names) == {
        newest: "history of Alice (at the newest, 40 each side)",
        wider: "history of Alice (at the newest, 80 each side)",
    }
    unread = MessageHistoryViewKey(ALICE, HistoryAnchor.first_unread(), 40)
    oldest = MessageHistoryViewKey(ALICE, HistoryAnchor.lower_bound(), 40)
    assert describe_window(unread) == "at the first unread"
    assert describe_window(oldest) == "at the oldest"


def test_the_log_keeps_the_newest_entries_first() -> None:
    log = TransactionLog(limit=3)
    from ui.transactions import CommitEntry

    for version in range(5):
        log.add(CommitEntry(version, 0.0, (), ()))
    assert [entry.version for entry in log] == [4, 3, 2]
    assert log.total == 5 and len(log) == 3


def test_a_hole_map_splits_the_id_space_newest_first() -> None:
    stored = {3, 4, 50, 51, 52}
    segments = hole_map(
        [ClosedRange(10, 40), ClosedRange(60, MAX_ID)],
        lambda lower, upper: sum(lower <= i <= upper for i in stored),
        fetching=[ClosedRange(35, 39)],
    )
    assert segments == [
        HoleSegment(60, MAX_ID, SegmentKind.HOLE),
        HoleSegment(41, 59, SegmentKind.STORED, 3),
        HoleSegment(10, 40, SegmentKind.FETCHING),
        HoleSegment(1, 9, SegmentKind.STORED, 2),
    ]
    assert segments[0].label() == "60–∞: hole"
    assert segments[1].label() == "41–59: 3 stored"


@given(
    st.lists(st.tuples(st.integers(1, 500), st.integers(0, 60)), max_size=8).map(
        lambda pairs: sorted(pairs)
    )
)
def test_a_hole_map_covers_every_id_once(pairs) -> None:
    holes, next_free = [], 1
    for start, length in pairs:
        lower = max(start, next_free)
        holes.append(ClosedRange(lower, lower + length))
        next_free = lower + length + 2
    segments = hole_map(holes, lambda _lower, _upper: 0)
    covered = sorted((s.lower, s.upper) for s in segments)
    assert covered[0][0] == 1 and covered[-1][1] == MAX_ID
    for (_, upper), (lower, _) in zip(covered, covered[1:], strict=False):
        assert lower == upper + 1
    assert sum(s.kind is SegmentKind.HOLE for s in segments) == len(holes)


def test_the_hole_map_of_a_stored_chat() -> None:
    with Postbox(None) as postbox:

        def write(tx) -> None:
            tx.add_messages([StoreMessage(ALICE, 0, i, 1_000 + i) for i in (20, 21, 22)])
            tx.remove_hole(ALICE, 0, MessageHistoryHoleSpace.everywhere(), 20, MAX_ID)

        postbox.run(write)
        segments = postbox.run(lambda tx: read_hole_map(tx, ALICE))
    assert segments == [
        HoleSegment(20, MAX_ID, SegmentKind.STORED, 3),
        HoleSegment(1, 19, SegmentKind.HOLE),
    ]


def test_update_kinds_are_named_as_in_postbox() -> None:
    from postbox import ViewUpdateType
    from ui.transactions import describe_update

    assert describe_update(ViewUpdateType.FILL_HOLE) == "FillHole"
    assert describe_update(ViewUpdateType(UpdateKind.INITIAL_UNREAD)) == "InitialUnread"


def test_an_operation_log_is_named_by_what_it_holds() -> None:
    record = ChangeRecord(8)
    assert describe_topic(("operation_log", 2), record, names) == (
        "reads to tell the server (tag 2): 0 entries"
    )
    assert describe_key(OperationLogViewKey(1)) == "messages to send (tag 1)"
    assert describe_key(OperationLogViewKey(99)) == "operation log (tag 99)"


def test_a_commit_told_whole_lists_its_record_views_and_silence() -> None:
    entry = CommitEntry(
        version=42,
        at=0.0,
        changes=("messages: 1 stored in Ana", "cursor: pts 9, qts 0, seq 1"),
        views=(("chat list (100)", "Generic"), ("history of Ana", "Generic")),
        reasons=("1 new message in Ana", "1 new message in Ana"),
        silent=(("peer Ana", "presence of Ana"),),
        open_views=14,
    )
    text = commit_detail(entry)
    lines = text.splitlines()
    assert lines[0].startswith("Commit #42 at ")
    assert lines[1] == "14 views open: 2 re-emitted, 1 consulted and silent, 11 never asked."
    assert "  messages: 1 stored in Ana" in lines
    assert "  history of Ana: Generic, because of 1 new message in Ana" in lines
    assert lines[-1] == "  peer Ana: watched presence of Ana"
    empty = commit_detail(CommitEntry(7, 0.0, (), (), open_views=3))
    assert "  nothing stored" in empty.splitlines()
    assert "Re-emitted:" not in empty and "Consulted, unchanged:" not in empty
