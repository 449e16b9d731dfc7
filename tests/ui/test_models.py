"""The Qt models over live Postbox views: diffs, never resets; animation only for live rows."""

from __future__ import annotations

import dataclasses
import threading
from typing import Generic, TypeVar

import pytest

from postbox import (
    ChatListInclusion,
    ChatListViewKey,
    CombinedView,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageId,
    MessageNamespace,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerReadState,
    PeerView,
    Postbox,
    PostboxViewKey,
    StoreMessage,
    UpdateKind,
    ViewSnapshot,
)
from ui.models import ROW_ROLE, ChatListModel, HistoryModel
from ui.rows import (
    ChatRow,
    DateRow,
    DeliveryState,
    HistoryRowCache,
    LoadingRow,
    MessageRow,
    chat_list_rows,
    history_rows,
    peer_subtitle,
)

pytestmark = pytest.mark.gui

NOW = 1_800_000_000
CLOUD = int(MessageNamespace.CLOUD)
PEERS = [PeerId.make(PeerNamespace.USER, 100 + i) for i in range(5)]


S = TypeVar("S", bound=ViewSnapshot)


class Snapshots(Generic[S]):
    """The snapshots of one key, collected on the postbox thread."""

    def __init__(self, postbox: Postbox, key: PostboxViewKey[S]) -> None:
        self.key = key
        self.items: list[S] = []
        self._lock = threading.Lock()
        postbox.combined_view([key], callback=self._record).ready.result()

    def _record(self, combined: CombinedView) -> None:
        with self._lock:
            self.items.append(combined[self.key])

    def __len__(self) -> int:
        with self._lock:
            return len(self.items)

    @property
    def latest(self) -> S:
        with self._lock:
            return self.items[-1]


@pytest.fixture
def postbox(tmp_path):
    box = Postbox(tmp_path / "ui.db")

    def seed(tx) -> None:
        tx.update_peers(Peer(peer, f"Person {i}") for i, peer in enumerate(PEERS))
        for i, peer in enumerate(PEERS):
            tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))
            tx.add_messages(
                [
                    StoreMessage(peer, CLOUD, 10 * i + k, NOW - 3_600 * (10 - i) + k,
                                 flags=int(MessageFlags.INCOMING), author_id=peer, text=f"m{k}")
                    for k in range(1, 4)
                ]
            )  # fmt: skip
            tx.reset_read_state(peer, CLOUD, PeerReadState(10 * i + 3, 0, 10 * i + 3, 0))
            tx.remove_hole(peer, CLOUD, MessageHistoryHoleSpace(), 1, 2**31 - 2)
        for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
            for hole in tx.get_chat_list_holes(group):
                tx.remove_chat_list_hole(group, hole)

    box.run(seed)
    yield box
    box.close()


def new_message(postbox: Postbox, peer: PeerId, id_: int, *, incoming: bool = True) -> None:
    flags = int(MessageFlags.INCOMING) if incoming else 0
    postbox.run(
        lambda tx: tx.add_messages(
            [StoreMessage(peer, CLOUD, id_, NOW + id_, flags=flags, author_id=peer, text="new!")]
        )
    )


def test_a_new_message_moves_its_chat_to_the_top_with_its_badge(qtbot, qtmodeltester, postbox):
    snapshots = Snapshots(postbox, ChatListViewKey(PeerGroupId.ROOT, count=20))
    model = ChatListModel()
    model.apply(chat_list_rows(snapshots.latest, NOW), snapshots.latest.update_type)
    qtmodeltester.check(model)
    assert [row.peer_id for row in model.rows] == [int(p) for p in reversed(PEERS)]
    resets = []
    model.modelReset.connect(lambda: resets.append(True))
    new_message(postbox, PEERS[0], 500)
    qtbot.waitUntil(lambda: len(snapshots) == 2)
    steps = model.apply(chat_list_rows(snapshots.latest, NOW), snapshots.latest.update_type)
    top = model.data(model.index(0, 0), ROW_ROLE)
    assert isinstance(top, ChatRow)
    assert (top.peer_id, top.unread, top.preview) == (int(PEERS[0]), 1, "new!")
    assert len(steps) == 2  # one move, and the moved row's new content
    assert resets == []
    qtmodeltester.check(model)


def test_a_live_message_is_animated_and_a_fill_is_not(qtbot, qtmodeltester, postbox):
    peer = PEERS[2]
    snapshots = Snapshots(postbox, MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 20))
    model = HistoryModel()
    live = []
    model.rows_inserted_live.connect(lambda first, last: live.append((first, last)))
    model.apply(history_rows(snapshots.latest, NOW), snapshots.latest.update_type)
    assert live == []  # the first snapshot appears in place
    qtmodeltester.check(model)
    rows = model.rows
    assert isinstance(rows[0], DateRow) and [r.id for r in rows if isinstance(r, MessageRow)] == [
        21,
        22,
        23,
    ]
    new_message(postbox, peer, 600)
    qtbot.waitUntil(lambda: len(snapshots) == 2)
    assert snapshots.latest.update_type.kind is UpdateKind.GENERIC
    model.apply(history_rows(snapshots.latest, NOW), snapshots.latest.update_type)
    assert live
    newest = model.rows[live[-1][1]]
    assert isinstance(newest, MessageRow) and newest.id == 600
    # Older messages arriving as a hole fill appear without animation.
    before = len(live)
    postbox.run(lambda tx: tx.add_hole(peer, CLOUD, MessageHistoryHoleSpace(), 1, 20))
    qtbot.waitUntil(lambda: len(snapshots) == 3)
    model.apply(history_rows(snapshots.latest, NOW), snapshots.latest.update_type)
    assert isinstance(model.rows[0], LoadingRow)
    postbox.run(
        lambda tx: (
            tx.add_messages([StoreMessage(peer, CLOUD, 19, NOW - 90_000, text="older")]),
            tx.remove_hole(peer, CLOUD, MessageHistoryHoleSpace(), 1, 20),
        )
    )
    qtbot.waitUntil(lambda: len(snapshots) == 4)
    filled = snapshots.latest
    assert filled.update_type.kind is UpdateKind.FILL_HOLE
    model.apply(history_rows(filled, NOW), filled.update_type)
    assert len(live) == before
    assert not isinstance(model.rows[0], LoadingRow)
    qtmodeltester.check(model)


def test_sending_shows_pending_then_sent_ticks(qtbot, postbox):
    peer = PEERS[1]
    local = int(MessageNamespace.LOCAL)
    snapshots = Snapshots(postbox, MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 20))
    pending = Snapshots(
        postbox, MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 20, namespace=local)
    )
    model = HistoryModel()
    postbox.run(
        lambda tx: tx.add_messages(
            [StoreMessage(peer, local, None, NOW, flags=int(MessageFlags.UNSENT), text="hi")]
        )
    )
    qtbot.waitUntil(lambda: len(pending) == 2)
    rows = history_rows(snapshots.latest, NOW, pending=pending.latest)
    model.apply(rows, pending.latest.update_type)
    last = model.rows[-1]
    assert isinstance(last, MessageRow) and last.delivery == "pending"
    sent = [r for r in model.rows if isinstance(r, MessageRow) and r.namespace == local][0]
    postbox.run(
        lambda tx: (
            tx.delete_messages([MessageId(peer, local, sent.id)]),
            tx.add_messages([StoreMessage(peer, CLOUD, 700, NOW, text="hi")]),
        )
    )
    qtbot.waitUntil(lambda: len(snapshots) == 2 and len(pending) == 3)
    rows = history_rows(snapshots.latest, NOW, pending=pending.latest)
    model.apply(rows, snapshots.latest.update_type)
    last = model.rows[-1]
    assert isinstance(last, MessageRow) and last.delivery == "sent"
    assert not any(isinstance(r, MessageRow) and r.namespace == local for r in model.rows)


def test_a_secret_chat_row_is_marked_and_its_header_says_so(postbox):
    secret = PeerId.make(PeerNamespace.SECRET_CHAT, 1)

    def open_secret_chat(tx) -> None:
        tx.update_peers([Peer(secret, "Person 0")])
        tx.update_chat_list_inclusion(secret, ChatListInclusion(PeerGroupId.ROOT))
        tx.add_messages(
            [StoreMessage(secret, CLOUD, 1, NOW, flags=int(MessageFlags.INCOMING), text="psst")]
        )

    postbox.run(open_secret_chat)
    snapshots = Snapshots(postbox, ChatListViewKey(PeerGroupId.ROOT, count=20))
    rows = chat_list_rows(snapshots.latest, NOW)
    marked = {row.peer_id: row.secret for row in rows}
    assert marked[int(secret)] and not marked[int(PEERS[0])]
    # Same name as the person, told apart by the lock (and the header's subtitle).
    assert next(r for r in rows if r.peer_id == int(secret)).title == "Person 0"
    peer_view = PeerView(postbox.run(lambda tx: tx.get_peer(secret)))
    assert peer_subtitle(peer_view, NOW) == "secret chat"


def test_cached_history_rows_equal_fresh_ones_and_keep_unchanged_rows(qtbot, postbox):
    peer = PEERS[2]
    snapshots = Snapshots(postbox, MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 20))
    cache = HistoryRowCache()
    first = history_rows(snapshots.latest, NOW, cache=cache)
    assert first == history_rows(snapshots.latest, NOW)
    again = history_rows(snapshots.latest, NOW, cache=cache)
    pairs = zip(first, again, strict=True)
    assert all(a is b for a, b in pairs if isinstance(a, MessageRow))
    new_message(postbox, peer, 500, incoming=False)
    qtbot.waitUntil(lambda: len(snapshots) == 2)
    later = history_rows(snapshots.latest, NOW, cache=cache)
    assert later == history_rows(snapshots.latest, NOW)
    newest = later[-1]
    assert isinstance(newest, MessageRow)
    assert newest.id == 500 and newest.delivery == DeliveryState.SENT


def test_an_empty_window_between_two_holes_shows_one_loading_row(qtbot, postbox):
    """A window emptied by holes on both sides (as after "too long") says it is loading
    once, not twice."""
    peer = PEERS[1]
    snapshots = Snapshots(postbox, MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 20))
    empty = dataclasses.replace(snapshots.latest, entries=(), hole_earlier=True, hole_later=True)
    rows = history_rows(empty, NOW)
    assert [type(r) for r in rows] == [LoadingRow]
    # With messages between them, each side keeps its own.
    both = dataclasses.replace(snapshots.latest, hole_earlier=True, hole_later=True)
    rows = history_rows(both, NOW)
    assert isinstance(rows[0], LoadingRow) and isinstance(rows[-1], LoadingRow)
    assert sum(isinstance(r, LoadingRow) for r in rows) == 2
