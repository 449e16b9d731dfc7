"""Read states: unread counts follow incoming messages and read marks."""

from __future__ import annotations

from postbox import MessageFlags, MessageId, PeerId, PeerReadState, Postbox, StoreMessage

INCOMING = MessageFlags.INCOMING


def state(postbox: Postbox, peer: PeerId) -> PeerReadState:
    combined = postbox.run(lambda tx: tx.get_read_state(peer))
    assert combined is not None
    result = combined.get(0)
    assert result is not None
    return result


def add(postbox: Postbox, peer: PeerId, ids: range, flags: int = INCOMING) -> None:
    postbox.run(
        lambda tx: tx.add_messages([StoreMessage(peer, 0, i, i * 10, flags=flags) for i in ids])
    )


def test_incoming_messages_above_the_read_mark_are_unread(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 6))
    add(postbox, alice, range(6, 8), flags=0)
    assert state(postbox, alice) == PeerReadState(0, 0, 7, 5, False)
    combined = postbox.run(lambda tx: tx.get_read_state(alice))
    assert combined is not None and combined.count == 5 and combined.is_unread


def test_reading_subtracts_the_stored_incoming_messages(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 11))
    assert postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 4)))
    assert state(postbox, alice).count == 6
    assert not postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 3)))
    # Messages below the read mark (a hole filled later) are not unread.
    add(postbox, alice, range(2, 3))
    postbox.run(lambda tx: tx.delete_messages([MessageId(alice, 0, 2)]))
    add(postbox, alice, range(2, 3))
    assert state(postbox, alice).count == 6
    assert postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 10)))
    assert state(postbox, alice) == PeerReadState(10, 0, 10, 0, False)


def test_deleting_an_unread_message_lowers_the_count(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 4))
    postbox.run(lambda tx: tx.delete_messages([MessageId(alice, 0, 3)]))
    assert state(postbox, alice).count == 2


def test_server_counts_cover_messages_not_stored(postbox: Postbox, alice: PeerId) -> None:
    # The server says 40 are unread above 100, up to 140; none of them is stored here.
    postbox.run(lambda tx: tx.reset_read_state(alice, 0, PeerReadState(100, 0, 140, 40)))
    # A hole fill brings some of them: the server's count already has them.
    add(postbox, alice, range(131, 141))
    assert state(postbox, alice).count == 40
    # A message newer than any the count knew is one more.
    add(postbox, alice, range(141, 142))
    assert state(postbox, alice) == PeerReadState(100, 0, 141, 41)
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 139)))
    assert state(postbox, alice).count == 32
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 141)))
    assert state(postbox, alice).count == 0


def test_a_read_that_says_what_is_left_is_taken_as_it_is(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.reset_read_state(alice, 0, PeerReadState(100, 0, 140, 40, True)))
    read = MessageId(alice, 0, 120)
    assert postbox.run(lambda tx: tx.apply_incoming_read_max_id(read, unread_count=17))
    assert state(postbox, alice) == PeerReadState(120, 0, 140, 17, False)
    # The same read again changes nothing; an older one is ignored.
    assert not postbox.run(lambda tx: tx.apply_incoming_read_max_id(read, unread_count=17))
    older = MessageId(alice, 0, 110)
    assert not postbox.run(lambda tx: tx.apply_incoming_read_max_id(older, unread_count=30))
    assert state(postbox, alice).count == 17


def test_outgoing_reads_and_marked_unread(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 4), flags=0)
    assert postbox.run(lambda tx: tx.apply_outgoing_read_max_id(MessageId(alice, 0, 2)))
    assert not postbox.run(lambda tx: tx.apply_outgoing_read_max_id(MessageId(alice, 0, 1)))
    read = state(postbox, alice)
    assert read.is_outgoing_read(2) and not read.is_outgoing_read(3)
    postbox.run(lambda tx: tx.set_marked_unread(alice, 0, True))
    assert state(postbox, alice).is_unread and state(postbox, alice).count == 0
    # Reading the chat clears the mark.
    assert postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 1)))
    assert not state(postbox, alice).marked_unread


def test_an_edit_that_makes_a_message_incoming_counts_it(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 2), flags=0)
    postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 0, 1), StoreMessage(alice, 0, 1, 10, flags=INCOMING)
        )
    )
    assert state(postbox, alice).count == 1


def test_an_edit_does_not_recount_an_unread_message(postbox: Postbox, alice: PeerId) -> None:
    add(postbox, alice, range(1, 3))
    # The server says nothing is unread, though message 2 is above the read mark.
    postbox.run(lambda tx: tx.reset_read_state(alice, 0, PeerReadState(1, 0, 2, 0)))
    postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 0, 2), StoreMessage(alice, 0, 2, 20, flags=INCOMING, text="edited")
        )
    )
    assert state(postbox, alice).count == 0
