"""An account: local writes at once, delivered by its sync worker."""

from __future__ import annotations

import pytest

from client import MAX_DRAFT_LENGTH, MAX_MESSAGE_LENGTH
from client.account import Account
from postbox import (
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    MessageFlags,
    MessageId,
    PeerId,
    PeerNamespace,
)
from sync.engine import MessageTooLongError
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


def test_the_api_refuses_what_a_message_cannot_hold_at_once(tmp_path) -> None:
    """Without a server: the refusal comes before anything is stored or sent."""
    account = Account(tmp_path / "a.db", "127.0.0.1", 1, TOKEN)
    alice = PeerId.make(PeerNamespace.USER, 1001)
    gif = Media(MediaKind.GIF, 7, glyph=Glyph("🎉", GlyphShape.CIRCLE, 0x336699))
    try:
        calls = [
            lambda: account.send_message(alice, "x" * (MAX_MESSAGE_LENGTH + 1)),
            lambda: account.send_media(alice, gif, text="x" * 5000),
            lambda: account.edit_message(MessageId(alice, 1, 5), "x" * 5000),
            lambda: account.save_draft(alice, "x" * (MAX_DRAFT_LENGTH + 1)),
        ]
        for call in calls:
            with pytest.raises(MessageTooLongError) as raised:
                call()
            assert "\n" not in str(raised.value) and "holds at most" in str(raised.value)
        assert account.postbox.run(lambda tx: tx.get_unsent_message_ids()) == []
        assert account.postbox.run(lambda tx: tx.get_chat_interface_state(alice)) is None
    finally:
        account.close()
