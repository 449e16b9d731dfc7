"""A dataset's recent past replayed into the server's update logs at import."""

from __future__ import annotations

from dataset import AccountSpec, build_dataset
from sync.protocol import (
    GetChannelDifference,
    GetDifference,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
)
from sync.server.store import ServerStore

SPEC = AccountSpec(3, 10, 3, 3, 3_000, 10, log_days=2, edit_share=0.05, delete_share=0.1)


def imported(log_window: int = 100_000):
    dataset = build_dataset(SPEC, keep_dates=True)
    store = ServerStore(clock=lambda: SPEC.now + 60, log_window=log_window)
    store.import_dataset(dataset)
    return dataset, store


def moved_reads(dataset, log_from: int) -> dict[int, tuple[bool, bool]]:
    """Per chat: did its incoming / outgoing read mark move past its top at log_from?"""
    tops: dict[int, int] = {}
    for m in dataset.messages:
        if m.timestamp < log_from:
            tops[int(m.peer_id)] = max(tops.get(int(m.peer_id), 0), m.id)
    return {
        int(peer): (
            state.max_incoming_read_id > tops.get(int(peer), 0),
            state.max_outgoing_read_id > tops.get(int(peer), 0) and peer.namespace != 2,
        )
        for peer, state in dataset.read_states
    }


def test_every_event_since_log_from_has_its_pts_in_date_order():
    dataset, store = imported()
    log_from = SPEC.log_from
    assert log_from is not None
    account = [m for m in dataset.messages if m.peer_id.namespace != 2]
    edits = sum(1 for m in account if (m.edit_timestamp or 0) >= log_from)
    news = sum(1 for m in account if m.timestamp >= log_from)
    deletions = sum(1 for peer, _, _ in dataset.deletions if peer.namespace != 2)
    moved = {p: r for p, r in moved_reads(dataset, log_from).items() if p >> 56 != 2}
    reads = sum(inbox + outbox for inbox, outbox in moved.values())
    assert reads > 0, "the account should have read something while the client was away"
    assert store.state().pts == 1 + news + edits + deletions + reads
    answer = store.difference(GetDifference(1, 0, 0, pts_total_limit=1_000_000))
    assert len(answer.new_messages) == news
    assert sum(isinstance(u, UpdateEditMessage) for u in answer.other_updates) == edits
    assert sum(isinstance(u, UpdateDeleteMessages) for u in answer.other_updates) == deletions
    # The reads come after every other event and leave the server's unread counts.
    read_updates = [u for u in answer.other_updates if isinstance(u, UpdateReadHistoryInbox)]
    assert {u.peer for u in read_updates} == {p for p, (inbox, _) in moved.items() if inbox}
    for update in read_updates:
        assert update.still_unread_count == store.dialog(update.peer).unread_count
    last = answer.other_updates[-reads:]
    assert all(isinstance(u, UpdateReadHistoryInbox | UpdateReadHistoryOutbox) for u in last)


def test_channels_replay_their_own_events():
    dataset, store = imported()
    log_from = SPEC.log_from
    assert log_from is not None
    for channel in (p.id for p in dataset.peers if p.id.namespace == 2):
        posts = [m for m in dataset.messages if m.peer_id == channel]
        events = sum(m.timestamp >= log_from for m in posts)
        events += sum((m.edit_timestamp or 0) >= log_from for m in posts)
        events += sum(peer == channel for peer, _, _ in dataset.deletions)
        events += moved_reads(dataset, log_from)[int(channel)][0]
        assert store.dialog(int(channel)).pts == 1 + events
        if events:
            answer = store.channel_difference(GetChannelDifference(int(channel), 1, limit=10_000))
            kinds = (UpdateEditChannelMessage, UpdateDeleteChannelMessages, UpdateReadChannelInbox)
            others = [u for u in answer.other_updates if isinstance(u, kinds)]
            assert len(answer.new_messages) + len(others) == events


def test_a_short_log_window_keeps_only_the_newest_points():
    _, store = imported(log_window=10)
    pts = store.state().pts
    assert store.logs.start == pts - 10
    assert type(store.difference(GetDifference(1, 0, 0))).__name__ == "DifferenceTooLong"


def test_importing_rows_stores_what_importing_messages_stores(tmp_path):
    from dataset import iter_message_rows, read_dataset, write_dataset

    dataset = build_dataset(SPEC, keep_dates=True)
    write_dataset(dataset, tmp_path / "ds", rows_per_part=700)
    by_rows = ServerStore(clock=lambda: SPEC.now + 60)
    head = read_dataset(tmp_path / "ds", with_messages=False)
    by_rows.import_dataset(head, rows=iter_message_rows(tmp_path / "ds"))
    _, by_messages = imported(log_window=by_rows.log_window)
    assert by_rows.digest() == by_messages.digest()
