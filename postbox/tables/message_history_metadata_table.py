"""MessageHistoryMetadataTable: per-peer history bookkeeping.

Whether a peer's initial holes were added, and the next id to hand out in each
local message namespace.
"""

from __future__ import annotations

import struct

from postbox.coding import stored_number
from postbox.keys import INT32, O32, O64
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryMetadataTable"]

_INITIALIZED = 1
_NEXT_LOCAL_ID = 2
_PEER_KEY = struct.Struct(">BQ")
_NAMESPACE_KEY = struct.Struct(">BQI")


class MessageHistoryMetadataTable(Table[bytes]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "message_history_metadata")

    def is_initialized(self, peer_id: int) -> bool:
        return self._get(_PEER_KEY.pack(_INITIALIZED, peer_id + O64)) is not None

    def set_initialized(self, peer_id: int) -> None:
        self._set(_PEER_KEY.pack(_INITIALIZED, peer_id + O64), b"\x01")

    def take_next_local_id(self, peer_id: int, namespace: int) -> int:
        key = _NAMESPACE_KEY.pack(_NEXT_LOCAL_ID, peer_id + O64, namespace + O32)
        data = self._get(key)
        next_id = 1 if data is None else stored_number(INT32, data, "next local id")
        self._set(key, INT32.pack(next_id + 1))
        return next_id
