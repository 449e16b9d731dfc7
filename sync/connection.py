"""The client's side of a connection: typed calls, and pushes in a queue.

``ServerConnection.open(host, port)`` connects; ``call(params)`` sends a request and
returns its decoded result (or raises ``RpcError``); pushed updates land in
``pushes``. If the connection drops, pending and later calls raise
``ConnectionLostError`` and ``pushes`` receives ``None`` once. An error the server
sent for no request (``FLOOD`` for too many connections, ``AUTH_TIMEOUT``) is kept in
``server_error`` and named in ``closed_reason`` when the server then closes. A request
larger than a server reads (``max_request_size``) is refused here with
``FrameTooLargeError``, for the server would close the connection over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any, TypeVar

from sync.errors import SyncError
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    METHODS,
    AnyUpdates,
    ErrorFrame,
    FrameDecoder,
    FrameTooLargeError,
    MalformedFrameError,
    ProtocolError,
    PushFrame,
    ResultFrame,
    RpcError,
    WireRecord,
    decode_server_frame,
    encode_frame,
    encode_request,
    method_name,
)

__all__ = ["ConnectionLostError", "ServerConnection"]

log = logging.getLogger("postbox.sync")

T = TypeVar("T")


class ConnectionLostError(SyncError, ConnectionError):
    """The connection closed before the answer came."""


class ServerConnection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_request_size: int = DEFAULT_MAX_FRAME_SIZE,
    ) -> None:
        self.max_request_size = max_request_size
        self._reader = reader
        self._writer = writer
        self._decoder = FrameDecoder(max_frame_size)
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self.pushes: asyncio.Queue[AnyUpdates | None] = asyncio.Queue()
        self.closed_reason: str | None = None
        #: The last error the server sent for no request, if any.
        self.server_error: RpcError | None = None
        #: A frame that broke the protocol (a push with a field of the wrong type, say),
        #: for which the connection was given up: a lie the engine counts.
        self.bad_frame: ProtocolError | None = None
        self._reading = asyncio.create_task(self._read_loop(), name="server-connection")

    @classmethod
    async def open(
        cls, host: str, port: int, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    ) -> ServerConnection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, max_frame_size)

    @property
    def is_closed(self) -> bool:
        return self.closed_reason is not None

    async def call(self, params: WireRecord) -> Any:
        """Send one request; its typed result. ``RpcError`` if the server refused it."""
        if self.closed_reason is not None:
            raise ConnectionLostError(self.closed_reason)
        name = method_name(params)
        request_id = next(self._ids)
        frame = encode_frame(encode_request(request_id, params))
        if len(frame) - 4 > self.max_request_size:
            raise FrameTooLargeError(
                f"a {name} request of {len(frame) - 4} bytes exceeds the limit of "
                f"{self.max_request_size}"
            )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (name, future)
        self._writer.write(frame)
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        self._lost("closed by the client")
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading

    def abort(self, reason: str) -> None:
        """Give the connection up at once (say, a request went unanswered): waiting
        calls fail with ``ConnectionLostError`` and ``pushes`` ends."""
        self._lost(reason)
        self._writer.close()

    def _lost(self, reason: str) -> None:
        if self.closed_reason is not None:
            return
        self.closed_reason = reason
        for _name, future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLostError(reason))
        self._pending.clear()
        self.pushes.put_nowait(None)

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._reader.read(64 * 1024)
                if not data:
                    reason = "the server closed the connection"
                    if self.server_error is not None:
                        reason += f" ({self.server_error})"
                    self._lost(reason)
                    return
                for body in self._decoder.feed(data):
                    self._dispatch(body)
        except ProtocolError as error:
            self.bad_frame = error
            self._lost(f"the server sent a bad frame: {error}")
            self._writer.close()
        except (ConnectionError, OSError) as error:
            self._lost(f"connection error: {error}")

    def _dispatch(self, body: bytes) -> None:
        frame = decode_server_frame(body, self._decoder.max_size)
        if isinstance(frame, PushFrame):
            self.pushes.put_nowait(frame.updates)
            return
        pending = self._pending.get(frame.id) if frame.id is not None else None
        if pending is None:
            if isinstance(frame, ErrorFrame):
                self.server_error = frame.error
                log.warning("server error for no request: %s", frame.error)
            return
        name, future = pending
        if future.done():
            return
        if isinstance(frame, ErrorFrame):
            future.set_exception(frame.error)
            return
        assert isinstance(frame, ResultFrame)
        try:
            future.set_result(METHODS[name].decode_result(frame.result))
        except MalformedFrameError:
            raise  # not a frame a server writes: the connection cannot be trusted
        except ProtocolError as error:
            future.set_exception(error)
