"""Sharing the server: a well-behaved client beside greedy ones, and memory per connection.

c. **getState beside greedy clients.** Four client processes each send 5,000
   ``getHistory(limit=100)`` requests at once and read every answer, while a fifth asks
   ``getState`` one call at a time; its latency median, p99 and worst, and how long the
   greedy backlog took (from "go" to the last greedy answer). Aim: p99 under 50 ms.
d. **Server memory.** The server runs alone in a spawned process, so its resident set
   (``VmRSS``) is its own: at rest; with 500 idle authorized connections; with 500 idle
   connections that never authorize (and how many of them the server kept, at once and
   ``_AUTH_WAIT`` seconds later); with 40 connections that never authorize, each of
   which declared a 4 MiB frame and sent all of it but the last 64 KiB; with 256 such
   connections that declared a frame at the limit before auth (4 KiB) and sent all of it
   but the last byte. Aim: under 100 MB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import struct
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Final

from benchmarks._server_clients import (
    HOST,
    TIMEOUT,
    TOKEN,
    GreedyJob,
    GreedyResult,
    StateJob,
    StateResult,
    Workers,
)
from benchmarks.harness import Figure, percentile
from sync.protocol import Auth, FrameDecoder, decode_body, encode_frame, encode_request
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer

__all__ = ["GREEDY_CLIENTS", "fairness_figures", "memory_figures"]

GREEDY_CLIENTS: Final = 4
#: The latency aim for the well-behaved client's p99, in ms.
_AIM_P99_MS: Final = 50.0
#: The memory aim for the server process, in MB.
_AIM_MB: Final = 100.0
_IDLE: Final = 500
_FLOODERS: Final = 40
_DECLARED: Final = 4 * 1024 * 1024
#: What each flooder leaves unsent of the frame it declared.
_SHORT_BY: Final = 64 * 1024
#: Connections that declare a frame at the limit before auth (the server's default cap on
#: unauthorized connections), the limit, and what each leaves unsent.
_SMALL_FLOODERS: Final = 256
_SMALL_DECLARED: Final = 4096
_SMALL_SHORT_BY: Final = 1
#: Seconds after which the idle unauthorized connections are counted again.
_AUTH_WAIT: Final = 11.0
_SETTLE: Final = 0.5
_LENGTH: Final = struct.Struct(">I")


# -- c. a well-behaved client beside greedy ones ---------------------------------------


def fairness_figures(
    server: EmbeddedServer,
    workers: Workers,
    peer: int,
    offsets: tuple[int, ...],
    requests: int,
) -> list[Figure]:
    greedy_jobs = [
        GreedyJob(server.port, peer, offsets[number::GREEDY_CLIENTS], requests)
        for number in range(GREEDY_CLIENTS)
    ]
    pipes = workers.dispatch([*greedy_jobs, StateJob(server.port)])
    start = time.perf_counter()
    workers.go(pipes)
    greedy: list[GreedyResult] = workers.results(pipes[:GREEDY_CLIENTS])
    backlog = time.perf_counter() - start
    pipes[GREEDY_CLIENTS].send("stop")
    (state,) = workers.results(pipes[GREEDY_CLIENTS:])
    assert isinstance(state, StateResult)
    answered = sum(result.answered for result in greedy)
    cut = [result for result in greedy if result.lost is not None]
    name = f"(c) getState beside {GREEDY_CLIENTS} x {requests:,} getHistory"
    figures: list[Figure] = []
    latencies = state.latencies
    if latencies:
        figures += [
            Figure(
                f"{name}, median",
                percentile(latencies, 50),
                "ms",
                f"{len(latencies):,} calls one at a time while the backlog was served",
            ),
            Figure(f"{name}, p99", percentile(latencies, 99), "ms", f"aim: < {_AIM_P99_MS:g} ms"),
            Figure(f"{name}, worst", max(latencies), "ms"),
        ]
    else:
        figures.append(Figure(f"{name}, calls answered", 0, "calls"))
    if state.lost is not None:
        figures.append(Figure("(c) the getState client's connection ended", 1, "", state.lost))
    note = f"{answered:,} of {GREEDY_CLIENTS * requests:,} answers"
    if cut:
        note += f"; {len(cut)} greedy connection(s) ended early: {cut[0].lost}"
    figures += [
        Figure("(c) greedy backlog served", backlog, "s", note),
        Figure(
            "(c) greedy answers/s",
            answered / max(max(result.seconds for result in greedy), 1e-9),
            "req/s",
            "all four connections together",
        ),
    ]
    return figures


# -- d. the server's memory ------------------------------------------------------------


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def _serve_commands(config: ServerConfig, pipe: Connection) -> None:
    server = MockServer(config)
    await server.start()
    try:
        pipe.send(("ready", server.port))
        while True:
            command = await asyncio.to_thread(pipe.recv)
            if command == "stop":
                return
            if command == "connections":
                pipe.send(("connections", server.connection_count))
            else:
                pipe.send(("error", f"unknown command {command!r}"))
    finally:
        await server.stop()


def _server_main(config: ServerConfig, pipe: Connection) -> None:
    """The server process: serves until "stop", answering "connections" meanwhile."""
    # One line per refused connection would bury the table: only errors are shown.
    logging.basicConfig(level=logging.ERROR)
    try:
        asyncio.run(_serve_commands(config, pipe))
    except (EOFError, OSError, KeyboardInterrupt):
        return
    finally:
        pipe.close()


class _ServerProcess:
    """A ``MockServer`` in a spawned process of its own."""

    def __init__(self, config: ServerConfig) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._process: BaseProcess = context.Process(
            target=_server_main, args=(config, theirs), name="bench-server", daemon=True
        )
        self._process.start()
        theirs.close()
        self.port: int = self._receive("ready")

    @property
    def pid(self) -> int:
        pid = self._process.pid
        assert pid is not None
        return pid

    def _receive(self, expected: str) -> int:
        if not self._pipe.poll(TIMEOUT * 2):
            raise TimeoutError(f"the server process sent no {expected!r}")
        kind, value = self._pipe.recv()
        if kind != expected:
            raise RuntimeError(f"the server process sent {kind!r}: {value}")
        assert isinstance(value, int)
        return value

    def connections(self) -> int:
        self._pipe.send("connections")
        return self._receive("connections")

    def settled_connections(self) -> int:
        """The server's connection count once it stopped changing."""
        last = self.connections()
        while True:
            time.sleep(_SETTLE)
            now = self.connections()
            if now == last:
                return now
            last = now

    def rss(self) -> float:
        return _rss_mb(self.pid)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._pipe.send("stop")
        self._process.join(TIMEOUT)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(5)
        self._pipe.close()


_Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _open(port: int, count: int) -> list[_Streams]:
    opened: list[_Streams] = []
    for _ in range(count):
        opened.append(await asyncio.open_connection(HOST, port))
    return opened


async def _open_authorized(port: int, count: int) -> tuple[list[_Streams], int]:
    """``count`` connections, each authorized before the next opens; and how many the
    server authorized."""
    opened: list[_Streams] = []
    authorized = 0
    for _ in range(count):
        reader, writer = await asyncio.open_connection(HOST, port)
        opened.append((reader, writer))
        writer.write(encode_frame(encode_request(1, Auth(TOKEN))))
        decoder = FrameDecoder()
        bodies: list[bytes] = []
        while not bodies:
            data = await asyncio.wait_for(reader.read(64 * 1024), TIMEOUT)
            if not data:
                break
            bodies = decoder.feed(data)
        if bodies and "result" in decode_body(bodies[0]):
            authorized += 1
    return opened, authorized


async def _flood(streams: Sequence[_Streams], declared: int, short_by: int) -> None:
    """Declare a frame of ``declared`` bytes on each connection and send all of it but
    ``short_by`` (or as much as the server takes before it closes the connection)."""
    body = bytes(declared - short_by)
    for _reader, writer in streams:
        writer.write(_LENGTH.pack(declared) + body)

    async def sent(writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await writer.drain()
            while writer.transport.get_write_buffer_size() and not writer.is_closing():
                await asyncio.sleep(0.01)

    await asyncio.wait_for(asyncio.gather(*(sent(writer) for _r, writer in streams)), TIMEOUT)


async def _close(streams: Sequence[_Streams]) -> None:
    for _reader, writer in streams:
        writer.close()
    for _reader, writer in streams:
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


def memory_figures(config: ServerConfig, *, wait_for_auth_timeout: bool) -> list[Figure]:
    host = _ServerProcess(config)
    try:
        with asyncio.Runner() as runner:
            return _measure_memory(host, runner, wait_for_auth_timeout)
    finally:
        host.close()


def _measure_memory(
    host: _ServerProcess, runner: asyncio.Runner, wait_for_auth_timeout: bool
) -> list[Figure]:
    """The figures of d., the clients' connections all on ``runner``'s loop."""
    run = runner.run
    aim = f"aim: < {_AIM_MB:g} MB"

    def mb(name: str, note: str) -> Figure:
        return Figure(f"(d) server RSS, {name}", host.rss(), "MB", note)

    figures = [mb("at rest", "a spawned process serving the benchmark's account")]

    idle, authorized = run(_open_authorized(host.port, _IDLE))
    kept = host.settled_connections()
    figures.append(
        mb(f"{_IDLE} idle authorized connections", f"{authorized} authorized, {kept} open; {aim}")
    )
    run(_close(idle))
    host.settled_connections()

    anonymous = run(_open(host.port, _IDLE))
    kept = host.settled_connections()
    figures.append(
        mb(f"{_IDLE} idle unauthorized connections", f"the server kept {kept} open; {aim}")
    )
    if wait_for_auth_timeout:
        time.sleep(_AUTH_WAIT)
        figures.append(
            Figure(
                f"(d) unauthorized connections open {_AUTH_WAIT:g} s later",
                host.connections(),
                "connections",
                f"of {_IDLE} opened",
            )
        )
    run(_close(anonymous))
    host.settled_connections()

    flooders = run(_open(host.port, _FLOODERS))
    run(_flood(flooders, _DECLARED, _SHORT_BY))
    kept = host.settled_connections()
    figures.append(
        mb(
            f"{_FLOODERS} unauthorized 4 MiB frames",
            f"each declared {_DECLARED >> 20} MiB and sent all but {_SHORT_BY >> 10} KiB;"
            f" the server kept {kept} open; {aim}",
        )
    )
    run(_close(flooders))
    host.settled_connections()

    flooders = run(_open(host.port, _SMALL_FLOODERS))
    run(_flood(flooders, _SMALL_DECLARED, _SMALL_SHORT_BY))
    kept = host.settled_connections()
    figures.append(
        mb(
            f"{_SMALL_FLOODERS} unauthorized 4 KiB frames",
            f"each declared {_SMALL_DECLARED:,} bytes (the limit before auth) and sent all"
            f" but {_SMALL_SHORT_BY}; the server kept {kept} open; {aim}",
        )
    )
    run(_close(flooders))
    figures.append(
        Figure("(d) server peak RSS", _peak_mb(host.pid), "MB", "VmHWM of the server process")
    )
    return figures


def _peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")
