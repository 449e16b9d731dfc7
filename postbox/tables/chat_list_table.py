"""ChatListTable: the sorted chat list of every group, holes included.

Key group(4) pinning(2) timestamp(4) namespace(4) id(4) peer(8) type(1): pinned
chats have the largest pinning keys, so reading a group from its top gives
pinned chats first (lowest pinning index first), then the newest top messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from postbox.chat_list import (
    ChatListEntryType,
    ChatListHole,
    ChatListIndex,
    chat_list_key,
    decode_chat_list_key,
    group_bounds,
)
from postbox.ids import PeerId
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["ChatListEntryKey", "ChatListTable"]


@dataclass(frozen=True, slots=True)
class ChatListEntryKey:
    """One row of a group's chat list: a chat at ``index``, or a hole."""

    index: ChatListIndex
    type: ChatListEntryType

    @property
    def peer_id(self) -> PeerId:
        return self.index.message_index.id.peer_id


class ChatListTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "chat_list")

    def add_entry(self, group_id: int, index: ChatListIndex) -> None:
        """List a chat at ``index``; its key (which names the peer) holds nothing yet,
        since a chat is listed once and its previous entry was removed first."""
        self._set(chat_list_key(group_id, index, ChatListEntryType.MESSAGE), b"", None)

    def remove_entry(self, group_id: int, index: ChatListIndex) -> None:
        """Unlist a chat from ``index``, where the chat list index says it is."""
        self._remove(chat_list_key(group_id, index, ChatListEntryType.MESSAGE), b"")

    def add_hole(self, group_id: int, hole: ChatListHole) -> bool:
        key = chat_list_key(group_id, ChatListIndex(None, hole.index), ChatListEntryType.HOLE)
        if self._contains(key):
            return False
        self._set(key, b"")
        return True

    def remove_hole(self, group_id: int, hole: ChatListHole) -> bool:
        key = chat_list_key(group_id, ChatListIndex(None, hole.index), ChatListEntryType.HOLE)
        if not self._contains(key):
            return False
        self._remove(key)
        return True

    def entries(
        self, group_id: int, *, below: ChatListIndex | None = None, count: int = -1
    ) -> list[ChatListEntryKey]:
        """Up to ``count`` rows of a group from its top (or from just below ``below``)."""
        lower, upper = group_bounds(group_id)
        if below is not None:
            upper = chat_list_key(group_id, below, ChatListEntryType.MESSAGE)
        result = []
        for key, _ in self._range_list(lower, upper, limit=count, reverse=True):
            _, index, entry_type = decode_chat_list_key(key)
            result.append(ChatListEntryKey(index, entry_type))
        return result

    def holes(self, group_id: int) -> list[ChatListHole]:
        return [
            ChatListHole(entry.index.message_index)
            for entry in self.entries(group_id)
            if entry.type is ChatListEntryType.HOLE
        ]

    def pinned_peer_ids(self, group_id: int) -> list[PeerId]:
        """The group's pinned chats, in pinning order."""
        result = []
        for entry in self.entries(group_id):
            if entry.index.pinning_index is None:
                break
            if entry.type is ChatListEntryType.MESSAGE:
                result.append(entry.peer_id)
        return result
