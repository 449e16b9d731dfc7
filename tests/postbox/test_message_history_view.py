"""The message history view: anchors, windows, holes, update types and live replay."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from postbox import (
    MAX_MESSAGE_ID,
    ClosedRange,
    ForwardInfo,
    InvalidArgumentError,
    Message,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageId,
    MessageIndex,
    MessageTags,
    Peer,
    PeerId,
    PeerNamespace,
    PeerReadState,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.view_keys import HistoryAnchor, MessageHistoryHolesViewKey, MessageHistoryViewKey
from postbox.views.holes_views import (
    HoleDirection,
    MessageHistoryHolesEntry,
    MessageHistoryHolesView,
)
from postbox.views.message_history_view import MessageHistoryView, MutableMessageHistoryView
from postbox.views.subscription import CombinedView, Subscription
from postbox.views.view import ViewUpdateType

EVERYWHERE = MessageHistoryHoleSpace.everywhere()
PHOTO = int(MessageTags.PHOTO)
PHOTOS = MessageHistoryHoleSpace.tagged(PHOTO)


def store(peer: PeerId, id_: int, *, incoming: bool = False, tags: int = 0) -> StoreMessage:
    flags = int(MessageFlags.INCOMING) if incoming else 0
    return StoreMessage(peer, 0, id_, 1000 + 10 * id_, flags, tags, text=f"message {id_}")


def index(peer: PeerId, id_: int) -> MessageIndex:
    return MessageIndex(MessageId(peer, 0, id_), 1000 + 10 * id_)


def fill(
    postbox: Postbox,
    peer: PeerId,
    ids: Iterable[int],
    *,
    holes: Iterable[tuple[int, int]] = (),
    incoming: bool = False,
    tags: Callable[[int], int] = lambda id_: 0,
) -> None:
    """Store messages ``ids`` in a chat whose history is otherwise known, except ``holes``."""

    def fn(tx: Transaction) -> None:
        tx.remove_hole(peer, 0, EVERYWHERE, 1, MAX_MESSAGE_ID)
        tx.add_messages([store(peer, i, incoming=incoming, tags=tags(i)) for i in ids])
        for lower, upper in holes:
            tx.add_hole(peer, 0, EVERYWHERE, lower, upper)

    postbox.run(fn)


class Opened:
    """A live subscription to one key, recording every snapshot it delivers."""

    def __init__(self, postbox: Postbox, key: MessageHistoryViewKey) -> None:
        self.postbox = postbox
        self.key = key
        self.snapshots: list[CombinedView] = []
        self.subscription: Subscription = postbox.combined_view([key], self.snapshots.append)
        self.subscription.ready.result()

    @property
    def view(self) -> MessageHistoryView:
        snapshot = self.snapshots[-1][self.key]
        assert isinstance(snapshot, MessageHistoryView)
        return snapshot

    @property
    def emitted(self) -> int:
        return len(self.snapshots) - 1

    @property
    def ids(self) -> list[int]:
        return ids_of(self.view)

    def fresh(self) -> MessageHistoryView:
        return fresh(self.postbox, self.key)


def fresh(postbox: Postbox, key: MessageHistoryViewKey) -> MessageHistoryView:
    return postbox.run(lambda tx: MutableMessageHistoryView(key, tx).immutable())


def ids_of(view: MessageHistoryView) -> list[int]:
    return [message.index.id.id for message in view.entries]


def key_at(
    peer: PeerId, anchor: HistoryAnchor, count: int = 3, tag: int = 0
) -> MessageHistoryViewKey:
    return MessageHistoryViewKey(peer, anchor, count=count, tag=tag)


# -- anchors and windows ---------------------------------------------------------


def test_upper_bound_shows_the_newest_messages(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=5))
    view = opened.view
    assert opened.ids == [16, 17, 18, 19, 20]
    assert view.earlier_id == index(alice, 15) and view.later_id is None
    assert not (view.hole_earlier or view.hole_later or view.is_loading)
    assert view.first_hole is None and view.peer_id == alice
    assert view.anchor_index == MessageIndex.absolute_upper_bound(alice)
    assert view.update_type == ViewUpdateType.INITIAL
    assert opened.snapshots[0].update_types[opened.key] == {ViewUpdateType.INITIAL}


def test_lower_bound_shows_the_oldest_messages(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21))
    view = fresh(postbox, key_at(alice, HistoryAnchor.lower_bound(), count=5))
    assert ids_of(view) == [1, 2, 3, 4, 5]
    assert view.earlier_id is None and view.later_id == index(alice, 6)


def test_an_index_anchor_takes_count_on_each_side(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21))
    view = fresh(postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 10))))
    assert ids_of(view) == [8, 9, 10, 11, 12, 13]
    assert view.earlier_id == index(alice, 7) and view.later_id == index(alice, 14)
    assert view.anchor_index == index(alice, 10)


def test_a_message_anchor_takes_count_on_each_side(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21))
    key = key_at(alice, HistoryAnchor.at_message(MessageId(alice, 0, 10)))
    assert ids_of(fresh(postbox, key)) == [8, 9, 10, 11, 12, 13]
    # Deleted, the message still anchors the window where it was.
    postbox.run(lambda tx: tx.delete_messages([MessageId(alice, 0, 10)]))
    assert ids_of(fresh(postbox, key)) == [7, 8, 9, 11, 12, 13]


def test_first_unread_anchors_at_the_oldest_unread_incoming(
    postbox: Postbox, alice: PeerId
) -> None:
    fill(postbox, alice, range(1, 21), incoming=True)
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 12)))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.first_unread()))
    assert opened.ids == [11, 12, 13, 14, 15, 16]
    assert opened.view.anchor_index == index(alice, 13)
    assert opened.view.update_type == ViewUpdateType.initial_unread(index(alice, 13))
    assert opened.view.read_state is not None
    assert opened.view.read_state.get(0) == PeerReadState(12, 0, 20, 8)
    # Reading everything: the anchor falls back to the upper bound.
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 20)))
    assert opened.ids == [18, 19, 20]
    assert opened.view.update_type == ViewUpdateType.GENERIC
    assert opened.view == opened.fresh()
    assert fresh(postbox, opened.key).update_type == ViewUpdateType.INITIAL


def test_first_unread_skips_outgoing_messages(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11), incoming=True)
    postbox.run(lambda tx: tx.add_messages([store(alice, 11), store(alice, 12, incoming=True)]))
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(alice, 0, 10)))
    view = fresh(postbox, key_at(alice, HistoryAnchor.first_unread(), count=1))
    assert view.anchor_index == index(alice, 12) and ids_of(view) == [12]


@pytest.mark.parametrize(
    ("anchor", "count", "expected"),
    [
        (lambda peer: HistoryAnchor.upper_bound(), 1, [5]),
        (lambda peer: HistoryAnchor.upper_bound(), 50, [1, 2, 3, 4, 5]),
        (lambda peer: HistoryAnchor.lower_bound(), 50, [1, 2, 3, 4, 5]),
        (lambda peer: HistoryAnchor.at_message(MessageId(peer, 0, 1)), 2, [1, 2, 3]),
        (lambda peer: HistoryAnchor.at_message(MessageId(peer, 0, 5)), 2, [4, 5]),
    ],
)
def test_windows_are_clipped_at_both_ends(
    postbox: Postbox,
    alice: PeerId,
    anchor: Callable[[PeerId], HistoryAnchor],
    count: int,
    expected: list[int],
) -> None:
    fill(postbox, alice, range(1, 6))
    view = fresh(postbox, key_at(alice, anchor(alice), count=count))
    assert ids_of(view) == expected
    assert not (view.hole_earlier or view.hole_later)
    assert view.earlier_id == (index(alice, expected[0] - 1) if expected[0] > 1 else None)
    assert view.later_id == (index(alice, expected[-1] + 1) if expected[-1] < 5 else None)


def test_bad_keys_are_refused(postbox: Postbox, alice: PeerId, bob: PeerId) -> None:
    for key in (
        key_at(alice, HistoryAnchor.upper_bound(), count=0),
        key_at(alice, HistoryAnchor.at_message(MessageId(bob, 0, 1))),
        key_at(alice, HistoryAnchor.at_index(MessageIndex(MessageId(alice, 1, 1), 0))),
    ):
        with pytest.raises(InvalidArgumentError):
            fresh(postbox, key)


# -- holes -------------------------------------------------------------------------


def test_holes_cut_the_window_and_the_nearest_is_the_first_hole(
    postbox: Postbox, alice: PeerId
) -> None:
    fill(postbox, alice, [*range(1, 11), *range(16, 31)], holes=[(11, 15)])
    hole = ClosedRange(11, 15)
    view = fresh(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=10))
    assert ids_of(view) == list(range(21, 31)) and view.earlier_id == index(alice, 20)
    assert not view.hole_earlier and view.first_hole is None

    view = fresh(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=20))
    assert ids_of(view) == list(range(16, 31))
    assert view.hole_earlier and view.earlier_id is None and not view.hole_later
    assert view.first_hole == MessageHistoryHolesEntry(
        alice, 0, EVERYWHERE, hole, HoleDirection.OLDER, 15, 20
    )

    view = fresh(postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 10))))
    assert ids_of(view) == [8, 9, 10]
    assert view.hole_later and view.later_id is None and not view.hole_earlier
    assert view.first_hole == MessageHistoryHolesEntry(
        alice, 0, EVERYWHERE, hole, HoleDirection.NEWER, 11, 3
    )


def test_messages_stored_inside_a_hole_are_clipped(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 31), holes=[(11, 15)])
    view = fresh(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=30))
    assert ids_of(view) == list(range(16, 31)) and view.hole_earlier
    view = fresh(postbox, key_at(alice, HistoryAnchor.lower_bound(), count=30))
    assert ids_of(view) == list(range(1, 11)) and view.hole_later


def test_an_anchor_in_a_hole_is_loading_around_it(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 31), holes=[(11, 15)])
    view = fresh(postbox, key_at(alice, HistoryAnchor.at_message(MessageId(alice, 0, 13))))
    assert view.is_loading and view.entries == () and view.hole_earlier and view.hole_later
    assert view.first_hole == MessageHistoryHolesEntry(
        alice, 0, EVERYWHERE, ClosedRange(11, 15), HoleDirection.AROUND, 13, 3
    )


def test_a_chat_never_fetched_is_loading_at_the_top(postbox: Postbox, alice: PeerId) -> None:
    view = fresh(postbox, key_at(alice, HistoryAnchor.upper_bound()))
    assert view.is_loading and view.entries == ()
    assert view.first_hole == MessageHistoryHolesEntry(
        alice,
        0,
        EVERYWHERE,
        ClosedRange(1, MAX_MESSAGE_ID),
        HoleDirection.AROUND,
        MAX_MESSAGE_ID,
        3,
    )


def test_the_first_hole_is_the_one_nearest_the_anchor(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 41), holes=[(5, 8), (30, 33)])
    view = fresh(postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 20)), count=20))
    assert ids_of(view) == list(range(9, 30)) and view.hole_earlier and view.hole_later
    assert view.first_hole is not None
    assert (view.first_hole.direction, view.first_hole.hole) == (
        HoleDirection.NEWER,
        ClosedRange(30, 33),
    )
    view = fresh(postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 12)), count=20))
    assert view.first_hole is not None
    assert (view.first_hole.direction, view.first_hole.hole) == (
        HoleDirection.OLDER,
        ClosedRange(5, 8),
    )


def test_the_holes_singleton_lists_first_holes_and_emits_on_change(
    postbox: Postbox, alice: PeerId, bob: PeerId
) -> None:
    fill(postbox, alice, range(21, 31), holes=[(1, 20)])
    fill(postbox, bob, range(11, 21), holes=[(1, 10)])
    holes: list[CombinedView] = []
    holes_key = MessageHistoryHolesViewKey()
    postbox.combined_view([holes_key], holes.append).ready.result()

    def listed() -> frozenset[MessageHistoryHolesEntry]:
        snapshot = holes[-1][holes_key]
        assert isinstance(snapshot, MessageHistoryHolesView)
        return snapshot.entries

    chat_a = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=20))
    chat_b = Opened(postbox, key_at(bob, HistoryAnchor.upper_bound(), count=20))
    assert chat_a.view.first_hole is not None and chat_b.view.first_hole is not None
    assert listed() == {chat_a.view.first_hole, chat_b.view.first_hole}
    emitted = len(holes)

    def fill_alice(tx: Transaction) -> None:
        tx.remove_hole(alice, 0, EVERYWHERE, 1, 20)
        tx.add_messages([store(alice, i) for i in range(1, 21)])

    postbox.run(fill_alice)
    assert chat_a.view.first_hole is None and chat_a.ids == list(range(11, 31))
    assert len(holes) == emitted + 1 and listed() == {chat_b.view.first_hole}
    # A new message in bob's chat moves his window, not his first hole: no emission.
    postbox.run(lambda tx: tx.add_messages([store(bob, 21)]))
    assert chat_b.ids == list(range(11, 22)) and len(holes) == emitted + 1
    chat_b.subscription.dispose()
    postbox.run(lambda tx: None)  # the removal is queued before this
    assert len(holes) == emitted + 2 and listed() == frozenset()


# -- live replay ---------------------------------------------------------------------


def test_a_new_message_slides_an_upper_bound_window(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=5))
    postbox.run(lambda tx: tx.add_messages([store(alice, 11)]))
    assert opened.emitted == 1 and opened.ids == [7, 8, 9, 10, 11]
    assert opened.view.update_type == ViewUpdateType.GENERIC
    assert opened.snapshots[-1].update_types[opened.key] == {ViewUpdateType.GENERIC}
    assert opened.view == opened.fresh()


def test_a_window_in_the_middle_keeps_its_anchor(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 5)), count=2))
    assert opened.ids == [4, 5, 6, 7]
    postbox.run(lambda tx: tx.add_messages([store(alice, 11)]))
    # It re-emits for the read state (a new known id), with the same window.
    assert opened.emitted == 1 and opened.ids == [4, 5, 6, 7]
    postbox.run(lambda tx: tx.delete_messages([MessageId(alice, 0, 6)]))
    assert opened.emitted == 2 and opened.ids == [4, 5, 7, 8]
    assert opened.view.later_id == index(alice, 9) and opened.view == opened.fresh()


def test_an_edit_in_the_window_is_generic(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound()))
    edited = store(alice, 9)._replace(text="edited")
    postbox.run(lambda tx: tx.update_message(MessageId(alice, 0, 9), edited))
    assert opened.emitted == 1 and opened.view.entries[1].text == "edited"
    assert opened.view.update_type == ViewUpdateType.GENERIC


def test_a_hole_fill_is_fill_hole(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(21, 31), holes=[(1, 20)])
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=20))
    assert opened.view.hole_earlier

    def fill_hole(tx: Transaction) -> None:
        tx.remove_hole(alice, 0, EVERYWHERE, 11, 20)
        tx.add_messages([store(alice, i) for i in range(11, 21)])

    postbox.run(fill_hole)
    assert opened.emitted == 1 and opened.ids == list(range(11, 31))
    assert opened.view.update_type == ViewUpdateType.FILL_HOLE
    assert opened.snapshots[-1].update_types[opened.key] == {ViewUpdateType.FILL_HOLE}
    assert opened.view.hole_earlier and opened.view.first_hole is not None
    assert opened.view.first_hole.hole == ClosedRange(1, 10)
    assert opened.view == opened.fresh()


def test_a_hole_added_inside_an_open_window_shows_up(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=20))
    postbox.run(lambda tx: tx.add_hole(alice, 0, EVERYWHERE, 8, 12))
    assert opened.emitted == 1 and opened.ids == list(range(13, 21))
    assert opened.view.update_type == ViewUpdateType.FILL_HOLE
    assert opened.view.first_hole is not None
    assert opened.view.first_hole.hole == ClosedRange(8, 12)
    assert opened.view == opened.fresh()


def test_read_states_update_the_view(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound()))
    postbox.run(lambda tx: tx.apply_outgoing_read_max_id(MessageId(alice, 0, 9)))
    assert opened.emitted == 1 and opened.view.read_state is not None
    assert opened.view.read_state.get(0) == PeerReadState(0, 9, 10, 0)


def test_commits_elsewhere_do_not_emit(
    postbox: Postbox, alice: PeerId, bob: PeerId, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(postbox, alice, [1, 2, 3, 4, 6, 7, 8, 9, 10])
    fill(postbox, bob, range(1, 11))
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound()))
    photos = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), tag=PHOTO))
    loads = 0
    load = MutableMessageHistoryView._load

    def counting_load(self: MutableMessageHistoryView, tx: Transaction) -> object:
        nonlocal loads
        loads += 1
        return load(self, tx)

    monkeypatch.setattr(MutableMessageHistoryView, "_load", counting_load)
    postbox.run(lambda tx: tx.add_messages([store(bob, 11, incoming=True)]))
    postbox.run(lambda tx: tx.apply_incoming_read_max_id(MessageId(bob, 0, 11)))
    postbox.run(lambda tx: tx.add_hole(bob, 0, EVERYWHERE, 5, 6))
    # Another namespace of the same chat.
    postbox.run(lambda tx: tx.add_messages([store(alice, 1)._replace(namespace=1, id=None)]))
    assert (opened.emitted, photos.emitted, loads) == (0, 0, 0)
    # A message without the tag, below the window: the photo view ignores it, the chat
    # view places it past its earlier boundary without reading its window again.
    postbox.run(lambda tx: tx.add_messages([store(alice, 5)]))
    assert (opened.emitted, photos.emitted, loads) == (0, 0, 0)
    postbox.run(lambda tx: tx.add_messages([store(alice, 11)]))
    assert opened.emitted == 1 and opened.ids == [9, 10, 11] and loads == 0


def test_tag_windows_list_tagged_messages_and_tag_holes(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 21), tags=lambda id_: PHOTO if id_ % 2 == 0 else 0)
    opened = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), tag=PHOTO))
    assert opened.ids == [16, 18, 20] and opened.view.earlier_id == index(alice, 14)
    middle = fresh(
        postbox, key_at(alice, HistoryAnchor.at_index(index(alice, 9)), count=2, tag=PHOTO)
    )
    assert ids_of(middle) == [6, 8, 10, 12]
    # A hole in the photo space only: the tag window stops there, the chat does not.
    everything = Opened(postbox, key_at(alice, HistoryAnchor.upper_bound(), count=20))
    postbox.run(lambda tx: tx.add_hole(alice, 0, PHOTOS, 15, 17))
    assert opened.ids == [18, 20] and opened.view.hole_earlier
    assert opened.view.update_type == ViewUpdateType.FILL_HOLE
    assert opened.view.first_hole == MessageHistoryHolesEntry(
        alice, 0, PHOTOS, ClosedRange(15, 17), HoleDirection.OLDER, 17, 3
    )
    assert everything.emitted == 0
    # Losing the tag takes a message out of the tag window.
    postbox.run(lambda tx: tx.update_message(MessageId(alice, 0, 20), store(alice, 20)))
    assert opened.ids == [18] and opened.view == opened.fresh()


def test_refresh_external_reloads(postbox: Postbox, alice: PeerId) -> None:
    fill(postbox, alice, range(1, 11))
    key = key_at(alice, HistoryAnchor.upper_bound())
    view = postbox.run(lambda tx: MutableMessageHistoryView(key, tx))
    assert postbox.run(view.refresh_external) is False
    postbox.run(lambda tx: tx.add_messages([store(alice, 11)]))
    assert postbox.run(view.refresh_external) is True
    assert view.update_type == ViewUpdateType.GENERIC and ids_of(view.immutable()) == [9, 10, 11]
    assert view.immutable() == fresh(postbox, key)


# -- random transactions: a live view equals a fresh one -------------------------------

PEER = PeerId.make(PeerNamespace.USER, 7)
OTHER = PeerId.make(PeerNamespace.USER, 8)
KEYS = [
    key_at(PEER, HistoryAnchor.upper_bound()),
    key_at(PEER, HistoryAnchor.lower_bound(), count=4),
    key_at(PEER, HistoryAnchor.at_index(MessageIndex(MessageId(PEER, 0, 12), 120)), count=2),
    key_at(PEER, HistoryAnchor.at_message(MessageId(PEER, 0, 9))),
    key_at(PEER, HistoryAnchor.first_unread(), count=2),
    key_at(PEER, HistoryAnchor.upper_bound(), tag=PHOTO),
    key_at(PEER, HistoryAnchor.at_message(MessageId(PEER, 0, 15)), count=2, tag=PHOTO),
]
ids = st.integers(1, 30)
spaces = st.sampled_from([EVERYWHERE, EVERYWHERE, PHOTOS])


class LiveEqualsFresh(RuleBasedStateMachine):
    """Open views replay random commits; after each, every one equals a fresh open."""

    def __init__(self) -> None:
        super().__init__()
        self.postbox = Postbox(None)
        self.opened: list[Opened] = []

    @initialize(stored=st.sets(ids, max_size=20), opened_first=st.booleans())
    def start(self, stored: set[int], opened_first: bool) -> None:
        if opened_first:
            self.opened = [Opened(self.postbox, key) for key in KEYS]
        fill(self.postbox, PEER, sorted(stored), tags=lambda id_: PHOTO * (id_ % 3 == 0))
        if not opened_first:
            self.opened = [Opened(self.postbox, key) for key in KEYS]

    @rule(
        new=st.lists(
            st.tuples(ids, st.integers(0, 400), st.booleans(), st.sampled_from([0, PHOTO])),
            max_size=5,
        ),
        peer=st.sampled_from([PEER, PEER, OTHER]),
    )
    def add(self, new: list[tuple[int, int, bool, int]], peer: PeerId) -> None:
        messages = [
            StoreMessage(peer, 0, i, ts, int(MessageFlags.INCOMING) * incoming, tags)
            for i, ts, incoming, tags in new
        ]
        self.postbox.run(lambda tx: tx.add_messages(messages))

    @rule(removed=st.lists(ids, max_size=4))
    def delete(self, removed: list[int]) -> None:
        self.postbox.run(lambda tx: tx.delete_messages([MessageId(PEER, 0, i) for i in removed]))

    @rule(id_=ids, tags=st.sampled_from([0, PHOTO]), ts=st.integers(0, 400))
    def edit(self, id_: int, tags: int, ts: int) -> None:
        update = StoreMessage(PEER, 0, id_, ts, 0, tags, text="edited")
        self.postbox.run(lambda tx: tx.update_message(MessageId(PEER, 0, id_), update))

    @rule(lower=ids, length=st.integers(0, 6), space=spaces, add=st.booleans())
    def hole(self, lower: int, length: int, space: MessageHistoryHoleSpace, add: bool) -> None:
        change = Transaction.add_hole if add else Transaction.remove_hole
        self.postbox.run(lambda tx: change(tx, PEER, 0, space, lower, lower + length))

    @rule(lower=ids, length=st.integers(0, 6), new=st.lists(ids, max_size=4))
    def fill_hole(self, lower: int, length: int, new: list[int]) -> None:
        def fn(tx: Transaction) -> None:
            tx.remove_hole(PEER, 0, EVERYWHERE, lower, lower + length)
            tx.add_messages([StoreMessage(PEER, 0, i, 10 * i, tags=PHOTO) for i in new])

        self.postbox.run(fn)

    @rule(max_id=ids, incoming=st.booleans())
    def read(self, max_id: int, incoming: bool) -> None:
        apply = (
            Transaction.apply_incoming_read_max_id
            if incoming
            else Transaction.apply_outgoing_read_max_id
        )
        self.postbox.run(lambda tx: apply(tx, MessageId(PEER, 0, max_id)))

    @invariant()
    def live_equals_fresh(self) -> None:
        for opened in self.opened:
            view = opened.view
            assert view == opened.fresh(), opened.key
            assert (ids_of(view), view.hole_earlier, view.hole_later) == self.reference(
                opened.key, view.anchor_index
            ), opened.key

    def reference(
        self, key: MessageHistoryViewKey, anchor: MessageIndex
    ) -> tuple[list[int], bool, bool]:
        """The window around ``anchor`` by the docstring's rules, over every message."""
        space = MessageHistoryHoleSpace.tagged(key.tag) if key.tag else EVERYWHERE

        def read(tx: Transaction) -> tuple[list[Message], list[ClosedRange]]:
            return tx.get_messages(PEER, 0), tx.get_holes(PEER, 0, space)

        messages, holes = self.postbox.run(read)
        messages = [m for m in messages if not key.tag or m.tags & key.tag]
        anchor_id = min(max(anchor.id.id, 1), MAX_MESSAGE_ID)

        def hole_between(a: int, b: int) -> bool:
            return any(hole.overlaps(ClosedRange(min(a, b), max(a, b))) for hole in holes)

        if hole_between(anchor_id, anchor_id):
            return [], True, True

        def side(candidates: list[Message], end: int) -> tuple[list[int], bool]:
            taken: list[int] = []
            previous = anchor_id
            for message in candidates:
                if hole_between(previous, message.index.id.id):
                    return taken, True
                if len(taken) == key.count:
                    return taken, False
                previous = message.index.id.id
                taken.append(previous)
            return taken, hole_between(previous, end)

        older, hole_earlier = side([m for m in reversed(messages) if m.index <= anchor], 1)
        newer, hole_later = side([m for m in messages if m.index > anchor], MAX_MESSAGE_ID)
        return older[::-1] + newer, hole_earlier, hole_later

    def teardown(self) -> None:
        self.postbox.close()


LiveEqualsFresh.TestCase.settings = settings(max_examples=40, stateful_step_count=15)
test_live_view_equals_a_fresh_one = LiveEqualsFresh.TestCase


# -- the peers a window names ------------------------------------------------------


def test_a_window_carries_its_authors_and_follows_a_rename(postbox: Postbox) -> None:
    group = PeerId.make(PeerNamespace.GROUP, 40)
    ana, ben, cleo = (PeerId.make(PeerNamespace.USER, i) for i in (41, 42, 43))

    def seed(tx: Transaction) -> None:
        tx.update_peers([Peer(ana, "Ana"), Peer(ben, "Ben")])
        tx.remove_hole(group, 0, EVERYWHERE, 1, MAX_MESSAGE_ID)
        tx.add_messages(
            [
                StoreMessage(group, 0, 1, 1_000, author_id=ana, text="hi"),
                StoreMessage(
                    group, 0, 2, 1_010, author_id=ben, text="fwd",
                    forward_info=ForwardInfo(cleo, 900),
                ),
            ]
        )  # fmt: skip

    postbox.run(seed)
    opened = Opened(postbox, key_at(group, HistoryAnchor.upper_bound(), count=10))
    assert {int(p): peer.name for p, peer in opened.view.peers.items()} == {
        int(ana): "Ana",
        int(ben): "Ben",
    }
    # A rename re-emits the window; so does the first sight of a peer it named.
    postbox.run(lambda tx: tx.update_peers([Peer(ana, "Ana Silva")]))
    assert opened.view.peers[ana].name == "Ana Silva"
    assert opened.view.update_type == ViewUpdateType.GENERIC
    postbox.run(lambda tx: tx.update_peers([Peer(cleo, "Cleo")]))
    assert opened.view.peers[cleo].name == "Cleo"
    # A peer it does not name wakes nothing.
    emitted = opened.emitted
    postbox.run(lambda tx: tx.update_peers([Peer(PeerId.make(PeerNamespace.USER, 99), "Zed")]))
    assert opened.emitted == emitted
    assert opened.view == opened.fresh()


def test_a_hole_two_windows_share_is_listed_until_both_close(
    postbox: Postbox, alice: PeerId
) -> None:
    fill(postbox, alice, range(21, 31), holes=[(1, 20)])
    holes: list[CombinedView] = []
    holes_key = MessageHistoryHolesViewKey()
    postbox.combined_view([holes_key], holes.append).ready.result()

    def listed() -> frozenset[MessageHistoryHolesEntry]:
        snapshot = holes[-1][holes_key]
        assert isinstance(snapshot, MessageHistoryHolesView)
        return snapshot.entries

    key = key_at(alice, HistoryAnchor.upper_bound(), count=20)
    first, second = Opened(postbox, key), Opened(postbox, key)
    wanted = first.view.first_hole
    assert wanted is not None and listed() == {wanted}
    first.subscription.dispose()
    postbox.run(lambda tx: None)
    assert listed() == {wanted}
    second.subscription.dispose()
    postbox.run(lambda tx: None)
    assert listed() == frozenset()
