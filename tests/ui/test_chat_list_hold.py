"""The chat list holds still while the pointer rests over it, however long, says how
many chats changed meanwhile, and catches up when the pointer leaves or the hint is
clicked; so a click opens the chat that was aimed at."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QListView, QWidget

from postbox import ViewUpdateType
from tests.ui.conftest import loaded
from ui.chat_list_hold import ChatOrderHold
from ui.main_window import MainWindow
from ui.models import ChatListModel
from ui.rows import ChatRow


def chat(peer: int) -> ChatRow:
    return ChatRow(peer, peer, f"Chat {peer}", "C", "#888888", "", "12:00", 0, False, False,
                   False, False)  # fmt: skip


def keys(rows) -> list[object]:
    return [row.key for row in rows]


def enter(widget: QWidget) -> None:
    at = QPointF(5, 5)
    QApplication.sendEvent(widget, QEnterEvent(at, at, at))


def leave(widget: QWidget) -> None:
    QApplication.sendEvent(widget, QEvent(QEvent.Type.Leave))


@pytest.fixture
def chat_list(qtbot) -> QListView:
    view = QListView()
    model = ChatListModel()
    model.apply([chat(n) for n in range(1, 6)], ViewUpdateType.INITIAL)
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(300, 400)
    view.show()
    return view


def test_the_pointer_entering_holds_and_leaving_releases(qtbot, chat_list) -> None:
    hold = ChatOrderHold(chat_list)
    assert not hold.holding
    enter(chat_list.viewport())
    assert hold.holding
    with qtbot.waitSignal(hold.released, timeout=1_000):
        leave(chat_list.viewport())
    assert not hold.holding


def test_nothing_but_the_pointer_leaving_ends_the_hold(chat_list) -> None:
    # Before, a pointer at rest released the list after five seconds (a timer of the
    # hold's own), and the rows moved under it.
    hold = ChatOrderHold(chat_list)
    enter(chat_list.viewport())
    assert hold.findChildren(QTimer) == []
    assert hold.holding


def test_the_hint_says_how_many_chats_changed_and_a_click_asks_to_catch_up(
    qtbot, chat_list
) -> None:
    hold = ChatOrderHold(chat_list)
    hold.show_changed(3)
    assert hold.hint.isVisible() and hold.hint.text().endswith("3 chats changed")
    # At the top of the list, in its middle.
    assert hold.hint.geometry().top() < 20
    assert abs(hold.hint.geometry().center().x() - chat_list.viewport().width() // 2) <= 1
    with qtbot.waitSignal(hold.catch_up_requested, timeout=1_000):
        qtbot.mouseClick(hold.hint, Qt.MouseButton.LeftButton)
    hold.show_changed(0)
    assert hold.hint.isHidden()


# -- the window, against the real server -----------------------------------------------


def bumped_last(rows: list[ChatRow]) -> list[ChatRow]:
    """A message arrives in the last chat: the newest order puts it on top."""
    top = dataclasses.replace(rows[-1], preview="just now")
    return [top, *rows[:-1]]


def resting_while_a_chat_moves(qtbot, main: MainWindow) -> tuple[list[ChatRow], list[ChatRow]]:
    """The pointer rests on the loaded list and a message moves its last chat to the top:
    the rows before, and the order the move asks for."""
    main.resize(900, 500)
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    rows: list[ChatRow] = list(main.chat_model.rows)
    enter(main.chat_list.viewport())
    moved = bumped_last(rows)
    main.show_chat_rows(moved, ViewUpdateType.GENERIC)
    return rows, moved


@pytest.mark.gui
def test_a_resting_pointer_keeps_every_row_and_counts_what_waits(qtbot, window) -> None:
    main, _server = window
    rows, moved = resting_while_a_chat_moves(qtbot, main)
    shown = list(main.chat_model.rows)
    # The chat stays where it was (below the view, too), with its new preview.
    assert keys(shown) == keys(rows)
    assert shown[-1].preview == "just now"
    assert main.order_hold.hint.isVisible()
    assert main.order_hold.hint.text().endswith("1 chat changed")
    # The pointer leaves: the chat goes to the top, as it would have.
    leave(main.chat_list.viewport())
    assert keys(list(main.chat_model.rows)) == keys(moved)
    assert main.order_hold.hint.isHidden()


@pytest.mark.gui
def test_a_click_on_the_hint_catches_up_and_the_list_holds_again(qtbot, window) -> None:
    main, _server = window
    _rows, moved = resting_while_a_chat_moves(qtbot, main)
    qtbot.mouseClick(main.order_hold.hint, Qt.MouseButton.LeftButton)
    assert keys(list(main.chat_model.rows)) == keys(moved)
    assert main.order_hold.hint.isHidden()
    # The pointer is still there: the next move waits again.
    assert main.order_hold.holding
    main.show_chat_rows(bumped_last(moved), ViewUpdateType.GENERIC)
    assert keys(list(main.chat_model.rows)) == keys(moved)
    assert main.order_hold.hint.text().endswith("1 chat changed")


@pytest.mark.gui
def test_a_click_while_traffic_moves_chats_opens_the_chat_aimed_at(qtbot, window) -> None:
    main, server = window
    main.resize(900, 500)
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    enter(main.chat_list.viewport())
    before = keys(list(main.chat_model.rows))
    previews = [row.preview for row in main.chat_model.rows]
    server.call(lambda s: s.service.generate(60, "message"))
    qtbot.waitUntil(lambda: [row.preview for row in main.chat_model.rows] != previews,
                    timeout=20_000)  # fmt: skip
    assert keys(list(main.chat_model.rows)) == before
    aimed = main.chat_model.rows[len(before) // 2]
    main.chat_list.setCurrentIndex(main.chat_model.index(len(before) // 2, 0))
    assert main.chat_pane.peer_id is not None and int(main.chat_pane.peer_id) == aimed.peer_id
    leave(main.chat_list.viewport())
    assert main.chat_pane.peer_id is not None and int(main.chat_pane.peer_id) == aimed.peer_id


def test_the_hint_stays_at_the_top_while_the_list_scrolls(qtbot) -> None:
    view = QListView()
    model = ChatListModel()
    model.apply([chat(n) for n in range(1, 60)], ViewUpdateType.INITIAL)
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    hold = ChatOrderHold(view)
    hold.show_changed(3)
    where = hold.hint.geometry()
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    assert hold.hint.geometry() == where
