"""Sharing the mock server: fair turns between connections, and limits before auth.

A well-behaved client is answered while another connection has thousands of requests
pipelined; a connection the server cannot keep up with is no longer read (its requests
in flight stay at the limit, its bytes wait in the kernel and in the client). Before
auth a connection has a few seconds, small frames and a cap on how many such
connections there are; over a cap, one error frame and the connection closes.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from sync.protocol import ErrorCode, GetState
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from tests.sync.server_robustness_helpers import (
    _LENGTH,
    TIMEOUT,
    TOKEN,
    RawClient,
    _assert_error,
    _call,
    _config,
    _next_push,
    _pack,
    _run,
    _wait_until,
    connection,
    raw_client,
)

#: Requests the greedy client pipelines in the fairness tests.
GREEDY_REQUESTS = 2_000


class Recorder:
    """Every request the server answers, in order, with the load of every connection
    at that moment: installed in place of ``Service.handle`` on the server's loop."""

    def __init__(self, server: EmbeddedServer) -> None:
        self.handled: list[tuple[int, str]] = []
        self.most_in_flight = 0
        server.call(self._install)

    def _install(self, server: MockServer) -> None:
        service = server.service
        handle = service.handle

        def recording(session: Any, request: Any) -> Any:
            self.handled.append((session.number, request.method))
            loads = server.connection_loads()
            self.most_in_flight = max([self.most_in_flight, *(load.in_flight for load in loads)])
            return handle(session, request)

        setattr(service, "handle", recording)  # noqa: B010 - an instance attribute shadows it

    def numbers(self, method: str) -> list[int]:
        """The connections whose ``method`` requests were answered, in answering order."""
        return [number for number, name in self.handled if name == method]


async def _count_answers(client: RawClient, expected: int, seen: list[int]) -> None:
    """Read ``expected`` answers, each a result to the next request id, in order."""
    while len(seen) < expected:
        answer = await client.recv()
        assert answer is not None, f"closed after {len(seen)} answers"
        assert "result" in answer, answer
        seen.append(answer["id"])


def _greedy_frames(peer: int, count: int, first_id: int) -> bytes:
    request = {"method": "getHistory", "params": {"peer": peer, "limit": 20}}
    return b"".join(_frame_bytes({"id": first_id + number, **request}) for number in range(count))


def _frame_bytes(value: dict[str, Any]) -> bytes:
    body = _pack(value)
    return _LENGTH.pack(len(body)) + body


def _connection_numbers(server: EmbeddedServer) -> list[int]:
    return [load.number for load in server.call(lambda s: s.connection_loads())]


# --------------------------------------------------------------------------- fair turns


def test_a_polite_client_is_answered_while_a_greedy_one_has_thousands_pipelined(account):
    """With the server's loop held, a greedy client pipelines thousands of requests and a
    polite one sends getState; once the loop goes on, the getState is answered after at
    most one turn of each connection, not after the greedy client's backlog."""
    with EmbeddedServer(_config()) as own:
        limit = own.config.max_requests_in_flight
        entered, gate = threading.Event(), threading.Event()

        def hold(_server: MockServer) -> None:
            entered.set()
            assert gate.wait(TIMEOUT), "the test never let the server go on"

        async def main() -> tuple[int, list[int]]:
            async with (
                raw_client(own.port, authorize=True) as greedy,
                raw_client(own.port, authorize=True) as polite,
            ):
                greedy_number, polite_number = _connection_numbers(own)
                recorder = Recorder(own)
                holding = asyncio.create_task(asyncio.to_thread(own.call, hold))
                assert await asyncio.to_thread(entered.wait, TIMEOUT)
                greedy.send_bytes(_greedy_frames(account.busiest, GREEDY_REQUESTS, 10))
                request_id = polite.send_request("getState")
                assert polite.writer.transport.get_write_buffer_size() == 0  # in the kernel
                seen: list[int] = []
                counting = asyncio.create_task(_count_answers(greedy, GREEDY_REQUESTS, seen))
                gate.set()
                await holding
                answer = await polite.recv()
                greedy_seen_then = len(seen)
                assert answer is not None
                assert answer["id"] == request_id
                assert "result" in answer, answer
                await asyncio.wait_for(counting, TIMEOUT * 4)
                assert seen == list(range(10, 10 + GREEDY_REQUESTS))  # all, in order

            history = recorder.numbers("getHistory")
            assert history == [greedy_number] * GREEDY_REQUESTS
            order = [number for number, _method in recorder.handled]
            greedy_before = order[: order.index(polite_number)].count(greedy_number)
            # One turn each: the greedy connection had at most one turn before it (a
            # bound of one turn per request in flight leaves room for scheduling).
            assert greedy_before <= limit, greedy_before
            assert recorder.most_in_flight <= limit
            return greedy_before, [greedy_seen_then]

        _greedy_before, (greedy_seen_then,) = _run(main())
        # The client saw the answer long before the backlog was through.
        assert greedy_seen_then < GREEDY_REQUESTS


def test_a_connection_the_server_cannot_keep_up_with_is_no_longer_read():
    """While the server answers nothing, it reads a connection only up to its requests
    in flight: the rest of a 24 MiB pipeline waits in the kernel and in the client."""
    frame_size = 1024 * 1024
    frames = 24
    with EmbeddedServer(_config()) as own:
        limit = own.config.max_requests_in_flight
        paused = threading.Event()
        paused.set()

        def pause(server: MockServer) -> None:
            take = server.requests.take
            setattr(  # noqa: B010 - an instance attribute shadows the method
                server.requests, "take", lambda: None if paused.is_set() else take()
            )

        def padded(request_id: int) -> bytes:
            frame = {"id": request_id, "method": "getState", "params": {}, "pad": ""}
            frame["pad"] = "x" * (frame_size - len(_pack(frame)) - 4)  # a str32 header
            return _frame_bytes(frame)

        async def main() -> None:
            async with (
                raw_client(own.port, authorize=True) as greedy,
                raw_client(own.port, authorize=True) as polite,
            ):
                greedy_number, _polite_number = _connection_numbers(own)
                own.call(pause)
                greedy.send_bytes(b"".join(padded(number) for number in range(frames)))

                def greedy_load(server: MockServer) -> int:
                    loads = {load.number: load for load in server.connection_loads()}
                    return loads[greedy_number].in_flight

                await _wait_until(own, greedy_load, limit)
                loads = own.call(lambda s: s.connection_loads())
                (load,) = [load for load in loads if load.number == greedy_number]
                assert load.in_flight == limit
                # At most one frame and one read beyond them.
                assert load.buffered <= frame_size + 64 * 1024
                # The kernel's buffers hold a few MiB at most: the rest waits here.
                assert greedy.writer.transport.get_write_buffer_size() > 0
                paused.clear()
                answer = await polite.call("getState")  # wakes the answering task up
                assert "result" in answer, answer
                for number in range(frames):
                    got = await greedy.recv()
                    assert got is not None
                    assert (got["id"], "result" in got) == (number, True), got

        _run(main())


# --------------------------------------------------------------------------- before auth


def test_a_connection_that_does_not_authorize_in_time_is_closed(caplog):
    caplog.set_level(logging.INFO, logger="postbox.server")
    with EmbeddedServer(_config(auth_timeout=0.2)) as own:

        async def main() -> None:
            async with connection(own.port) as authorized:
                async with raw_client(own.port) as idle:
                    frame = await idle.recv()
                    _assert_error(frame, ErrorCode.AUTH_TIMEOUT, None)
                    assert frame is not None
                    assert "not authorized within 0.2 s" in frame["error"]["message"]
                    await idle.expect_eof()
                # The idle connection opened after it, so its own timeout has passed.
                assert await _call(authorized, GetState()) is not None
                await _wait_until(own, lambda s: s.connection_count, 1)

        _run(main())
    closed = [r.getMessage() for r in caplog.records if "not authorized within" in r.getMessage()]
    assert len(closed) == 1, closed


def test_an_authorized_connection_keeps_its_place_after_the_timeout():
    with EmbeddedServer(_config(auth_timeout=0.2)) as own:

        async def main() -> None:
            async with raw_client(own.port) as client:
                await client.authorize()
                async with raw_client(own.port) as later:
                    _assert_error(await later.recv(), ErrorCode.AUTH_TIMEOUT, None)
                answer = await client.call("getState")
                assert "result" in answer, answer
                assert own.call(lambda s: s.unauthorized_count) == 0

        _run(main())


def test_before_auth_a_large_length_is_refused_as_soon_as_it_is_declared():
    with EmbeddedServer(_config()) as own:
        limit = own.config.frame_limit_before_auth
        assert limit == 4096

        async def main() -> None:
            async with raw_client(own.port) as client:
                client.send_bytes(_LENGTH.pack(4 * 1024 * 1024))  # and nothing of the body
                frame = await client.recv()
                _assert_error(frame, ErrorCode.FRAME_TOO_LARGE, None)
                assert frame is not None
                assert frame["error"]["message"] == (
                    f"frame of {4 * 1024 * 1024} bytes exceeds the limit of {limit} before auth"
                )
                await client.expect_eof()

        _run(main())


def _padded(request_id: int, method: str, size: int, **params: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"id": request_id, "method": method, "params": params, "pad": ""}
    for _ in range(2):  # the second pass corrects for the longer string header
        frame["pad"] = "x" * (len(frame["pad"]) + size - len(_pack(frame)))
    assert len(_pack(frame)) == size
    return frame


def test_the_small_limit_holds_until_auth_and_the_full_one_after():
    with EmbeddedServer(_config()) as own:
        limit = own.config.frame_limit_before_auth

        async def main() -> None:
            async with raw_client(own.port) as client:
                client.send_value(_padded(1, "getState", limit))
                _assert_error(await client.recv(), ErrorCode.AUTH_REQUIRED, 1)
                # Auth and a frame too large before it, in one write: frames are judged
                # one at a time, once the ones before them are answered.
                client.send_bytes(
                    _frame_bytes({"id": 2, "method": "auth", "params": {"token": TOKEN}})
                    + _frame_bytes(_padded(3, "getState", 100_000))
                )
                for request_id in (2, 3):
                    answer = await client.recv()
                    assert answer is not None
                    assert (answer["id"], "result" in answer) == (request_id, True), answer
            async with raw_client(own.port) as client:
                client.send_value(_padded(4, "auth", limit + 1, token=TOKEN))
                _assert_error(await client.recv(), ErrorCode.FRAME_TOO_LARGE, None)
                await client.expect_eof()

        _run(main())


def test_connections_over_the_unauthorized_cap_get_flood_and_close(caplog):
    caplog.set_level(logging.WARNING, logger="postbox.server")
    with EmbeddedServer(_config(max_connections=3, max_unauthorized=2)) as own:

        async def main() -> None:
            async with raw_client(own.port) as first, raw_client(own.port):
                await _wait_until(own, lambda s: s.unauthorized_count, 2)
                async with raw_client(own.port) as refused:
                    frame = await refused.recv()
                    _assert_error(frame, ErrorCode.FLOOD, None)
                    assert frame is not None
                    assert "waiting to authorize" in frame["error"]["message"]
                    await refused.expect_eof()
                # Authorizing makes room for one more that has not.
                await first.authorize()
                async with raw_client(own.port) as third:
                    await third.authorize()
                    assert own.call(lambda s: s.connection_count) == 3
                    async with raw_client(own.port) as over:
                        frame = await over.recv()
                        _assert_error(frame, ErrorCode.FLOOD, None)
                        assert frame is not None
                        assert "too many connections (3 open)" in frame["error"]["message"]
                        await over.expect_eof()
                    answer = await third.call("getState")
                    assert "result" in answer, answer
            await _wait_until(own, lambda s: s.connection_count, 0)
            # Once they are gone, new connections are taken again.
            async with raw_client(own.port, authorize=True) as again:
                assert "result" in await again.call("getState")

        _run(main())
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 2, refusals
    assert "refused: too many connections waiting to authorize (2)" in refusals[0]
    assert "refused: too many connections (3 open)" in refusals[1]


def test_a_client_connection_names_the_refusal_it_was_closed_with():
    with EmbeddedServer(_config(max_connections=1, auth_timeout=0.2)) as own:

        async def main() -> None:
            async with connection(own.port, authorize=False) as idle:
                async with connection(own.port, authorize=False) as over:
                    assert await _next_push(over) is None  # the connection ended
                    assert over.server_error is not None
                    assert over.server_error.code is ErrorCode.FLOOD
                    assert over.closed_reason == (
                        "the server closed the connection (FLOOD: too many connections"
                        " (1 open); try again later)"
                    )
                assert await _next_push(idle) is None
                assert idle.server_error is not None
                assert idle.server_error.code is ErrorCode.AUTH_TIMEOUT
                assert idle.closed_reason is not None
                assert "AUTH_TIMEOUT: not authorized within 0.2 s" in idle.closed_reason

        _run(main())


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"max_requests_in_flight": 0}, "max_requests_in_flight must be within 1..10000"),
        ({"auth_timeout": 0.0}, "the auth timeout must be within 0..3600 s"),
        ({"auth_timeout": 7200.0}, "the auth timeout must be within 0..3600 s"),
        ({"max_frame_size_before_auth": 100}, "at least 512 bytes"),
        ({"max_connections": 0}, "max_connections must be at least 1"),
        ({"max_unauthorized": 0}, "max_unauthorized must be at least 1"),
    ],
)
def test_limits_out_of_range_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        ServerConfig(**values)


def test_the_limit_before_auth_never_exceeds_the_frame_limit():
    assert ServerConfig(max_frame_size=2048).frame_limit_before_auth == 2048
    assert ServerConfig().frame_limit_before_auth == 4096
    assert "demo-token" not in repr(ServerConfig())
