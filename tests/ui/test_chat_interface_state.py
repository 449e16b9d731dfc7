"""Each chat keeps what the reader left in it: the draft (shown in the chat list), the
reply it answers, the scroll position and the selection, across chat switches and a new
window; a draft saved on another device shows unless the reader typed since. The
compose box sends on Enter, breaks lines on Shift+Enter and splits a text past the
limit. Over a local database, as ``test_chat_pane`` (nothing syncs)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from client import MAX_MESSAGE_LENGTH
from postbox import ChatInterfaceState, PeerId, SynchronizeableDraft
from tests.ui.test_chat_pane import ALICE, BOB, NOW, account, shown_ids, window
from ui.chat_interface import ComposeDraft
from ui.main_window import MainWindow
from ui.rows import ChatRow, MessageRow

__all__ = ["account", "window"]  # the fixtures, shared with test_chat_pane

pytestmark = pytest.mark.gui
LOCAL = 1


def stored_draft(main: MainWindow, peer: PeerId) -> str | None:
    state = main.account.postbox.run(lambda tx: tx.get_chat_interface_state(peer))
    return None if state is None or state.draft is None else state.draft.text


def listed(main: MainWindow, peer: PeerId) -> ChatRow | None:
    rows = main.chat_model.rows
    return next((r for r in rows if isinstance(r, ChatRow) and r.peer_id == peer), None)


def draft_listed(main: MainWindow, peer: PeerId) -> str | None:
    row = listed(main, peer)
    return None if row is None else row.draft


def pending_texts(main: MainWindow, peer: PeerId) -> list[str]:
    found = main.account.postbox.run(lambda tx: tx.get_messages(peer, LOCAL))
    return [m.text for m in found]


def opened(qtbot, main: MainWindow, peer: PeerId, newest: int) -> None:
    main.open_chat(peer)
    qtbot.waitUntil(lambda: newest in shown_ids(main))
    qtbot.waitUntil(lambda: main.chat_pane.state.restored)


def test_a_draft_stays_in_the_chat_it_was_typed_in(qtbot, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, ALICE, 1_000)
    pane.compose.setFocus()
    qtbot.keyClicks(pane.compose, "half a thought")
    # Ctrl+Tab to the next chat: the box is empty there, and Enter sends nothing to Bob.
    qtbot.keyClick(pane.compose, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.open_peer == BOB
    assert pane.compose.text() == ""
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return)
    assert pending_texts(window, BOB) == []
    qtbot.waitUntil(lambda: stored_draft(window, ALICE) == "half a thought")
    qtbot.waitUntil(lambda: draft_listed(window, ALICE) == "half a thought")
    assert draft_listed(window, BOB) == ""
    window.open_chat(ALICE)
    qtbot.waitUntil(lambda: pane.compose.text() == "half a thought")


def test_a_new_window_opens_the_chat_with_its_draft_and_reply(qtbot, account, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, ALICE, 1_000)
    answered = next(r for r in reversed(window.history_model.rows) if isinstance(r, MessageRow))
    pane.start_reply(answered)
    pane.compose.setText("about that")
    window.close_feeds()  # the window closes: its open chat keeps what it had
    again = MainWindow(account, clock=lambda: NOW)
    qtbot.addWidget(again)
    again.show()
    try:
        qtbot.waitUntil(lambda: draft_listed(again, ALICE) == "about that")
        opened(qtbot, again, ALICE, 1_000)
        qtbot.waitUntil(lambda: again.chat_pane.replying is not None)
        assert again.chat_pane.compose.text() == "about that"
        assert again.chat_pane.replying is not None
        assert again.chat_pane.replying.id == answered.id
    finally:
        again.close_feeds()


def test_the_scroll_position_and_selection_come_back(qtbot, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, ALICE, 1_000)
    history = window.history
    history.verticalScrollBar().setValue(history.verticalScrollBar().value() - 900)
    qtbot.waitUntil(lambda: not pane.at_live_edge() or not history.at_bottom())
    top = history.top_row()
    assert top is not None
    chosen = next(r for r in window.history_model.rows if isinstance(r, MessageRow))
    pane.selection.toggle(chosen)
    window.open_chat(BOB)
    assert not pane.selection.selected
    window.open_chat(ALICE)
    qtbot.waitUntil(lambda: history.top_row() == top)
    qtbot.waitUntil(lambda: chosen.key in pane.selection.selected)


def test_a_draft_from_another_device_shows_unless_the_reader_typed(qtbot, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, ALICE, 1_000)

    def arrives(text: str) -> None:
        state = ChatInterfaceState(SynchronizeableDraft(text, None, NOW))
        window.account.postbox.run(lambda tx: tx.set_chat_interface_state(ALICE, state))

    arrives("typed on the phone")
    qtbot.waitUntil(lambda: pane.compose.text() == "typed on the phone")
    pane.compose.setFocus()
    qtbot.keyClicks(pane.compose, ", and here")
    arrives("changed on the phone again")
    # The window has seen it (it is the draft it knows now), and kept the typing.
    qtbot.waitUntil(lambda: pane.state.known_draft == ComposeDraft("changed on the phone again"))
    assert pane.compose.text() == "typed on the phone, and here"


def test_enter_sends_shift_enter_breaks_the_line(qtbot, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, BOB, 400)
    pane.compose.setFocus()
    one_line = pane.compose.height()
    qtbot.keyClicks(pane.compose, "first line")
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(pane.compose, "second line")
    assert pane.compose.height() > one_line  # the box grows with its lines
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pending_texts(window, BOB) == ["first line\nsecond line"])
    assert pane.compose.text() == "" and pane.compose.height() == one_line


def test_a_text_past_the_limit_is_counted_and_goes_as_several_messages(qtbot, window) -> None:
    pane = window.chat_pane
    opened(qtbot, window, BOB, 400)
    assert not pane.compose.counter.isVisible()
    pane.compose.setText("word " * 1_000)
    assert pane.compose.counter.isVisible()
    assert pane.compose.counter.text().endswith("sends as 2 messages")
    pane.send()
    qtbot.waitUntil(lambda: len(pending_texts(window, BOB)) == 2)
    parts = pending_texts(window, BOB)
    assert all(len(part) <= MAX_MESSAGE_LENGTH for part in parts)
    assert " ".join(parts).split() == ["word"] * 1_000


def test_typing_before_the_saved_state_arrives_is_kept(qtbot, window) -> None:
    """The saved state comes through the event loop, a moment after the chat opens (more
    under load): what the reader typed meanwhile stays, and becomes the draft."""
    pane = window.chat_pane
    old = ChatInterfaceState(SynchronizeableDraft("an old draft", None, NOW))
    window.account.postbox.run(lambda tx: tx.set_chat_interface_state(ALICE, old))
    window.open_chat(ALICE)
    pane.compose.setText("typed at once")  # before any snapshot is handed over
    qtbot.waitUntil(lambda: pane.state.restored)
    assert pane.compose.text() == "typed at once"
    qtbot.waitUntil(lambda: stored_draft(window, ALICE) == "typed at once", timeout=5_000)


def test_typing_in_the_chat_list_writes_in_the_compose_box(qtbot, window) -> None:
    """Not a jump to the chat whose name starts with the letter (Qt's type-ahead)."""
    opened(qtbot, window, ALICE, 1_000)
    window.chat_list.setFocus()
    qtbot.waitUntil(window.chat_list.hasFocus)
    qtbot.keyClicks(window.chat_list, "bonjour")
    assert window.open_peer == ALICE  # not Bob Stone, whose name starts with b
    assert window.chat_pane.compose.text() == "bonjour"
    assert window.chat_pane.compose.hasFocus()


def test_a_draft_typed_and_left_at_once_is_kept(qtbot, window) -> None:
    """Typed and left before the chat's saved state came back (a busy app): kept."""
    pane = window.chat_pane
    window.open_chat(ALICE)
    pane.compose.setText("quick note")
    window.open_chat(BOB)  # no event handled in between
    qtbot.waitUntil(lambda: stored_draft(window, ALICE) == "quick note")
    # And leaving an untouched chat before its state came back wipes nothing.
    window.open_chat(ALICE)
    window.open_chat(BOB)
    window.open_chat(ALICE)
    qtbot.waitUntil(lambda: pane.compose.text() == "quick note")


def test_a_chat_clicked_in_the_list_opens_ready_to_write(qtbot, window) -> None:
    """As Telegram Desktop: the cursor is in the compose box, so Enter sends there."""
    model = window.chat_model
    position = next(i for i, r in enumerate(model.rows) if getattr(r, "peer_id", None) == BOB)
    centre = window.chat_list.visualRect(model.index(position, 0)).center()
    window.chat_list.setFocus()
    qtbot.mouseClick(window.chat_list.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert window.open_peer == BOB
    pane = window.chat_pane
    qtbot.waitUntil(pane.compose.hasFocus)
    qtbot.keyClicks(pane.compose, "on my way")
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pending_texts(window, BOB) == ["on my way"])


def test_a_draft_survives_a_quick_trip_to_the_next_chat_and_back(qtbot, window) -> None:
    """Ctrl+Tab and straight back with Ctrl+Shift+Tab, before anything was stored."""
    pane = window.chat_pane
    opened(qtbot, window, ALICE, 1_000)
    pane.compose.setFocus()
    qtbot.keyClicks(pane.compose, "back in a second")
    qtbot.keyClick(pane.compose, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.open_peer == BOB
    qtbot.keyClick(
        pane.compose,
        Qt.Key.Key_Backtab,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert window.open_peer == ALICE
    qtbot.waitUntil(lambda: pane.state.restored)
    assert pane.compose.text() == "back in a second"
    qtbot.waitUntil(lambda: stored_draft(window, ALICE) == "back in a second")
    qtbot.waitUntil(lambda: draft_listed(window, ALICE) == "back in a second")
