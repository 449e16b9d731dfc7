"""Rows painted once into pixmaps and then copied: a repaint costs one blit per row.

A chat list that reorders on every new message repaints all its visible rows many
times a second; drawing each from scratch (text layout, eliding, antialiased shapes)
costs far more than copying a pixmap. ``RowPixmaps`` keeps the last ``limit`` rows
drawn, keyed by what the row shows, its size, the screen's pixel ratio and the theme.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPixmap
from PySide6.QtWidgets import QStyleOptionViewItem

from ui.theme import current_theme

__all__ = ["RowPixmaps"]

Draw = Callable[[QPainter, QStyleOptionViewItem], None]


class RowPixmaps:
    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._pixmaps: OrderedDict[Hashable, QPixmap] = OrderedDict()
        self.drawn = 0

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, key: Hashable, draw: Draw
    ) -> None:
        """Copy the row's pixmap to ``option.rect``, drawing it with ``draw`` if new."""
        rect = option.rect
        ratio = painter.device().devicePixelRatioF()
        full_key = (key, rect.width(), rect.height(), ratio, current_theme().name)
        pixmap = self._pixmaps.get(full_key)
        if pixmap is None:
            pixmap = QPixmap(
                max(1, round(rect.width() * ratio)), max(1, round(rect.height() * ratio))
            )
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            canvas = QPainter(pixmap)
            local = QStyleOptionViewItem(option)
            local.rect = QRect(0, 0, rect.width(), rect.height())
            try:
                draw(canvas, local)
            finally:
                canvas.end()
            self.drawn += 1
            self._pixmaps[full_key] = pixmap
            if len(self._pixmaps) > self._limit:
                self._pixmaps.popitem(last=False)
        else:
            self._pixmaps.move_to_end(full_key)
        painter.drawPixmap(rect.topLeft(), pixmap)

    def clear(self) -> None:
        self._pixmaps.clear()
