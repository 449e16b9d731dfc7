"""MessageHistoryIndexTable: MessageId -> timestamp, so a message is found by id alone.

Key peer(8) namespace(4) id(4); value timestamp(4), the message's flags (so
counting incoming messages in an id range needs no message decoding) and the
FTS rowid of its text (0 when it has none).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from postbox.coding import decoding
from postbox.ids import MessageId, MessageIndex, PeerId
from postbox.keys import MESSAGE_ID, O32, O64
from postbox.message import MessageFlags
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryIndexTable"]

#: timestamp(4) flags(1) text rowid(8)
INDEX_VALUE = struct.Struct(">IBq")
_DECODING = decoding("message id index entry")


class MessageHistoryIndexTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "message_history_index")
        #: Per (peer, namespace), an id no committed message exceeds: its largest id when
        #: first looked up, raised by the commits that store above it. Ids above it are
        #: new without a look-up.
        self._id_bounds: dict[tuple[int, int], int] = {}
        #: Per (peer, namespace), the largest id this transaction stored.
        self._added: dict[tuple[int, int], int] = {}

    def get(self, message_id: MessageId) -> MessageIndex | None:
        peer_id, namespace, id_ = message_id
        data = self._get(MESSAGE_ID.pack(peer_id + O64, namespace + O32, id_ + O32))
        if data is None:
            return None
        with _DECODING:
            return MessageIndex(message_id, INDEX_VALUE.unpack(data)[0])

    def entry(self, id_key: bytes) -> bytes | None:
        """The raw entry at an id key (``MESSAGE_ID``-packed), as ``INDEX_VALUE`` packs it."""
        return self._get(id_key)

    def remove_entry(self, id_key: bytes, entry: bytes) -> None:
        """Remove the entry ``entry`` stored at ``id_key``."""
        self._remove(id_key, entry)

    def exists(self, message_id: MessageId) -> bool:
        return self.get(message_id) is not None

    def id_bound(self, peer_id: int, namespace: int) -> int:
        """An id that no committed message of a (peer, namespace) exceeds (0: none)."""
        key = (peer_id, namespace)
        bound = self._id_bounds.get(key)
        if bound is None:
            top = self.committed_max_id(peer_id, namespace)
            bound = 0 if top is None else top
            if self.box.in_transaction:  # read under a lock: a committed fact
                self._id_bounds[key] = bound
        return bound

    def note_added(self, peer_id: int, namespace: int, id_: int) -> None:
        """This transaction stored ``id_``: once committed, the bound rises to it."""
        key = (peer_id, namespace)
        if id_ > self._added.get(key, 0):
            self._added[key] = id_

    def committed(self) -> None:
        bounds = self._id_bounds
        for key, id_ in self._added.items():
            bound = bounds.get(key)
            if bound is not None and id_ > bound:
                bounds[key] = id_
        super().committed()

    def forget_committed(self) -> None:
        super().forget_committed()
        self._id_bounds.clear()

    def reset(self) -> None:
        super().reset()
        if self._added:
            self._added = {}

    def committed_max_id(self, peer_id: int, namespace: int) -> int | None:
        """The largest committed id of a (peer, namespace), past this transaction's cache."""
        peer, ns = peer_id + O64, namespace + O32
        lower, upper = MESSAGE_ID.pack(peer, ns, 0), MESSAGE_ID.pack(peer, ns + 1, 0)
        for key, _ in self._stored(lower, upper, limit=1, reverse=True):
            with _DECODING:
                return int(struct.unpack_from(">I", key, 12)[0]) - O32
        return None

    def incoming_ids(
        self, peer_id: PeerId, namespace: int, lower: int, upper: int
    ) -> Iterator[int]:
        """Ids of incoming messages with ``lower <= id <= upper``."""
        peer, ns = peer_id + O64, namespace + O32
        lower_key = MESSAGE_ID.pack(peer, ns, lower + O32)
        upper_key = MESSAGE_ID.pack(peer, ns, upper + O32) + b"\x00"
        with _DECODING:
            for key, value in self._range(lower_key, upper_key):
                if value[4] & MessageFlags.INCOMING:
                    yield struct.unpack_from(">I", key, 12)[0] - O32

    def ids_between(
        self, peer_id: PeerId, namespace: int, lower: int, upper: int
    ) -> list[MessageIndex]:
        """The stored messages of a (peer, namespace) with ``lower <= id <= upper``, by id."""
        peer, ns = peer_id + O64, namespace + O32
        lower_key = MESSAGE_ID.pack(peer, ns, lower + O32)
        upper_key = MESSAGE_ID.pack(peer, ns, upper + O32) + b"\x00"
        result = []
        with _DECODING:
            for key, value in self._range(lower_key, upper_key):
                id_ = struct.unpack_from(">I", key, 12)[0] - O32
                timestamp = INDEX_VALUE.unpack(value)[0]
                result.append(MessageIndex(MessageId(peer_id, namespace, id_), timestamp))
        return result

    def count_between(self, peer_id: PeerId, namespace: int, lower: int, upper: int) -> int:
        """How many messages of a (peer, namespace) have ``lower <= id <= upper`` (a count
        in SQLite, no rows read)."""
        peer, ns = peer_id + O64, namespace + O32
        return self._count(
            MESSAGE_ID.pack(peer, ns, lower + O32), MESSAGE_ID.pack(peer, ns, upper + O32) + b"\x00"
        )

    def ids(self, peer_id: PeerId, namespace: int) -> list[MessageIndex]:
        """Every stored message of a (peer, namespace), by id."""
        peer, ns = peer_id + O64, namespace + O32
        result = []
        with _DECODING:
            for key, value in self._range(
                MESSAGE_ID.pack(peer, ns, 0), MESSAGE_ID.pack(peer, ns + 1, 0)
            ):
                id_ = struct.unpack_from(">I", key, 12)[0] - O32
                timestamp = INDEX_VALUE.unpack(value)[0]
                result.append(MessageIndex(MessageId(peer_id, namespace, id_), timestamp))
        return result
