"""A ``postbox-server --db FILE`` killed with SIGKILL and started again keeps its truth.

A real process makes traffic while a client collects its pushes; after the kill and a
restart on the same file the counters have not gone back, the difference from before
the kill still holds every pushed update at its pts, and what the new process makes
takes fresh pts values and message ids.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

from sync.connection import ServerConnection
from sync.protocol import (
    AnyUpdate,
    Auth,
    Difference,
    DifferenceSlice,
    GetDialogs,
    GetDifference,
    GetState,
    Message,
    ShortMessage,
    State,
    UpdateEditChannelMessage,
    UpdateNewChannelMessage,
    UpdateNewMessage,
    UpdateReadHistoryInbox,
    Updates,
)

WAIT = 20.0
TOKEN = "tok"


def start(db: Path) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "sync.server.cli", "--token", TOKEN, "--peers", "20"]
        + ["--messages", "400", "--seed", "3", "--rate", "300", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "listening on 127.0.0.1:" in line, line
    return process, int(line.split("127.0.0.1:")[1].split()[0])


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.stdout is not None
    process.stdout.close()


async def collect(port: int, points: int) -> tuple[State, list[AnyUpdate], State]:
    """The state on connecting, then the account's pts updates after it pushed until
    ``points`` of them and a seq container with several came, and the state after them."""
    connection = await ServerConnection.open("127.0.0.1", port)
    try:
        me = await asyncio.wait_for(connection.call(Auth(TOKEN)), WAIT)
        first = await asyncio.wait_for(connection.call(GetState()), WAIT)
        pushed: list[AnyUpdate] = []
        containers = 0
        while len(pushed) < points or not containers:
            push = await asyncio.wait_for(connection.pushes.get(), WAIT)
            assert push is not None, connection.closed_reason
            if isinstance(push, ShortMessage):
                updates: list[AnyUpdate] = [push.as_update(me.user.id)]
            else:
                assert isinstance(push, Updates)
                containers += bool(push.seq and len(push.updates) > 1)
                updates = list(push.updates)
            # Pushes sent before the first state was read are not after it.
            pushed.extend(u for u in updates if _account_pts(u) > first.pts)
        last = await asyncio.wait_for(connection.call(GetState()), WAIT)
        return first, pushed, last
    finally:
        await connection.close()


def _account_pts(update: AnyUpdate) -> int:
    """The pts of an update that moves the account's pts; 0 for any other."""
    if hasattr(update, "channel") or isinstance(
        update, UpdateNewChannelMessage | UpdateEditChannelMessage
    ):
        return 0
    pts = getattr(update, "pts", 0)
    assert isinstance(pts, int)
    return pts


async def log_since(port: int, state: State) -> tuple[list[Message], list[AnyUpdate], State]:
    """Every account update after ``state``, by chained getDifference."""
    connection = await ServerConnection.open("127.0.0.1", port)
    try:
        await asyncio.wait_for(connection.call(Auth(TOKEN)), WAIT)
        messages: list[Message] = []
        others: list[AnyUpdate] = []
        pts, date = state.pts, state.date
        while True:
            answer = await asyncio.wait_for(
                connection.call(GetDifference(pts, 0, date, pts_total_limit=100_000)), WAIT
            )
            assert isinstance(answer, Difference | DifferenceSlice), answer
            messages.extend(answer.new_messages)
            others.extend(answer.other_updates)
            if isinstance(answer, Difference):
                return messages, others, answer.state
            pts = answer.intermediate_state.pts
    finally:
        await connection.close()


async def dialogs(port: int) -> dict[int, tuple[int, int | None]]:
    """Each chat's (read inbox mark, channel pts)."""
    connection = await ServerConnection.open("127.0.0.1", port)
    try:
        await asyncio.wait_for(connection.call(Auth(TOKEN)), WAIT)
        answer = await asyncio.wait_for(connection.call(GetDialogs(limit=100)), WAIT)
        return {d.peer: (d.read_inbox_max_id, d.pts) for d in answer.dialogs}
    finally:
        await connection.close()


def test_a_killed_server_restarts_from_its_file_where_it_was(tmp_path) -> None:
    db = tmp_path / "server.db"
    process, port = start(db)
    try:
        first, before, last = asyncio.run(collect(port, 60))
        marks = asyncio.run(dialogs(port))
    finally:
        kill(process)

    process, port = start(db)
    try:
        restarted = asyncio.run(dialogs(port))
        _, after, _ = asyncio.run(collect(port, 30))
        messages, others, final = asyncio.run(log_since(port, first))
    finally:
        kill(process)

    assert final.pts >= last.pts and final.seq >= last.seq
    # Read marks and channel pts only ever grow.
    for peer, (read_inbox, pts) in marks.items():
        assert restarted[peer][0] >= read_inbox
        assert (restarted[peer][1] or 0) >= (pts or 0)
    # Everything pushed before the kill is in the log, in order, as it was pushed.
    pushed_messages = [u.message for u in before if isinstance(u, UpdateNewMessage)]
    pushed_others = [u for u in before if not isinstance(u, UpdateNewMessage)]
    assert messages[: len(pushed_messages)] == pushed_messages
    assert others[: len(pushed_others)] == pushed_others
    # What the new process made is in the log too, after it: no pts and no id reused.
    made_after = [u.message for u in after if isinstance(u, UpdateNewMessage)]
    assert made_after
    assert all(message in messages[len(pushed_messages) :] for message in made_after)
    assert min(map(_account_pts, after)) > max(map(_account_pts, before))
    ids = [(m.peer, m.id) for m in messages]
    assert len(ids) == len(set(ids))
    assert any(isinstance(u, UpdateReadHistoryInbox) for u in others)
