"""Protocol benchmark: decoding and encoding a 5,000-message getDifference answer.

The frame is made as the server makes it: a ``ServerStore`` in memory (seed 1, 200 peers,
20,000 messages, a fixed clock) takes 5,000 new-message events from its traffic
generator, then answers ``getDifference`` from the pts before them with room for all of
them, and the answer is encoded into a result frame. Timed, each the median of several
runs on the same bytes:

* decode: the frame body to typed records, as the client does it
  (``decode_server_frame``, then the result decoded and validated for ``getDifference``,
  the frame checks included);
* decode, the general way: ``decode_body`` (the body to maps, checked), then
  ``parse_server_frame`` and the result validated from the maps, as for a frame with
  anything unusual in it;
* encode: the typed records to the frame's bytes, as the server does it;
* baseline: ``msgpack.unpackb`` of the same body into plain maps and lists, with no
  check and no record made.

The garbage collector runs as it would in the app; a collection precedes each run.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgpack

from benchmarks.harness import BenchContext, Figure, benchmark
from dataset import generate_dataset
from sync.protocol import (
    METHODS,
    Difference,
    GetDifference,
    ResultFrame,
    decode_body,
    decode_server_frame,
    encode_frame,
    encode_result,
    parse_server_frame,
)
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
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
        service = Service(store, token="bench", seed=1, publish=lambda _account, _pushes, _to: None)
        before = store.state()
        service.generate(MESSAGES, "message")
        session = Session(
            1,
            FaultInjector.for_connection(FaultConfig(), 1, 1),
            authorized=True,
            account=store.self_id,
        )
        request = GetDifference(before.pts, before.qts, before.date, pts_total_limit=100_000)
        answer = service._get_difference(session, request)
    finally:
        store.close()
    assert isinstance(answer, Difference), answer
    assert len(answer.new_messages) == MESSAGES, len(answer.new_messages)
    return encode_frame(encode_result(1, answer))[4:], answer


def decode_difference_frame(body: bytes) -> Any:
    """What the client does with the frame: its kind, then the typed result."""
    frame = decode_server_frame(body)
    assert isinstance(frame, ResultFrame)
    return METHODS["getDifference"].decode_result(frame.result)


def decode_difference_maps(body: bytes) -> Any:
    """The general way: the body to checked maps, then the result validated from them."""
    frame = parse_server_frame(decode_body(body))
    assert isinstance(frame, ResultFrame)
    return METHODS["getDifference"].decode_result(frame.result)


def _median_ms(work: Callable[[], Any], runs: int) -> float:
    """The median time of ``runs`` calls of ``work``, in ms."""
    times: list[float] = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


@benchmark("protocol")
def run(ctx: BenchContext) -> list[Figure]:
    body, difference = difference_body()
    for decode in (decode_difference_frame, decode_difference_maps):
        assert decode(body) == difference, f"{decode.__name__}: not the difference encoded"
    runs = 5 if ctx.quick else 21
    decoded = _median_ms(lambda: decode_difference_frame(body), runs)
    from_maps = _median_ms(lambda: decode_difference_maps(body), runs)
    encoded = _median_ms(lambda: encode_frame(encode_result(1, difference)), runs)
    baseline = _median_ms(lambda: msgpack.unpackb(body, raw=False), runs)
    size = f"{MESSAGES:,} messages, {len(body) / 1024:,.0f} KiB"
    return [
        Figure("getDifference: decode to records", decoded, "ms", size),
        Figure("getDifference: decode via maps", from_maps, "ms", "decode_body, from_wire"),
        Figure("getDifference: encode from records", encoded, "ms", size),
        Figure("baseline: msgpack.unpackb to maps", baseline, "ms", "no checks, no records"),
        Figure("decode / baseline", decoded / baseline, "x", f"median of {runs}"),
        Figure("decode via maps / baseline", from_maps / baseline, "x", f"median of {runs}"),
        Figure("encode / baseline", encoded / baseline, "x", f"median of {runs}"),
    ]
