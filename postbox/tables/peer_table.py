"""PeerTable: the peers (users, groups, channels)."""

from __future__ import annotations

from postbox.peer import Peer
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["PeerTable"]


class PeerTable(PeerKeyedTable[Peer]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "peers")

    def _decode(self, peer_id: int, data: bytes) -> Peer:
        return Peer.decode(peer_id, data)
