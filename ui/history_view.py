"""The history list: live rows grow in, older rows arriving above do not move the view.

``HistoryListView.show_rows(rows, update_type)`` applies a snapshot's rows to its model
and keeps the reader's place: at the bottom it stays at the bottom when a live message
arrives; reading further up, the message at the top of the viewport stays exactly where
it is, whatever is inserted above it (a hole fill) or below it. Rows that arrived with a
live update grow from nothing to their height and fade in over ``ANIMATION_MS``; first
loads and fills appear in place, still.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from PySide6.QtCore import QEasingCurve, QObject, QPoint, QVariantAnimation, Slot
from PySide6.QtWidgets import QAbstractItemView, QListView

from postbox import ViewUpdateType
from ui.delegates import HistoryDelegate
from ui.models import HistoryModel
from ui.rows import HistoryRow, MessageRow

__all__ = ["ANIMATION_MS", "HistoryListView", "RowAnimator"]

#: How long a live row takes to appear.
ANIMATION_MS = 200
#: How close to the bottom (pixels) still counts as "at the bottom".
_BOTTOM_SLACK = 4


class RowAnimator(QObject):
    """The appearance progress (0..1) of rows that are animating in, by row key."""

    def __init__(self, view: HistoryListView) -> None:
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
            self._view.relayout_keeping_place()

        def done() -> None:
            for key in batch:
                self.progress.pop(key, None)
            self._animations.remove(animation)
            self._view.relayout_keeping_place()

        animation.valueChanged.connect(step)
        animation.finished.connect(done)
        self._animations.append(animation)
        animation.start()

    def stop(self) -> None:
        for animation in list(self._animations):
            animation.stop()
            animation.finished.emit()

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
        self.setHorizontalScrollBarPolicy(self.horizontalScrollBarPolicy().ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalScrollBar().setSingleStep(24)
        self._live_rows: list[int] = []
        self.history_model.rows_inserted_live.connect(self._rows_arrived)

    @Slot(int, int)
    def _rows_arrived(self, first: int, last: int) -> None:
        self._live_rows.extend(range(first, last + 1))

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - _BOTTOM_SLACK

    def top_row(self) -> tuple[Hashable, int] | None:
        """The key of the first message on screen, and its offset from the top of the
        viewport. Loading and date rows are not anchors: a fill goes in below a loading
        row, and a day's date row moves up when earlier messages of that day arrive."""
        index = self.indexAt(QPoint(4, 1))
        if not index.isValid():
            return None
        rows = self.history_model.rows
        position = index.row()
        bottom = self.viewport().rect().bottom()
        for candidate in range(position, len(rows)):
            rect = self.visualRect(self.history_model.index(candidate, 0))
            if rect.top() > bottom:
                break
            if isinstance(rows[candidate], MessageRow):
                return rows[candidate].key, rect.top()
        return rows[position].key, self.visualRect(index).top()

    def visible_range(self) -> tuple[int, int] | None:
        """The first and last model rows at least partly on screen."""
        rows = len(self.history_model.rows)
        if not rows:
            return None
        viewport = self.viewport().rect()
        first = self.indexAt(QPoint(4, viewport.top() + 1))
        last = self.indexAt(QPoint(4, viewport.bottom() - 1))
        return (
            first.row() if first.isValid() else 0,
            last.row() if last.isValid() else rows - 1,
        )

    def _restore(self, anchor: tuple[Hashable, int] | None, stick_to_bottom: bool) -> None:
        if stick_to_bottom:
            self.scrollToBottom()
            return
        if anchor is None:
            return
        key, offset = anchor
        position = self.history_model.row_of(key)
        if position is not None:
            top = self.visualRect(self.history_model.index(position, 0)).top()
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + top - offset)

    def relayout_keeping_place(self) -> None:
        """Lay the rows out again (an animating row changed height) without moving the
        reader: at the bottom stay there, else keep the top row where it is."""
        stick_to_bottom = self.at_bottom()
        anchor = None if stick_to_bottom else self.top_row()
        self.doItemsLayout()
        self._restore(anchor, stick_to_bottom)
        self.viewport().update()

    def show_rows(self, rows: Sequence[HistoryRow], update_type: ViewUpdateType) -> None:
        stick_to_bottom = self.at_bottom()
        anchor = None if stick_to_bottom else self.top_row()
        self._live_rows = []
        self.history_model.apply(rows, update_type)
        live = [self.history_model.rows[i].key for i in self._live_rows]
        for key in live:  # start collapsed, so the layout below does not jump
            self.animator.progress[key] = 0.0
        self.doItemsLayout()
        self._restore(anchor, stick_to_bottom)
        self.animator.start(live)

    def scroll_to_row(self, position: int, *, top_margin: int = 0) -> None:
        """Put a row at the top of the viewport (``top_margin`` pixels below its edge)."""
        self.doItemsLayout()
        top = self.visualRect(self.history_model.index(position, 0)).top()
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + top - top_margin)
