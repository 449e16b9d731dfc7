"""Failed messages in the window, and a channel the account only reads.

Over a local database (the account is not started): the tests write what the sync
engine would, click what a person would, and check what the window then shows and
what it queued.
"""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMenu

from client.account import Account
from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    MessageFailure,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageId,
    Peer,
    PeerFlags,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    StoreMessage,
    Transaction,
)
from sync.engine import enqueue_send
from sync.engine.log_tags import SEND_TAG
from ui.delegates import HistoryDelegate
from ui.main_window import MainWindow
from ui.rows import ChatRow, MessageRow

pytestmark = pytest.mark.gui

NOW = int(time.time())
CLOUD, LOCAL = 0, 1
NEWS = PeerId.make(PeerNamespace.CHANNEL, 31)
OWN = PeerId.make(PeerNamespace.CHANNEL, 32)
ALICE = PeerId.make(PeerNamespace.USER, 11)
EVERYWHERE = MessageHistoryHoleSpace.everywhere()


def _refused(tx: Transaction, peer: PeerId, text: str, random_id: int) -> MessageId:
    """A send the server refused: what the outbound queue leaves behind."""
    message_id = enqueue_send(tx, peer, text, timestamp=NOW - 60, random_id=random_id)
    [entry] = [
        e for e in tx.get_operation_log_entries(peer, SEND_TAG) if e.contents["text"] == text
    ]
    tx.remove_operation_log_entry(peer, SEND_TAG, entry.tag_local_index)
    failure = MessageFailure(
        "CHAT_WRITE_FORBIDDEN", "only the channel's admins can post", entry.contents
    )
    tx.mark_message_failed(message_id, failure)
    return message_id


@pytest.fixture
def account(tmp_path):
    account = Account(tmp_path / "local.db", "127.0.0.1", 1, "unused")

    def seed(tx: Transaction) -> None:
        for hole in tx.get_chat_list_holes(PeerGroupId.ROOT):
            tx.remove_chat_list_hole(PeerGroupId.ROOT, hole)
        tx.update_peers(
            [
                Peer(NEWS, "Morning News", flags=int(PeerFlags.BROADCAST)),
                Peer(OWN, "Our Notes", flags=int(PeerFlags.BROADCAST | PeerFlags.CAN_POST)),
                Peer(ALICE, "Alice Baker"),
            ]
        )
        for peer in (NEWS, OWN, ALICE):
            tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))
            tx.remove_hole(peer, CLOUD, EVERYWHERE, 1, MAX_MESSAGE_ID)
            tx.add_messages(
                [StoreMessage(peer, CLOUD, 1, NOW - 3600, flags=1, text="a first word")]
            )
        _refused(tx, NEWS, "is this on?", 101)
        _refused(tx, NEWS, "hello?", 102)

    account.postbox.run(seed)
    yield account
    account.close()


@pytest.fixture
def window(qtbot, account):
    main = MainWindow(account, clock=lambda: NOW)
    qtbot.addWidget(main)
    main.resize(1000, 640)
    main.show()
    qtbot.waitExposed(main)
    qtbot.waitUntil(lambda: len(main.chat_model.rows) == 3)
    yield main
    main.close_feeds()


def chat_row(main: MainWindow, peer: PeerId) -> ChatRow:
    return next(r for r in main.chat_model.rows if r.peer_id == int(peer))


def failed_rows(main: MainWindow) -> list[MessageRow]:
    return [r for r in main.history_model.rows if isinstance(r, MessageRow) and r.failure]


def open_news(qtbot, main: MainWindow) -> list[MessageRow]:
    main.open_chat(NEWS, "Morning News")
    qtbot.waitUntil(lambda: len(failed_rows(main)) == 2)
    return failed_rows(main)


def test_a_channel_reader_gets_mute_and_unmute_instead_of_the_compose_box(
    qtbot, account, window
) -> None:
    pane = window.chat_pane
    window.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: pane.title.text() == "Alice Baker")
    assert pane.compose.isVisible() and not pane.mute_button.isVisible()
    window.open_chat(NEWS, "Morning News")
    qtbot.waitUntil(lambda: pane.mute_button.isVisible())
    assert not pane.compose.isVisible() and not pane.send_button.isVisible()
    assert pane.mute_button.text() == "Mute"
    qtbot.mouseClick(pane.mute_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: pane.mute_button.text() == "Unmute")
    settings = account.postbox.run(lambda tx: tx.get_notification_settings(NEWS))
    assert settings is not None and settings.is_muted(NOW)
    qtbot.waitUntil(lambda: chat_row(window, NEWS).muted)
    qtbot.mouseClick(pane.mute_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: pane.mute_button.text() == "Mute")
    window.open_chat(OWN, "Our Notes")  # a channel the account may post in
    qtbot.waitUntil(lambda: pane.compose.isVisible())
    assert not pane.mute_button.isVisible()


def test_the_chat_list_marks_a_chat_whose_message_failed(qtbot, account, window) -> None:
    news = chat_row(window, NEWS)
    assert news.failed and news.top_failed and news.preview == "hello?"
    assert not chat_row(window, ALICE).failed
    account.postbox.run(
        lambda tx: tx.delete_messages([MessageId(NEWS, LOCAL, 1), MessageId(NEWS, LOCAL, 2)])
    )
    qtbot.waitUntil(lambda: not chat_row(window, NEWS).failed)
    assert chat_row(window, NEWS).preview == "a first word"


def test_a_failed_bubble_says_why_and_its_mark_offers_retry_and_delete(
    qtbot, account, window
) -> None:
    first, second = open_news(qtbot, window)
    assert first.failure == second.failure == "You can't post in this channel"
    pane = window.chat_pane
    delegate = pane.history.itemDelegate()
    assert isinstance(delegate, HistoryDelegate)
    qtbot.waitUntil(lambda: second.key in delegate.failure_marks)
    index = window.history_model.index(window.history_model.rows.index(second))
    mark = delegate.failure_marks[second.key].translated(pane.history.visualRect(index).topLeft())
    assert pane.failure_mark_at(mark.center()) == second
    assert pane.failure_mark_at(mark.topLeft() - QPoint(4, 4)) is None
    qtbot.mouseClick(pane.history.viewport(), Qt.MouseButton.LeftButton, pos=mark.center())
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    actions = {a.text(): a for a in menu.actions()}
    assert list(actions) == ["Retry", "Delete", "Retry all 2"]
    menu.close()
    actions["Retry"].trigger()

    def queued() -> list[int]:
        entries = account.postbox.run(lambda tx: tx.get_operation_log_entries(NEWS, SEND_TAG))
        return [e.contents["random_id"] for e in entries]

    qtbot.waitUntil(lambda: queued() == [102])  # the same request, the same random id
    qtbot.waitUntil(lambda: len(failed_rows(window)) == 1)
    retried = next(r for r in window.history_model.rows if getattr(r, "id", 0) == second.id)
    assert retried.delivery == "pending" and not retried.failure
    menu = pane.message_menu(failed_rows(window)[0])
    assert [a.text() for a in menu.actions()[:2]] == ["Retry", "Delete"]
    next(a for a in menu.actions() if a.text() == "Delete").trigger()
    qtbot.waitUntil(lambda: not failed_rows(window))
    message = account.postbox.run(lambda tx: tx.get_message(first_id(first)))
    assert message is None


def test_retry_all_queues_every_failed_message_of_the_chat(qtbot, account, window) -> None:
    first, _second = open_news(qtbot, window)
    menu = window.chat_pane.show_failure_menu(first, window.chat_pane.history.rect().center())
    next(a for a in menu.actions() if a.text() == "Retry all 2").trigger()
    menu.close()
    qtbot.waitUntil(lambda: not failed_rows(window))
    entries = account.postbox.run(lambda tx: tx.get_operation_log_entries(NEWS, SEND_TAG))
    assert [e.contents["random_id"] for e in entries] == [101, 102]
    flags = account.postbox.run(lambda tx: tx.get_message(first_id(first)))
    assert flags is not None and flags.flags == MessageFlags.UNSENT


def first_id(row: MessageRow) -> MessageId:
    return MessageId(PeerId(row.peer_id), row.namespace, row.id)
