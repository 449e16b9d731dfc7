"""Queueing outgoing changes: each ``enqueue_*`` runs inside a Postbox transaction,
changes the local data at once (a pending message in the local namespace, a read mark,
a mute, a draft, a new text, a message gone) and adds an operation-log entry in the same
transaction, so the intent survives a crash. ``outbound.Outbound`` delivers the entries.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from postbox import (
    ChatInterfaceState,
    ForwardInfo,
    Media,
    Message,
    MessageFlags,
    MessageId,
    MessageNamespace,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    StoreMessage,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine.convert import CLOUD, synced_part
from sync.engine.log_tags import (
    DELETE_TAG,
    DRAFT_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
)
from sync.engine.mutable_state import DeleteMessages as DeleteHere
from sync.engine.payloads import MAX_DRAFT_LENGTH, check_text, send_request
from sync.engine.replay import apply_operation, ensure_listed

__all__ = [
    "ACCOUNT_PEER_PREFERENCE",
    "account_peer",
    "enqueue_delete",
    "enqueue_draft",
    "enqueue_edit",
    "enqueue_forward",
    "enqueue_mute",
    "enqueue_read",
    "enqueue_send",
]

#: Most ids one deleteMessages request carries.
_DELETE_BATCH = 100
_LOCAL = int(MessageNamespace.LOCAL)


#: The preference naming the account's own peer, stored when a connection authorizes.
ACCOUNT_PEER_PREFERENCE = "account.peer_id"


def account_peer(tx: Transaction) -> PeerId | None:
    """The account's own peer (the author of what is sent from here), once known."""
    value = tx.get_preference(ACCOUNT_PEER_PREFERENCE)
    return PeerId(value) if isinstance(value, int) else None


def enqueue_send(
    tx: Transaction,
    peer_id: PeerId,
    text: str,
    *,
    timestamp: int,
    author_id: PeerId | None = None,
    reply_to: int | None = None,
    random_id: int | None = None,
    media: Sequence[Media] = (),
) -> MessageId:
    """Store a pending message in the local namespace and queue its sending (by the
    account's own peer unless ``author_id`` says otherwise). ``media``: a sticker or GIF
    (the text may then be empty), sent with its glyph. ``PayloadError`` (one line,
    nothing stored) for a message the protocol cannot carry, as a text over
    ``MAX_TEXT`` characters."""
    random_id = random.getrandbits(63) if random_id is None else random_id
    author_id = account_peer(tx) if author_id is None else author_id
    contents: dict[str, Any] = {"random_id": random_id, "text": text, "reply_to": reply_to}
    if media:
        contents["media"] = [item.encode() for item in media]
    send_request(int(peer_id), contents)
    message = StoreMessage(
        peer_id,
        _LOCAL,
        None,
        timestamp,
        flags=int(MessageFlags.UNSENT),
        author_id=author_id,
        text=text,
        media=tuple(media),
        reply_to_id=reply_to,
    )
    ensure_listed(tx, (peer_id,))
    (index,) = tx.add_messages([message])
    contents["local_id"] = index.id.id
    tx.add_operation_log_entry(peer_id, SEND_TAG, contents)
    return index.id


def enqueue_forward(
    tx: Transaction,
    peer_id: PeerId,
    sources: Iterable[MessageId],
    *,
    timestamp: int,
    author_id: PeerId | None = None,
    rng: random.Random | None = None,
) -> list[MessageId]:
    """Store pending copies of ``sources`` (oldest first) in ``peer_id`` with the header
    of where each first appeared, and queue forwarding each like a send, so they keep
    their place among the chat's sends. Messages not on the server are left out.
    ``rng`` draws the random ids (a seeded one replays the same)."""
    draw = (rng or random).getrandbits
    author_id = account_peer(tx) if author_id is None else author_id
    forwarded: list[MessageId] = []
    ensure_listed(tx, (peer_id,))
    for source_id in sorted(sources, key=lambda m: m.id):
        source = tx.get_message(source_id)
        if source is None or source_id.namespace != CLOUD:
            continue
        if PeerNamespace.SECRET_CHAT in (peer_id.namespace, source_id.peer_id.namespace):
            raise ValueError("messages of secret chats are not forwarded")
        message = StoreMessage(
            peer_id,
            _LOCAL,
            None,
            timestamp,
            flags=int(MessageFlags.UNSENT),
            tags=source.tags,
            author_id=author_id,
            text=source.text,
            media=source.media,
            forward_info=source.forward_info or _forward_info(source),
        )
        (index,) = tx.add_messages([message])
        contents = {
            "random_id": draw(63),
            "local_id": index.id.id,
            "text": source.text,
            "reply_to": None,
            "forward": [int(source_id.peer_id), source_id.id],
        }
        tx.add_operation_log_entry(peer_id, SEND_TAG, contents)
        forwarded.append(index.id)
    return forwarded


def _forward_info(source: Message) -> ForwardInfo:
    """The header of a first forward of ``source``: a channel post names its channel."""
    peer_id = source.peer_id
    if peer_id.namespace == PeerNamespace.CHANNEL:
        return ForwardInfo(peer_id, source.timestamp, peer_id, source.id.id)
    return ForwardInfo(source.author_id or peer_id, source.timestamp)


def enqueue_read(tx: Transaction, peer_id: PeerId, max_id: int) -> bool:
    """Mark a chat read up to ``max_id`` here, and queue telling the server."""
    if not tx.apply_incoming_read_max_id(MessageId(peer_id, CLOUD, max_id)):
        return False
    for entry in tx.get_operation_log_entries(peer_id, READ_TAG):
        tx.update_operation_log_entry(
            peer_id,
            READ_TAG,
            entry.tag_local_index,
            {"max_id": max(max_id, entry.contents["max_id"])},
        )
        return True
    tx.add_operation_log_entry(peer_id, READ_TAG, {"max_id": max_id})
    return True


def enqueue_mute(tx: Transaction, peer_id: PeerId, muted_until: int) -> None:
    """Mute a chat until ``muted_until`` here (0 unmutes), and queue telling the server,
    which tells the account's other devices. Only the newest choice is sent."""
    settings = tx.get_notification_settings(peer_id) or PeerNotificationSettings()
    tx.update_notification_settings(peer_id, replace(settings, muted_until=muted_until))
    for entry in tx.get_operation_log_entries(peer_id, SETTINGS_TAG):
        tx.update_operation_log_entry(
            peer_id, SETTINGS_TAG, entry.tag_local_index, {"muted_until": muted_until}
        )
        return
    tx.add_operation_log_entry(peer_id, SETTINGS_TAG, {"muted_until": muted_until})


def enqueue_draft(
    tx: Transaction, peer_id: PeerId, draft: SynchronizeableDraft | None, thread_id: int = 0
) -> None:
    """Keep a chat's draft here (an empty one clears it) and, for the chat itself, queue
    sharing it with the account's other devices. Only the newest draft is sent. A draft
    over ``MAX_DRAFT_LENGTH`` characters is refused (``MessageTooLongError``)."""
    if draft is not None:
        check_text(draft.text, "a draft", MAX_DRAFT_LENGTH)
    if draft is not None and draft.is_empty:
        draft = None
    state = tx.get_chat_interface_state(peer_id, thread_id) or ChatInterfaceState()
    if state.draft == draft:
        return
    tx.set_chat_interface_state(peer_id, replace(state, draft=draft), thread_id)
    if thread_id != 0 or peer_id.namespace == PeerNamespace.SECRET_CHAT:
        return  # a topic's draft, and a secret chat's, stay on this device
    text, reply_to = synced_part(draft) or ("", None)
    contents: dict[str, Any] = {"text": text, "reply_to": reply_to}
    for entry in tx.get_operation_log_entries(peer_id, DRAFT_TAG):
        tx.update_operation_log_entry(peer_id, DRAFT_TAG, entry.tag_local_index, contents)
        return
    tx.add_operation_log_entry(peer_id, DRAFT_TAG, contents)


def enqueue_edit(tx: Transaction, message_id: MessageId, text: str) -> bool:
    """Change one of our sent messages' text here, and queue the edit. A text over
    ``MAX_TEXT`` characters is refused (``MessageTooLongError``, nothing changed)."""
    check_text(text, "an edited message")
    message = tx.get_message(message_id)
    if message is None or message.incoming or message_id.namespace != CLOUD:
        return False
    if message_id.peer_id.namespace == PeerNamespace.SECRET_CHAT:
        return False  # a secret chat's messages are not edited, as on Telegram
    if message.forward_info is not None:
        return False  # nor are forwarded ones
    stored = message.to_store()._replace(text=text)
    tx.update_message(message_id, stored)
    tx.add_operation_log_entry(message_id.peer_id, EDIT_TAG, {"id": message_id.id, "text": text})
    return True


def enqueue_delete(
    tx: Transaction, peer_id: PeerId, ids: Iterable[MessageId], *, revoke: bool = True
) -> int:
    """Delete messages of a chat here at once and queue deleting them on the server
    (``revoke``: for everyone). A message not sent yet is simply not sent. Returns how
    many messages went."""
    cloud: list[int] = []
    gone = 0
    for message_id in ids:
        if message_id.peer_id != peer_id:
            raise ValueError(f"{message_id} is not in chat {peer_id!r}")
        if message_id.namespace == _LOCAL:
            gone += _cancel_send(tx, message_id)
        elif message_id.namespace == CLOUD and tx.message_exists(message_id):
            cloud.append(message_id.id)
    if cloud:
        cloud.sort()
        apply_operation(tx, DeleteHere(peer_id, tuple(cloud)))
        for start in range(0, len(cloud), _DELETE_BATCH):
            batch = cloud[start : start + _DELETE_BATCH]
            tx.add_operation_log_entry(peer_id, DELETE_TAG, {"ids": batch, "revoke": revoke})
    return gone + len(cloud)


def _cancel_send(tx: Transaction, message_id: MessageId) -> int:
    message = tx.get_message(message_id)
    if message is not None and message.flags & MessageFlags.FAILED:
        tx.delete_messages([message_id])  # never sent: gone here is gone everywhere
        return 1
    for entry in tx.get_operation_log_entries(message_id.peer_id, SEND_TAG):
        if isinstance(entry.contents, dict) and entry.contents.get("local_id") == message_id.id:
            tx.remove_operation_log_entry(message_id.peer_id, SEND_TAG, entry.tag_local_index)
            tx.delete_messages([message_id])
            return 1
    return 0  # on its way already: it arrives, and can be deleted then
