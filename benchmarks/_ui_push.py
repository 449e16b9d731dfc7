"""Server push to row painted: the real Account and MainWindow against live traffic.

The server (``_ui_server``, its own process) records when it hands each new-message
push to the connections. Here, on one monotonic clock: the commit that stores the
message (a commit listener, postbox thread), the moment the model holds it (after
``HistoryListView.show_rows`` for the open chat, ``ChatListModel.apply`` for the list)
and the end of the first delegate ``paint`` of a row that shows it. A live history row
grows in from nothing: its first paint is at opacity 0, so the first paint with its
appearance begun is timed apart. A chat-list row shows a chat's newest message; which
one is read from the snapshot the list was given, since ``ChatRow`` carries no id.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QListView, QStyleOptionViewItem

from benchmarks._ui_input import InputProbe, InputTimes
from benchmarks._ui_qt import application, run_loop, wait_until
from benchmarks._ui_server import MESSAGE_SHARE, TOKEN, ServerProcess
from benchmarks._ui_stages import EngineStages
from benchmarks.harness import Figure, percentile
from client.account import Account
from postbox import (
    ChangeRecord,
    ChatListHoleEntry,
    ChatListMessageEntry,
    ChatListView,
    ChatListViewKey,
    InsertMessage,
    PeerGroupId,
    PeerId,
    ViewUpdateType,
)
from ui.delegates import ChatListDelegate, HistoryDelegate
from ui.history_view import HistoryListView
from ui.main_window import MainWindow
from ui.models import RowModel
from ui.rows import ChatRow, HistoryRow, LoadingRow, MessageRow

__all__ = ["AIM_MS", "measure_push_to_paint"]

#: One frame at 60 Hz.
AIM_MS = 1000 / 60
_Key = tuple[int, int]
_Index = QModelIndex | QPersistentModelIndex


class _Probe:
    """Times each message at every stage; records only while ``active``."""

    def __init__(self) -> None:
        self.active = False
        self.committed: dict[_Key, float] = {}
        self.applied: dict[_Key, float] = {}
        self.painted_history: dict[_Key, float] = {}
        #: First history paint with the row's appearance under way (opacity > 0).
        self.seen_history: dict[_Key, float] = {}
        self.painted_any: dict[_Key, float] = {}
        #: The message each chat-list row shows now, by peer.
        self.shown_in_list: dict[int, _Key] = {}

    def on_commit(self, record: ChangeRecord) -> None:  # on the postbox thread
        if not self.active:
            return
        now = time.monotonic()
        for peer_id, operations in record.message_operations.items():
            for operation in operations:
                if isinstance(operation, InsertMessage):
                    self.committed.setdefault((int(peer_id), operation.index.id.id), now)

    def chat_list_applied(self, view: ChatListView) -> None:
        now = time.monotonic()
        for entry in view.entries:
            if isinstance(entry, ChatListMessageEntry) and entry.message is not None:
                key = (int(entry.peer_id), entry.message.id.id)
                self.shown_in_list[key[0]] = key
                if self.active:
                    self.applied.setdefault(key, now)

    def history_applied(self, rows: Sequence[HistoryRow]) -> None:
        if not self.active:
            return
        now = time.monotonic()
        for row in rows:
            if isinstance(row, MessageRow):
                self.applied.setdefault((row.peer_id, row.id), now)

    def painted(self, row: object, *, history: bool, appearing: float = 1.0) -> None:
        if not self.active:
            return
        key: _Key | None = None
        if isinstance(row, MessageRow):
            key = (row.peer_id, row.id)
        elif isinstance(row, ChatRow) and not row.is_hole:
            key = self.shown_in_list.get(row.peer_id)
        if key is None:
            return
        now = time.monotonic()
        self.painted_any.setdefault(key, now)
        if history:
            self.painted_history.setdefault(key, now)
            if appearing > 0.0:
                self.seen_history.setdefault(key, now)


def _row(index: _Index) -> object:
    """The row painted at ``index``, read as the delegates read it (no call through
    ``data``, which would add Python work to every paint timed)."""
    model = index.model()
    return model.rows[index.row()] if isinstance(model, RowModel) else None


class _TimedHistoryDelegate(HistoryDelegate):
    def __init__(self, view: HistoryListView, probe: _Probe) -> None:
        super().__init__(view, view.animator.progress)
        self._probe = probe
        self._appearing = view.animator.progress

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        super().paint(painter, option, index)
        row = _row(index)
        appearing = self._appearing.get(row.key, 1.0) if isinstance(row, MessageRow) else 1.0
        self._probe.painted(row, history=True, appearing=appearing)


class _TimedChatListDelegate(ChatListDelegate):
    def __init__(self, view: QListView, probe: _Probe) -> None:
        super().__init__(view)
        self._probe = probe

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        super().paint(painter, option, index)
        self._probe.painted(_row(index), history=False)


def _instrument(window: MainWindow, probe: _Probe) -> None:
    """Time both delegates' paints (subclasses put in their place), the history's
    ``show_rows`` and the chat list model's ``apply``."""
    window.history.setItemDelegate(_TimedHistoryDelegate(window.history, probe))
    window.chat_list.setItemDelegate(_TimedChatListDelegate(window.chat_list, probe))
    show_rows = window.history.show_rows

    def timed_show_rows(rows: Sequence[HistoryRow], update_type: ViewUpdateType) -> None:
        show_rows(rows, update_type)
        probe.history_applied(rows)

    window.history.show_rows = timed_show_rows  # type: ignore[method-assign]
    apply = window.chat_model.apply

    def timed_apply(rows: Sequence[ChatRow], update_type: ViewUpdateType) -> list[Any]:
        steps = apply(rows, update_type)
        # No public hook gives the message a chat row shows: the window keeps the
        # snapshot it is applying in ``_chat_view``.
        view = window._chat_view
        if isinstance(view, ChatListView):
            probe.chat_list_applied(view)
        return steps

    window.chat_model.apply = timed_apply  # type: ignore[method-assign]


def _history_settled(window: MainWindow) -> bool:
    rows = window.history_model.rows
    messages = sum(isinstance(r, MessageRow) for r in rows)
    return messages >= 20 or (messages > 0 and not isinstance(rows[0], LoadingRow))


def _wait_idle(account: Account, settle: float, timeout: float) -> None:
    """Run the event loop until the sync engine has been idle ``settle`` s in a row."""
    deadline = time.monotonic() + timeout
    idle_since: float | None = None
    while time.monotonic() < deadline:
        if account.worker.call(lambda engine: engine.idle):
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return
        else:
            idle_since = None
        run_loop(0.02)
    raise TimeoutError("the sync engine did not settle")


def _engine_counters(account: Account) -> dict[str, int]:
    status = account.status()
    return dict(status.counters) if status is not None else {}


def _sync_whole_chat_list(account: Account, peers: int) -> None:
    """Keep a chat-list view over every chat open until no hole is left in it (the
    hole filler fetches the dialogs page by page), then settle."""
    key = ChatListViewKey(PeerGroupId.ROOT, peers + 10)
    views: list[Any] = []
    subscription = account.postbox.combined_view([key], callback=lambda c: views.append(c[key]))
    try:
        wait_until(
            lambda: (
                bool(views) and not any(isinstance(e, ChatListHoleEntry) for e in views[-1].entries)
            ),
            180,
            "the whole chat list",
        )
    finally:
        subscription.dispose()
    _wait_idle(account, settle=0.5, timeout=120)


def _stats(
    name: str, samples: list[float], note: str = "", aim: bool = False, unit: str = "msgs"
) -> list[Figure]:
    if not samples:
        return [Figure(f"{name}: count", 0, unit, "nothing measured")]
    p99 = percentile(samples, 99)
    verdict = f"aim <= {AIM_MS:.1f} ms: {'met' if p99 <= AIM_MS else 'MISSED'}" if aim else ""
    return [
        Figure(f"{name}: count", len(samples), unit, note),
        Figure(f"{name}: median", statistics.median(samples), "ms"),
        Figure(f"{name}: p99", p99, "ms", verdict),
    ]


def _between(start: dict[_Key, float], end: dict[_Key, float], keys: Sequence[_Key]) -> list[float]:
    return [(end[k] - start[k]) * 1e3 for k in keys if k in start and k in end]


@dataclass(frozen=True)
class _CpuShare:
    """Wall time of the traffic, and the CPU time the app and its main thread used."""

    wall: float
    process: float
    main_thread: float


def _input_figures(times: InputTimes, cpu: _CpuShare) -> list[Figure]:
    """Key and wheel to paint, and the app's CPU share, during the traffic."""
    figures: list[Figure] = []
    for name, samples in (
        ("keypress-to-paint, compose box", times.keypress),
        ("wheel-to-paint, history", times.wheel_history),
        ("wheel-to-paint, chat list", times.wheel_chat_list),
    ):
        note = "events posted to the main thread during the traffic"
        figures += _stats(name, samples, note, aim=True, unit="events")
    figures += [
        Figure(
            "  input events never shown",
            times.unshown,
            "events",
            "no paint showed them before the next was posted",
        ),  # fmt: skip
        Figure(
            "app CPU share during the traffic",
            100 * cpu.process / cpu.wall,
            "% of a core",
            f"process CPU / wall over {cpu.wall:.1f} s (the server runs in its own process);"
            f" aim < 50%: {'met' if cpu.process / cpu.wall < 0.5 else 'MISSED'}",
        ),
        Figure("  main thread CPU share", 100 * cpu.main_thread / cpu.wall, "% of a core"),
    ]
    return figures


def measure_push_to_paint(
    scratch: Path, *, peers: int, messages: int, rate: float, seconds: float
) -> list[Figure]:
    """``rate`` new messages a second for ``seconds`` across ``peers`` chats, with the
    busiest chat open."""
    app = application()
    server = ServerProcess(peers=peers, messages=messages)
    info = server.info
    account = Account(scratch / "push.db", "127.0.0.1", info.port, TOKEN).start()
    window = MainWindow(account)
    probe = _Probe()
    remove_listener = account.postbox.add_commit_listener(probe.on_commit)
    try:
        window.resize(1100, 720)
        window.show()
        _instrument(window, probe)
        wait_until(lambda: len(window.chat_model.rows) >= min(20, peers), 120, "the chat list")
        # Steady state: the client has synced its whole chat list (every peer and channel
        # known), as it has after its first minutes. Without it each first message from
        # an unknown user costs a getDifference and each unknown channel a poll.
        _sync_whole_chat_list(account, peers)
        window.open_chat(PeerId(info.busiest_peer), info.busiest_title)
        wait_until(lambda: _history_settled(window), 60, "the open chat's history")
        _wait_idle(account, settle=0.5, timeout=120)
        counters_before = _engine_counters(account)
        inputs = InputProbe(window.compose, window.history, window.chat_list)
        stages = EngineStages(account)
        probe.active = stages.active = True
        started = time.monotonic()
        cpu_started, main_started = time.process_time(), time.thread_time()
        server.start_traffic(rate / MESSAGE_SHARE, seconds)
        inputs.start()
        run_loop(seconds)
        inputs.stop()
        cpu = _CpuShare(
            time.monotonic() - started,
            time.process_time() - cpu_started,
            time.thread_time() - main_started,
        )
        events = server.traffic_done()
        elapsed = time.monotonic() - started
        _wait_idle(account, settle=0.5, timeout=60)
        run_loop(0.3)  # the last paints
        probe.active = stages.active = False
        counters = _engine_counters(account)
        engine_work = {
            name: counters.get(name, 0) - counters_before.get(name, 0)
            for name in ("differences", "gaps", "channel_differences", "updates_applied")
        }
        merged = window.chat_pane._feed.merged if window.chat_pane._feed else 0
        sent = server.push_times()
    finally:
        remove_listener()
        window.close_feeds()
        window.close()
        window.deleteLater()
        account.close()
        server.close()
        app.processEvents()

    pushed = [k for k in sent if k in probe.committed]
    in_chat = [k for k in pushed if k[0] == info.busiest_peer]
    any_row = _between(sent, probe.painted_any, pushed)
    history = _between(sent, probe.painted_history, in_chat)
    unpainted = len(pushed) - len(any_row)
    figures = [
        Figure(
            "push-to-paint: setup",
            peers,
            "chats",
            f"{messages:,} messages on the server; open: {info.busiest_title!r}"
            f" ({info.busiest_messages:,} messages)",
        ),
        Figure(
            "push-to-paint: new messages pushed",
            len(pushed) / elapsed,
            "msgs/s",
            f"{len(pushed):,} in {elapsed:.1f} s among {events:,} events (edits, reads, presence)",
        ),
    ]
    figures += _stats(
        "push-to-paint, any row",
        any_row,
        f"first paint of a chat-list or history row; {unpainted:,} never painted"
        " (a newer message or newer chats got there before a frame)",
        aim=True,
    )
    figures += _stats(
        "push-to-paint, open history",
        history,
        f"messages of the open chat ({len(in_chat):,} pushed)",
        aim=True,
    )
    seen = _between(sent, probe.seen_history, in_chat)
    figures += _stats(
        "push-to-paint, open history, fade begun",
        seen,
        "first paint with the row's appearance under way (opacity > 0)",
    )
    figures.append(
        Figure(
            "  engine work during the run",
            engine_work["differences"],
            "diffs",
            ", ".join(f"{value:,} {name.replace('_', ' ')}" for name, value in engine_work.items())
            + f"; {merged:,} history snapshots merged into later ones",
        )
    )
    figures += _input_figures(inputs.times, cpu)
    push_commit = _between(sent, probe.committed, pushed)
    figures += [
        Figure("  push -> commit: median", statistics.median(push_commit), "ms", "all messages"),
        Figure("  push -> commit: p99", percentile(push_commit, 99), "ms"),
    ]
    figures += stages.figures()
    for name, start, end in (
        ("push -> commit", sent, probe.committed),
        ("commit -> model", probe.committed, probe.applied),
        ("model -> painted", probe.applied, probe.painted_history),
    ):
        values = _between(start, end, in_chat)
        if values:
            figures.append(
                Figure(
                    f"  open history {name}: median",
                    statistics.median(values),
                    "ms",
                    f"p99 {percentile(values, 99):.1f} ms",
                )
            )
    return figures
