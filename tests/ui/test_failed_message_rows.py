"""What a failed message shows and offers, and where the compose box gives way to a mute
button: the presenters alone, without Qt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from postbox import (
    MAX_MESSAGE_ID,
    ChatListHole,
    ChatListInclusion,
    ChatListView,
    ChatListViewKey,
    FailedMessageIdsViewKey,
    HistoryAnchor,
    MessageFailure,
    MessageHistoryHoleSpace,
    MessageHistoryView,
    MessageHistoryViewKey,
    MessageId,
    Peer,
    PeerFlags,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    Postbox,
    StoreMessage,
    Transaction,
)
from ui.failed_messages import (
    FailureAction,
    compose_state,
    failure_actions,
    failure_sentence,
    preview_prefix,
)
from ui.rows import (
    ChatRow,
    DeliveryState,
    HistoryRowCache,
    MessageRow,
    chat_list_rows,
    history_rows,
)

NOW = 1_800_000_000
LOCAL = 1
CHANNEL = PeerId.make(PeerNamespace.CHANNEL, 31)
ALICE = PeerId.make(PeerNamespace.USER, 11)
REFUSED = MessageFailure("CHAT_WRITE_FORBIDDEN", "only the channel's admins can post")


def test_the_presenters_import_no_qt() -> None:
    code = "import sys; sys.modules['PySide6'] = None; import ui.failed_messages, ui.rows"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


@pytest.mark.parametrize(
    ("code", "channel", "sentence"),
    [
        ("CHAT_WRITE_FORBIDDEN", True, "You can't post in this channel"),
        ("CHAT_WRITE_FORBIDDEN", False, "You can't write in this chat"),
        ("MESSAGE_TOO_LONG", False, "The message is too long"),
        ("FRAME_TOO_LARGE", False, "The message is too large to send"),
        ("PEER_ID_INVALID", False, "This chat is not available"),
        ("MESSAGE_ID_INVALID", False, "The message it answers or forwards is gone"),
        ("", False, "The message was not sent"),
        ("SOMETHING_NEW", True, "The message was not sent"),
    ],
)
def test_a_refusal_is_said_in_words(code: str, channel: bool, sentence: str) -> None:
    assert failure_sentence(MessageFailure(code, "server words"), channel=channel) == sentence
    assert "_" not in sentence and "server words" not in sentence


def test_a_failed_message_offers_retry_and_delete_and_retry_all_when_several() -> None:
    assert failure_actions(1) == ((FailureAction.RETRY, "Retry"), (FailureAction.DELETE, "Delete"))
    assert failure_actions(3)[-1] == (FailureAction.RETRY_ALL, "Retry all 3")


def test_a_failed_preview_is_not_shown_as_sent() -> None:
    assert preview_prefix(outgoing=True, failed=False) == "You: "
    assert preview_prefix(outgoing=True, failed=True) == "Not sent: "
    assert preview_prefix(outgoing=False, failed=False) == ""


@pytest.mark.parametrize(
    ("flags", "muted_until", "can_post", "label"),
    [
        (int(PeerFlags.BROADCAST), 0, False, "Mute"),
        (int(PeerFlags.BROADCAST), NOW + 60, False, "Unmute"),
        (int(PeerFlags.BROADCAST), NOW - 60, False, "Mute"),
        (int(PeerFlags.BROADCAST | PeerFlags.CAN_POST), 0, True, "Mute"),
        (0, NOW + 60, True, "Unmute"),
    ],
)
def test_a_channel_reader_gets_a_mute_button_instead_of_the_compose_box(
    flags: int, muted_until: int, can_post: bool, label: str
) -> None:
    peer = Peer(CHANNEL, "News", flags=flags)
    state = compose_state(peer, PeerNotificationSettings(muted_until), NOW)
    assert state.can_post is can_post
    if not can_post:
        assert state.mute_label == label
    assert compose_state(None, None, NOW).can_post  # a chat not known yet: the server says


@pytest.fixture
def postbox() -> Postbox:
    box = Postbox(None)

    def seed(tx: Transaction) -> None:
        tx.remove_chat_list_hole(0, ChatListHole.top())
        tx.update_peers([Peer(CHANNEL, "News", flags=int(PeerFlags.BROADCAST)), Peer(ALICE, "A")])
        for peer in (CHANNEL, ALICE):
            tx.update_chat_list_inclusion(peer, ChatListInclusion())
            tx.remove_hole(peer, 0, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)
        tx.add_messages(
            [
                StoreMessage(CHANNEL, 0, 1, NOW - 90, flags=1, text="headline"),
                StoreMessage(ALICE, 0, 1, NOW - 80, flags=1, text="hi"),
                StoreMessage(ALICE, LOCAL, None, NOW - 10, flags=2, text="on its way"),
            ]
        )
        for text in ("first try", "second try"):
            (index,) = tx.add_messages(
                [StoreMessage(CHANNEL, LOCAL, None, NOW, flags=2, text=text)]
            )
            tx.mark_message_failed(index.id, REFUSED)

    box.run(seed)
    return box


def _chat_rows(postbox: Postbox) -> dict[int, ChatRow]:
    key = ChatListViewKey(count=10)
    subscription = postbox.combined_view([key])
    try:
        view: ChatListView = subscription.ready.result()[key]
    finally:
        subscription.dispose()
    return {row.peer_id: row for row in chat_list_rows(view, NOW)}


def test_the_chat_list_marks_the_chat_and_its_failed_preview(postbox: Postbox) -> None:
    rows = _chat_rows(postbox)
    channel, alice = rows[int(CHANNEL)], rows[int(ALICE)]
    assert channel.failed and channel.top_failed and channel.outgoing
    assert channel.preview == "second try"
    assert not alice.failed and not alice.top_failed and alice.outgoing  # pending, not failed
    postbox.run(lambda tx: tx.delete_messages([MessageId(CHANNEL, LOCAL, 2)]))
    channel = _chat_rows(postbox)[int(CHANNEL)]
    assert channel.failed and channel.top_failed and channel.preview == "first try"


def _history(postbox: Postbox, peer: PeerId, namespace: int) -> MessageHistoryView:
    key = MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 10, namespace=namespace)
    subscription = postbox.combined_view([key])
    try:
        return subscription.ready.result()[key]
    finally:
        subscription.dispose()


def _failures(postbox: Postbox, peer: PeerId) -> dict[MessageId, MessageFailure]:
    key = FailedMessageIdsViewKey(peer)
    subscription = postbox.combined_view([key])
    try:
        return dict(subscription.ready.result()[key].failures)
    finally:
        subscription.dispose()


def test_a_failed_bubble_says_why(postbox: Postbox) -> None:
    cache = HistoryRowCache()

    def bubbles() -> list[MessageRow]:
        rows = history_rows(
            _history(postbox, CHANNEL, 0),
            NOW,
            pending=_history(postbox, CHANNEL, LOCAL),
            failures=_failures(postbox, CHANNEL),
            cache=cache,
        )
        return [row for row in rows if isinstance(row, MessageRow)]

    headline, first, second = bubbles()
    assert headline.failure == "" and headline.delivery is None
    assert first.delivery == second.delivery == DeliveryState.FAILED
    assert first.failure == second.failure == "You can't post in this channel"
    too_long = MessageFailure("MESSAGE_TOO_LONG", "at most 4096")
    postbox.run(lambda tx: tx.mark_message_failed(MessageId(CHANNEL, LOCAL, 1), too_long))
    _, first_again, second_again = bubbles()
    assert first_again.failure == "The message is too long"  # a new row, not the cached one
    assert second_again is second
    pending = history_rows(_history(postbox, ALICE, 0), NOW, pending=_history(postbox, ALICE, 1))
    assert [r.failure for r in pending if isinstance(r, MessageRow)] == ["", ""]
