"""MessageHistoryUnsentTable: the ids of outgoing messages not yet sent."""

from __future__ import annotations

from postbox.ids import MessageId
from postbox.keys import decode_message_id_key, message_id_key
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryUnsentTable"]

_LOWER = b""
_UPPER = b"\xff" * 17


class MessageHistoryUnsentTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "message_history_unsent")

    def add(self, message_id: MessageId) -> None:
        self._set(message_id_key(message_id), b"")

    def remove(self, message_id: MessageId) -> None:
        self._remove(message_id_key(message_id))

    def add_new_key(self, id_key: bytes) -> None:
        """Add a message by its packed id, known not to be queued before this transaction."""
        self._put_new(id_key, b"")

    def remove_key(self, id_key: bytes) -> None:
        self._remove(id_key)

    def ids(self) -> list[MessageId]:
        return [decode_message_id_key(key) for key, _ in self._range(_LOWER, _UPPER)]

    def updated(self) -> tuple[frozenset[MessageId], frozenset[MessageId]]:
        """(added, removed) ids in this transaction."""
        added: set[MessageId] = set()
        removed: set[MessageId] = set()
        for key, _, after in self.changes():
            (removed if after is None else added).add(decode_message_id_key(key))
        return frozenset(added), frozenset(removed)
