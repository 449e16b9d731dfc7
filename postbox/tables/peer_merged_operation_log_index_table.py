"""PeerMergedOperationLogIndexTable: one tag's operation-log entries across all peers.

Key tag(1) merged index(4), value peer(8) local index(4): reading a tag in key
order gives its entries in the order they were created, whatever the peer.
"""

from __future__ import annotations

import struct

from postbox.coding import decoding
from postbox.ids import PeerId
from postbox.keys import O64
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["PeerMergedOperationLogIndexTable"]

_KEY = struct.Struct(">BI")
_VALUE = struct.Struct(">QI")


class PeerMergedOperationLogIndexTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "operation_log_merged_index")

    def add(self, tag: int, merged_index: int, peer_id: int, local_index: int) -> None:
        self._set(_KEY.pack(tag, merged_index), _VALUE.pack(peer_id + O64, local_index), None)

    def remove(self, tag: int, merged_index: int) -> None:
        self._remove(_KEY.pack(tag, merged_index))

    def entries(
        self, tag: int, *, from_index: int = 0, limit: int = -1
    ) -> list[tuple[int, PeerId, int]]:
        """``(merged index, peer, local index)`` from ``from_index`` on, oldest first."""
        result = []
        lower, upper = (
            _KEY.pack(tag, from_index),
            _KEY.pack(tag + 1, 0) if tag < 255 else b"\xff" * 6,
        )
        with decoding("operation log index entry"):
            for key, value in self._range(lower, upper, limit=limit):
                merged = _KEY.unpack(key)[1]
                peer, local = _VALUE.unpack(value)
                result.append((merged, PeerId(peer - O64), local))
        return result
