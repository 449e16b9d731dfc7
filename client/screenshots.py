"""Drive the real app offscreen through a few states and save screenshots.

``python -m client.screenshots [OUT_DIR]`` (default ``resources/screenshots``) starts
an embedded server with a fixed seed, the sync worker and the window on the offscreen
platform, waits until the chat list is loaded, opens the busiest chats, sends a message
and a reply, opens the sticker picker and sends a sticker from it, opens a message's
menu, a chat with unread messages, the narrow layout, a window with no server and two
accounts' windows talking, and saves a PNG at each step.

``python -m client.screenshots --captures [OUT_DIR]`` (default ``resources/captures``)
records two of the guided tour's steps as animated PNGs instead (``record_captures``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "offscreen_app",
    "record_captures",
    "run_until",
    "shut_down_qt",
    "take_screenshots",
]


def run_until(app: object, condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Run the Qt event loop until ``condition`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not reach the expected state")
        app.processEvents()  # type: ignore[attr-defined]
        time.sleep(0.005)


def offscreen_app() -> Any:
    """The Qt application on the offscreen platform (unless another was chosen), in the
    light theme: what the screenshots and captures are taken in."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ui.garbage import MainThreadCollector
    from ui.theme import apply_theme

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    apply_theme(app, "light")
    if not any(collector.active for collector in app.findChildren(MainThreadCollector)):
        MainThreadCollector(app).start()
    return app


def shut_down_qt() -> None:
    """Tear Qt down before the interpreter does."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        app.shutdown()


def take_screenshots(out: Path) -> list[Path]:
    app = offscreen_app()
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter

    from client.account import Account
    from postbox import MessageId, MessageTags, PeerId
    from sync.server import EmbeddedServer, ServerConfig
    from ui.main_window import MainWindow
    from ui.rows import ChatRow, LoadingRow, MessageRow, UnreadRow
    from ui.theme import apply_theme

    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    with (
        tempfile.TemporaryDirectory() as scratch,
        EmbeddedServer(ServerConfig(token="shots", seed=1, rate=0, messages=20_000)) as server,
    ):
        account = Account(Path(scratch) / "client.db", "127.0.0.1", server.port, "shots")
        account.start()
        window = MainWindow(account)
        window.resize(1100, 720)
        window.show()

        def chats() -> list[ChatRow]:
            return [r for r in window.chat_model.rows if isinstance(r, ChatRow) and not r.is_hole]

        def history_settled() -> bool:
            rows = window.history_model.rows
            messages = sum(isinstance(r, MessageRow) for r in rows)
            return messages >= 20 or (messages > 0 and not isinstance(rows[0], LoadingRow))

        def shot(name: str) -> None:
            run_until(app, lambda: not window.history.animator.running)
            app.processEvents()
            path = out / name
            window.grab().save(str(path))
            saved.append(path)

        try:
            run_until(app, lambda: len(chats()) >= 20)
            shot("chat-list.png")
            sizes = dict(server.call(lambda s: s.service.store.chat_sizes()))
            group = max(
                (r for r in chats() if r.peer_id >> 56 == 1), key=lambda r: sizes.get(r.peer_id, 0)
            )
            window.open_chat(PeerId(group.peer_id), group.title)
            run_until(app, history_settled)
            shot("group-history.png")
            user = next(r for r in chats() if r.peer_id >> 56 == 0 and not r.pinned)
            window.open_chat(PeerId(user.peer_id), user.title)
            run_until(app, history_settled)
            window.compose.setText("Sent from the screenshot script")
            window.send()
            sent = "Sent from the screenshot script"

            def delivered() -> bool:
                return any(
                    isinstance(r, MessageRow) and r.text == sent and r.delivery == "sent"
                    for r in window.history_model.rows
                )

            run_until(app, delivered)
            shot("sent-message.png")
            incoming = [r for r in window.history_model.rows
                        if isinstance(r, MessageRow) and not r.outgoing and r.text]  # fmt: skip
            window.chat_pane.start_reply(incoming[-1])
            window.compose.setText("Yes, let's do that")
            window.send()

            def replied() -> bool:
                return any(
                    isinstance(r, MessageRow) and r.reply is not None and r.delivery == "sent"
                    for r in window.history_model.rows
                )

            run_until(app, replied)
            shot("reply.png")
            saved.extend(_first_minute_shots(app, window, out, user.peer_id, chats))
            saved.extend(_sticker_shots(app, window, out))
            target = incoming[-1]
            menu = window.chat_pane.message_menu(target)
            index = window.history_model.index(window.history_model.row_of(target.key) or 0, 0)
            rect = window.history.visualRect(index)
            at = window.history.viewport().mapTo(window, rect.center() + QPoint(-40, -10))
            picture = window.grab()
            menu.adjustSize()
            painter = QPainter(picture)
            painter.drawPixmap(at, menu.grab())
            painter.end()
            picture.save(str(out / "context-menu.png"))
            saved.append(out / "context-menu.png")
            window.chat_pane.forward_requested.emit(
                [MessageId(PeerId(target.peer_id), target.namespace, target.id)]
            )
            picker = window.forward_picker
            assert picker is not None
            picker.filter.setText(group.title)
            app.processEvents()
            picture = window.grab()
            painter = QPainter(picture)
            painter.drawPixmap(QPoint((picture.width() - picker.width()) // 2, 80), picker.grab())
            painter.end()
            picture.save(str(out / "forward-picker.png"))
            saved.append(out / "forward-picker.png")
            picker.list.itemActivated.emit(picker.list.currentItem())

            def forwarded() -> bool:
                return any(
                    isinstance(r, MessageRow) and r.forwarded_from and r.delivery == "sent"
                    for r in window.history_model.rows
                )

            run_until(app, forwarded)
            run_until(app, history_settled)
            shot("forward.png")
            unread = max(chats(), key=lambda r: r.unread if r.peer_id >> 56 != 2 else 0)
            window.open_chat(PeerId(unread.peer_id), unread.title, unread=unread.unread)
            run_until(app, lambda: any(isinstance(r, UnreadRow) for r in window.history_model.rows))
            run_until(app, history_settled)
            shot("unread-separator.png")
            window.resize(520, 720)
            run_until(app, lambda: window.narrow)
            shot("narrow.png")
            window.show_chat_list()
            shot("narrow-list.png")
            window.resize(1100, 720)
            before = [(r.key, r.unread) for r in chats()]
            server.call(lambda s: s.service.generate(30))
            run_until(app, lambda: [(r.key, r.unread) for r in chats()] != before)
            shot("live-traffic.png")
            window.chat_pane.info_button.setChecked(True)
            profile = window.profile
            run_until(app, lambda: profile.media_counts[int(MessageTags.PHOTO)].text() != "…")
            run_until(app, lambda: profile.presence.text() != "")
            shot("profile.png")
            window.chat_pane.info_button.setChecked(False)
            window.open_chat(PeerId(group.peer_id), group.title)
            run_until(app, history_settled)
            window.chat_pane.inspector_button.setChecked(True)
            server.call(lambda s: s.service.generate(10))
            run_until(
                app,
                lambda: len(window.inspector.log) >= 3 and bool(window.inspector.hole_map.segments),
            )
            window.resize(1400, 760)
            run_until(app, lambda: "…" not in window.inspector.connection.text())
            shot("inspector.png")
            window.resize(1100, 720)
            window.chat_pane.inspector_button.setChecked(False)
            window.search.query.setText("the")
            run_until(app, lambda: window.search.results.count() > 3)
            app.processEvents()
            search_path = out / "search.png"
            window.search.grab().save(str(search_path))
            saved.append(search_path)
            window.search.hide()
            apply_theme(app, "dark")
            window.repaint()
            shot("dark.png")
            apply_theme(app, "light")
            saved.append(_offline_shot(app, out, Path(scratch) / "offline.db"))
            saved.append(_two_windows_shot(app, out, server, Path(scratch)))
        finally:
            window.close_feeds()
            window.close()
            window.deleteLater()
            account.close()
            app.processEvents()
    return saved


def _first_minute_shots(
    app: object, window: Any, out: Path, person: int, chats: Callable[[], list[Any]]
) -> list[Path]:
    """What a newcomer meets: a draft left in a chat, shown in the list; a channel the
    account only reads (Mute instead of a compose box) with a refused post and its menu;
    and the question before a delete."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QApplication

    from postbox import PeerId, PeerNamespace
    from ui.rows import MessageRow

    saved: list[Path] = []
    pane = window.chat_pane

    def save(picture: Any, name: str) -> None:
        picture.save(str(out / name))
        saved.append(out / name)

    def overlaid(widget: Any, at: QPoint) -> Any:
        picture = window.grab()
        painter = QPainter(picture)
        painter.drawPixmap(at, widget.grab())
        painter.end()
        return picture

    def grabbed() -> Any:
        run_until(app, lambda: not window.history.animator.running)
        QApplication.processEvents()
        return window.grab()

    window.compose.setText("See you at the station at 5?")
    other = next(r for r in chats() if r.peer_id != person and r.peer_id >> 56 != 2)
    window.open_chat(PeerId(other.peer_id), other.title)
    run_until(app, lambda: any(r.draft for r in chats() if r.peer_id == person))
    save(grabbed(), "draft.png")
    readers_only = [
        r
        for r in chats()
        if PeerId(r.peer_id).namespace == PeerNamespace.CHANNEL
        and not window.account.postbox.run(lambda tx, p=r.peer_id: tx.get_peer(PeerId(p))).can_post
    ]
    channel = readers_only[0]
    window.open_chat(PeerId(channel.peer_id), channel.title)
    run_until(app, lambda: pane.mute_button.isVisible())
    window.account.send_message(PeerId(channel.peer_id), "Can I post here too?")

    def refused() -> MessageRow | None:
        rows = window.history_model.rows
        return next((r for r in rows if isinstance(r, MessageRow) and r.failure), None)

    run_until(app, lambda: refused() is not None)
    row = refused()
    assert row is not None
    menu = pane.show_failure_menu(row, QPoint(0, 0))
    menu.adjustSize()
    index = window.history_model.index(window.history_model.row_of(row.key) or 0, 0)
    rect = window.history.visualRect(index)
    corner = QPoint(rect.right() - menu.width() - 250, rect.top() - menu.height() + 8)
    at = window.history.viewport().mapTo(window, corner)
    run_until(app, lambda: not window.history.animator.running)
    save(overlaid(menu, at), "failed-message.png")
    menu.close()
    pane.delete(row, for_everyone=False)  # its Delete: the shots after this one are clean
    run_until(app, lambda: refused() is None)
    run_until(app, lambda: not any(r.failed for r in chats()))
    window.open_chat(PeerId(person), "")
    run_until(app, lambda: any(isinstance(r, MessageRow) for r in window.history_model.rows))
    run_until(app, lambda: pane.state.restored)
    window.compose.setText("")  # the draft goes: the shots after this one show the chat
    pane.state.save_draft()
    run_until(app, lambda: not any(r.draft for r in chats() if r.peer_id == person))
    ours = [r for r in window.history_model.rows if isinstance(r, MessageRow) and r.outgoing]
    dialog = pane.ask_delete(ours[-1:])
    assert dialog is not None
    dialog.adjustSize()
    middle = QPoint(
        (window.width() - dialog.width()) // 2, (window.height() - dialog.height()) // 2
    )
    save(overlaid(dialog, middle), "delete-question.png")
    dialog.reject()
    return saved


def _sticker_shots(app: object, window: Any, out: Path) -> list[Path]:
    """The sticker picker open over a chat; then the sticker chosen in it, sent."""
    from PySide6.QtGui import QPainter

    from ui.models import ROW_ROLE
    from ui.rows import MessageRow

    picker = window.chat_pane.sticker_button.open_picker()
    run_until(app, lambda: len(picker.tabs) >= 3 and picker.model.rowCount() > 0)
    picker.select(picker.tabs[1].key)
    run_until(app, lambda: picker.model.rowCount() > 0 and picker.current == picker.tabs[1].key)
    app.processEvents()  # type: ignore[attr-defined]
    picture = window.grab()
    painter = QPainter(picture)
    painter.drawPixmap(window.mapFromGlobal(picker.pos()), picker.grab())
    painter.end()
    picker_path = out / "sticker-picker.png"
    picture.save(str(picker_path))
    chosen = picker.model.index(2, 0).data(ROW_ROLE)
    picker.grid.clicked.emit(picker.model.index(2, 0))

    def delivered() -> bool:
        return any(
            isinstance(r, MessageRow) and r.sticker == chosen.face and r.delivery == "sent"
            for r in window.history_model.rows
        )

    run_until(app, delivered)
    run_until(app, lambda: not window.history.animator.running)
    app.processEvents()  # type: ignore[attr-defined]
    sent_path = out / "sticker.png"
    window.grab().save(str(sent_path))
    return [picker_path, sent_path]


def _two_windows_shot(app: object, out: Path, server: Any, scratch: Path) -> Path:
    """Two accounts talking through the server, side by side: a message from the left
    arrives on the right, the answer comes back, and the left one's ticks turn read."""
    from PySide6.QtGui import QPainter, QPixmap

    from client.account import Account
    from client.demo_seats import demo_seats
    from postbox import PeerId
    from ui.main_window import MainWindow
    from ui.rows import MessageRow

    seats = demo_seats(server, scratch / "left.db", 2)
    opened = []
    for seat in seats:
        account = Account(seat.db, "127.0.0.1", server.port, seat.token).start()
        window = MainWindow(account)
        window.resize(720, 640)
        window.show()
        window.open_chat(PeerId(seat.open_peer), seat.open_title)
        opened.append((account, window))
    (left_account, left), (right_account, right) = opened

    def shows(window: Any, text: str, delivery: str | None = None) -> bool:
        return any(
            isinstance(r, MessageRow)
            and r.text == text
            and (delivery is None or r.delivery == delivery)
            for r in window.history_model.rows
        )

    try:
        question, answer = "Are you coming to the climbing gym tonight?", "Yes! See you at 7 🧗"
        run_until(app, lambda: bool(left.history_model.rows and right.history_model.rows))
        left.chat_pane.compose.setText(question)
        left.chat_pane.send()
        run_until(app, lambda: shows(right, question))
        right.chat_pane.compose.setText(answer)
        right.chat_pane.send()
        run_until(app, lambda: shows(left, answer) and shows(left, question, "read"))
        run_until(
            app, lambda: not (left.history.animator.running or right.history.animator.running)
        )
        app.processEvents()  # type: ignore[attr-defined]
        pictures = [left.grab(), right.grab()]
        gap = 8
        width = sum(p.width() for p in pictures) + gap
        joined = QPixmap(width, max(p.height() for p in pictures))
        joined.fill(left.palette().mid().color())
        painter = QPainter(joined)
        painter.drawPixmap(0, 0, pictures[0])
        painter.drawPixmap(pictures[0].width() + gap, 0, pictures[1])
        painter.end()
        path = out / "two-windows.png"
        joined.save(str(path))
        return path
    finally:
        for account, window in opened:
            window.close_feeds()
            window.close()
            window.deleteLater()
            account.close()


def _offline_shot(app: object, out: Path, db: Path) -> Path:
    """A window whose server is not there: the status line says so and offers a retry."""
    import socket

    from client.account import Account
    from ui.main_window import MainWindow

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    account = Account(db, "127.0.0.1", port, "shots")
    account.start()
    window = MainWindow(account)
    window.resize(1100, 720)
    window.show()
    try:
        run_until(app, lambda: window.retry_button.isVisible())
        path = out / "offline.png"
        window.grab().save(str(path))
        return path
    finally:
        window.close_feeds()
        window.close()
        window.deleteLater()
        account.close()


def record_captures(out: Path) -> list[Path]:
    """Record two steps of the guided tour as animated PNGs: ``live-insert.png`` (a
    message slides in as Generic; the inspector counts the silent views) and
    ``hole-fill.png`` (in slow motion, scrolling into a hole: the loading row, the fetch
    in flight on the hole map, the FillHole)."""
    app = offscreen_app()
    from client.account import Account
    from client.apng import apng
    from client.captures import frames_of, record
    from client.demo_stage import DemoStage
    from client.slow_motion import DEMO_LATENCY, SlowMotion
    from sync.server import EmbeddedServer, ServerConfig
    from ui.main_window import MainWindow
    from ui.rows import ChatRow

    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    config = ServerConfig(token="captures", seed=1, rate=0, messages=20_000)
    with tempfile.TemporaryDirectory() as scratch, EmbeddedServer(config) as server:
        account = Account(Path(scratch) / "client.db", "127.0.0.1", server.port, "captures")
        account.start()
        stage = DemoStage(server)
        slow_motion = SlowMotion(DEMO_LATENCY, stage.set_latency)
        window = MainWindow(account, slow_motion=slow_motion, stage=stage)
        window.resize(1100, 720)
        window.show()
        try:
            run_until(
                app,
                lambda: (
                    sum(isinstance(r, ChatRow) and not r.is_hole for r in window.chat_model.rows)
                    >= 20
                ),
            )
            window.start_tour()
            card = window.tour
            assert card is not None
            for name, step in (("live-insert.png", 1), ("hole-fill.png", 2)):
                card.show_step(step)
                shots = record(app, window, lambda: not card.runner.running)
                if not card.runner.succeeded:
                    raise RuntimeError(f"the tour's step {step} failed: {card.runner.outcome}")
                path = out / name
                path.write_bytes(apng(frames_of(shots)))
                saved.append(path)
        finally:
            window.close_feeds()
            window.close()
            account.close()
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m client.screenshots",
        description="Drive the real app offscreen and save screenshots, or animated captures.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--captures", action="store_true", help="record two guided-tour steps as animated PNGs"
    )
    parser.add_argument(
        "out", nargs="?", type=Path, help="where to save (resources/screenshots or /captures)"
    )
    args = parser.parse_args(argv)
    if args.captures:
        for path in record_captures(args.out or Path("resources/captures")):
            print(f"{path}: {path.stat().st_size:,} bytes")
    else:
        for path in take_screenshots(args.out or Path("resources/screenshots")):
            print(path)
    shut_down_qt()
    return 0


if __name__ == "__main__":
    sys.exit(main())
