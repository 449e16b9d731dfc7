"""Transactions: atomic commit, full rollback, change records and their listeners."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from postbox import (
    ChangeRecord,
    ChatListInclusion,
    InsertMessage,
    InvalidArgumentError,
    MessageFlags,
    MessageId,
    MessageIndex,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNamespace,
    PeerPresence,
    PeerReadState,
    Postbox,
    PostboxError,
    PresenceStatus,
    RemoveMessage,
    StateCursor,
    StoreMessage,
    Transaction,
    UpdateMessage,
)


class AbortError(Exception):
    pass


def listen(postbox: Postbox) -> list[ChangeRecord]:
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)
    return records


def test_a_transaction_runs_on_the_postbox_thread(postbox: Postbox) -> None:
    names = postbox.run(lambda tx: threading.current_thread().name)
    assert names == "postbox"
    assert not postbox.is_postbox_thread


def test_an_exception_rolls_back_sqlite_and_every_cache(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, text="first")]))
    records = listen(postbox)

    def fail(tx: Transaction) -> None:
        tx.add_messages([StoreMessage(alice, 0, i, 10 + i, text="more") for i in range(2, 50)])
        tx.delete_messages([MessageId(alice, 0, 1)])
        tx.set_state(StateCursor(5, 0, 0, 100))
        tx.update_peers([Peer(alice, "Alice")])
        tx.add_operation_log_entry(alice, 1, "op")
        assert tx.message_count(alice, 0) == 48
        raise AbortError

    with pytest.raises(AbortError):
        postbox.run(fail)
    assert records == []

    def check(tx: Transaction) -> None:
        assert [m.text for m in tx.get_messages(alice, 0)] == ["first"]
        assert tx.get_state() is None
        assert tx.get_peer(alice) is None
        assert tx.get_operation_log_entries(alice, 1) == []
        assert tx.get_chat_list_position(alice) is None

    postbox.run(check)
    # The next transaction starts from clean caches and commits normally.
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    assert [list(r.updated_peers) for r in records] == [[alice]]


def test_a_commit_produces_one_change_record(postbox: Postbox, alice: PeerId, bob: PeerId) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10)]))
    records = listen(postbox)
    version = postbox.transaction_state_version

    def change(tx: Transaction) -> None:
        tx.add_messages([StoreMessage(bob, 0, 7, 70, text="hi")])
        tx.update_message(MessageId(alice, 0, 1), StoreMessage(alice, 0, 1, 10, text="edited"))
        tx.update_peer_presences({bob: PeerPresence(PresenceStatus.ONLINE, 500)})
        tx.set_state(StateCursor(10, 1, 2, 300))

    postbox.run(change)
    [record] = records
    assert record.transaction_state_version == version + 1
    assert postbox.transaction_state_version == version + 1
    [insert] = record.message_operations[bob]
    assert isinstance(insert, InsertMessage)
    assert insert.index == MessageIndex(MessageId(bob, 0, 7), 70)
    assert insert.message.text == "hi"
    [update] = record.message_operations[alice]
    assert isinstance(update, UpdateMessage)
    assert update.message.text == "edited"
    assert record.updated_presences == {bob: PeerPresence(PresenceStatus.ONLINE, 500)}
    assert record.updated_state == StateCursor(10, 1, 2, 300)
    assert set(record.updated_read_states) == {bob}
    assert record.updated_peers == {}
    assert not record.is_empty
    with pytest.raises(TypeError):
        record.message_operations[bob] = ()  # type: ignore[index]


def test_reads_and_unchanged_writes_commit_nothing(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    records = listen(postbox)
    version = postbox.transaction_state_version
    postbox.run(lambda tx: tx.get_peer(alice))
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    assert records == []
    assert postbox.transaction_state_version == version


def test_delete_records_the_removed_index_and_tags(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 3, 30, tags=1)]))
    records = listen(postbox)
    removed = postbox.run(
        lambda tx: tx.delete_messages([MessageId(alice, 0, 3), MessageId(alice, 0, 4)])
    )
    assert removed == [MessageIndex(MessageId(alice, 0, 3), 30)]
    assert records[0].message_operations[alice] == (RemoveMessage(removed[0], 1),)


def test_duplicate_ids_are_ignored(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 5, 50, text="original")]))
    records = listen(postbox)
    indices = postbox.run(
        lambda tx: tx.add_messages(
            [StoreMessage(alice, 0, 5, 99, text="again"), StoreMessage(alice, 0, 6, 60)]
            + [StoreMessage(alice, 0, 6, 61)]
        )
    )
    assert indices == [
        MessageIndex(MessageId(alice, 0, 5), 50),
        MessageIndex(MessageId(alice, 0, 6), 60),
        MessageIndex(MessageId(alice, 0, 6), 60),
    ]
    assert [type(op) for op in records[0].message_operations[alice]] == [InsertMessage]
    message = postbox.run(lambda tx: tx.get_message(MessageId(alice, 0, 5)))
    assert message is not None and message.text == "original"


def test_local_ids_are_assigned_and_unsent_messages_are_queued(
    postbox: Postbox, alice: PeerId
) -> None:
    local = MessageNamespace.LOCAL
    sent = postbox.run(
        lambda tx: tx.add_messages(
            [StoreMessage(alice, local, None, 100, flags=2, text=t) for t in ["a", "b"]]
        )
    )
    assert [index.id.id for index in sent] == [1, 2]
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == [i.id for i in sent]
    records = listen(postbox)
    # The server confirmed the first one: the local id becomes a cloud id, sent.
    new_index = postbox.run(
        lambda tx: tx.update_message(sent[0].id, StoreMessage(alice, 0, 900, 101, text="a"))
    )
    assert new_index == MessageIndex(MessageId(alice, 0, 900), 101)
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == [sent[1].id]
    assert records[0].removed_unsent_ids == {sent[0].id}
    assert postbox.run(lambda tx: tx.get_message(sent[0].id)) is None
    with pytest.raises(InvalidArgumentError, match="needs an id"):
        postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, None, 1)]))


def test_updating_onto_an_existing_id_keeps_the_stored_message(
    postbox: Postbox, alice: PeerId
) -> None:
    postbox.run(
        lambda tx: tx.add_messages(
            [
                StoreMessage(alice, 1, None, 100, flags=2, text="mine"),
                StoreMessage(alice, 0, 900, 101, text="server"),
            ]
        )
    )
    index = postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 1, 1), StoreMessage(alice, 0, 900, 101, text="x")
        )
    )
    assert index == MessageIndex(MessageId(alice, 0, 900), 101)
    assert postbox.run(lambda tx: tx.get_message(MessageId(alice, 1, 1))) is None
    message = postbox.run(lambda tx: tx.get_message(MessageId(alice, 0, 900)))
    assert message is not None and message.text == "server"


def test_invalid_input_is_refused_and_changes_nothing(postbox: Postbox, alice: PeerId) -> None:
    with pytest.raises(InvalidArgumentError, match="outside"):
        postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 0, 1)]))
    for timestamp in (2**32, -1):  # a timestamp is unsigned 32-bit: through 2106
        message = StoreMessage(alice, 0, 1, timestamp)

        def add(tx: Transaction, message: StoreMessage = message) -> None:
            tx.add_messages([message])

        with pytest.raises(InvalidArgumentError, match=f"timestamp {timestamp} is outside"):
            postbox.run(add)
    with pytest.raises(InvalidArgumentError, match="not a PeerId"):
        postbox.run(lambda tx: tx.add_messages([StoreMessage(7, 0, 1, 1)]))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        PeerId.make(200, 1)
    assert postbox.run(lambda tx: tx.message_count(alice, 0)) == 0


def test_a_transaction_object_is_dead_after_its_function(postbox: Postbox) -> None:
    kept: list[Transaction] = []
    postbox.run(kept.append)
    with pytest.raises(PostboxError, match="has ended"):
        kept[0].get_state()


def test_run_on_the_postbox_thread_is_refused(postbox: Postbox) -> None:
    with pytest.raises(PostboxError, match="wait on itself"):
        postbox.run(lambda tx: postbox.run(lambda inner: None))


def test_a_failing_listener_does_not_break_the_commit(
    postbox: Postbox, alice: PeerId, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(record: ChangeRecord) -> None:
        raise RuntimeError("listener bug")

    remove = postbox.add_commit_listener(broken)
    records = listen(postbox)
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "A")]))
    assert len(records) == 1
    assert "listener bug" in caplog.text
    remove()


def test_another_process_commit_is_noticed(db_path: Path, alice: PeerId) -> None:
    with Postbox(db_path) as first, Postbox(db_path) as second:
        seen: list[int] = []
        first.add_external_change_listener(seen.append)
        second.run(lambda tx: tx.update_peers([Peer(alice, "from elsewhere")]))
        assert first.run(lambda tx: tx.get_peer(alice)) == Peer(alice, "from elsewhere")
        assert seen == [second.transaction_state_version]


def test_what_a_postbox_keeps_between_transactions_follows_another_process(
    db_path: Path, alice: PeerId
) -> None:
    """Read states, chat positions, peers, the id bound and the next full-text rowid are
    kept across transactions; another process's commit makes the postbox read them again."""
    incoming = int(MessageFlags.INCOMING)
    with Postbox(db_path) as first, Postbox(db_path) as second:
        first.run(lambda tx: tx.update_peers([Peer(alice, "alice")]))
        first.run(lambda tx: tx.update_chat_list_inclusion(alice, ChatListInclusion()))
        first.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, incoming, text="a")]))
        first.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 2, 20, incoming, text="b")]))

        def from_elsewhere(tx: Transaction) -> None:
            tx.update_peers([Peer(alice, "renamed")])
            tx.add_messages([StoreMessage(alice, 0, 3, 30, incoming, text="c elsewhere")])
            tx.apply_incoming_read_max_id(MessageId(alice, 0, 3))

        second.run(from_elsewhere)
        # Id 3 is stored already: kept as the other process wrote it; id 4 is new.
        first.run(
            lambda tx: tx.add_messages(
                [
                    StoreMessage(alice, 0, 3, 30, incoming, text="c here"),
                    StoreMessage(alice, 0, 4, 40, incoming, text="d"),
                ]
            )
        )

        def check(tx: Transaction) -> None:
            assert tx.get_peer(alice) == Peer(alice, "renamed")
            message = tx.get_message(MessageId(alice, 0, 3))
            assert message is not None and message.text == "c elsewhere"
            state = tx.get_read_state(alice)
            assert state is not None
            assert state.get(0) == PeerReadState(3, 0, 4, 1, False)
            position = tx.get_chat_list_position(alice)
            assert position is not None and position[1].message_index.id.id == 4
            # Each text got its own full-text row.
            assert [index.id.id for index in tx.search_messages("c")] == [3]
            assert [index.id.id for index in tx.search_messages("d")] == [4]

        first.run(check)
        second.run(check)


def test_data_survives_reopen(db_path: Path, alice: PeerId) -> None:
    with Postbox(db_path) as postbox:
        postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, text="persisted")]))
        version = postbox.transaction_state_version
    with Postbox(db_path) as postbox:
        message = postbox.run(lambda tx: tx.get_message(MessageId(alice, 0, 1)))
        assert message is not None and message.text == "persisted"
        assert postbox.transaction_state_version == version


def test_writes_that_change_nothing_commit_nothing(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.replace_tag_summary(alice, 1, 0, 0, 0))
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, tags=1)]))
    postbox.run(lambda tx: tx.add_operation_log_entry(alice, 1, "same"))
    records = listen(postbox)
    version = postbox.transaction_state_version
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, tags=1)]))
    postbox.run(lambda tx: tx.replace_tag_summary(alice, 1, 0, 1, 1))
    postbox.run(lambda tx: tx.update_operation_log_entry(alice, 1, 1, "same"))
    assert records == []
    assert postbox.transaction_state_version == version


def test_values_msgpack_cannot_hold_are_refused(postbox: Postbox, alice: PeerId) -> None:
    with pytest.raises(InvalidArgumentError, match="cannot store"):
        postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, reply_to_id=2**70)]))
    with pytest.raises(InvalidArgumentError, match="cannot store"):
        postbox.run(lambda tx: tx.add_operation_log_entry(alice, 1, {1, 2}))
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, text="fine")]))
    assert postbox.run(lambda tx: tx.message_count(alice, 0)) == 1


def test_assigned_local_ids_skip_ids_in_use(postbox: Postbox, alice: PeerId) -> None:
    local = MessageNamespace.LOCAL
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, local, 1, 10, text="explicit")]))
    [index] = postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, local, None, 20)]))
    assert index.id.id == 2
    assert postbox.run(lambda tx: tx.message_count(alice, local)) == 2


def test_counting_messages_in_an_id_range_agrees_with_listing_them() -> None:
    peer = PeerId.make(PeerNamespace.USER, 77)
    with Postbox(None) as postbox:
        postbox.run(
            lambda tx: tx.add_messages(StoreMessage(peer, 0, i, 1_000 + i) for i in range(1, 50, 2))
        )

        def check(tx) -> None:
            tx.add_messages(
                StoreMessage(peer, 0, i, 2_000 + i) for i in range(60, 70)
            )  # not committed
            tx.delete_messages([MessageId(peer, 0, 3)])
            for lower, upper in ((1, 2**31 - 2), (3, 3), (4, 64), (50, 59), (65, 100)):
                listed = tx.get_message_indices_in_id_range(peer, 0, lower, upper)
                assert tx.count_messages_in_id_range(peer, 0, lower, upper) == len(listed)

        postbox.run(check)
