"""Accounts syncing against a real server on loopback, as the end-to-end tests use them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from client.account import Account
from client.cli import main
from postbox import (
    AnyViewKey,
    ChatListViewKey,
    HistoryAnchor,
    MessageHistoryViewKey,
    PeerGroupId,
    PeerId,
)
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST

__all__ = ["synced_as", "verify_agrees_for", "wait_until"]


@contextlib.contextmanager
def synced_as(server: EmbeddedServer, db: Path, token: str, *chats: int) -> Iterator[Account]:
    """A syncing account whose chat list and the history of ``chats`` are on screen, so
    their holes are filled, as the app would; once idle."""
    with Account(db, "127.0.0.1", server.port, token, timeouts=FAST) as account:
        keys: list[AnyViewKey] = [ChatListViewKey(PeerGroupId.ROOT, count=100)]
        keys += [
            MessageHistoryViewKey(PeerId(peer), HistoryAnchor.upper_bound(), 50) for peer in chats
        ]
        screen = account.postbox.combined_view(keys, lambda _snapshot: None)
        try:
            screen.ready.result(timeout=30)
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
            yield account
        finally:
            screen.dispose()


def wait_until(account: Account, predicate: Callable[[], bool]) -> None:
    account.worker.call(lambda engine: engine.wait_for(predicate, 30))


def verify_agrees_for(
    server: EmbeddedServer, db: Path, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``postbox-chat verify`` finds ``db`` equal to its account's truth."""
    address = f"127.0.0.1:{server.port}"
    status = main(["verify", "--server", address, "--token", token, "--db", str(db)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert json.loads(out[out.index("{") :])["ok"] is True
