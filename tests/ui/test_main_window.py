"""The window against a live server: the chat list fills, a chat opens, a message is sent."""

from __future__ import annotations

import dataclasses
import socket
import threading

import pytest
from PySide6.QtCore import Qt

from client.account import Account
from client.app import display_problem
from postbox import PeerId, UpdateKind, ViewUpdateType
from sync.server.config import ServerConfig
from sync.server.pushes import push_for
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from tests.ui.conftest import loaded
from ui.main_window import MainWindow
from ui.rows import ChatRow, MessageRow

pytestmark = pytest.mark.gui

TOKEN = "ui"
TEXT = "hello from the UI"


def test_the_chat_list_fills_and_a_chat_opens(qtbot, window) -> None:
    main, _server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    rows = [row for row in main.chat_model.rows if isinstance(row, ChatRow) and not row.is_hole]
    assert rows[0].pinned  # pinned chats lead
    qtbot.waitUntil(lambda: not main.connection_label.isVisible(), timeout=20_000)
    main.chat_list.setCurrentIndex(main.chat_model.index(0, 0))
    qtbot.waitUntil(
        lambda: any(isinstance(r, MessageRow) for r in main.history_model.rows), timeout=20_000
    )
    assert main.header.text() == rows[0].title


def test_opening_a_chat_reads_it(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)

    def unread_chats() -> list[ChatRow]:
        rows = main.chat_model.rows
        return [r for r in rows if isinstance(r, ChatRow) and r.unread and r.peer_id >> 56 != 2]

    server.call(lambda s: s.service.generate(20))
    qtbot.waitUntil(lambda: bool(unread_chats()), timeout=20_000)
    unread = unread_chats()[0]
    main.open_chat(PeerId(unread.peer_id), unread.title)

    def badge() -> int:
        position = main.chat_model.row_of(unread.peer_id)
        assert position is not None
        row: ChatRow = main.chat_model.rows[position]
        return row.unread

    qtbot.waitUntil(lambda: badge() == 0, timeout=20_000)
    top = server.call(lambda s: s.store.recent_messages(unread.peer_id, 1)[0].id)
    qtbot.waitUntil(
        lambda: server.call(lambda s: s.store.read_marks(unread.peer_id))[0] == top,
        timeout=20_000,
    )


def test_sending_goes_pending_then_sent(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    user = next(
        row for row in main.chat_model.rows if isinstance(row, ChatRow) and row.peer_id >> 56 == 0
    )
    main.open_chat(PeerId(user.peer_id), user.title)
    qtbot.waitUntil(lambda: len(main.history_model.rows) > 0, timeout=20_000)
    # Hold the server's loop so the message cannot be confirmed before it shows pending.
    gate = threading.Event()
    holder = threading.Thread(target=lambda: server.call(lambda _s: gate.wait(20)))
    holder.start()
    try:
        main.compose.setText(TEXT)
        main.chat_pane.send_button.click()
        assert main.compose.text() == ""

        def delivery() -> list[str | None]:
            rows = main.history_model.rows
            return [r.delivery for r in rows if isinstance(r, MessageRow) and r.text == TEXT]

        qtbot.waitUntil(lambda: delivery() == ["pending"], timeout=10_000)
    finally:
        gate.set()
        holder.join()

    def sent() -> bool:
        mine = [r for r in main.history_model.rows if isinstance(r, MessageRow) and r.text == TEXT]
        return len(mine) == 1 and mine[0].delivery in ("sent", "read")

    qtbot.waitUntil(sent, timeout=20_000)
    texts = server.call(lambda s: [m.text for m in s.store.recent_messages(user.peer_id, 3)])
    assert TEXT in texts


def test_a_message_forwarded_from_the_menu_reaches_the_server(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    chats = [r for r in main.chat_model.rows if isinstance(r, ChatRow) and not r.is_hole]
    group = next(r for r in chats if r.peer_id >> 56 == 1)
    user = next(r for r in chats if r.peer_id >> 56 == 0)
    main.open_chat(PeerId(group.peer_id), group.title)
    qtbot.waitUntil(
        lambda: any(r.namespace == 0 for r in main.history_model.rows if isinstance(r, MessageRow)),
        timeout=20_000,
    )
    source = [r for r in main.history_model.rows if isinstance(r, MessageRow)][-1]
    menu = {a.text(): a for a in main.chat_pane.message_menu(source).actions()}
    menu["Forward…"].trigger()
    assert main.forward_picker is not None
    qtbot.keyClicks(main.forward_picker.filter, user.title)
    qtbot.keyClick(main.forward_picker.filter, Qt.Key.Key_Return)
    assert main.chat_pane.peer_id == user.peer_id

    def forwarded() -> list[MessageRow]:
        rows = main.history_model.rows
        return [r for r in rows if isinstance(r, MessageRow) and r.forwarded_from]

    # Sent: the pending copy became the server's, still saying where it came from.
    qtbot.waitUntil(
        lambda: (
            [(r.namespace, r.delivery in ("sent", "read")) for r in forwarded()[-1:]] == [(0, True)]
        ),
        timeout=20_000,
    )
    top = server.call(lambda s: s.store.recent_messages(user.peer_id, 1))[0]
    assert top.forward is not None and top.text == source.text
    assert forwarded()[-1].id == top.id


def test_without_a_display_the_app_says_how_to_proceed(monkeypatch) -> None:
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    problem = display_problem()
    assert problem is not None and "xvfb-run" in problem
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None


def test_missing_qt_system_libraries_are_named_with_their_packages(monkeypatch) -> None:
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    missing = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    problem = display_problem(loads=lambda library: library not in missing)
    assert problem is not None
    assert problem.endswith("apt-get install libxcb-icccm4 libxcb-keysyms1")
    assert display_problem(loads=lambda _library: True) is None


@pytest.mark.parametrize("window", [{"peers": 12, "messages": 4_000}], indirect=True)
def test_scrolling_up_fills_holes_in_place_and_new_messages_animate_in(qtbot, window) -> None:
    """Against the real engine: every fill that lands while the reader sits at the top
    (on the loading row) leaves the message they were looking at where it was, without
    animation; at the bottom, a pushed message grows in and moves its chat to the top."""
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    sizes = dict(server.call(lambda s: s.store.chat_sizes()))
    chat = max(
        (r for r in main.chat_model.rows if isinstance(r, ChatRow) and r.peer_id >> 56 != 2),
        key=lambda r: sizes.get(r.peer_id, 0),
    )
    oldest = server.call(lambda s: min(m.id for m in s.store.recent_messages(chat.peer_id, 10_000)))
    main.open_chat(PeerId(chat.peer_id), chat.title)
    history = main.history
    ids = lambda: {r.id for r in main.history_model.rows if isinstance(r, MessageRow)}  # noqa: E731
    qtbot.waitUntil(lambda: len(ids()) > 5, timeout=20_000)
    # Every update while reading (a fill, or the window moving) must leave the message
    # at the top where it was; count those that put rows above it.
    inserted_above: list[tuple[bool, bool]] = []  # (the top message stayed, still)
    show_rows = history.show_rows

    def watched(rows, update) -> None:
        anchor = None if history.at_bottom() else history.top_row()
        before = None if anchor is None else main.history_model.row_of(anchor[0])
        show_rows(rows, update)
        if anchor is None or update.kind is UpdateKind.GENERIC:
            return
        key, top = anchor
        position = main.history_model.row_of(key)
        assert position is not None
        assert history.visualRect(main.history_model.index(position, 0)).top() == top
        assert not history.animator.running
        if before is not None and position > before:
            inserted_above.append((True, True))

    history.show_rows = watched
    while oldest not in ids():
        history.verticalScrollBar().setValue(0)
        top_key = main.history_model.rows[0].key
        qtbot.waitUntil(
            lambda top_key=top_key: (
                oldest in ids()
                or main.history_model.rows[0].key != top_key
                or (not main.chat_pane._moving and history.verticalScrollBar().value() > 0)
            ),
            timeout=20_000,
        )
    assert inserted_above
    del history.show_rows  # a jump to the bottom replaces every row: no place to keep
    # Back at the bottom, a new message arrives live.
    main.chat_pane.jump_to_bottom()
    qtbot.waitUntil(lambda: history.at_bottom() and main.chat_pane.at_live_edge(), timeout=20_000)
    texts = {r.text for r in main.history_model.rows if isinstance(r, MessageRow)}
    server.call(
        lambda s: s.push(
            [
                push_for(
                    s.store, s.store.add_message(chat.peer_id, out=False, author=None, text="ping")
                )
            ]
        )
    )
    qtbot.waitUntil(
        lambda: (
            "ping" in {r.text for r in main.history_model.rows if isinstance(r, MessageRow)} - texts
        ),
        timeout=20_000,
    )
    key = next(
        r.key for r in main.history_model.rows if isinstance(r, MessageRow) and r.text == "ping"
    )
    assert key in history.animator.progress  # growing in
    assert history.at_bottom()
    qtbot.waitUntil(
        lambda: main.chat_model.rows[0].peer_id == chat.peer_id or main.chat_model.rows[0].pinned,
        timeout=20_000,
    )


def test_the_profile_loads_contact_status_and_media_counts_from_the_server(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    users = [r for r in main.chat_model.rows if isinstance(r, ChatRow) and r.peer_id >> 56 == 0]

    def expected(peer: int) -> str:
        full = server.call(lambda s: s.store.full_peer(peer))
        if full.peer.flags & 2:  # a bot
            return "—"
        return "in your contacts" if full.contact else "not a contact"

    wanted = {row.peer_id: expected(row.peer_id) for row in users}
    assert "in your contacts" in wanted.values()
    profile = main.profile
    for row in users[:4]:
        main.open_chat(PeerId(row.peer_id), row.title)
        main.chat_pane.info_button.setChecked(True)
        want = wanted[row.peer_id]
        qtbot.waitUntil(lambda want=want: profile.contact.text() == want, timeout=20_000)
        qtbot.waitUntil(lambda: "…" not in profile.media_counts[1].text(), timeout=20_000)


def test_a_chat_moving_in_the_list_never_opens_another_by_itself(qtbot, window) -> None:
    main, _server = window
    qtbot.waitUntil(lambda: loaded(main), timeout=20_000)
    rows = list(main.chat_model.rows)
    main.chat_list.setCurrentIndex(main.chat_model.index(5, 0))  # the user opens row 5
    opened = rows[5]
    assert isinstance(opened, ChatRow) and main.open_peer == PeerId(opened.peer_id)
    # A new message moves that chat to the top: its neighbour must not open.
    moved = [opened, *rows[:5], *rows[6:]]
    main.show_chat_rows(moved, ViewUpdateType.GENERIC)
    assert main.open_peer == PeerId(opened.peer_id)
    assert main.header.text() == opened.title
    selected = main.chat_list.selectionModel().selectedIndexes()
    assert [index.row() for index in selected] == [0]


@pytest.mark.parametrize("window", [{"peers": 60, "messages": 3_000}], indirect=True)
def test_live_traffic_never_moves_the_open_chat_or_the_rows_in_view(qtbot, window) -> None:
    main, server = window
    qtbot.waitUntil(lambda: len(main.chat_model.rows) >= 50 and loaded(main), timeout=30_000)
    main.resize(900, 600)
    main.chat_list.setCurrentIndex(main.chat_model.index(5, 0))  # the user opens a chat
    opened = main.chat_model.rows[5]
    assert isinstance(opened, ChatRow)
    bar = main.chat_list.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(bar.maximum() // 2)  # and scrolls the list down
    shifts: list[int] = []
    calls: list[int] = []
    original = main.show_chat_rows

    def checked(rows, update) -> None:
        calls.append(len(rows))
        in_view = main._chat_list_anchors()
        original(rows, update)
        # The first row in view that did not itself move is where it was.
        for key, top in in_view:
            row = main.chat_model.row_of(key)
            if row is not None and key not in main.chat_model.last_moved:
                rect = main.chat_list.visualRect(main.chat_model.index(row, 0))
                shifts.append(rect.top() - top)
                break

    main.show_chat_rows = checked
    # Traffic in rounds: a busy main thread merges a whole burst into one update.
    for _round in range(20):
        if len(shifts) >= 3:
            break
        before = len(calls)
        server.call(lambda s: s.service.generate(100, "message"))
        qtbot.waitUntil(lambda before=before: len(calls) > before, timeout=30_000)
    assert len(shifts) >= 3
    qtbot.wait(300)
    assert bar.value() > 0
    assert set(shifts) == {0}
    assert main.open_peer == PeerId(opened.peer_id)
    assert main.chat_pane.peer_id == PeerId(opened.peer_id)
    assert main.header.text() == opened.title
    selected = main.chat_list.selectionModel().selectedIndexes()
    assert [main.chat_model.rows[i.row()].key for i in selected] == [opened.key]


def test_a_refused_token_is_said_in_a_sentence_and_retrying_stops(qtbot, tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=2, peers=5, messages=50)) as server:
        account = Account(tmp_path / "c.db", "127.0.0.1", server.port, "wrong", timeouts=FAST)
        account.start()
        main = MainWindow(account)
        qtbot.addWidget(main)
        main.show()
        try:
            qtbot.waitUntil(
                lambda: main.connection_label.text().startswith("The server refused this token"),
                timeout=20_000,
            )
            assert not main._status_timer.isActive()
            assert not main.retry_button.isVisible()
            main._poll_status()  # asking again after the engine stopped is harmless
            qtbot.wait(50)
        finally:
            main.close_feeds()
            account.close()


def test_without_a_server_the_window_says_when_it_retries(qtbot, tmp_path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The first wait is long: only the button makes the next attempt come sooner.
    slow = dataclasses.replace(FAST, reconnect_min=60.0, reconnect_max=60.0)
    account = Account(tmp_path / "c.db", "127.0.0.1", port, TOKEN, timeouts=slow)
    account.start()
    main = MainWindow(account)
    qtbot.addWidget(main)
    main.show()
    try:
        qtbot.waitUntil(
            lambda: main.connection_label.text().startswith(
                "Waiting for network: connection refused. Retrying in"
            ),
            timeout=20_000,
        )
        assert main.retry_button.isVisible()

        def attempts_made() -> int:
            status = account.status()
            assert status is not None
            return status.counters["connection_attempts"]

        attempts = attempts_made()
        main.retry_button.click()
        qtbot.waitUntil(lambda: attempts_made() > attempts, timeout=5_000)
    finally:
        main.close_feeds()
        account.close()
