"""Payload limits at enqueue: a text, a caption, an edit or a draft the protocol cannot
carry is refused with one typed line before anything is stored, whoever queues it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from postbox import (
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    MessageFlags,
    MessageId,
    MessageNamespace,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine import enqueue_draft, enqueue_edit, enqueue_send
from sync.engine.log_tags import DRAFT_TAG, EDIT_TAG, SEND_TAG
from sync.engine.payloads import (
    MAX_DRAFT_LENGTH,
    MessageTooLongError,
    PayloadError,
    send_request,
)
from sync.protocol import MAX_TEXT, ErrorCode, ForwardMessages, SendMessage

ALICE = PeerId.make(PeerNamespace.USER, 1001)
CLOUD = int(MessageNamespace.CLOUD)
NOW = 1_800_000_000
GIF = Media(MediaKind.GIF, 7, glyph=Glyph("🎉", GlyphShape.CIRCLE, 0x336699, 0))


@pytest.fixture
def postbox() -> Iterator[Postbox]:
    box = Postbox(None)
    yield box
    box.close()


def stored(postbox: Postbox) -> tuple[Any, ...]:
    """Everything an enqueue could have written."""

    def read(tx: Transaction) -> tuple[Any, ...]:
        return (
            tx.get_messages(ALICE, int(MessageNamespace.LOCAL)),
            tx.get_messages(ALICE, CLOUD),
            [e.contents for tag in (SEND_TAG, EDIT_TAG, DRAFT_TAG)
             for e in tx.get_operation_log_entries(ALICE, tag)],
            tx.get_chat_interface_state(ALICE),
            tx.get_chat_list_position(ALICE),
        )  # fmt: skip

    return postbox.run(read)


def refused(postbox: Postbox, fn: Callable[[Transaction], Any]) -> PayloadError:
    before = stored(postbox)
    with pytest.raises(PayloadError) as raised:
        postbox.run(fn)
    assert stored(postbox) == before
    assert "\n" not in str(raised.value)
    return raised.value


def test_a_text_over_the_limit_is_refused_and_nothing_stored(postbox: Postbox) -> None:
    error = refused(
        postbox, lambda tx: enqueue_send(tx, ALICE, "x" * (MAX_TEXT + 1), timestamp=NOW)
    )
    assert isinstance(error, MessageTooLongError)
    assert error.code is ErrorCode.MESSAGE_TOO_LONG
    assert str(error) == "MESSAGE_TOO_LONG: a message holds at most 4,096 characters, not 4,097"
    postbox.run(lambda tx: enqueue_send(tx, ALICE, "x" * MAX_TEXT, timestamp=NOW))  # the limit


def test_a_caption_over_the_limit_is_refused(postbox: Postbox) -> None:
    error = refused(
        postbox,
        lambda tx: enqueue_send(tx, ALICE, "y" * 5000, timestamp=NOW, media=(GIF,)),
    )
    assert "a caption holds at most 4,096 characters, not 5,000" in str(error)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"text": "   "}, "a message needs some text or media"),
        ({"random_id": 2**63}, "random_id"),
        ({"reply_to": 0}, "reply_to"),
        ({"media": (Media(MediaKind.GIF, 7, url="u" * 3000),)}, "media[0].url"),
        ({"media": (GIF,) * 11}, "media"),
    ],
)
def test_a_send_the_protocol_cannot_carry_is_refused(
    postbox: Postbox, kwargs: dict[str, Any], says: str
) -> None:
    fields: dict[str, Any] = {"text": "hi", "timestamp": NOW, **kwargs}
    error = refused(postbox, lambda tx: enqueue_send(tx, ALICE, **fields))
    assert says in str(error)


def test_an_edit_over_the_limit_is_refused_and_the_text_kept(postbox: Postbox) -> None:
    sent = MessageId(ALICE, CLOUD, 5)
    postbox.run(lambda tx: tx.add_messages([StoreMessage(ALICE, CLOUD, 5, NOW, text="before")]))
    error = refused(postbox, lambda tx: enqueue_edit(tx, sent, "z" * (MAX_TEXT + 1)))
    assert "an edited message holds at most 4,096 characters" in str(error)
    message = postbox.run(lambda tx: tx.get_message(sent))
    assert message is not None and message.text == "before"


def test_a_draft_may_outgrow_a_message_but_not_the_draft_limit(postbox: Postbox) -> None:
    long = SynchronizeableDraft("d" * (MAX_TEXT * 2), None, NOW)
    postbox.run(lambda tx: enqueue_draft(tx, ALICE, long))
    huge = SynchronizeableDraft("d" * (MAX_DRAFT_LENGTH + 1), None, NOW)
    error = refused(postbox, lambda tx: enqueue_draft(tx, ALICE, huge))
    assert f"a draft holds at most {MAX_DRAFT_LENGTH:,} characters" in str(error)
    state = postbox.run(lambda tx: tx.get_chat_interface_state(ALICE))
    assert state is not None and state.draft == long


@pytest.mark.parametrize(
    ("contents", "says"),
    [
        ([1, 2], "a queued send is a map, not list"),
        ({"text": 5, "random_id": 1}, "the text of a message is int, not a string"),
        ({"text": "hi"}, "random_id"),
        ({"text": "hi", "random_id": 2**64}, "random_id"),
        ({"text": "hi", "random_id": 1, "reply_to": "x"}, "reply_to"),
        ({"text": "hi", "random_id": 1, "media": [[99]]}, "the media of a send cannot be read"),
        ({"text": "hi", "random_id": 1, "media": 3}, "the media of a send are a list"),
        ({"text": "", "random_id": 1, "forward": "x"}, "a forward names its source"),
        ({"text": "", "random_id": 1, "forward": [1, 0]}, "ids[0]"),
        ({"text": "w" * (5 * 1024 * 1024), "random_id": 1}, "not 5,242,880"),
    ],
)
def test_a_queued_send_is_read_back_into_a_checked_request(contents: Any, says: str) -> None:
    with pytest.raises(PayloadError) as raised:
        send_request(int(ALICE), contents)
    assert says in str(raised.value)


def test_a_well_formed_entry_makes_its_request() -> None:
    media = [GIF.encode()]
    request = send_request(int(ALICE), {"text": "", "random_id": 9, "media": media})
    assert isinstance(request, SendMessage) and request.random_id == 9
    assert request.media[0].id == 7
    forward = send_request(int(ALICE), {"text": "", "random_id": 9, "forward": [5, 3]})
    assert forward == ForwardMessages(5, (3,), int(ALICE), (9,))


def test_an_accepted_send_is_stored_unsent(postbox: Postbox) -> None:
    local = postbox.run(lambda tx: enqueue_send(tx, ALICE, "fine", timestamp=NOW))
    message = postbox.run(lambda tx: tx.get_message(local))
    assert message is not None and message.flags == MessageFlags.UNSENT
