"""The compose box's sticker picker: a strip of sets and the saved GIFs, a grid of one.

``StickerPicker`` is a popup bound to two live views while it is shown: the
``ItemCollectionInfosView`` of the sticker sets and the saved GIFs (the strip of tabs,
each drawn as its first sticker) and the ``ItemCollectionItemsView`` of the chosen one
(the grid). A click on a sticker emits ``sticker_chosen`` with its media; the chat pane
sends it through the outbound queue. ``StickerButton`` opens the picker above itself.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QHideEvent, QIcon, QPainter, QPixmap, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from postbox import (
    CombinedView,
    ItemCollectionId,
    ItemCollectionInfosViewKey,
    ItemCollectionItemsViewKey,
    ItemCollectionNamespace,
    Postbox,
    ViewUpdateType,
)
from ui.feed import SnapshotFeed
from ui.models import ROW_ROLE, RowModel
from ui.rows import PackTab, StickerCell, StickerFace, pack_tabs, sticker_cells
from ui.stickers import draw_face
from ui.theme import current_theme, qcolor

__all__ = ["StickerButton", "StickerCellDelegate", "StickerGridModel", "StickerPicker"]

PACKS = int(ItemCollectionNamespace.STICKER_PACKS)
GIFS = int(ItemCollectionNamespace.SAVED_GIFS)
#: The side of a cell of the grid, and of a tab of the strip.
CELL = 84
TAB = 36
_COLUMNS = 5
_Index = QModelIndex | QPersistentModelIndex


class StickerGridModel(RowModel[StickerCell]):
    """The stickers (or GIFs) of one collection, followed by row diffs."""

    def display_text(self, row: StickerCell) -> str:
        return row.face.emoji

    def data(self, index: _Index, role: int = int(Qt.ItemDataRole.DisplayRole)) -> Any:
        if role == int(Qt.ItemDataRole.ToolTipRole):
            row = super().data(index, ROW_ROLE)
            return None if row is None else row.title
        return super().data(index, role)


class StickerCellDelegate(QStyledItemDelegate):
    """A cell: the sticker's face, on a soft highlight under the mouse."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        return QSize(CELL, CELL)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        cell = index.data(ROW_ROLE)
        if not isinstance(cell, StickerCell):
            return
        rect = option.rect
        if option.state & QStyle.StateFlag.State_MouseOver:
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(qcolor(current_theme().selection))
            painter.drawRoundedRect(rect.adjusted(2, 2, -2, -2), 12, 12)
            painter.restore()
        draw_face(painter, rect.adjusted(8, 8, -8, -8), cell.face, option.font)


def _tab_icon(face: StickerFace | None, label: str, widget: QWidget) -> QIcon:
    pixmap = QPixmap(TAB * 2, TAB * 2)
    pixmap.setDevicePixelRatio(2)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    if face is not None:
        draw_face(painter, QRect(0, 0, TAB, TAB), face, widget.font())
    else:
        painter.setPen(qcolor(current_theme().accent))
        painter.drawText(QRect(0, 0, TAB, TAB), Qt.AlignmentFlag.AlignCenter, label)
    painter.end()
    return QIcon(pixmap)


class StickerPicker(QFrame):
    """The popup; ``sticker_chosen(media)`` when a sticker or GIF is clicked."""

    sticker_chosen = Signal(object)

    def __init__(self, postbox: Postbox, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("stickerPicker")
        self._postbox = postbox
        self.tabs: list[PackTab] = []
        self.current: ItemCollectionId | None = None
        self._tab_buttons = QButtonGroup(self)
        self._tab_buttons.setExclusive(True)
        self._tab_buttons.idClicked.connect(self._tab_clicked)
        self._infos_feed: SnapshotFeed | None = None
        self._items_feed: SnapshotFeed | None = None
        self.strip = QHBoxLayout()
        self.strip.setSpacing(2)
        self.strip.addStretch(1)
        self.heading = QLabel("Stickers")
        self.heading.setObjectName("caption")
        self.model = StickerGridModel()
        self.grid = QListView()
        self.grid.setViewMode(QListView.ViewMode.IconMode)
        self.grid.setResizeMode(QListView.ResizeMode.Adjust)
        self.grid.setMovement(QListView.Movement.Static)
        self.grid.setUniformItemSizes(True)
        self.grid.setGridSize(QSize(CELL, CELL))
        self.grid.setMouseTracking(True)
        self.grid.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.grid.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.grid.setModel(self.model)
        self.grid.setItemDelegate(StickerCellDelegate(self.grid))
        self.grid.clicked.connect(self._cell_clicked)
        self.empty = QLabel("Stickers appear here once they are synced")
        self.empty.setObjectName("caption")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 8, 10, 10)
        column.setSpacing(6)
        column.addLayout(self.strip)
        column.addWidget(self.heading)
        column.addWidget(self.grid, 1)
        column.addWidget(self.empty)
        self.resize(CELL * _COLUMNS + 44, CELL * 2 + TAB + 76)

    # -- the views, open while shown --------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt
        super().showEvent(event)
        if self._infos_feed is None:
            key = ItemCollectionInfosViewKey((PACKS, GIFS), preview_items=1)
            self._infos_feed = SnapshotFeed(
                self._postbox, [key], lambda combined: self._infos(key, combined)
            )
            if self.current is not None:
                self._open_items(self.current)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt
        super().hideEvent(event)
        self.close_feeds()

    def close_feeds(self) -> None:
        for feed in (self._infos_feed, self._items_feed):
            if feed is not None:
                feed.close()
        self._infos_feed = self._items_feed = None

    def _infos(self, key: ItemCollectionInfosViewKey, combined: CombinedView) -> None:
        tabs = pack_tabs(combined[key], GIFS)
        if tabs != self.tabs:
            self.tabs = tabs
            self._rebuild_strip()
        keys = [tab.key for tab in tabs]
        if self.current not in keys:
            self.select(keys[0] if keys else None)
        self.empty.setVisible(not tabs)

    def _rebuild_strip(self) -> None:
        for button in self._tab_buttons.buttons():
            self._tab_buttons.removeButton(button)
            self.strip.removeWidget(button)
            button.deleteLater()
        for number, tab in enumerate(self.tabs):
            button = QToolButton()
            button.setObjectName("stickerTab")
            button.setCheckable(True)
            button.setChecked(tab.key == self.current)
            button.setToolTip(tab.title)
            button.setIcon(_tab_icon(tab.face, "GIF" if tab.gifs else tab.title[:1], self))
            button.setIconSize(QSize(TAB, TAB))
            self._tab_buttons.addButton(button, number)
            self.strip.insertWidget(number, button)

    @Slot(int)
    def _tab_clicked(self, number: int) -> None:
        if 0 <= number < len(self.tabs):
            self.select(self.tabs[number].key)

    def select(self, collection_id: ItemCollectionId | None) -> None:
        """Show one collection's stickers in the grid."""
        if collection_id == self.current and self._items_feed is not None:
            return
        self.current = collection_id
        for number, tab in enumerate(self.tabs):
            button = self._tab_buttons.button(number)
            if button is not None:
                button.setChecked(tab.key == collection_id)
        self.model.apply([], ViewUpdateType.INITIAL)
        if self._items_feed is not None:
            self._items_feed.close()
            self._items_feed = None
        if collection_id is not None and self._infos_feed is not None:
            self._open_items(collection_id)

    def _open_items(self, collection_id: ItemCollectionId) -> None:
        key = ItemCollectionItemsViewKey(collection_id)
        self._items_feed = SnapshotFeed(
            self._postbox, [key], lambda combined: self._items(key, combined)
        )

    def _items(self, key: ItemCollectionItemsViewKey, combined: CombinedView) -> None:
        if key.collection_id != self.current:
            return  # a grid since left
        view = combined[key]
        title = view.info.title if view.info is not None else ""
        self.heading.setText(title)
        self.model.apply(sticker_cells(view.items, title), ViewUpdateType.GENERIC)

    @Slot(QModelIndex)
    def _cell_clicked(self, index: QModelIndex) -> None:
        cell = index.data(ROW_ROLE)
        if isinstance(cell, StickerCell):
            self.sticker_chosen.emit(cell.media)
            self.hide()


class StickerButton(QToolButton):
    """The compose box's sticker button: opens the picker above itself."""

    sticker_chosen = Signal(object)

    def __init__(self, postbox: Postbox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stickerButton")
        self.setText("☺")
        self.setToolTip("Stickers and GIFs")
        self._postbox = postbox
        self.picker: StickerPicker | None = None
        self.clicked.connect(self.open_picker)

    @Slot()
    def open_picker(self) -> StickerPicker:
        if self.picker is None:
            self.picker = StickerPicker(self._postbox, self)
            self.picker.sticker_chosen.connect(self.sticker_chosen)
        picker = self.picker
        corner = self.mapToGlobal(QPoint(self.width(), 0))
        picker.move(corner - QPoint(picker.width(), picker.height() + 6))
        picker.show()
        return picker

    def close_picker(self) -> None:
        if self.picker is not None:
            self.picker.hide()
            self.picker.close_feeds()
