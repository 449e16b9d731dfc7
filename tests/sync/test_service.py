"""The server's methods without sockets: paging rules, idempotent sends, pushes, determinism."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.protocol import (
    DeleteMessages,
    EditMessage,
    ErrorCode,
    ForwardMessages,
    GetDialogs,
    GetFullPeer,
    GetHistory,
    GetPeers,
    GetSentMessages,
    GetState,
    MediaKind,
    Peer,
    PeerKind,
    ProtocolError,
    ReadHistory,
    SendMessage,
    SentMessageId,
    SentMessageIds,
    ShortMessage,
    UpdateNewMessage,
    UpdatePeer,
    Updates,
    UpdatesTooLong,
    peer_kind,
)
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
from sync.server.store import ServerStore
from tests.sync.server_helpers import Harness, make_harness, random_action, truth


@pytest.fixture(scope="module")
def harness():
    return make_harness(seed=11, peers=20, messages=2_000)


def busiest(harness: Harness, kind: PeerKind | None = None) -> int:
    sizes = [
        (count, peer)
        for peer, count in harness.store.chat_sizes()
        if kind is None or peer_kind(peer) is kind
    ]
    return max(sizes)[1]


def reference_page(ids_desc, request):
    """Telegram's getHistory rules, written plainly over a newest-first id list."""
    candidates = [
        i
        for i in ids_desc
        if (not request.min_id or i > request.min_id) and (not request.max_id or i < request.max_id)
    ]
    if request.offset_id:
        position = next(
            (n for n, i in enumerate(candidates) if i < request.offset_id), len(candidates)
        )
    else:
        position = 0
    start = position + request.add_offset
    end = start + request.limit
    return candidates[max(start, 0) : max(end, 0)]


@settings(max_examples=150)
@given(
    offset=st.integers(0, 2_100),
    add_offset=st.integers(-100, 300),
    limit=st.integers(1, 100),
    min_back=st.one_of(st.none(), st.integers(0, 2_000)),
    max_back=st.one_of(st.none(), st.integers(0, 2_000)),
    kind=st.one_of(st.none(), st.sampled_from(list(MediaKind))),
)
def test_history_paging_follows_the_offset_rules(
    harness, offset, add_offset, limit, min_back, max_back, kind
) -> None:
    peer = busiest(harness)
    every = harness.store.recent_messages(peer, 10**6)
    if kind is not None:
        every = [m for m in every if any(item.kind is kind for item in m.media)]
    ids = [m.id for m in every]
    top = harness.store.recent_messages(peer, 1)[0].id
    offset_id = 0 if offset == 0 else max(1, top + 1 - offset)
    request = GetHistory(
        peer,
        offset_id=offset_id,
        add_offset=add_offset,
        limit=limit,
        min_id=0 if min_back is None else max(0, top - min_back),
        max_id=0 if max_back is None else max(0, top + 1 - max_back),
        filter=kind,
    )
    page = harness.call(request)
    assert [m.id for m in page.messages] == reference_page(ids, request)
    assert page.count == len(ids)
    assert {p.id for p in page.peers} >= {peer} | {m.author for m in page.messages if m.author}


def test_history_of_an_unknown_peer_is_a_typed_error(harness) -> None:
    with pytest.raises(ProtocolError) as raised:
        harness.call(GetHistory((PeerKind.USER << 56) | 999_999_999))
    assert raised.value.code is ErrorCode.PEER_ID_INVALID


def test_dialogs_page_through_the_whole_chat_list_in_order(harness) -> None:
    first = harness.call(GetDialogs(limit=7))
    assert first.pinned  # the dataset pins a few chats
    assert [d.peer for d in first.dialogs[: len(first.pinned)]] == list(first.pinned)
    assert all(d.pinned for d in first.dialogs[: len(first.pinned)])
    unpinned = list(first.dialogs[len(first.pinned) :])
    page = first
    while len(page.dialogs) - len(page.pinned) == 7:
        last = page.dialogs[-1]
        top = next(m for m in page.messages if (m.peer, m.id) == (last.peer, last.top_message))
        page = harness.call(
            GetDialogs(offset_date=top.date, offset_id=top.id, offset_peer=last.peer, limit=7)
        )
        assert page.pinned == ()
        unpinned.extend(page.dialogs)
    seen = [*first.pinned, *(d.peer for d in unpinned)]
    assert len(seen) == first.count == len(set(seen))
    assert not any(d.pinned for d in unpinned)
    tops = {(m.peer, m.id): m.date for m in first.messages}
    dates = [tops[(d.peer, d.top_message)] for d in first.dialogs[len(first.pinned) :]]
    assert dates == sorted(dates, reverse=True)


def test_a_chat_whose_messages_are_all_deleted_leaves_the_chat_list() -> None:
    harness = make_harness()
    store = harness.store
    pinned = set(harness.call(GetDialogs()).pinned)
    peer = next(
        p for p, n in store.chat_sizes() if 0 < n <= 100 and p not in pinned and p >> 56 == 0
    )
    before = harness.call(GetDialogs(limit=100))
    assert peer in {d.peer for d in before.dialogs}
    store.delete_messages(peer, [m.id for m in store.recent_messages(peer, 100)])
    after = harness.call(GetDialogs(limit=100))
    assert peer not in {d.peer for d in after.dialogs}
    assert after.count == before.count - 1
    # The chat itself is still there: asked for by name, it answers.
    assert store.dialog(peer).top_message == 0


def test_unread_counts_follow_read_history() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    incoming = [m for m in harness.store.recent_messages(peer, 50) if not m.out]
    dialog = harness.store.dialog(peer)
    affected = harness.call(ReadHistory(peer, incoming[0].id))
    after = harness.store.dialog(peer)
    if dialog.read_inbox_max_id < incoming[0].id:
        assert affected.pts_count == 1
        assert after.read_inbox_max_id == incoming[0].id
    assert after.unread_count == 0
    again = harness.call(ReadHistory(peer, incoming[0].id))
    assert again.pts_count == 0


def test_send_message_is_idempotent_by_random_id() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    first = harness.call(SendMessage(peer, "hello", random_id=77))
    pushes = len(harness.pushes)
    pts = harness.store.state().pts
    again = harness.call(SendMessage(peer, "hello", random_id=77))
    assert again == first
    assert harness.store.state().pts == pts
    assert len(harness.pushes) == pushes
    assert [m.id for m in harness.store.recent_messages(peer, 2)].count(first.message.id) == 1
    with pytest.raises(ProtocolError) as raised:
        harness.call(SendMessage(busiest(harness, PeerKind.GROUP), "hello", random_id=77))
    assert raised.value.code is ErrorCode.INVALID_PARAMS


def test_the_server_tells_which_sends_it_stored_and_changes_nothing() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    first = harness.call(SendMessage(peer, "hello", random_id=77))
    pts, pushes = harness.store.state().pts, len(harness.pushes)
    found = harness.call(GetSentMessages((78, 77, 77)))
    assert found == SentMessageIds((SentMessageId(77, peer, first.message.id),) * 2)
    harness.call(DeleteMessages(peer, (first.message.id,)))
    assert harness.call(GetSentMessages((77,))).sent[0].id == first.message.id
    assert harness.call(GetSentMessages(())) == SentMessageIds(())
    assert harness.store.state().pts == pts + 1 and len(harness.pushes) == pushes + 1


def test_a_send_is_pushed_to_the_other_sessions_in_the_short_form() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    sent = harness.call(SendMessage(peer, "hi there", random_id=5))
    (push, excluded), *_ = harness.pushes[-1:]
    assert excluded is harness.session
    assert isinstance(push, ShortMessage)
    assert push.as_update(harness.store.self_id) == UpdateNewMessage(sent.message, sent.pts, 1)


def test_empty_messages_and_foreign_edits_are_refused() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    with pytest.raises(ProtocolError) as raised:
        harness.call(SendMessage(peer, "   ", random_id=1))
    assert raised.value.code is ErrorCode.MESSAGE_EMPTY
    foreign = next(m for m in harness.store.recent_messages(peer, 50) if not m.out)
    with pytest.raises(ProtocolError) as raised:
        harness.call(EditMessage(peer, foreign.id, "mine now"))
    assert raised.value.code is ErrorCode.MESSAGE_ID_INVALID
    channel = busiest(harness, PeerKind.CHANNEL)
    for request, code in (
        (SendMessage(channel, "post", random_id=2), ErrorCode.CHAT_WRITE_FORBIDDEN),
        (ForwardMessages(peer, (foreign.id,), channel, (3,)), ErrorCode.CHAT_WRITE_FORBIDDEN),
        (DeleteMessages(channel, (1,)), ErrorCode.PEER_ID_INVALID),
    ):
        with pytest.raises(ProtocolError) as raised:
            harness.call(request)
        assert raised.value.code is code


def test_a_broadcast_channel_takes_posts_from_an_account_that_may_post() -> None:
    harness = make_harness()
    channel = busiest(harness, PeerKind.CHANNEL)
    peer = harness.store.peer(channel)
    assert peer is not None and peer.flags & Peer.BROADCAST and not peer.can_post
    harness.store._db.execute("UPDATE peers SET flags = flags | ? WHERE id = ?", (16, channel))
    assert harness.call(GetPeers((channel,))).peers[0].can_post  # the client is told
    sent = harness.call(SendMessage(channel, "an admin's post", random_id=9))
    assert sent.message.out and harness.store.message(channel, sent.message.id) is not None


def test_deleting_nothing_moves_no_pts() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    pts = harness.store.state().pts
    affected = harness.call(DeleteMessages(peer, (2**31 - 1,)))
    assert (affected.pts, affected.pts_count) == (pts, 0)


def test_a_rename_travels_in_a_seq_container() -> None:
    harness = make_harness()
    seq = harness.store.state().seq
    assert harness.service.generate(1, "rename") == 1
    push = harness.pushes[-1][0]
    assert isinstance(push, Updates)
    assert (push.seq_start, push.seq) == (seq + 1, seq + 1)
    (update,) = push.updates
    assert isinstance(update, UpdatePeer)
    assert harness.store.peer(update.peer.id) == update.peer


def test_full_peer_and_peers(harness) -> None:
    group = busiest(harness, PeerKind.GROUP)
    full = harness.call(GetFullPeer(group))
    assert full.peer.id == group
    assert full.members and full.participant_count == len(full.members) + 1
    users = [p for p, _ in harness.store.chat_sizes() if peer_kind(p) is PeerKind.USER]
    answer = harness.call(GetPeers(tuple(users)))
    assert [p.id for p in answer.peers] == sorted(users)
    assert {p.user for p in answer.presences} <= set(users)


def test_the_same_seed_and_requests_give_the_same_server() -> None:
    def run(seed: int):
        harness = make_harness(seed=seed)
        rng = random.Random(seed)
        for _ in range(150):
            random_action(harness, rng)
        return harness.store.digest(), [p for p, _ in harness.pushes], harness.call(GetState())

    assert run(4) == run(4)
    assert run(4)[0] != run(5)[0]


def test_fault_decisions_repeat_under_a_seed() -> None:
    harness = make_harness()
    config = FaultConfig(drop=0.2, duplicate=0.2, reorder=3, too_long=0.05, channel_too_long=0.3)
    for _ in range(200):
        harness.service.generate(1)
    pushes = [p for p, _ in harness.pushes]

    def deliveries(number: int):
        injector = FaultInjector.for_connection(config, seed=9, number=number)
        sent = [d.updates for push in pushes for d in injector.plan(push)]
        return sent + injector.release_held()

    assert deliveries(1) == deliveries(1)
    assert deliveries(1) != deliveries(2)
    sent = deliveries(1)
    assert any(isinstance(p, UpdatesTooLong) for p in sent)
    assert len(sent) != len(pushes) or sent != pushes


def test_faults_off_pass_every_push_through_unchanged() -> None:
    injector = FaultInjector.for_connection(FaultConfig(), seed=1, number=1)
    harness = make_harness()
    harness.service.generate(30)
    for push, _ in harness.pushes:
        assert [d.updates for d in injector.plan(push)] == [push]
        assert not injector.count_sent()


def test_truth_survives_a_reopen(tmp_path) -> None:
    from dataset import generate_dataset

    path = tmp_path / "server.db"
    store = ServerStore(path, clock=lambda: 1_800_000_000)
    store.import_dataset(generate_dataset(3, 10, 200, 10))
    store.add_message(busiest_of(store), out=False, author=None, text="kept")
    before = truth(store), store.digest()
    store.close()
    reopened = ServerStore(path, clock=lambda: 1_800_000_000)
    assert (truth(reopened), reopened.digest()) == before
    with pytest.raises(ValueError, match="already holds"):
        reopened.import_dataset(generate_dataset(3, 10, 200, 10))
    reopened.close()


def busiest_of(store: ServerStore) -> int:
    return max((count, peer) for peer, count in store.chat_sizes())[1]


def test_a_resend_after_the_message_was_deleted_returns_the_original() -> None:
    harness = make_harness()
    peer = busiest(harness, PeerKind.USER)
    first = harness.call(SendMessage(peer, "short-lived", random_id=91))
    harness.store.delete_messages(peer, (first.message.id,))
    again = harness.call(SendMessage(peer, "short-lived", random_id=91))
    assert again == first


def test_contacts_start_as_the_people_the_account_has_written_to() -> None:
    harness = make_harness(seed=12, peers=30, messages=3_000)
    store = harness.store
    for peer_id, _count in store.chat_sizes():
        peer = store.require_peer(peer_id)
        wrote = any(m.out for m in store.recent_messages(peer_id, 100_000))
        person = peer.kind is PeerKind.USER and not peer.flags & 2
        assert store.full_peer(peer_id).contact == (person and wrote)
        assert (peer_id in store.contacts()) == (person and wrote)


def test_a_send_or_a_deletion_leaves_the_contacts_as_they_are() -> None:
    """Contacts are a list of their own, as on Telegram: writing to a stranger does not
    add them, and deleting all one wrote to a contact does not remove them."""
    harness = make_harness(seed=12, peers=30, messages=3_000)
    store = harness.store
    people = [
        p
        for p, _ in store.chat_sizes()
        if peer_kind(p) is PeerKind.USER and not store.require_peer(p).flags & 2
    ]
    stranger = next(p for p in people if not store.full_peer(p).contact)
    contact = next(p for p in people if store.full_peer(p).contact)
    before = store.contacts()
    store.add_message(stranger, out=True, author=store.self_id, text="hello")
    written = [m.id for m in store.recent_messages(contact, 100_000) if m.out]
    store.delete_messages(contact, written)
    assert not any(m.out for m in store.recent_messages(contact, 100_000))
    assert not store.full_peer(stranger).contact
    assert store.full_peer(contact).contact
    assert store.contacts() == before
