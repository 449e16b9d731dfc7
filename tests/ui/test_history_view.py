"""The history list keeps the reader's place and animates only live rows."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QStyleOptionViewItem

from postbox import ViewUpdateType
from ui.history_view import HistoryListView
from ui.rows import DateRow, HistoryRow, MessageRow

pytestmark = pytest.mark.gui


def message(id_: int, text: str = "") -> MessageRow:
    body = text or f"message number {id_} " + "words " * (id_ % 7)
    return MessageRow(
        ("message", 0, id_), 1, 0, id_, 1_800_000_000 + id_, body, "", id_ % 3 == 0,
        "12:00", "sent" if id_ % 3 == 0 else None, False,
    )  # fmt: skip


def rows(ids) -> list[HistoryRow]:
    return [DateRow(("day", 1), "Today"), *(message(i) for i in ids)]


@pytest.fixture
def view(qtbot):
    widget = HistoryListView()
    qtbot.addWidget(widget)
    widget.resize(480, 360)
    widget.show()
    qtbot.waitExposed(widget)
    widget.show_rows(rows(range(100, 160)), ViewUpdateType.INITIAL)
    return widget


def test_the_first_load_opens_at_the_bottom_without_animation(view) -> None:
    assert view.at_bottom()
    assert not view.animator.running


def test_a_fill_above_keeps_the_top_message_in_place(qtbot, view) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 3)
    before = view.top_row()
    assert before is not None
    view.show_rows(rows(range(60, 160)), ViewUpdateType.FILL_HOLE)
    assert view.top_row() == before
    assert not view.animator.running


def test_a_live_message_slides_into_sight_and_keeps_the_reader_at_the_bottom(qtbot, view):
    bar = view.verticalScrollBar()
    before = bar.value()
    view.show_rows(rows(range(100, 161)), ViewUpdateType.GENERIC)
    # Laid out at once and a fifth of the way into sight in the same frame...
    assert before < bar.value() < bar.maximum()
    assert view.at_bottom()  # following counts as being at the bottom
    assert view.animator.progress[("message", 0, 160)] < 1.0
    # ...then the view slides the rest of the way as the row fades in.
    qtbot.waitUntil(lambda: not view.animator.running, timeout=2_000)
    assert bar.value() == bar.maximum()
    assert view.animator.progress == {}


def test_a_reader_who_scrolls_during_the_slide_stops_it(qtbot, view) -> None:
    bar = view.verticalScrollBar()
    view.show_rows(rows(range(100, 161)), ViewUpdateType.GENERIC)
    assert view.animator.following
    bar.setValue(bar.value() - 200)
    qtbot.waitUntil(lambda: not view.animator.following, timeout=2_000)
    assert not view.at_bottom()


def test_a_live_message_does_not_move_someone_reading_history(view) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    before = view.top_row()
    view.show_rows(rows(range(100, 161)), ViewUpdateType.GENERIC)
    assert view.top_row() == before
    assert not view.at_bottom()


@pytest.mark.parametrize("width", [300, 900])
def test_a_new_width_lays_the_rows_out_again_without_overlaps(qtbot, view, width) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    before = view.top_row()
    view.resize(width, 360)
    qtbot.wait(10)
    delegate = view.itemDelegate()
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    tops = []
    for position in range(len(view.history_model.rows)):
        index = view.history_model.index(position, 0)
        rect = view.visualRect(index)
        # Each row is as tall as its text wraps at this width, right after the resize.
        assert rect.height() == delegate.sizeHint(option, index).height()
        tops.append((rect.top(), rect.bottom()))
    assert all(above[1] < below[0] for above, below in zip(tops, tops[1:], strict=False))
    assert view.top_row() is not None and view.top_row()[0] == before[0]


def test_a_shorter_viewport_keeps_a_reader_at_the_bottom_there(qtbot, view) -> None:
    # A bar opening above the compose box takes height from the history: before, the
    # newest messages went below the fold, and live ones then stayed there.
    view.resize(480, 250)
    qtbot.waitUntil(lambda: view.viewport().height() < 250)
    assert view.at_bottom()
    view.show_rows(rows(range(100, 161)), ViewUpdateType.GENERIC)
    qtbot.waitUntil(lambda: not view.animator.running, timeout=2_000)
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum()
    view.resize(480, 360)
    qtbot.waitUntil(lambda: view.viewport().height() > 300)
    assert bar.value() == bar.maximum()


def test_a_shorter_viewport_keeps_the_top_message_of_someone_reading_history(view) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    before = view.top_row()
    view.resize(480, 250)
    assert view.top_row() == before and not view.at_bottom()
    view.resize(480, 360)
    assert view.top_row() == before
