"""A newcomer's first minute with the real demo, on a real X server.

Run by ``test_first_minute.py`` under Xvfb: this process starts ``postbox-chat demo``
exactly as the command does (``client.cli.main``), and a walker on the same Qt loop
drives the real window with Qt's test input (key and mouse events on the xcb window)
while the app runs. It prints one ``check ...`` line per thing a newcomer meets, and the
test reads them. The last step quits with Ctrl+Q, sent as a real X key press by the test
(``xdotool``), so the app's exit code is the command's.

Usage: ``python first_minute_walk.py DB [--quit-here]`` (with ``XDG_CONFIG_HOME`` a fresh
folder, so the tour is offered as on a first start; ``--quit-here``: press Ctrl+Q with
Qt's test input, where there is no ``xdotool``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from client.cli import main as command
from postbox import PeerId, PeerNamespace
from ui.main_window import MainWindow
from ui.rows import ChatRow, MessageRow

#: How long a newcomer waits for the first live message with the welcome card open.
FIRST_TRAFFIC_S = 10.0
#: How long any other step may take.
STEP_S = 30.0

Wait = Callable[[], bool]


def say(check: str, ok: bool, detail: object = "") -> None:
    print(f"check {json.dumps({'check': check, 'ok': ok, 'detail': str(detail)})}", flush=True)


def the_window() -> MainWindow | None:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    return found[0] if found and found[0].isVisible() else None


def chat_rows(window: MainWindow) -> list[ChatRow]:
    return [r for r in window.chat_model.rows if isinstance(r, ChatRow) and not r.is_hole]


def click_chat(window: MainWindow, peer_id: int) -> bool:
    """Click a chat's row in the list, as the mouse would."""
    for position, row in enumerate(window.chat_model.rows):
        if isinstance(row, ChatRow) and row.peer_id == peer_id:
            index = window.chat_model.index(position, 0)
            window.chat_list.scrollTo(index)
            centre = window.chat_list.visualRect(index).center()
            QTest.mouseClick(
                window.chat_list.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(centre)
            )
            return True
    return False


def walk() -> Iterator[tuple[str, float, Wait]]:
    """The newcomer's steps; each yields (what it waits for, how long, the condition)."""
    window: MainWindow | None = None

    def opened() -> bool:
        nonlocal window
        window = the_window()
        return window is not None and len(chat_rows(window)) > 5

    yield "the window and its chat list", STEP_S, opened
    assert window is not None
    w = window
    tour = w.tour
    say("the welcome card is open", tour is not None and tour.isVisible())
    before = [(r.peer_id, r.preview, r.time) for r in chat_rows(w)]

    def moved() -> bool:
        return [(r.peer_id, r.preview, r.time) for r in chat_rows(w)] != before

    yield "live traffic under the welcome card", FIRST_TRAFFIC_S, moved
    say("traffic arrives with the welcome card open", tour is not None and tour.isVisible())

    # A keyboard's shortcuts reach the window that has the focus, as a click gives it.
    w.activateWindow()
    yield "the window has the keyboard", STEP_S, lambda: QApplication.activeWindow() is w
    people = [r.peer_id for r in chat_rows(w) if PeerId(r.peer_id).namespace == PeerNamespace.USER]
    first = people[0]
    click_chat(w, first)
    yield "the first private chat", STEP_S, lambda: w.open_peer == first
    compose = w.chat_pane.compose
    QTest.mouseClick(compose.viewport(), Qt.MouseButton.LeftButton)
    QTest.keyClicks(compose, "see you at 5")
    say("typed in the compose box", compose.text() == "see you at 5", repr(compose.text()))
    QTest.keyClick(compose, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    yield "Ctrl+Tab to the next chat", STEP_S, lambda: w.open_peer not in (None, first)
    say("the next chat's compose box is empty", compose.text() == "", repr(compose.text()))

    def draft_listed() -> bool:
        return any(r.peer_id == first and r.draft == "see you at 5" for r in chat_rows(w))

    yield "the draft in the chat list", STEP_S, draft_listed
    say("the chat list shows the draft", True)
    click_chat(w, first)
    yield "back to the first chat", STEP_S, lambda: compose.text() == "see you at 5"
    say("the draft is back in its chat", True)
    compose.setText("")

    # A broadcast channel the account only reads: no compose box, Mute/Unmute instead.
    def reads_only(peer_id: int) -> bool:
        peer = w.account.postbox.run(lambda tx: tx.get_peer(PeerId(peer_id)))
        return peer is not None and not peer.can_post

    channel = next(
        r.peer_id
        for r in chat_rows(w)
        if PeerId(r.peer_id).namespace == PeerNamespace.CHANNEL and reads_only(r.peer_id)
    )
    click_chat(w, channel)
    pane = w.chat_pane

    def mute_instead() -> bool:
        return w.open_peer == channel and pane.mute_button.isVisible()

    yield "a channel the account only reads", STEP_S, mute_instead
    say("a channel without rights shows no compose box", not compose.isVisible())

    # A post queued before the rights were known (as `postbox-chat send` queues one):
    # the server refuses it, and the bubble says why and offers Retry.
    w.account.send_message(PeerId(channel), "queued before I knew")
    history = pane.history

    def failed_row() -> MessageRow | None:
        rows = history.history_model.rows
        return next(
            (
                r
                for r in rows
                if isinstance(r, MessageRow) and r.failure and r.text.startswith("queued")
            ),
            None,
        )

    yield "the refused post", STEP_S, lambda: failed_row() is not None
    row = failed_row()
    assert row is not None
    say("the failed message says why", True, row.failure)
    position = history.history_model.row_of(row.key)
    assert position is not None
    history.scrollTo(history.history_model.index(position, 0))
    marks = history.itemDelegate().failure_marks  # type: ignore[attr-defined]
    yield "its red mark drawn", STEP_S, lambda: row.key in marks
    top_left = history.visualRect(history.history_model.index(position, 0)).topLeft()
    mark = marks[row.key].translated(top_left).center()
    QTest.mouseClick(history.viewport(), Qt.MouseButton.LeftButton, pos=mark)
    yield "its menu", STEP_S, lambda: isinstance(QApplication.activePopupWidget(), QMenu)
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    labels = [action.text() for action in menu.actions()]
    say("a failed send offers Retry", "Retry" in labels, labels)
    menu.close()


def run_walk(*, quit_here: bool) -> None:
    steps = walk()
    state: dict[str, object] = {}

    def advance() -> None:
        try:
            what, limit, condition = next(steps)
        except StopIteration:
            done()
            return
        except Exception as error:  # noqa: BLE001 - a broken step is reported
            say("the walk", False, repr(error))
            done()
            return
        state.update(what=what, deadline=time.monotonic() + limit, condition=condition)
        poll()

    def poll() -> None:
        condition = state["condition"]
        assert callable(condition)
        try:
            reached = condition()
        except Exception as error:  # noqa: BLE001 - reported, then the walk ends
            say(str(state["what"]), False, repr(error))
            done()
            return
        if reached:
            advance()
        elif time.monotonic() > float(state["deadline"]):  # type: ignore[arg-type]
            say(str(state["what"]), False, "timed out")
            done()
        else:
            QTimer.singleShot(100, poll)

    def done() -> None:
        print("walk done", flush=True)  # the test now presses Ctrl+Q on the X server
        if quit_here:
            window = the_window()
            if window is not None:  # no xdotool: Qt's own key event on the real window
                QTest.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)

    QTimer.singleShot(0, advance)


if __name__ == "__main__":
    application = QApplication(sys.argv[:1])
    run_walk(quit_here="--quit-here" in sys.argv)
    sys.exit(command(["demo", "--db", sys.argv[1], "--chats", "40", "--messages", "3000"]))
