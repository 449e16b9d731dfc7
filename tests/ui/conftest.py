"""The window against a live server, for the tests of the window."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.account import Account
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.garbage import MainThreadCollector
from ui.main_window import MainWindow
from ui.rows import ChatRow

TOKEN = "ui"


@pytest.fixture(autouse=True, scope="session")
def garbage_on_the_main_thread(qapp) -> Iterator[MainThreadCollector]:
    """As in the app: cyclic garbage (which may hold Qt objects) is collected on the
    main thread only, never on the postbox, sync or server threads."""
    collector = MainThreadCollector(qapp).start()
    yield collector
    collector.stop()


@pytest.fixture
def collector_stopped(garbage_on_the_main_thread) -> Iterator[None]:
    """The automatic collector back on for one test (it starts its own, or checks that
    something gave the collector back)."""
    garbage_on_the_main_thread.stop()
    try:
        yield
    finally:
        garbage_on_the_main_thread.start()


@pytest.fixture
def window(qtbot, tmp_path, request) -> Iterator[tuple[MainWindow, EmbeddedServer]]:
    size = getattr(request, "param", {"peers": 12, "messages": 300})
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=2, **size)) as server:
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
