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

import dataclasses
import logging
from collections.abc import Iterable

from postbox import (
    ChatListInclusion,
    MessageId,
    PeerGroupId,
    PeerId,
    PeerNotificationSettings,
    PeerReadState,
    Transaction,
)
from sync.engine.convert import CLOUD, read_state_from_dialog
from sync.engine.log_tags import READ_TAG
from sync.engine.log_tags import VALIDATE_READ_STATE_TAG as VALIDATE_TAG
from sync.protocol import Dialog, PeerDialogs

__all__ = [
    "VALIDATE_AT_ONCE",
    "apply_peer_dialogs",
    "request_validation",
    "validate_after_deletion",
]

log = logging.getLogger("postbox.sync")

#: Chats validated by one request.
VALIDATE_AT_ONCE = 100


def request_validation(tx: Transaction, peer_id: PeerId) -> None:
    """Queue ``peer_id``'s read state for validation (once)."""
    if not tx.get_operation_log_entries(peer_id, VALIDATE_TAG):
        tx.add_operation_log_entry(peer_id, VALIDATE_TAG, {})


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


def _apply_settings(tx: Transaction, peer_id: PeerId, dialog: Dialog) -> None:
    """What no update orders: the chat's folder and its mute, as the server has them now."""
    group = PeerGroupId.ARCHIVE if dialog.folder else PeerGroupId.ROOT
    inclusion = tx.get_chat_list_inclusion(peer_id)
    if inclusion is not None and inclusion.group_id != group:
        tx.update_chat_list_inclusion(peer_id, ChatListInclusion(group))
    settings = tx.get_notification_settings(peer_id) or PeerNotificationSettings()
    if settings.muted_until != dialog.muted_until:
        tx.update_notification_settings(
            peer_id, dataclasses.replace(settings, muted_until=dialog.muted_until)
        )


def apply_peer_dialogs(
    tx: Transaction, peers: list[PeerId], answer: PeerDialogs
) -> tuple[list[PeerId], int]:
    """Take each dialog whose state is the stored one; the chats still to validate, and
    how many read states the server's answer changed. A chat's folder and mute are
    taken from any answer."""
    cursor = tx.get_state()
    corrected = 0
    dialogs = {PeerId(dialog.peer): dialog for dialog in answer.dialogs}
    waiting: list[PeerId] = []
    for peer_id in peers:
        entries = tx.get_operation_log_entries(peer_id, VALIDATE_TAG)
        dialog = dialogs.get(peer_id)
        if dialog is not None:
            _apply_settings(tx, peer_id, dialog)
            if dialog.pts is not None:
                channel = tx.get_peer_chat_state(peer_id)
                current = channel is not None and channel.pts == dialog.pts
            else:
                current = cursor is not None and cursor.pts == answer.state.pts
            if not current or tx.get_operation_log_entries(peer_id, READ_TAG):
                waiting.append(peer_id)
                continue
            stored = tx.get_read_state(peer_id)
            previous = (stored.get(CLOUD) if stored else None) or PeerReadState()
            server = read_state_from_dialog(dialog)
            if server != previous:
                log.info(
                    "read state of %s corrected: unread %d -> %d",
                    int(peer_id),
                    previous.count,
                    server.count,
                )
                tx.reset_read_state(peer_id, CLOUD, server)
                corrected += 1
        for entry in entries:
            tx.remove_operation_log_entry(peer_id, VALIDATE_TAG, entry.tag_local_index)
    return waiting, corrected
