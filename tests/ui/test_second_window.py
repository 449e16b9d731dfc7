"""A second window on the same database: a standby that says so, shows what the master
syncs, and takes over when the master goes."""

from __future__ import annotations

import pytest

from client.account import Account
from postbox import ChatListViewKey, PeerGroupId
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.main_window import MainWindow
from ui.rows import ChatRow

pytestmark = pytest.mark.gui

TOKEN = "ui"
STANDBY = "Standby: another process syncs this account; its updates show here."


def listed(main: MainWindow) -> int:
    return sum(isinstance(r, ChatRow) and not r.is_hole for r in main.chat_model.rows)


def test_a_second_window_is_a_standby_until_the_first_goes(qtbot, tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=2, peers=12, messages=300)) as server:
        db = tmp_path / "c.db"
        first = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST).start()
        second = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        # The first process shows the chat list (its holes are what it fetches).
        screen = first.postbox.combined_view(
            [ChatListViewKey(PeerGroupId.ROOT, count=100)], lambda _snapshot: None
        )
        try:
            first.worker.call(lambda engine: engine.wait_for(lambda: engine.connected))
            main = MainWindow(second.start())
            qtbot.addWidget(main)
            main.show()
            try:
                qtbot.waitUntil(lambda: main.connection_label.text() == STANDBY, timeout=20_000)
                assert main.connection_label.objectName() == "caption"  # not a warning
                assert not main.retry_button.isVisible()
                # The chats the master fetches appear here, through its commits.
                qtbot.waitUntil(lambda: listed(main) >= 10, timeout=20_000)
                first.close()
                qtbot.waitUntil(lambda: second.role == "master", timeout=20_000)
                qtbot.waitUntil(lambda: not main.connection_label.isVisible(), timeout=20_000)
                status = second.status()
                assert status is not None and status.connection == "connected"
            finally:
                main.close_feeds()
        finally:
            screen.dispose()
            first.close()
            second.close()
