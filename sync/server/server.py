"""The mock server on asyncio TCP: connections, auth, pushes with faults, traffic.

``MockServer`` runs on the caller's event loop; ``EmbeddedServer`` gives it a thread
and a loop of its own, for demo mode and tests. Each connection reads frames, answers
requests in order and receives pushes through its own ``FaultInjector``. A connection
that stops reading is cut off once ``max_write_buffer`` bytes wait for it, so a stalled
or flooding client cannot grow the server's memory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TypeVar

from dataset import DemoDataset, generate_dataset, iter_message_rows, read_dataset
from sync.notifier import ChangeNotifier
from sync.protocol import (
    AnyUpdates,
    ErrorCode,
    FrameDecoder,
    FramingError,
    MalformedFrameError,
    ProtocolError,
    decode_body,
    encode_error,
    encode_frame,
    encode_push,
    encode_result,
    parse_request,
    request_id_of,
)
from sync.server.account_files import AccountBoxFiles
from sync.server.config import FaultConfig, ServerConfig, is_loopback
from sync.server.faults import FaultInjector
from sync.server.service import Service, Session
from sync.server.store import ServerStore

__all__ = ["EmbeddedServer", "MockServer", "import_into"]

log = logging.getLogger("postbox.server")

#: How long reordered pushes may wait for the window to fill before they go out anyway.
REORDER_FLUSH_SECONDS = 0.05
#: Malformed frames in a row after which a connection is taken for a non-protocol peer.
MAX_MALFORMED_IN_A_ROW = 16
_READ_CHUNK = 64 * 1024
#: Frames queued for one connection are written together, at the latest at this size.
_WRITE_CHUNK = 32 * 1024
#: The largest kernel send buffer a connection is given.
_MAX_SEND_BUFFER = 1024 * 1024

T = TypeVar("T")


def import_into(store: ServerStore, config: ServerConfig) -> None:
    """Fill an empty store with the dataset ``config`` names: a directory's (streamed) or
    one generated from the seed."""
    if config.dataset is not None:
        small = read_dataset(config.dataset, with_messages=False)
        store.import_dataset(small, rows=iter_message_rows(config.dataset))
    else:
        store.import_dataset(
            generate_dataset(config.seed, config.peers, config.messages, config.days)
        )


def _bound_send_buffer(writer: asyncio.StreamWriter, limit: int) -> None:
    """Keep the kernel's send buffer within the write buffer limit.

    Otherwise the kernel grows it to megabytes, and a client that stopped reading is
    noticed (``max_write_buffer`` bytes waiting in the transport) only once those
    megabytes are full as well.
    """
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, min(limit, _MAX_SEND_BUFFER))


class _Connection:
    def __init__(
        self,
        server: MockServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        session: Session,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.session = session
        self.closed = False
        self._flush_timer: asyncio.TimerHandle | None = None
        self._outbox: list[bytes] = []
        self._queued = 0
        self._flush_scheduled = False

    def _write(self, payload: dict[str, Any]) -> None:
        """Queue a frame; the frames queued in one pass of the loop go out in one write."""
        if self.closed:
            return
        self._outbox.append(encode_frame(payload))
        self._queued += len(self._outbox[-1])
        if self._queued >= _WRITE_CHUNK:
            self._flush()  # hands the bytes to the socket now and checks for a stall
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self.closed or not self._outbox:
            return
        if self.writer.transport.is_closing():  # the peer is gone; nothing can be sent
            self._outbox.clear()
            self.close("the client went away")
            return
        self.writer.write(b"".join(self._outbox))
        self._outbox.clear()
        self._queued = 0
        waiting = self.writer.transport.get_write_buffer_size()
        if waiting > self.server.config.max_write_buffer:
            self.close(f"stalled: {waiting} bytes left unread", stalled=True)

    def close(self, reason: str, *, stalled: bool = False) -> None:
        if self.closed:
            return
        if not stalled:
            self._flush()
            if self.closed:  # the flush found the client stalled and closed it
                return
        self.closed = True
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        log.info(
            "connection %s (%s) closed: %s", self.session.number, self.session.peer_name, reason
        )
        self.server.changes.notify()
        if stalled:
            self.writer.transport.abort()  # its unread backlog is dropped, not flushed
        else:
            self.writer.close()
        self.server.connection_closed(self)

    # -- pushes ----------------------------------------------------------------------

    def push(self, updates: AnyUpdates) -> None:
        if self.closed:
            return
        faults = self.session.faults
        for delivery in faults.plan(updates):
            if delivery.delay:
                asyncio.get_running_loop().call_later(
                    delivery.delay, self._send_push, delivery.updates
                )
            else:
                self._send_push(delivery.updates)
        if faults.held and self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(
                REORDER_FLUSH_SECONDS, self._flush_held
            )

    def clear_faults(self) -> None:
        """Deliver what faults held back, and inject none from now on."""
        held = self.session.faults.release_held()
        self.session.faults = FaultInjector.for_connection(FaultConfig(), 0, 0)
        for updates in held:
            self._send_push(updates)

    def _flush_held(self) -> None:
        self._flush_timer = None
        for updates in self.session.faults.release_held():
            self._send_push(updates)

    def _send_push(self, updates: AnyUpdates) -> None:
        if self.closed:
            return
        self._write(encode_push(updates))
        if self.session.faults.count_sent():
            self.close(f"fault: disconnect after {self.session.faults.pushes_sent} pushes")

    # -- requests --------------------------------------------------------------------

    async def run(self) -> None:
        decoder = FrameDecoder(self.server.config.max_frame_size)
        malformed_in_a_row = 0
        try:
            while not self.closed:
                data = await self.reader.read(_READ_CHUNK)
                if not data:
                    self.close("the client hung up")
                    break
                try:
                    for body in decoder.feed(data):
                        if self.closed:
                            break
                        if self._answer(body):
                            malformed_in_a_row = 0
                            continue
                        malformed_in_a_row += 1
                        if malformed_in_a_row >= MAX_MALFORMED_IN_A_ROW:
                            self.close(f"{malformed_in_a_row} malformed frames in a row")
                    decoder.feed(b"")  # an oversized length after good frames raises now
                except FramingError as error:
                    self._write(encode_error(None, error))
                    self.close(f"not a frame stream: {error.message}")
                    break
                await asyncio.sleep(0)
        except (ConnectionError, OSError) as error:
            self.close(f"connection error: {error}")
        finally:
            self.close("done")

    def _answer(self, body: bytes) -> bool:
        """Answer one frame; ``False`` if it was not even a well-formed map."""
        try:
            frame = decode_body(body, self.server.config.max_frame_size)
        except MalformedFrameError as error:
            self._write(encode_error(None, error))
            return False
        request_id = request_id_of(frame)
        session = self.session
        try:
            request = parse_request(frame)
            result = self.server.service.handle(session, request)
        except ProtocolError as error:
            self._respond(encode_error(request_id, error))
            failures = session.auth_failures
            if (
                error.code is ErrorCode.AUTH_FAILED
                and failures >= self.server.config.max_auth_failures
            ):
                self.close(f"{failures} failed auth attempts")
            return True
        except Exception:
            log.exception("connection %s: request failed", session.number)
            failure = ProtocolError("the server failed to answer", ErrorCode.INTERNAL)
            self._respond(encode_error(request_id, failure))
            return True
        self._respond(encode_result(request.id, result))
        return True

    def send_error(self, error: ProtocolError) -> None:
        """An error frame that answers no request."""
        self._write(encode_error(None, error))

    def _respond(self, payload: dict[str, Any]) -> None:
        """Send an answer, unless this connection's faults drop, delay or cut it."""
        plan = self.session.faults.plan_response()
        if plan.cut:
            self._cut_mid_frame(payload)
        elif plan.drop:
            log.debug("connection %s: fault: answer dropped", self.session.number)
            self.server.changes.notify()
        elif plan.delay:
            asyncio.get_running_loop().call_later(plan.delay, self._write, payload)
        else:
            self._write(payload)

    def _cut_mid_frame(self, payload: dict[str, Any]) -> None:
        """Write what is queued and the first half of this frame, then close."""
        self._flush()
        if self.closed:
            return
        frame = encode_frame(payload)
        self.writer.write(frame[: max(1, len(frame) // 2)])
        self.close("fault: connection cut in the middle of an answer")


class MockServer:
    """The server on the running event loop. ``await start()``, then ``port`` is known."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.port = 0
        self.store: ServerStore | None = None
        self._service: Service | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._traffic: asyncio.Task[None] | None = None
        self._connections_made = 0
        #: Notified when connections come and go and after pushes: ``wait_for`` uses it.
        self.changes = ChangeNotifier()

    @property
    def service(self) -> Service:
        if self._service is None:
            raise RuntimeError("the server is not started")
        return self._service

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def make_service(self, store: ServerStore) -> Service:
        """The service over ``store`` (the primary account's box) and the boxes of the
        accounts that logged in before."""
        config = self.config
        boxes = AccountBoxFiles(config.db, clock=config.clock, log_window=config.log_window)
        return Service(
            store,
            token=config.token,
            seed=config.seed,
            publish=self.publish,
            open_box=boxes.open,
            known_boxes=boxes.known(),
            terminate=self.terminate,
            sessions=lambda: [c.session for c in self._connections if c.session.authorized],
            new_secret=self.new_account_secret(),
        )

    def new_account_secret(self) -> int | None:
        """The secret the other accounts' tokens derive from, drawn once per database;
        ``None``: a random one."""
        return None

    def terminate(self, account: int, device: int) -> None:
        """Close the connections of one device of ``account``, telling it why."""
        revoked = ProtocolError(
            "this session was terminated from another device", ErrorCode.SESSION_REVOKED
        )
        for connection in list(self._connections):
            session = connection.session
            if session.authorized and session.account == account and session.device == device:
                connection.send_error(revoked)
                connection.close("its session was terminated")

    def connection_closed(self, connection: _Connection) -> None:
        self._connections.discard(connection)
        if self._service is not None:
            self._service.session_ended(connection.session)

    def clear_faults(self) -> None:
        """Stop injecting faults: every connection delivers what its faults held back,
        and later connections get none."""
        self.config = dataclasses.replace(self.config, faults=FaultConfig())
        for connection in list(self._connections):
            connection.clear_faults()

    async def start(self, dataset: DemoDataset | None = None) -> None:
        config = self.config
        if not is_loopback(config.host):
            log.warning(
                "listening on %s: reachable beyond this machine; anyone with the token can"
                " read this account",
                config.host,
            )
        store = ServerStore(
            config.db or ":memory:", clock=config.clock, log_window=config.log_window
        )
        try:
            if store.is_empty:
                started = time.perf_counter()
                if dataset is not None:
                    store.import_dataset(dataset)
                else:
                    import_into(store, config)
                log.info("dataset loaded in %.1f s", time.perf_counter() - started)
            self._service = self.make_service(store)
            if config.tokens_file is not None:
                self._service.accounts.write_tokens(config.tokens_file)
            self._server = await asyncio.start_server(self._accept, config.host, config.port)
        except BaseException:
            store.close()
            raise
        self.store = store
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("listening on %s:%s", config.host, self.port)
        if config.rate > 0:
            self._traffic = asyncio.create_task(self._generate_traffic(config.rate))

    async def stop(self) -> None:
        if self._traffic is not None:
            self._traffic.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._traffic
            self._traffic = None
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.close("server stopping")
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        if self._service is not None:
            self._service.accounts.close()
        if self.store is not None:
            self.store.close()
            self.store = None

    def push(self, pushes: list[AnyUpdates]) -> None:
        """Push to every session of the primary account (for changes made on its store
        directly, as tests and benchmarks do)."""
        self.publish(self.service.accounts.primary_id, pushes, None)

    def publish(self, account: int, pushes: list[AnyUpdates], exclude: Session | None) -> None:
        """Push to every connection of ``account`` but ``exclude``'s."""
        for connection in list(self._connections):
            session = connection.session
            if session is exclude or not session.authorized or session.account != account:
                continue
            for updates in pushes:
                connection.push(updates)
        self.changes.notify()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections_made += 1
        number = self._connections_made
        peer = writer.get_extra_info("peername")
        _bound_send_buffer(writer, self.config.max_write_buffer)
        faults = FaultInjector.for_connection(self.config.faults, self.config.seed, number)
        session = Session(number, faults, peer_name=f"{peer[0]}:{peer[1]}" if peer else "?")
        connection = _Connection(self, reader, writer, session)
        self._connections.add(connection)
        self.changes.notify()
        log.info("connection %s from %s", number, session.peer_name)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await connection.run()
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _generate_traffic(self, rate: float) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        made = 0
        while True:
            due = int((loop.time() - started) * rate) - made
            if due > 0:
                try:
                    self.service.generate(due)
                except Exception:
                    log.exception("traffic generation failed")
                made += due
            await asyncio.sleep(max(0.005, 1.0 / rate))


class EmbeddedServer:
    """A ``MockServer`` on a thread of its own, for demo mode and tests.

    ``start()`` returns once the server listens; ``call(fn)`` runs ``fn(server)`` on the
    server's loop and returns its result; ``stop()`` shuts it down.
    """

    def __init__(self, config: ServerConfig, dataset: DemoDataset | None = None) -> None:
        self.config = config
        self._dataset = dataset
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: MockServer | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        return self._server.port

    @property
    def address(self) -> tuple[str, int]:
        return (self.config.host, self.port)

    def start(self) -> Self:
        started: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            server = MockServer(self.config)
            self._server = server
            try:
                loop.run_until_complete(server.start(self._dataset))
            except BaseException as error:  # noqa: BLE001 - handed to the starting thread
                started.set_exception(error)
                loop.close()
                return
            started.set_result(None)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(server.stop())
                loop.close()

        self._thread = threading.Thread(target=run, name="mock-server", daemon=True)
        self._thread.start()
        started.result()
        return self

    def call(self, fn: Callable[[MockServer], T], timeout: float = 30.0) -> T:
        """Run ``fn(server)`` on the server's loop; its result or its exception."""
        loop, server = self._loop, self._server
        if loop is None or server is None:
            raise RuntimeError("the server is not started")

        async def invoke() -> T:
            return fn(server)

        return asyncio.run_coroutine_threadsafe(invoke(), loop).result(timeout)

    def wait_for(self, predicate: Callable[[MockServer], bool], timeout: float = 30.0) -> None:
        """Block until ``predicate(server)`` holds, checked on the server's loop whenever
        its connections or pushes change; ``TimeoutError`` after ``timeout`` seconds."""
        loop, server = self._loop, self._server
        if loop is None or server is None:
            raise RuntimeError("the server is not started")
        waiting = server.changes.wait_for(lambda: predicate(server), timeout)
        asyncio.run_coroutine_threadsafe(waiting, loop).result(timeout + 5)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
