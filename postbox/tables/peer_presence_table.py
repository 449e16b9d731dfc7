"""PeerPresenceTable: each peer's presence (online, last seen)."""

from __future__ import annotations

from postbox.peer import PeerPresence
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["PeerPresenceTable"]


class PeerPresenceTable(PeerKeyedTable[PeerPresence]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "presences")

    def _decode(self, peer_id: int, data: bytes) -> PeerPresence:
        return PeerPresence.decode(data)
