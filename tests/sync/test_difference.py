"""getDifference and getChannelDifference replay exactly what a client missed.

A plain reference model (dicts of messages and read marks) starts from the server's
truth at some earlier pts, applies the difference (slices chained) and must then equal
the server's current truth; channels the same with getChannelDifference.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.protocol import (
    ChannelDifference,
    ChannelDifferenceEmpty,
    ChannelDifferenceTooLong,
    Difference,
    DifferenceEmpty,
    DifferenceSlice,
    DifferenceTooLong,
    GetChannelDifference,
    GetDifference,
    Message,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNotifySettings,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
)
from tests.sync.server_helpers import Truth, make_harness, random_action, truth


class AccountModel:
    """What a client knows of the account's private chats and groups."""

    def __init__(self, known: Truth) -> None:
        self.messages, self.read_marks = known.account_part()
        self.pts = known.pts
        self.qts = known.qts
        #: The mutes the difference told of, by chat.
        self.mutes: dict[int, int] = {}

    def apply(self, messages: tuple[Message, ...], updates: tuple[object, ...]) -> None:
        for message in messages:
            self.messages[(message.peer, message.id)] = message
            self.read_marks.setdefault(message.peer, (0, 0))  # a chat opened since
        for update in updates:
            if isinstance(update, UpdateEditMessage):
                self.messages[(update.message.peer, update.message.id)] = update.message
            elif isinstance(update, UpdateDeleteMessages):
                for message_id in update.ids:
                    del self.messages[(update.peer, message_id)]
            elif isinstance(update, UpdateReadHistoryInbox):
                self.read_marks[update.peer] = (update.max_id, self.read_marks[update.peer][1])
            elif isinstance(update, UpdateReadHistoryOutbox):
                self.read_marks[update.peer] = (self.read_marks[update.peer][0], update.max_id)
            elif isinstance(update, UpdateNotifySettings):
                self.mutes[update.peer] = update.muted_until
            else:
                raise AssertionError(f"unexpected update in a difference: {update!r}")


def catch_up(harness, model: AccountModel, date: int, limit: int) -> tuple[int, Difference]:
    """Chain getDifference until it is final; the number of calls and the last answer."""
    calls = 0
    while True:
        calls += 1
        assert calls < 10_000, "the difference never ends"
        answer = harness.call(GetDifference(model.pts, model.qts, date, pts_total_limit=limit))
        if isinstance(answer, DifferenceSlice):
            reached = answer.intermediate_state
            assert (reached.pts, reached.qts) > (model.pts, model.qts), "a slice must progress"
            assert reached.pts >= model.pts and reached.qts >= model.qts
            model.apply(answer.new_messages + answer.new_encrypted_messages, answer.other_updates)
            model.pts, model.qts = reached.pts, reached.qts
            date = reached.date
            continue
        if isinstance(answer, DifferenceEmpty):
            return calls, Difference((), (), (), harness.store.state())
        assert isinstance(answer, Difference), answer
        model.apply(answer.new_messages + answer.new_encrypted_messages, answer.other_updates)
        model.pts, model.qts = answer.state.pts, answer.state.qts
        return calls, answer


def channel_catch_up(harness, channel: int, known: Truth, limit: int):
    messages, read_inbox = known.channel_part(channel)
    pts = known.channel_pts[channel]
    for _ in range(10_000):
        answer = harness.call(GetChannelDifference(channel, pts, limit))
        if isinstance(answer, ChannelDifferenceEmpty):
            assert answer.pts == pts
            return messages, read_inbox, pts
        assert isinstance(answer, ChannelDifference), answer
        for message in answer.new_messages:
            messages[(channel, message.id)] = message
        for update in answer.other_updates:
            if isinstance(update, UpdateEditChannelMessage):
                messages[(channel, update.message.id)] = update.message
            elif isinstance(update, UpdateDeleteChannelMessages):
                for message_id in update.ids:
                    del messages[(channel, message_id)]
            elif isinstance(update, UpdateReadChannelInbox):
                read_inbox = update.max_id
            else:
                raise AssertionError(f"unexpected channel update {update!r}")
        assert answer.pts > pts
        pts = answer.pts
        if answer.final:
            return messages, read_inbox, pts
    raise AssertionError("the channel difference never ends")


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32),
    steps=st.integers(1, 120),
    start_fraction=st.floats(0, 1),
    limit=st.integers(1, 40),
)
def test_a_difference_from_any_earlier_pts_reproduces_the_server(
    seed, steps, start_fraction, limit
) -> None:
    harness = make_harness(seed=seed % 1000)
    rng = random.Random(seed)
    history = [truth(harness.store)]
    for _ in range(steps):
        random_action(harness, rng)
        history.append(truth(harness.store))
    known = history[int(start_fraction * (len(history) - 1))]
    now = truth(harness.store)

    model = AccountModel(known)
    _calls, final = catch_up(harness, model, known.date, limit)
    assert model.pts == now.pts == final.state.pts
    assert model.qts == now.qts == final.state.qts
    expected_messages, expected_marks = now.account_part()
    assert model.messages == expected_messages
    assert model.read_marks == expected_marks
    for peer, muted_until in model.mutes.items():  # the newest mute of each chat wins
        assert harness.store.dialog(peer).muted_until == muted_until

    # Exactly the channels that moved are named in the final answer; each catches up.
    moved = {hint.channel: hint.pts for hint in final.channels}
    assert moved == {
        channel: pts
        for channel, pts in now.channel_pts.items()
        if pts != known.channel_pts[channel]
    }
    for channel, pts in now.channel_pts.items():
        messages, read_inbox, reached = channel_catch_up(harness, channel, known, limit)
        assert reached == pts
        assert (messages, read_inbox) == now.channel_part(channel)


def test_slices_respect_the_limit_and_chain_to_the_end() -> None:
    harness = make_harness()
    start = truth(harness.store)
    rng = random.Random(3)
    for _ in range(200):
        random_action(harness, rng)
    moved = harness.store.state().pts - start.pts
    model = AccountModel(start)
    calls, _ = catch_up(harness, model, 0, 10)
    assert calls >= moved // 10
    assert model.pts == harness.store.state().pts


def test_an_up_to_date_client_gets_an_empty_difference() -> None:
    harness = make_harness()
    state = harness.store.state()
    answer = harness.call(GetDifference(state.pts, 0, state.date))
    assert isinstance(answer, DifferenceEmpty)
    assert answer.seq == state.seq
    assert answer.date > state.date  # the server's clock ticks on every read here


def test_a_client_behind_the_retained_window_is_told_too_long() -> None:
    harness = make_harness(log_window=20)
    start = harness.store.state()
    rng = random.Random(5)
    while harness.store.state().pts < start.pts + 60:
        random_action(harness, rng)
    current = harness.store.state()
    assert harness.call(GetDifference(start.pts, 0, start.date)) == DifferenceTooLong(current.pts)
    # Within the window the difference is still answered in full.
    model = AccountModel(truth(harness.store))
    model.pts = current.pts - 20
    answer = harness.call(GetDifference(model.pts, 0, start.date))
    assert isinstance(answer, Difference)


def test_a_channel_behind_its_window_gets_too_long_with_its_newest_messages() -> None:
    harness = make_harness(log_window=5)
    channel = next(p for p, pts in truth(harness.store).channel_pts.items())
    before = harness.store.dialog(channel).pts
    assert before is not None
    for _ in range(10):
        harness.store.add_message(channel, out=False, author=channel, text="post")
    answer = harness.call(GetChannelDifference(channel, before, 7))
    assert isinstance(answer, ChannelDifferenceTooLong)
    assert answer.dialog.pts == before + 10
    assert [m.id for m in answer.messages] == [
        m.id for m in harness.store.recent_messages(channel, 7)
    ]


def test_a_pts_ahead_of_the_server_is_too_long() -> None:
    harness = make_harness()
    state = harness.store.state()
    assert isinstance(harness.call(GetDifference(state.pts + 5, 0, 0)), DifferenceTooLong)


@pytest.mark.parametrize("limit", [1, 3])
def test_multi_point_updates_are_never_split(limit: int) -> None:
    harness = make_harness()
    start = harness.store.state()
    peer_id = next(p for p, n in harness.store.chat_sizes() if n >= 5 and p >> 56 != 2)
    ids = tuple(m.id for m in harness.store.recent_messages(peer_id, 4))
    harness.store.delete_messages(peer_id, ids)
    answer = harness.call(GetDifference(start.pts, 0, start.date, pts_total_limit=limit))
    assert isinstance(answer, Difference)
    (update,) = answer.other_updates
    assert isinstance(update, UpdateDeleteMessages)
    assert update.pts_count == 4


def test_a_difference_names_the_authors_of_the_messages_its_edits_carry() -> None:
    harness = make_harness()
    store = harness.store
    start = store.state()
    groups = [p for p, n in store.chat_sizes() if n and p >> 56 == 1]
    group = groups[0]
    message = next(m for m in store.recent_messages(group, 50) if not m.out and m.author)
    store.edit_message(group, message.id, "changed")
    answer = harness.call(GetDifference(start.pts, start.qts, start.date))
    assert isinstance(answer, Difference)
    assert not answer.new_messages
    assert message.author in {peer.id for peer in answer.peers}
