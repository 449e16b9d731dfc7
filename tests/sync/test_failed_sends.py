"""Sends the server refuses: final refusals become failed messages and never hold the
queue, passing ones are tried again, and a retry sends the very same request.

The outbound queue runs against the real server's methods without sockets (its store
dedups sends by random id, as it does on the wire).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from postbox import (
    MessageFlags,
    MessageId,
    MessageNamespace,
    PeerId,
    Postbox,
    Transaction,
)
from sync.connection import ConnectionLostError, ServerConnection
from sync.engine import enqueue_delete, enqueue_send
from sync.engine.failed_sends import (
    PERMANENT_ERRORS,
    permanent_refusal,
    retry_failed_send,
    retry_failed_sends,
)
from sync.engine.log_tags import SEND_TAG
from sync.engine.outbound import Outbound
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    MAX_TEXT,
    ErrorCode,
    FrameTooLargeError,
    GetState,
    PeerKind,
    RpcError,
    SendMessage,
    decode_body,
    encode_frame,
    encode_request,
    parse_request,
    peer_kind,
)
from sync.simulation.user import queue_unchecked
from tests.sync.engine_helpers import FAST
from tests.sync.server_helpers import Harness, make_harness

CLOUD = int(MessageNamespace.CLOUD)


@pytest.mark.parametrize(
    ("error", "final"),
    [
        (RpcError("only the channel's admins can post", ErrorCode.CHAT_WRITE_FORBIDDEN), True),
        (RpcError("no peer with id 5", ErrorCode.PEER_ID_INVALID), True),
        (RpcError("params.text: too long", ErrorCode.INVALID_PARAMS), True),
        (FrameTooLargeError("too large"), True),
        (RpcError("slow down", ErrorCode.FLOOD), False),
        (RpcError("wait", ErrorCode.FLOOD_WAIT, seconds=3), False),
        (RpcError("not a member of channel 9", ErrorCode.CHANNEL_PRIVATE), True),
        (RpcError("the server failed to answer", ErrorCode.INTERNAL), False),
        (RpcError("log in first", ErrorCode.AUTH_REQUIRED), False),
        (ConnectionResetError("gone"), False),
        (OSError("disk"), False),
    ],
)
def test_a_final_refusal_is_told_from_a_passing_one(error: BaseException, final: bool) -> None:
    assert (permanent_refusal(error) is error) is final


def test_every_error_code_is_classified_on_purpose() -> None:
    passing = {
        ErrorCode.MALFORMED_FRAME, ErrorCode.UNKNOWN_METHOD, ErrorCode.AUTH_REQUIRED,
        ErrorCode.AUTH_FAILED, ErrorCode.SESSION_REVOKED, ErrorCode.AUTH_TIMEOUT,
        ErrorCode.DEVICE_INVALID, ErrorCode.FLOOD, ErrorCode.INTERNAL,
        # Waited out by the engine before the request goes again.
        ErrorCode.FLOOD_WAIT,
    }  # fmt: skip
    assert PERMANENT_ERRORS | passing == set(ErrorCode)
    assert not PERMANENT_ERRORS & passing


@pytest.fixture
def harness() -> Harness:
    return make_harness(seed=5, peers=20, messages=400)


@pytest.fixture
def postbox() -> Iterator[Postbox]:
    box = Postbox(None)
    yield box
    box.close()


def chat(harness: Harness, kind: PeerKind) -> PeerId:
    return PeerId(next(p for p, _ in harness.store.chat_sizes() if peer_kind(p) is kind))


Call = Callable[[Any], Any]


def through(harness: Harness, calls: list[Any], before: Call | None = None) -> Call:
    """The queue's ``call``: the server's answer (``before`` may refuse first)."""

    async def call(params: Any) -> Any:
        calls.append(params)
        if before is not None:
            before(params)
        return harness.call(params)

    return call


def drain(postbox: Postbox, call: Call, done: Callable[[Outbound], bool]) -> Outbound:
    """Run an outbound queue until ``done`` holds and nothing is queued."""
    outbound = Outbound(postbox, call, on_gap=lambda _reason: None, timeouts=FAST)

    async def run() -> None:
        task = asyncio.create_task(outbound.run())
        try:
            await outbound.changes.wait_for(lambda: done(outbound) and outbound.idle, 10)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run())
    return outbound


def send(postbox: Postbox, peer: PeerId, text: str) -> MessageId:
    return postbox.run(lambda tx: enqueue_send(tx, peer, text, timestamp=1_800_000_000))


def server_texts(harness: Harness, peer: PeerId) -> list[str]:
    return [m.text for m in harness.store.recent_messages(int(peer), 10**6)]


def test_a_refused_send_becomes_a_failed_message_and_the_queue_goes_on(
    harness: Harness, postbox: Postbox
) -> None:
    channel = chat(harness, PeerKind.CHANNEL)
    user, group = chat(harness, PeerKind.USER), chat(harness, PeerKind.GROUP)
    first = send(postbox, channel, "first post")
    send(postbox, user, "to a person")
    second = send(postbox, channel, "second post")
    send(postbox, group, "to a group")
    queued = {(e.peer_id, e.contents["local_id"]): e.contents for e in _queued(postbox)}
    calls: list[Any] = []
    drain(postbox, through(harness, calls), lambda o: o.sent == 2 and o.failed == 2)
    assert "to a person" in server_texts(harness, user)
    assert "to a group" in server_texts(harness, group)
    assert [c.text for c in calls] == ["first post", "to a person", "second post", "to a group"]
    for message_id in (first, second):
        message = postbox.run(functools.partial(Transaction.get_message, message_id=message_id))
        assert message is not None and message.flags == MessageFlags.FAILED
        failure = postbox.run(
            functools.partial(Transaction.get_message_failure, message_id=message_id)
        )
        assert failure is not None
        assert (failure.code, failure.text) == (
            "CHAT_WRITE_FORBIDDEN",
            "only the channel's admins can post",
        )
        # The very request, random id and all, for a retry.
        assert failure.request == queued[(message_id.peer_id, message_id.id)]
    assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == []
    assert _queued(postbox) == []


def test_a_passing_refusal_is_tried_again_and_keeps_the_order(
    harness: Harness, postbox: Postbox
) -> None:
    user = chat(harness, PeerKind.USER)
    busy = iter([True, True])

    def flood(params: Any) -> None:
        if isinstance(params, SendMessage) and next(busy, False):
            raise RpcError("slow down", ErrorCode.FLOOD)

    send(postbox, user, "one")
    send(postbox, user, "two")
    calls: list[Any] = []
    outbound = drain(postbox, through(harness, calls, flood), lambda o: o.sent == 2)
    assert outbound.failed == 0
    assert [c.text for c in calls] == ["one", "one", "one", "two"]
    assert server_texts(harness, user)[:2] == ["two", "one"]


def test_a_text_too_long_for_a_message_fails_without_being_sent(
    harness: Harness, postbox: Postbox
) -> None:
    """Queued past enqueue's checks (which refuse it), as an older client could."""
    user = chat(harness, PeerKind.USER)
    text = "x" * (MAX_TEXT + 1)
    long = postbox.run(
        lambda tx: queue_unchecked(
            tx, user, text, {"random_id": 3, "text": text, "reply_to": None},
            timestamp=1_800_000_000,
        )
    )  # fmt: skip
    send(postbox, user, "short")
    calls: list[Any] = []
    drain(postbox, through(harness, calls), lambda o: o.sent == 1 and o.failed == 1)
    assert [c.text for c in calls] == ["short"]
    failure = postbox.run(lambda tx: tx.get_message_failure(long))
    assert failure is not None and failure.code == "MESSAGE_TOO_LONG"


def test_a_retry_sends_the_same_random_id_and_the_server_keeps_one_copy(
    harness: Harness, postbox: Postbox
) -> None:
    """The send arrived, but its answer said otherwise: sent again, it is not doubled."""
    user = chat(harness, PeerKind.USER)
    message_id = send(postbox, user, "did it arrive?")
    refused = iter([True])

    def arrives_but_is_refused(params: Any) -> None:
        if next(refused, False):
            harness.call(params)
            raise RpcError("no peer with id", ErrorCode.PEER_ID_INVALID)

    calls: list[Any] = []
    drain(postbox, through(harness, calls, arrives_but_is_refused), lambda o: o.failed == 1)
    assert postbox.run(lambda tx: retry_failed_send(tx, message_id))
    message = postbox.run(lambda tx: tx.get_message(message_id))
    assert message is not None and message.flags == MessageFlags.UNSENT
    assert postbox.run(lambda tx: tx.get_message_failure(message_id)) is None
    drain(postbox, through(harness, calls), lambda o: o.sent == 1)
    assert calls[0].random_id == calls[1].random_id
    assert server_texts(harness, user).count("did it arrive?") == 1
    stored = postbox.run(lambda tx: tx.get_messages(user, CLOUD))
    assert [m.text for m in stored].count("did it arrive?") == 1
    assert postbox.run(lambda tx: tx.get_message(message_id)) is None  # the local copy went


def test_retry_all_queues_a_chats_failed_messages_oldest_first(
    harness: Harness, postbox: Postbox
) -> None:
    channel = chat(harness, PeerKind.CHANNEL)
    ids = [send(postbox, channel, text) for text in ("a", "b", "c")]
    calls: list[Any] = []
    drain(postbox, through(harness, calls), lambda o: o.failed == 3)
    assert postbox.run(lambda tx: retry_failed_sends(tx, channel)) == 3
    assert [e.contents["local_id"] for e in _queued(postbox)] == [i.id for i in ids]
    assert postbox.run(lambda tx: tx.get_failed_messages(channel)) == []
    drain(postbox, through(harness, calls), lambda o: o.failed == 3)  # refused again
    assert [c.text for c in calls] == ["a", "b", "c"] * 2
    assert len({c.random_id for c in calls}) == 3
    assert len(postbox.run(lambda tx: tx.get_failed_messages(channel))) == 3


def test_only_a_failed_message_is_retried(harness: Harness, postbox: Postbox) -> None:
    user = chat(harness, PeerKind.USER)
    pending = send(postbox, user, "on its way")
    assert not postbox.run(lambda tx: retry_failed_send(tx, pending))
    assert not postbox.run(lambda tx: retry_failed_send(tx, MessageId(user, 1, 99)))
    assert len(_queued(postbox)) == 1


def test_deleting_a_failed_message_removes_it_here_alone(
    harness: Harness, postbox: Postbox
) -> None:
    channel = chat(harness, PeerKind.CHANNEL)
    message_id = send(postbox, channel, "never posted")
    calls: list[Any] = []
    drain(postbox, through(harness, calls), lambda o: o.failed == 1)
    assert postbox.run(lambda tx: enqueue_delete(tx, channel, [message_id])) == 1
    assert postbox.run(lambda tx: tx.get_message(message_id)) is None
    assert postbox.run(lambda tx: tx.get_failed_message_ids()) == []
    assert _queued(postbox) == []  # nothing to tell the server


def test_a_request_over_the_size_limit_is_refused_before_it_is_written() -> None:
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            pass

    async def run() -> None:
        reader = asyncio.StreamReader()
        connection = ServerConnection(reader, Writer(), max_request_size=64)  # type: ignore[arg-type]
        with pytest.raises(FrameTooLargeError) as raised:
            await connection.call(SendMessage(1, "x" * 100, 1))
        assert raised.value.code is ErrorCode.FRAME_TOO_LARGE
        assert "sendMessage" in str(raised.value)
        assert not written
        pending = asyncio.ensure_future(connection.call(GetState()))
        await asyncio.sleep(0)
        assert written  # small requests still go
        connection.abort("done")
        with pytest.raises(ConnectionLostError):
            await pending
        reader.feed_eof()

    asyncio.run(run())


def over_the_wire(harness: Harness, calls: list[Any]) -> Call:
    """The queue's ``call`` as the client's connection makes it: the request encoded
    into a frame (refused if it is over the limit), then decoded by the server."""

    async def call(params: Any) -> Any:
        calls.append(params)
        frame = encode_frame(encode_request(1, params))
        if len(frame) - 4 > DEFAULT_MAX_FRAME_SIZE:
            raise FrameTooLargeError(f"a request of {len(frame) - 4} bytes is over the limit")
        request = parse_request(decode_body(frame[4:]))
        return harness.service.handle(harness.session, request)

    return call


def test_a_huge_message_queued_first_fails_and_every_send_after_it_goes(
    harness: Harness, postbox: Postbox
) -> None:
    """Written past enqueue's checks (an older client), a text over the frame limit."""
    user, group = chat(harness, PeerKind.USER), chat(harness, PeerKind.GROUP)
    huge_text = "h" * (5 * 1024 * 1024)
    huge = postbox.run(
        lambda tx: queue_unchecked(
            tx, user, huge_text, {"random_id": 1, "text": huge_text, "reply_to": None},
            timestamp=1_800_000_000,
        )
    )  # fmt: skip
    send(postbox, user, "after it, same chat")
    send(postbox, group, "after it, another chat")
    send(postbox, user, "and one more")
    calls: list[Any] = []
    drain(postbox, over_the_wire(harness, calls), lambda o: o.sent == 3 and o.failed == 1)
    assert [c.text for c in calls] == [
        "after it, same chat",
        "after it, another chat",
        "and one more",
    ]
    assert server_texts(harness, user)[:2] == ["and one more", "after it, same chat"]
    assert server_texts(harness, group)[0] == "after it, another chat"
    failure = postbox.run(lambda tx: tx.get_message_failure(huge))
    assert failure is not None and failure.code == "MESSAGE_TOO_LONG"
    assert failure.text == "a message holds at most 4,096 characters, not 5,242,880"
    message = postbox.run(lambda tx: tx.get_message(huge))
    assert message is not None and message.flags == MessageFlags.FAILED
    assert _queued(postbox) == []


@pytest.mark.parametrize(
    ("contents", "code"),
    [
        ({"text": 7, "random_id": 1, "reply_to": None}, "INVALID_PARAMS"),
        ({"text": "no random id", "reply_to": None}, "INVALID_PARAMS"),
        ({"text": "random id too big", "random_id": 2**64 - 1}, "INVALID_PARAMS"),
        ({"text": "bad reply", "random_id": 1, "reply_to": "yesterday"}, "INVALID_PARAMS"),
        ({"text": "bad media", "random_id": 1, "media": [["gif"]]}, "INVALID_PARAMS"),
        ({"text": "", "random_id": 1, "forward": {"from": 1}}, "INVALID_PARAMS"),
        ({"text": "   ", "random_id": 1}, "MESSAGE_EMPTY"),
    ],
)
def test_a_malformed_queued_send_fails_and_the_queue_goes_on(
    harness: Harness, postbox: Postbox, contents: dict[str, Any], code: str
) -> None:
    user, group = chat(harness, PeerKind.USER), chat(harness, PeerKind.GROUP)
    broken = postbox.run(
        lambda tx: queue_unchecked(tx, user, "as shown", contents, timestamp=1_800_000_000)
    )
    send(postbox, user, "next in the chat")
    send(postbox, group, "next elsewhere")
    calls: list[Any] = []
    drain(postbox, over_the_wire(harness, calls), lambda o: o.sent == 2 and o.failed == 1)
    assert "next in the chat" in server_texts(harness, user)
    assert "next elsewhere" in server_texts(harness, group)
    failure = postbox.run(lambda tx: tx.get_message_failure(broken))
    assert failure is not None and failure.code == code
    assert failure.request["local_id"] == broken.id  # kept as written, for a retry
    assert _queued(postbox) == []


def test_a_queued_send_naming_no_message_is_dropped_and_the_queue_goes_on(
    harness: Harness, postbox: Postbox
) -> None:
    user = chat(harness, PeerKind.USER)
    postbox.run(lambda tx: tx.add_operation_log_entry(user, SEND_TAG, ["not", "a", "map"]))
    send(postbox, user, "next")
    calls: list[Any] = []
    drain(postbox, over_the_wire(harness, calls), lambda o: o.sent == 1 and o.failed == 1)
    assert "next" in server_texts(harness, user)
    assert _queued(postbox) == []


def _queued(postbox: Postbox) -> list[Any]:
    def read(tx: Transaction) -> list[Any]:
        return tx.get_merged_operation_log_entries(SEND_TAG)

    return postbox.run(read)
