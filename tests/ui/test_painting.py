"""Painting every kind of row many times keeps the interpreter sound, and what the rows
write fits where it is written.

PySide6 6.12.0 dropped a reference to ``None`` on each void ``QPainter`` call, which on
Python 3.11 aborts the process after a few thousand paints; this catches any binding
that does so again, and any delegate that fails on a row it may meet.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from PySide6.QtCore import QAbstractListModel, QRect
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QListView, QStyledItemDelegate, QStyleOptionViewItem

from postbox import ViewUpdateType
from ui.delegates import ChatListDelegate, HistoryDelegate
from ui.models import ChatListModel, HistoryModel
from ui.rows import ChatRow, DateRow, HistoryRow, LoadingRow, MessageRow, StickerFace

pytestmark = pytest.mark.gui

CHATS = [
    ChatRow(
        1, 1, "Alice Baker", "AB", "#e17076", "hello there", "12:00", 3, True, True, True, True
    ),
    ChatRow(2, 2, "Chess Club", "CC", "#7bc862", "", "Tue", 0, False, False, False, False),
    ChatRow(("hole",), 0, "", "", "", "", "", 0, False, False, False, False, True),
    ChatRow(3, 3, "News", "N", "#65aadd", "anyone?", "12:03", 2, False, False, False, True,
            failed=True, top_failed=True),
]  # fmt: skip
HISTORY: list[HistoryRow] = [
    LoadingRow(("loading", "earlier")),
    DateRow(("day", 1), "Today"),
    MessageRow(("message", 0, 1), 1, 0, 1, 1, "a long text " * 20, "", False, "12:00", None,
               False, "Bob", "#65aadd"),
    MessageRow(("message", 0, 2), 1, 0, 2, 2, "with a photo", "Photo", True, "12:01", "read",
               True),
    MessageRow(("message", 1, 3), 1, 1, 3, 3, "pending", "", True, "12:02", "pending", False),
    MessageRow(("message", 1, 4), 1, 1, 4, 4, "refused", "", True, "12:03", "failed", False,
               failure="You can't post in this channel"),
    MessageRow(("message", 1, 5), 1, 1, 5, 5, "", "🙂 Sticker", True, "12:04", "failed", False,
               media_kind="sticker", sticker=StickerFace("🙂", "circle", "#ffcc00"),
               failure="The message was not sent"),
]  # fmt: skip


def test_painting_rows_leaves_none_alone(qtbot) -> None:
    chats, history = ChatListModel(), HistoryModel()
    chats.apply(CHATS, ViewUpdateType.INITIAL)
    history.apply(HISTORY, ViewUpdateType.INITIAL)
    chat_view, history_view = QListView(), QListView()
    qtbot.addWidget(chat_view)
    qtbot.addWidget(history_view)
    chat_view.setModel(chats)
    history_view.setModel(history)
    history_view.resize(600, 400)
    delegates: list[tuple[QStyledItemDelegate, QAbstractListModel]] = [
        (ChatListDelegate(chat_view), chats),
        (HistoryDelegate(history_view, {("message", 0, 2): 0.5}), history),
    ]
    image = QImage(600, 400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 600, 80)
    before = sys.getrefcount(None)
    try:
        for _ in range(300):
            for delegate, model in delegates:
                for row in range(model.rowCount()):
                    index = model.index(row, 0)
                    delegate.sizeHint(option, index)
                    delegate.paint(painter, option, index)
    finally:
        painter.end()
    assert sys.getrefcount(None) >= before - 50  # a leak would be thousands


def test_media_sizes_read_as_people_write_them() -> None:
    from ui.delegates import format_size

    assert [format_size(n) for n in (12, 2_048, 800_000, 9_650_000, 55_000_000, 3 << 30)] == [
        "12 B", "2.0 KB", "781 KB", "9.2 MB", "52 MB", "3.0 GB"
    ]  # fmt: skip


class TextRecorder(QPainter):
    """A painter that keeps each text drawn in a rectangle, with the rectangle's width
    and the font it was drawn in."""

    def __init__(self, device: QImage) -> None:
        super().__init__(device)
        self.texts: list[tuple[str, int, QFont]] = []

    def drawText(self, *args: Any) -> Any:  # noqa: N802 - Qt
        if isinstance(args[0], QRect) and isinstance(args[-1], str):
            self.texts.append((args[-1], args[0].width(), QFont(self.font())))
        return super().drawText(*args)


def drawn(draw, width: int = 320, height: int = 72) -> list[tuple[str, int, QFont]]:
    """The texts ``draw(painter, option)`` writes into a row ``width`` wide."""
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    recorder = TextRecorder(image)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, width, height)
    option.font = QFont()
    option.fontMetrics = QFontMetrics(option.font)
    try:
        draw(recorder, option)
    finally:
        recorder.end()
    return recorder.texts


def test_a_long_chat_name_is_elided_and_keeps_its_mute_and_pin_markers(qtbot) -> None:
    view = QListView()
    qtbot.addWidget(view)
    delegate = ChatListDelegate(view)
    title = "The Extraordinarily Long Name Of A Neighbourhood Gardening Association"
    row = ChatRow(1, 1, title, "TE", "#e17076", "hi", "12:00", 0, True, True, False, False)
    texts = drawn(lambda painter, option: delegate._draw(painter, option, row))
    (name, width, font) = next(t for t in texts if t[0].startswith("The "))
    assert name.endswith("…  ⊘  ★")
    assert QFontMetrics(font).horizontalAdvance(name) <= width


def test_a_long_link_title_is_elided_to_its_bubble(qtbot) -> None:
    view = QListView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    delegate = HistoryDelegate(view)
    title = "A Field Guide To Every Mushroom You Can Find In The Forests Of Northern Europe " * 2
    row = MessageRow(("message", 0, 1), 1, 0, 1, 1, "look https://example.org/fungi", title,
                     False, "12:00", None, False, media_kind="link")  # fmt: skip
    texts = drawn(lambda painter, option: delegate._paint_message(painter, option, row), 600, 96)
    (line, width, font) = next(t for t in texts if t[0].startswith("▸ "))
    assert line.startswith("▸ A Field Guide") and line.endswith("…")
    assert QFontMetrics(font).horizontalAdvance(line) <= width
