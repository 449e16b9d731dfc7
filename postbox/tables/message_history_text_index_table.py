"""MessageHistoryTextIndexTable: full-text search over message text (SQLite FTS5).

The FTS5 table holds (peer, message id key, text) rows; a companion key/value
table maps each indexed message to its FTS rowid so a removal is one delete.
Both are written at commit, so a search sees committed messages only.
"""

from __future__ import annotations

import struct

from postbox.ids import MessageId
from postbox.keys import decode_message_id_key, message_id_key
from postbox.tables.table import Table
from postbox.value_box import FullTextTable, ValueBox

__all__ = ["MessageHistoryTextIndexTable"]

_ROWID = struct.Struct(">q")


class MessageHistoryTextIndexTable(Table):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "text_index_rowids")
        self.full_text = FullTextTable("message_text")
        box.ensure_full_text_table(self.full_text)
        self._next_rowid: int | None = None
        self._inserts: dict[int, tuple[int, bytes, str]] = {}
        self._removed_rowids: list[int] = []

    def add(self, message_id: MessageId, text: str) -> None:
        key = message_id_key(message_id)
        self.add_key(key, message_id.peer_id, text)

    def add_key(self, key: bytes, peer_id: int, text: str) -> None:
        """Index ``text`` for the message with id key ``key`` (replacing earlier text)."""
        self.remove_key(key)
        if self._next_rowid is None:
            self._next_rowid = self.box.full_text_max_rowid(self.full_text) + 1
        rowid = self._next_rowid
        self._next_rowid += 1
        self._set(key, _ROWID.pack(rowid))
        self._inserts[rowid] = (int(peer_id), key, text)

    def remove(self, message_id: MessageId) -> None:
        self.remove_key(message_id_key(message_id))

    def remove_key(self, key: bytes) -> None:
        data = self._get(key)
        if data is None:
            return
        rowid = _ROWID.unpack(data)[0]
        if self._inserts.pop(rowid, None) is None:
            self._removed_rowids.append(rowid)
        self._remove(key)

    def search(self, query: str, *, peer_id: int | None, limit: int) -> list[MessageId]:
        """Committed messages whose text matches an FTS5 query, most recently indexed first."""
        rows = self.box.full_text_match(self.full_text, query, collection=peer_id, limit=limit)
        return [decode_message_id_key(item) for _, item in rows]

    def before_commit(self) -> None:
        super().before_commit()
        if self._removed_rowids:
            self.box.full_text_remove_many(self.full_text, self._removed_rowids)
        if self._inserts:
            self.box.full_text_set_many(
                self.full_text,
                ((rowid, peer, key, text) for rowid, (peer, key, text) in self._inserts.items()),
            )

    def reset(self) -> None:
        super().reset()
        self._next_rowid = None
        self._inserts = {}
        self._removed_rowids = []
