"""Which counter the answer to an outgoing change moves: the account's pts, its qts,
or a channel's own pts."""

from __future__ import annotations

import pytest

from postbox import (
    ChannelState,
    PeerId,
    PeerNamespace,
    PeerOperationLogEntry,
    Postbox,
    StateCursor,
    Transaction,
)
from sync.engine import outbound
from sync.engine.log_tags import DRAFT_TAG, SETTINGS_TAG
from sync.protocol import AffectedMessages


@pytest.mark.parametrize("tag", [SETTINGS_TAG, DRAFT_TAG])
def test_a_channels_mute_or_draft_moves_the_accounts_pts_not_the_channels(tmp_path, tag) -> None:
    """The server answers a mute or a draft with the account's pts, whatever the chat:
    a channel's own pts must not take it (here both stand at 10, so it would fit)."""
    channel = PeerId.make(PeerNamespace.CHANNEL, 5)
    with Postbox(tmp_path / "c.db") as postbox:

        def queued(tx: Transaction) -> PeerOperationLogEntry:
            tx.set_state(StateCursor(pts=10, qts=0, seq=0, date=0))
            tx.set_peer_chat_state(channel, ChannelState(10))
            tx.add_operation_log_entry(channel, tag, {"muted_until": 0})
            return tx.get_operation_log_entries(channel, tag)[0]

        entry = postbox.run(queued)
        answered = AffectedMessages(pts=11, pts_count=1)
        gap = postbox.run(lambda tx: outbound._kept_unless_changed(tx, entry, answered))
        assert not gap
        state = postbox.run(lambda tx: tx.get_state())
        assert state is not None and state.pts == 11
        assert postbox.run(lambda tx: tx.get_peer_chat_state(channel)) == ChannelState(10)
