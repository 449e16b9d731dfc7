"""The mock server's answers to auth and to bad frames, on one live server.

Auth: requests before it are refused, wrong tokens are refused and logged without
the token, and a connection is cut off after too many failures. Bad frames: lengths
over the limit, bodies that are not msgpack maps, nesting too deep, unknown methods,
invalid params and ids, and malformed frames in a row.
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack
import pytest

from sync.connection import ConnectionLostError
from sync.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    MAX_DEPTH,
    Auth,
    ErrorCode,
    GetDialogs,
    GetDifference,
    GetFullPeer,
    GetHistory,
    GetPeers,
    GetState,
    SendMessage,
)
from sync.protocol.methods import MAX_REQUEST_ID
from sync.server.server import MAX_MALFORMED_IN_A_ROW, EmbeddedServer
from tests.sync.server_robustness_helpers import (
    _LENGTH,
    TOKEN,
    _assert_error,
    _call,
    _config,
    _digest,
    _frame,
    _nested,
    _next_push,
    _pack,
    _refusal,
    _run,
    _wait_until,
    connection,
    raw_client,
)

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
    "getHistory unknown filter": ("getHistory", {"peer": _PEER, "filter": "poll"}),
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


_BAD_IDS: dict[str, dict[str, object]] = {
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
