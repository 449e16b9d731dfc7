"""MessageHistoryTagsSummaryTable: how many messages of a peer carry each tag.

As the seeds' summary, a count and the newest id it covers: the server can
state a count, and messages newer than it add to it as they arrive. Older
messages that fill a hole do not, since the server's count included them.
"""

from __future__ import annotations

import struct

from postbox.coding import decoding
from postbox.ids import PeerId
from postbox.keys import O32, O64
from postbox.tables.table import Table
from postbox.tag_summary import MessageHistoryTagSummary, TagSummaryKey
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryTagsSummaryTable"]

_KEY = struct.Struct(">QII")
_VALUE = struct.Struct(">ii")
_DECODING = decoding("tag summary")


class MessageHistoryTagsSummaryTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "message_history_tag_summaries")

    @staticmethod
    def _key(peer_id: int, tag: int, namespace: int) -> bytes:
        return _KEY.pack(peer_id + O64, tag, namespace + O32)

    def get(self, peer_id: int, tag: int, namespace: int) -> MessageHistoryTagSummary | None:
        data = self._get(self._key(peer_id, tag, namespace))
        if data is None:
            return None
        with _DECODING:
            return MessageHistoryTagSummary(*_VALUE.unpack(data))

    def replace(self, peer_id: int, tag: int, namespace: int, count: int, max_id: int) -> None:
        self._set(self._key(peer_id, tag, namespace), _VALUE.pack(max(0, count), max_id))

    def summaries(
        self, peer_id: int | None = None
    ) -> dict[TagSummaryKey, MessageHistoryTagSummary]:
        """Every stored summary, or ``peer_id``'s."""
        if peer_id is None:
            lower, upper = b"", b"\xff" * (_KEY.size + 1)
        else:
            lower = _KEY.pack(peer_id + O64, 0, 0)
            upper = _KEY.pack(peer_id + O64 + 1, 0, 0)
        result = {}
        with _DECODING:
            for key, value in self._range(lower, upper):
                peer, tag, namespace = _KEY.unpack(key)
                result[TagSummaryKey(PeerId(peer - O64), tag, namespace - O32)] = (
                    MessageHistoryTagSummary(*_VALUE.unpack(value))
                )
        return result

    def add_message(self, peer_id: int, tag: int, namespace: int, id_: int) -> None:
        """Count a new message; only a summary the server gave counts (see ``replace``)."""
        summary = self.get(peer_id, tag, namespace)
        if summary is not None and id_ > summary.max_id:
            self.replace(peer_id, tag, namespace, summary.count + 1, id_)

    def remove_message(self, peer_id: int, tag: int, namespace: int, id_: int) -> None:
        summary = self.get(peer_id, tag, namespace)
        if summary is not None and id_ <= summary.max_id and summary.count > 0:
            self.replace(peer_id, tag, namespace, summary.count - 1, summary.max_id)

    def updated(self) -> frozenset[TagSummaryKey]:
        result = set()
        for key, _, _ in self.changes():
            peer, tag, namespace = _KEY.unpack(key)
            result.add(TagSummaryKey(PeerId(peer - O64), tag, namespace - O32))
        return frozenset(result)
