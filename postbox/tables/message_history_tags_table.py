"""MessageHistoryTagsTable: an inverted index of messages per shared-media tag.

Key peer(8) tag(4) namespace(4) timestamp(4) id(4): the tag comes before the
timestamp, so "the photos of this chat, newest first" is one range scan.
"""

from __future__ import annotations

import struct

from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.keys import O32, O64, wrong_key
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryTagsTable"]

_KEY = struct.Struct(">QIIII")
_PREFIX = struct.Struct(">QII")


class MessageHistoryTagsTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "message_history_tags")

    @staticmethod
    def key(tag: int, index: MessageIndex) -> bytes:
        (peer_id, namespace, id_), timestamp = index
        return _KEY.pack(peer_id + O64, tag, namespace + O32, timestamp, id_ + O32)

    def add(self, tag: int, index: MessageIndex) -> None:
        """Index a message that was not stored before under ``tag``."""
        self._put_new(self.key(tag, index), b"")

    def remove(self, tag: int, index: MessageIndex) -> None:
        self._remove(self.key(tag, index), b"")

    def indices(
        self,
        peer_id: PeerId,
        tag: int,
        namespace: int,
        *,
        lower: MessageIndex | None = None,
        upper: MessageIndex | None = None,
        limit: int = -1,
        reverse: bool = False,
    ) -> list[MessageIndex]:
        """Tagged messages with ``lower <= index < upper`` (by key order), oldest first
        or newest first with ``reverse``."""
        prefix = _PREFIX.pack(peer_id + O64, tag, namespace + O32)
        lower_key = prefix if lower is None else self.key(tag, lower)
        upper_key = (
            _PREFIX.pack(peer_id + O64, tag, namespace + O32 + 1)
            if upper is None
            else self.key(tag, upper)
        )
        result = []
        for key, _ in self._range(lower_key, upper_key, limit=limit, reverse=reverse):
            try:
                _, _, _, timestamp, id_ = _KEY.unpack(key)
            except (struct.error, TypeError) as error:
                raise wrong_key("tagged message", key, error) from error
            result.append(MessageIndex(MessageId(peer_id, namespace, id_ - O32), timestamp))
        return result

    def count(self, peer_id: PeerId, tag: int, namespace: int) -> int:
        return self._count(
            _PREFIX.pack(peer_id + O64, tag, namespace + O32),
            _PREFIX.pack(peer_id + O64, tag, namespace + O32 + 1),
        )
