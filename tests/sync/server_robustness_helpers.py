"""Helpers for the mock server's robustness tests: servers, clients and the oracle.

Servers run on a thread of their own (``EmbeddedServer``); clients talk to them over
real sockets, either through ``ServerConnection`` or through ``RawClient``, which
writes any bytes and reads the server's frames back one at a time.

What the server must answer to a frame is worked out from the protocol module's own
rules (``decode_body`` and ``parse_request``) by ``expect`` and ``SessionModel``, so the
fuzz tests check every answer exactly, not merely that one came.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
import struct
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import pytest

from sync.connection import ServerConnection
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    METHODS,
    Auth,
    Authorization,
    ErrorCode,
    FrameDecoder,
    MalformedFrameError,
    PeerKind,
    ProtocolError,
    Request,
    RpcError,
    decode_body,
    parse_request,
    peer_kind,
    request_id_of,
)
from sync.server.config import ServerConfig
from sync.server.server import MAX_MALFORMED_IN_A_ROW, EmbeddedServer, MockServer

TOKEN = "t"
HOST = "127.0.0.1"
#: How long one answer, push or condition may take before the test fails.
TIMEOUT = 5.0
#: How long one test's client code may run in all.
TEST_TIMEOUT = 30.0


#: Refusals a valid request from an authorized client may get: about the data it
#: names, never about the frame (and never INTERNAL).
DATA_ERRORS = frozenset(
    {
        ErrorCode.PEER_ID_INVALID,
        ErrorCode.MESSAGE_ID_INVALID,
        ErrorCode.CHANNEL_INVALID,
        ErrorCode.CHAT_WRITE_FORBIDDEN,
        ErrorCode.MESSAGE_EMPTY,
        ErrorCode.MEDIA_INVALID,
        ErrorCode.STICKERSET_INVALID,
        ErrorCode.DEVICE_INVALID,
    }
)

_LENGTH = struct.Struct(">I")
_READ_SIZE = 64 * 1024


# --------------------------------------------------------------------------- servers


def _clock() -> int:
    return 1_800_000_000


def _config(**overrides: Any) -> ServerConfig:
    return ServerConfig(token=TOKEN, peers=30, messages=600, clock=_clock, **overrides)


def _digest(server: EmbeddedServer) -> str:
    return server.call(lambda s: s.service.store.digest())


def _connection_count(server: EmbeddedServer) -> int:
    return server.call(lambda s: s.connection_count)


def _generate(server: EmbeddedServer, events: int) -> int:
    return server.call(lambda s: s.service.generate(events))


@dataclasses.dataclass(frozen=True)
class Account:
    """What the tests need to know of the generated account."""

    self_id: int
    #: Peers with a chat, the one with most messages first.
    chats: tuple[int, ...]
    channels: tuple[int, ...]

    @property
    def busiest(self) -> int:
        return self.chats[0]

    @property
    def user_chat(self) -> int:
        return next(p for p in self.chats if peer_kind(p) is PeerKind.USER)


def _account_of(server: EmbeddedServer) -> Account:
    sizes = server.call(lambda s: s.service.store.chat_sizes())
    chats = tuple(peer for peer, _count in sorted(sizes, key=lambda row: (-row[1], row[0])))
    channels = tuple(peer for peer in chats if peer_kind(peer) is PeerKind.CHANNEL)
    return Account(server.call(lambda s: s.service.store.self_id), chats, channels)


def _run(coroutine: Any) -> Any:
    """Run a test's client code on a fresh event loop, failing instead of hanging."""
    return asyncio.run(asyncio.wait_for(coroutine, TEST_TIMEOUT))


async def _wait_until(
    server: EmbeddedServer, probe: Callable[[MockServer], Any], expected: Any
) -> None:
    """Wait until ``probe`` gives ``expected``, re-checked as the server's connections change."""
    try:
        await asyncio.to_thread(server.wait_for, lambda s: probe(s) == expected, TIMEOUT)
    except TimeoutError:
        value = server.call(probe)
        raise AssertionError(f"the server still has {value!r}, not {expected!r}") from None


# --------------------------------------------------------------------------- clients


def _pack(value: Any) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _frame(value: Any) -> bytes:
    """Any msgpack value (a map or not) behind a correct length prefix."""
    body = _pack(value)
    return _LENGTH.pack(len(body)) + body


class RawClient:
    """A client that writes any bytes and reads the server's frames back one by one."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.at_eof = False
        self._decoder = FrameDecoder()
        self._frames: deque[dict[str, Any]] = deque()
        self._ids = iter(range(1, 2**31))

    @classmethod
    async def open(cls, port: int, *, rcvbuf: int | None = None) -> RawClient:
        if rcvbuf is None:
            reader, writer = await asyncio.open_connection(HOST, port)
            return cls(reader, writer)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # Set before connecting, so the window the server sees stays small.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (HOST, port))
            reader, writer = await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
        return cls(reader, writer)

    def send_bytes(self, data: bytes) -> None:
        self.writer.write(data)

    def send_value(self, value: Any) -> bytes:
        """Frame and send ``value``; the body as the server will see it."""
        frame = _frame(value)
        self.writer.write(frame)
        return frame[_LENGTH.size :]

    def send_request(self, method: Any, params: Any = None) -> int:
        request_id = next(self._ids)
        self.send_value({"id": request_id, "method": method, "params": params or {}})
        return request_id

    async def call(self, method: Any, params: Any = None) -> dict[str, Any]:
        """Send one request; its answer, checked to carry the request's id."""
        request_id = self.send_request(method, params)
        answer = await self.recv()
        assert answer is not None, f"the server closed the connection instead of answering {method}"
        assert answer.get("id") == request_id, answer
        return answer

    async def authorize(self) -> None:
        answer = await self.call("auth", {"token": TOKEN})
        assert "result" in answer, answer

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any] | None:
        """The next frame from the server; ``None`` once the server closed the connection."""
        async with asyncio.timeout(timeout):
            while not self._frames and not self.at_eof:
                data = await self.reader.read(_READ_SIZE)
                if not data:
                    self.at_eof = True
                    break
                self._frames.extend(decode_body(body) for body in self._decoder.feed(data))
        return self._frames.popleft() if self._frames else None

    async def expect_eof(self) -> None:
        frame = await self.recv()
        assert frame is None, f"expected the server to close the connection, got {frame!r}"

    async def read_until_closed(self) -> tuple[list[dict[str, Any]], bool]:
        """Every frame until the server closes; and whether it reset the connection."""
        frames: list[dict[str, Any]] = []
        try:
            while (frame := await self.recv()) is not None:
                frames.append(frame)
        except ConnectionError:
            return frames, True
        return frames, False

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


@contextlib.asynccontextmanager
async def raw_client(
    port: int, *, authorize: bool = False, rcvbuf: int | None = None
) -> AsyncIterator[RawClient]:
    client = await RawClient.open(port, rcvbuf=rcvbuf)
    try:
        if authorize:
            await client.authorize()
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def connection(port: int, *, authorize: bool = True) -> AsyncIterator[ServerConnection]:
    conn = await ServerConnection.open(HOST, port)
    try:
        if authorize:
            await _call(conn, Auth(TOKEN))
        yield conn
    finally:
        await conn.close()


async def _call(conn: ServerConnection, params: Any) -> Any:
    return await asyncio.wait_for(conn.call(params), TIMEOUT)


async def _refusal(conn: ServerConnection, params: Any) -> ErrorCode:
    """The error code the server answers ``params`` with (it must refuse them)."""
    with pytest.raises(RpcError) as info:
        await _call(conn, params)
    return info.value.code


async def _next_push(conn: ServerConnection) -> Any:
    return await asyncio.wait_for(conn.pushes.get(), TIMEOUT)


def _error_code(frame: dict[str, Any]) -> ErrorCode:
    assert "error" in frame, f"expected an error frame, got {frame!r}"
    error = frame["error"]
    assert isinstance(error, dict), frame
    assert isinstance(error.get("message"), str), frame
    return ErrorCode(error["code"])


def _assert_error(frame: dict[str, Any] | None, code: ErrorCode, request_id: int | None) -> None:
    assert frame is not None, f"the server closed the connection instead of answering {code}"
    assert _error_code(frame) is code, frame
    assert "id" in frame, frame
    assert frame["id"] == request_id, frame


def _nested(depth: int) -> dict[str, Any]:
    """A map nested ``depth`` levels deep, counting itself (maps and lists alternate)."""
    value: Any = 0
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return {"k": value}


# --------------------------------------------------------------------------- the oracle


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the server must answer to one frame body.

    ``code`` is the error the answer must carry; ``None`` means the body is a valid
    request, whose answer depends on the session and the data (see ``SessionModel``).
    """

    request_id: int | None
    code: ErrorCode | None
    request: Request | None = None


def expect(body: bytes, max_size: int = DEFAULT_MAX_FRAME_SIZE) -> Expected:
    try:
        frame = decode_body(body, max_size)
    except MalformedFrameError:
        return Expected(None, ErrorCode.MALFORMED_FRAME)
    try:
        request = parse_request(frame)
    except ProtocolError as error:
        return Expected(request_id_of(frame), error.code)
    return Expected(request.id, None, request)


@dataclasses.dataclass
class SessionModel:
    """One connection's standing as the server must track it, answer by answer."""

    max_auth_failures: int
    authorized: bool = False
    malformed_in_a_row: int = 0
    auth_failures: int = 0

    def check(self, expected: Expected, answer: dict[str, Any]) -> bool:
        """Check ``answer``; ``True`` if the server must now close the connection."""
        assert "id" in answer, answer
        assert answer["id"] == expected.request_id, (expected, answer)
        code = _error_code(answer) if "error" in answer else None
        if code is None:
            assert "result" in answer, answer
        request = expected.request
        if request is None:
            assert code is expected.code, (expected, answer)
        elif isinstance(request.params, Auth):
            if request.params.token == TOKEN:
                assert code is None, answer
                Authorization.from_wire(answer["result"], "result")
                self.authorized = True
            else:
                assert code is ErrorCode.AUTH_FAILED, answer
        elif not self.authorized:
            assert code is ErrorCode.AUTH_REQUIRED, answer
        elif code is None:
            METHODS[request.method].decode_result(answer["result"])
        elif request.method == "sendMessage" and code is ErrorCode.INVALID_PARAMS:
            pass  # its random_id was used before, for another chat
        elif request.method == "forwardMessages" and code is ErrorCode.INVALID_PARAMS:
            pass  # as sendMessage, or not one random_id per id
        else:
            assert code in DATA_ERRORS, (request, answer)
        if code is ErrorCode.MALFORMED_FRAME:
            self.malformed_in_a_row += 1
        else:
            self.malformed_in_a_row = 0
        if code is ErrorCode.AUTH_FAILED:
            self.auth_failures += 1
        return self.malformed_in_a_row >= MAX_MALFORMED_IN_A_ROW or (
            code is ErrorCode.AUTH_FAILED and self.auth_failures >= self.max_auth_failures
        )


@dataclasses.dataclass(frozen=True)
class NextFrame:
    """What the server must find at one place of a byte stream."""

    #: The frame's body, or ``None`` if no complete frame starts there.
    body: bytes | None
    #: Where the frame after it starts.
    end: int
    #: Whether a length over the limit starts there (which ends the stream).
    too_large: bool = False


def next_frame(data: bytes, offset: int, max_size: int) -> NextFrame:
    """The frame of ``data`` that starts at ``offset``, judged by the limit ``max_size``
    (the server's limit depends on whether the frames before it authorized)."""
    if len(data) - offset < _LENGTH.size:
        return NextFrame(None, offset)
    (length,) = _LENGTH.unpack_from(data, offset)
    if length > max_size:
        return NextFrame(None, offset, too_large=True)
    end = offset + _LENGTH.size + length
    if end > len(data):
        return NextFrame(None, offset)
    return NextFrame(data[offset + _LENGTH.size : end], end)
