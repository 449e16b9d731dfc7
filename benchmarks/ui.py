"""UI benchmark: push to paint, scrolling, memory, and the choice of view class.

The real ``MainWindow`` runs offscreen (``QT_QPA_PLATFORM=offscreen``), so "painted"
means the delegate drew the row into the window's backing store; no vsync waits.

1. **Push to paint** (``_ui_push``): a mock server in its own process with 1,000
   chats makes new messages at 200 a second (plus the edits, reads and presence its
   traffic mixes in) while the client (``Account`` with its sync worker) shows the chat
   list and has the busiest chat open. Per message: from the server handing the push
   to its connections to the end of the first delegate ``paint`` of a row showing it;
   median and p99, and the stages for the open chat. Aim: p99 within one 60 Hz frame.
   Meanwhile (``_ui_input``) a key typed into the compose box and a wheel turned on the
   history and on the chat list, each timed to the paint that shows it; and the app
   process's CPU share (CPU time over wall time). Aims: p99 within a frame, < 50%.
1b. **Chat list cost** (``_ui_chat_list``): main-thread time per new message with 100
   and 5,000 chat rows loaded.
2. **View class** (``_ui_views``): one insert into a one-column list of a million rows
   in ``QListView``, ``QTreeView`` and ``QTableView``, against ``QListView`` over a
   window of 60 rows as our models are: which view a long list could use, if any.
3. **Scrolling** (``_ui_scroll``): a chat of 10,000 stored messages, scrolled from the
   newest to the first at 120 px a frame, paced at 60 Hz; the history window moves as
   it goes. Frame time median, p99 and max against a repaint alone. Aim: 60 fps.
4. **Memory** (``_ui_memory``): resident memory in a fresh process with 100,000 chats
   stored, before Qt, with the chat list shown, after scrolling it. Aim: < 300 MB.

``--quick`` shrinks every workload. The machine's other load shows in every figure.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Final

from benchmarks._ui_data import write_chats
from benchmarks.harness import BenchContext, Figure, benchmark
from postbox import Postbox

__all__ = ["run"]


@dataclass(frozen=True)
class _Config:
    chats: int
    scroll_chats: int
    view_rows: int
    inserts: int
    scroll_messages: int
    push_peers: int
    push_messages: int
    push_seconds: float
    cost_sizes: tuple[int, ...]
    cost_messages: int


_FULL: Final = _Config(
    chats=100_000,
    scroll_chats=5_000,
    view_rows=1_000_000,
    inserts=5,
    scroll_messages=10_000,
    push_peers=1_000,
    push_messages=20_000,
    push_seconds=10.0,
    cost_sizes=(100, 5_000),
    cost_messages=60,
)
_QUICK: Final = _Config(
    chats=10_000,
    scroll_chats=500,
    view_rows=100_000,
    inserts=3,
    scroll_messages=1_000,
    push_peers=1_000,
    push_messages=5_000,
    push_seconds=3.0,
    cost_sizes=(100, 5_000),
    cost_messages=20,
)
#: New messages a second during the push-to-paint measurement.
PUSH_RATE: Final = 200.0


@benchmark("ui")
def run(ctx: BenchContext) -> list[Figure]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    config = _QUICK if ctx.quick else _FULL

    # The many-chats database is written before this process loads Qt; the memory
    # figures come from a fresh process anyway.
    db = ctx.scratch / "chats.db"
    started = time.perf_counter()
    postbox = Postbox(db)
    try:
        write_chats(postbox, config.chats)
    finally:
        postbox.close()
    written = time.perf_counter() - started

    from benchmarks._ui_chat_list import measure_chat_list_cost
    from benchmarks._ui_memory import measure_memory
    from benchmarks._ui_push import measure_push_to_paint
    from benchmarks._ui_scroll import measure_scroll
    from benchmarks._ui_views import measure_view_classes

    figures = measure_push_to_paint(
        ctx.scratch,
        peers=config.push_peers,
        messages=config.push_messages,
        rate=PUSH_RATE,
        seconds=config.push_seconds,
    )
    figures += measure_chat_list_cost(
        ctx.scratch, sizes=config.cost_sizes, messages=config.cost_messages
    )
    figures += measure_view_classes(config.view_rows, config.inserts)
    figures += measure_scroll(ctx.scratch, messages=config.scroll_messages)
    figures += [Figure("memory: database written", written, "s", f"{config.chats:,} chats")]
    figures += measure_memory(db, config.chats, config.scroll_chats)
    return figures
