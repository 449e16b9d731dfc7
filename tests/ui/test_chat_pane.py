"""The window over a local database (no server): the history window, panels and search.

The account is not started, so nothing syncs: the tests write into the Postbox
themselves, the way the sync engine would, and watch the window follow.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from client import MAX_DRAFT_LENGTH, EngineStatus
from client.account import Account
from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    Media,
    MediaKind,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageId,
    MessageTags,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerPresence,
    PeerReadState,
    PresenceStatus,
    StoreMessage,
)
from ui.chat_pane import HISTORY_WINDOW
from ui.compose_box import ComposeBox
from ui.main_window import CHAT_LIST_PAGE, MainWindow
from ui.rows import ChatRow, LoadingRow, MessageRow, UnreadRow

pytestmark = pytest.mark.gui

NOW = int(time.time())
CLOUD = 0
EVERYWHERE = MessageHistoryHoleSpace.everywhere()
ALICE = PeerId.make(PeerNamespace.USER, 11)
BOB = PeerId.make(PeerNamespace.USER, 12)
CLUB = PeerId.make(PeerNamespace.GROUP, 21)


def incoming(
    peer: PeerId, id_: int, *, author: PeerId | None = None, text: str = ""
) -> StoreMessage:
    return StoreMessage(
        peer, CLOUD, id_, NOW - 100_000 + id_ * 10, flags=int(MessageFlags.INCOMING),
        author_id=author or peer, text=text or f"message {id_} " + "word " * (id_ % 9),
    )  # fmt: skip


def outgoing(peer: PeerId, id_: int, text: str) -> StoreMessage:
    return StoreMessage(peer, CLOUD, id_, NOW - 100_000 + id_ * 10, text=text)


def list_chat(tx, peer: PeerId, name: str) -> None:
    tx.update_peers([Peer(peer, name)])
    tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))


@pytest.fixture
def account(tmp_path):
    account = Account(tmp_path / "local.db", "127.0.0.1", 1, "unused")

    def seed(tx) -> None:
        for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
            for hole in tx.get_chat_list_holes(group):
                tx.remove_chat_list_hole(group, hole)
        list_chat(tx, ALICE, "Alice Baker")
        list_chat(tx, BOB, "Bob Stone")
        list_chat(tx, CLUB, "Chess Club")
        tx.remove_hole(ALICE, CLOUD, EVERYWHERE, 1, MAX_MESSAGE_ID)
        tx.add_messages(incoming(ALICE, i) for i in range(1, 1_001))
        tx.reset_read_state(ALICE, CLOUD, PeerReadState(1_000, 0, 1_000, 0))
        tx.remove_hole(BOB, CLOUD, EVERYWHERE, 300, MAX_MESSAGE_ID)  # 1..299 is a hole
        tx.add_messages(incoming(BOB, i) for i in range(300, 400))
        tx.add_messages([outgoing(BOB, 400, "see you at noon")])
        tx.reset_read_state(BOB, CLOUD, PeerReadState(399, 0, 399, 0))
        tx.remove_hole(CLUB, CLOUD, EVERYWHERE, 1, MAX_MESSAGE_ID)
        tx.add_messages(
            [
                incoming(CLUB, 1, author=ALICE, text="shall we play?"),
                incoming(CLUB, 2, author=ALICE, text="tonight"),
                incoming(CLUB, 3, author=BOB, text="yes, bring the clock"),
            ]
        )

    account.postbox.run(seed)
    yield account
    account.close()


@pytest.fixture
def window(qtbot, account):
    main = MainWindow(account, clock=lambda: NOW)  # presences read against a fixed now
    qtbot.addWidget(main)
    main.resize(1000, 640)
    main.show()
    qtbot.waitExposed(main)
    qtbot.waitUntil(lambda: len(main.chat_model.rows) == 3)
    yield main
    main.close_feeds()


def messages(main: MainWindow) -> list[MessageRow]:
    return [r for r in main.history_model.rows if isinstance(r, MessageRow)]


def shown_ids(main: MainWindow) -> list[int]:
    return [r.id for r in messages(main)]


def test_scrolling_moves_the_window_through_a_long_history(qtbot, window) -> None:
    window.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: 1_000 in shown_ids(window))
    assert window.history.at_bottom()
    bar = window.history.verticalScrollBar()
    most = 0
    # Scroll up to the very first message, as a reader would: the window moves.
    while 1 not in shown_ids(window):
        moves = window.chat_pane.window_moves
        bar.setValue(0)
        qtbot.waitUntil(
            lambda moves=moves: window.chat_pane.window_moves > moves or 1 in shown_ids(window)
        )
        qtbot.waitUntil(lambda: not window.chat_pane._moving)
        most = max(most, len(messages(window)))
    assert most <= 2 * HISTORY_WINDOW + 1  # a window, never the whole chat
    assert window.chat_pane.window_moves >= 1_000 // HISTORY_WINDOW - 1
    assert window.chat_pane.jump_button.isVisible()
    window.chat_pane.jump_to_bottom()
    qtbot.waitUntil(lambda: 1_000 in shown_ids(window) and window.history.at_bottom())
    qtbot.waitUntil(lambda: not window.chat_pane.jump_button.isVisible())


def test_a_chat_opens_at_its_first_unread_message(qtbot, account, window) -> None:
    account.postbox.run(
        lambda tx: tx.reset_read_state(ALICE, CLOUD, PeerReadState(700, 0, 700, 300))
    )
    alice = next(r for r in window.chat_model.rows if r.peer_id == int(ALICE))
    qtbot.waitUntil(
        lambda: next(r for r in window.chat_model.rows if r.peer_id == int(ALICE)).unread == 300
    )
    alice = next(r for r in window.chat_model.rows if r.peer_id == int(ALICE))
    window.open_chat(ALICE, alice.title, unread=alice.unread)
    qtbot.waitUntil(lambda: 701 in shown_ids(window))
    first, last = window.history.visible_range()
    visible = [
        r.id for r in window.history_model.rows[first : last + 1] if isinstance(r, MessageRow)
    ]
    assert visible[0] in (700, 701)  # the first unread, with the message before it
    assert not window.history.at_bottom()
    pane = window.chat_pane
    qtbot.waitUntil(lambda: pane.jump_button.isVisible())
    # What was on screen is read; the button shows what is left.
    qtbot.waitUntil(lambda: pane.view.read_state.get(CLOUD).max_incoming_read_id >= max(visible))
    assert pane.jump_button.text().startswith("↓")
    # The unread bar sits above the first message that was unread, and stays there
    # while the reader reads on.
    rows = window.history_model.rows
    bar = next(i for i, r in enumerate(rows) if isinstance(r, UnreadRow))
    assert isinstance(rows[bar + 1], MessageRow) and rows[bar + 1].id == 701
    assert sum(isinstance(r, UnreadRow) for r in rows) == 1


def test_a_fill_above_keeps_the_top_message_still(qtbot, account, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    bar = window.history.verticalScrollBar()
    bar.setValue(0)
    qtbot.waitUntil(lambda: isinstance(window.history_model.rows[0], LoadingRow))
    key, offset = window.history.top_row()
    assert key[0] == "message" or key[0] == "day"

    def fill(tx) -> None:  # what the hole filler writes for the range it fetched
        tx.add_messages(incoming(BOB, i) for i in range(250, 300))
        tx.remove_hole(BOB, CLOUD, EVERYWHERE, 250, 299)

    account.postbox.run(fill)
    qtbot.waitUntil(lambda: 299 in shown_ids(window))
    assert window.history.top_row() == (key, offset)
    assert not window.history.animator.running


def test_up_edits_the_last_sent_message(qtbot, account, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    pane = window.chat_pane
    pane.compose.setFocus()
    qtbot.keyClick(pane.compose, Qt.Key.Key_Up)
    assert pane.compose.text() == "see you at noon"
    assert pane.editing is not None and pane.editing.id == 400
    pane.compose.setText("see you at one")
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: any(r.text == "see you at one" for r in messages(window)))
    stored = account.postbox.run(lambda tx: tx.get_message(MessageId(BOB, CLOUD, 400)))
    assert stored.text == "see you at one"
    assert pane.editing is None and pane.compose.text() == ""


def test_group_messages_name_their_senders(qtbot, window) -> None:
    window.open_chat(CLUB, "Chess Club")
    qtbot.waitUntil(lambda: any(r.author for r in messages(window)))
    authors = [(r.id, r.author) for r in messages(window)]
    assert authors == [(1, "Alice Baker"), (2, ""), (3, "Bob Stone")]


def test_a_presence_change_reaches_the_profile(qtbot, account, window) -> None:
    window.open_chat(ALICE, "Alice Baker")
    window.chat_pane.info_button.setChecked(True)
    profile = window.profile
    qtbot.waitUntil(lambda: profile.name.text() == "Alice Baker")
    assert profile.presence.text() == "last seen a long time ago"
    online = PeerPresence(PresenceStatus.ONLINE, NOW + 300)
    account.postbox.run(lambda tx: tx.update_peer_presences({ALICE: online}))
    qtbot.waitUntil(lambda: profile.presence.text() == "online")
    qtbot.waitUntil(lambda: window.chat_pane.subtitle.text() == "online")
    seen = PeerPresence(PresenceStatus.OFFLINE, NOW - 120)
    account.postbox.run(lambda tx: tx.update_peer_presences({ALICE: seen}))
    qtbot.waitUntil(lambda: profile.presence.text() == "last seen 2 minutes ago")


def test_the_profile_counts_shared_media_and_toggles_notifications(qtbot, account, window) -> None:
    photo = StoreMessage(
        ALICE, CLOUD, 1_001, NOW, flags=int(MessageFlags.INCOMING), tags=int(MessageTags.PHOTO),
        media=(Media(MediaKind.PHOTO, 1),), text="look",
    )  # fmt: skip
    account.postbox.run(lambda tx: tx.replace_tag_summary(ALICE, int(MessageTags.PHOTO), 0, 4, 900))
    window.open_chat(ALICE, "Alice Baker")
    window.chat_pane.info_button.setChecked(True)
    counts = window.profile.media_counts
    qtbot.waitUntil(lambda: counts[int(MessageTags.PHOTO)].text() == "4")
    account.postbox.run(lambda tx: tx.add_messages([photo]))
    qtbot.waitUntil(lambda: counts[int(MessageTags.PHOTO)].text() == "5")
    assert window.profile.notifications.isChecked()
    window.profile.notifications.setChecked(False)
    qtbot.waitUntil(
        lambda: next(r for r in window.chat_model.rows if r.peer_id == int(ALICE)).muted
    )
    settings = account.postbox.run(lambda tx: tx.get_notification_settings(ALICE))
    assert settings.is_muted(NOW)


def test_the_inspector_lists_a_commit_and_the_views_it_re_emitted(qtbot, account, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    window.chat_pane.inspector_button.setChecked(True)
    inspector = window.inspector
    qtbot.waitUntil(lambda: bool(inspector.hole_map.segments))
    assert [s.kind.value for s in inspector.hole_map.segments] == ["stored", "hole"]
    account.postbox.run(lambda tx: tx.add_messages([incoming(BOB, 401, text="live one")]))
    qtbot.waitUntil(
        lambda: any("messages: 1 stored in Bob Stone" in e.changes for e in inspector.log)
    )
    entry = next(e for e in inspector.log if "messages: 1 stored in Bob Stone" in e.changes)
    assert ("history of Bob Stone", "Generic") in entry.views
    assert ("chat list (100)", "Generic") in entry.views
    inspector.refresh()
    tree = inspector.transactions
    qtbot.waitUntil(lambda: tree.topLevelItemCount() > 0)
    texts = [
        tree.topLevelItem(i).child(j).text(1)
        for i in range(tree.topLevelItemCount())
        for j in range(tree.topLevelItem(i).childCount())
    ]
    # Each view re-emitted says what woke it; the commit says how many views it consulted
    # of those open, and how many of them stayed silent.
    assert any(
        text.startswith("→ history of Bob Stone: Generic, 1 new message in Bob Stone")
        for text in texts
    )
    headlines = [tree.topLevelItem(i).text(1) for i in range(tree.topLevelItemCount())]
    assert any(
        f"of {entry.open_views} re-emitted · {len(entry.silent)} silent" in line
        for line in headlines
    )
    assert entry.open_views > entry.consulted
    # Later commits go on top of the tree drawn; it keeps the log's order and length.
    before = inspector.log.total
    for n in range(3):
        account.postbox.run(
            lambda tx, n=n: tx.add_messages([incoming(BOB, 402 + n, text=f"more {n}")])
        )
    qtbot.waitUntil(lambda: inspector.log.total >= before + 3)
    inspector.refresh()
    tops = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert tops == [item.text(0) for item in map(inspector._log_item, inspector.log)]
    assert [tree.topLevelItem(i).isExpanded() for i in range(len(tops))] == [
        i < 3 for i in range(len(tops))
    ]
    # A line selected tells its commit whole, unclipped, in the detail pane.
    commit = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0).startswith(f"#{entry.version} ")
    )
    tree.setCurrentItem(commit.child(commit.childCount() - 1))
    detail = inspector.detail.toPlainText()
    assert detail.startswith(f"Commit #{entry.version} at ")
    assert "  history of Bob Stone: Generic, because of 1 new message in Bob Stone" in detail


def test_the_inspector_names_a_peer_the_chat_list_does_not_show(qtbot, account, window) -> None:
    carol = PeerId.make(PeerNamespace.USER, 99)
    account.postbox.run(lambda tx: tx.update_peers([Peer(carol, "Carol Doe")]))
    window.chat_pane.inspector_button.setChecked(True)
    inspector = window.inspector

    def seen(at: int) -> None:
        presence = PeerPresence(PresenceStatus.ONLINE, at)
        account.postbox.run(lambda tx: tx.update_peer_presences({carol: presence}))

    # The first commit names her by id and has her name read; later ones use it.
    at = 1_000
    seen(at)

    def named() -> bool:
        nonlocal at
        at += 1
        seen(at)
        inspector.refresh()
        return any("presences: Carol Doe" in entry.changes for entry in inspector.log)

    qtbot.waitUntil(named, timeout=10_000)


def test_the_inspector_pauses_and_filters_by_chat_or_view(qtbot, account, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    window.chat_pane.inspector_button.setChecked(True)
    inspector = window.inspector
    tree = inspector.transactions

    def tops() -> list[str]:
        return [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]

    def logged(version_before: int) -> bool:
        inspector.refresh()
        return bool(inspector.log.total > version_before)

    before = inspector.log.total
    account.postbox.run(lambda tx: tx.add_messages([incoming(BOB, 401, text="to Bob")]))
    qtbot.waitUntil(lambda: logged(before))
    shown = tops()
    # Paused, new commits are logged but the list holds still; resumed, they show.
    inspector.pause_button.click()
    assert inspector.pause_button.text() == "Resume"
    before = inspector.log.total
    account.postbox.run(lambda tx: tx.add_messages([incoming(ALICE, 1_002, text="to Alice")]))
    qtbot.waitUntil(lambda: logged(before))
    assert tops() == shown
    inspector.pause_button.click()
    assert tops() == [item.text(0) for item in map(inspector._log_item, inspector.log)]
    # A filter keeps the commits that name a chat or a view.
    inspector.filter.setText("alice")
    assert tree.topLevelItemCount() >= 1
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        texts = [item.child(j).text(1) for j in range(item.childCount())]
        assert any("Alice" in text for text in texts)
    inspector.filter.setText("")
    assert tree.topLevelItemCount() == len(inspector.log)


def test_ctrl_k_finds_a_message_and_opens_its_chat_there(qtbot, account, window) -> None:
    account.postbox.run(
        lambda tx: tx.add_messages([incoming(ALICE, 1_001, text="the quarterly banana report")])
    )
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    search = window.search
    qtbot.waitUntil(search.isVisible)
    search.query.setText("banan")
    qtbot.waitUntil(lambda: search.status.text() == "1 message")
    qtbot.keyClick(search.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.open_peer == ALICE and 1_001 in shown_ids(window))
    assert not search.isVisible()
    # The message the search led to is tinted, and the tint fades away.
    history = window.chat_pane.history
    assert history.highlight.get(("message", 0, 1_001), 0) > 0
    qtbot.waitUntil(lambda: not history.highlight, timeout=5_000)
    search.open_search()
    search.query.setText("chess")
    qtbot.waitUntil(lambda: search.status.text().startswith("1 chat"))
    qtbot.keyClick(search.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.open_peer == CLUB)


def test_the_chat_list_window_grows_at_its_end(qtbot, account, window) -> None:
    def many(tx) -> None:
        for i in range(250):
            peer = PeerId.make(PeerNamespace.USER, 1_000 + i)
            list_chat(tx, peer, f"Person {i}")
            tx.add_messages([incoming(peer, 5_000 + i)])

    account.postbox.run(many)
    qtbot.waitUntil(lambda: len(window.chat_model.rows) == CHAT_LIST_PAGE)
    bar = window.chat_list.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: len(window.chat_model.rows) == 2 * CHAT_LIST_PAGE)
    assert all(isinstance(r, ChatRow) and not r.is_hole for r in window.chat_model.rows)


def test_the_title_line_says_offline_when_nothing_syncs(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.connection_label.text() == "Offline")
    assert window.connection_label.isVisible()


def test_the_status_line_comes_and_goes_without_moving_a_row(qtbot, account, window) -> None:
    """ "Updating…" shows for a moment several times a minute: the rows under the
    pointer stay where they are, and a click on the line reaches the row beneath."""

    def more_chats(tx) -> None:
        for n in range(30, 50):
            person = PeerId.make(PeerNamespace.USER, n)
            list_chat(tx, person, f"Person {n}")
            tx.add_messages([incoming(person, 1, text="hello")])

    account.postbox.run(more_chats)
    qtbot.waitUntil(lambda: len(window.chat_model.rows) == 23)
    qtbot.waitUntil(lambda: window.connection_label.text() == "Offline")
    window._status_timer.stop()
    chats = window.chat_list

    def first_row_top() -> QPoint:
        QApplication.processEvents()  # the layouts the change asked for
        rect = chats.visualRect(window.chat_model.index(0, 0))
        top: QPoint = chats.viewport().mapTo(window, rect.topLeft())
        return top

    before = first_row_top()
    updating = EngineStatus("connected", "pollDifference", (), 0, 0, {})
    idle = EngineStatus("connected", "", (), 0, 0, {})
    for status in (updating, idle, updating, None):
        window._show_status(status)
        assert first_row_top() == before
    window._show_status(updating)
    QApplication.processEvents()
    assert window.connection_label.text() == "Updating…"
    card = window.status_banner
    assert card.isVisible() and chats.rect().contains(card.geometry())
    where = chats.viewport().mapFrom(chats, card.geometry().center())
    row = chats.indexAt(where)
    assert row.isValid()
    qtbot.mouseClick(chats.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert window.open_peer == PeerId(window.chat_model.rows[row.row()].peer_id)


def test_the_keyboard_walks_the_chat_list_from_the_compose_box(qtbot, window) -> None:
    peers = [PeerId(row.peer_id) for row in window.chat_model.rows]
    window.open_chat(peers[0])
    compose = window.chat_pane.compose
    compose.setFocus()
    qtbot.waitUntil(compose.hasFocus)
    qtbot.keyClick(compose, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert window.open_peer == peers[1]
    qtbot.keyClick(compose, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.open_peer == peers[2]
    qtbot.keyClick(compose, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.open_peer == peers[2]  # the last chat stays open
    qtbot.keyClick(compose, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert window.open_peer == peers[1]
    selected = window.chat_list.selectionModel().selectedIndexes()
    assert [index.row() for index in selected] == [1]
    assert compose.hasFocus()


def test_a_narrow_window_shows_the_list_or_the_chat_with_a_way_back(qtbot, window) -> None:
    window.resize(520, 600)
    qtbot.waitUntil(lambda: window.narrow)
    assert window.side.isVisible() and not window.chat_pane.isVisible()
    policy = window.chat_list.horizontalScrollBarPolicy()
    assert policy == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    window.chat_list.setCurrentIndex(window.chat_model.index(0, 0))  # the user opens a chat
    qtbot.waitUntil(window.chat_pane.isVisible)
    assert not window.side.isVisible() and window.chat_pane.back_button.isVisible()
    # The header fits: its buttons are inside the window.
    header_right = window.chat_pane.inspector_button.mapTo(window, window.rect().topLeft())
    assert header_right.x() + window.chat_pane.inspector_button.width() <= window.width()
    qtbot.keyClick(window.chat_pane.compose, Qt.Key.Key_Escape)
    assert window.side.isVisible() and not window.chat_pane.isVisible()
    # The chat still open is one click away.
    rect = window.chat_list.visualRect(window.chat_model.index(0, 0))
    qtbot.mouseClick(window.chat_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.chat_pane.isVisible() and not window.side.isVisible()
    qtbot.keyClick(window.chat_pane.compose, Qt.Key.Key_Escape)
    window.resize(1000, 640)
    qtbot.waitUntil(lambda: not window.narrow)
    assert window.side.isVisible() and window.chat_pane.isVisible()
    assert not window.chat_pane.back_button.isVisible()
    assert window.minimumWidth() >= 380


def menu_texts(window, row: MessageRow) -> list[str]:
    return [a.text() for a in window.chat_pane.message_menu(row).actions() if a.text()]


def row_of(window, id_: int) -> MessageRow:
    return next(r for r in messages(window) if r.id == id_)


def test_a_message_menu_offers_what_fits_the_message(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    own, theirs = row_of(window, 400), row_of(window, 399)
    assert menu_texts(window, own) == [
        "Reply", "Copy text", "Edit", "Forward…", "Select", "Delete"
    ]  # fmt: skip
    assert menu_texts(window, theirs) == ["Reply", "Copy text", "Forward…", "Select", "Delete"]
    window.chat_pane.message_menu(own).actions()[1].trigger()  # Copy text
    assert QApplication.clipboard().text() == "see you at noon"


def test_a_reply_carries_its_reference_and_shows_what_it_answers(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 399 in shown_ids(window))
    pane = window.chat_pane
    pane.start_reply(row_of(window, 399))
    assert pane.edit_banner.text().startswith("Reply to Bob Stone: message 399")
    pane.compose.setText("agreed")
    qtbot.keyClick(pane.compose, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: any(r.text == "agreed" for r in messages(window)))
    sent = next(r for r in messages(window) if r.text == "agreed")
    assert sent.reply is not None and sent.reply.id == 399
    assert sent.reply.author == "Bob Stone" and sent.reply.text.startswith("message 399")
    assert pane.replying is None and pane.edit_banner.isHidden()
    stored = window.account.postbox.run(
        lambda tx: tx.get_messages(BOB, 1, limit=1, newest_first=True)
    )
    assert stored[0].reply_to_id == 399


def test_a_click_on_a_reply_jumps_to_the_message_it_answers(qtbot, account, window) -> None:
    account.postbox.run(
        lambda tx: tx.add_messages(
            [
                StoreMessage(ALICE, CLOUD, 1_001, NOW, flags=int(MessageFlags.INCOMING),
                             author_id=ALICE, text="about that", reply_to_id=5)
            ]
        )
    )  # fmt: skip
    window.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: 1_001 in shown_ids(window))

    def answered_shown() -> bool:
        reply = row_of(window, 1_001).reply
        assert reply is not None
        return reply.text.startswith("message 5")

    # The message answered lies outside the window: fetched, then shown in the preview.
    qtbot.waitUntil(answered_shown)
    history = window.history
    history.scrollToBottom()
    qtbot.waitUntil(lambda: ("message", 0, 1_001) in history.itemDelegate().reply_areas)
    index = window.history_model.index(window.history_model.row_of(("message", 0, 1_001)), 0)
    area = history.itemDelegate().reply_areas[("message", 0, 1_001)]
    point = area.translated(history.visualRect(index).topLeft()).center()
    assert window.chat_pane.reply_at(point) == 5
    qtbot.mouseClick(history.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: 5 in shown_ids(window))
    assert history.highlight.get(("message", 0, 5), 0) > 0


def delete_log(window, peer: PeerId) -> list[tuple[tuple[int, ...], bool]]:
    entries = window.account.postbox.run(lambda tx: tx.get_operation_log_entries(peer, 6))
    return [(tuple(e.contents["ids"]), e.contents["revoke"]) for e in entries]


def test_delete_asks_first_and_cancel_deletes_nothing(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    pane = window.chat_pane
    actions = {a.text(): a for a in pane.message_menu(row_of(window, 399)).actions()}
    actions["Delete"].trigger()
    # Before, the message went at once, with no way back.
    dialog = pane.delete_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.heading.text() == "Delete message?"
    assert dialog.revoke is not None and dialog.revoke.text() == "Also delete for Bob"
    assert dialog.revoke.isChecked()
    assert dialog.delete_button.isDefault() and dialog.delete_button.objectName() == "destructive"
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert pane.delete_dialog is None and not dialog.isVisible()
    assert 399 in shown_ids(window)
    assert delete_log(window, BOB) == []


def centred(main: MainWindow, id_: int) -> bool:
    """Message ``id_`` sits in the middle of the history's viewport."""
    history = main.history
    position = main.history_model.row_of(("message", CLOUD, id_))
    assert position is not None
    index = main.history_model.index(position, 0)
    middle = history.viewport().rect().center().y()
    return abs(history.visualRect(index).center().y() - middle) <= 2


def test_a_jump_centres_its_message_and_tints_it(qtbot, window) -> None:
    window.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: 1_000 in shown_ids(window))
    window.chat_pane.jump_to_message(500)
    qtbot.waitUntil(lambda: 500 in shown_ids(window))
    assert centred(window, 500)
    assert window.history.highlight.get(("message", CLOUD, 500), 0) > 0


def test_a_jump_into_a_hole_lands_when_the_fill_brings_its_message(qtbot, account, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    window.chat_pane.jump_to_message(150)  # 1..299 is a hole here
    qtbot.waitUntil(lambda: not shown_ids(window))

    def fill(tx) -> None:
        tx.remove_hole(BOB, CLOUD, EVERYWHERE, 1, 299)
        tx.add_messages(incoming(BOB, i) for i in range(1, 300))

    account.postbox.run(fill)
    qtbot.waitUntil(lambda: 150 in shown_ids(window))
    assert centred(window, 150)
    assert window.history.highlight.get(("message", CLOUD, 150), 0) > 0


def test_delete_for_everyone_takes_the_message_out_of_the_view(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    actions = {a.text(): a for a in window.chat_pane.message_menu(row_of(window, 400)).actions()}
    actions["Delete"].trigger()
    dialog = window.chat_pane.delete_dialog
    assert dialog is not None
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: 400 not in shown_ids(window))
    assert delete_log(window, BOB) == [((400,), True)]


def test_enter_deletes_for_me_when_the_box_is_unticked(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 399 in shown_ids(window))
    dialog = window.chat_pane.ask_delete([row_of(window, 399)])
    assert dialog is not None and dialog.revoke is not None
    dialog.revoke.setChecked(False)
    qtbot.keyClick(dialog, Qt.Key.Key_Return)  # Delete is the default button
    qtbot.waitUntil(lambda: 399 not in shown_ids(window))
    assert delete_log(window, BOB) == [((399,), False)]


def test_in_a_group_only_the_accounts_own_messages_offer_delete_for_everyone(
    qtbot, account, window
) -> None:
    account.postbox.run(lambda tx: tx.add_messages([outgoing(CLUB, 4, "I'll bring it")]))
    window.open_chat(CLUB, "Chess Club")
    qtbot.waitUntil(lambda: 4 in shown_ids(window))
    pane = window.chat_pane
    theirs = pane.ask_delete([row_of(window, 2), row_of(window, 4)])
    assert theirs is not None and theirs.heading.text() == "Delete 2 messages?"
    assert theirs.revoke is None and theirs.note.text().endswith("deleted for you only.")
    theirs.reject()
    ours = pane.ask_delete([row_of(window, 4)])
    assert ours is not None and ours.revoke is not None
    assert ours.revoke.text() == "Delete for everyone"
    ours.accept()
    qtbot.waitUntil(lambda: 4 not in shown_ids(window))
    assert delete_log(window, CLUB) == [((4,), True)]


def test_a_wheel_turned_on_at_the_top_of_the_window_moves_it_on(qtbot, window) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent

    window.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: 1_000 in shown_ids(window))
    pane, history = window.chat_pane, window.history
    bar = history.verticalScrollBar()
    # At the top of the loaded rows with no scroll signal to come (as when a flick's
    # move was already under way): only the wheel itself can say the reader wants more.
    bar.blockSignals(True)
    bar.setValue(0)
    bar.blockSignals(False)
    moves = pane.window_moves
    centre = QPointF(history.viewport().rect().center())
    wheel = QWheelEvent(
        centre, QPointF(history.viewport().mapToGlobal(centre.toPoint())), QPoint(0, 0),
        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QApplication.sendEvent(history.viewport(), wheel)
    qtbot.waitUntil(lambda: pane.window_moves > moves)
    qtbot.waitUntil(lambda: min(shown_ids(window)) < 1_000 - HISTORY_WINDOW - 5)


def test_a_web_address_is_a_link_that_opens_on_click(qtbot, account, window, monkeypatch) -> None:
    from PySide6.QtGui import QDesktopServices, QFontMetrics

    url = "https://example.com/the-plan"
    account.postbox.run(lambda tx: tx.add_messages([incoming(BOB, 401, text=f"see {url} now")]))
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 401 in shown_ids(window))
    history = window.history
    history.scrollToBottom()
    delegate = history.itemDelegate()
    key = ("message", 0, 401)
    qtbot.waitUntil(lambda: key in delegate.text_areas)
    index = window.history_model.index(window.history_model.row_of(key), 0)
    area = delegate.text_areas[key].translated(history.visualRect(index).topLeft())
    metrics = QFontMetrics(history.font())
    on_link = area.topLeft() + QPoint(metrics.horizontalAdvance("see ") + 8, 4)
    off_link = area.topLeft() + QPoint(2, 4)
    assert window.chat_pane.link_at(on_link) == url
    assert window.chat_pane.link_at(off_link) is None
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda address: opened.append(address))
    qtbot.mouseClick(history.viewport(), Qt.MouseButton.LeftButton, pos=on_link)
    assert [address.toString() for address in opened] == [url]


def test_selected_messages_are_copied_or_deleted_together(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    pane, history = window.chat_pane, window.history
    actions = {a.text(): a for a in pane.message_menu(row_of(window, 400)).actions()}
    actions["Select"].trigger()
    # Ctrl+click adds another.
    index = window.history_model.index(window.history_model.row_of(("message", 0, 399)), 0)
    history.scrollTo(index)
    point = history.visualRect(index).center()
    qtbot.mouseClick(
        history.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, point
    )
    assert set(history.selected_keys) == {("message", 0, 399), ("message", 0, 400)}
    assert pane.selection.isVisible()
    assert pane.selection.label.text() == "2 messages selected"
    pane.selection.copy_button.click()
    assert QApplication.clipboard().text() == f"{row_of(window, 399).text}\n\nsee you at noon"
    pane.selection.delete_button.click()
    dialog = pane.delete_dialog
    assert dialog is not None and dialog.heading.text() == "Delete 2 messages?"
    dialog.reject()  # Cancel: nothing goes, the selection stays
    assert pane.selection.selected and delete_log(window, BOB) == []
    pane.selection.delete_button.click()
    dialog = pane.delete_dialog
    assert dialog is not None and dialog.revoke is not None
    dialog.revoke.setChecked(False)
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: 399 not in shown_ids(window) and 400 not in shown_ids(window))
    assert not pane.selection.selected and not pane.selection.isVisible()
    # "Also delete for Bob" unticked: deleted for this account only.
    assert delete_log(window, BOB) == [((399, 400), False)]


def test_a_double_click_lets_the_mouse_select_a_messages_text(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    history, pane = window.history, window.chat_pane
    key = ("message", 0, 400)
    index = window.history_model.index(window.history_model.row_of(key), 0)
    history.scrollTo(index)
    qtbot.waitUntil(lambda: key in history.itemDelegate().text_areas)
    area = history.itemDelegate().text_areas[key].translated(history.visualRect(index).topLeft())
    qtbot.mouseDClick(
        history.viewport(), Qt.MouseButton.LeftButton, pos=area.topLeft() + QPoint(3, 4)
    )
    overlay = pane._text_overlay
    assert overlay is not None and overlay.isVisible()
    assert overlay.toPlainText() == "see you at noon"
    assert overlay.textCursor().selectedText() == "see"  # the word double-clicked
    overlay.selectAll()
    overlay.copy()
    assert QApplication.clipboard().text() == "see you at noon"
    history.verticalScrollBar().setValue(0)  # scrolling puts the bubble back as it was
    assert pane._text_overlay is None


def test_forward_asks_for_a_chat_then_opens_it_with_the_copy(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 399 in shown_ids(window))
    actions = {a.text(): a for a in window.chat_pane.message_menu(row_of(window, 399)).actions()}
    actions["Forward…"].trigger()
    picker = window.forward_picker
    assert picker is not None and picker.isVisible()
    assert picker.heading.text() == "Forward message to…"
    assert picker.shown_titles() == ["Alice Baker", "Bob Stone", "Chess Club"]
    qtbot.keyClicks(picker.filter, "club")
    assert picker.shown_titles() == ["Chess Club"]
    qtbot.keyClick(picker.filter, Qt.Key.Key_Return)
    assert not picker.isVisible()
    # Only this choice opened the chat; the copy is there, pending, saying where it is from.
    assert window.chat_pane.peer_id == CLUB

    def copy() -> MessageRow | None:
        return next((r for r in messages(window) if r.namespace != CLOUD), None)

    def forwarded() -> bool:
        row = copy()
        return row is not None and row.forwarded_from == "Bob Stone"

    qtbot.waitUntil(forwarded)
    row = copy()
    assert row is not None
    assert row.text == row_of_text(399) and row.outgoing and row.delivery == "pending"
    entries = window.account.postbox.run(lambda tx: tx.get_operation_log_entries(CLUB, 1))
    assert [tuple(e.contents["forward"]) for e in entries] == [(int(BOB), 399)]
    # A forward is drawn with its "Forwarded from" line, and is not offered for editing.
    delegate = window.history.itemDelegate()
    index = window.history_model.index(window.history_model.row_of(row.key), 0)
    option = QStyleOptionViewItem()
    window.history.initViewItemOption(option)
    plain = dataclasses.replace(row, forwarded_from=None)
    assert delegate.sizeHint(option, index).height() > delegate._full_height(option, plain)
    sent = dataclasses.replace(row, namespace=CLOUD, delivery="sent")
    labels = [a.text() for a in window.chat_pane.message_menu(sent).actions()]
    assert "Edit" not in labels and "Forward…" in labels


def row_of_text(id_: int) -> str:
    return incoming(BOB, id_).text


def test_selected_messages_are_forwarded_together_oldest_first(qtbot, window) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    pane = window.chat_pane
    pane.selection.toggle(row_of(window, 400))
    pane.selection.toggle(row_of(window, 398))
    assert pane.selection.forward_button.isVisible()
    pane.selection.forward_button.click()
    picker = window.forward_picker
    assert picker is not None and picker.heading.text() == "Forward 2 messages to…"
    assert not pane.selection.isVisible()
    picker.list.itemClicked.emit(picker.list.item(0))  # Alice Baker
    assert pane.peer_id == ALICE
    entries = window.account.postbox.run(lambda tx: tx.get_operation_log_entries(ALICE, 1))
    assert [tuple(e.contents["forward"]) for e in entries] == [(int(BOB), 398), (int(BOB), 400)]


def test_tinting_a_selected_row_leaves_the_shared_accent_colour_alone(qtbot, window) -> None:
    from ui.theme import current_theme, qcolor

    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    window.chat_pane.selection.toggle(row_of(window, 400))
    window.history.viewport().repaint()  # paints the tinted row
    assert qcolor(current_theme().accent).alpha() == 255


def test_the_reply_edit_and_selection_bars_keep_the_chat_at_the_bottom(
    qtbot, account, window
) -> None:
    window.open_chat(BOB, "Bob Stone")
    qtbot.waitUntil(lambda: 400 in shown_ids(window))
    pane, history = window.chat_pane, window.history
    bar = history.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and history.at_bottom())

    def bar_changes_height(open_or_close) -> None:
        height = history.viewport().height()
        open_or_close()
        qtbot.waitUntil(lambda: history.viewport().height() != height)
        assert bar.value() == bar.maximum()

    for open_bar, close_bar in (
        (lambda: pane.start_reply(row_of(window, 399)), pane.cancel_reply),
        (lambda: pane.start_edit(row_of(window, 400)), pane.cancel_edit),
        (lambda: pane.selection.toggle(row_of(window, 398)), pane.selection.clear),
    ):
        bar_changes_height(open_bar)
        bar_changes_height(close_bar)
    # Still at the bottom, so a message arriving now slides into sight.
    account.postbox.run(lambda tx: tx.add_messages([incoming(BOB, 401, text="on my way")]))
    qtbot.waitUntil(lambda: 401 in shown_ids(window))
    qtbot.waitUntil(lambda: not history.animator.running, timeout=2_000)
    assert bar.value() == bar.maximum()


def test_the_compose_box_holds_no_more_than_a_draft_may(qtbot) -> None:
    """A paste past the limit is cut there, so its draft can be kept."""
    box = ComposeBox()
    qtbot.addWidget(box)
    box.insertPlainText("y" * (MAX_DRAFT_LENGTH + 500))
    assert box.text() == "y" * MAX_DRAFT_LENGTH
    box.insertPlainText("z")
    assert box.text() == "y" * MAX_DRAFT_LENGTH


def test_the_placeholder_is_the_longest_that_fits_on_one_line(qtbot) -> None:
    """A narrow box (the inspector open beside it) shows a shorter hint instead of a
    wrapped one cut in half by the one-line box."""
    box = ComposeBox()
    qtbot.addWidget(box)
    long, short = "Write a message…  (Shift+Enter: new line)", "Write a message…"
    box.set_placeholders(long, short)
    room = box.fontMetrics().horizontalAdvance(long)
    box.resize(room + 80, box.height())
    box.show()
    qtbot.waitUntil(lambda: box.placeholderText() == long)
    box.resize(room // 2, box.height())
    qtbot.waitUntil(lambda: box.placeholderText() == short)
    box.resize(room + 80, box.height())
    qtbot.waitUntil(lambda: box.placeholderText() == long)
