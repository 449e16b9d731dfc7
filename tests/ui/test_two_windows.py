"""Two accounts' windows talking through the real server: what is typed in one window
arrives in the other, and the other's read turns the sender's ticks to read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt

from client.account import Account
from postbox import PeerId
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.client.test_two_accounts import contact_in_a_group, token_of
from tests.sync.engine_helpers import FAST
from ui.main_window import MainWindow
from ui.rows import ChatRow, DeliveryState, MessageRow

pytestmark = pytest.mark.gui

TOKEN = "two-windows"
TEXT = "typed in the first window"


def chat_row(window: MainWindow, peer: int) -> ChatRow | None:
    rows = window.chat_model.rows
    return next((r for r in rows if isinstance(r, ChatRow) and r.peer_id == peer), None)


def message_row(window: MainWindow, text: str) -> MessageRow | None:
    rows = window.history_model.rows
    return next((r for r in rows if isinstance(r, MessageRow) and r.text == text), None)


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    config = ServerConfig(token=TOKEN, seed=5, peers=16, messages=400)
    with EmbeddedServer(config) as running:
        yield running


def test_a_send_in_one_window_arrives_in_the_other_and_its_read_comes_back(
    qtbot, tmp_path, server
) -> None:
    me, friend, _group = contact_in_a_group(server)
    tokens = {"alice": TOKEN, "bob": token_of(server, friend)}
    accounts: list[Account] = []
    windows: list[MainWindow] = []
    try:
        for name, token in tokens.items():
            account = Account(
                tmp_path / f"{name}.db", "127.0.0.1", server.port, token, timeouts=FAST
            ).start()
            accounts.append(account)
            window = MainWindow(account)
            qtbot.addWidget(window)
            window.show()
            windows.append(window)
        alice, bob = windows
        qtbot.waitUntil(lambda: chat_row(alice, friend) is not None, timeout=20_000)
        qtbot.waitUntil(lambda: chat_row(bob, me) is not None, timeout=20_000)
        alice.open_chat(PeerId(friend), "friend")

        # Alice types and presses Enter: pending in her window, then sent.
        qtbot.keyClicks(alice.compose, TEXT)
        qtbot.keyClick(alice.compose, Qt.Key.Key_Return)
        assert alice.compose.text() == ""
        qtbot.waitUntil(lambda: message_row(alice, TEXT) is not None, timeout=20_000)
        qtbot.waitUntil(
            lambda: getattr(message_row(alice, TEXT), "delivery", None) == DeliveryState.SENT,
            timeout=20_000,
        )

        # Bob's list shows the chat unread with the text; opening it reads it.
        qtbot.waitUntil(
            lambda: (row := chat_row(bob, me)) is not None and row.unread >= 1, timeout=20_000
        )
        row = chat_row(bob, me)
        assert row is not None and TEXT in row.preview
        bob.open_chat(PeerId(me), row.title, unread=row.unread)
        qtbot.waitUntil(lambda: message_row(bob, TEXT) is not None, timeout=20_000)
        arrived = message_row(bob, TEXT)
        assert arrived is not None and not arrived.outgoing
        qtbot.waitUntil(
            lambda: (row := chat_row(bob, me)) is not None and row.unread == 0, timeout=20_000
        )

        # The read comes back: Alice's ticks turn read.
        qtbot.waitUntil(
            lambda: getattr(message_row(alice, TEXT), "delivery", None) == DeliveryState.READ,
            timeout=20_000,
        )
    finally:
        for window in windows:
            window.close_feeds()
        for account in accounts:
            account.close()
