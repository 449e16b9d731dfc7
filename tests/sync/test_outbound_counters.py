"""Which counter the answer to an outgoing change moves: the account's pts, its qts,
or a channel's own pts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

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
from sync.engine.log_tags import DRAFT_TAG, READ_TAG, SETTINGS_TAG
from sync.protocol import AffectedMessages
from sync.simulation.loop import run_virtual

CHANNEL = int(PeerId.make(PeerNamespace.CHANNEL, 5))


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


@pytest.mark.parametrize(
    ("tag", "contents", "checked", "gaps"),
    [
        (READ_TAG, {"max_id": 5}, [CHANNEL], []),
        (SETTINGS_TAG, {"muted_until": 0}, [], ["the answer to setNotifySettings skipped pts"]),
    ],
)
def test_an_answer_that_skips_a_channels_pts_asks_that_channels_difference(
    tmp_path, tag: int, contents: dict[str, int], checked: list[int], gaps: list[str]
) -> None:
    """A read in a channel answered two points past the channel's stored pts: an update
    between was missed, and the channel's own difference brings it (the account's names
    only channels changed since its date). A mute's gap is the account's."""
    asked: list[int] = []
    skipped: list[str] = []
    with Postbox(tmp_path / "c.db", inline=True) as postbox:

        def queued(tx: Transaction) -> None:
            tx.set_state(StateCursor(pts=10, qts=0, seq=0, date=0))
            tx.set_peer_chat_state(PeerId(CHANNEL), ChannelState(3))
            tx.add_operation_log_entry(PeerId(CHANNEL), tag, contents)

        postbox.run(queued)

        async def call(_params: object) -> AffectedMessages:
            return AffectedMessages(pts=12 if tag == SETTINGS_TAG else 5, pts_count=1)

        async def main() -> None:
            told = asyncio.Event()

            def tell(into: list[Any]) -> Callable[[Any], None]:
                def record(value: Any) -> None:
                    into.append(value)
                    told.set()

                return record

            part = outbound.Outbound(
                postbox, call, on_gap=tell(skipped), on_channel_check=tell(asked)
            )
            task = asyncio.create_task(part.run())
            try:
                await asyncio.wait_for(told.wait(), 60)
            finally:
                task.cancel()

        run_virtual(main())
    assert (asked, skipped) == (checked, gaps)
