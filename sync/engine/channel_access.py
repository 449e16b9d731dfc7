"""Channels the server refuses for good: the chat forgotten, and the refusal recorded.

When the account is removed from a channel, Telegram's server answers every request
about it with ``CHANNEL_PRIVATE`` (``CHANNEL_INVALID`` for one that is gone), and the
apps drop the chat from the list. ``forget_channel`` does that in one transaction: the
chat leaves the list and its pinned places, its stored messages and holes go (a
message waiting to be sent or refused there too, with what was queued for the chat),
its read state is cleared, and the channel is recorded under
``INACCESSIBLE_CHANNELS_PREFERENCE`` so that a restart does not ask about it again.
"""

from __future__ import annotations

from postbox import (
    MessageHistoryHoleSpace,
    MessageNamespace,
    MessageTags,
    PeerGroupId,
    PeerId,
    PeerReadState,
    Transaction,
)
from sync.engine.convert import CLOUD
from sync.engine.log_tags import (
    DELETE_TAG,
    DRAFT_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
    VALIDATE_READ_STATE_TAG,
    VALIDATE_TAG_SUMMARIES_TAG,
)
from sync.protocol import ErrorCode, ProtocolError

__all__ = [
    "CHANNEL_GONE",
    "INACCESSIBLE_CHANNELS_PREFERENCE",
    "channel_gone",
    "forget_channel",
    "inaccessible_channels",
]

#: The preference listing the channels the server refused for good (their ids).
INACCESSIBLE_CHANNELS_PREFERENCE = "sync.inaccessible_channels"
#: Refusals that say a channel is out of reach for good.
CHANNEL_GONE = frozenset({ErrorCode.CHANNEL_PRIVATE, ErrorCode.CHANNEL_INVALID})
_LOG_TAGS = (
    SEND_TAG,
    READ_TAG,
    EDIT_TAG,
    VALIDATE_READ_STATE_TAG,
    VALIDATE_TAG_SUMMARIES_TAG,
    DELETE_TAG,
    SETTINGS_TAG,
    DRAFT_TAG,
)
_LOCAL = int(MessageNamespace.LOCAL)


def channel_gone(error: BaseException) -> bool:
    """Whether ``error`` is the server's refusal of a channel for good."""
    return isinstance(error, ProtocolError) and error.code in CHANNEL_GONE


def inaccessible_channels(tx: Transaction) -> frozenset[int]:
    """The channels recorded as refused for good."""
    stored = tx.get_preference(INACCESSIBLE_CHANNELS_PREFERENCE)
    if not isinstance(stored, list | tuple):
        return frozenset()
    return frozenset(item for item in stored if isinstance(item, int))


def forget_channel(tx: Transaction, peer_id: PeerId) -> None:
    """Drop a channel the server refuses for good from the chat list with all that is
    stored of it, and record it as refused. (Its cloud history the caller has emptied
    already: ``replay.replace_range`` over every id.)"""
    for tag in MessageTags:
        if int(tag) > 0 and not int(tag) & (int(tag) - 1):
            space = MessageHistoryHoleSpace.tagged(int(tag))
            for hole in tx.get_holes(peer_id, CLOUD, space):
                tx.remove_hole(peer_id, CLOUD, space, hole.lower, hole.upper)
    local = [message.id for message in tx.get_messages(peer_id, _LOCAL)]
    for log_tag in _LOG_TAGS:
        for entry in tx.get_operation_log_entries(peer_id, log_tag):
            tx.remove_operation_log_entry(peer_id, log_tag, entry.tag_local_index)
    if local:
        tx.delete_messages(local)
    for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
        pinned = tx.get_pinned_peer_ids(group)
        if peer_id in pinned:
            tx.set_pinned_peer_ids(group, [p for p in pinned if p != peer_id])
    if tx.get_chat_list_inclusion(peer_id) is not None:
        tx.update_chat_list_inclusion(peer_id, None)
    if tx.get_read_state(peer_id) is not None:
        tx.reset_read_state(peer_id, CLOUD, PeerReadState())
    recorded = inaccessible_channels(tx)
    if int(peer_id) not in recorded:
        tx.set_preference(INACCESSIBLE_CHANNELS_PREFERENCE, sorted(recorded | {int(peer_id)}))
