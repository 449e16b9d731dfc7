"""An account: local writes at once, delivered by its sync worker."""

from __future__ import annotations

import pytest

from client.account import Account
from postbox import MessageFlags, PeerId, PeerNamespace
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST

TOKEN = "acct"


def test_an_account_syncs_and_sends(tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=10, messages=200, seed=6)) as server:
        user = server.call(
            lambda s: next(
                p for p, n in s.service.store.chat_sizes() if p >> 56 == PeerNamespace.USER
            )
        )
        with Account(tmp_path / "a.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST) as account:
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=20))
            local_id = account.send_message(PeerId(user), "from the account").result()
            message = account.postbox.run(lambda tx: tx.get_message(local_id))
            assert message is not None and message.flags & MessageFlags.UNSENT
            gone = lambda: account.postbox.run(lambda tx: tx.get_message(local_id)) is None  # noqa: E731
            account.worker.call(lambda engine: engine.wait_for(gone, 20))
            status = account.status()
            assert status is not None and status.counters["sent"] == 1
            with pytest.raises(ValueError, match="needs some text"):
                account.send_message(PeerId(user), "  ")
        texts = server.call(lambda s: [m.text for m in s.service.store.recent_messages(user, 5)])
        assert "from the account" in texts
