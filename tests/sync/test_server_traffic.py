"""The shapes of generated traffic: seq containers, reads from another device, old deletions.

Every push is checked against the server's own bookkeeping: a seq container takes the
next seq values, the pts updates inside chain from the account's pts, and a difference
from before the traffic brings exactly the pts updates that were pushed, in the same
order, whether they came alone or several in one container.
"""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    Difference,
    DifferenceEmpty,
    DifferenceTooLong,
    GetChannelDifference,
    GetDifference,
    GetPeers,
    Message,
    PeerKind,
    PresenceStatus,
    ShortMessage,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    UpdatePeer,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
    Updates,
    UpdateUserStatus,
    peer_kind,
)
from sync.server.differences import left_out
from sync.server.traffic import EVENT_WEIGHTS
from tests.sync.server_helpers import Harness, make_harness

_CHANNEL_UPDATES = (
    UpdateNewChannelMessage,
    UpdateEditChannelMessage,
    UpdateDeleteChannelMessages,
    UpdateReadChannelInbox,
)


def _updates_of(harness: Harness, push: AnyUpdates) -> list[AnyUpdate]:
    if isinstance(push, ShortMessage):
        return [push.as_update(harness.store.self_id)]
    assert isinstance(push, Updates)
    return list(push.updates)


def _channel_of(update: AnyUpdate) -> int | None:
    if isinstance(update, UpdateNewChannelMessage | UpdateEditChannelMessage):
        return update.message.peer
    if isinstance(update, UpdateDeleteChannelMessages | UpdateReadChannelInbox):
        return update.channel
    return None


def _step(harness: Harness, kind: str | None = None) -> list[AnyUpdates]:
    pushes = harness.service.traffic.step(kind)
    return pushes


def _pts_updates(harness: Harness, pushes: list[AnyUpdates]) -> list[AnyUpdate]:
    """The account's pts updates among ``pushes``, as pushed."""
    found: list[AnyUpdate] = []
    for push in pushes:
        for update in _updates_of(harness, push):
            if getattr(update, "pts", None) is not None and not isinstance(
                update, _CHANNEL_UPDATES
            ):
                found.append(update)
    return found


def test_a_burst_is_one_seq_container_with_several_pts_updates() -> None:
    harness = make_harness(seed=11)
    shapes = set()
    for _ in range(40):
        before = harness.store.state()
        pushes = _step(harness, "burst")
        if not pushes:
            continue
        # The container, then the status of the people who wrote in it (not seq-ordered).
        push, *statuses = pushes
        assert all(
            isinstance(u, UpdateUserStatus) for s in statuses for u in _updates_of(harness, s)
        )
        assert isinstance(push, Updates)
        after = harness.store.state()
        assert push.seq_start == before.seq + 1
        assert push.seq == after.seq
        points = push.seq - push.seq_start + 1
        assert points in (1, len(push.updates))
        shapes.add((points > 1, len(push.updates) > 1))
        # The pts updates inside chain from the account's pts to its new value; the
        # secret messages among them, from its qts.
        pts, qts = before.pts, before.qts
        for update in push.updates:
            if isinstance(update, UpdateNewEncryptedMessage):
                assert update.qts == qts + 1
                qts = update.qts
                continue
            assert isinstance(
                update, UpdateNewMessage | UpdateReadHistoryInbox | UpdateReadHistoryOutbox
            )
            assert update.pts - update.pts_count == pts
            pts = update.pts
        assert (pts, qts) == (after.pts, after.qts)
        # The container names every peer its updates need but the min peers, which
        # getPeers describes.
        named = {peer.id for peer in push.peers}
        for update in push.updates:
            needed = {peer.id for peer in harness.store.peers_of_update(update)}
            message = getattr(update, "message", None)
            left = left_out((message,)) if message is not None else set()
            assert needed - left <= named
            fetched = harness.call(GetPeers(tuple(sorted(needed - named))))
            assert {peer.id for peer in fetched.peers} == needed - named
    # Both Telegram shapes, and several updates in one container, occurred.
    assert (False, True) in shapes
    assert (True, True) in shapes


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), events=st.integers(1, 150))
def test_a_difference_brings_exactly_what_was_pushed(seed: int, events: int) -> None:
    harness = make_harness(seed=seed % 50)
    start = harness.store.state()
    channels = {
        peer: harness.store.dialog(peer).pts or 0
        for peer, _ in harness.store.chat_sizes()
        if peer_kind(peer) is PeerKind.CHANNEL
    }
    pushes = [push for _ in range(events) for push in _step(harness)]

    # The seq containers chain from the starting seq to the server's seq.
    seq = start.seq
    for push in pushes:
        if isinstance(push, Updates) and push.seq:
            assert push.seq_start == seq + 1
            assert push.seq >= push.seq_start
            seq = push.seq
        elif isinstance(push, Updates):
            assert not any(isinstance(u, UpdatePeer) for u in push.updates)
    end = harness.store.state()
    assert seq == end.seq

    # The account's difference is the union of the pushed pts updates, in pts order.
    pushed = _pts_updates(harness, pushes)
    answer = harness.call(GetDifference(start.pts, 0, start.date, pts_total_limit=100_000))
    if not pushed:
        assert end.pts == start.pts
    else:
        assert isinstance(answer, Difference)
        assert (answer.state.pts, answer.state.seq) == (end.pts, end.seq)
        assert list(answer.new_messages) == [
            u.message for u in pushed if isinstance(u, UpdateNewMessage)
        ]
        assert list(answer.other_updates) == [
            u for u in pushed if not isinstance(u, UpdateNewMessage)
        ]
        assert [getattr(u, "pts", 0) for u in pushed] == sorted(
            getattr(u, "pts", 0) for u in pushed
        )

    # Each channel's difference is what was pushed for it.
    for channel, pts in channels.items():
        mine = [
            update
            for push in pushes
            for update in _updates_of(harness, push)
            if _channel_of(update) == channel
        ]
        if not mine:
            continue
        reply = harness.call(GetChannelDifference(channel, pts, 100_000))
        assert list(reply.new_messages) == [
            u.message for u in mine if isinstance(u, UpdateNewChannelMessage)
        ]
        assert list(reply.other_updates) == [
            u for u in mine if not isinstance(u, UpdateNewChannelMessage)
        ]


def test_reads_from_another_device_carry_the_servers_unread_count() -> None:
    harness = make_harness(seed=5, peers=20, messages=600)
    kinds = set()
    for _ in range(200):
        before = harness.store.state()
        for push in _step(harness, "read_inbox"):
            (update,) = _updates_of(harness, push)
            assert isinstance(update, UpdateReadHistoryInbox | UpdateReadChannelInbox)
            peer = update.peer if isinstance(update, UpdateReadHistoryInbox) else update.channel
            dialog = harness.store.dialog(peer)
            assert update.max_id == dialog.read_inbox_max_id
            assert update.still_unread_count == dialog.unread_count
            kinds.add(peer_kind(peer))
            if isinstance(update, UpdateReadHistoryInbox):
                answer = harness.call(GetDifference(before.pts, 0, before.date))
                assert isinstance(answer, Difference)
                assert answer.other_updates == (update,)
            else:
                reply = harness.call(GetChannelDifference(peer, update.pts - 1, 100))
                assert reply.other_updates == (update,)
    assert kinds == {PeerKind.USER, PeerKind.GROUP, PeerKind.CHANNEL}


def test_deleting_unread_messages_deep_in_history_lowers_the_unread_count() -> None:
    harness = make_harness(seed=5, peers=20, messages=600)
    store = harness.store
    peer = next(p for p, _ in store.chat_sizes() if peer_kind(p) is PeerKind.USER)
    for number in range(15):
        store.add_message(peer, out=False, author=peer, text=f"unread {number}")
    unread = store.unread_incoming(peer, 100)
    recent = {m.id for m in store.recent_messages(peer, 10)}
    old = [i for i in unread if i not in recent][:2]
    assert len(old) == 2
    before = store.dialog(peer).unread_count
    update = store.delete_messages(peer, old)
    assert isinstance(update, UpdateDeleteMessages)
    assert store.dialog(peer).unread_count == before - 2


def test_old_deletions_reach_deep_into_histories_and_unread_messages() -> None:
    harness = make_harness(seed=5, peers=20, messages=600)
    store = harness.store
    deep = unread_deleted = 0
    for _ in range(150):
        for _ in range(3):  # new messages arrive unread, for the deletions to find
            _step(harness, "message")
        snapshot = {
            p: (
                [m.id for m in store.recent_messages(p, 10)],
                set(store.unread_incoming(p, 10**6)),
                store.dialog(p).unread_count,
            )
            for p, _ in store.chat_sizes()
        }
        for push in _step(harness, "delete_old"):
            (update,) = _updates_of(harness, push)
            assert isinstance(update, UpdateDeleteMessages | UpdateDeleteChannelMessages)
            peer = update.peer if isinstance(update, UpdateDeleteMessages) else update.channel
            recent, unread, count = snapshot[peer]
            deep += any(i not in recent for i in update.ids)
            gone_unread = sum(i in unread for i in update.ids)
            unread_deleted += gone_unread
            assert store.dialog(peer).unread_count == count - gone_unread
            assert all(store.message(peer, i) is None for i in update.ids)
    assert deep > 10
    assert unread_deleted > 10


def test_every_event_kind_can_be_asked_for_and_unknown_ones_are_refused() -> None:
    harness = make_harness()
    for kind in EVENT_WEIGHTS:
        _step(harness, kind)
    with pytest.raises(ValueError, match="no traffic event 'nap'"):
        _step(harness, "nap")


def _words_changed(old: str, new: str) -> int:
    words = difflib.SequenceMatcher(None, old.split(), new.split())
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in words.get_opcodes() if tag != "equal"
    )


def test_edits_correct_a_message_and_renames_read_like_renames() -> None:
    harness = make_harness(seed=5, peers=20, messages=600)
    store = harness.store
    originals = {peer: store.require_peer(peer).name for peer, _ in store.chat_sizes()}
    edits = 0
    for _ in range(120):
        for _ in range(2):
            _step(harness, "message")
        before = {
            (peer, m.id): m
            for peer, _ in store.chat_sizes()
            for m in store.recent_messages(peer, 10)
        }
        for push in _step(harness, "edit"):
            (update,) = _updates_of(harness, push)
            assert isinstance(update, UpdateEditMessage | UpdateEditChannelMessage)
            message = update.message
            old = before[(message.peer, message.id)]
            assert message.text and message.text != old.text and "(edited)" not in message.text
            if old.text:  # a few words changed (a typo, a time, a word), or a line added
                assert (
                    message.text.startswith(old.text) or _words_changed(old.text, message.text) <= 3
                )
            else:  # a caption added to media sent without one
                assert message.media == old.media
            edits += 1
    assert edits > 50
    renames = 0
    for _ in range(60):
        for push in _step(harness, "rename"):
            (update,) = _updates_of(harness, push)
            assert isinstance(update, UpdatePeer)
            name, original = update.peer.name, originals[update.peer.id]
            assert name == original or name.startswith(f"{original} ")
            assert (
                not any(c.isdigit() for c in name) or peer_kind(update.peer.id) is PeerKind.CHANNEL
            )
            renames += 1
    assert renames > 30


def test_the_account_answers_on_another_device_and_the_talk_goes_on() -> None:
    """An answer is the chat read, then an outgoing message by the account; the other
    side's next message in that chat answers it in turn."""
    harness = make_harness(seed=5, peers=20, messages=600)
    store = harness.store
    answers = 0
    for _ in range(200):
        # Chats whose newest message is the account's own have nothing to answer.
        answered = {p for p, _ in store.chat_sizes() if store.recent_messages(p, 1)[0].out}
        pushes = _step(harness, "answer")
        if not pushes:
            continue
        updates = [u for push in pushes for u in _updates_of(harness, push)]
        *reads, new = updates
        assert isinstance(new, UpdateNewMessage)
        message = new.message
        assert message.out and message.author == store.self_id
        assert message.text or message.media
        assert peer_kind(message.peer) in (PeerKind.USER, PeerKind.GROUP)
        assert message.peer not in answered
        assert all(isinstance(r, UpdateReadHistoryInbox) for r in reads)
        assert store.dialog(message.peer).unread_count == 0
        answers += 1
        # The pushes chain from the account's pts like any other.
        counters = [u.pts for u in updates if isinstance(u, UpdateReadHistoryInbox)]
        assert counters + [new.pts] == sorted({*counters, new.pts})
        _step(harness, "message")
    assert answers > 30


def test_a_device_too_far_behind_gets_too_long_until_it_jumps_past() -> None:
    """Too long holds for any difference from before the point it was set at, so a
    client that retries from a few pts on (its cursor moved meanwhile) is told again;
    from the pts the answer gave, the difference is ordinary."""
    harness = make_harness()
    for _ in range(6):
        _step(harness, "message")
    state = harness.store.state()
    harness.session.faults.too_long_below = state.pts
    for pts in (state.pts - 5, state.pts - 1):
        answer = harness.call(GetDifference(pts, 0, state.date))
        assert isinstance(answer, DifferenceTooLong) and answer.pts == state.pts
    assert isinstance(harness.call(GetDifference(state.pts, 0, state.date)), DifferenceEmpty)


def _statuses(harness: Harness, pushes: list[AnyUpdates]) -> list[UpdateUserStatus]:
    return [u for p in pushes for u in _updates_of(harness, p) if isinstance(u, UpdateUserStatus)]


def test_a_person_who_writes_is_online_then() -> None:
    """As on Telegram: whoever writes a message is online when it arrives, whatever the
    dataset said of them before, and the push that says so follows the message."""
    harness = make_harness(seed=3, peers=20, messages=300)
    store = harness.store
    writers = 0
    for _ in range(150):
        pushes = _step(harness, "message")
        new = [
            u
            for push in pushes
            for u in _updates_of(harness, push)
            if isinstance(u, UpdateNewMessage) and not u.message.out
        ]
        if not new:
            continue
        author = new[0].message.author
        assert author is not None
        (presence,) = store.presences((author,))
        assert presence.status is PresenceStatus.ONLINE
        assert presence.timestamp > store.now()
        assert {s.presence.user for s in _statuses(harness, pushes)} <= {author}
        writers += 1
    assert writers > 50


def test_someone_who_keeps_writing_is_announced_once_while_online() -> None:
    harness = make_harness(seed=3, peers=20, messages=300)
    store, service = harness.store, harness.service
    offline = [
        peer
        for peer, _ in store.chat_sizes()
        if peer_kind(peer) is PeerKind.USER
        and service.traffic.can_write_in(peer)
        and store.presences((peer,))[0].status is not PresenceStatus.ONLINE
    ]
    person = offline[0]
    harness.pushes.clear()
    for _ in range(3):
        assert service.say(person) is not None
    statuses = _statuses(harness, [push for push, _ in harness.pushes])
    assert [s.presence.user for s in statuses] == [person]
    assert statuses[0].presence.status is PresenceStatus.ONLINE
    assert statuses[0].presence.timestamp == store.presences((person,))[0].timestamp


def test_a_share_of_messages_name_peers_the_push_leaves_out_the_same_each_time() -> None:
    """Telegram's min peers: a group member or a forward's source named and not described,
    drawn from the message, so a run leaves out the same; getPeers describes them."""
    runs = []
    for _ in range(2):
        harness = make_harness(seed=5)
        harness.service.generate(300)
        missing: set[int] = set()
        for push, _session in harness.pushes:
            if not isinstance(push, Updates):
                continue
            named = [
                m for u in push.updates if isinstance(m := getattr(u, "message", None), Message)
            ]
            described = {peer.id for peer in push.peers}
            left = {peer.id for peer in harness.store.peers_of(named)} - described
            assert left <= left_out(named)
            missing |= left
        runs.append(sorted(missing))
        fetched = harness.call(GetPeers(tuple(sorted(missing))))
        assert {peer.id for peer in fetched.peers} == missing
    assert runs[0] and runs[0] == runs[1]
