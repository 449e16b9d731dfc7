"""The UI benchmark's mock server, in a spawned process of its own.

The server must not share the client's GIL: a real client's server is elsewhere, and
the figure is the client's latency. ``ServerProcess`` starts it; the child records, for
every new-message push, the moment the server handed it to the connections
(``time.monotonic``, a system-wide clock on Linux, so both processes read the same
one). Commands go through a pipe: run traffic at a rate for some seconds, hand back the
recorded push times, stop.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from dataset import generate_dataset
from sync.protocol import (
    AnyUpdates,
    ShortMessage,
    UpdateNewChannelMessage,
    UpdateNewMessage,
    Updates,
)
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.server.service import Session
from sync.server.traffic import EVENT_WEIGHTS

__all__ = ["MESSAGE_SHARE", "TOKEN", "ServerInfo", "ServerProcess"]

TOKEN = "ui-bench"
#: The share of traffic events that are new messages (chat messages and channel posts).
MESSAGE_SHARE = (EVENT_WEIGHTS["message"] + EVENT_WEIGHTS["channel_post"]) / sum(
    EVENT_WEIGHTS.values()
)
#: How often the traffic loop wakes up to make the events that are due.
_TICK = 0.002

PushKey = tuple[int, int]


@dataclass(frozen=True)
class ServerInfo:
    port: int
    busiest_peer: int
    busiest_title: str
    busiest_messages: int


def _new_messages(push: AnyUpdates) -> list[PushKey]:
    if isinstance(push, ShortMessage):
        return [(push.user, push.id)]
    if isinstance(push, Updates):
        return [
            (update.message.peer, update.message.id)
            for update in push.updates
            if isinstance(update, UpdateNewMessage | UpdateNewChannelMessage)
        ]
    return []


def _instrument(server: MockServer, sent_at: dict[PushKey, float]) -> None:
    """Record when each new-message push leaves the service for the connections."""
    publish = server.publish

    def timed(account: int, pushes: list[AnyUpdates], exclude: Session | None) -> None:
        now = time.monotonic()
        for push in pushes:
            for key in _new_messages(push):
                sent_at.setdefault(key, now)
        publish(account, pushes, exclude)

    server.service._publish = timed


async def _traffic(server: MockServer, rate: float, seconds: float) -> int:
    """Make events at ``rate`` per second for ``seconds``, as the server's own loop does
    but with a finer tick; returns how many were made."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    made = 0
    while loop.time() - started < seconds:
        due = int((loop.time() - started) * rate) - made
        if due > 0:
            server.service.generate(due)
            made += due
        await asyncio.sleep(_TICK)
    return made


def _run_traffic(server: EmbeddedServer, rate: float, seconds: float) -> int:
    """Run ``_traffic`` on the server's loop and wait for it here."""

    def start(s: MockServer) -> asyncio.Future[int]:
        return asyncio.ensure_future(_traffic(s, rate, seconds))

    task = server.call(start)
    deadline = time.monotonic() + seconds + 30
    while not server.call(lambda _s: task.done()) and time.monotonic() < deadline:
        time.sleep(0.05)
    made: int = server.call(lambda _s: task.result())
    return made


def _serve(connection: Connection, options: dict[str, Any]) -> None:
    """The child's life: serve, answer ("traffic", rate, s) / ("times",) / ("stop",)."""
    dataset = generate_dataset(options["seed"], options["peers"], options["messages"], 60)
    busiest = dataset.busiest_peer_id()
    peer = dataset.peer(busiest)
    config = ServerConfig(
        token=TOKEN, seed=options["seed"], peers=options["peers"], messages=options["messages"]
    )
    sent_at: dict[PushKey, float] = {}
    with EmbeddedServer(config, dataset) as server:
        server.call(lambda s: _instrument(s, sent_at))
        info = ServerInfo(
            server.port,
            int(busiest),
            peer.name if peer is not None else "",
            dataset.message_counts()[busiest],
        )
        connection.send(info)
        while True:
            command = connection.recv()
            if command[0] == "traffic":
                connection.send(_run_traffic(server, command[1], command[2]))
            elif command[0] == "times":
                connection.send(dict(sent_at))
            else:
                return


class ServerProcess:
    """The mock server with ``peers`` chats and ``messages`` messages, in a child process."""

    def __init__(self, *, peers: int, messages: int, seed: int = 11) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        options = {"peers": peers, "messages": messages, "seed": seed}
        self._process = context.Process(target=_serve, args=(theirs, options), daemon=True)
        self._process.start()
        self.info: ServerInfo = self._connection.recv()

    def start_traffic(self, rate: float, seconds: float) -> None:
        """Start making events; ``traffic_done`` waits for the count."""
        self._connection.send(("traffic", rate, seconds))

    def traffic_done(self) -> int:
        made: int = self._connection.recv()
        return made

    def push_times(self) -> dict[PushKey, float]:
        self._connection.send(("times",))
        times: dict[PushKey, float] = self._connection.recv()
        return times

    def close(self) -> None:
        self._connection.send(("stop",))
        self._process.join(timeout=30)
        if self._process.is_alive():
            self._process.kill()
