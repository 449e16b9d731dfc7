"""PeerChatStateTable: each channel's own sync state (its pts)."""

from __future__ import annotations

from postbox.state import ChannelState
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["PeerChatStateTable"]


class PeerChatStateTable(PeerKeyedTable[ChannelState]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "peer_chat_states")

    def _decode(self, peer_id: int, data: bytes) -> ChannelState:
        return ChannelState.decode(data)
