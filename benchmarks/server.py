"""Server benchmark: getHistory over loopback, pushed updates, and the same work in-process.

The mock server (``EmbeddedServer``, on its own thread and loop in this process) holds a
generated account (seed 1, 200 peers, 40,000 messages, a fixed clock). Its busiest chat is
found over the protocol (every dialog from ``getDialogs``, then ``getHistory(limit=1)``
for each one's ``count``) and its message ids are paged in. The workload is a fixed,
seeded list of full 100-message pages of that chat at random ``offset_id`` values.

Clients run in spawned worker processes, not on threads of this one: a client thread
would share the GIL with the server thread, and every figure would measure both sides
serialised. With 2 cores the server thread gets about one core and the clients share the
other (with 4 client processes, 5 busy processes share 2 cores).

a. **getHistory(limit=100).** The baseline, in this process and without a socket: a
   ``ServerStore`` loaded with the same dataset answers the same pages (``store.history``
   plus ``encode_frame(encode_result(...))``, the server's own work per request); apart,
   the whole codec round trip without a socket (the client encodes the request, the
   server decodes, validates and answers it through ``Service.handle``, the client
   decodes and validates the result). Then over loopback, with ``ServerConnection``, for
   a fixed time each: one connection with sequential round trips (latency median and
   p99, the client's decoding and validation included); one connection with 16 requests
   in flight; four connections as four tasks on one client loop (one process); four
   connections in four client processes. Last, 16 requests in flight from a raw client
   that only cuts the answers into frames (one in 32 is decoded and checked), so that
   the server rather than the client is the bottleneck.
b. **Pushed updates one client receives.** One authorized client (a worker process)
   drains ``conn.pushes`` while this thread has the server generate N traffic events
   (``service.generate``, in batches of 250); pushes/s from the first generate call to
   the last push received. Baseline: the same N events (same seed, same store contents,
   hence the very same events and pushes) generated on the baseline store with nobody
   connected, and the encoding of the pushes they made.

"x2.50 baseline" in a note: this figure's time per request (or per event) over the
baseline's. "CPU/req": CPU time of the server's thread and of the client processes over
the timed requests, divided by the requests; they move much less than the rates when
something else on the machine takes a core.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import multiprocessing
import os
import random
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final

from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from sync.connection import ConnectionLostError, ServerConnection
from sync.protocol import (
    METHODS,
    AnyUpdates,
    Auth,
    Dialogs,
    FrameDecoder,
    GetDialogs,
    GetHistory,
    MessagesSlice,
    ResultFrame,
    decode_body,
    encode_frame,
    encode_push,
    encode_request,
    encode_result,
    parse_request,
    parse_server_frame,
)
from sync.server.config import FaultConfig, ServerConfig
from sync.server.faults import FaultInjector
from sync.server.generator import DemoDataset, generate_dataset
from sync.server.server import EmbeddedServer, MockServer
from sync.server.service import Service, Session
from sync.server.store import ServerStore

__all__ = ["run"]


@dataclass(frozen=True)
class _Config:
    #: Seconds each loopback request variant runs.
    duration: float
    #: Requests each connection makes before the clock starts.
    warmup: int
    #: Pages the in-process baseline answers (and the codec round trip, apart).
    baseline_requests: int
    #: Traffic events generated for the push figures.
    events: int


_FULL: Final = _Config(duration=3.0, warmup=50, baseline_requests=2_000, events=20_000)
_QUICK: Final = _Config(duration=0.8, warmup=20, baseline_requests=400, events=3_000)

_TOKEN: Final = "bench-token"
_SEED: Final = 1
_PEERS: Final = 200
_MESSAGES: Final = 40_000
_DAYS: Final = 60
_NOW: Final = 1_800_000_000
_PAGE: Final = 100
_PAGES: Final = 1_024
_PIPELINE: Final = 16
_CONNECTIONS: Final = 4
_WORKERS: Final = 4
_EVENT_BATCH: Final = 250
_TIMEOUT: Final = 60.0
_HOST: Final = "127.0.0.1"
_READ_CHUNK: Final = 64 * 1024
#: The raw client decodes and checks one answer in this many.
_RAW_CHECK_EVERY: Final = 32


def _clock() -> int:
    return _NOW


# -- jobs for the client processes ----------------------------------------------------


@dataclass(frozen=True)
class _RequestJob:
    """``connections`` connections, each with ``in_flight`` request streams, for ``duration``."""

    port: int
    peer: int
    offsets: tuple[int, ...]
    connections: int
    in_flight: int
    duration: float
    warmup: int
    #: Where this job's first stream starts in ``offsets`` (streams are spread evenly).
    first_stream: int
    total_streams: int


@dataclass(frozen=True)
class _RawJob:
    """One connection with ``in_flight`` requests outstanding, answers left undecoded."""

    port: int
    peer: int
    offsets: tuple[int, ...]
    in_flight: int
    duration: float
    warmup: int


@dataclass(frozen=True)
class _RequestResult:
    requests: int
    seconds: float
    #: Round trip of every timed request, in ms.
    latencies: tuple[float, ...]
    #: CPU seconds the client process spent over the timed requests.
    cpu: float


@dataclass(frozen=True)
class _PushJob:
    port: int


@dataclass(frozen=True)
class _PushResult:
    received: int
    #: From the "go" message (sent just before the first generate call) to the last push.
    seconds: float
    short_messages: int
    #: CPU seconds the client process spent from "go" to the last push.
    cpu: float


_Job = _RequestJob | _RawJob | _PushJob
_Result = _RequestResult | _PushResult


def _page(peer: int, offset_id: int) -> GetHistory:
    return GetHistory(peer, offset_id=offset_id, limit=_PAGE)


def _check_page(result: Any, offset_id: int) -> None:
    if not isinstance(result, MessagesSlice) or len(result.messages) != _PAGE:
        raise AssertionError(f"getHistory at offset {offset_id}: not a full page")
    if result.messages[0].id >= offset_id:
        raise AssertionError(f"getHistory at offset {offset_id}: page starts at the offset")


async def _wait_for_go(pipe: Connection) -> None:
    message = await asyncio.to_thread(pipe.recv)
    if message != "go":
        raise RuntimeError(f"expected 'go', received {message!r}")


async def _connect(port: int) -> ServerConnection:
    conn = await ServerConnection.open(_HOST, port)
    try:
        await conn.call(Auth(_TOKEN))
    except BaseException:
        await conn.close()
        raise
    return conn


async def _request_job(job: _RequestJob, pipe: Connection) -> _RequestResult:
    clock = time.perf_counter
    offsets = job.offsets
    connections: list[ServerConnection] = []
    try:
        for _ in range(job.connections):
            connections.append(await _connect(job.port))
        for number, conn in enumerate(connections):
            for i in range(job.warmup):
                offset_id = offsets[(number * 97 + i) % len(offsets)]
                _check_page(await conn.call(_page(job.peer, offset_id)), offset_id)
        gc.collect()
        pipe.send(("ready", None))
        await _wait_for_go(pipe)

        latencies: list[float] = []
        cpu = time.process_time()
        start = clock()
        deadline = start + job.duration

        async def stream(conn: ServerConnection, index: int) -> None:
            # Streams walk the pages from evenly spread starting points.
            position = index * len(offsets) // job.total_streams
            while clock() < deadline:
                offset_id = offsets[position % len(offsets)]
                position += 1
                sent = clock()
                result = await conn.call(_page(job.peer, offset_id))
                latencies.append((clock() - sent) * 1e3)
                _check_page(result, offset_id)

        streams = [
            stream(conn, job.first_stream + c * job.in_flight + k)
            for c, conn in enumerate(connections)
            for k in range(job.in_flight)
        ]
        await asyncio.gather(*streams)
        elapsed = clock() - start
        cpu = time.process_time() - cpu
        return _RequestResult(len(latencies), elapsed, tuple(latencies), cpu)
    finally:
        for conn in connections:
            await conn.close()


class _RawClient:
    """Request frames out, answer frames back: a client that costs next to nothing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._decoder = FrameDecoder()

    @classmethod
    async def open(cls, port: int) -> _RawClient:
        reader, writer = await asyncio.open_connection(_HOST, port)
        client = cls(reader, writer)
        try:
            client.send(1, Auth(_TOKEN))
            (body,) = await client.frames()
            if not isinstance(parse_server_frame(decode_body(body)), ResultFrame):
                raise AssertionError("auth refused")
        except BaseException:
            await client.close()
            raise
        return client

    def send(self, request_id: int, params: GetHistory | Auth) -> None:
        self._writer.write(encode_frame(encode_request(request_id, params)))

    async def frames(self) -> list[bytes]:
        """The next complete frames (at least one); ``ConnectionLostError`` at the end."""
        while True:
            data = await self._reader.read(_READ_CHUNK)
            if not data:
                raise ConnectionLostError("the server closed the connection")
            bodies = self._decoder.feed(data)
            if bodies:
                return bodies

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


async def _raw_job(job: _RawJob, pipe: Connection) -> _RequestResult:
    clock = time.perf_counter
    offsets = job.offsets
    decode_result = METHODS["getHistory"].decode_result
    client = await _RawClient.open(job.port)
    pending: collections.deque[tuple[int, int, float]] = collections.deque()
    latencies: list[float] = []
    sent = 0

    def send_next() -> None:
        nonlocal sent
        offset_id = offsets[sent % len(offsets)]
        request_id = sent + 2  # 1 was auth
        sent += 1
        pending.append((request_id, offset_id, clock()))
        client.send(request_id, _page(job.peer, offset_id))

    async def pump(stop: Callable[[], bool]) -> None:
        """Keep ``in_flight`` requests outstanding until ``stop()``, then drain."""
        for _ in range(job.in_flight):
            send_next()
        while pending:
            for body in await client.frames():
                request_id, offset_id, started = pending.popleft()
                latencies.append((clock() - started) * 1e3)
                if request_id % _RAW_CHECK_EVERY == 0:
                    frame = parse_server_frame(decode_body(body))
                    if not isinstance(frame, ResultFrame) or frame.id != request_id:
                        raise AssertionError(f"request {request_id}: answered {frame}")
                    _check_page(decode_result(frame.result), offset_id)
                if not stop():
                    send_next()

    try:
        await pump(lambda: sent >= job.warmup)
        latencies.clear()
        gc.collect()
        pipe.send(("ready", None))
        await _wait_for_go(pipe)
        cpu = time.process_time()
        start = clock()
        deadline = start + job.duration
        await pump(lambda: clock() >= deadline)
        elapsed = clock() - start
        cpu = time.process_time() - cpu
        return _RequestResult(len(latencies), elapsed, tuple(latencies), cpu)
    finally:
        await client.close()


async def _push_job(job: _PushJob, pipe: Connection) -> _PushResult:
    clock = time.perf_counter
    conn = await _connect(job.port)
    try:
        pipe.send(("ready", None))
        await _wait_for_go(pipe)  # the first generate call follows at once
        cpu = time.process_time()
        start = last = clock()
        received = short = 0
        target: float = float("inf")
        done = asyncio.Event()
        cpu_used: list[float] = []

        async def drain() -> None:
            nonlocal received, short, last
            while True:
                updates = await conn.pushes.get()
                if updates is None:
                    raise ConnectionLostError(conn.closed_reason or "the connection closed")
                received += 1
                last = clock()
                if updates.TAG == "shortMessage":
                    short += 1
                if received >= target:
                    cpu_used.append(time.process_time() - cpu)
                    done.set()

        drainer = asyncio.create_task(drain())
        finished = asyncio.create_task(done.wait())
        try:
            total = await asyncio.to_thread(pipe.recv)  # the pushes the server made
            if not isinstance(total, int):
                raise RuntimeError(f"expected the number of pushes, received {total!r}")
            target = total
            if received >= target:
                cpu_used.append(time.process_time() - cpu)
                done.set()
            await asyncio.wait(
                {drainer, finished}, timeout=_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
            if drainer.done():
                drainer.result()  # raises why the drain stopped
            if not done.is_set():
                raise TimeoutError(f"{received} of {total} pushes arrived")
        finally:
            for task in (drainer, finished):
                task.cancel()
            await asyncio.gather(drainer, finished, return_exceptions=True)
        return _PushResult(received, last - start, short, cpu_used[0])
    finally:
        await conn.close()


async def _run_job(job: _Job, pipe: Connection) -> _Result:
    if isinstance(job, _RequestJob):
        return await _request_job(job, pipe)
    if isinstance(job, _RawJob):
        return await _raw_job(job, pipe)
    return await _push_job(job, pipe)


def _worker_main(pipe: Connection) -> None:
    """A client process: runs the jobs it receives until it receives ``None``."""
    try:
        while True:
            job = pipe.recv()
            if job is None:
                return
            try:
                result = asyncio.run(_run_job(job, pipe))
            except Exception:  # noqa: BLE001 - reported to the parent, which raises it
                pipe.send(("error", traceback.format_exc()))
            else:
                pipe.send(("done", result))
    except (EOFError, OSError, KeyboardInterrupt):
        return
    finally:
        pipe.close()


class _Workers:
    """Client processes, started once and given jobs over pipes."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipes: list[Connection] = []
        self._processes: list[BaseProcess] = []
        for number in range(count):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_worker_main, args=(theirs,), name=f"bench-client-{number}", daemon=True
            )
            process.start()
            theirs.close()
            self._pipes.append(ours)
            self._processes.append(process)

    def _receive(self, pipe: Connection, expected: str) -> Any:
        if not pipe.poll(_TIMEOUT):
            raise TimeoutError(f"a client process sent no {expected!r} in {_TIMEOUT:.0f} s")
        kind, value = pipe.recv()
        if kind == "error":
            raise RuntimeError(f"a client process failed:\n{value}")
        if kind != expected:
            raise RuntimeError(f"a client process sent {kind!r}, not {expected!r}")
        return value

    def dispatch(self, jobs: Sequence[_Job]) -> list[Connection]:
        """Hand out ``jobs`` (one per worker) and wait until all are connected and warm."""
        pipes = self._pipes[: len(jobs)]
        if len(pipes) < len(jobs):
            raise ValueError(f"{len(jobs)} jobs for {len(self._pipes)} client processes")
        for pipe, job in zip(pipes, jobs, strict=True):
            pipe.send(job)
        for pipe in pipes:
            self._receive(pipe, "ready")
        return pipes

    @staticmethod
    def go(pipes: Sequence[Connection]) -> None:
        for pipe in pipes:
            pipe.send("go")

    def results(self, pipes: Sequence[Connection]) -> list[Any]:
        return [self._receive(pipe, "done") for pipe in pipes]

    def close(self) -> None:
        # ``None`` ends an idle worker; closing the pipe ends one that is still in a job.
        for pipe in self._pipes:
            with contextlib.suppress(OSError):
                pipe.send(None)
            pipe.close()
        for process in self._processes:
            process.join(5)
            if process.is_alive():
                process.terminate()
                process.join(5)


# -- the workload, found over the protocol --------------------------------------------


async def _busiest_chat(port: int, rng: random.Random) -> tuple[int, int, tuple[int, ...]]:
    """The chat with the most messages, its message count, and the page offsets to ask for."""
    conn = await _connect(port)
    try:
        peers: list[int] = []
        request = GetDialogs()
        while True:
            page: Dialogs = await conn.call(request)
            peers += [d.peer for d in page.dialogs]
            if len(page.dialogs) < request.limit or len(peers) >= page.count:
                break
            last = page.dialogs[-1]
            dates = {(m.peer, m.id): m.date for m in page.messages}
            request = GetDialogs(
                dates.get((last.peer, last.top_message), 0), last.top_message, last.peer
            )
        counts: list[tuple[int, int]] = []
        for peer in peers:
            first: MessagesSlice = await conn.call(GetHistory(peer, limit=1))
            counts.append((first.count, -peer))
        count, negative_peer = max(counts)
        peer = -negative_peer
        ids: list[int] = []
        offset_id = 0
        while True:
            chunk: MessagesSlice = await conn.call(GetHistory(peer, offset_id=offset_id))
            if not chunk.messages:
                break
            ids += [m.id for m in chunk.messages]
            offset_id = chunk.messages[-1].id
        ids.sort()
        if len(ids) != count or count < 10 * _PAGE:
            raise AssertionError(f"the busiest chat {peer}: {len(ids)} ids, count {count}")
        # Offsets with at least a full page of older messages below them.
        offsets = tuple(rng.choice(ids[_PAGE:]) for _ in range(_PAGES))
        return peer, count, offsets
    finally:
        await conn.close()


# -- in-process baselines -------------------------------------------------------------


def _timed_calls(count: int, call: Callable[[int], None]) -> tuple[float, list[float]]:
    """Seconds for ``count`` calls of ``call(i)``, and each one's µs."""
    clock = time.perf_counter
    samples: list[float] = []
    gc.collect()
    start = clock()
    for i in range(count):
        before = clock()
        call(i)
        samples.append((clock() - before) * 1e6)
    return clock() - start, samples


def _baseline_history(
    store: ServerStore, peer: int, offsets: Sequence[int], count: int
) -> tuple[float, list[float]]:
    def answer(i: int) -> None:
        encode_frame(encode_result(i + 1, store.history(_page(peer, offsets[i % len(offsets)]))))

    for i in range(min(count, 50)):  # warm up the statement cache
        answer(i)
    return _timed_calls(count, answer)


def _codec_round_trip(
    service: Service, peer: int, offsets: Sequence[int], count: int
) -> tuple[float, list[float]]:
    """The whole request path of both sides but the socket and the event loops."""
    session = Session(0, FaultInjector.for_connection(FaultConfig(), _SEED, 0), authorized=True)
    server_decoder = FrameDecoder()
    client_decoder = FrameDecoder()
    decode_result = METHODS["getHistory"].decode_result

    def round_trip(i: int) -> None:
        offset_id = offsets[i % len(offsets)]
        sent = encode_frame(encode_request(i + 1, _page(peer, offset_id)))
        (body,) = server_decoder.feed(sent)
        request = parse_request(decode_body(body))
        answer = encode_frame(encode_result(request.id, service.handle(session, request)))
        (reply,) = client_decoder.feed(answer)
        frame = parse_server_frame(decode_body(reply))
        assert isinstance(frame, ResultFrame)
        _check_page(decode_result(frame.result), offset_id)

    for i in range(min(count, 50)):
        round_trip(i)
    return _timed_calls(count, round_trip)


def _baseline_generation(service: Service, events: int) -> float:
    """Seconds to generate ``events`` events with nobody connected."""
    gc.collect()
    start = time.perf_counter()
    for done in range(0, events, _EVENT_BATCH):
        service.generate(min(_EVENT_BATCH, events - done))
    return time.perf_counter() - start


def _encode_pushes(pushes: Sequence[AnyUpdates]) -> float:
    start = time.perf_counter()
    for updates in pushes:
        encode_frame(encode_push(updates))
    return time.perf_counter() - start


# -- over the network -----------------------------------------------------------------


def _server_cpu(server: EmbeddedServer) -> float:
    """CPU seconds the server's thread has used so far."""

    def cpu(_mock: MockServer) -> float:
        return time.thread_time()

    return server.call(cpu, timeout=_TIMEOUT)


def _generate_on(server: EmbeddedServer, count: int) -> int:
    def generate(mock: MockServer) -> int:
        return mock.service.generate(count)

    return server.call(generate, timeout=_TIMEOUT)


@dataclass(frozen=True)
class _Run:
    """Request jobs that ran side by side, and the server thread's CPU seconds meanwhile."""

    results: tuple[_RequestResult, ...]
    server_cpu: float

    @property
    def requests(self) -> int:
        return sum(r.requests for r in self.results)

    @property
    def rate(self) -> float:
        """Requests/s: the sum of each client process's own rate."""
        return sum(r.requests / r.seconds for r in self.results)

    @property
    def server_us(self) -> float:
        return self.server_cpu / self.requests * 1e6

    @property
    def client_us(self) -> float:
        return sum(r.cpu for r in self.results) / self.requests * 1e6


def _run_requests(
    server: EmbeddedServer, workers: _Workers, jobs: Sequence[_RequestJob | _RawJob]
) -> _Run:
    pipes = workers.dispatch(jobs)
    cpu = _server_cpu(server)
    workers.go(pipes)
    results: list[_RequestResult] = workers.results(pipes)
    return _Run(tuple(results), _server_cpu(server) - cpu)


@dataclass(frozen=True)
class _PushRun:
    result: _PushResult
    #: Pushes the server made, and the seconds its generate calls took.
    made: int
    generating: float
    server_cpu: float


def _pushes(server: EmbeddedServer, workers: _Workers, events: int) -> _PushRun:
    """One client drains pushes while the server generates ``events`` events."""
    (pipe,) = workers.dispatch([_PushJob(server.port)])
    cpu = _server_cpu(server)
    workers.go([pipe])
    start = time.perf_counter()
    made = 0
    for done in range(0, events, _EVENT_BATCH):
        made += _generate_on(server, min(_EVENT_BATCH, events - done))
    generating = time.perf_counter() - start
    pipe.send(made)
    (result,) = workers.results([pipe])
    assert isinstance(result, _PushResult)
    return _PushRun(result, made, generating, _server_cpu(server) - cpu)


# -- the benchmark --------------------------------------------------------------------


@benchmark("server")
def run(ctx: BenchContext) -> list[Figure]:
    config = _QUICK if ctx.quick else _FULL
    workers = _Workers(_WORKERS)  # they start up while the dataset is generated
    try:
        return _run(config, workers)
    finally:
        workers.close()


def _run(config: _Config, workers: _Workers) -> list[Figure]:
    dataset: DemoDataset = generate_dataset(_SEED, _PEERS, _MESSAGES, _DAYS)
    server_config = ServerConfig(
        token=_TOKEN, seed=_SEED, peers=_PEERS, messages=_MESSAGES, days=_DAYS, clock=_clock
    )
    store = ServerStore(":memory:", clock=_clock, log_window=server_config.log_window)
    figures: list[Figure] = []
    try:
        store.import_dataset(dataset)
        pushed: list[AnyUpdates] = []
        service = Service(
            store, token=_TOKEN, seed=_SEED, publish=lambda pushes, _: pushed.extend(pushes)
        )
        with EmbeddedServer(server_config, dataset) as server:
            peer, count, offsets = asyncio.run(_busiest_chat(server.port, random.Random(_SEED)))
            figures.append(
                Figure(
                    "workload",
                    count,
                    "messages",
                    f"busiest chat {peer}; {len(set(offsets)):,} distinct {_PAGE}-message pages",
                )
            )
            figures += _request_figures(config, server, workers, store, service, peer, offsets)
            figures += _push_figures(config, server, workers, service, pushed)
    finally:
        store.close()
    figures.append(
        Figure(
            "load average, 1 min",
            os.getloadavg()[0],
            "",
            f"{os.cpu_count()} CPUs; server thread in this process, clients in spawned processes",
        )
    )
    return figures


def _request_figures(
    config: _Config,
    server: EmbeddedServer,
    workers: _Workers,
    store: ServerStore,
    service: Service,
    peer: int,
    offsets: tuple[int, ...],
) -> list[Figure]:
    count = config.baseline_requests
    seconds, samples = _baseline_history(store, peer, offsets, count)
    baseline = count / seconds
    baseline_us = seconds / count * 1e6
    figures = [
        Figure(
            "(a) baseline: store.history + encode",
            baseline,
            "req/s",
            f"in-process, no socket; {count:,} pages; median {percentile(samples, 50):,.0f} µs",
        )
    ]
    seconds, samples = _codec_round_trip(service, peer, offsets, count)
    codec = count / seconds
    figures.append(
        Figure(
            "(a) codec round trip, no socket",
            codec,
            "req/s",
            f"x{baseline / codec:.2f} baseline; + request codec, validation, result decoding;"
            f" median {percentile(samples, 50):,.0f} µs",
        )
    )

    def job(connections: int, in_flight: int, first: int, total: int) -> _RequestJob:
        return _RequestJob(
            server.port,
            peer,
            offsets,
            connections,
            in_flight,
            config.duration,
            config.warmup,
            first,
            total,
        )

    def rate(name: str, run: _Run) -> Figure:
        return Figure(
            name,
            run.rate,
            "req/s",
            f"x{baseline / run.rate:.2f} baseline; CPU/req: server {run.server_us:,.0f} µs,"
            f" clients {run.client_us:,.0f} µs",
        )

    sequential = _run_requests(server, workers, [job(1, 1, 0, 1)])
    latencies = sequential.results[0].latencies
    figures += [
        rate("(a) 1 connection, sequential", sequential),
        Figure(
            "(a) 1 connection, latency median",
            percentile(latencies, 50),
            "ms",
            f"{sequential.requests:,} round trips, client decoding included",
        ),
        Figure("(a) 1 connection, latency p99", percentile(latencies, 99), "ms"),
        Figure(
            "(a) server CPU per request",
            sequential.server_us,
            "µs",
            f"x{sequential.server_us / baseline_us:.2f} baseline mean ({baseline_us:,.0f} µs);"
            " sequential",
        ),
    ]
    pipelined = _run_requests(server, workers, [job(1, _PIPELINE, 0, _PIPELINE)])
    figures.append(rate(f"(a) 1 connection, {_PIPELINE} in flight", pipelined))
    one_loop = _run_requests(server, workers, [job(_CONNECTIONS, 1, 0, _CONNECTIONS)])
    figures.append(rate(f"(a) {_CONNECTIONS} connections, 1 client process", one_loop))
    processes = _run_requests(
        server, workers, [job(1, 1, n, _CONNECTIONS) for n in range(_CONNECTIONS)]
    )
    figures.append(
        rate(f"(a) {_CONNECTIONS} connections, {_CONNECTIONS} client processes", processes)
    )
    raw_job = _RawJob(server.port, peer, offsets, _PIPELINE, config.duration, config.warmup)
    raw = _run_requests(server, workers, [raw_job])
    figures.append(rate(f"(a) 1 connection, {_PIPELINE} in flight, raw client", raw))
    return figures


def _push_figures(
    config: _Config,
    server: EmbeddedServer,
    workers: _Workers,
    service: Service,
    pushed: list[AnyUpdates],
) -> list[Figure]:
    events = config.events
    generating = _baseline_generation(service, events)
    encoding = _encode_pushes(pushed)
    run = _pushes(server, workers, events)
    result, made = run.result, run.made
    if made != len(pushed) or result.received != made:
        raise AssertionError(
            f"{events:,} events: baseline {len(pushed):,} pushes, server {made:,},"
            f" received {result.received:,}"
        )
    baseline = events / generating
    delivered = events / result.seconds
    server_us = run.server_cpu / events * 1e6
    baseline_us = generating / events * 1e6
    return [
        Figure(
            "(b) baseline: generate events",
            baseline,
            "events/s",
            f"in-process, nobody connected; {events:,} events -> {made:,} pushes",
        ),
        Figure(
            "(b) baseline: encode their pushes",
            made / encoding,
            "pushes/s",
            "encode_frame(encode_push(...)) alone",
        ),
        Figure(
            "(b) pushes received by 1 client",
            result.received / result.seconds,
            "pushes/s",
            f"{made:,} pushes ({result.short_messages:,} shortMessage) in {result.seconds:.2f} s,"
            " first generate call to last push",
        ),
        Figure(
            "(b) events delivered to 1 client",
            delivered,
            "events/s",
            f"x{baseline / delivered:.2f} baseline; server's generate calls alone:"
            f" {events / run.generating:,.0f} events/s",
        ),
        Figure(
            "(b) server CPU per event, 1 client",
            server_us,
            "µs",
            f"x{server_us / baseline_us:.2f} baseline ({baseline_us:,.0f} µs);"
            f" client CPU {result.cpu / made * 1e6:,.0f} µs/push",
        ),
    ]
