"""The history list: live rows fade in, older rows arriving above do not move the view.

``HistoryListView.show_rows(rows, update_type)`` applies a snapshot's rows to its model
and keeps the reader's place: at the bottom it stays at the bottom when a live message
arrives; reading further up, the message at the top of the viewport stays exactly where
it is, whatever is inserted above it (a hole fill) or below it. Rows that arrived with a
live update fade and slide in over ``ANIMATION_MS``; first loads and fills appear still.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from PySide6.QtCore import QEasingCurve, QObject, QPoint, QVariantAnimation, Slot
from PySide6.QtWidgets import QAbstractItemView, QListView

from postbox import ViewUpdateType
from ui.delegates import HistoryDelegate
from ui.models import HistoryModel
from ui.rows import HistoryRow

__all__ = ["ANIMATION_MS", "HistoryListView", "RowAnimator"]

#: How long a live row takes to appear.
ANIMATION_MS = 200


class RowAnimator(QObject):
    """The appearance progress (0..1) of rows that are animating in, by row key."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self.progress: dict[Hashable, float] = {}
        self._animations: list[QVariantAnimation] = []

    def start(self, keys: Sequence[Hashable]) -> None:
        if not keys:
            return
        for key in keys:
            self.progress[key] = 0.0
        animation = QVariantAnimation(self)
        animation.setStartValue(0.0)
        animation.setEndValue(1.0)
        animation.setDuration(ANIMATION_MS)
        animation.setEasingCurve(QEasingCurve.Type.OutCubic)
        batch = tuple(keys)

        def step(value: object) -> None:
            for key in batch:
                if key in self.progress:
                    self.progress[key] = float(value)  # type: ignore[arg-type]
            self._view.viewport().update()

        def done() -> None:
            for key in batch:
                self.progress.pop(key, None)
            self._animations.remove(animation)
            self._view.viewport().update()

        animation.valueChanged.connect(step)
        animation.finished.connect(done)
        self._animations.append(animation)
        animation.start()

    @property
    def running(self) -> bool:
        return bool(self._animations)


class HistoryListView(QListView):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("history")
        self.history_model = HistoryModel()
        self.setModel(self.history_model)
        self.animator = RowAnimator(self)
        self.setItemDelegate(HistoryDelegate(self, self.animator.progress))
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self._live_rows: list[int] = []
        self.history_model.rows_inserted_live.connect(self._rows_arrived)

    @Slot(int, int)
    def _rows_arrived(self, first: int, last: int) -> None:
        self._live_rows.extend(range(first, last + 1))

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def top_row(self) -> tuple[Hashable, int] | None:
        """The key of the row at the top of the viewport, and its offset from the top."""
        index = self.indexAt(QPoint(4, 1))
        if not index.isValid():
            return None
        row = self.history_model.rows[index.row()]
        return row.key, self.visualRect(index).top()

    def show_rows(self, rows: Sequence[HistoryRow], update_type: ViewUpdateType) -> None:
        stick_to_bottom = self.at_bottom()
        anchor = None if stick_to_bottom else self.top_row()
        self._live_rows = []
        self.history_model.apply(rows, update_type)
        self.doItemsLayout()
        if stick_to_bottom:
            self.scrollToBottom()
        elif anchor is not None:
            key, offset = anchor
            position = self.history_model.row_of(key)
            if position is not None:
                top = self.visualRect(self.history_model.index(position, 0)).top()
                bar = self.verticalScrollBar()
                bar.setValue(bar.value() + top - offset)
        live = [self.history_model.rows[i].key for i in self._live_rows]
        self.animator.start(live)
