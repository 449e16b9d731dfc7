"""The engine's pure parts: grouping, the counter sequencer, the operation optimizer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from postbox import PeerId, PeerNamespace, StateCursor
from sync.engine.mutable_state import (
    AccountMutableState,
    AddMessages,
    DeleteMessages,
    EditMessage,
    ReadInbox,
    optimized,
)
from sync.protocol import (
    Message,
    Peer,
    Presence,
    PresenceStatus,
    ShortMessage,
    UpdateChannelTooLong,
    UpdateDeleteMessages,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewMessage,
    UpdatePeer,
    UpdateReadHistoryInbox,
    Updates,
    UpdatesTooLong,
    UpdateUserStatus,
)
from sync.state import Sequencer, group_push

USER = int(PeerId.make(PeerNamespace.USER, 5))
CHANNEL = int(PeerId.make(PeerNamespace.CHANNEL, 9))
ME = int(PeerId.make(PeerNamespace.USER, 1))


def message(peer: int, id_: int, text: str = "hi") -> Message:
    return Message(peer, id_, 1_000 + id_, False, text, peer)


@st.composite
def shuffled_stream(draw):
    """A contiguous run of pts updates, then shuffled, with duplicates and old ones."""
    start = draw(st.integers(0, 50))
    counts = draw(st.lists(st.integers(1, 3), min_size=1, max_size=30))
    items = []
    position = start
    for count in counts:
        position += count
        items.append((position, count, position))
    stream = draw(st.permutations(items))
    duplicates = draw(st.lists(st.sampled_from(items), max_size=10))
    old = [(start - k, 1, -k) for k in range(draw(st.integers(0, 3)))]
    return start, items, list(stream) + duplicates + old


@given(shuffled_stream(), st.integers(1, 5))
def test_a_sequencer_releases_each_update_once_in_order(case, chunks) -> None:
    start, items, stream = case
    sequencer = Sequencer[int](start)
    released = []
    size = max(1, len(stream) // chunks)
    for i in range(0, len(stream), size):
        result = sequencer.offer(stream[i : i + size])
        released.extend(result.ready)
        assert not result.inconsistent
    assert released == [payload for _, _, payload in items]
    assert sequencer.position == items[-1][0]
    assert not sequencer.held


def test_a_sequencer_holds_what_comes_after_a_gap() -> None:
    sequencer = Sequencer[str](10)
    result = sequencer.offer([(12, 1, "b"), (13, 1, "c")])
    assert (result.ready, result.gap) == ([], True)
    result = sequencer.offer([(11, 1, "a")])
    assert (result.ready, result.gap) == (["a", "b", "c"], False)
    assert sequencer.position == 13


def test_an_overlapping_update_is_inconsistent() -> None:
    sequencer = Sequencer[str](10)
    result = sequencer.offer([(12, 3, "x")])  # starts at 9, below the position
    assert result.inconsistent and result.gap


def test_reset_forgets_what_a_difference_covered() -> None:
    sequencer = Sequencer[str](10)
    sequencer.offer([(12, 1, "b"), (20, 1, "z")])
    sequencer.reset(15)
    assert list(sequencer.held.values()) == ["z"]


def test_group_push_sorts_by_counter() -> None:
    push = Updates(
        (
            UpdateNewMessage(message(USER, 7), 11, 1),
            UpdateNewChannelMessage(message(CHANNEL, 3), 4, 1),
            UpdateUserStatus(Presence(USER, PresenceStatus.ONLINE, 5)),
            UpdateChannelTooLong(CHANNEL),
        ),
        (Peer(USER, "Ann"),),
        date=5,
    )
    grouped = group_push(push, ME)
    assert [type(u) for u in grouped.pts] == [UpdateNewMessage]
    assert list(grouped.channels) == [CHANNEL]
    assert [type(u) for u in grouped.unordered] == [UpdateUserStatus]
    assert [h.channel for h in grouped.channel_hints] == [CHANNEL]
    assert grouped.peers == [Peer(USER, "Ann")]
    assert group_push(UpdatesTooLong(), ME).too_long


def test_the_short_form_becomes_a_full_new_message() -> None:
    grouped = group_push(ShortMessage(7, USER, True, "yo", 100, 12, 1), ME)
    (update,) = grouped.pts
    assert isinstance(update, UpdateNewMessage)
    assert update.message.author == ME and update.message.out


def test_a_seq_container_is_ordered_by_its_seq() -> None:
    grouped = group_push(Updates((UpdatePeer(Peer(USER, "B")),), (), 5, 8, 8), ME)
    assert grouped.seq is not None and grouped.seq[:2] == (8, 8)
    assert not grouped.pts


def state() -> AccountMutableState:
    cursor = StateCursor(1, 0, 1, 0)
    return AccountMutableState(cursor, cursor)


def test_add_then_edit_becomes_one_add_and_add_then_delete_drops_the_add() -> None:
    mutable = state()
    mutable.apply(UpdateNewMessage(message(USER, 7), 2, 1))
    mutable.apply(UpdateNewMessage(message(USER, 8), 3, 1))
    mutable.apply(UpdateEditMessage(message(USER, 7, "edited"), 4, 1))
    mutable.apply(UpdateDeleteMessages(USER, (8, 99), 6, 2))
    operations = optimized(mutable.operations)
    assert len(operations) == 3
    dropped, add, delete = operations
    # The add of 8 is gone; a copy stored before by another path would go too.
    assert isinstance(dropped, DeleteMessages) and dropped.ids == (8,) and dropped.added_in_batch
    assert isinstance(add, AddMessages)
    assert [(m.id, m.text) for m in add.messages] == [(7, "edited")]
    assert isinstance(delete, DeleteMessages) and delete.ids == (99,)
    assert not delete.added_in_batch


def test_a_sent_message_deleted_in_the_same_difference_does_not_stay(tmp_path) -> None:
    from postbox import MessageId, Postbox
    from sync.engine.convert import message_from_wire
    from sync.engine.replay import replay_final_state

    box = Postbox(tmp_path / "c.db")
    cursor = StateCursor(1, 0, 1, 0)
    box.run(lambda tx: tx.set_state(cursor))
    # A send's answer stored message 8 ahead of the updates before it...
    box.run(lambda tx: tx.add_messages([message_from_wire(message(USER, 8))]))
    # ...and the difference then brings its creation and its deletion together.
    mutable = AccountMutableState(cursor, cursor)
    mutable.add_difference([message(USER, 8)], [UpdateDeleteMessages(USER, (8,), 3, 1)])
    mutable.cursor = StateCursor(3, 0, 1, 0)
    assert box.run(lambda tx: replay_final_state(tx, mutable, {}))
    assert not box.run(lambda tx: tx.message_exists(MessageId(PeerId(USER), 0, 8)))
    box.close()


def test_reads_stay_after_the_adds_they_follow() -> None:
    mutable = state()
    mutable.apply(UpdateNewMessage(message(USER, 7), 2, 1))
    mutable.operations.append(ReadInbox(PeerId(USER), 7))
    mutable.apply(UpdateNewMessage(message(USER, 8), 3, 1))
    kinds = [type(op) for op in optimized(mutable.operations)]
    assert kinds == [AddMessages, ReadInbox, AddMessages]


def test_an_edit_of_an_unseen_message_is_kept() -> None:
    mutable = state()
    mutable.apply(UpdateEditMessage(message(USER, 3, "new"), 2, 1))
    (operation,) = optimized(mutable.operations)
    assert isinstance(operation, EditMessage)


def test_a_branch_merges_back_only_what_it_added() -> None:
    main = state()
    main.apply(UpdateNewMessage(message(USER, 7), 2, 1))
    branch = main.branch()
    branch.apply(UpdateNewChannelMessage(message(CHANNEL, 3), 4, 1))
    branch.set_channel_pts(PeerId(CHANNEL), 4)
    main.merge(branch)
    assert len(main.operations) == 3
    assert main.channel_pts == {PeerId(CHANNEL): 4}


def test_a_secret_chats_read_does_not_take_a_count_its_messages_may_postdate(tmp_path) -> None:
    """Message 7 of a secret chat (qts) is stored here before the read of 6 (pts) that
    the other device made while the server had no 7 yet: its count of 0 leaves 7 out.
    The read is estimated from what is stored (7 stays unread) and validated (seed 457
    with the server lying in getPeerDialogs answers)."""
    from postbox import Postbox
    from sync.engine.convert import message_from_wire
    from sync.engine.log_tags import VALIDATE_READ_STATE_TAG
    from sync.engine.replay import replay_final_state

    secret = int(PeerId.make(PeerNamespace.SECRET_CHAT, 4))
    box = Postbox(tmp_path / "c.db")
    cursor = StateCursor(1, 0, 1, 0)
    box.run(lambda tx: tx.set_state(cursor))
    box.run(
        lambda tx: tx.add_messages([message_from_wire(message(secret, i)) for i in range(1, 8)])
    )
    mutable = AccountMutableState(cursor, cursor)
    mutable.apply(UpdateReadHistoryInbox(secret, 6, 0, 2, 1))
    mutable.cursor = StateCursor(2, 0, 1, 0)
    assert box.run(lambda tx: replay_final_state(tx, mutable, {}))
    state = box.run(lambda tx: tx.get_read_state(PeerId(secret)))
    queued = box.run(
        lambda tx: tx.get_operation_log_entries(PeerId(secret), VALIDATE_READ_STATE_TAG)
    )
    box.close()
    assert state is not None and state.count == 1
    assert queued
