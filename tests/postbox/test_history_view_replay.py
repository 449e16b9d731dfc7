"""History windows replayed in place equal windows opened fresh, after every commit.

The history view applies a commit's messages to its window without reading it again
where it can; these tests drive random commits (messages added, deleted and edited,
read states, holes, renames of the peers messages name) through windows of every
anchor kind, with and without a tag, and compare each live snapshot with a fresh one.
They also check that the common commits are applied in place.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import (
    MAX_MESSAGE_ID,
    ForwardInfo,
    HistoryAnchor,
    Media,
    MediaKind,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryHolesViewKey,
    MessageHistoryViewKey,
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
from postbox.view_keys import AnyViewKey
from postbox.views.message_history_view import MessageHistoryView, MutableMessageHistoryView
from postbox.views.subscription import CombinedView
from tests.postbox.live_views import assert_live_views_equal_fresh, fresh

CHAT = PeerId.make(PeerNamespace.GROUP, 50)
AUTHORS = [PeerId.make(PeerNamespace.USER, i) for i in (61, 62, 63)]
PHOTO = int(MessageTags.PHOTO)
EVERYWHERE = MessageHistoryHoleSpace.everywhere()
PHOTOS = MessageHistoryHoleSpace.tagged(PHOTO)
IDS = st.integers(1, 24)

Write = Callable[[Transaction], Any]


def history_keys() -> list[AnyViewKey]:
    """Every anchor kind, with and without the photo tag, in small and larger windows."""
    keys: list[AnyViewKey] = [MessageHistoryHolesViewKey()]
    anchors = [
        HistoryAnchor.upper_bound(),
        HistoryAnchor.lower_bound(),
        HistoryAnchor.first_unread(),
        HistoryAnchor.at_index(MessageIndex(MessageId(CHAT, 0, 9), 109)),
        HistoryAnchor.at_message(MessageId(CHAT, 0, 12)),
    ]
    for anchor in anchors:
        for count in (1, 3, 6):
            keys.append(MessageHistoryViewKey(CHAT, anchor, count=count))
        keys.append(MessageHistoryViewKey(CHAT, anchor, count=2, tag=PHOTO))
        keys.append(MessageHistoryViewKey(CHAT, anchor, count=4, tag=PHOTO))
    return keys


def _message(
    id_: int, shift: int, incoming: bool, tagged: bool, author: int, forward: bool
) -> StoreMessage:
    return StoreMessage(
        CHAT,
        0,
        id_,
        # Mostly in id order; a shift puts a message's time out of its id's order.
        100 + id_ + shift,
        int(MessageFlags.INCOMING) if incoming else 0,
        PHOTO if tagged else 0,
        author_id=AUTHORS[author].id,
        text=f"m{id_}",
        forward_info=ForwardInfo(AUTHORS[(author + 1) % 3].id, 50) if forward else None,
    )


messages = st.builds(
    _message,
    IDS,
    st.sampled_from([0, 0, 0, 0, -5, 7]),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2),
    st.booleans(),
)


def _add(batch: list[StoreMessage]) -> Write:
    return lambda tx: tx.add_messages(batch)


def _delete(ids: list[int]) -> Write:
    return lambda tx: tx.delete_messages([MessageId(CHAT, 0, i) for i in ids])


def _edit(message: StoreMessage) -> Write:
    def write(tx: Transaction) -> None:
        assert message.id is not None
        tx.update_message(MessageId(CHAT, 0, message.id), message)

    return write


def _hole(add: bool, tagged: bool, lower: int, length: int) -> Write:
    space = PHOTOS if tagged else EVERYWHERE
    upper = min(lower + length, 30)
    if add:
        return lambda tx: tx.add_hole(CHAT, 0, space, lower, upper)
    return lambda tx: tx.remove_hole(CHAT, 0, space, lower, upper)


def _rename(author: int, name: str) -> Write:
    return lambda tx: tx.update_peers([Peer(AUTHORS[author], name)])


def _read(id_: int) -> Write:
    return lambda tx: tx.apply_incoming_read_max_id(MessageId(CHAT, 0, id_))


def _reset_read(id_: int, count: int) -> Write:
    return lambda tx: tx.reset_read_state(CHAT, 0, PeerReadState(id_, 0, 30, count))


def _other_namespace(incoming: bool) -> Write:
    flags = int(MessageFlags.INCOMING) if incoming else 0
    return lambda tx: tx.add_messages([StoreMessage(CHAT, 1, None, 300, flags)])


writes: st.SearchStrategy[Write] = st.one_of(
    st.builds(_add, st.lists(messages, min_size=1, max_size=4)),
    st.builds(_add, st.lists(messages, min_size=1, max_size=4)),
    st.builds(_delete, st.lists(IDS, min_size=1, max_size=3)),
    st.builds(_edit, messages),
    st.builds(_hole, st.booleans(), st.booleans(), IDS, st.integers(0, 6)),
    st.builds(_rename, st.integers(0, 2), st.sampled_from("xyz")),
    st.builds(_read, IDS),
    st.builds(_reset_read, st.integers(0, 24), st.integers(0, 5)),
    st.builds(_other_namespace, st.booleans()),
)


def _start(tx: Transaction, batch: list[StoreMessage], holes: bool) -> None:
    tx.update_peers([Peer(AUTHORS[0], "a")])
    tx.remove_hole(CHAT, 0, EVERYWHERE, 1, MAX_MESSAGE_ID)
    tx.remove_hole(CHAT, 0, PHOTOS, 1, MAX_MESSAGE_ID)
    if holes:
        tx.add_hole(CHAT, 0, EVERYWHERE, 40, MAX_MESSAGE_ID)
    tx.add_messages(batch)


@pytest.fixture
def counted_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times history views read their window again (one slot, mutated)."""
    loads = [0]
    load = MutableMessageHistoryView._load

    def counting(self: MutableMessageHistoryView, tx: Transaction) -> bool:
        loads[0] += 1
        return load(self, tx)

    monkeypatch.setattr(MutableMessageHistoryView, "_load", counting)
    yield loads


@settings(max_examples=100, deadline=None)
@given(
    st.lists(messages, max_size=20),
    st.booleans(),
    st.lists(st.lists(writes, min_size=1, max_size=3), min_size=1, max_size=10),
)
def test_history_windows_replayed_in_place_equal_fresh_windows(
    start: list[StoreMessage], holes: bool, commits: list[list[Write]]
) -> None:
    with tempfile.TemporaryDirectory() as directory, Postbox(Path(directory) / "p.db") as postbox:
        postbox.run(lambda tx: _start(tx, start, holes))
        assert_live_views_equal_fresh(postbox, history_keys(), commits)


# -- what is applied in place ------------------------------------------------------


def _store(id_: int, *, incoming: bool = True, tags: int = 0, author: int = 0) -> StoreMessage:
    return _message(id_, 0, incoming, bool(tags), author, False)


def _fill(postbox: Postbox, ids: range) -> None:
    postbox.run(lambda tx: _start(tx, [_store(i) for i in ids], False))


def _open(postbox: Postbox, key: MessageHistoryViewKey) -> list[MessageHistoryView]:
    views: list[MessageHistoryView] = []

    def keep(snapshot: CombinedView) -> None:
        views.append(snapshot[key])

    postbox.combined_view([key], callback=keep).ready.result()
    return views


def test_new_deleted_and_edited_messages_are_applied_without_reading_the_window(
    postbox: Postbox, counted_loads: list[int]
) -> None:
    _fill(postbox, range(1, 21))
    key = MessageHistoryViewKey(CHAT, HistoryAnchor.upper_bound(), count=5)
    views = _open(postbox, key)
    counted_loads[0] = 0
    postbox.run(lambda tx: tx.add_messages([_store(21, author=1)]))
    postbox.run(lambda tx: tx.update_peers([Peer(AUTHORS[1], "renamed")]))
    postbox.run(_edit(_store(19, author=2)._replace(text="edited")))
    postbox.run(_delete([18]))
    postbox.run(_read(21))
    assert counted_loads[0] == 0
    latest = views[-1]
    assert [m.id.id for m in latest.entries] == [16, 17, 19, 20, 21]
    assert latest.entries[2].text == "edited"
    assert latest.earlier_id == MessageIndex(MessageId(CHAT, 0, 15), 115)
    assert latest.peers[AUTHORS[1]].name == "renamed"
    assert latest == fresh(postbox, key)


def test_a_window_at_the_first_unread_keeps_its_anchor_in_place(
    postbox: Postbox, counted_loads: list[int]
) -> None:
    _fill(postbox, range(1, 21))
    postbox.run(_read(10))
    key = MessageHistoryViewKey(CHAT, HistoryAnchor.first_unread(), count=3)
    views = _open(postbox, key)
    counted_loads[0] = 0
    # Newer than the first unread: the anchor stays, the window's newer side grows.
    postbox.run(lambda tx: tx.add_messages([_store(21)]))
    assert counted_loads[0] == 0
    # Reading moves the first unread: the window is read again.
    postbox.run(_read(15))
    assert counted_loads[0] == 1
    assert views[-1] == fresh(postbox, key)
    assert views[-1].anchor_index.id.id == 16


def test_a_hole_operation_reads_the_window_again(
    postbox: Postbox, counted_loads: list[int]
) -> None:
    _fill(postbox, range(1, 21))
    key = MessageHistoryViewKey(CHAT, HistoryAnchor.upper_bound(), count=5)
    views = _open(postbox, key)
    counted_loads[0] = 0
    postbox.run(_hole(True, False, 17, 0))
    assert counted_loads[0] == 1
    assert [m.id.id for m in views[-1].entries] == [18, 19, 20]
    assert views[-1].hole_earlier


def test_a_message_with_every_field_is_shown_as_stored(
    postbox: Postbox, counted_loads: list[int]
) -> None:
    """A new message comes from the change record, not the table: it must read the same."""
    _fill(postbox, range(1, 6))
    key = MessageHistoryViewKey(CHAT, HistoryAnchor.upper_bound(), count=3)
    views = _open(postbox, key)
    counted_loads[0] = 0
    full = StoreMessage(
        CHAT,
        0,
        6,
        106,
        int(MessageFlags.INCOMING),
        PHOTO,
        author_id=AUTHORS[2].id,
        text="every field",
        media=(Media(MediaKind.PHOTO, 9, 1234, "https://example.org/p", "a photo"),),
        reply_to_id=4,
        edit_timestamp=107,
        globally_unique_id=77,
        thread_id=3,
        forward_info=ForwardInfo(AUTHORS[1].id, 90, 5, 11),
    )
    postbox.run(lambda tx: tx.add_messages([full]))
    edited = full._replace(text="edited", media=(), edit_timestamp=108)
    postbox.run(_edit(edited))
    assert counted_loads[0] == 0
    assert views[-1] == fresh(postbox, key)
    assert views[-1].entries[-1].text == "edited"
