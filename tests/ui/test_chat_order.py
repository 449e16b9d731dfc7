"""The chat list holds its order while the pointer is over it, so a click opens the chat
that was aimed at; the newest order comes back when the pointer leaves or rests."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QListView, QWidget

from postbox import ViewUpdateType
from tests.ui.conftest import loaded
from ui.chat_order import ChatOrderHold, held_order
from ui.models import ChatListModel
from ui.rows import ChatRow


def chat(peer: int, preview: str = "", *, hole: bool = False) -> ChatRow:
    return ChatRow(
        key=("hole", peer) if hole else peer,
        peer_id=peer,
        title=f"Chat {peer}",
        initials="C",
        color="#888888",
        preview=preview,
        time="12:00",
        unread=0,
        pinned=False,
        muted=False,
        online=False,
        outgoing=False,
        is_hole=hole,
    )


def keys(rows: list[ChatRow]) -> list[object]:
    return [row.key for row in rows]


# -- the order, pure -----------------------------------------------------------------


def test_rows_in_view_keep_their_places_with_their_newest_content() -> None:
    shown = [chat(1), chat(2), chat(3), chat(4), chat(5)]
    newest = [chat(4, "new"), chat(1), chat(2), chat(3), chat(5)]
    held = held_order(shown, newest, in_view=2)
    # 1..3 are in view and stay; 4 moved to the top, but below the view it is newest.
    assert keys(held) == [1, 2, 3, 4, 5]
    held = held_order(shown, newest, in_view=4)
    assert keys(held) == [1, 2, 3, 4, 5]
    assert held[3].preview == "new"


def test_chats_below_the_view_follow_the_newest_order() -> None:
    shown = [chat(1), chat(2), chat(3), chat(4), chat(5)]
    newest = [chat(5), chat(1), chat(4), chat(2), chat(3)]
    assert keys(held_order(shown, newest, in_view=1)) == [1, 2, 5, 4, 3]


def test_a_chat_gone_from_the_newest_rows_stays_until_the_hold_ends() -> None:
    shown = [chat(1), chat(2), chat(3)]
    assert keys(held_order(shown, [chat(1), chat(3)], in_view=2)) == [1, 2, 3]


def test_a_new_chat_comes_in_below_the_view() -> None:
    shown = [chat(1), chat(2), chat(3)]
    newest = [chat(9, "hi"), chat(1), chat(2), chat(3)]
    assert keys(held_order(shown, newest, in_view=1)) == [1, 2, 9, 3]


def test_a_loading_row_whose_hole_is_filled_leaves_at_once() -> None:
    shown = [chat(1), chat(2), chat(0, hole=True)]
    newest = [chat(1), chat(2), chat(3), chat(4)]
    assert keys(held_order(shown, newest, in_view=2)) == [1, 2, 3, 4]


def test_nothing_shown_yet_gives_the_newest_rows() -> None:
    newest = [chat(2), chat(1)]
    assert held_order([], newest, in_view=-1) == newest


# -- the pointer ---------------------------------------------------------------------


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


def test_a_pointer_at_rest_releases_after_the_hold_time(qtbot, chat_list) -> None:
    hold = ChatOrderHold(chat_list, hold_ms=30)
    enter(chat_list.viewport())
    assert hold.holding
    with qtbot.waitSignal(hold.released, timeout=5_000):
        pass
    assert not hold.holding


def test_the_last_row_in_view_is_the_last_row_when_all_fit(chat_list) -> None:
    hold = ChatOrderHold(chat_list)
    assert hold.last_row_in_view() == 4
    chat_list.resize(300, chat_list.sizeHintForRow(0) * 2 + 4)
    assert hold.last_row_in_view() < 4


# -- the window, against the real server -----------------------------------------------


@pytest.mark.gui
def test_a_chat_moving_up_under_the_pointer_waits_until_it_leaves(qtbot, window) -> None:
    main, _server = window
    main.resize(900, 500)
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    rows: list[ChatRow] = list(main.chat_model.rows)
    in_view = main.order_hold.last_row_in_view()
    assert 0 < in_view < len(rows) - 1
    aimed = rows[2]
    enter(main.chat_list.viewport())
    # A message arrives in the last chat in view: the newest order puts it on top.
    bumped = dataclasses.replace(rows[in_view], preview="just now")
    moved = [bumped, *rows[:in_view], *rows[in_view + 1 :]]
    main.show_chat_rows(moved, ViewUpdateType.GENERIC)
    shown: list[ChatRow] = list(main.chat_model.rows)
    assert keys(shown) == keys(rows)
    assert shown[in_view].preview == "just now"
    assert main.chat_model.rows[2] is aimed or main.chat_model.rows[2].key == aimed.key
    # The pointer leaves: the chat goes to the top, as it would have.
    leave(main.chat_list.viewport())
    assert keys(list(main.chat_model.rows)) == keys(moved)


@pytest.mark.gui
def test_a_click_while_traffic_moves_chats_opens_the_chat_aimed_at(qtbot, window) -> None:
    main, server = window
    main.resize(900, 500)
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    enter(main.chat_list.viewport())
    in_view = main.order_hold.last_row_in_view()
    before = keys(list(main.chat_model.rows))[: in_view + 1]
    previews = [row.preview for row in main.chat_model.rows[: in_view + 1]]
    server.call(lambda s: s.service.generate(60, "message"))
    qtbot.waitUntil(
        lambda: [row.preview for row in main.chat_model.rows[: in_view + 1]] != previews,
        timeout=20_000,
    )
    assert keys(list(main.chat_model.rows))[: in_view + 1] == before
    aimed = main.chat_model.rows[in_view]
    assert isinstance(aimed, ChatRow)
    main.chat_list.setCurrentIndex(main.chat_model.index(in_view, 0))
    assert main.chat_pane.peer_id is not None and int(main.chat_pane.peer_id) == aimed.peer_id
    leave(main.chat_list.viewport())
    assert main.chat_pane.peer_id is not None and int(main.chat_pane.peer_id) == aimed.peer_id
