"""ChatListIndexTable: per peer, its chat list inclusion and its top message.

Together they decide where (and whether) the peer sits in the chat list
(``included_index``); the top message is recomputed at commit for every peer
whose history changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from postbox.chat_list import ChatListInclusion, ChatListIndex, included_index
from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError
from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["ChatListIndexTable", "ChatListPeerState"]


@dataclass(frozen=True, slots=True)
class ChatListPeerState:
    peer_id: PeerId
    inclusion: ChatListInclusion | None
    top_message: MessageIndex | None

    def included_index(self) -> tuple[int, ChatListIndex] | None:
        return included_index(self.peer_id, self.inclusion, self.top_message)

    def encode(self) -> bytes:
        inclusion: Any = None
        if self.inclusion is not None:
            inclusion = (
                self.inclusion.group_id,
                self.inclusion.pinning_index,
                self.inclusion.min_timestamp,
            )
        top: Any = None
        if self.top_message is not None:
            top = (
                self.top_message.id.namespace,
                self.top_message.id.id,
                self.top_message.timestamp,
            )
        return pack((1, inclusion, top))

    @classmethod
    def decode(cls, peer_id: int, data: bytes) -> ChatListPeerState:
        fields = unpack(data, "chat list index")
        if not isinstance(fields, tuple) or len(fields) != 3 or fields[0] != 1:
            raise CorruptValueError("stored chat list index has an unknown layout")
        peer = PeerId(peer_id)
        with decoding("chat list index"):
            inclusion = None
            if fields[1] is not None:
                if not all(type(v) is int or v is None for v in fields[1]):
                    raise TypeError("an inclusion field is not a number")
                inclusion = ChatListInclusion(*fields[1])
            top = None
            if fields[2] is not None:
                namespace, id_, timestamp = fields[2]
                if not all(type(v) is int for v in (namespace, id_, timestamp)):
                    raise TypeError("the top message's index is not made of numbers")
                top = MessageIndex(MessageId(peer, namespace, id_), timestamp)
        return cls(peer, inclusion, top)


class ChatListIndexTable(PeerKeyedTable[ChatListPeerState]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "chat_list_index")

    def _decode(self, peer_id: int, data: bytes) -> ChatListPeerState:
        return ChatListPeerState.decode(peer_id, data)

    def state(self, peer_id: PeerId) -> ChatListPeerState:
        return self.get(peer_id) or ChatListPeerState(peer_id, None, None)

    def set_inclusion(self, peer_id: PeerId, inclusion: ChatListInclusion | None) -> None:
        current = self.state(peer_id)
        if current.inclusion != inclusion:
            self.set(peer_id, ChatListPeerState(peer_id, inclusion, current.top_message))

    def set_top_message(self, peer_id: PeerId, top_message: MessageIndex | None) -> None:
        current = self.state(peer_id)
        if current.top_message != top_message:
            self.set(peer_id, ChatListPeerState(peer_id, current.inclusion, top_message))
