"""Opening the app's windows: when one cannot open, those opened before are closed
again and the garbage collector is given back."""

from __future__ import annotations

import asyncio
import gc
import io

import pytest

from client import app
from client.account import Account
from postbox import PostboxClosedError, PostboxError
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST

TOKEN = "opening"


def test_a_window_that_cannot_open_closes_the_ones_opened_before(
    qapp, tmp_path, monkeypatch, collector_stopped
) -> None:
    monkeypatch.setattr(app, "stop_on_signals", lambda _application: None)
    monkeypatch.setattr(asyncio, "set_event_loop", lambda _loop: None)
    opened: list[Account] = []

    def first() -> Account:
        account = Account(tmp_path / "a.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        opened.append(account)
        return account

    def second() -> Account:
        raise PostboxError("not a postbox-chat database")

    with EmbeddedServer(ServerConfig(token=TOKEN, seed=1, peers=5, messages=50)) as server:
        windows = [app._Window(first, None), app._Window(second, None)]
        with pytest.raises(PostboxError, match="not a postbox-chat database"):
            app._show_windows(windows, io.StringIO())
    assert len(opened) == 1
    with pytest.raises(PostboxClosedError):  # the first account was closed again
        opened[0].postbox.run(lambda tx: None)
    assert gc.isenabled()  # and the collector given back
