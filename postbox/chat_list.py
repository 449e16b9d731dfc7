"""The chat list's value types: inclusion rules, ordering indices and holes."""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import NamedTuple

from postbox.errors import InvalidArgumentError
from postbox.ids import MAX_TIMESTAMP, MessageId, MessageIndex, PeerId
from postbox.keys import O32, O64, wrong_key

__all__ = [
    "ChatListEntryType",
    "ChatListHole",
    "ChatListInclusion",
    "ChatListIndex",
    "PeerGroupId",
    "included_index",
]

#: The highest pinning index; pinned chats sort by it, lowest first.
MAX_PINNING_INDEX = 0xFFFF - 2


class PeerGroupId(enum.IntEnum):
    ROOT = 0
    ARCHIVE = 1


class ChatListEntryType(enum.IntEnum):
    MESSAGE = 1
    HOLE = 2


@dataclass(frozen=True, slots=True)
class ChatListInclusion:
    """A peer is listed in ``group_id`` if it has messages or one of these says so.

    (The seeds' ``ifHasMessagesOrOneOf``; a peer with no inclusion is ``notIncluded``.)
    """

    group_id: int = PeerGroupId.ROOT
    pinning_index: int | None = None
    min_timestamp: int | None = None

    def __post_init__(self) -> None:
        if self.pinning_index is not None and not 0 <= self.pinning_index <= MAX_PINNING_INDEX:
            raise InvalidArgumentError(
                f"pinning index {self.pinning_index} is outside 0..{MAX_PINNING_INDEX}"
            )


class ChatListIndex(NamedTuple):
    """A chat's position: pinned chats first by pinning index, then newest top message."""

    pinning_index: int | None
    message_index: MessageIndex

    @property
    def pinning_key(self) -> int:
        return 0 if self.pinning_index is None else 0xFFFF - 1 - self.pinning_index

    @property
    def order(self) -> tuple[int, int, int, int, int]:
        """Ascending order of the chat list table; the top of the list is the largest."""
        (peer_id, namespace, id_), timestamp = self.message_index
        return (self.pinning_key, timestamp, namespace, id_, peer_id)


@dataclass(frozen=True, slots=True)
class ChatListHole:
    """Everything older than ``index`` in a group is not loaded yet."""

    index: MessageIndex

    @classmethod
    def top(cls) -> ChatListHole:
        """The hole an empty chat list starts with: everything is unknown."""
        return cls(MessageIndex(MessageId(PeerId(0), 0, 1), MAX_TIMESTAMP))


# group(4) pinning(2) timestamp(4) namespace(4) id(4) peer(8) type(1)
CHAT_LIST_KEY = struct.Struct(">IHIIIQB")


def chat_list_key(group_id: int, index: ChatListIndex, entry_type: ChatListEntryType) -> bytes:
    (peer_id, namespace, id_), timestamp = index.message_index
    return CHAT_LIST_KEY.pack(
        group_id + O32,
        index.pinning_key,
        timestamp,
        namespace + O32,
        id_ + O32,
        peer_id + O64,
        entry_type,
    )


_ENTRY_TYPES: dict[int, ChatListEntryType] = {kind.value: kind for kind in ChatListEntryType}


def decode_chat_list_key(key: bytes) -> tuple[int, ChatListIndex, ChatListEntryType]:
    try:
        group, pinning_key, timestamp, namespace, id_, peer, entry_type = CHAT_LIST_KEY.unpack(key)
    except (struct.error, TypeError) as error:
        raise wrong_key("chat list", key, error) from error
    pinning_index = None if pinning_key == 0 else 0xFFFF - 1 - pinning_key
    # The tuples are built without their constructors' checks: every field is a number
    # that was unpacked above (a chat list of 50 rows decodes 50 keys per re-emit).
    new = tuple.__new__
    message_id = new(MessageId, (PeerId(peer - O64), namespace - O32, id_ - O32))
    message_index = new(MessageIndex, (message_id, timestamp))
    kind = _ENTRY_TYPES.get(entry_type)
    if kind is None:
        raise wrong_key("chat list", key, ValueError(f"no entry type {entry_type}"))
    return group - O32, ChatListIndex(pinning_index, message_index), kind


def group_bounds(group_id: int) -> tuple[bytes, bytes]:
    """The key range ``[lower, upper)`` of one group's entries."""
    return struct.pack(">I", group_id + O32), struct.pack(">I", group_id + O32 + 1)


def included_index(
    peer_id: PeerId, inclusion: ChatListInclusion | None, top_message: MessageIndex | None
) -> tuple[int, ChatListIndex] | None:
    """Where a peer sits in the chat list, or ``None`` if it is not listed.

    A peer with a top message is listed by it; without one, a pinned peer is listed
    at timestamp 0 and a peer with a minimum timestamp at that timestamp.
    """
    if inclusion is None:
        return None
    if top_message is not None:
        message_index = top_message
        if inclusion.min_timestamp is not None and inclusion.min_timestamp > top_message.timestamp:
            message_index = MessageIndex(top_message.id, inclusion.min_timestamp)
        return inclusion.group_id, ChatListIndex(inclusion.pinning_index, message_index)
    if inclusion.pinning_index is not None:
        return inclusion.group_id, ChatListIndex(
            inclusion.pinning_index, MessageIndex(MessageId(peer_id, 0, 0), 0)
        )
    if inclusion.min_timestamp is not None:
        return inclusion.group_id, ChatListIndex(
            None, MessageIndex(MessageId(peer_id, 0, 1), inclusion.min_timestamp)
        )
    return None
