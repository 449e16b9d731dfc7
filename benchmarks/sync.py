"""Sync engine benchmark: catching up through difference slices, and push-to-commit latency.

* Catch-up: a client synced at some pts goes offline while the server makes N events;
  it reconnects and catches up through getDifference slices. Reported as updates applied
  per second, against Postbox's own bulk insert of as many messages in the same run
  (the storage benchmark's figure): the pipeline's overhead over storage.
* Reconnect: a client with the chat list and five chats open misses 10,000 (and
  100,000) events; the time from reconnecting until every open view is consistent.
* Latency: the server makes new-message events at 200 per second; for each, the time
  from the server writing the push to the client committing the message to Postbox.
  Server and client run in this process, so one monotonic clock times both ends.

The catch-up's server runs in a spawned process, so it does not take the client's GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import statistics
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from postbox import (
    ChangeRecord,
    ChatListViewKey,
    HistoryAnchor,
    InsertMessage,
    MessageHistoryViewKey,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from sync.engine import SyncEngine, Timeouts
from sync.protocol import AnyUpdates, ShortMessage, UpdateNewMessage, Updates
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.server.service import Session

TOKEN = "bench"
_TIMEOUTS = Timeouts(gap=0.5, quiet_poll=3600.0)


def _config(**options: Any) -> ServerConfig:
    return ServerConfig(token=TOKEN, peers=200, messages=5_000, seed=3, **options)


@contextlib.contextmanager
def _server(**options: Any) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(_config(**options)) as server:
        yield server


def _serve_in_child(connection: Connection, options: dict[str, Any]) -> None:
    """A spawned process's life: serve, and answer ("generate", n) / ("pts",) / ("stop",)."""
    with EmbeddedServer(_config(**options)) as server:
        connection.send(server.port)
        while True:
            command = connection.recv()
            if command[0] == "generate":
                generate = functools.partial(_generate, count=command[1])
                connection.send(server.call(generate, timeout=600))
            elif command[0] == "pts":
                connection.send(server.call(lambda s: s.service.store.state().pts))
            elif command[0] == "busiest":
                sizes = server.call(lambda s: s.service.store.chat_sizes())
                connection.send([peer for _, peer in sorted(((n, p) for p, n in sizes))[::-1]])
            else:
                return


def _generate(server: MockServer, count: int) -> int:
    return server.service.generate(count)


class _ServerProcess:
    """The mock server in a process of its own, so it does not share this one's GIL."""

    def __init__(self, **options: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        self._process = context.Process(target=_serve_in_child, args=(theirs, options))
        self._process.start()
        self.port: int = self._connection.recv()

    def ask(self, *command: Any) -> Any:
        self._connection.send(command)
        return self._connection.recv()

    def close(self) -> None:
        self._connection.send(("stop",))
        self._process.join(timeout=30)


async def _run_until_idle(postbox: Postbox, port: int) -> tuple[float, dict[str, int]]:
    engine = SyncEngine(postbox, "127.0.0.1", port, TOKEN, timeouts=_TIMEOUTS)
    started = time.perf_counter()
    task = asyncio.create_task(engine.run())
    try:
        idle = await engine.wait_idle(settle=0.05, timeout=600)
        assert idle, engine.status()
        elapsed = time.perf_counter() - started
        return elapsed, engine.status().counters
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _bulk_insert_rate(path: Path, count: int) -> float:
    """Postbox's own rate for inserting ``count`` messages in 1,000-message transactions."""
    postbox = Postbox(path)
    try:
        peers = [PeerId.make(PeerNamespace.USER, 10 + i) for i in range(50)]
        messages = [
            StoreMessage(
                peers[i % 50],
                int(MessageNamespace.CLOUD),
                i + 1,
                1_700_000_000 + i,
                flags=1,
                author_id=peers[i % 50],
                text=f"catch up message number {i}",
            )
            for i in range(count)
        ]
        started = time.perf_counter()
        for start in range(0, count, 1_000):
            postbox.run(functools.partial(_add, batch=messages[start : start + 1_000]))
        return count / (time.perf_counter() - started)
    finally:
        postbox.close()


def _add(tx: Transaction, batch: list[StoreMessage]) -> None:
    tx.add_messages(batch)


def _catch_up(ctx: BenchContext, events: int) -> list[Figure]:
    server = _ServerProcess(log_window=events * 2)
    postbox = Postbox(ctx.scratch / "catch-up.db")
    try:
        asyncio.run(_run_until_idle(postbox, server.port))
        start_pts = server.ask("pts")
        generated_started = time.perf_counter()
        server.ask("generate", events)
        generation = time.perf_counter() - generated_started
        end_pts = server.ask("pts")
        pending = end_pts - start_pts
        elapsed, counters = asyncio.run(_run_until_idle(postbox, server.port))
        cursor = postbox.run(lambda tx: tx.get_state())
        assert cursor is not None and cursor.pts == end_pts, (cursor, end_pts)
    finally:
        postbox.close()
        server.close()
    applied = counters["updates_applied"]
    bulk = _bulk_insert_rate(ctx.scratch / "bulk.db", max(applied, 1_000))
    rate = applied / elapsed
    return [
        Figure("catch-up: pending pts points", pending, "points", f"{events:,} server events"),
        Figure("catch-up: server generation", events / generation, "events/s", "baseline work"),
        Figure(
            "catch-up: updates applied",
            rate,
            "updates/s",
            f"{applied:,} in {elapsed:.2f} s, {counters['slices']} slices,"
            f" {counters['channel_differences']} channel differences",
        ),
        Figure("catch-up: postbox bulk insert", bulk, "msgs/s", "same run, 1,000 per transaction"),
        Figure("catch-up: ratio to bulk insert", rate / bulk, "x", "aim >= 0.3"),
    ]


def _reconnect(ctx: BenchContext, events: int) -> Figure:
    """A client with the chat list and the five busiest chats open misses ``events``
    server events, then reconnects: the time until it is idle again, every open view
    consistent (no gap, no difference pending, no hole left in a window)."""
    server = _ServerProcess(log_window=events * 2)
    postbox = Postbox(ctx.scratch / f"reconnect-{events}.db")
    try:
        busiest = server.ask("busiest")[:5]
        keys: list[Any] = [ChatListViewKey(PeerGroupId.ROOT, count=100)]
        keys += [
            MessageHistoryViewKey(PeerId(peer), HistoryAnchor.upper_bound(), 60) for peer in busiest
        ]
        subscription = postbox.combined_view(keys)
        asyncio.run(_run_until_idle(postbox, server.port))
        start_pts = server.ask("pts")
        server.ask("generate", events)
        pending = server.ask("pts") - start_pts
        elapsed, counters = asyncio.run(_run_until_idle(postbox, server.port))
        subscription.dispose()
    finally:
        postbox.close()
        server.close()
    return Figure(
        f"reconnect after {events:,} events: open views consistent",
        elapsed,
        "s",
        f"{pending:,} pts points, {counters['fills']} fills,"
        f" {counters['channel_differences']} channel differences",
    )


async def _latency(server: EmbeddedServer, postbox: Postbox, seconds: float) -> list[float]:
    sent_at: dict[tuple[int, int], float] = {}
    committed_at: dict[tuple[int, int], float] = {}

    def instrument(mock: MockServer) -> None:
        publish = mock.publish

        def timed(account: int, pushes: list[AnyUpdates], exclude: Session | None) -> None:
            now = time.monotonic()
            for push in pushes:
                if isinstance(push, ShortMessage):
                    sent_at[(push.user, push.id)] = now
                elif isinstance(push, Updates):
                    for update in push.updates:
                        if isinstance(update, UpdateNewMessage):
                            sent_at[(update.message.peer, update.message.id)] = now
            publish(account, pushes, exclude)

        mock.service._publish = timed

    def on_commit(record: ChangeRecord) -> None:
        now = time.monotonic()
        for peer_id, operations in record.message_operations.items():
            for operation in operations:
                if isinstance(operation, InsertMessage):
                    committed_at.setdefault((int(peer_id), operation.index.id.id), now)

    server.call(instrument)
    remove = postbox.add_commit_listener(on_commit)
    engine = SyncEngine(postbox, "127.0.0.1", server.port, TOKEN, timeouts=_TIMEOUTS)
    task = asyncio.create_task(engine.run())
    try:
        assert await engine.wait_idle(settle=0.05, timeout=60)
        sent_at.clear()
        committed_at.clear()

        async def traffic() -> None:
            interval = 1 / 200
            next_at = time.monotonic()
            deadline = next_at + seconds
            while next_at < deadline:
                server.call(lambda s: s.service.generate(1))
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))

        await traffic()
        assert await engine.wait_idle(settle=0.1, timeout=60)
    finally:
        remove()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return [committed_at[key] - at for key, at in sent_at.items() if key in committed_at]


@benchmark("sync")
def run(ctx: BenchContext) -> list[Figure]:
    figures = _catch_up(ctx, 20_000 if ctx.quick else 200_000)
    figures += [
        _reconnect(ctx, events) for events in ((10_000,) if ctx.quick else (10_000, 100_000))
    ]
    with _server() as server:
        postbox = Postbox(ctx.scratch / "latency.db")
        try:
            latencies = asyncio.run(_latency(server, postbox, 3.0 if ctx.quick else 10.0))
        finally:
            postbox.close()
    latencies_ms = [value * 1e3 for value in latencies]
    figures += [
        Figure("push-to-commit: messages timed", len(latencies_ms), "msgs", "200 events/s"),
        Figure("push-to-commit: median", statistics.median(latencies_ms), "ms"),
        Figure("push-to-commit: p99", percentile(latencies_ms, 99), "ms", "aim < 5 ms"),
    ]
    return figures
