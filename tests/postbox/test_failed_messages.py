"""The failed-messages table, its change-record entries and the views that show it.

The table's agreement with the messages' ``FAILED`` flag under random transactions is
checked by the state machine in ``test_stateful``; here are its promises one by one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postbox import (
    ChangeRecord,
    ChatListHole,
    ChatListInclusion,
    ChatListMessageEntry,
    ChatListViewKey,
    CorruptValueError,
    FailedMessageIdsViewKey,
    MessageFailure,
    MessageFlags,
    MessageId,
    MessageNamespace,
    Peer,
    PeerId,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.coding import pack
from tests.postbox.live_views import Recorder

LOCAL = int(MessageNamespace.LOCAL)
REFUSED = MessageFailure("CHAT_WRITE_FORBIDDEN", "only the channel's admins can post", {"r": 1})


def _pending(tx: Transaction, peer_id: PeerId, text: str = "hi", timestamp: int = 100) -> MessageId:
    (index,) = tx.add_messages(
        [StoreMessage(peer_id, LOCAL, None, timestamp, flags=int(MessageFlags.UNSENT), text=text)]
    )
    return index.id


requests = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.text(max_size=30), st.text(max_size=60), requests)
def test_a_failure_reads_back_as_it_was_stored(code: str, text: str, request: Any) -> None:
    failure = MessageFailure(code, text, request)
    assert MessageFailure.decode(failure.encode()) == failure


@pytest.mark.parametrize(
    "stored",
    [pack((2, "A", "b", None)), pack((1, 5, "b", None)), pack((1, "A")), pack("A"), b"\xc1"],
)
def test_a_damaged_failure_is_a_corrupt_value(stored: bytes) -> None:
    with pytest.raises(CorruptValueError):
        MessageFailure.decode(stored)


def test_marking_a_message_failed_keeps_why_and_takes_it_off_the_unsent_queue(
    postbox: Postbox, alice: PeerId
) -> None:
    message_id = postbox.run(lambda tx: _pending(tx, alice))
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == [message_id]
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)
    assert postbox.run(lambda tx: tx.mark_message_failed(message_id, REFUSED))
    message = postbox.run(lambda tx: tx.get_message(message_id))
    assert message is not None and message.flags == MessageFlags.FAILED
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == []
    assert postbox.run(lambda tx: tx.get_failed_messages(alice)) == [(message_id, REFUSED)]
    [record] = records
    assert record.updated_failed_message_ids == {message_id}
    assert record.removed_unsent_ids == {message_id}


def test_an_incoming_or_missing_message_is_not_marked_failed(
    postbox: Postbox, alice: PeerId
) -> None:
    incoming = StoreMessage(alice, 0, 5, 100, flags=int(MessageFlags.INCOMING))
    postbox.run(lambda tx: tx.add_messages([incoming]))
    assert not postbox.run(lambda tx: tx.mark_message_failed(MessageId(alice, 0, 5), REFUSED))
    assert not postbox.run(lambda tx: tx.mark_message_failed(MessageId(alice, LOCAL, 9), REFUSED))
    assert postbox.run(lambda tx: tx.get_failed_message_ids()) == []


def test_the_failure_goes_with_the_message_or_its_flag_and_stays_through_other_edits(
    postbox: Postbox, alice: PeerId
) -> None:
    first, second = postbox.run(lambda tx: [_pending(tx, alice, "a"), _pending(tx, alice, "b")])
    postbox.run(lambda tx: [tx.mark_message_failed(i, REFUSED) for i in (first, second)])

    def edit_text(tx: Transaction) -> None:
        message = tx.get_message(first)
        assert message is not None
        tx.update_message(first, message.to_store()._replace(text="a, again"))

    postbox.run(edit_text)
    assert postbox.run(lambda tx: tx.get_message_failure(first)) == REFUSED

    def unfail(tx: Transaction) -> None:  # as a retry does: unsent again
        message = tx.get_message(first)
        assert message is not None
        tx.update_message(first, message.to_store()._replace(flags=int(MessageFlags.UNSENT)))

    postbox.run(unfail)
    assert postbox.run(lambda tx: tx.get_message_failure(first)) is None
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == [first]
    postbox.run(lambda tx: tx.delete_messages([second]))
    assert postbox.run(lambda tx: tx.get_failed_message_ids()) == []


def test_a_message_stored_failed_has_a_failure_of_unknown_reason(
    postbox: Postbox, alice: PeerId
) -> None:
    failed = StoreMessage(alice, LOCAL, None, 100, flags=int(MessageFlags.FAILED), text="x")
    [index] = postbox.run(lambda tx: tx.add_messages([failed]))
    failure = postbox.run(lambda tx: tx.get_message_failure(index.id))
    assert failure == MessageFailure() and not failure.known


def test_failures_survive_a_restart(db_path: Path, alice: PeerId) -> None:
    postbox = Postbox(db_path)
    message_id = postbox.run(lambda tx: _pending(tx, alice))
    postbox.run(lambda tx: tx.mark_message_failed(message_id, REFUSED))
    postbox.close()
    reopened = Postbox(db_path)
    try:
        assert reopened.run(lambda tx: tx.get_failed_messages(alice)) == [(message_id, REFUSED)]
        view = reopened.combined_view([FailedMessageIdsViewKey(alice)]).ready.result()
        assert dict(view[FailedMessageIdsViewKey(alice)].failures) == {message_id: REFUSED}
    finally:
        reopened.close()


def test_the_failed_messages_view_follows_its_chat_alone(
    postbox: Postbox, alice: PeerId, bob: PeerId
) -> None:
    recorder = Recorder()
    key = FailedMessageIdsViewKey(alice)
    first = postbox.combined_view([key], callback=recorder).ready.result()
    assert first[key].ids == ()
    mine, theirs = postbox.run(lambda tx: [_pending(tx, alice), _pending(tx, bob)])
    assert recorder.count == 1  # pending, not failed: nothing to show
    postbox.run(lambda tx: tx.mark_message_failed(theirs, REFUSED))
    assert recorder.count == 1
    postbox.run(lambda tx: tx.mark_message_failed(mine, REFUSED))
    assert recorder.count == 2 and recorder.last[key].ids == (mine,)
    assert recorder.last[key].failures[mine] == REFUSED
    postbox.run(lambda tx: tx.delete_messages([mine]))
    assert recorder.count == 3 and recorder.last[key].ids == ()


def test_the_chat_list_marks_a_chat_with_a_failed_message(postbox: Postbox, alice: PeerId) -> None:
    def listed(tx: Transaction) -> None:
        tx.update_peers([Peer(alice, "Alice")])
        tx.remove_chat_list_hole(0, ChatListHole.top())
        tx.update_chat_list_inclusion(alice, ChatListInclusion())

    postbox.run(listed)
    incoming = StoreMessage(alice, 0, 1, 50, flags=int(MessageFlags.INCOMING), text="hey")
    postbox.run(lambda tx: tx.add_messages([incoming]))
    recorder = Recorder()
    key = ChatListViewKey(count=10)

    def entry() -> ChatListMessageEntry:
        [found] = recorder.last[key].entries
        assert isinstance(found, ChatListMessageEntry)
        return found

    postbox.combined_view([key], callback=recorder).ready.result()
    assert not entry().has_failed
    message_id = postbox.run(lambda tx: _pending(tx, alice, timestamp=40))  # under the top
    postbox.run(lambda tx: tx.mark_message_failed(message_id, REFUSED))
    assert entry().has_failed
    postbox.run(lambda tx: tx.delete_messages([message_id]))
    assert not entry().has_failed
