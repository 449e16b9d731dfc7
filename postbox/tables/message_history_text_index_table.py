"""MessageHistoryTextIndexTable: full-text search over message text (SQLite FTS5).

The FTS5 table holds (peer, message id key, text) rows. A message's FTS rowid is
kept in its row of the message id index, so removing the text is one delete by
rowid and indexing needs no table of its own. Rows are written at commit, so a
search sees committed messages only.
"""

from __future__ import annotations

from postbox.ids import MessageId
from postbox.keys import decode_message_id_key
from postbox.tables.table import WrittenTables
from postbox.value_box import FullTextTable, ValueBox

__all__ = ["MessageHistoryTextIndexTable"]


class MessageHistoryTextIndexTable:
    def __init__(self, box: ValueBox) -> None:
        self.box = box
        self.full_text = FullTextTable("message_text")
        box.ensure_full_text_table(self.full_text)
        self._next_rowid: int | None = None
        #: The next rowid after the last commit (``None``: look it up).
        self._committed_next_rowid: int | None = None
        self._inserts: dict[int, tuple[int, bytes, str]] = {}
        self._removed_rowids: list[int] = []
        self.written = WrittenTables()
        self._listed = False

    def _join(self) -> None:
        self._listed = True
        self.written.join(self)

    def add(self, peer_id: int, id_key: bytes, text: str) -> int:
        """Index ``text`` of the message with id key ``id_key``; returns its FTS rowid."""
        if self._next_rowid is None:
            self._next_rowid = self._committed_next_rowid
            if self._next_rowid is None:
                self._next_rowid = self.box.full_text_max_rowid(self.full_text) + 1
        rowid = self._next_rowid
        self._next_rowid = rowid + 1
        if not self._listed:
            self._join()
        self._inserts[rowid] = (peer_id, id_key, text)
        return rowid

    def remove(self, rowid: int) -> None:
        if not self._listed:
            self._join()
        if self._inserts.pop(rowid, None) is None:
            self._removed_rowids.append(rowid)

    def search(self, query: str, *, peer_id: int | None, limit: int) -> list[MessageId]:
        """Committed messages whose text matches an FTS5 query, most recently indexed first."""
        rows = self.box.full_text_match(self.full_text, query, collection=peer_id, limit=limit)
        return [decode_message_id_key(item) for _, item in rows]

    @property
    def has_changes(self) -> bool:
        return bool(self._inserts or self._removed_rowids)

    def before_commit(self) -> None:
        if self._removed_rowids:
            self.box.full_text_remove_many(self.full_text, self._removed_rowids)
        if self._inserts:
            self.box.full_text_set_many(
                self.full_text,
                ((rowid, peer, key, text) for rowid, (peer, key, text) in self._inserts.items()),
            )

    def committed(self) -> None:
        if self._next_rowid is not None:
            self._committed_next_rowid = self._next_rowid

    def forget_committed(self) -> None:
        self._committed_next_rowid = None

    def reset(self) -> None:
        self._next_rowid = None
        self._listed = False
        if self._inserts:
            self._inserts = {}
        if self._removed_rowids:
            self._removed_rowids = []
