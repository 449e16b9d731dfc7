"""Read states the server must confirm, as Telegram's validatePeerReadState does.

A chat's unread count is the server's: a dialog sets it, a new incoming message adds
one, a read says what is still unread. Some changes leave the client unable to tell:
a deletion of messages it never stored (were they unread?), a chat-list page whose
counts may predate updates applied while it was on its way, a read of a range with
holes in it. Then the chat is queued for validation: an operation-log entry, written
in the same transaction as the change, so it survives a restart.

``ReadStateValidator`` (``read_state_validator``) asks ``getPeerDialogs`` for the
queued chats as an operation of the state manager's serial queue, so no update is
applied while the answer travels. The answer is as of a state: a chat's read state is
taken only if the stored pts (a channel's own pts for a channel) is exactly that
state's, and no read made here is still on its way. Otherwise the engine catches up
and asks again, with a growing pause.
"""

from __future__ import annotations

from collections.abc import Iterable

from postbox import MessageId, PeerId, Transaction
from sync.engine.convert import CLOUD
from sync.engine.log_tags import VALIDATE_READ_STATE_TAG as VALIDATE_TAG

__all__ = [
    "VALIDATE_AT_ONCE",
    "request_validation",
    "requests_of",
    "validate_after_deletion",
]

#: Chats validated by one request.
VALIDATE_AT_ONCE = 100


def request_validation(tx: Transaction, peer_id: PeerId) -> None:
    """Queue ``peer_id``'s read state for validation (once).

    If it is queued already, the entry's ``again`` count goes up: a validation whose
    answer was asked for before this change (``requests_of``) may not know of it, so
    it must not take that answer for this chat nor remove the entry.
    """
    entries = tx.get_operation_log_entries(peer_id, VALIDATE_TAG)
    if not entries:
        tx.add_operation_log_entry(peer_id, VALIDATE_TAG, {})
        return
    entry = entries[-1]
    contents = entry.contents if isinstance(entry.contents, dict) else {}
    again = contents.get("again", 0)
    again = again + 1 if isinstance(again, int) else 1
    tx.update_operation_log_entry(peer_id, VALIDATE_TAG, entry.tag_local_index, {"again": again})


def requests_of(tx: Transaction, peer_id: PeerId) -> tuple[tuple[int, object], ...]:
    """What queued ``peer_id`` for validation, as of now: compared with the same taken
    later, it tells whether a change asked for validation again in between."""
    return tuple(
        (entry.tag_local_index, entry.contents)
        for entry in tx.get_operation_log_entries(peer_id, VALIDATE_TAG)
    )


def validate_after_deletion(tx: Transaction, peer_id: PeerId, ids: Iterable[int]) -> None:
    """Before deleting ``ids``: queue validation if one of them is not stored and may
    have been counted unread (above the read mark, at or below the newest known id)."""
    combined = tx.get_read_state(peer_id)
    state = combined.get(CLOUD) if combined is not None else None
    if state is None:
        return
    for id_ in ids:
        if state.max_incoming_read_id < id_ <= state.max_known_id and not tx.message_exists(
            MessageId(peer_id, CLOUD, id_)
        ):
            request_validation(tx, peer_id)
            return
