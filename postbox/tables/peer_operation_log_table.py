"""PeerOperationLogTable: the persistent queue of operations to send to the server.

Key tag(1) peer(8) local index(4): a peer's entries of one tag in the order they
were added. Entries that take part in the merged order are also listed in the
merged index table. An entry survives restarts until it is removed.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError, InvalidArgumentError
from postbox.ids import PeerId
from postbox.keys import O64
from postbox.operation_log import PeerOperationLogEntry
from postbox.tables.peer_merged_operation_log_index_table import PeerMergedOperationLogIndexTable
from postbox.tables.peer_operation_log_metadata_table import PeerOperationLogMetadataTable
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["PeerOperationLogTable"]

_KEY = struct.Struct(">BQI")
_PREFIX = struct.Struct(">BQ")

EntryObserver = Callable[[str, PeerOperationLogEntry], None]


class PeerOperationLogTable(Table[bytes]):
    def __init__(
        self,
        box: ValueBox,
        metadata: PeerOperationLogMetadataTable,
        merged: PeerMergedOperationLogIndexTable,
    ) -> None:
        super().__init__(box, "operation_log")
        self.metadata = metadata
        self.merged = merged
        #: Told of ("add" | "update" | "remove", entry); the transaction records them.
        self.observer: EntryObserver | None = None

    @staticmethod
    def _check_tag(tag: int) -> None:
        if not 0 <= tag <= 255:
            raise InvalidArgumentError(f"operation log tag {tag} is outside 0..255")

    def _decode(self, key: bytes, data: bytes) -> PeerOperationLogEntry:
        with decoding("operation log entry"):
            tag, peer, local = _KEY.unpack(key)
            merged, contents = unpack(data, "operation log entry")
            if merged is not None and not isinstance(merged, int):
                raise TypeError(f"merged index {merged!r} is not a number")
        return PeerOperationLogEntry(PeerId(peer - O64), tag, local, merged, contents)

    def add(
        self, peer_id: PeerId, tag: int, contents: Any, *, merged: bool
    ) -> PeerOperationLogEntry:
        self._check_tag(tag)
        local = self.metadata.take_next_local_index(peer_id, tag)
        merged_index = self.metadata.take_next_merged_index(tag) if merged else None
        self._set(_KEY.pack(tag, peer_id + O64, local), pack((merged_index, contents)), None)
        if merged_index is not None:
            self.merged.add(tag, merged_index, peer_id, local)
        entry = PeerOperationLogEntry(peer_id, tag, local, merged_index, contents)
        self._notify("add", entry)
        return entry

    def get(self, peer_id: PeerId, tag: int, local_index: int) -> PeerOperationLogEntry | None:
        key = _KEY.pack(tag, peer_id + O64, local_index)
        data = self._get(key)
        return None if data is None else self._decode(key, data)

    def update_contents(self, peer_id: PeerId, tag: int, local_index: int, contents: Any) -> bool:
        entry = self.get(peer_id, tag, local_index)
        if entry is None:
            return False
        if entry.contents == contents:
            return True
        key = _KEY.pack(tag, peer_id + O64, local_index)
        self._set(key, pack((entry.merged_index, contents)))
        self._notify(
            "update", PeerOperationLogEntry(peer_id, tag, local_index, entry.merged_index, contents)
        )
        return True

    def remove(self, peer_id: PeerId, tag: int, local_index: int) -> bool:
        entry = self.get(peer_id, tag, local_index)
        if entry is None:
            return False
        self._remove(_KEY.pack(tag, peer_id + O64, local_index))
        if entry.merged_index is not None:
            self.merged.remove(tag, entry.merged_index)
        self._notify("remove", entry)
        return True

    def entries(self, peer_id: PeerId, tag: int) -> list[PeerOperationLogEntry]:
        """A peer's entries of one tag, oldest first."""
        lower = _PREFIX.pack(tag, peer_id + O64)
        upper = _PREFIX.pack(tag, peer_id + O64 + 1)
        return [self._decode(key, data) for key, data in self._range(lower, upper)]

    def merged_entries(
        self, tag: int, *, from_index: int = 0, limit: int = -1
    ) -> list[PeerOperationLogEntry]:
        """A tag's merged entries across peers, in the order they were added."""
        result = []
        for _, peer_id, local in self.merged.entries(tag, from_index=from_index, limit=limit):
            entry = self.get(peer_id, tag, local)
            if entry is None:
                raise CorruptValueError(f"merged index points at a missing entry {peer_id}/{local}")
            result.append(entry)
        return result

    def _notify(self, action: str, entry: PeerOperationLogEntry) -> None:
        if self.observer is not None:
            self.observer(action, entry)
