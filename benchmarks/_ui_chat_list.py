"""Main-thread time per new message, by how many chat rows the list holds.

The chat list is a window that grows as the reader scrolls down it; every chat in it
is a row of the model. ``write_chats`` stores the chats (no server); the real window
shows the list with ``rows`` rows loaded; then one message at a time arrives in a chat
low in the window, which moves it to the top. Per message: the main thread's CPU time
(``time.thread_time``) from the commit to the first paint of the list after the chat
reached the top (snapshot delivery, model update, layout, paint; the event loop's own
wake-ups included), and its wall time.
"""

from __future__ import annotations

import functools
import statistics
import time
from pathlib import Path
from typing import Final

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from benchmarks._ui_data import FIRST_TIMESTAMP, write_chats
from benchmarks._ui_qt import application, run_loop, wait_until
from benchmarks._ui_scroll import OfflineAccount
from benchmarks.harness import Figure, percentile
from postbox import (
    ChatListViewKey,
    MessageFlags,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    Postbox,
    StoreMessage,
    Transaction,
)
from ui.main_window import MainWindow
from ui.rows import ChatRow

__all__ = ["measure_chat_list_cost"]

_CLOUD: Final = int(MessageNamespace.CLOUD)


class _Paints(QObject):
    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _grow_list(window: MainWindow, rows: int) -> None:
    """Show ``rows`` chats, as scrolling down the list page by page would."""
    window._chat_count = rows
    window._chat_key = ChatListViewKey(PeerGroupId.ROOT, rows)
    window._chat_feed.close()
    window._chat_feed = window._open_chat_list()
    wait_until(lambda: len(window.chat_model.rows) >= rows, 120, f"{rows} chat rows")
    run_loop(0.3)


def _store(peer_id: int, message_id: int, timestamp: int, tx: Transaction) -> None:
    tx.add_messages(
        [
            StoreMessage(
                PeerId(peer_id),
                _CLOUD,
                message_id,
                timestamp,
                int(MessageFlags.INCOMING),
                author_id=PeerId(peer_id).id,
                text=f"message {message_id}: on my way, see you at the station",
            )
        ]
    )


def _messages(
    window: MainWindow, postbox: Postbox, count: int, first: int
) -> tuple[list[float], list[float]]:
    """``count`` messages one at a time; the CPU and the wall milliseconds of each."""
    paints = _Paints(window.chat_list.viewport())
    samples: list[float] = []
    walls: list[float] = []
    for n in range(count):
        rows = window.chat_model.rows
        target = rows[len(rows) * 2 // 3 + n % max(1, len(rows) // 4)]
        assert isinstance(target, ChatRow)
        timestamp = FIRST_TIMESTAMP + 10_000_000 + first + n
        cpu, wall = time.thread_time(), time.monotonic()
        postbox.run(functools.partial(_store, target.peer_id, 10 + first + n, timestamp))
        painted_before = [paints.count]

        def shown(peer: int = target.peer_id, before: list[int] = painted_before) -> bool:
            top = window.chat_model.rows[0]
            if top.peer_id != peer:
                before[0] = paints.count
                return False
            return paints.count > before[0]

        wait_until(shown, 30, "the chat at the top, painted")
        samples.append((time.thread_time() - cpu) * 1e3)
        walls.append((time.monotonic() - wall) * 1e3)
    return samples, walls


def measure_chat_list_cost(scratch: Path, *, sizes: tuple[int, ...], messages: int) -> list[Figure]:
    db = scratch / "chat_list_cost.db"
    postbox = Postbox(db)
    try:
        write_chats(postbox, max(sizes) + 10)
    finally:
        postbox.close()
    app = application()
    account = OfflineAccount(db, "127.0.0.1", 1, "offline")
    window = MainWindow(account)
    figures: list[Figure] = []
    try:
        window.resize(1100, 720)
        window.show()
        wait_until(lambda: len(window.chat_model.rows) >= min(sizes), 60, "the chat list")
        for number, rows in enumerate(sizes):
            _grow_list(window, rows)
            cpu, wall = _messages(window, account.postbox, messages, first=number * messages)
            figures += [
                Figure(
                    f"chat list, {rows:,} rows: main thread per message",
                    statistics.median(cpu),
                    "ms CPU",
                    f"median of {messages}; p99 {percentile(cpu, 99):.1f} ms",
                ),
                Figure(
                    f"chat list, {rows:,} rows: commit to painted",
                    statistics.median(wall),
                    "ms",
                    f"median wall time; p99 {percentile(wall, 99):.1f} ms",
                ),
            ]
    finally:
        window.close_feeds()
        window.close()
        window.deleteLater()
        account.close()
        app.processEvents()
    return figures
