"""Fuzzing the mock server with byte streams and requests built by hypothesis.

Random byte streams go to fresh connections; fuzzed requests (read-only, then all
kinds) go to one authorized connection while a well-behaved client stays connected.
Every answer is checked exactly against ``expect`` and ``SessionModel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.connection import ServerConnection
from sync.protocol import (
    MAX_DEPTH,
    METHODS,
    Auth,
    DeleteMessages,
    EditMessage,
    ErrorCode,
    ForwardMessages,
    GetAllStickers,
    GetAuthorizations,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetFullPeer,
    GetHistory,
    GetPeerDialogs,
    GetPeers,
    GetSavedGifs,
    GetSentMessages,
    GetState,
    GetStickerSet,
    MediaKind,
    ReadHistory,
    ResetAuthorization,
    SaveDraft,
    SendMessage,
    SetNotifySettings,
    encode_request,
)
from sync.protocol.methods import MAX_REQUEST_ID
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.server_robustness_helpers import (
    _LENGTH,
    HOST,
    TIMEOUT,
    TOKEN,
    Account,
    RawClient,
    SessionModel,
    _account_of,
    _call,
    _clock,
    _config,
    _digest,
    _frame,
    _nested,
    _run,
    _wait_until,
    connection,
    expect,
    next_frame,
    raw_client,
)

READ_ONLY_METHODS = (
    "getState",
    "getDifference",
    "getChannelDifference",
    "getDialogs",
    "getPeerDialogs",
    "getHistory",
    "getPeers",
    "getFullPeer",
    "getAuthorizations",
    "getAllStickers",
    "getStickerSet",
    "getSavedGifs",
    "getSentMessages",
)
#: ``auth`` among them: it records the device that logs in.
WRITE_METHODS = (
    "auth",
    "sendMessage",
    "editMessage",
    "forwardMessages",
    "deleteMessages",
    "readHistory",
    "setNotifySettings",
    "saveDraft",
    "resetAuthorization",
)


def test_the_method_lists_cover_every_method():
    assert set(READ_ONLY_METHODS) | set(WRITE_METHODS) == set(METHODS)
    assert not set(READ_ONLY_METHODS) & set(WRITE_METHODS)


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
    {field.name for method in METHODS.values() for field in msgspec.structs.fields(method.params)}
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
        "from_peer": peers,
        "to_peer": peers,
        "random_ids": st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=4),
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
    params_fields = msgspec.structs.fields(METHODS[name].params)
    required = {
        field.name: _field_values(field.name, account) for field in params_fields if field.required
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
    hashes = st.integers(-(2**63), 2**63 - 1) | st.just(0)
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
        "getPeerDialogs": st.builds(GetPeerDialogs, st.lists(chats, max_size=5).map(tuple)),
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
            # Mostly no reply: a random reply target is mostly a refusal, and sends that
            # get through are what the consistency test needs.
            reply_to=_mostly(st.none(), message_ids, odds=3),
        ),
        "editMessage": st.builds(EditMessage, writable, message_ids, texts),
        "forwardMessages": st.lists(message_ids, min_size=1, max_size=4).flatmap(
            lambda ids: st.builds(
                ForwardMessages,
                chats,
                st.just(tuple(ids)),
                writable,
                st.lists(
                    st.integers(-(2**63), 2**63 - 1), min_size=len(ids), max_size=len(ids)
                ).map(tuple),
            )
        ),
        "deleteMessages": st.builds(
            DeleteMessages, chats, st.lists(message_ids, max_size=4).map(tuple)
        ),
        "readHistory": st.builds(ReadHistory, chats, message_ids),
        "setNotifySettings": st.builds(
            SetNotifySettings, chats, st.sampled_from((0, 2**31 - 1, 1_800_000_000))
        ),
        "saveDraft": st.builds(
            SaveDraft,
            chats,
            st.sampled_from(("", "a draft", "  ")),
            _mostly(st.none(), message_ids, odds=3),
        ),
        "getAuthorizations": st.just(GetAuthorizations()),
        "resetAuthorization": st.builds(
            ResetAuthorization, st.integers(min_value=-(2**63), max_value=2**63 - 1)
        ),
        "getAllStickers": st.builds(GetAllStickers, hashes),
        "getStickerSet": st.builds(GetStickerSet, hashes, hashes, hashes),
        "getSavedGifs": st.builds(GetSavedGifs, hashes),
        "getSentMessages": st.builds(
            GetSentMessages,
            st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4).map(tuple),
        ),
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


async def _send_stream(port: int, data: bytes, config: ServerConfig) -> None:
    """Send ``data`` on a fresh connection, hang up, and check every answer until EOF.

    Each frame is judged by the limit in force once the frames before it are answered:
    the small one before auth, the full one after.
    """
    async with raw_client(port) as client:
        client.send_bytes(data)
        with contextlib.suppress(ConnectionError, OSError):
            client.writer.write_eof()
        answers, reset = await client.read_until_closed()
    model = SessionModel(config.max_auth_failures)
    offset = 0
    closing = False

    def frame_at(offset: int) -> Any:
        limit = config.max_frame_size if model.authorized else config.frame_limit_before_auth
        return next_frame(data, offset, limit)

    for answer in answers:
        assert not closing, f"the server answered after it had to close: {answer!r}"
        found = frame_at(offset)
        if answer.get("error", {}).get("code") == ErrorCode.FRAME_TOO_LARGE:
            assert found.too_large, (answer, "frames before the bad length went unanswered")
            assert answer["id"] is None, answer
            closing = True
            continue
        assert found.body is not None, f"an answer to no frame: {answer!r}"
        closing = model.check(expect(found.body, config.max_frame_size), answer)
        offset = found.end
    if not reset and not closing:
        found = frame_at(offset)
        assert found.body is None, "complete frames went unanswered"
        assert not found.too_large, "a length over the limit went unanswered"


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
                    _send_stream(server.port, data, config),
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
        assert await _call(conn, GetState()) == server.call(lambda s: s.service.store.state())
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

            # The same examples on every machine: a check on what the fuzzing reached
            # (a send got through, say) must not depend on the run's luck.
            @settings(max_examples=max_examples, derandomize=True, database=None)
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

        # Writes first and more often, sends most: they are what this test is about.
        methods = ("sendMessage",) * 4 + WRITE_METHODS * 2 + READ_ONLY_METHODS
        fuzzer = _fuzz_requests(own, own_account, methods, 120, check_good_client)
        assert fuzzer.results["sendMessage"] > 0, fuzzer.results

        async def after():
            async with connection(own.port) as conn:
                assert await _call(conn, GetState()) == own.call(lambda s: s.service.store.state())
                page = await _call(conn, GetHistory(own_account.busiest, limit=100))
                assert page.messages == tuple(sorted(page.messages, key=lambda m: -m.id))

        _run(after())
    _assert_no_errors_logged(caplog)
