"""Qt list models that follow Postbox snapshots by row diffs, never by reset.

A model holds the rows of its current snapshot. ``apply(rows, update_type)`` diffs
them against the new rows (``ui.diff``) and tells the views exactly what changed:
removals, moves, insertions and changed rows. The update type says how the change
should look: only ``GENERIC`` changes at the live edge are animated; rows that
arrive with ``INITIAL``, ``INITIAL_UNREAD`` or ``FILL_HOLE`` appear in place. Models
are windows over their view: they never hold more rows than the snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import count
from operator import attrgetter
from typing import Any, Generic, TypeVar

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
    Signal,
)

from postbox import UpdateKind, ViewUpdateType
from ui.diff import Change, Insert, Move, Remove, RowStep, diff_rows
from ui.rows import ChatRow, HistoryRow, StickerCell

__all__ = ["ROW_ROLE", "ChatListModel", "HistoryModel", "RowModel", "effective_update"]

#: The role under which a model gives the whole row object to its delegate.
ROW_ROLE = int(Qt.ItemDataRole.UserRole) + 1
#: Kinds of update whose new rows are shown without animation.
_SILENT = frozenset(
    {UpdateKind.INITIAL, UpdateKind.INITIAL_UNREAD, UpdateKind.FILL_HOLE, UpdateKind.UPDATE_VISIBLE}
)

#: Which reason wins when snapshots were merged: a silent one over a live one.
_PRECEDENCE = (
    UpdateKind.INITIAL_UNREAD,
    UpdateKind.INITIAL,
    UpdateKind.FILL_HOLE,
    UpdateKind.UPDATE_VISIBLE,
    UpdateKind.GENERIC,
)

R = TypeVar("R", ChatRow, HistoryRow, StickerCell)


def effective_update(reasons: Iterable[ViewUpdateType], fallback: ViewUpdateType) -> ViewUpdateType:
    """How to show a snapshot that may stand for several merged ones: if any of them was
    a first load or a fill, nothing animates; only purely live changes do."""
    by_kind = {reason.kind: reason for reason in reasons}
    for kind in _PRECEDENCE:
        if kind in by_kind:
            return by_kind[kind]
    return fallback


_Index = QModelIndex | QPersistentModelIndex
_key_of = attrgetter("key")
_ROW_FLAGS = (
    Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
)
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


class RowModel(QStringListModel, Generic[R]):
    """The rows of one snapshot. ``rows_inserted_live`` names the rows that arrived
    with a live (``GENERIC``) change, for the delegate to animate.

    The row count lives in C++: a ``QListView`` asks for it (through ``index``) for
    every row each time it lays the list out, which in Python would cost a call per
    row after every change. So the model is a ``QStringListModel`` whose strings stay
    empty; its own ``insertRows``, ``removeRows`` and ``moveRows`` keep the count and
    the persistent indexes and tell the views, and the rows themselves are swapped in
    by a slot connected before any view's, so that every other listener sees the old
    rows before a change and the new ones from its end signal on.
    """

    rows_inserted_live = Signal(int, int)

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[R] = []
        #: The rows as they are once the structural change under way has ended.
        self._next: list[R] | None = None
        self.last_steps: list[RowStep[R]] = []
        #: The keys of the rows the last ``apply`` moved.
        self.last_moved: set[object] = set()
        #: Each row's position by key, built on the first ``row_of`` after a change.
        self._positions: dict[object, int] | None = None
        for ended in (self.rowsInserted, self.rowsRemoved, self.rowsMoved):
            ended.connect(self._take_next)

    def _take_next(self, *_args: object) -> None:
        if self._next is not None:
            self._rows, self._next = self._next, None
            self._positions = None

    @property
    def rows(self) -> Sequence[R]:
        return self._rows

    def flags(self, index: _Index) -> Qt.ItemFlag:
        # Asked for every row painted: the flags are built once, not per call.
        return _ROW_FLAGS if index.isValid() else _NO_FLAGS

    def setData(self, index: _Index, value: Any, role: int = 0) -> bool:  # noqa: N802 - Qt
        return False  # rows change only with snapshots

    def data(self, index: _Index, role: int = int(Qt.ItemDataRole.DisplayRole)) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == ROW_ROLE:
            return row
        if role == int(Qt.ItemDataRole.DisplayRole):
            return self.display_text(row)
        if role == int(Qt.ItemDataRole.AccessibleTextRole):
            return self.display_text(row)
        return None

    def display_text(self, row: R) -> str:
        return str(getattr(row, "title", "") or getattr(row, "text", ""))

    def apply(self, rows: Sequence[R], update_type: ViewUpdateType) -> list[RowStep[R]]:
        """Move to ``rows`` by diff; returns the steps (for the inspector and tests)."""
        steps = diff_rows(self._rows, rows, key=_key_of)
        live = update_type.kind not in _SILENT
        self.last_moved = set()
        root = QModelIndex()
        for step in steps:
            if isinstance(step, Remove):
                after = list(self._rows)
                del after[step.row : step.row + step.count]
                self._next = after
                self._taken(self.removeRows(step.row, step.count))
            elif isinstance(step, Insert):
                last = step.row + len(step.items) - 1
                after = list(self._rows)
                after[step.row : step.row] = step.items
                self._next = after
                self._taken(self.insertRows(step.row, len(step.items)))
                if live:
                    self.rows_inserted_live.emit(step.row, last)
            elif isinstance(step, Move):
                last = step.row + step.count - 1
                after = list(self._rows)
                moved = after[step.row : last + 1]
                self.last_moved.update(row.key for row in moved)
                del after[step.row : last + 1]
                after[step.to : step.to] = moved
                self._next = after
                self._taken(self.moveRows(root, step.row, step.count, root, step.to))
            elif isinstance(step, Change):
                self._rows[step.row] = step.item
                index = self.index(step.row, 0)
                self.dataChanged.emit(index, index)
        self.last_steps = steps
        return steps

    def _taken(self, done: bool) -> None:
        """The base class's structural change went through, and ``_take_next`` took the
        rows it leaves (``_next``) as its end signal went out."""
        if not done or self._next is not None:
            raise RuntimeError("the list model refused a change of its rows")

    def row_of(self, key: object) -> int | None:
        if self._positions is None:
            self._positions = dict(zip(map(_key_of, self._rows), count()))
        return self._positions.get(key)


class ChatListModel(RowModel[ChatRow]):
    """The chat list, top first."""

    def display_text(self, row: ChatRow) -> str:
        return "Loading chats…" if row.is_hole else row.title


class HistoryModel(RowModel[HistoryRow]):
    """One chat's history window, oldest first."""

    def display_text(self, row: HistoryRow) -> str:
        text = getattr(row, "text", None)
        return "Loading messages…" if text is None else str(text)
