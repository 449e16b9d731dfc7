"""The mock server against clients that stop reading, and whom it sends pushes to.

A client that stops reading its pushes or answers is cut off while a good client is
served in full; pushes reach authorized connections only, and not the session whose
change caused them.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from sync.protocol import Auth, ErrorCode, GetState, SendMessage
from sync.server.server import EmbeddedServer
from tests.sync.server_robustness_helpers import (
    TIMEOUT,
    TOKEN,
    _call,
    _config,
    _connection_count,
    _frame,
    _generate,
    _next_push,
    _refusal,
    _run,
    _wait_until,
    connection,
    raw_client,
)

#: The smallest ``max_write_buffer`` a ``ServerConfig`` accepts.
MIN_WRITE_BUFFER = 64 * 1024
#: Traffic events generated per call in the stall test (their pushes: about 30 KB).
EVENTS_PER_BATCH = 200


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
                assert await _call(good, GetState()) == own.call(lambda s: s.service.store.state())
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
                assert await _call(good, GetState()) == own.call(lambda s: s.service.store.state())
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


# --------------------------------------------------------------------------- slow motion


def test_slow_motion_holds_answers_and_pushes_in_order_until_it_is_switched_off():
    with EmbeddedServer(_config(latency=5.0)) as own:

        async def main():
            async with connection(own.port, authorize=False) as conn:
                # Even the answer to auth waits: nothing reaches the client meanwhile.
                auth = asyncio.ensure_future(conn.call(Auth(TOKEN)))
                await _wait_until(own, lambda s: s.held_frames, 1)
                assert not auth.done()
                own.call(lambda s: s.set_latency(0.0))  # what is held goes out now
                await asyncio.wait_for(auth, TIMEOUT)
                own.call(lambda s: s.set_latency(5.0))
                state = asyncio.ensure_future(conn.call(GetState()))
                await _wait_until(own, lambda s: s.held_frames, 1)
                made = await asyncio.to_thread(_generate, own, 5)
                assert made > 0
                await _wait_until(own, lambda s: s.held_frames, 1 + made)
                assert not state.done() and conn.pushes.empty()
                own.call(lambda s: s.set_latency(0.0))
                await asyncio.wait_for(state, TIMEOUT)
                for _ in range(made):
                    assert await _next_push(conn) is not None
                assert own.call(lambda s: s.held_frames) == 0

        _run(main())


def test_a_latency_out_of_range_is_refused():
    with pytest.raises(ValueError, match="latency must be within"):
        _config(latency=11.0)
