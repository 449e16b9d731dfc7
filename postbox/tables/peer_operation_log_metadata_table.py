"""PeerOperationLogMetadataTable: the next local and merged indices of the operation log.

Counters only grow, so an index is never reused, even after its entry was
removed and the database reopened.
"""

from __future__ import annotations

import struct

from postbox.coding import stored_number
from postbox.keys import INT64, O64
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["PeerOperationLogMetadataTable"]

_LOCAL = struct.Struct(">BBQ")
_MERGED = struct.Struct(">BB")


class PeerOperationLogMetadataTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "operation_log_metadata")

    def _take(self, key: bytes) -> int:
        data = self._get(key)
        value = 1 if data is None else stored_number(INT64, data, "operation log counter")
        self._set(key, INT64.pack(value + 1))
        return value

    def take_next_local_index(self, peer_id: int, tag: int) -> int:
        return self._take(_LOCAL.pack(1, tag, peer_id + O64))

    def take_next_merged_index(self, tag: int) -> int:
        return self._take(_MERGED.pack(2, tag))
