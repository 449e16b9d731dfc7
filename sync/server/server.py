"""The mock server on asyncio TCP: connections, auth, pushes with faults, traffic.

``MockServer`` runs on the caller's event loop; ``EmbeddedServer`` gives it a thread
and a loop of its own, for demo mode and tests. Each connection (``connections.py``)
reads frames and receives pushes through its own ``FaultInjector``.

Connections share the server fairly: each has at most ``max_requests_in_flight``
requests read and not answered (its socket is not read meanwhile, so a greedy client's
writes block), and one task answers them one connection at a time in turn
(``RoundRobin``), each connection's in order. Before auth a connection gets small
frames, one request at a time and ``auth_timeout`` seconds; there are caps on
connections and on unauthorized ones. A connection that stops reading is cut off once
``max_write_buffer`` bytes wait for it, so a stalled or flooding client cannot grow
the server's memory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

from dataset import DemoDataset, generate_dataset, iter_message_rows, read_dataset
from sync.errors import ServerDatabaseError
from sync.notifier import ChangeNotifier
from sync.protocol import AnyUpdates, ErrorCode, ProtocolError, encode_error, encode_frame
from sync.server.account_files import AccountBoxFiles
from sync.server.config import MAX_LATENCY, FaultConfig, ServerConfig, is_loopback
from sync.server.connections import (
    MAX_MALFORMED_IN_A_ROW,
    REORDER_FLUSH_SECONDS,
    Connection,
    Read,
    bound_send_buffer,
)
from sync.server.faults import FaultInjector
from sync.server.scheduling import RoundRobin
from sync.server.service import Service, Session
from sync.server.stage import Stage
from sync.server.store import ServerStore

__all__ = [
    "MAX_MALFORMED_IN_A_ROW",
    "REORDER_FLUSH_SECONDS",
    "ConnectionLoad",
    "EmbeddedServer",
    "MockServer",
    "import_into",
]

log = logging.getLogger("postbox.server")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ConnectionLoad:
    """One connection's requests read and not answered, and its bytes read and not yet
    cut into frames."""

    number: int
    in_flight: int
    buffered: int


#: How long a stopping server waits for its closed connections' tasks to end.
_STOP_GRACE_SECONDS = 2.0


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


class MockServer:
    """The server on the running event loop. ``await start()``, then ``port`` is known."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.port = 0
        #: Seconds every frame to a client is held (``set_latency``); 0 sends at once.
        self.latency = config.latency
        #: The live traffic (``config.rate``) makes no events while set.
        self.traffic_paused = False
        self.store: ServerStore | None = None
        self._service: Service | None = None
        self._server: asyncio.Server | None = None
        # Dicts, not sets: they keep the order connections came in, so pushes and
        # shutdowns go out in the same order on every run of a simulation.
        self._connections: dict[Connection, None] = {}
        self._unauthorized: dict[Connection, None] = {}
        self._tasks: dict[asyncio.Task[Any], None] = {}
        self._traffic: asyncio.Task[None] | None = None
        self._connections_made = 0
        #: Requests read and not answered yet, per connection, answered in turn.
        self.requests: RoundRobin[Connection, Read] = RoundRobin()
        self._requests_waiting = asyncio.Event()
        self._answering: asyncio.Task[None] | None = None
        #: Notified when connections come, authorize and go, after pushes, and when a
        #: connection is no longer read for its requests in flight: ``wait_for`` uses it.
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

    def account_connections(self, account: int) -> list[Connection]:
        """The authorized connections of ``account``, in the order they came."""
        return [
            connection
            for connection in self._connections
            if connection.session.authorized and connection.session.account == account
        ]

    def close_account_connections(self, account: int, reason: str) -> None:
        """Close every connection of ``account`` (its devices reconnect on their own)."""
        for connection in self.account_connections(account):
            connection.close(reason)

    @property
    def stage(self) -> Stage:
        """Events the demo's tour makes happen now (``sync.server.stage``)."""
        return Stage(self)

    @property
    def unauthorized_count(self) -> int:
        """Connections that have not authorized yet."""
        return len(self._unauthorized)

    def connection_loads(self) -> tuple[ConnectionLoad, ...]:
        """What each open connection holds of its client's requests, by number."""
        return tuple(
            sorted(
                (
                    ConnectionLoad(c.session.number, self.requests.in_flight(c), c.buffered)
                    for c in self._connections
                    if c in self.requests
                ),
                key=lambda load: load.number,
            )
        )

    def connection_closed(self, connection: Connection) -> None:
        self._connections.pop(connection, None)
        self._unauthorized.pop(connection, None)
        self.requests.remove(connection)
        if self._service is not None:
            self._service.session_ended(connection.session)

    def connection_authorized(self, connection: Connection) -> None:
        self._unauthorized.pop(connection, None)
        if connection in self.requests:
            self.requests.set_limit(connection, self.config.max_requests_in_flight)
        self.changes.notify()

    def take_request(self, connection: Connection, read: Read) -> None:
        """Queue what ``connection`` read (it had room) for its turn."""
        if connection not in self.requests:  # closed meanwhile
            return
        self.requests.put(connection, read)
        self._requests_waiting.set()
        if self._answering is None:
            self._answering = asyncio.create_task(self._answer_in_turn(), name="answering")

    async def _answer_in_turn(self) -> None:
        """Answer the connections' requests one at a time, one connection after another,
        giving the loop a turn after each (pushes, accepts and reads go on meanwhile)."""
        requests, waiting = self.requests, self._requests_waiting
        while True:
            turn = requests.take()
            if turn is None:
                waiting.clear()
                await waiting.wait()
                continue
            connection, read = turn
            try:
                connection.serve(read)
            except Exception:
                log.exception("connection %s: answering failed", connection.session.number)
                connection.close("the server failed to answer")
            finally:
                requests.done(connection)
            connection.made_room()
            await asyncio.sleep(0)

    def set_latency(self, seconds: float) -> None:
        """Hold every answer and push this long from now on, as a slow network would
        (order kept); 0 sends at once again."""
        if not 0.0 <= seconds <= MAX_LATENCY:
            raise ValueError(f"latency must be within 0..{MAX_LATENCY:g} s, not {seconds:g}")
        self.latency = seconds
        if not seconds:  # what is held goes out now, in order
            for connection in self._connections:
                connection.release_held_frames()

    @property
    def held_frames(self) -> int:
        """Frames the latency holds for all connections."""
        return sum(connection.held_frames for connection in self._connections)

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
        for attribute in ("_traffic", "_answering"):
            task: asyncio.Task[None] | None = getattr(self, attribute)
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                setattr(self, attribute, None)
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.close("server stopping")
        if self._tasks:
            # Closed connections end their tasks as soon as their reads see the close.
            _done, pending = await asyncio.wait(set(self._tasks), timeout=_STOP_GRACE_SECONDS)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
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

    def _refusal(self) -> str | None:
        """Why a new connection is refused now, or ``None`` if it is taken."""
        config = self.config
        if len(self._connections) >= config.max_connections:
            return f"too many connections ({len(self._connections)} open); try again later"
        if len(self._unauthorized) >= config.max_unauthorized:
            return (
                f"too many connections waiting to authorize ({len(self._unauthorized)});"
                " try again later"
            )
        return None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections_made += 1
        number = self._connections_made
        peer = writer.get_extra_info("peername")
        peer_name = f"{peer[0]}:{peer[1]}" if peer else "?"
        refusal = self._refusal()
        if refusal is not None:
            log.warning("connection %s from %s refused: %s", number, peer_name, refusal)
            writer.write(encode_frame(encode_error(None, ProtocolError(refusal, ErrorCode.FLOOD))))
            writer.close()
            return
        bound_send_buffer(writer, self.config.max_write_buffer)
        faults = FaultInjector.for_connection(self.config.faults, self.config.seed, number)
        session = Session(number, faults, peer_name=peer_name)
        connection = Connection(self, reader, writer, session)
        self._connections[connection] = None
        self._unauthorized[connection] = None
        self.requests.add(connection, 1)  # one at a time until it authorizes
        connection.start_auth_timer()
        self.changes.notify()
        log.info("connection %s from %s", number, session.peer_name)
        task = asyncio.current_task()
        if task is not None:
            self._tasks[task] = None
        try:
            await connection.run()
        finally:
            if task is not None:
                self._tasks.pop(task, None)

    async def _generate_traffic(self, rate: float) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        made = 0
        while True:
            due = int((loop.time() - started) * rate) - made
            if due > 0 and self.traffic_paused:
                made += due  # the time paused is not made up for afterwards
            elif due > 0:
                try:
                    self.service.generate(due)
                except ServerDatabaseError as error:  # would fail the same way every tick
                    log.error("traffic generation stopped: %s", error)
                    return
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
        return self.submit(fn).result(timeout)

    def submit(self, fn: Callable[[MockServer], T]) -> concurrent.futures.Future[T]:
        """Run ``fn(server)`` on the server's loop; a future of its result, not waited for."""
        loop, server = self._loop, self._server
        if loop is None or server is None:
            raise RuntimeError("the server is not started")

        async def invoke() -> T:
            return fn(server)

        return asyncio.run_coroutine_threadsafe(invoke(), loop)

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
