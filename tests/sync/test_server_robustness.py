"""Robustness of the mock server against hostile, broken and slow clients.

Covers auth (refusals, logging, cutting off guessers), every kind of bad frame,
fuzzed byte streams and fuzzed requests against one live server, clients that stop
reading, and which connections receive pushes. Servers run on a thread of their own
(``EmbeddedServer``); clients talk to them over real sockets, either through
``ServerConnection`` or through ``RawClient``, which writes any bytes and reads the
server's frames back one at a time.

What the server must answer to a frame is worked out from the protocol module's own
rules (``decode_body`` and ``parse_request``) by ``expect`` and ``SessionModel``, so the
fuzz tests check every answer exactly, not merely that one came.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
import struct
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.connection import ConnectionLostError, ServerConnection
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    MAX_DEPTH,
    METHODS,
    Auth,
    Authorization,
    DeleteMessages,
    EditMessage,
    ErrorCode,
    FrameDecoder,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetFullPeer,
    GetHistory,
    GetPeers,
    GetState,
    MalformedFrameError,
    MediaKind,
    PeerKind,
    ProtocolError,
    ReadHistory,
    Request,
    RpcError,
    SendMessage,
    decode_body,
    encode_request,
    parse_request,
    peer_kind,
    request_id_of,
)
from sync.protocol.methods import MAX_REQUEST_ID
from sync.server.config import ServerConfig
from sync.server.server import MAX_MALFORMED_IN_A_ROW, EmbeddedServer, MockServer

TOKEN = "t"
HOST = "127.0.0.1"
#: How long one answer, push or condition may take before the test fails.
TIMEOUT = 5.0
#: How long one test's client code may run in all.
TEST_TIMEOUT = 30.0
#: The smallest ``max_write_buffer`` a ``ServerConfig`` accepts.
MIN_WRITE_BUFFER = 64 * 1024
#: Traffic events generated per call in the stall test (their pushes: about 30 KB).
EVENTS_PER_BATCH = 200

READ_ONLY_METHODS = (
    "auth",
    "getState",
    "getDifference",
    "getChannelDifference",
    "getDialogs",
    "getHistory",
    "getPeers",
    "getFullPeer",
)
WRITE_METHODS = ("sendMessage", "editMessage", "deleteMessages", "readHistory")
#: Refusals a valid request from an authorized client may get: about the data it
#: names, never about the frame (and never INTERNAL).
DATA_ERRORS = frozenset(
    {
        ErrorCode.PEER_ID_INVALID,
        ErrorCode.MESSAGE_ID_INVALID,
        ErrorCode.CHANNEL_INVALID,
        ErrorCode.MESSAGE_EMPTY,
    }
)

_LENGTH = struct.Struct(">I")
_READ_SIZE = 64 * 1024


def test_the_method_lists_cover_every_method():
    assert set(READ_ONLY_METHODS) | set(WRITE_METHODS) == set(METHODS)
    assert not set(READ_ONLY_METHODS) & set(WRITE_METHODS)


# --------------------------------------------------------------------------- servers


def _clock() -> int:
    return 1_800_000_000


def _config(**overrides: Any) -> ServerConfig:
    return ServerConfig(token=TOKEN, peers=30, messages=600, clock=_clock, **overrides)


def _digest(server: EmbeddedServer) -> str:
    return server.call(lambda s: s.store.digest())


def _connection_count(server: EmbeddedServer) -> int:
    return server.call(lambda s: s.connection_count)


def _generate(server: EmbeddedServer, events: int) -> int:
    return server.call(lambda s: s.service.generate(events))


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    """One server for every test that changes no data; its data is checked at the end."""
    with EmbeddedServer(_config()) as running:
        digest = _digest(running)
        yield running
        assert _digest(running) == digest, "a test on the shared server changed its data"


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
    sizes = server.call(lambda s: s.store.chat_sizes())
    chats = tuple(peer for peer, _count in sorted(sizes, key=lambda row: (-row[1], row[0])))
    channels = tuple(peer for peer in chats if peer_kind(peer) is PeerKind.CHANNEL)
    return Account(server.call(lambda s: s.store.self_id), chats, channels)


@pytest.fixture(scope="module")
def account(server: EmbeddedServer) -> Account:
    found = _account_of(server)
    assert found.channels, "the generated account should have channels"
    return found


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
    return msgpack.packb(value, use_bin_type=True)


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
        elif request.method == "auth":
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


def split_stream(data: bytes, max_size: int) -> tuple[list[bytes], bool]:
    """The frame bodies the server must find in ``data``; and whether a length over
    ``max_size`` follows them (which ends the stream)."""
    bodies: list[bytes] = []
    offset = 0
    while len(data) - offset >= _LENGTH.size:
        (length,) = _LENGTH.unpack_from(data, offset)
        if length > max_size:
            return bodies, True
        end = offset + _LENGTH.size + length
        if end > len(data):
            break
        bodies.append(data[offset + _LENGTH.size : end])
        offset = end
    return bodies, False


# --------------------------------------------------------------------------- 1. auth


def test_requests_before_auth_get_auth_required(server, account):
    async def main():
        async with connection(server.port, authorize=False) as conn:
            for params in (
                GetState(),
                GetDialogs(),
                GetHistory(account.busiest, limit=10),
                GetPeers((account.self_id,)),
                GetFullPeer(account.busiest),
                GetDifference(1, 0, 0),
                SendMessage(account.user_chat, "before auth", random_id=1),
            ):
                assert await _refusal(conn, params) is ErrorCode.AUTH_REQUIRED
            assert conn.closed_reason is None
            await _call(conn, Auth(TOKEN))
            assert await _call(conn, GetState()) == server.call(lambda s: s.store.state())
            assert conn.pushes.empty()

    _run(main())


def test_a_wrong_token_is_refused_and_logged_without_the_token(server, account, caplog):
    caplog.set_level(logging.WARNING, logger="postbox.server")
    wrong = "not-the-token-1f9a"

    async def main():
        async with connection(server.port, authorize=False) as conn:
            assert await _refusal(conn, Auth(wrong)) is ErrorCode.AUTH_FAILED
            # A failed attempt authorizes nothing.
            assert await _refusal(conn, GetState()) is ErrorCode.AUTH_REQUIRED
            authorization = await _call(conn, Auth(TOKEN))
            assert authorization.user.id == account.self_id
            assert await _call(conn, GetState()) == server.call(lambda s: s.store.state())

    _run(main())
    warnings = [
        record
        for record in caplog.records
        if record.name == "postbox.server" and record.levelno == logging.WARNING
    ]
    assert len(warnings) == 1, [record.getMessage() for record in warnings]
    assert "wrong token" in warnings[0].getMessage()
    assert all(wrong not in record.getMessage() for record in caplog.records)


def _assert_closed_after_auth_failures(server: EmbeddedServer, failures: int) -> None:
    async def main():
        async with connection(server.port, authorize=False) as conn:
            for attempt in range(1, failures):
                assert await _refusal(conn, Auth(f"wrong-{attempt}")) is ErrorCode.AUTH_FAILED
                assert await _refusal(conn, GetState()) is ErrorCode.AUTH_REQUIRED
            assert await _refusal(conn, Auth("wrong-last")) is ErrorCode.AUTH_FAILED
            assert await _next_push(conn) is None
            assert conn.closed_reason == "the server closed the connection"
            with pytest.raises(ConnectionLostError):
                await _call(conn, Auth(TOKEN))
        await _wait_until(server, lambda s: s.connection_count, 0)
        # The server still takes the right token on a new connection.
        async with connection(server.port) as conn:
            await _call(conn, GetState())

    _run(main())


def test_the_connection_closes_after_max_auth_failures(server):
    assert server.config.max_auth_failures == 3
    _assert_closed_after_auth_failures(server, 3)


@pytest.mark.parametrize("limit", [1, 5])
def test_max_auth_failures_is_configurable(limit):
    with EmbeddedServer(_config(max_auth_failures=limit)) as own:
        _assert_closed_after_auth_failures(own, limit)


# --------------------------------------------------------------------------- 2. bad frames


@pytest.mark.parametrize("authorize", [False, True])
@pytest.mark.parametrize("length", [DEFAULT_MAX_FRAME_SIZE + 1, 2**31, 2**32 - 1])
def test_a_length_over_the_limit_gets_frame_too_large_then_eof(server, authorize, length):
    async def main():
        async with raw_client(server.port, authorize=authorize) as client:
            client.send_bytes(_LENGTH.pack(length))
            _assert_error(await client.recv(), ErrorCode.FRAME_TOO_LARGE, None)
            await client.expect_eof()

    _run(main())


def test_a_frame_exactly_at_the_limit_is_answered_and_one_byte_more_is_refused():
    limit = 1024

    def padded(request_id: int, size: int) -> dict[str, Any]:
        frame = {"id": request_id, "method": "getState", "params": {}, "pad": ""}
        frame["pad"] = "x" * (size - len(_pack(frame)) - 2)  # str8 header: 2 bytes
        assert len(_pack(frame)) == size
        return frame

    with EmbeddedServer(_config(max_frame_size=limit)) as own:

        async def main():
            async with raw_client(own.port, authorize=True) as client:
                client.send_value(padded(7, limit))
                answer = await client.recv()
                assert answer is not None
                assert answer["id"] == 7
                assert "result" in answer, answer
                client.send_value(padded(8, limit + 1))
                _assert_error(await client.recv(), ErrorCode.FRAME_TOO_LARGE, None)
                await client.expect_eof()

        _run(main())


def test_frames_before_an_oversized_length_in_the_same_read_are_answered(server):
    """Complete frames that precede a bad length prefix are requests like any other.

    Whether they are answered must not depend on how TCP happened to cut the stream:
    sent in separate reads they are answered, so they must be when they share a read
    with the bad length too.
    """

    async def main():
        async with raw_client(server.port, authorize=True) as client:
            client.send_bytes(
                _frame({"id": 1, "method": "getState", "params": {}})
                + _frame({"id": 2, "method": "getState", "params": {}})
                + _LENGTH.pack(DEFAULT_MAX_FRAME_SIZE + 1)
            )
            frames, reset = await client.read_until_closed()
            assert not reset
            assert [frame.get("id") for frame in frames] == [1, 2, None], frames
            assert "result" in frames[0]
            assert "result" in frames[1]
            _assert_error(frames[2], ErrorCode.FRAME_TOO_LARGE, None)

    _run(main())


def _nested(depth: int) -> dict[str, Any]:
    """A map nested ``depth`` levels deep, counting itself (maps and lists alternate)."""
    value: Any = 0
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return {"k": value}


_NOT_A_MAP = {
    "list": _pack([1, 2, 3]),
    "int": _pack(7),
    "negative int": _pack(-(2**63)),
    "float": _pack(1.5),
    "str": _pack("getState"),
    "bytes": _pack(b"\x00\x01"),
    "nil": _pack(None),
    "bool": _pack(True),
    "a request in a list": _pack([{"id": 1, "method": "getState", "params": {}}]),
}
_NOT_MSGPACK = {
    "empty body": b"",
    "never-used byte 0xc1": b"\xc1",
    "truncated map": b"\x83\xa2id\x01\xa6method",
    "extra data after the map": _pack({"id": 1}) + b"\x00",
    "invalid utf-8 in a str": b"\x81\xa2id\xa2\xff\xfe",
    "extension type": _pack({"id": msgpack.ExtType(5, b"x")}),
    "timestamp extension": b"\x81\xa1t\xd6\xff\x00\x00\x00\x01",
    "int map key": _pack({1: "getState"}),
    "bytes map key": _pack({b"id": 1}),
    "nesting too deep": _pack(_nested(MAX_DEPTH + 1)),
    "a list header claiming 2^32-1 items": b"\x81\xa1k\xdd\xff\xff\xff\xff",
}


@pytest.mark.parametrize(
    "body", [*_NOT_A_MAP.values(), *_NOT_MSGPACK.values()], ids=[*_NOT_A_MAP, *_NOT_MSGPACK]
)
def test_a_malformed_body_gets_malformed_frame_and_the_connection_goes_on(server, body):
    async def main():
        async with raw_client(server.port) as client:
            client.send_bytes(_LENGTH.pack(len(body)) + body)
            _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
            await client.authorize()
            answer = await client.call("getState")
            assert "result" in answer, answer

    _run(main())


def test_the_nesting_limit_counts_the_request_map(server):
    def request(request_id: int, depth: int) -> dict[str, Any]:
        # The request map is level 1 and ``params`` level 2, so ``deep`` starts at 3.
        return {"id": request_id, "method": "getState", "params": {"deep": _nested(depth - 2)}}

    async def main():
        async with raw_client(server.port, authorize=True) as client:
            client.send_value(request(3, MAX_DEPTH))
            answer = await client.recv()
            assert answer is not None
            assert answer["id"] == 3
            assert "result" in answer, answer
            client.send_value(request(4, MAX_DEPTH + 1))
            _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
            answer = await client.call("getState")
            assert "result" in answer, answer

    _run(main())


@pytest.mark.parametrize("authorize", [False, True])
@pytest.mark.parametrize("method", ["getEverything", "", "GETSTATE", "x" * 500, "auth "])
def test_an_unknown_method_gets_unknown_method_with_the_request_id(server, authorize, method):
    async def main():
        async with raw_client(server.port, authorize=authorize) as client:
            client.send_value({"id": 41, "method": method, "params": {}})
            _assert_error(await client.recv(), ErrorCode.UNKNOWN_METHOD, 41)
            # Still usable.
            answer = await client.call("auth", {"token": TOKEN})
            assert "result" in answer

    _run(main())


#: Stands for a real peer id in ``_INVALID_PARAMS``.
_PEER = object()
_INVALID_PARAMS = {
    "getHistory peer a str": ("getHistory", {"peer": "x"}),
    "getHistory peer missing": ("getHistory", {"limit": 10}),
    "getHistory peer negative": ("getHistory", {"peer": -1}),
    "getHistory peer over int64": ("getHistory", {"peer": 2**63}),
    "getHistory limit 0": ("getHistory", {"peer": _PEER, "limit": 0}),
    "getHistory limit 101": ("getHistory", {"peer": _PEER, "limit": 101}),
    "getHistory limit a bool": ("getHistory", {"peer": _PEER, "limit": True}),
    "getHistory limit a float": ("getHistory", {"peer": _PEER, "limit": 10.0}),
    "getHistory limit nil": ("getHistory", {"peer": _PEER, "limit": None}),
    "getHistory add_offset too negative": ("getHistory", {"peer": _PEER, "add_offset": -101}),
    "getHistory offset_id over int32": ("getHistory", {"peer": _PEER, "offset_id": 2**31}),
    "getHistory unknown filter": ("getHistory", {"peer": _PEER, "filter": "sticker"}),
    "getDifference date missing": ("getDifference", {"pts": 1, "qts": 0}),
    "getDifference pts a str": ("getDifference", {"pts": "1", "qts": 0, "date": 0}),
    "getChannelDifference limit 1001": (
        "getChannelDifference",
        {"channel": _PEER, "pts": 1, "limit": 1001},
    ),
    "getPeers ids a str": ("getPeers", {"ids": "1"}),
    "getPeers 201 ids": ("getPeers", {"ids": [1] * 201}),
    "getPeers an id a bool": ("getPeers", {"ids": [True]}),
    "getFullPeer peer bytes": ("getFullPeer", {"peer": b"\x01"}),
    "sendMessage text too long": (
        "sendMessage",
        {"peer": _PEER, "text": "x" * 4097, "random_id": 1},
    ),
    "sendMessage random_id missing": ("sendMessage", {"peer": _PEER, "text": "hi"}),
    "sendMessage media not records": (
        "sendMessage",
        {"peer": _PEER, "text": "hi", "random_id": 1, "media": [1]},
    ),
    "editMessage id 0": ("editMessage", {"peer": _PEER, "id": 0, "text": "hi"}),
    "deleteMessages ids a map": ("deleteMessages", {"peer": _PEER, "ids": {"1": 1}}),
    "readHistory max_id negative": ("readHistory", {"peer": _PEER, "max_id": -1}),
    "auth token an int": ("auth", {"token": 5}),
    "auth token too long": ("auth", {"token": "x" * 257}),
    "auth token missing": ("auth", {}),
    "params a list": ("getState", [1, 2]),
    "params nil": ("getState", None),
    "params a str": ("getDialogs", "all"),
    "method an int": (5, {}),
    "method nil": (None, {}),
}


@pytest.fixture
def digest_kept(server):
    """The test must leave the shared server's data as it found it."""
    before = _digest(server)
    yield
    assert _digest(server) == before


@pytest.mark.parametrize("case", list(_INVALID_PARAMS))
def test_invalid_params_get_invalid_params_with_the_request_id(server, account, digest_kept, case):
    method, params = _INVALID_PARAMS[case]
    if isinstance(params, dict):
        params = {
            key: account.busiest if value is _PEER else value for key, value in params.items()
        }

    async def main():
        async with raw_client(server.port, authorize=True) as client:
            client.send_value({"id": 2**53, "method": method, "params": params})
            _assert_error(await client.recv(), ErrorCode.INVALID_PARAMS, 2**53)
            answer = await client.call("getState")
            assert "result" in answer, answer

    _run(main())


_BAD_IDS = {
    "missing": {},
    "nil": {"id": None},
    "negative": {"id": -1},
    "over 2^53": {"id": MAX_REQUEST_ID + 1},
    "uint64 max": {"id": 2**64 - 1},
    "a bool": {"id": True},
    "a float": {"id": 1.0},
    "a str": {"id": "1"},
    "a list": {"id": [1]},
}


@pytest.mark.parametrize("authorize", [False, True])
@pytest.mark.parametrize("case", list(_BAD_IDS))
def test_a_request_without_a_valid_id_gets_invalid_params_with_no_id(server, authorize, case):
    async def main():
        async with raw_client(server.port, authorize=authorize) as client:
            for method in ("getState", "noSuchMethod", "auth"):
                client.send_value({**_BAD_IDS[case], "method": method, "params": {}})
                _assert_error(await client.recv(), ErrorCode.INVALID_PARAMS, None)
            # Still usable.
            answer = await client.call("auth", {"token": TOKEN})
            assert "result" in answer

    _run(main())


@pytest.mark.parametrize("request_id", [0, MAX_REQUEST_ID])
def test_the_ends_of_the_id_range_are_answered_with_their_id(server, request_id):
    async def main():
        async with raw_client(server.port, authorize=True) as client:
            client.send_value({"id": request_id, "method": "getState"})  # params default to {}
            answer = await client.recv()
            assert answer is not None
            assert answer["id"] == request_id
            assert "result" in answer, answer

    _run(main())


def test_malformed_frames_in_a_row_close_the_connection(server):
    malformed = _LENGTH.pack(1) + b"\xc1"

    async def main():
        async with raw_client(server.port) as client:
            client.send_bytes(malformed * MAX_MALFORMED_IN_A_ROW)
            for _ in range(MAX_MALFORMED_IN_A_ROW):
                _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
            await client.expect_eof()

    _run(main())


def test_a_well_formed_frame_resets_the_malformed_count(server):
    malformed = _LENGTH.pack(1) + b"\xc1"
    almost = MAX_MALFORMED_IN_A_ROW - 1

    async def main():
        async with raw_client(server.port) as client:
            for request_id in (1, 2, 3):
                # A map that is not a valid request still counts as well formed.
                client.send_bytes(malformed * almost + _frame({"id": request_id}))
                for _ in range(almost):
                    _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
                _assert_error(await client.recv(), ErrorCode.INVALID_PARAMS, request_id)
            await client.authorize()
            # The auth request was a map too, so the count starts again from zero here.
            client.send_bytes(malformed * almost)
            for _ in range(almost):
                _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
            client.send_bytes(malformed)
            _assert_error(await client.recv(), ErrorCode.MALFORMED_FRAME, None)
            await client.expect_eof()

    _run(main())


# --------------------------------------------------------------------------- 3. fuzzing

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.integers(min_value=-3, max_value=3),
    st.floats(),
    st.text(max_size=20),
    st.binary(max_size=20),
)
_FIELD_NAMES = sorted(
    {field.name for method in METHODS.values() for field in dataclasses.fields(method.params)}
    | {"id", "method", "params", "_"}
)
_STR_KEYS = st.text(max_size=10) | st.sampled_from(_FIELD_NAMES)
#: Keys the protocol refuses (only strings may key a map).
_ODD_KEYS = st.one_of(st.integers(-3, 3), st.binary(max_size=3), st.none(), st.floats())


def _mostly(
    common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any], odds: int
) -> st.SearchStrategy[Any]:
    """``common`` about ``odds`` times as often as ``rare`` (``one_of`` weighs its
    branches alike); shrinks towards ``common``."""
    return st.integers(min_value=0, max_value=odds).flatmap(lambda n: rare if n == odds else common)


#: Msgpack values the protocol accepts inside a frame: string keys, shallow nesting.
WELL_FORMED = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(_STR_KEYS, children, max_size=4)
    ),
    max_leaves=10,
)
#: Keys other than strings, or nesting around the depth limit: refused as malformed.
_MALFORMED_MAPS = st.one_of(
    st.recursive(
        _SCALARS,
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(_ODD_KEYS, children, min_size=1, max_size=2)
        ),
        max_leaves=6,
    ),
    st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 3).map(_nested),
)
#: Any msgpack value: mostly well formed, now and then not.
ANY_VALUE = _mostly(WELL_FORMED, _MALFORMED_MAPS, odds=3)

_VALID_IDS = st.integers(min_value=0, max_value=MAX_REQUEST_ID) | st.integers(0, 50)
_BAD_ID_VALUES = [-1, MAX_REQUEST_ID + 1, 2**64 - 1, True, 1.0, "1", None, [1]]
_REQUEST_IDS = _mostly(_VALID_IDS, st.sampled_from(_BAD_ID_VALUES), odds=6)


def _field_values(name: str, account: Account) -> st.SearchStrategy[Any]:
    """Values for a params field: mostly plausible ones (real peers, ids in range), so
    requests get past validation into the store, and now and then any other value."""
    peers = st.sampled_from([*account.chats, account.self_id, 0, 1])
    small = st.integers(min_value=-2, max_value=800)
    counters = st.one_of(small, st.integers(min_value=0, max_value=2**31), st.just(_clock()))
    media = st.fixed_dictionaries(
        {"kind": st.sampled_from([kind.value for kind in MediaKind]), "id": st.integers(0, 99)},
        optional={
            "size": st.integers(-1, 10**6),
            "url": st.text(max_size=10),
            "title": st.text(max_size=10) | st.none(),
        },
    )
    plausible = {
        "peer": peers,
        "channel": st.sampled_from(account.channels) | peers,
        "offset_peer": peers,
        "ids": st.lists(peers | small, max_size=6) | st.lists(small, min_size=99, max_size=202),
        "token": st.sampled_from([TOKEN, TOKEN, "", "T", TOKEN + " "]) | st.text(max_size=300),
        "text": st.text(max_size=30) | st.sampled_from(["", "  \n", "x" * 4096, "x" * 4097]),
        "random_id": st.integers(min_value=-(2**63), max_value=2**63 - 1),
        "reply_to": small | st.none(),
        "id": small,
        "limit": st.integers(min_value=-1, max_value=101) | st.integers(99, 1001),
        "pts_total_limit": st.integers(min_value=-1, max_value=100_001) | st.none(),
        "add_offset": st.integers(min_value=-101, max_value=1000),
        "filter": st.sampled_from([kind.value for kind in MediaKind]) | st.none(),
        "media": st.lists(media, max_size=3) | st.lists(media, min_size=11, max_size=11),
    }.get(name, counters)
    return _mostly(plausible, WELL_FORMED, odds=8)


def _params(name: str, account: Account) -> st.SearchStrategy[Any]:
    params_fields = dataclasses.fields(METHODS[name].params)
    required = {
        field.name: _field_values(field.name, account)
        for field in params_fields
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    }
    optional = {
        field.name: _field_values(field.name, account)
        for field in params_fields
        if field.name not in required
    }
    complete = st.fixed_dictionaries(required, optional=optional)
    partial = st.fixed_dictionaries({}, optional={**required, **optional})
    extra = st.dictionaries(st.text(max_size=6), WELL_FORMED, min_size=1, max_size=2)
    with_extra = st.builds(lambda params, more: {**more, **params}, complete, extra)
    return _mostly(complete, st.one_of(partial, with_extra, WELL_FORMED, ANY_VALUE), odds=3)


def valid_requests(methods: tuple[str, ...], account: Account) -> st.SearchStrategy[Any]:
    """Requests that pass validation, built from the protocol's own records, so that
    the fuzzing reaches deep into the store (and, for writes, changes data)."""
    chats = st.sampled_from(account.chats)
    writable = st.sampled_from([p for p in account.chats if p not in account.channels])
    counters = st.integers(min_value=0, max_value=60) | st.integers(0, 2**31 - 1)
    message_ids = st.integers(min_value=1, max_value=700)
    dates = st.sampled_from([0, _clock() - 7 * 86_400, _clock()])
    texts = st.text(min_size=1, max_size=40).filter(str.strip)
    kinds = st.sampled_from(list(MediaKind)) | st.none()
    params = {
        "auth": st.builds(Auth, st.sampled_from([TOKEN] * 9 + ["wrong"])),
        "getState": st.just(GetState()),
        "getDifference": st.builds(
            GetDifference, counters, st.just(0), dates, st.none() | st.integers(1, 20)
        ),
        "getChannelDifference": st.builds(
            GetChannelDifference,
            st.sampled_from(account.channels),
            counters,
            st.integers(min_value=1, max_value=1000),
        ),
        "getDialogs": st.builds(
            GetDialogs, dates, message_ids | st.just(0), chats | st.just(0), st.integers(1, 100)
        ),
        "getHistory": st.builds(
            GetHistory,
            chats,
            offset_id=message_ids | st.just(0),
            add_offset=st.integers(min_value=-100, max_value=150),
            limit=st.integers(min_value=1, max_value=100),
            max_id=message_ids | st.just(0),
            min_id=message_ids | st.just(0),
            filter=kinds,
        ),
        "getPeers": st.builds(GetPeers, st.lists(chats, max_size=5).map(tuple)),
        "getFullPeer": st.builds(GetFullPeer, chats | st.just(account.self_id)),
        "sendMessage": st.builds(
            SendMessage,
            writable,
            texts,
            st.integers(min_value=-(2**63), max_value=2**63 - 1),
            reply_to=st.none() | message_ids,
        ),
        "editMessage": st.builds(EditMessage, writable, message_ids, texts),
        "deleteMessages": st.builds(
            DeleteMessages, chats, st.lists(message_ids, max_size=4).map(tuple)
        ),
        "readHistory": st.builds(ReadHistory, chats, message_ids),
    }
    return st.builds(
        encode_request, _VALID_IDS, st.sampled_from(methods).flatmap(params.__getitem__)
    )


def request_frames(methods: tuple[str, ...], account: Account) -> st.SearchStrategy[Any]:
    """Maps that look like requests: real method names with mostly plausible params."""

    def for_method(name: str) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.fixed_dictionaries(
                {"id": _REQUEST_IDS, "method": st.just(name), "params": _params(name, account)}
            ),
            st.fixed_dictionaries(
                {"id": _REQUEST_IDS, "method": st.just(name)},
                optional={"params": _params(name, account), "extra": ANY_VALUE},
            ),
        )

    known = st.sampled_from(methods).flatmap(for_method)
    unknown = st.fixed_dictionaries(
        {},
        optional={
            "id": _REQUEST_IDS,
            "method": st.text(max_size=50) | ANY_VALUE,
            "params": st.dictionaries(_STR_KEYS, ANY_VALUE, max_size=4) | ANY_VALUE,
        },
    )
    return _mostly(known, unknown, odds=5)


def byte_streams(account: Account) -> st.SearchStrategy[bytes]:
    chunk = st.one_of(
        st.binary(max_size=48),
        ANY_VALUE.map(_frame),
        request_frames(READ_ONLY_METHODS, account).map(_frame),
        st.integers(min_value=0, max_value=2**32 - 1).map(_LENGTH.pack),
        st.integers(min_value=0, max_value=64).map(_LENGTH.pack),
    )
    return st.one_of(st.binary(max_size=300), st.lists(chunk, max_size=8).map(b"".join))


async def _send_stream(port: int, data: bytes, max_size: int, max_auth_failures: int) -> None:
    """Send ``data`` on a fresh connection, hang up, and check every answer until EOF."""
    bodies, too_large = split_stream(data, max_size)
    async with raw_client(port) as client:
        client.send_bytes(data)
        with contextlib.suppress(ConnectionError, OSError):
            client.writer.write_eof()
        answers, reset = await client.read_until_closed()
    model = SessionModel(max_auth_failures)
    answered = 0
    closing = False
    for answer in answers:
        assert not closing, f"the server answered after it had to close: {answer!r}"
        if answer.get("error", {}).get("code") == ErrorCode.FRAME_TOO_LARGE:
            assert too_large, answer
            assert answer["id"] is None, answer
            assert answered == len(bodies), "frames before the bad length went unanswered"
            closing = True
            continue
        assert answered < len(bodies), f"an answer to no frame: {answer!r}"
        closing = model.check(expect(bodies[answered], max_size), answer)
        answered += 1
    if not reset and not closing:
        assert answered == len(bodies), "complete frames went unanswered"
        assert not too_large, "a length over the limit went unanswered"


def test_fuzz_random_bytes_on_fresh_connections(server, account, caplog):
    config = server.config

    async def settle():
        await _wait_until(server, lambda s: s.connection_count, 0)

    with asyncio.Runner() as runner:
        runner.run(settle())

        @settings(max_examples=150)
        @given(data=byte_streams(account))
        def fuzz(data):
            runner.run(
                asyncio.wait_for(
                    _send_stream(
                        server.port, data, config.max_frame_size, config.max_auth_failures
                    ),
                    TIMEOUT * 2,
                )
            )

        fuzz()
        runner.run(asyncio.wait_for(_still_serving(server, expected_connections=0), TIMEOUT * 2))
    _assert_no_errors_logged(caplog)


async def _still_serving(server: EmbeddedServer, *, expected_connections: int) -> None:
    """Closed connections are gone, and a new one is served."""
    await _wait_until(server, lambda s: s.connection_count, expected_connections)
    async with connection(server.port) as conn:
        assert await _call(conn, GetState()) == server.call(lambda s: s.store.state())
    await _wait_until(server, lambda s: s.connection_count, expected_connections)


def _assert_no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


class FuzzClient:
    """An authorized raw connection that checks every answer against ``SessionModel``,
    and opens a new connection whenever the server rightly closes one."""

    def __init__(self, port: int, config: ServerConfig) -> None:
        self.port = port
        self.config = config
        self.client: RawClient | None = None
        self.model = SessionModel(config.max_auth_failures)
        self.reconnects = 0
        #: Answers by error code, or "result".
        self.answers: Counter[str] = Counter()
        #: Results by method.
        self.results: Counter[str] = Counter()

    async def start(self) -> None:
        self.client = await RawClient.open(self.port)
        self.model = SessionModel(self.config.max_auth_failures)
        await self.send({"id": 0, "method": "auth", "params": {"token": TOKEN}})
        assert self.model.authorized

    async def send(self, value: Any) -> None:
        assert self.client is not None
        body = self.client.send_value(value)
        answer = await self.client.recv()
        assert answer is not None, (
            f"the server closed the connection instead of answering {value!r}"
        )
        expected = expect(body, self.config.max_frame_size)
        closing = self.model.check(expected, answer)
        if "error" in answer:
            self.answers[answer["error"]["code"]] += 1
        else:
            self.answers["result"] += 1
            assert expected.request is not None
            self.results[expected.request.method] += 1
        if closing:
            await self.client.expect_eof()
            await self.client.close()
            self.reconnects += 1
            await self.start()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()

    async def restart(self) -> None:
        """A fresh connection, after a failed example left this one in an unknown state
        (so that shrinking starts every example alike)."""
        with contextlib.suppress(Exception):
            await self.close()
            await self.start()


def _fuzz_requests(server, account, methods, max_examples, check_good_client):
    """Fuzz ``methods`` on one authorized connection while a good client stays connected."""
    frames = st.lists(
        _mostly(
            _mostly(valid_requests(methods, account), request_frames(methods, account), odds=2),
            ANY_VALUE,
            odds=4,
        ),
        min_size=1,
        max_size=6,
    )
    with asyncio.Runner() as runner:
        good: ServerConnection = runner.run(ServerConnection.open(HOST, server.port))
        fuzzer = FuzzClient(server.port, server.config)
        try:
            runner.run(_call(good, Auth(TOKEN)))
            runner.run(fuzzer.start())
            baseline = runner.run(check_good_client(good, None))

            @settings(max_examples=max_examples)
            @given(frames=frames)
            def fuzz(frames):
                async def send_all():
                    for value in frames:
                        await fuzzer.send(value)
                    await check_good_client(good, baseline)

                try:
                    runner.run(asyncio.wait_for(send_all(), TIMEOUT * 2))
                except BaseException:
                    runner.run(fuzzer.restart())
                    raise

            fuzz()
            assert good.closed_reason is None
            runner.run(
                asyncio.wait_for(_still_serving(server, expected_connections=2), TIMEOUT * 2)
            )
        finally:
            runner.run(fuzzer.close())
            runner.run(good.close())
    return fuzzer


def test_fuzz_read_only_requests_change_nothing(server, account, caplog):
    digest = _digest(server)

    async def check_good_client(good, baseline):
        answers = (
            await _call(good, GetHistory(account.busiest, limit=50)),
            await _call(good, GetDialogs(limit=20)),
            await _call(good, GetState()),
        )
        if baseline is not None:
            assert answers == baseline
        assert good.pushes.empty(), "read-only requests pushed something"
        return answers

    fuzzer = _fuzz_requests(server, account, READ_ONLY_METHODS, 150, check_good_client)
    assert _digest(server) == digest
    # The fuzzing got past validation into the store, and got refusals of both kinds.
    assert fuzzer.answers["result"] > 0, fuzzer.answers
    assert fuzzer.answers[ErrorCode.INVALID_PARAMS] > 0, fuzzer.answers
    assert fuzzer.answers[ErrorCode.MALFORMED_FRAME] > 0, fuzzer.answers
    _assert_no_errors_logged(caplog)


def test_fuzz_all_requests_keep_the_server_consistent(account, caplog):
    with EmbeddedServer(_config()) as own:
        own_account = _account_of(own)
        assert own_account == account  # the same seed makes the same account

        async def check_good_client(good, baseline):
            # Pushes from the fuzzer's changes must be well formed (the client decodes them).
            while not good.pushes.empty():
                assert good.pushes.get_nowait() is not None, good.closed_reason
            return await _call(good, GetState())

        # Writes first and twice: they are what this test is about.
        methods = WRITE_METHODS * 2 + READ_ONLY_METHODS
        fuzzer = _fuzz_requests(own, own_account, methods, 120, check_good_client)
        assert fuzzer.results["sendMessage"] > 0, fuzzer.results

        async def after():
            async with connection(own.port) as conn:
                assert await _call(conn, GetState()) == own.call(lambda s: s.store.state())
                page = await _call(conn, GetHistory(own_account.busiest, limit=100))
                assert page.messages == tuple(sorted(page.messages, key=lambda m: -m.id))

        _run(after())
    _assert_no_errors_logged(caplog)


# --------------------------------------------------------------------------- 4. stalls


def test_a_client_that_stops_reading_pushes_is_cut_off(caplog):
    caplog.set_level(logging.INFO, logger="postbox.server")
    with EmbeddedServer(_config(max_write_buffer=MIN_WRITE_BUFFER)) as own:

        async def main():
            async with (
                connection(own.port) as good,
                raw_client(own.port, authorize=True, rcvbuf=4096) as stalled,
            ):
                await _wait_until(own, lambda s: s.connection_count, 2)
                deadline = time.monotonic() + TIMEOUT * 2
                made = 0
                while _connection_count(own) == 2:
                    assert time.monotonic() < deadline, "the stalled client was never cut off"
                    # Off the event loop, so the good client keeps reading meanwhile, and
                    # in batches whose pushes stay well under the limit, so that only the
                    # client that stopped reading can fall that far behind.
                    made += await asyncio.to_thread(_generate, own, EVENTS_PER_BATCH)
                assert _connection_count(own) == 1
                # The good client got every push, in full, and still gets answers.
                for _ in range(made):
                    assert await _next_push(good) is not None
                assert await _call(good, GetState()) == own.call(lambda s: s.store.state())
                assert good.pushes.empty()
                assert good.closed_reason is None
                # The stalled client finds its connection gone once it reads again.
                _frames, _reset = await stalled.read_until_closed()

        _run(main())
    stalls = [r.getMessage() for r in caplog.records if "stalled" in r.getMessage()]
    assert len(stalls) == 1, stalls


def test_a_client_that_sends_requests_but_never_reads_answers_is_cut_off(account):
    with EmbeddedServer(_config(max_write_buffer=MIN_WRITE_BUFFER)) as own:

        async def main():
            async with (
                connection(own.port) as good,
                raw_client(own.port, authorize=True, rcvbuf=4096) as flooder,
            ):
                await _wait_until(own, lambda s: s.connection_count, 2)
                request = _frame(
                    {"id": 1, "method": "getHistory", "params": {"peer": account.busiest}}
                )
                flooder.send_bytes(request * 1000)
                await _wait_until(own, lambda s: s.connection_count, 1)
                assert await _call(good, GetState()) == own.call(lambda s: s.store.state())
                assert good.closed_reason is None
                _frames, _reset = await flooder.read_until_closed()

        _run(main())


# --------------------------------------------------------------------------- 5. pushes


def test_pushes_reach_authorized_connections_only(account):
    with EmbeddedServer(_config()) as own:

        async def main():
            async with (
                connection(own.port, authorize=False) as anonymous,
                connection(own.port, authorize=False) as refused,
                connection(own.port) as first,
                connection(own.port) as second,
            ):
                assert await _refusal(refused, Auth("wrong")) is ErrorCode.AUTH_FAILED
                await _wait_until(own, lambda s: s.connection_count, 4)

                made = await asyncio.to_thread(_generate, own, 20)
                assert made > 0
                for conn in (first, second):
                    for _ in range(made):
                        assert await _next_push(conn) is not None
                for conn in (anonymous, refused):
                    # Answers and pushes share one ordered stream: a push sent before
                    # this answer would already be queued.
                    assert await _refusal(conn, GetState()) is ErrorCode.AUTH_REQUIRED
                    assert conn.pushes.empty()

                # Authorizing later brings the pushes made after it, not before.
                await _call(anonymous, Auth(TOKEN))
                made = await asyncio.to_thread(_generate, own, 5)
                assert made > 0
                for conn in (anonymous, first, second):
                    for _ in range(made):
                        assert await _next_push(conn) is not None
                    await _call(conn, GetState())
                    assert conn.pushes.empty()
                assert await _refusal(refused, GetState()) is ErrorCode.AUTH_REQUIRED
                assert refused.pushes.empty()

                # A change a client makes is pushed to the other sessions, not to it.
                sent = await _call(first, SendMessage(account.user_chat, "hello", random_id=77))
                for conn in (second, anonymous):
                    push = await _next_push(conn)
                    assert push is not None
                    assert getattr(push, "id", None) == sent.message.id, push
                await _call(first, GetState())
                assert first.pushes.empty()
                assert await _refusal(refused, GetState()) is ErrorCode.AUTH_REQUIRED
                assert refused.pushes.empty()

        _run(main())
