"""Resident memory of the window over a database with very many chats.

Runs in a spawned process, so nothing the benchmark did before counts: resident set
(``VmRSS``) with the app's modules imported but no Qt, with a ``QApplication``, with the
window showing the chat list, and after scrolling the chat list until ``scroll_chats``
chats have been loaded (the list's window grows by a page at its end); also the peak.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import statistics
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from benchmarks._ui_data import FIRST_TIMESTAMP, chat_peer
from benchmarks.harness import Figure
from postbox import MessageFlags, MessageNamespace, StoreMessage, ViewUpdateType

if TYPE_CHECKING:
    from PySide6.QtCore import QAbstractItemModel

    from ui.main_window import MainWindow
    from ui.rows import ChatRow

__all__ = ["AIM_MIB", "measure_memory"]

#: The memory aim, in MiB.
AIM_MIB: Final = 300.0
#: New messages timed through the chat list at each of its sizes.
_UPDATES: Final = 5


def _rss() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _grown(model: QAbstractItemModel, rows: int) -> bool:
    return model.rowCount() > rows


def _list_update_ms(window: MainWindow, number: int) -> float:
    """Milliseconds from committing a new message in chat ``number`` to the chat list
    having applied it and repainted (the chat moves to the top)."""
    from benchmarks._ui_qt import wait_until

    applied: list[float] = []
    apply = window.chat_model.apply

    def timed(rows: Sequence[ChatRow], update_type: ViewUpdateType) -> list[Any]:
        steps = apply(rows, update_type)
        applied.append(time.perf_counter())
        return steps

    window.chat_model.apply = timed  # type: ignore[method-assign]
    peer_id = chat_peer(number)
    message = StoreMessage(
        peer_id, int(MessageNamespace.CLOUD), 2, FIRST_TIMESTAMP + 10**8 + number,
        int(MessageFlags.INCOMING), author_id=peer_id.id, text=f"news for chat {number}",
    )  # fmt: skip
    started = time.perf_counter()
    window.account.postbox.run(lambda tx: tx.add_messages([message]))
    wait_until(lambda: bool(applied), 60, "the chat list to take a new message")
    window.chat_list.viewport().repaint()
    elapsed = (time.perf_counter() - started) * 1e3
    del window.chat_model.apply
    return elapsed


def _list_update_median(window: MainWindow, first: int) -> float:
    from benchmarks._ui_qt import run_loop

    samples = []
    for number in range(first, first + _UPDATES):
        samples.append(_list_update_ms(window, number))
        run_loop(0.05)
    return statistics.median(samples)


def _child(connection: Connection, db: str, scroll_chats: int) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import client.account  # noqa: F401 - the app's modules without Qt

    readings: dict[str, float] = {"modules": _rss()}
    from benchmarks._ui_qt import application, resident_mib, run_loop, wait_until
    from benchmarks._ui_scroll import OfflineAccount
    from ui.main_window import MainWindow

    application()
    readings["qt"] = resident_mib()[0]
    account = OfflineAccount(Path(db), "127.0.0.1", 1, "offline")
    window = MainWindow(account)
    window.resize(1100, 720)
    window.show()
    wait_until(lambda: len(window.chat_model.rows) >= 100, 60, "the chat list")
    run_loop(0.3)
    readings["window"] = resident_mib()[0]
    readings["update_first"] = _list_update_median(window, scroll_chats * 2)
    bar = window.chat_list.verticalScrollBar()
    while len(window.chat_model.rows) < scroll_chats:
        loaded = len(window.chat_model.rows)
        bar.setValue(bar.maximum())
        wait_until(
            functools.partial(_grown, window.chat_model, loaded), 60, "the chat list to grow"
        )
        window.chat_list.viewport().repaint()
    run_loop(0.3)
    readings["scrolled"], readings["peak"] = resident_mib()
    readings["rows"] = len(window.chat_model.rows)
    readings["update_scrolled"] = _list_update_median(window, scroll_chats * 2 + _UPDATES)
    window.close_feeds()
    account.close()
    connection.send(readings)


def measure_memory(db: Path, chats: int, scroll_chats: int) -> list[Figure]:
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_child, args=(theirs, str(db), scroll_chats), daemon=True)
    process.start()
    try:
        readings: dict[str, float] = ours.recv()
    finally:
        process.join(timeout=60)
    scrolled = readings["scrolled"]
    ratio = readings["update_scrolled"] / readings["update_first"]
    verdict = f"aim < {AIM_MIB:.0f} MiB: {'met' if readings['peak'] < AIM_MIB else 'MISSED'}"
    return [
        Figure(
            "memory: modules, before Qt", readings["modules"], "MiB", "postbox, sync, client; no Qt"
        ),
        Figure(
            "memory: QApplication", readings["qt"], "MiB", "PySide6 and ui imported: the baseline"
        ),
        Figure(
            "memory: window, chat list shown",
            readings["window"],
            "MiB",
            f"{chats:,} chats stored; +{readings['window'] - readings['qt']:.1f} over baseline",
        ),
        Figure(
            "memory: after scrolling the chat list",
            scrolled,
            "MiB",
            f"{readings['rows']:,.0f} chats loaded in the list",
        ),
        Figure("memory: peak", readings["peak"], "MiB", verdict),
        Figure(
            "chat list: new message, 100 rows loaded",
            readings["update_first"],
            "ms",
            f"commit to applied and repainted, median of {_UPDATES}",
        ),
        Figure(
            f"chat list: new message, {readings['rows']:,.0f} rows loaded",
            readings["update_scrolled"],
            "ms",
            f"the same after scrolling; {ratio:.1f} x",
        ),
    ]
