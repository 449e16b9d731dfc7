"""Each chat's interface state: stored per (peer, thread), its view, the chat list's
draft, and the values' round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postbox import (
    ChatInterfaceState,
    ChatListInclusion,
    CorruptValueError,
    PeerId,
    Postbox,
    ScrollPosition,
    StoreMessage,
    SynchronizeableDraft,
)
from postbox.coding import pack
from postbox.view_keys import ChatInterfaceStateViewKey, ChatListViewKey
from postbox.views.chat_list_view import ChatListMessageEntry
from tests.postbox.live_views import assert_live_views_equal_fresh

ids = st.integers(-(2**31), 2**31 - 1)
drafts = st.builds(
    SynchronizeableDraft, st.text(max_size=50), st.none() | ids, st.integers(0, 2**32 - 1)
)
states = st.builds(
    ChatInterfaceState,
    st.none() | drafts,
    st.none() | st.builds(ScrollPosition, ids, st.integers(-5000, 5000)),
    st.lists(ids, max_size=5).map(tuple),
)


@given(states)
def test_a_state_reads_back_as_it_was_written(state: ChatInterfaceState) -> None:
    assert ChatInterfaceState.decode(state.encode()) == state


@pytest.mark.parametrize(
    "stored",
    [pack((2, None, None, ())), pack((1, ("hi", "x", 0), None, ())), pack((1, None, (1,), ()))],
)
def test_a_damaged_state_is_a_corrupt_value(stored: bytes) -> None:
    with pytest.raises(CorruptValueError):
        ChatInterfaceState.decode(stored)


def test_states_are_kept_per_chat_and_thread_and_survive_a_reopen(
    db_path, alice: PeerId, bob: PeerId
) -> None:
    typed = ChatInterfaceState(SynchronizeableDraft("see you at 5", 12, 100))
    scrolled = ChatInterfaceState(scroll=ScrollPosition(40, -12), selected_ids=(38, 40))
    with Postbox(db_path) as postbox:

        def write(tx) -> None:
            tx.set_chat_interface_state(alice, typed)
            tx.set_chat_interface_state(alice, scrolled, thread_id=7)

        postbox.run(write)
    with Postbox(db_path) as postbox:
        assert postbox.run(lambda tx: tx.get_chat_interface_state(alice)) == typed
        assert postbox.run(lambda tx: tx.get_chat_interface_state(alice, 7)) == scrolled
        assert postbox.run(lambda tx: tx.get_chat_interface_state(bob)) is None
        # An empty state is no state: the record goes.
        postbox.run(lambda tx: tx.set_chat_interface_state(alice, ChatInterfaceState()))
        assert postbox.run(lambda tx: tx.chat_interface_states()) == {(alice, 7): scrolled}


def test_the_view_follows_its_chat_and_thread_only(postbox: Postbox, alice, bob) -> None:
    keys = [ChatInterfaceStateViewKey(alice), ChatInterfaceStateViewKey(alice, 7)]
    draft = ChatInterfaceState(SynchronizeableDraft("hello", None, 5))
    seen: list[object] = []
    subscription = postbox.combined_view(keys, callback=lambda s: seen.append(s))
    subscription.ready.result()
    postbox.run(lambda tx: tx.set_chat_interface_state(bob, draft))
    assert len(seen) == 1  # another chat's draft touches neither view
    postbox.run(lambda tx: tx.set_chat_interface_state(alice, draft))
    assert len(seen) == 2
    latest = seen[-1].views  # type: ignore[attr-defined]
    assert latest[keys[0]].state == draft and latest[keys[1]].state is None
    subscription.dispose()
    assert_live_views_equal_fresh(
        postbox,
        keys,
        [
            [lambda tx: tx.set_chat_interface_state(alice, None, thread_id=7)],
            [lambda tx: tx.set_chat_interface_state(alice, draft, thread_id=7)],
            [lambda tx: tx.set_chat_interface_state(alice, None)],
        ],
    )


def test_the_chat_list_shows_a_chats_draft(postbox: Postbox, alice, bob) -> None:
    def listed(tx) -> None:
        for peer in (alice, bob):
            tx.add_messages([StoreMessage(peer, 0, 1, 10, text="hi")])
            tx.update_chat_list_inclusion(peer, ChatListInclusion())

    postbox.run(listed)
    key = ChatListViewKey(count=10)
    draft = ChatInterfaceState(SynchronizeableDraft("not sent yet", None, 20))

    def drafts(views) -> None:
        entries = [e for e in views[key].entries if isinstance(e, ChatListMessageEntry)]
        shown = {e.peer_id: e.interface_state for e in entries}
        assert set(shown) == {alice, bob}

    assert_live_views_equal_fresh(
        postbox,
        [key],
        [
            [lambda tx: tx.set_chat_interface_state(alice, draft)],
            [lambda tx: tx.set_chat_interface_state(alice, None)],
            [lambda tx: tx.set_chat_interface_state(bob, draft, thread_id=3)],
        ],
        after_each=drafts,
    )
    postbox.run(lambda tx: tx.set_chat_interface_state(alice, draft))
    subscription = postbox.combined_view([key])
    entries = subscription.ready.result()[key].entries
    subscription.dispose()
    by_peer = {e.peer_id: e for e in entries if isinstance(e, ChatListMessageEntry)}
    assert by_peer[alice].interface_state == draft
    assert by_peer[bob].interface_state is None  # a topic's draft is not the chat's
