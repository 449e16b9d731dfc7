"""The chat list view: a window of a group, resolved entries, update types and holes."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import (
    ChatListHole,
    ChatListInclusion,
    ChatListIndex,
    InvalidArgumentError,
    MessageId,
    MessageIndex,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    Postbox,
    PresenceStatus,
    StoreMessage,
    Transaction,
)
from postbox.tables import ChatListEntryKey
from postbox.view_keys import AnyViewKey, ChatListHolesViewKey, ChatListViewKey
from postbox.views import chat_list_view
from postbox.views.chat_list_view import (
    ChatListHoleEntry,
    ChatListMessageEntry,
    ChatListView,
    MutableChatListView,
)
from postbox.views.holes_views import ChatListHolesEntry, ChatListHolesView
from postbox.views.subscription import Subscription
from postbox.views.view import ViewUpdateType
from tests.postbox import live_views

ROOT, ARCHIVE = int(PeerGroupId.ROOT), int(PeerGroupId.ARCHIVE)
PEERS = [PeerId.make(PeerNamespace.USER, i) for i in range(1, 7)]
P1, P2, P3, P4, P5, P6 = PEERS


class Recorder(live_views.Recorder):
    """A chat-list subscription's snapshots."""

    def view(self, key: ChatListViewKey) -> ChatListView:
        snapshot = self.snapshots[-1][key]
        assert isinstance(snapshot, ChatListView)
        return snapshot

    def update_types(self, key: AnyViewKey) -> frozenset[ViewUpdateType]:
        return self.snapshots[-1].update_types[key]


def open_view(postbox: Postbox, key: ChatListViewKey) -> tuple[Subscription, Recorder]:
    recorder = Recorder()
    subscription = postbox.combined_view([key], callback=recorder)
    subscription.ready.result()
    return subscription, recorder


def fresh(postbox: Postbox, key: ChatListViewKey) -> ChatListView:
    with postbox.combined_view([key]) as subscription:
        snapshot = subscription.ready.result()[key]
    assert isinstance(snapshot, ChatListView)
    return snapshot


def message(peer_id: PeerId, id_: int, timestamp: int, text: str = "") -> StoreMessage:
    return StoreMessage(peer_id, 0, id_, timestamp, text=text or f"m{id_}")


def remove_top_holes(tx: Transaction) -> None:
    for group_id in (ROOT, ARCHIVE):
        tx.remove_chat_list_hole(group_id, ChatListHole.top())


@pytest.fixture
def listed(postbox: Postbox) -> Postbox:
    """Six chats with top messages at 100 ... 600 (P6 on top), no chat-list holes."""

    def fill(tx: Transaction) -> None:
        remove_top_holes(tx)
        for n, peer_id in enumerate(PEERS, start=1):
            tx.update_peers([Peer(peer_id, f"peer {n}")])
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion())
            tx.add_messages([message(peer_id, n * 10, n * 100)])

    postbox.run(fill)
    return postbox


def test_order_pinned_first_then_newest_top_message(listed: Postbox) -> None:
    listed.run(lambda tx: tx.set_pinned_peer_ids(ROOT, [P2, P1]))
    view = fresh(listed, ChatListViewKey(ROOT, count=10))
    assert view.peer_ids == (P2, P1, P6, P5, P4, P3)
    assert [e.index.pinning_index for e in view.entries] == [0, 1, None, None, None, None]
    assert (view.has_earlier, view.has_later, view.hole_below) == (False, False, None)
    assert view.update_type == ViewUpdateType.INITIAL


def test_entries_are_resolved(listed: Postbox) -> None:
    listed.run(lambda tx: tx.update_peer_presences({P6: PeerPresence(PresenceStatus.ONLINE, 7)}))
    entry = fresh(listed, ChatListViewKey(ROOT, count=1)).entries[0]
    assert isinstance(entry, ChatListMessageEntry)
    assert entry.peer == Peer(P6, "peer 6")
    assert entry.message is not None and entry.message.id == MessageId(P6, 0, 60)
    assert entry.message.text == "m60"
    assert entry.presence == PeerPresence(PresenceStatus.ONLINE, 7)
    assert entry.read_state == listed.run(lambda tx: tx.get_read_state(P6))
    assert entry.read_state is not None and entry.read_state.count == 0
    assert entry.notification_settings is None


def test_new_message_moves_a_chat_to_the_top(listed: Postbox) -> None:
    key = ChatListViewKey(ROOT, count=3)
    _, recorder = open_view(listed, key)
    assert recorder.view(key).peer_ids == (P6, P5, P4)
    assert recorder.view(key).has_earlier and not recorder.view(key).has_later

    listed.run(lambda tx: tx.add_messages([message(P5, 51, 700)]))
    assert recorder.view(key).peer_ids == (P5, P6, P4)
    assert recorder.update_types(key) == {ViewUpdateType.GENERIC}

    listed.run(lambda tx: tx.add_messages([message(P1, 11, 800)]))
    assert recorder.view(key).peer_ids == (P1, P5, P6)
    assert recorder.update_types(key) == {ViewUpdateType.UPDATE_VISIBLE}
    # The chat that entered is watched now; the one that left is not.
    count = recorder.count
    listed.run(lambda tx: tx.update_peers([Peer(P4, "gone")]))
    assert recorder.count == count
    listed.run(lambda tx: tx.update_peers([Peer(P1, "Pam")]))
    assert recorder.count == count + 1
    entry = recorder.view(key).entries[0]
    assert isinstance(entry, ChatListMessageEntry) and entry.peer == Peer(P1, "Pam")
    assert recorder.view(key) == fresh(listed, key)


def test_a_replay_touches_only_the_rows_a_commit_changed(
    listed: Postbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = ChatListViewKey(ROOT, count=4)
    _, recorder = open_view(listed, key)
    resolved: list[PeerId] = []
    resolve = chat_list_view._resolve

    def counting(tx: Transaction, row: ChatListEntryKey) -> object:
        resolved.append(row.peer_id)
        return resolve(tx, row)

    def no_load(self: MutableChatListView, tx: Transaction) -> None:
        raise AssertionError("the window was read again")

    monkeypatch.setattr(chat_list_view, "_resolve", counting)
    monkeypatch.setattr(MutableChatListView, "_load", no_load)
    # A chat in the window moves to the top: only its row is resolved again.
    listed.run(lambda tx: tx.add_messages([message(P4, 41, 700)]))
    assert recorder.view(key).peer_ids == (P4, P6, P5, P3) and resolved == [P4]
    # A rename of a chat in the window: its row alone.
    listed.run(lambda tx: tx.update_peers([Peer(P5, "renamed")]))
    assert resolved == [P4, P5]
    # A chat leaves the window: the row below comes in, read with the one after it.
    listed.run(lambda tx: tx.update_chat_list_inclusion(P6, None))
    assert recorder.view(key).peer_ids == (P4, P5, P3, P2) and resolved == [P4, P5, P2]
    assert recorder.update_types(key) == {ViewUpdateType.UPDATE_VISIBLE}
    monkeypatch.undo()
    assert recorder.view(key) == fresh(listed, key)


def test_window_below_an_index(listed: Postbox) -> None:
    top = fresh(listed, ChatListViewKey(ROOT, count=2))
    key = ChatListViewKey(ROOT, count=2, below=top.entries[-1].index)
    _, recorder = open_view(listed, key)
    view = recorder.view(key)
    assert view.peer_ids == (P4, P3)
    assert view.has_earlier and view.has_later

    # P4 moves above the anchor: the window stays two rows below the same index.
    listed.run(lambda tx: tx.add_messages([message(P4, 41, 900)]))
    assert recorder.view(key).peer_ids == (P3, P2)
    assert recorder.update_types(key) == {ViewUpdateType.UPDATE_VISIBLE}
    listed.run(lambda tx: tx.delete_messages([MessageId(P1, 0, 10)]))
    assert recorder.view(key).peer_ids == (P3, P2)
    assert not recorder.view(key).has_earlier
    assert recorder.view(key) == fresh(listed, key)


def test_archive_is_a_separate_group(listed: Postbox) -> None:
    root, archive = ChatListViewKey(ROOT, count=3), ChatListViewKey(ARCHIVE, count=3)
    _, root_recorder = open_view(listed, root)
    _, archive_recorder = open_view(listed, archive)
    assert archive_recorder.view(archive).entries == ()

    listed.run(lambda tx: tx.update_chat_list_inclusion(P5, ChatListInclusion(ARCHIVE)))
    assert root_recorder.view(root).peer_ids == (P6, P4, P3)
    assert root_recorder.update_types(root) == {ViewUpdateType.UPDATE_VISIBLE}
    assert archive_recorder.view(archive).peer_ids == (P5,)
    assert archive_recorder.update_types(archive) == {ViewUpdateType.UPDATE_VISIBLE}

    count = root_recorder.count
    listed.run(lambda tx: tx.add_messages([message(P5, 52, 5000)]))
    assert root_recorder.count == count
    assert archive_recorder.view(archive).peer_ids == (P5,)
    assert archive_recorder.update_types(archive) == {ViewUpdateType.GENERIC}


def test_entry_changes_re_emit(listed: Postbox) -> None:
    key = ChatListViewKey(ROOT, count=2)
    _, recorder = open_view(listed, key)

    def first() -> ChatListMessageEntry:
        entry = recorder.view(key).entries[0]
        assert isinstance(entry, ChatListMessageEntry)
        return entry

    writes: list[tuple[Callable[[Transaction], object], Callable[[], bool]]] = [
        (
            lambda tx: tx.update_peers([Peer(P6, "Sam")]),
            lambda: first().peer == Peer(P6, "Sam"),
        ),
        (
            lambda tx: tx.reset_read_state(P6, 0, PeerReadState(1, 0, 60, 3)),
            lambda: getattr(first().read_state, "count", None) == 3,
        ),
        (
            lambda tx: tx.update_notification_settings(P6, PeerNotificationSettings(2**31 - 1)),
            lambda: first().notification_settings == PeerNotificationSettings(2**31 - 1),
        ),
        (
            lambda tx: tx.update_message(MessageId(P6, 0, 60), message(P6, 60, 600, "edited")),
            lambda: getattr(first().message, "text", None) == "edited",
        ),
        (
            lambda tx: tx.update_peer_presences({P6: PeerPresence(PresenceStatus.RECENTLY)}),
            lambda: first().presence == PeerPresence(PresenceStatus.RECENTLY),
        ),
    ]
    for write, check in writes:
        count = recorder.count
        listed.run(write)
        assert recorder.count == count + 1
        assert check()
        assert recorder.update_types(key) == {ViewUpdateType.GENERIC}
        assert first().index.message_index.timestamp == 600
    assert recorder.view(key) == fresh(listed, key)


def test_commits_outside_the_window_do_not_emit(listed: Postbox) -> None:
    key = ChatListViewKey(ROOT, count=3)  # P6 P5 P4, then P3 right below
    _, recorder = open_view(listed, key)
    writes: list[Callable[[Transaction], object]] = [
        lambda tx: tx.update_peers([Peer(P1, "outside")]),
        lambda tx: tx.reset_read_state(P2, 0, PeerReadState(0, 0, 20, 1)),
        lambda tx: tx.update_notification_settings(P1, PeerNotificationSettings(5)),
        lambda tx: tx.update_peer_presences({P3: PeerPresence(PresenceStatus.ONLINE, 1)}),
        lambda tx: tx.add_messages([message(P1, 11, 250)]),  # moves P1 above P2, below P3
        lambda tx: tx.add_messages([message(P3, 31, 350)]),  # P3 stays right below
        lambda tx: tx.add_chat_list_hole(
            ARCHIVE, ChatListHole(MessageIndex(MessageId(P1, 0, 1), 5))
        ),
    ]
    for write in writes:
        listed.run(write)
    assert recorder.count == 1
    assert recorder.view(key) == fresh(listed, key)


def test_chat_list_holes(postbox: Postbox) -> None:
    holes_recorder = Recorder()
    holes_key = ChatListHolesViewKey()
    postbox.combined_view([holes_key], callback=holes_recorder).ready.result()

    def holes() -> frozenset[ChatListHolesEntry]:
        snapshot = holes_recorder.snapshots[-1][holes_key]
        assert isinstance(snapshot, ChatListHolesView)
        return snapshot.entries

    key = ChatListViewKey(ROOT, count=3)
    _, recorder = open_view(postbox, key)
    assert recorder.view(key).entries == (ChatListHoleEntry(ChatListHole.top()),)
    assert holes() == {ChatListHolesEntry(ROOT, ChatListHole.top())}
    assert holes_recorder.count == 2

    lower = ChatListHole(MessageIndex(MessageId(PeerId(0), 0, 1), 50))

    def fill(tx: Transaction) -> None:
        for peer_id, timestamp in ((P1, 100), (P2, 200)):
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion())
            tx.add_messages([message(peer_id, 1, timestamp)])
        tx.remove_chat_list_hole(ROOT, ChatListHole.top())
        tx.add_chat_list_hole(ROOT, lower)

    postbox.run(fill)
    view = recorder.view(key)
    assert view.peer_ids == (P2, P1)
    assert view.entries[-1] == ChatListHoleEntry(lower)
    assert recorder.update_types(key) == {ViewUpdateType.FILL_HOLE}
    assert holes() == {ChatListHolesEntry(ROOT, lower)}
    assert holes_recorder.count == 3

    postbox.run(lambda tx: tx.add_messages([message(P1, 2, 300)]))  # reorders, same hole
    assert recorder.update_types(key) == {ViewUpdateType.GENERIC}
    postbox.run(lambda tx: tx.add_chat_list_hole(ARCHIVE, lower))  # another group, no view
    # A message alone does not list a chat; the inclusion (a commit of its own) does.
    postbox.run(lambda tx: tx.add_messages([message(P3, 1, 10)]))
    postbox.run(lambda tx: tx.update_chat_list_inclusion(P3, ChatListInclusion()))  # below
    postbox.run(lambda tx: tx.add_messages([message(P4, 1, 400)]))
    postbox.run(lambda tx: tx.update_chat_list_inclusion(P4, ChatListInclusion()))  # on top
    view = recorder.view(key)
    assert view.peer_ids == (P4, P1, P2)
    assert view.hole_below == lower  # the hole moved out but still touches the window
    assert holes_recorder.count == 3

    postbox.run(lambda tx: tx.update_chat_list_inclusion(P3, ChatListInclusion(pinning_index=0)))
    assert recorder.view(key).peer_ids == (P3, P4, P1)
    assert recorder.view(key).hole_below is None
    assert holes() == frozenset()
    assert holes_recorder.count == 4
    assert recorder.view(key) == fresh(postbox, key)


def test_count_must_be_positive(postbox: Postbox) -> None:
    subscription = postbox.combined_view([ChatListViewKey(ROOT, count=0)])
    with pytest.raises(InvalidArgumentError):
        subscription.ready.result()


def test_refresh_external_reloads(listed: Postbox) -> None:
    def run(tx: Transaction) -> tuple[bool, bool, ChatListView]:
        view = MutableChatListView(ChatListViewKey(ROOT, count=2), tx)
        unchanged = view.refresh_external(tx)
        tx.update_peers([Peer(P6, "renamed")])
        return unchanged, view.refresh_external(tx), view.immutable()

    unchanged, changed, snapshot = listed.run(run)
    assert (unchanged, changed) == (False, True)
    assert snapshot.update_type == ViewUpdateType.GENERIC
    assert snapshot == fresh(listed, ChatListViewKey(ROOT, count=2))


# -- incremental replay equals recomputation ----------------------------------

Write = Callable[[Transaction], Any]
BELOW = ChatListIndex(None, MessageIndex(MessageId(P3, 0, 5), 150))
KEYS = [
    ChatListViewKey(ROOT, count=1),
    ChatListViewKey(ROOT, count=3),
    ChatListViewKey(ROOT, count=5),
    ChatListViewKey(ROOT, count=2, below=BELOW),
    ChatListViewKey(ROOT, count=4, below=BELOW),
    ChatListViewKey(ARCHIVE, count=2),
]
SOME = PEERS[:4] + [PeerId.make(PeerNamespace.GROUP, 7)]
peers = st.sampled_from(SOME)
groups = st.sampled_from([ROOT, ARCHIVE])
times = st.integers(0, 30).map(lambda n: n * 10)
holes = times.map(lambda t: ChatListHole(MessageIndex(MessageId(PeerId(0), 0, 1), t))) | st.just(
    ChatListHole.top()
)


def _pin(group_id: int, peer_ids: list[PeerId]) -> Write:
    return lambda tx: tx.set_pinned_peer_ids(group_id, peer_ids)


def _edit_top_message(peer_id: PeerId, text: str) -> Write:
    """Edit a chat's top message in place: the chat list does not move."""

    def edit(tx: Transaction) -> None:
        index = tx.get_top_message_index(peer_id)
        stored = None if index is None else tx.get_message(index.id)
        if stored is not None:
            tx.update_message(stored.id, stored.to_store()._replace(text=text))

    return edit


def _clear(peer_id: PeerId) -> Write:
    """Delete a chat's messages: unless pinned or kept by a timestamp, it leaves the list."""
    return lambda tx: tx.delete_messages([MessageId(peer_id, 0, i) for i in range(1, 10)])


writes: st.SearchStrategy[Write] = st.one_of(
    st.builds(
        lambda p, i, t: lambda tx: tx.add_messages([message(p, i, t)]),
        peers,
        st.integers(1, 9),
        times,
    ),
    st.builds(
        lambda p, i: lambda tx: tx.delete_messages([MessageId(p, 0, i)]), peers, st.integers(1, 9)
    ),
    st.builds(
        lambda p, i, t, s: lambda tx: tx.update_message(MessageId(p, 0, i), message(p, i, t, s)),
        peers,
        st.integers(1, 9),
        times,
        st.sampled_from(["x", "y"]),
    ),
    st.builds(
        lambda p, g, pin, mt: (
            lambda tx: tx.update_chat_list_inclusion(p, ChatListInclusion(g, pin, mt))
        ),
        peers,
        groups,
        st.none() | st.integers(0, 2),
        st.none() | times,
    ),
    st.builds(lambda p: lambda tx: tx.update_chat_list_inclusion(p, None), peers),
    st.builds(_edit_top_message, peers, st.sampled_from(["x", "y"])),
    st.builds(_clear, peers),
    st.builds(_pin, groups, st.lists(peers, unique=True, max_size=3)),
    st.builds(
        lambda p, name: lambda tx: tx.update_peers([Peer(p, name)]), peers, st.sampled_from("ab")
    ),
    st.builds(
        lambda p, c: lambda tx: tx.reset_read_state(p, 0, PeerReadState(1, 0, 9, c)),
        peers,
        st.integers(0, 2),
    ),
    st.builds(lambda p, v: lambda tx: tx.set_marked_unread(p, 0, v), peers, st.booleans()),
    st.builds(
        lambda p, m: lambda tx: tx.update_notification_settings(p, PeerNotificationSettings(m)),
        peers,
        st.integers(0, 2),
    ),
    st.builds(
        lambda p, t: (
            lambda tx: tx.update_peer_presences({p: PeerPresence(PresenceStatus.ONLINE, t)})
        ),
        peers,
        st.integers(0, 2),
    ),
    st.builds(lambda g, h: lambda tx: tx.add_chat_list_hole(g, h), groups, holes),
    st.builds(lambda g, h: lambda tx: tx.remove_chat_list_hole(g, h), groups, holes),
)


def _run_all(batch: list[Write]) -> Write:
    def run(tx: Transaction) -> None:
        for write in batch:
            write(tx)

    return run


@settings(max_examples=200)
@given(st.lists(st.lists(writes, min_size=1, max_size=3), max_size=10))
def test_live_snapshot_equals_a_fresh_one(batches: list[list[Write]]) -> None:
    with tempfile.TemporaryDirectory() as directory, Postbox(Path(directory) / "p.db") as postbox:
        live = postbox.combined_view([*KEYS, ChatListHolesViewKey()])
        live.ready.result()
        for batch in batches:
            postbox.run(_run_all(batch))
            latest = live.latest
            assert latest is not None
            boundary: set[ChatListHolesEntry] = set()
            for key in KEYS:
                expected = fresh(postbox, key)
                assert latest[key] == expected, key
                boundary |= expected.boundary_holes
            holes_view = latest[ChatListHolesViewKey()]
            assert isinstance(holes_view, ChatListHolesView)
            assert holes_view.entries == boundary
        live.dispose()
