"""The window against a live server: the chat list fills, a chat opens, a message is sent."""

from __future__ import annotations

import pytest

from client.account import Account
from client.app import display_problem
from postbox import PeerId
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.main_window import MainWindow
from ui.rows import ChatRow, MessageRow

pytestmark = pytest.mark.gui

TOKEN = "ui"
TEXT = "hello from the UI"


@pytest.fixture
def window(qtbot, tmp_path):
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=2)) as server:
        account = Account(tmp_path / "c.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        account.start()
        main = MainWindow(account)
        qtbot.addWidget(main)
        main.show()
        try:
            yield main, server
        finally:
            main.close_feeds()
            account.close()


def loaded(main: MainWindow) -> bool:
    """The chat list shows chats and no hole is left in it (one chat is archived)."""
    rows = main.chat_model.rows
    return len(rows) >= 10 and not any(isinstance(r, ChatRow) and r.is_hole for r in rows)


def test_the_chat_list_fills_and_a_chat_opens(qtbot, window) -> None:
    main, _server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    rows = [row for row in main.chat_model.rows if isinstance(row, ChatRow) and not row.is_hole]
    assert rows[0].pinned  # pinned chats lead
    main.chat_list.setCurrentIndex(main.chat_model.index(0, 0))
    qtbot.waitUntil(
        lambda: any(isinstance(r, MessageRow) for r in main.history_model.rows), timeout=20_000
    )
    assert main.header.text() == rows[0].title


def test_opening_a_chat_reads_it(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)

    def unread_chats() -> list[ChatRow]:
        rows = main.chat_model.rows
        return [r for r in rows if isinstance(r, ChatRow) and r.unread and r.peer_id >> 56 != 2]

    server.call(lambda s: s.service.generate(20))
    qtbot.waitUntil(lambda: bool(unread_chats()), timeout=20_000)
    unread = unread_chats()[0]
    main.open_chat(PeerId(unread.peer_id), unread.title)

    def badge() -> int:
        position = main.chat_model.row_of(unread.peer_id)
        assert position is not None
        return main.chat_model.rows[position].unread

    qtbot.waitUntil(lambda: badge() == 0, timeout=20_000)
    top = server.call(lambda s: s.store.recent_messages(unread.peer_id, 1)[0].id)
    qtbot.waitUntil(
        lambda: server.call(lambda s: s.store.read_marks(unread.peer_id))[0] == top,
        timeout=20_000,
    )


def test_sending_goes_pending_then_sent(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    user = next(
        row for row in main.chat_model.rows if isinstance(row, ChatRow) and row.peer_id >> 56 == 0
    )
    main.open_chat(PeerId(user.peer_id), user.title)
    qtbot.waitUntil(lambda: len(main.history_model.rows) > 0, timeout=20_000)
    states = []
    main.history_model.rowsInserted.connect(
        lambda *_: states.extend(
            r.delivery
            for r in main.history_model.rows
            if isinstance(r, MessageRow) and r.text == TEXT
        )
    )
    main.compose.setText(TEXT)
    main.chat_pane.send_button.click()
    assert main.compose.text() == ""
    qtbot.waitUntil(lambda: "pending" in states, timeout=10_000)

    def sent() -> bool:
        mine = [r for r in main.history_model.rows if isinstance(r, MessageRow) and r.text == TEXT]
        return len(mine) == 1 and mine[0].delivery in ("sent", "read")

    qtbot.waitUntil(sent, timeout=20_000)
    texts = server.call(lambda s: [m.text for m in s.store.recent_messages(user.peer_id, 3)])
    assert TEXT in texts


def test_without_a_display_the_app_says_how_to_proceed(monkeypatch) -> None:
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    problem = display_problem()
    assert problem is not None and "xvfb-run" in problem
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None
