"""Which Qt view class stays cheap when one row is inserted into a very long list.

A one-column model of ``rows`` rows (plain text, default delegate) is shown in each
candidate view, configured for fixed row heights; then one row at a time is inserted
at the top and at the bottom. A figure is the time of one insert as a frame sees it:
the model's signals, pending events (the views lay out lazily) and a repaint of the
viewport, which lays out whatever is still pending. Last, the same in ``QListView``
over a windowed model that holds ``WINDOW`` rows (one in, one out), as our models are.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, Final

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QListView,
    QTableView,
    QTreeView,
)

from benchmarks._ui_qt import application
from benchmarks.harness import Figure

__all__ = ["WINDOW", "measure_view_classes"]

#: Rows in the windowed model: about what a history window holds.
WINDOW: Final = 60
_ROW_HEIGHT: Final = 24
_Index = QModelIndex | QPersistentModelIndex


class _Rows(QAbstractListModel):
    """``count`` rows whose text is their number; rows go in and out only at the ends."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.first = 0
        self.count = count

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt
        return 0 if parent.isValid() else self.count

    def data(self, index: _Index, role: int = int(Qt.ItemDataRole.DisplayRole)) -> Any:
        if role != int(Qt.ItemDataRole.DisplayRole) or not index.isValid():
            return None
        return f"row {self.first + index.row():,}"

    def insert_top(self) -> None:
        self.beginInsertRows(QModelIndex(), 0, 0)
        self.first -= 1
        self.count += 1
        self.endInsertRows()

    def insert_bottom(self) -> None:
        self.beginInsertRows(QModelIndex(), self.count, self.count)
        self.count += 1
        self.endInsertRows()

    def slide(self) -> None:
        """One row in at the bottom, one out at the top: the window moves by one."""
        self.insert_bottom()
        self.beginRemoveRows(QModelIndex(), 0, 0)
        self.first += 1
        self.count -= 1
        self.endRemoveRows()


def _list_view() -> QAbstractItemView:
    view = QListView()
    view.setUniformItemSizes(True)
    return view


def _tree_view() -> QAbstractItemView:
    view = QTreeView()
    view.setUniformRowHeights(True)
    view.setRootIsDecorated(False)
    view.setHeaderHidden(True)
    return view


def _table_view() -> QAbstractItemView:
    view = QTableView()
    rows = view.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(_ROW_HEIGHT)
    rows.hide()
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().hide()
    view.setShowGrid(False)
    return view


def _frame(view: QAbstractItemView, change: Callable[[], None]) -> float:
    """Milliseconds for ``change`` plus what the next frame does about it."""
    app = application()
    started = time.perf_counter()
    change()
    app.processEvents()
    view.viewport().repaint()
    return (time.perf_counter() - started) * 1e3


def _measure(
    make: Callable[[], QAbstractItemView], rows: int, inserts: int, *, windowed: bool = False
) -> tuple[float, float, float]:
    """First layout, and the median insert at the top and at the bottom, in ms."""
    app = application()
    model = _Rows(rows)
    view = make()
    view.resize(420, 640)
    view.show()
    try:
        started = time.perf_counter()
        view.setModel(model)
        app.processEvents()
        view.viewport().repaint()
        first = (time.perf_counter() - started) * 1e3
        if windowed:
            top = statistics.median(_frame(view, model.slide) for _ in range(inserts))
            return first, top, top
        _frame(view, model.insert_top)  # warm-up
        top = statistics.median(_frame(view, model.insert_top) for _ in range(inserts))
        bottom = statistics.median(_frame(view, model.insert_bottom) for _ in range(inserts))
        return first, top, bottom
    finally:
        view.hide()
        view.setModel(None)
        view.deleteLater()
        app.processEvents()


def measure_view_classes(rows: int, inserts: int) -> list[Figure]:
    candidates: list[tuple[str, Callable[[], QAbstractItemView]]] = [
        ("QListView (uniform item sizes)", _list_view),
        ("QTreeView (uniform row heights)", _tree_view),
        ("QTableView (fixed section size)", _table_view),
    ]
    figures: list[Figure] = []
    per_insert: dict[str, float] = {}
    for name, make in candidates:
        first, top, bottom = _measure(make, rows, inserts)
        per_insert[name] = max(top, bottom)
        figures += [
            Figure(f"views: {name}, first layout", first, "ms", f"{rows:,} rows"),
            Figure(f"views: {name}, insert at top", top, "ms", f"median of {inserts}"),
            Figure(f"views: {name}, insert at bottom", bottom, "ms", f"median of {inserts}"),
        ]
    _, window, _ = _measure(_list_view, WINDOW, inserts * 4, windowed=True)
    figures.append(
        Figure(
            "views: QListView over a window, slide by one",
            window,
            "ms",
            f"{WINDOW} rows held (one in, one out), median of {inserts * 4}",
        )
    )
    best = min(per_insert, key=per_insert.__getitem__)
    worst = max(per_insert, key=per_insert.__getitem__)
    figures.append(
        Figure(
            "views: per insert, dearest / cheapest",
            per_insert[worst] / per_insert[best],
            "x",
            f"cheapest at {rows:,} rows: {best}; dearest: {worst}",
        )
    )
    figures.append(
        Figure(
            "views: per insert, cheapest / windowed",
            per_insert[best] / window if window else float("inf"),
            "x",
            f"{best} at {rows:,} rows against QListView over {WINDOW}",
        )
    )
    return figures
