"""MessageHistoryFailedTable: outgoing messages the server refused, and why.

Key peer(8) namespace(4) id(4), so one chat's failures are one key range; value a
``MessageFailure`` (the server's error and the request to send again). The table
follows the messages' ``FAILED`` flag: ``MessageHistoryTable`` adds a row when it
stores a failed message and removes it when the message goes or stops being failed,
so a row exists exactly for each stored failed message.
"""

from __future__ import annotations

from postbox.ids import MessageId, PeerId
from postbox.keys import decode_message_id_key, message_id_key, peer_prefix, successor
from postbox.message import MessageFlags
from postbox.message_failure import MessageFailure
from postbox.tables.table import Table
from postbox.value_box import KeyType, ValueBox, ValueBoxTable

__all__ = ["UNKNOWN_FAILURE", "MessageHistoryFailedTable", "record_flagged_failures"]

#: The row of a message stored failed with no reason given.
UNKNOWN_FAILURE = MessageFailure()
_UNKNOWN = UNKNOWN_FAILURE.encode()
_LOWER = b""
_UPPER = b"\xff" * 17
_NAME = "message_history_failed"
#: Where the message id index keeps a message's flags: timestamp(4), then flags(1).
_FLAGS_OFFSET = 4


class MessageHistoryFailedTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, _NAME)

    def get(self, message_id: MessageId) -> MessageFailure | None:
        data = self._get(message_id_key(message_id))
        return None if data is None else MessageFailure.decode(data)

    def set(self, message_id: MessageId, failure: MessageFailure) -> None:
        self._set(message_id_key(message_id), failure.encode())

    def add_unknown_key(self, id_key: bytes) -> None:
        """A message stored failed at its packed id: a row with no reason yet (kept if
        the id has one already)."""
        if self._get(id_key) is None:
            self._set(id_key, _UNKNOWN, None)

    def remove_key(self, id_key: bytes) -> None:
        self._remove(id_key)

    def failures(self, peer_id: PeerId) -> list[tuple[MessageId, MessageFailure]]:
        """A chat's failed messages in id order (per namespace), with their failures."""
        lower = peer_prefix(peer_id)
        return [
            (decode_message_id_key(key), MessageFailure.decode(data))
            for key, data in self._range(lower, successor(lower))
        ]

    def has_failures(self, peer_id: PeerId) -> bool:
        lower = peer_prefix(peer_id)
        return any(True for _ in self._range(lower, successor(lower), limit=1))

    def ids(self) -> list[MessageId]:
        """Every failed message, chat by chat."""
        return [decode_message_id_key(key) for key, _ in self._range(_LOWER, _UPPER)]

    def updated(self) -> frozenset[MessageId]:
        """The ids whose failure this transaction added, changed or removed."""
        return frozenset(decode_message_id_key(key) for key, _, _ in self.changes())


def record_flagged_failures(box: ValueBox) -> int:
    """Give every message stored failed a row (of unknown reason) if it has none: for a
    file written before this table kept them. Reads the message id index, which holds
    each message's flags. Call inside a write; returns how many rows were added."""
    table = ValueBoxTable(_NAME, KeyType.BINARY)
    box.ensure_table(table)
    index = ValueBoxTable("message_history_index", KeyType.BINARY)
    box.ensure_table(index)
    failed = int(MessageFlags.FAILED)
    added = [
        (key, _UNKNOWN)
        for key, value in box.range(index, _LOWER, _UPPER)
        if value[_FLAGS_OFFSET] & failed and box.get(table, key) is None
    ]
    box.set_many(table, added)
    return len(added)
