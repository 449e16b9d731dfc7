"""Protocol benchmark: decoding and encoding a 5,000-message getDifference answer.

The frame is made as the server makes it: a ``ServerStore`` in memory (seed 1, 200 peers,
20,000 messages, a fixed clock) takes 5,000 new-message events from its traffic
generator, then answers ``getDifference`` from the pts before them with room for all of
them, and the answer is encoded into a result frame. Timed, each the median of several
runs on the same bytes:

* decode: the frame body to typed records, as the client does it (the frame checks,
  the frame's kind, then the result decoded and validated for ``getDifference``);
* encode: the typed records to the frame's bytes, as the server does it;
* baseline: ``msgpack.unpackb`` of the same body into plain maps and lists, with no
  check and no record made.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgpack

from benchmarks.harness import BenchContext, Figure, benchmark
from sync.protocol import (
    METHODS,
    Difference,
    GetDifference,
    ResultFrame,
    decode_body,
    encode_frame,
    encode_result,
    parse_server_frame,
)
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
from sync.server.generator import generate_dataset
from sync.server.service import Service, Session
from sync.server.store import ServerStore

#: New messages in the difference.
MESSAGES = 5_000
_CLOCK = 1_800_000_000


def difference_body() -> tuple[bytes, Difference]:
    """The body of a result frame answering getDifference with ``MESSAGES`` new messages,
    and the difference it holds."""
    store = ServerStore(":memory:", clock=lambda: _CLOCK, log_window=MESSAGES * 2)
    try:
        store.import_dataset(generate_dataset(1, 200, 20_000, 30))
        service = Service(store, token="bench", seed=1, publish=lambda _pushes, _to: None)
        before = store.state()
        service.generate(MESSAGES, "message")
        session = Session(1, FaultInjector.for_connection(FaultConfig(), 1, 1), authorized=True)
        request = GetDifference(before.pts, before.qts, before.date, pts_total_limit=100_000)
        answer = service._get_difference(session, request)
    finally:
        store.close()
    assert isinstance(answer, Difference), answer
    assert len(answer.new_messages) == MESSAGES, len(answer.new_messages)
    return encode_frame(encode_result(1, answer))[4:], answer


def decode_difference_frame(body: bytes) -> Any:
    """What the client does with the frame: checks, frame kind, then the typed result."""
    frame = parse_server_frame(decode_body(body))
    assert isinstance(frame, ResultFrame)
    return METHODS["getDifference"].decode_result(frame.result)


def _median_ms(work: Callable[[], Any], runs: int) -> float:
    """The median time of ``runs`` calls of ``work``, in ms, with the collector paused."""
    times: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
    finally:
        gc.enable()
    return statistics.median(times) * 1e3


@benchmark("protocol")
def run(ctx: BenchContext) -> list[Figure]:
    body, difference = difference_body()
    decoded = decode_difference_frame(body)
    assert decoded == difference, "the decoded difference differs from the one encoded"
    runs = 5 if ctx.quick else 21
    decode = _median_ms(lambda: decode_difference_frame(body), runs)
    encode = _median_ms(lambda: encode_frame(encode_result(1, difference)), runs)
    baseline = _median_ms(lambda: msgpack.unpackb(body, raw=False), runs)
    size = f"{MESSAGES:,} messages, {len(body) / 1024:,.0f} KiB"
    return [
        Figure("getDifference: decode to records", decode, "ms", size),
        Figure("getDifference: encode from records", encode, "ms", size),
        Figure("baseline: msgpack.unpackb to maps", baseline, "ms", "no checks, no records"),
        Figure("decode / baseline", decode / baseline, "x", f"median of {runs}"),
        Figure("encode / baseline", encode / baseline, "x", f"median of {runs}"),
    ]
