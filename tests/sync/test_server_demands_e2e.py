"""The real client against what Telegram's server does and the mock server now does too:
seq containers carrying several pts updates, reads from another device, deletions of
messages the client never stored, and answers that are lost."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, replace

import pytest

from postbox import PeerId, Transaction
from sync.protocol import GetDialogs, State
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from tests.sync.engine_helpers import TOKEN, running_engine, server_report, wait_quiescent

#: The events a round makes, each several times: the new shapes, and messages to read.
ROUND = ("burst", "burst", "read_inbox", "delete_old", "message", "channel_post", "read_outbox")
#: How long the run with lost answers may take; it takes a few seconds when it converges.
LOST_ANSWERS = 90.0


@dataclass(frozen=True)
class Outcome:
    divergences: list[str]
    server: State
    cursor: tuple[int, int]
    #: (peer, client's unread count, server's) for every chat where they differ.
    unread_mismatches: list[tuple[int, int, int]]
    #: Answers the server dropped on the client's connection still open at the end.
    dropped: int
    #: Connections the client made: a lost answer gives its connection up.
    connections: int


def make_events(server: EmbeddedServer, rounds: int) -> None:
    def run(s: MockServer) -> None:
        for _ in range(rounds):
            for kind in ROUND:
                s.service.generate(1, kind)

    server.call(run)


async def exercise(tmp_path, faults: FaultConfig, rounds: int = 12, idle: float = 15.0) -> Outcome:
    config = ServerConfig(token=TOKEN, peers=20, messages=600, seed=4, faults=faults)
    with EmbeddedServer(config) as server:
        chats = server.call(lambda s: [p for p, n in s.service.store.chat_sizes() if n])
        async with running_engine(server, tmp_path / "client.db", open_peers=chats[:3]) as (
            engine,
            postbox,
        ):
            assert await engine.wait_idle(timeout=idle), engine.status()
            for _ in range(3):
                make_events(server, rounds)
                await asyncio.sleep(0)
            await wait_quiescent(engine, timeout=idle)
            dropped = server.call(
                lambda s: sum(c.session.faults.responses_dropped for c in s._connections)
            )
            connections = engine.status().counters["connections"]
            # The check's own connection is answered in full.
            server.call(lambda s: setattr(s, "config", replace(s.config, faults=FaultConfig())))
            report = await server_report(server, postbox)
            state = server.call(lambda s: s.service.store.state())
            cursor = postbox.run(lambda tx: tx.get_state())
            dialogs = server.call(lambda s: s.service.store.dialogs(GetDialogs(limit=100)).dialogs)
            mismatches = []
            for dialog in dialogs:
                read_state = functools.partial(
                    Transaction.get_read_state, peer_id=PeerId(dialog.peer)
                )
                local = postbox.run(read_state)
                count = 0 if local is None else local.count
                if count != dialog.unread_count:
                    mismatches.append((dialog.peer, count, dialog.unread_count))
    assert cursor is not None
    return Outcome(
        [str(d) for d in report.divergences],
        state,
        (cursor.pts, cursor.seq),
        mismatches,
        dropped,
        connections,
    )


@pytest.mark.parametrize(
    "faults",
    [FaultConfig(), FaultConfig(drop=0.1, duplicate=0.1, reorder=3)],
    ids=["clean", "push-faults"],
)
def test_the_client_converges_on_seq_containers_reads_and_old_deletions(
    tmp_path, faults: FaultConfig
) -> None:
    outcome = asyncio.run(exercise(tmp_path, faults))
    assert outcome.divergences == []
    assert outcome.cursor == (outcome.server.pts, outcome.server.seq)


def test_the_client_unread_counts_follow_reads_elsewhere_and_deleted_unread(tmp_path) -> None:
    outcome = asyncio.run(exercise(tmp_path, FaultConfig()))
    assert outcome.unread_mismatches == []


def test_the_client_converges_when_answers_are_lost_or_late(tmp_path) -> None:
    # One answer in five lost: every run needs far more answers than it can do without.
    faults = FaultConfig(drop_response=0.2, delay_response=0.05)
    running = exercise(tmp_path, faults, rounds=4, idle=30.0)
    outcome = asyncio.run(asyncio.wait_for(running, LOST_ANSWERS))
    # Each lost answer timed out and gave its connection up.
    assert outcome.connections > 1
    assert outcome.divergences == []
