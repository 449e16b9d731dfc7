"""The sticker picker over a local database (no server): it lists the sets from the item
collection views, follows them live, and a click queues a sticker message that the
history draws as a sticker."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem

from client.account import Account
from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    ForwardInfo,
    Glyph,
    GlyphShape,
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionInfosViewKey,
    ItemCollectionItem,
    ItemCollectionNamespace,
    Media,
    MediaKind,
    Message,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageId,
    MessageIndex,
    MessageNamespace,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    StoreMessage,
    Transaction,
)
from sync.engine.log_tags import SEND_TAG
from ui.delegates import HistoryDelegate
from ui.main_window import MainWindow
from ui.models import ROW_ROLE
from ui.rows import MessageRow, StickerFace, pack_tabs, preview_text, sticker_cells
from ui.sticker_picker import StickerPicker
from ui.stickers import sticker_row_height

pytestmark = pytest.mark.gui

NOW = int(time.time())
CLOUD = int(MessageNamespace.CLOUD)
LOCAL = int(MessageNamespace.LOCAL)
PACKS = int(ItemCollectionNamespace.STICKER_PACKS)
GIFS = int(ItemCollectionNamespace.SAVED_GIFS)
ALICE = PeerId.make(PeerNamespace.USER, 11)
EVERYWHERE = MessageHistoryHoleSpace.everywhere()


def sticker(set_id: int, index: int, emoji: str) -> Media:
    glyph = Glyph(emoji, GlyphShape(index % len(GlyphShape)), 0xF4A261, set_id)
    return Media(MediaKind.STICKER, set_id * 100 + index, glyph=glyph)


def install(tx: Transaction, sets: dict[int, tuple[str, str]]) -> None:
    """Store sets (id: (title, emoji)) in this order, and two saved GIFs."""
    infos = []
    for set_id, (title, emoji) in sets.items():
        collection_id = ItemCollectionId(PACKS, set_id)
        infos.append((collection_id, ItemCollectionInfo(title, len(emoji), set_id * 7)))
        tx.replace_item_collection_items(
            collection_id,
            [ItemCollectionItem(i, sticker(set_id, i, e), (e,)) for i, e in enumerate(emoji)],
        )
    tx.replace_item_collection_infos(PACKS, infos)
    gifs = ItemCollectionId(GIFS, 0)
    tx.replace_item_collection_infos(GIFS, [(gifs, ItemCollectionInfo("Saved GIFs", 2, 5))])
    tx.replace_item_collection_items(
        gifs,
        [
            ItemCollectionItem(
                i,
                Media(MediaKind.GIF, 900 + i, glyph=Glyph(e, GlyphShape.ROUNDED_SQUARE, 0x5FA8D3)),
            )
            for i, e in enumerate("🎬🐧")
        ],
    )


SETS = {1: ("Cats", "🐱🐶😺🐕"), 2: ("Food", "🍕🍔🍣")}


@pytest.fixture
def account(tmp_path):
    account = Account(tmp_path / "local.db", "127.0.0.1", 1, "unused")

    def seed(tx: Transaction) -> None:
        for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
            for hole in tx.get_chat_list_holes(group):
                tx.remove_chat_list_hole(group, hole)
        tx.update_peers([Peer(ALICE, "Alice Baker")])
        tx.update_chat_list_inclusion(ALICE, ChatListInclusion(PeerGroupId.ROOT))
        tx.remove_hole(ALICE, CLOUD, EVERYWHERE, 1, MAX_MESSAGE_ID)
        tx.add_messages(
            StoreMessage(ALICE, CLOUD, i, NOW - 1000 + i, flags=int(MessageFlags.INCOMING),
                         author_id=ALICE, text=f"message {i}")
            for i in range(1, 6)
        )  # fmt: skip
        install(tx, SETS)

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
    qtbot.waitUntil(lambda: len(main.chat_model.rows) == 1)
    main.open_chat(ALICE, "Alice Baker")
    qtbot.waitUntil(lambda: any(isinstance(r, MessageRow) for r in main.history_model.rows))
    yield main
    main.close_feeds()


def open_picker(qtbot, window: MainWindow) -> StickerPicker:
    picker = window.chat_pane.sticker_button.open_picker()
    qtbot.waitUntil(lambda: len(picker.tabs) == 3 and picker.model.rowCount() == 4)
    return picker


def test_rows_for_the_picker_come_from_the_views_in_order() -> None:
    cells = sticker_cells([ItemCollectionItem(0, sticker(1, 0, "🐱"))], "Cats")
    assert cells[0].face == StickerFace("🐱", "circle", "#f4a261") and cells[0].title == "🐱  Cats"
    # Media that is not a sticker has no face, and no cell.
    assert sticker_cells([ItemCollectionItem(0, Media(MediaKind.PHOTO, 1))]) == []
    index = MessageIndex(MessageId(ALICE, CLOUD, 1), NOW)
    message = Message(index, 0, 0, None, "", (sticker(1, 0, "🐱"),))
    assert preview_text(message) == "🐱 Sticker"


def test_the_picker_lists_the_sets_and_the_gifs(qtbot, qtmodeltester, window) -> None:
    picker = open_picker(qtbot, window)
    assert [(tab.title, tab.gifs) for tab in picker.tabs] == [
        ("Cats", False), ("Food", False), ("Saved GIFs", True)
    ]  # fmt: skip
    assert picker.tabs[0].face is not None and picker.tabs[0].face.emoji == "🐱"
    assert [cell.face.emoji for cell in picker.model.rows] == list("🐱🐶😺🐕")
    assert picker.heading.text() == "Cats"
    qtmodeltester.check(picker.model)
    picker.select(picker.tabs[2].key)
    qtbot.waitUntil(lambda: [c.face.gif for c in picker.model.rows] == [True, True])
    qtmodeltester.check(picker.model)


def test_the_picker_follows_the_views_live(qtbot, window, account) -> None:
    picker = open_picker(qtbot, window)
    account.postbox.run(lambda tx: install(tx, {2: SETS[2], 3: ("Space", "🚀🪐"), 1: SETS[1]}))
    qtbot.waitUntil(
        lambda: [t.title for t in picker.tabs] == ["Food", "Space", "Cats", "Saved GIFs"]
    )
    assert picker.current == ItemCollectionId(PACKS, 1)  # the grid shown stays
    # A sticker leaves the set on screen: its grid follows.
    account.postbox.run(
        lambda tx: tx.replace_item_collection_items(
            ItemCollectionId(PACKS, 1), [ItemCollectionItem(0, sticker(1, 0, "🐱"))]
        )
    )
    qtbot.waitUntil(lambda: [c.face.emoji for c in picker.model.rows] == ["🐱"])
    picker.hide()
    assert picker._infos_feed is None and picker._items_feed is None  # views closed


def test_clicking_a_sticker_queues_a_sticker_message(qtbot, window, account) -> None:
    picker = open_picker(qtbot, window)
    index = picker.model.index(1, 0)
    chosen = index.data(ROW_ROLE).media
    qtbot.mouseClick(
        picker.grid.viewport(),
        Qt.MouseButton.LeftButton,
        pos=picker.grid.visualRect(index).center(),
    )
    assert not picker.isVisible()

    def sticker_rows() -> list[MessageRow]:
        return [r for r in window.history_model.rows if isinstance(r, MessageRow) and r.sticker]

    qtbot.waitUntil(lambda: len(sticker_rows()) == 1)
    (row,) = sticker_rows()
    assert row.namespace == LOCAL and row.delivery == "pending" and row.outgoing
    assert row.sticker == StickerFace("🐶", "rounded_square", "#f4a261") and row.text == ""
    queued = account.postbox.run(lambda tx: tx.get_operation_log_entries(ALICE, SEND_TAG))
    assert [tuple(entry.contents["media"]) for entry in queued] == [(chosen.encode(),)]
    # Drawn as a sticker: no bubble, as tall as a sticker row.
    delegate = window.history.itemDelegate()
    assert isinstance(delegate, HistoryDelegate)
    option = QStyleOptionViewItem()
    window.history.initViewItemOption(option)
    position = window.history_model.row_of(row.key)
    assert position is not None
    size = delegate.sizeHint(option, window.history_model.index(position, 0))
    assert size.height() == sticker_row_height(row, option.fontMetrics.height())
    image = QImage(600, size.height(), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    option.rect = QRect(0, 0, 600, size.height())
    delegate.paint(painter, option, window.history_model.index(position, 0))
    painter.end()
    assert image.pixelColor(10, size.height() // 2).alpha() == 0  # nothing on the left side
    assert image.pixelColor(600 - 20 - size.height() // 3, size.height() // 2).alpha() > 0


def test_a_sticker_is_sent_alone(account) -> None:
    with pytest.raises(ValueError, match="without text"):
        account.send_media(ALICE, sticker(1, 0, "🐱"), text="hi")
    with pytest.raises(ValueError, match="sticker or GIF"):
        account.send_media(ALICE, Media(MediaKind.PHOTO, 1))


def test_pack_tabs_mark_the_gifs(account) -> None:
    key = ItemCollectionInfosViewKey((PACKS, GIFS))
    subscription = account.postbox.combined_view([key])
    try:
        tabs = pack_tabs(subscription.ready.result()[key], GIFS)
    finally:
        subscription.dispose()
    assert [tab.gifs for tab in tabs] == [False, False, True]


def test_a_forwarded_sticker_is_a_card_that_says_so(qtbot, window, account) -> None:
    cat = sticker(1, 0, "🐱")

    def receive(tx: Transaction) -> None:
        tx.add_messages(
            [
                StoreMessage(ALICE, CLOUD, 10, NOW - 10, flags=int(MessageFlags.INCOMING),
                             author_id=ALICE, media=(cat,)),
                StoreMessage(ALICE, CLOUD, 11, NOW - 5, flags=int(MessageFlags.INCOMING),
                             author_id=ALICE, media=(cat,),
                             forward_info=ForwardInfo(ALICE, NOW - 1000)),
            ]
        )  # fmt: skip

    account.postbox.run(receive)

    def shown() -> dict[int, MessageRow]:
        rows = window.history_model.rows
        return {r.id: r for r in rows if isinstance(r, MessageRow) and r.id in (10, 11)}

    qtbot.waitUntil(lambda: len(shown()) == 2)
    plain, forwarded = shown()[10], shown()[11]
    assert plain.sticker is not None and plain.sticker.emoji == "🐱"
    assert forwarded.sticker is None and forwarded.forwarded_from == "Alice Baker"
    assert forwarded.media == "🐱 Sticker" and forwarded.media_kind == "sticker"
