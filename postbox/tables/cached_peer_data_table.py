"""CachedPeerDataTable: each peer's cached details (about, participants, pinned message)."""

from __future__ import annotations

from postbox.peer import CachedPeerData
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["CachedPeerDataTable"]


class CachedPeerDataTable(PeerKeyedTable[CachedPeerData]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "cached_peer_data")

    def _decode(self, peer_id: int, data: bytes) -> CachedPeerData:
        return CachedPeerData.decode(data)
