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

c. and d. (``_server_sharing.py``): a well-behaved client's ``getState`` latency while four
   client processes each pipeline 5,000 ``getHistory(limit=100)``; the server's memory, in
   a process of its own, with hundreds of idle connections and with unauthorized ones
   that declared 4 MiB frames.

"x2.50 baseline" in a note: this figure's time per request (or per event) over the
baseline's. "CPU/req": CPU time of the server's thread and of the client processes over
the timed requests, divided by the requests; they move much less than the rates when
something else on the machine takes a core.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from benchmarks._server_clients import (
    PAGE,
    TIMEOUT,
    TOKEN,
    PushJob,
    PushResult,
    RawJob,
    RequestJob,
    RequestResult,
    Workers,
    check_page,
    connect,
    page,
)
from benchmarks._server_sharing import GREEDY_CLIENTS, fairness_figures, memory_figures
from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from dataset import DemoDataset, generate_dataset
from sync.protocol import (
    METHODS,
    AnyUpdates,
    Dialogs,
    FrameDecoder,
    GetDialogs,
    GetHistory,
    MessagesSlice,
    ResultFrame,
    decode_body,
    decode_server_frame,
    encode_frame,
    encode_push,
    encode_request,
    encode_result,
    parse_request,
)
from sync.server.config import FaultConfig, ServerConfig
from sync.server.faults import FaultInjector
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
    #: Requests each greedy client sends at once in c.
    greedy_requests: int
    #: Whether d. waits for the server's auth timeout to count the connections again.
    wait_for_auth_timeout: bool


_FULL: Final = _Config(
    duration=3.0,
    warmup=50,
    baseline_requests=2_000,
    events=20_000,
    greedy_requests=5_000,
    wait_for_auth_timeout=True,
)
_QUICK: Final = _Config(
    duration=0.8,
    warmup=20,
    baseline_requests=400,
    events=3_000,
    greedy_requests=1_000,
    wait_for_auth_timeout=False,
)

_SEED: Final = 1
_PEERS: Final = 200
_MESSAGES: Final = 40_000
_DAYS: Final = 60
_NOW: Final = 1_800_000_000
_PAGES: Final = 1_024
_PIPELINE: Final = 16
_CONNECTIONS: Final = 4
_WORKERS: Final = 4
_EVENT_BATCH: Final = 250


def _clock() -> int:
    return _NOW


# -- the workload, found over the protocol --------------------------------------------


async def _busiest_chat(port: int, rng: random.Random) -> tuple[int, int, tuple[int, ...]]:
    """The chat with the most messages, its message count, and the page offsets to ask for."""
    conn = await connect(port)
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
        if len(ids) != count or count < 10 * PAGE:
            raise AssertionError(f"the busiest chat {peer}: {len(ids)} ids, count {count}")
        # Offsets with at least a full page of older messages below them.
        offsets = tuple(rng.choice(ids[PAGE:]) for _ in range(_PAGES))
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
        encode_frame(encode_result(i + 1, store.history(page(peer, offsets[i % len(offsets)]))))

    for i in range(min(count, 50)):  # warm up the statement cache
        answer(i)
    return _timed_calls(count, answer)


def _codec_round_trip(
    service: Service, peer: int, offsets: Sequence[int], count: int
) -> tuple[float, list[float]]:
    """The whole request path of both sides but the socket and the event loops."""
    session = Session(
        0,
        FaultInjector.for_connection(FaultConfig(), _SEED, 0),
        authorized=True,
        account=service.store.self_id,
    )
    server_decoder = FrameDecoder()
    client_decoder = FrameDecoder()
    decode_result = METHODS["getHistory"].decode_result

    def round_trip(i: int) -> None:
        offset_id = offsets[i % len(offsets)]
        sent = encode_frame(encode_request(i + 1, page(peer, offset_id)))
        (body,) = server_decoder.feed(sent)
        request = parse_request(decode_body(body))
        answer = encode_frame(encode_result(request.id, service.handle(session, request)))
        (reply,) = client_decoder.feed(answer)
        frame = decode_server_frame(reply)
        assert isinstance(frame, ResultFrame)
        check_page(decode_result(frame.result), offset_id)

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

    return server.call(cpu, timeout=TIMEOUT)


def _generate_on(server: EmbeddedServer, count: int) -> int:
    def generate(mock: MockServer) -> int:
        return mock.service.generate(count)

    return server.call(generate, timeout=TIMEOUT)


@dataclass(frozen=True)
class _Run:
    """Request jobs that ran side by side, and the server thread's CPU seconds meanwhile."""

    results: tuple[RequestResult, ...]
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
    server: EmbeddedServer, workers: Workers, jobs: Sequence[RequestJob | RawJob]
) -> _Run:
    pipes = workers.dispatch(jobs)
    cpu = _server_cpu(server)
    workers.go(pipes)
    results: list[RequestResult] = workers.results(pipes)
    return _Run(tuple(results), _server_cpu(server) - cpu)


@dataclass(frozen=True)
class _PushRun:
    result: PushResult
    #: Pushes the server made, and the seconds its generate calls took.
    made: int
    generating: float
    server_cpu: float


def _pushes(server: EmbeddedServer, workers: Workers, events: int) -> _PushRun:
    """One client drains pushes while the server generates ``events`` events."""
    (pipe,) = workers.dispatch([PushJob(server.port)])
    cpu = _server_cpu(server)
    workers.go([pipe])
    start = time.perf_counter()
    made = 0
    for done in range(0, events, _EVENT_BATCH):
        made += _generate_on(server, min(_EVENT_BATCH, events - done))
    generating = time.perf_counter() - start
    pipe.send(made)
    (result,) = workers.results([pipe])
    assert isinstance(result, PushResult)
    return _PushRun(result, made, generating, _server_cpu(server) - cpu)


# -- the benchmark --------------------------------------------------------------------


@benchmark("server")
def run(ctx: BenchContext) -> list[Figure]:
    config = _QUICK if ctx.quick else _FULL
    # They start up while the dataset is generated.
    workers = Workers(max(_WORKERS, GREEDY_CLIENTS + 1))
    try:
        return _run(config, workers)
    finally:
        workers.close()


def _run(config: _Config, workers: Workers) -> list[Figure]:
    dataset: DemoDataset = generate_dataset(_SEED, _PEERS, _MESSAGES, _DAYS)
    server_config = ServerConfig(
        token=TOKEN, seed=_SEED, peers=_PEERS, messages=_MESSAGES, days=_DAYS, clock=_clock
    )
    store = ServerStore(":memory:", clock=_clock, log_window=server_config.log_window)
    figures: list[Figure] = []
    try:
        store.import_dataset(dataset)
        pushed: list[AnyUpdates] = []
        service = Service(
            store,
            token=TOKEN,
            seed=_SEED,
            publish=lambda _account, pushes, _: pushed.extend(pushes),
        )
        with EmbeddedServer(server_config, dataset) as server:
            peer, count, offsets = asyncio.run(_busiest_chat(server.port, random.Random(_SEED)))
            figures.append(
                Figure(
                    "workload",
                    count,
                    "messages",
                    f"busiest chat {peer}; {len(set(offsets)):,} distinct {PAGE}-message pages",
                )
            )
            figures += _request_figures(config, server, workers, store, service, peer, offsets)
            figures += _push_figures(config, server, workers, service, pushed)
            figures += fairness_figures(server, workers, peer, offsets, config.greedy_requests)
    finally:
        store.close()
    figures += memory_figures(server_config, wait_for_auth_timeout=config.wait_for_auth_timeout)
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
    workers: Workers,
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

    def job(connections: int, in_flight: int, first: int, total: int) -> RequestJob:
        return RequestJob(
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
    raw_job = RawJob(server.port, peer, offsets, _PIPELINE, config.duration, config.warmup)
    raw = _run_requests(server, workers, [raw_job])
    figures.append(rate(f"(a) 1 connection, {_PIPELINE} in flight, raw client", raw))
    return figures


def _push_figures(
    config: _Config,
    server: EmbeddedServer,
    workers: Workers,
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
