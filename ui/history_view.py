"""The history list: live rows slide into sight, older rows arriving above do not move it.

``HistoryListView.show_rows(rows, update_type)`` applies a snapshot's rows to its model
and keeps the reader's place: reading further up, the message at the top of the
viewport stays exactly where it is, whatever is inserted above it (a hole fill) or
below it. At the bottom, rows that arrived with a live update fade in while the view
slides up to show them over ``ANIMATION_MS`` (the row grows in from the bottom edge),
and the reader stays at the bottom. First loads and fills appear in place, still.

The slide moves the scroll position, not the layout: rows are laid out once per
snapshot, so an animation frame costs a scroll and a repaint, whatever the window holds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from PySide6.QtCore import QEasingCurve, QObject, QPoint, QVariantAnimation, Signal, Slot
from PySide6.QtGui import QResizeEvent, QWheelEvent
from PySide6.QtWidgets import QAbstractItemView, QListView

from postbox import ViewUpdateType
from ui.delegates import HistoryDelegate
from ui.models import HistoryModel
from ui.rows import HistoryRow, MessageRow

__all__ = ["ANIMATION_MS", "FIRST_STEP", "HistoryListView", "RowAnimator"]

#: How long a live row takes to appear.
ANIMATION_MS = 200
#: Where an appearance starts (0..1): a fifth of the way in at once, so a live row
#: shows in the very frame its snapshot lands, then eases in the rest of the way.
FIRST_STEP = 0.2
#: How long the tint on a row jumped to lasts, and the share of it held before it fades.
FLASH_MS = 1_600
FLASH_HOLD = 0.4
#: How close to the bottom (pixels) still counts as "at the bottom".
_BOTTOM_SLACK = 4


class RowAnimator(QObject):
    """Fades rows in (``progress``: key to 0..1) and, when following, slides the view
    from where it was to the bottom."""

    def __init__(self, view: HistoryListView) -> None:
        super().__init__(view)
        self._view = view
        self.progress: dict[Hashable, float] = {}
        self._animations: list[QVariantAnimation] = []
        self._follow: QVariantAnimation | None = None
        self._follow_from = 0
        self._follow_set = -1

    def start(self, keys: Sequence[Hashable], *, follow: bool) -> None:
        if not keys:
            return
        for key in keys:
            self.progress[key] = FIRST_STEP
        animation = self._animation()
        batch = tuple(keys)

        def step(value: object) -> None:
            for key in batch:
                if key in self.progress:
                    self.progress[key] = float(value)  # type: ignore[arg-type]
            self._repaint(batch)

        def done() -> None:
            for key in batch:
                self.progress.pop(key, None)
            if animation in self._animations:
                self._animations.remove(animation)
                animation.deleteLater()
            self._repaint(batch)

        animation.valueChanged.connect(step)
        animation.finished.connect(done)
        self._animations.append(animation)
        animation.start()
        if follow:
            self._start_following()

    def _repaint(self, keys: Sequence[Hashable]) -> None:
        """Repaint the rows of ``keys`` that are on screen, not the whole viewport: a
        fading row costs its own repaint each frame, not every row's."""
        view = self._view
        model = view.history_model
        area = view.viewport().rect()
        for key in keys:
            position = model.row_of(key)
            if position is None:
                continue
            rect = view.visualRect(model.index(position, 0))
            if rect.intersects(area):
                view.viewport().update(rect)

    def _animation(self) -> QVariantAnimation:
        animation = QVariantAnimation(self)
        animation.setStartValue(FIRST_STEP)
        animation.setEndValue(1.0)
        animation.setDuration(ANIMATION_MS)
        animation.setEasingCurve(QEasingCurve.Type.OutCubic)
        return animation

    def _start_following(self) -> None:
        bar = self._view.verticalScrollBar()
        if self._follow is not None:
            previous, self._follow = self._follow, None
            previous.stop()
            previous.deleteLater()
        self._follow_from = bar.value()
        self._follow_set = bar.value()
        follow = self._animation()
        self._follow = follow

        def step(value: object) -> None:
            if bar.value() != self._follow_set:  # the reader took the scroll bar
                follow.stop()
                self._stop_following(follow)
                return
            target = self._follow_from + (bar.maximum() - self._follow_from) * float(value)  # type: ignore[arg-type]
            bar.setValue(round(target))
            self._follow_set = bar.value()

        follow.valueChanged.connect(step)
        follow.finished.connect(lambda: self._stop_following(follow))
        follow.start()
        step(FIRST_STEP)  # into sight in this very frame

    def _stop_following(self, follow: QVariantAnimation) -> None:
        if self._follow is follow:
            self._follow = None
            follow.deleteLater()

    @property
    def following(self) -> bool:
        """Sliding to the bottom: the reader counts as being there."""
        return self._follow is not None

    def stop(self) -> None:
        if self._follow is not None:
            follow, self._follow = self._follow, None
            follow.stop()
            follow.deleteLater()
        for animation in list(self._animations):
            animation.stop()
            animation.finished.emit()

    @property
    def running(self) -> bool:
        return bool(self._animations) or self._follow is not None


class HistoryListView(QListView):
    #: The wheel turned on against an end of the loaded rows (the scroll bar cannot
    #: move, so no scroll signal comes): the window should move on.
    pushed_past_edge = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("history")
        self.history_model = HistoryModel()
        self.setModel(self.history_model)
        self.animator = RowAnimator(self)
        #: Rows flashed after a jump to them (key to strength), fading out.
        self.highlight: dict[Hashable, float] = {}
        #: Rows the reader selected (drawn tinted).
        self.selected_keys: set[Hashable] = set()
        self._flash: QVariantAnimation | None = None
        self.setItemDelegate(
            HistoryDelegate(self, self.animator.progress, self.highlight, self.selected_keys)
        )
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(self.horizontalScrollBarPolicy().ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalScrollBar().setSingleStep(24)
        self._live_rows: list[int] = []
        self.history_model.rows_inserted_live.connect(self._rows_arrived)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt
        bar = self.verticalScrollBar()
        before = bar.value()
        super().wheelEvent(event)
        up = event.angleDelta().y() > 0
        if bar.value() == before and (
            up and before == bar.minimum() or not up and before == bar.maximum()
        ):
            self.pushed_past_edge.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt
        """Keep the reader's place, or the bottom, through a new size: a new width wraps
        the bubbles anew (the rows are laid out again at once); a new height comes from
        a bar opening or closing above the compose box, and a reader at the bottom must
        not find the newest messages pushed below the fold."""
        if event.size() == event.oldSize() or not self.history_model.rows:
            super().resizeEvent(event)
            return
        stick_to_bottom = self.at_bottom()
        anchor = self.top_row()
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.doItemsLayout()
        self._restore(None if stick_to_bottom else anchor, stick_to_bottom)

    @Slot(int, int)
    def _rows_arrived(self, first: int, last: int) -> None:
        self._live_rows.extend(range(first, last + 1))

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return self.animator.following or bar.value() >= bar.maximum() - _BOTTOM_SLACK

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

    def show_rows(self, rows: Sequence[HistoryRow], update_type: ViewUpdateType) -> None:
        stick_to_bottom = self.at_bottom()
        anchor = self.top_row()
        self._live_rows = []
        self.history_model.apply(rows, update_type)
        live = [self.history_model.rows[i].key for i in self._live_rows]
        self.doItemsLayout()
        if stick_to_bottom and live:
            # Keep what is on screen where it is, then slide the new rows into sight.
            self._restore(anchor, stick_to_bottom=False)
            self.animator.start(live, follow=True)
            return
        self._restore(None if stick_to_bottom else anchor, stick_to_bottom)
        self.animator.start(live, follow=False)

    def flash(self, key: Hashable) -> None:
        """Tint a row and let the tint fade: where a jump (a search result) landed."""
        if self._flash is not None:
            self._flash.stop()
            self._flash.deleteLater()
        self.highlight.clear()
        self.highlight[key] = 1.0
        flash = QVariantAnimation(self)
        flash.setStartValue(1.0)
        flash.setKeyValueAt(FLASH_HOLD, 1.0)  # long enough to be seen, then it fades
        flash.setEndValue(0.0)
        flash.setDuration(FLASH_MS)

        def step(value: object) -> None:
            if key in self.highlight:
                self.highlight[key] = float(value)  # type: ignore[arg-type]
            self.viewport().update()

        def done() -> None:
            self.highlight.pop(key, None)
            self.viewport().update()

        flash.valueChanged.connect(step)
        flash.finished.connect(done)
        self._flash = flash
        flash.start()

    def centre_row(self, position: int) -> None:
        """Put a row in the middle of the viewport (a row taller than the viewport at its
        top), as far as the rows above and below allow."""
        self.doItemsLayout()
        height = self.visualRect(self.history_model.index(position, 0)).height()
        self.scroll_to_row(position, top_margin=max(0, (self.viewport().height() - height) // 2))

    def scroll_to_row(self, position: int, *, top_margin: int = 0) -> None:
        """Put a row at the top of the viewport (``top_margin`` pixels below its edge)."""
        self.doItemsLayout()
        top = self.visualRect(self.history_model.index(position, 0)).top()
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + top - top_margin)
