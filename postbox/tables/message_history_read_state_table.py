"""MessageHistoryReadStateTable: each peer's id-based read states, per message namespace."""

from __future__ import annotations

from postbox.read_state import CombinedPeerReadState, PeerReadState
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryReadStateTable"]


class MessageHistoryReadStateTable(PeerKeyedTable[CombinedPeerReadState]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "read_states")

    def _decode(self, peer_id: int, data: bytes) -> CombinedPeerReadState:
        return CombinedPeerReadState.decode(data)

    def get_state(self, peer_id: int, namespace: int) -> PeerReadState | None:
        combined = self.get(peer_id)
        return None if combined is None else combined.get(namespace)

    def set_state(self, peer_id: int, namespace: int, state: PeerReadState) -> None:
        combined = self.get(peer_id)
        states = {} if combined is None else combined.as_dict()
        if states.get(namespace) != state:
            states[namespace] = state
            self.set(peer_id, CombinedPeerReadState.from_mapping(states))
