"""The server's side of one client connection: reading requests, answering, pushing.

A ``Connection`` belongs to a ``ConnectionHost`` (the ``MockServer``), which decides
when each request is answered: the connection hands it what it reads (``take_request``)
only while the host has room for it, and the host calls ``serve`` when its turn comes.
Answers and pushes share one ordered stream of frames, written together once per pass
of the loop; a client that leaves ``max_write_buffer`` bytes unread is cut off.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import socket
from dataclasses import dataclass
from typing import Any, Protocol

from sync.errors import ServerDatabaseError
from sync.notifier import ChangeNotifier
from sync.protocol import (
    AnyUpdates,
    ErrorCode,
    FrameDecoder,
    FrameTooLargeError,
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
from sync.server.config import FaultConfig, ServerConfig
from sync.server.faults import FaultInjector
from sync.server.scheduling import RoundRobin
from sync.server.service import Service, Session

__all__ = [
    "MAX_MALFORMED_IN_A_ROW",
    "REORDER_FLUSH_SECONDS",
    "Connection",
    "ConnectionHost",
    "Ending",
    "Read",
    "bound_send_buffer",
]

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


@dataclass(frozen=True, slots=True)
class Ending:
    """The last thing read from a connection: the client hung up, or the stream broke
    (``error`` is then answered). Served in turn, after the requests read before it."""

    reason: str
    error: FramingError | None = None


#: What a connection's reader hands to its host: a frame body, or its end.
Read = bytes | Ending


class ConnectionHost(Protocol):
    """What a connection needs of the server it belongs to."""

    config: ServerConfig
    changes: ChangeNotifier
    requests: RoundRobin[Connection, Read]
    #: Seconds every frame to a client is held before it is written (slow motion).
    latency: float

    @property
    def service(self) -> Service: ...

    def take_request(self, connection: Connection, read: Read) -> None:
        """Queue what ``connection`` read (it had room) for its turn."""

    def connection_authorized(self, connection: Connection) -> None: ...

    def connection_closed(self, connection: Connection) -> None: ...


def bound_send_buffer(writer: asyncio.StreamWriter, limit: int) -> None:
    """Keep the kernel's send buffer within the write buffer limit.

    Otherwise the kernel grows it to megabytes, and a client that stopped reading is
    noticed (``max_write_buffer`` bytes waiting in the transport) only once those
    megabytes are full as well.
    """
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, min(limit, _MAX_SEND_BUFFER))


class Connection:
    """One client's connection: reads its requests for the host's turns, answers them,
    and writes pushes through its session's ``FaultInjector``."""

    def __init__(
        self,
        server: ConnectionHost,
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
        #: Frames held by the host's latency, in order, with when each is due.
        self._late: collections.deque[tuple[float, bytes]] = collections.deque()
        self._late_timer: asyncio.TimerHandle | None = None
        self._decoder = FrameDecoder(server.config.frame_limit_before_auth)
        self._malformed_in_a_row = 0
        self._auth_timer: asyncio.TimerHandle | None = None
        #: Set when the server may take another request of this connection, or it closed.
        self._room = asyncio.Event()
        self._closed = asyncio.Event()

    def _write(self, payload: dict[str, Any]) -> None:
        """Queue a frame; the frames queued in one pass of the loop go out in one write.
        With a latency, each frame waits that long first, and all keep their order."""
        if self.closed:
            return
        frame = encode_frame(payload)
        if self.server.latency > 0 or self._late:
            loop = asyncio.get_running_loop()
            self._late.append((loop.time() + self.server.latency, frame))
            if self._late_timer is None:
                self._late_timer = loop.call_at(self._late[0][0], self._release_late)
            self.server.changes.notify()
            return
        self._queue_frame(frame)

    def _release_late(self) -> None:
        """Write the held frames that are due, in order; wait for the next one."""
        self._late_timer = None
        if self.closed:
            self._late.clear()
            return
        loop = asyncio.get_running_loop()
        while self._late and self._late[0][0] <= loop.time():
            self._queue_frame(self._late.popleft()[1])
        if self._late:
            self._late_timer = loop.call_at(self._late[0][0], self._release_late)

    def release_held_frames(self) -> None:
        """Write every frame the latency holds, in order, now."""
        if self._late_timer is not None:
            self._late_timer.cancel()
            self._late_timer = None
        while self._late and not self.closed:
            self._queue_frame(self._late.popleft()[1])
        self._late.clear()

    @property
    def held_frames(self) -> int:
        return len(self._late)

    def _queue_frame(self, frame: bytes) -> None:
        self._outbox.append(frame)
        self._queued += len(frame)
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
        self._room.set()
        self._closed.set()
        for timer in (self._flush_timer, self._auth_timer, self._late_timer):
            if timer is not None:
                timer.cancel()
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

    def start_auth_timer(self) -> None:
        timeout = self.server.config.auth_timeout
        self._auth_timer = asyncio.get_running_loop().call_later(timeout, self._auth_timed_out)

    def _auth_timed_out(self) -> None:
        self._auth_timer = None
        if self.closed or self.session.authorized:
            return
        reason = f"not authorized within {self.server.config.auth_timeout:g} s"
        self._write(encode_error(None, ProtocolError(reason, ErrorCode.AUTH_TIMEOUT)))
        self.close(reason)

    @property
    def buffered(self) -> int:
        """Bytes read from the client and not yet cut into frames."""
        return self._decoder.buffered

    def made_room(self) -> None:
        """The server answered one of this connection's requests: read on if it waits."""
        self._room.set()

    async def run(self) -> None:
        """Read requests for the server while it has room for them; return once closed."""
        try:
            await self._read()
            await self._closed.wait()
        except (ConnectionError, OSError) as error:
            self.close(f"connection error: {error}")
        finally:
            self.close("done")

    async def _read(self) -> None:
        """Hand the server each frame body, then how the stream ended. Only frames the
        server has room for are cut from the bytes read, and the socket is read only when
        no complete frame is left, so a connection holds at most one frame and one read
        beyond its requests in flight."""
        server, decoder = self.server, self._decoder
        while not self.closed:
            if not server.requests.has_room(self):
                self._room.clear()
                server.changes.notify()  # this connection is not read until room is made
                await self._room.wait()
                continue
            try:
                body = decoder.next_body()
            except FramingError as error:
                refused = error
                if not self.session.authorized:
                    refused = FrameTooLargeError(f"{error.message} before auth")
                server.take_request(self, Ending(f"not a frame stream: {refused.message}", refused))
                return
            if body is not None:
                server.take_request(self, body)
                continue
            data = await self.reader.read(_READ_CHUNK)
            if self.closed:
                return
            if not data:
                server.take_request(self, Ending("the client hung up"))
                return
            decoder.add(data)

    def serve(self, read: Read) -> None:
        """Answer one request read from this connection (its turn has come), or end it."""
        if self.closed:
            return
        if isinstance(read, Ending):
            if read.error is not None:
                self._write(encode_error(None, read.error))
            self.close(read.reason)
            return
        was_authorized = self.session.authorized
        if self._answer(read):
            self._malformed_in_a_row = 0
        else:
            self._malformed_in_a_row += 1
            if self._malformed_in_a_row >= MAX_MALFORMED_IN_A_ROW:
                self.close(f"{self._malformed_in_a_row} malformed frames in a row")
        if not was_authorized and self.session.authorized and not self.closed:
            self._authorized()

    def _authorized(self) -> None:
        """Lift the limits that hold before auth."""
        if self._auth_timer is not None:
            self._auth_timer.cancel()
            self._auth_timer = None
        config = self.server.config
        self._decoder.max_size = config.max_frame_size
        self.server.connection_authorized(self)

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
            session.faults.check_rate(request.method, asyncio.get_running_loop().time())
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
        except ServerDatabaseError as error:
            # As a server whose storage fails: this request gets an internal error (the
            # client tries again later), the others are still served, and the log says why.
            method = frame.get("method")
            log.error("connection %s: %s failed: %s", session.number, method, error)
            failure = ProtocolError("the server's database failed", ErrorCode.INTERNAL)
            self._respond(encode_error(request_id, failure))
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
