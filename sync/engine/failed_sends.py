"""Sends the server refuses for good: which refusals are final, and sending again.

``permanent_refusal`` is the one place that tells a final refusal (the chat does not
take the message, or the message is not one it could ever take) from a passing one (the
connection, a busy or failing server, a flood limit): the outbound queue records the
first as a failed message and goes on with the next entry, and retries the second with
a growing pause. ``retry_failed_send`` queues a failed message again with the request
it failed with, the same ``random_id`` included: the server stores one message per
random id, so a send that did arrive after all is answered with that message, never
doubled.
"""

from __future__ import annotations

import random
from typing import Any

from postbox import MessageFailure, MessageFlags, MessageId, PeerId, Transaction
from sync.engine.log_tags import SEND_TAG
from sync.protocol import ErrorCode, ProtocolError

__all__ = [
    "PERMANENT_ERRORS",
    "failure_of",
    "permanent_refusal",
    "retry_failed_send",
    "retry_failed_sends",
]

#: Refusals a retry cannot cure: the same request gets the same answer.
PERMANENT_ERRORS = frozenset(
    {
        ErrorCode.PEER_ID_INVALID,
        ErrorCode.CHAT_WRITE_FORBIDDEN,
        ErrorCode.CHANNEL_INVALID,
        ErrorCode.CHANNEL_PRIVATE,
        ErrorCode.MESSAGE_ID_INVALID,
        ErrorCode.MESSAGE_EMPTY,
        ErrorCode.MESSAGE_TOO_LONG,
        ErrorCode.MEDIA_INVALID,
        ErrorCode.STICKERSET_INVALID,
        ErrorCode.INVALID_PARAMS,
        ErrorCode.FRAME_TOO_LARGE,
    }
)
_FAILED = int(MessageFlags.FAILED)
_UNSENT = int(MessageFlags.UNSENT)


def permanent_refusal(error: BaseException) -> ProtocolError | None:
    """``error`` if it refuses an outgoing change for good, else ``None`` (try again)."""
    if isinstance(error, ProtocolError) and error.code in PERMANENT_ERRORS:
        return error
    return None


def failure_of(error: ProtocolError, request: Any) -> MessageFailure:
    """What the failed-messages table keeps of a refused send."""
    return MessageFailure(str(error.code), error.message, request)


def retry_failed_send(
    tx: Transaction, message_id: MessageId, *, rng: random.Random | None = None
) -> bool:
    """Queue a failed message again (unsent, at the end of the queue) with the request it
    failed with; False if it is not a failed message. One whose request is not known (it
    failed before requests were kept) is sent as a new request, with a random id from
    ``rng``."""
    message = tx.get_message(message_id)
    if message is None or not message.flags & _FAILED:
        return False
    failure = tx.get_message_failure(message_id)
    request = None if failure is None else failure.request
    if not isinstance(request, dict) or request.get("local_id") != message_id.id:
        request = {
            "random_id": (rng or random).getrandbits(63),
            "local_id": message_id.id,
            "text": message.text,
            "reply_to": message.reply_to_id,
        }
        if message.media:
            request["media"] = [item.encode() for item in message.media]
    flags = (message.flags & ~_FAILED) | _UNSENT
    tx.update_message(message_id, message.to_store()._replace(flags=flags))
    tx.add_operation_log_entry(message_id.peer_id, SEND_TAG, dict(request))
    return True


def retry_failed_sends(
    tx: Transaction, peer_id: PeerId, *, rng: random.Random | None = None
) -> int:
    """Queue every failed message of a chat again, oldest first; how many."""
    return sum(
        retry_failed_send(tx, message_id, rng=rng)
        for message_id, _ in tx.get_failed_messages(peer_id)
    )
