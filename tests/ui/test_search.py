"""The search dialog: one click on a result opens it, as in Telegram."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidgetItem

from client import SearchResults
from postbox import Message, MessageId, MessageIndex, PeerId, PeerNamespace
from ui.futures import FutureRelay
from ui.search import SearchDialog

pytestmark = pytest.mark.gui

CLUB = PeerId.make(PeerNamespace.GROUP, 21)
NOW = 1_800_000_000
MOVE = Message(MessageIndex(MessageId(CLUB, 0, 7), NOW), 1, 0, None, "knight to f3")


class Found:
    """An account whose search finds the chess club and one of its messages."""

    def search(self, query: str, *, limit: int = 50) -> Future[SearchResults]:
        done: Future[SearchResults] = Future()
        done.set_result(SearchResults(query, ((CLUB, "Chess Club"),), ((MOVE, "Chess Club"),)))
        return done


@pytest.fixture
def dialog(qtbot):
    search = SearchDialog(Found(), FutureRelay(), clock=lambda: NOW)  # type: ignore[arg-type]
    qtbot.addWidget(search)
    search.open_search()
    qtbot.waitExposed(search)
    search.query.setText("chess")
    qtbot.waitUntil(lambda: search.status.text() == "1 chat, 1 message")
    return search


def click_result(qtbot, search: SearchDialog, text: str) -> QListWidgetItem:
    """Click the result (or heading) that reads ``text``: a chat's name, a message's text."""
    results = search.results
    items = [results.item(i) for i in range(results.count())]
    (item,) = [i for i in items if i.text() == text or i.text().endswith("\n" + text)]
    where = results.visualItemRect(item).center()
    qtbot.mouseClick(results.viewport(), Qt.MouseButton.LeftButton, pos=where)
    return item


def test_one_click_on_a_chat_opens_it(qtbot, dialog) -> None:
    chosen = []
    dialog.chat_chosen.connect(lambda peer, title: chosen.append((peer, title)))
    click_result(qtbot, dialog, "Chess Club")
    assert chosen == [(CLUB, "Chess Club")]
    assert not dialog.isVisible()


def test_one_click_on_a_message_opens_its_chat_there(qtbot, dialog) -> None:
    chosen = []
    dialog.message_chosen.connect(lambda peer, title, message: chosen.append(message))
    click_result(qtbot, dialog, "knight to f3")
    assert chosen == [MOVE]
    assert not dialog.isVisible()


def test_a_click_that_also_activates_opens_the_chat_once(qtbot, dialog) -> None:
    """Where the platform activates an item on a single click, the click's activation
    follows the click itself."""
    chosen = []
    dialog.chat_chosen.connect(lambda peer, title: chosen.append(peer))
    item = click_result(qtbot, dialog, "Chess Club")
    dialog.results.itemActivated.emit(item)
    assert chosen == [CLUB]


def test_a_heading_chooses_nothing(qtbot, dialog) -> None:
    click_result(qtbot, dialog, "MESSAGES")
    assert dialog.isVisible()
