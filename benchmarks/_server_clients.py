"""Client processes for the server benchmark: jobs sent over pipes, results sent back.

Each worker is a spawned process with its own event loop and connections, so clients
do not share the server's GIL. ``Workers`` starts them, hands out jobs and collects
results; ``RawClient`` is a client that only frames and spot-checks answers. For
sharing the server: ``GreedyJob`` sends thousands of requests at once and reads the
answers, ``StateJob`` asks ``getState`` one at a time meanwhile.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import multiprocessing
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final

from sync.connection import ConnectionLostError, ServerConnection
from sync.protocol import (
    METHODS,
    Auth,
    FrameDecoder,
    GetHistory,
    GetState,
    MessagesSlice,
    ResultFrame,
    ShortMessage,
    decode_server_frame,
    encode_frame,
    encode_request,
)

__all__ = [
    "GreedyJob",
    "GreedyResult",
    "PushJob",
    "PushResult",
    "RawJob",
    "RequestJob",
    "RequestResult",
    "StateJob",
    "StateResult",
    "Workers",
    "check_page",
    "page",
]

TOKEN: Final = "bench-token"
PAGE: Final = 100
TIMEOUT: Final = 60.0
HOST: Final = "127.0.0.1"
READ_CHUNK: Final = 64 * 1024
#: The raw client decodes and checks one answer in this many.
RAW_CHECK_EVERY: Final = 32


# -- jobs for the client processes ----------------------------------------------------


@dataclass(frozen=True)
class RequestJob:
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
class RawJob:
    """One connection with ``in_flight`` requests outstanding, answers left undecoded."""

    port: int
    peer: int
    offsets: tuple[int, ...]
    in_flight: int
    duration: float
    warmup: int


@dataclass(frozen=True)
class RequestResult:
    requests: int
    seconds: float
    #: Round trip of every timed request, in ms.
    latencies: tuple[float, ...]
    #: CPU seconds the client process spent over the timed requests.
    cpu: float


@dataclass(frozen=True)
class PushJob:
    port: int


@dataclass(frozen=True)
class PushResult:
    received: int
    #: From the "go" message (sent just before the first generate call) to the last push.
    seconds: float
    short_messages: int
    #: CPU seconds the client process spent from "go" to the last push.
    cpu: float


@dataclass(frozen=True)
class GreedyJob:
    """One connection that sends ``requests`` getHistory pages at once, then reads them all."""

    port: int
    peer: int
    offsets: tuple[int, ...]
    requests: int


@dataclass(frozen=True)
class GreedyResult:
    answered: int
    #: From "go" to the last answer (or to the end of the connection).
    seconds: float
    #: Why the connection ended before every answer came, or ``None``.
    lost: str | None


@dataclass(frozen=True)
class StateJob:
    """One connection asking ``getState``, one call at a time, until "stop" arrives."""

    port: int


@dataclass(frozen=True)
class StateResult:
    #: Round trip of every call, in ms.
    latencies: tuple[float, ...]
    #: Why the connection ended before "stop", or ``None``.
    lost: str | None


_Job = RequestJob | RawJob | PushJob | GreedyJob | StateJob
_Result = RequestResult | PushResult | GreedyResult | StateResult


def page(peer: int, offset_id: int) -> GetHistory:
    return GetHistory(peer, offset_id=offset_id, limit=PAGE)


def check_page(result: Any, offset_id: int) -> None:
    if not isinstance(result, MessagesSlice) or len(result.messages) != PAGE:
        raise AssertionError(f"getHistory at offset {offset_id}: not a full page")
    if result.messages[0].id >= offset_id:
        raise AssertionError(f"getHistory at offset {offset_id}: page starts at the offset")


async def _wait_for_go(pipe: Connection) -> None:
    message = await asyncio.to_thread(pipe.recv)
    if message != "go":
        raise RuntimeError(f"expected 'go', received {message!r}")


async def connect(port: int) -> ServerConnection:
    conn = await ServerConnection.open(HOST, port)
    try:
        await conn.call(Auth(TOKEN))
    except BaseException:
        await conn.close()
        raise
    return conn


async def _request_job(job: RequestJob, pipe: Connection) -> RequestResult:
    clock = time.perf_counter
    offsets = job.offsets
    connections: list[ServerConnection] = []
    try:
        for _ in range(job.connections):
            connections.append(await connect(job.port))
        for number, conn in enumerate(connections):
            for i in range(job.warmup):
                offset_id = offsets[(number * 97 + i) % len(offsets)]
                check_page(await conn.call(page(job.peer, offset_id)), offset_id)
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
                result = await conn.call(page(job.peer, offset_id))
                latencies.append((clock() - sent) * 1e3)
                check_page(result, offset_id)

        streams = [
            stream(conn, job.first_stream + c * job.in_flight + k)
            for c, conn in enumerate(connections)
            for k in range(job.in_flight)
        ]
        await asyncio.gather(*streams)
        elapsed = clock() - start
        cpu = time.process_time() - cpu
        return RequestResult(len(latencies), elapsed, tuple(latencies), cpu)
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
        reader, writer = await asyncio.open_connection(HOST, port)
        client = cls(reader, writer)
        try:
            client.send(1, Auth(TOKEN))
            (body,) = await client.frames()
            if not isinstance(decode_server_frame(body), ResultFrame):
                raise AssertionError("auth refused")
        except BaseException:
            await client.close()
            raise
        return client

    def send(self, request_id: int, params: GetHistory | Auth) -> None:
        self._writer.write(encode_frame(encode_request(request_id, params)))

    def send_all(self, requests: Sequence[tuple[int, GetHistory]]) -> None:
        """Every request in one write: the transport sends them as fast as the server reads."""
        self._writer.write(
            b"".join(encode_frame(encode_request(number, params)) for number, params in requests)
        )

    async def frames(self) -> list[bytes]:
        """The next complete frames (at least one); ``ConnectionLostError`` at the end."""
        while True:
            data = await self._reader.read(READ_CHUNK)
            if not data:
                raise ConnectionLostError("the server closed the connection")
            bodies = self._decoder.feed(data)
            if bodies:
                return bodies

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


async def _raw_job(job: RawJob, pipe: Connection) -> RequestResult:
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
        client.send(request_id, page(job.peer, offset_id))

    async def pump(stop: Callable[[], bool]) -> None:
        """Keep ``in_flight`` requests outstanding until ``stop()``, then drain."""
        for _ in range(job.in_flight):
            send_next()
        while pending:
            for body in await client.frames():
                request_id, offset_id, started = pending.popleft()
                latencies.append((clock() - started) * 1e3)
                if request_id % RAW_CHECK_EVERY == 0:
                    frame = decode_server_frame(body)
                    if not isinstance(frame, ResultFrame) or frame.id != request_id:
                        raise AssertionError(f"request {request_id}: answered {frame}")
                    check_page(decode_result(frame.result), offset_id)
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
        return RequestResult(len(latencies), elapsed, tuple(latencies), cpu)
    finally:
        await client.close()


async def _push_job(job: PushJob, pipe: Connection) -> PushResult:
    clock = time.perf_counter
    conn = await connect(job.port)
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
                if isinstance(updates, ShortMessage):
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
                {drainer, finished}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
            if drainer.done():
                drainer.result()  # raises why the drain stopped
            if not done.is_set():
                raise TimeoutError(f"{received} of {total} pushes arrived")
        finally:
            for task in (drainer, finished):
                task.cancel()
            await asyncio.gather(drainer, finished, return_exceptions=True)
        return PushResult(received, last - start, short, cpu_used[0])
    finally:
        await conn.close()


async def _greedy_job(job: GreedyJob, pipe: Connection) -> GreedyResult:
    clock = time.perf_counter
    decode_result = METHODS["getHistory"].decode_result
    client = await _RawClient.open(job.port)
    offsets = job.offsets
    # Request 1 was auth.
    requests = [(n + 2, page(job.peer, offsets[n % len(offsets)])) for n in range(job.requests)]
    answered = 0
    lost: str | None = None
    try:
        pipe.send(("ready", None))
        await _wait_for_go(pipe)
        start = clock()
        client.send_all(requests)
        try:
            while answered < job.requests:
                for body in await client.frames():
                    request_id, params = requests[answered]
                    answered += 1
                    if request_id % RAW_CHECK_EVERY == 0:
                        frame = decode_server_frame(body)
                        if not isinstance(frame, ResultFrame) or frame.id != request_id:
                            raise AssertionError(f"request {request_id}: answered {frame}")
                        check_page(decode_result(frame.result), params.offset_id)
        except (ConnectionError, OSError) as error:
            lost = str(error) or type(error).__name__
        return GreedyResult(answered, clock() - start, lost)
    finally:
        await client.close()


async def _state_job(job: StateJob, pipe: Connection) -> StateResult:
    clock = time.perf_counter
    conn = await connect(job.port)
    latencies: list[float] = []
    try:
        pipe.send(("ready", None))
        await _wait_for_go(pipe)
        stop = asyncio.create_task(asyncio.to_thread(pipe.recv))
        try:
            while not stop.done():
                sent = clock()
                await conn.call(GetState())
                latencies.append((clock() - sent) * 1e3)
        except ConnectionLostError as error:
            await stop
            return StateResult(tuple(latencies), str(error))
        if (message := stop.result()) != "stop":
            raise RuntimeError(f"expected 'stop', received {message!r}")
        return StateResult(tuple(latencies), None)
    finally:
        await conn.close()


async def _run_job(job: _Job, pipe: Connection) -> _Result:
    if isinstance(job, RequestJob):
        return await _request_job(job, pipe)
    if isinstance(job, RawJob):
        return await _raw_job(job, pipe)
    if isinstance(job, GreedyJob):
        return await _greedy_job(job, pipe)
    if isinstance(job, StateJob):
        return await _state_job(job, pipe)
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


class Workers:
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
        if not pipe.poll(TIMEOUT):
            raise TimeoutError(f"a client process sent no {expected!r} in {TIMEOUT:.0f} s")
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
