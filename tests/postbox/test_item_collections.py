"""Item collections (sticker packs, saved GIFs): the two tables, their change record and
their views, live and opened fresh."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import (
    AnyViewKey,
    ChangeRecord,
    CorruptValueError,
    Glyph,
    GlyphShape,
    InvalidArgumentError,
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionInfosView,
    ItemCollectionInfosViewKey,
    ItemCollectionItem,
    ItemCollectionItemsView,
    ItemCollectionItemsViewKey,
    ItemCollectionNamespace,
    Media,
    MediaKind,
    Postbox,
    Transaction,
)
from postbox.keys import (
    decode_item_collection_info_key,
    decode_item_collection_item_key,
    item_collection_info_key,
    item_collection_item_key,
)
from postbox.views.subscription import CombinedView

PACKS = int(ItemCollectionNamespace.STICKER_PACKS)
GIFS = int(ItemCollectionNamespace.SAVED_GIFS)


def sticker(id_: int, emoji: str = "😀", set_id: int = 1) -> Media:
    return Media(MediaKind.STICKER, id_, glyph=Glyph(emoji, GlyphShape.STAR, 0xFFAA00, set_id))


def pack(id_: int, title: str = "Pack", hash_: int = 0) -> tuple[ItemCollectionId, Any]:
    return ItemCollectionId(PACKS, id_), ItemCollectionInfo(title, 3, hash_, f"p{id_}", id_ * 7)


def items(set_id: int, count: int = 3) -> list[ItemCollectionItem]:
    return [
        ItemCollectionItem(
            i, sticker(set_id * 100 + i, "😺🐶🍕"[i % 3], set_id), ("😺🐶🍕"[i % 3],)
        )
        for i in range(count)
    ]


def test_keys_order_by_namespace_then_index() -> None:
    keys = [item_collection_info_key(n, i) for n in (0, 1) for i in (0, 1, 300)]
    assert keys == sorted(keys)
    assert decode_item_collection_info_key(item_collection_info_key(1, 300)) == (1, 300)
    item_keys = [item_collection_item_key(0, c, i) for c in (-5, 2, 2**62) for i in (0, 9)]
    assert item_keys == sorted(item_keys)
    assert decode_item_collection_item_key(item_collection_item_key(1, -5, 9)) == (1, -5, 9)


def test_glyph_media_round_trips_and_plain_media_keeps_its_layout() -> None:
    media = sticker(5, "🦊", 42)
    assert Media.decode(media.encode()) == media
    plain = Media(MediaKind.PHOTO, 1, 10, None, "a photo")
    assert plain.encode() == (0, 1, 10, None, "a photo")  # as stored before glyphs
    assert Media.decode((0, 1, 10, None, "a photo")) == plain


def test_collections_round_trip_in_order(postbox: Postbox) -> None:
    def write(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, [pack(3, "C"), pack(1, "A"), pack(2, "B")])
        for id_ in (1, 2, 3):
            tx.replace_item_collection_items(ItemCollectionId(PACKS, id_), items(id_))
        gif = Media(MediaKind.GIF, 9, glyph=Glyph("🎉", GlyphShape.ROUNDED_SQUARE, 0x3366FF))
        tx.replace_item_collection_infos(
            GIFS, [(ItemCollectionId(GIFS, 0), ItemCollectionInfo("GIFs"))]
        )
        tx.replace_item_collection_items(ItemCollectionId(GIFS, 0), [ItemCollectionItem(0, gif)])

    postbox.run(write)
    listed = postbox.run(lambda tx: tx.get_item_collection_infos(PACKS))
    assert [info.title for _, info in listed] == ["C", "A", "B"]
    assert listed[1] == pack(1, "A")
    stored = postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, 2)))
    assert stored == items(2)
    first = postbox.run(
        lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, 2), limit=1)
    )
    assert first == items(2)[:1]
    assert (
        postbox.run(lambda tx: tx.get_item_collection_info(ItemCollectionId(PACKS, 3)))
        == (pack(3, "C")[1])
    )
    assert postbox.run(lambda tx: tx.get_item_collection_info(ItemCollectionId(PACKS, 4))) is None
    gifs = postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(GIFS, 0)))
    assert [item.media.kind for item in gifs] == [MediaKind.GIF]


def test_a_collection_no_longer_listed_loses_its_items(postbox: Postbox) -> None:
    def write(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, [pack(1), pack(2)])
        tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), items(1))
        tx.replace_item_collection_items(ItemCollectionId(PACKS, 2), items(2))

    postbox.run(write)
    postbox.run(lambda tx: tx.replace_item_collection_infos(PACKS, [pack(2)]))
    assert postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, 1))) == []
    assert postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, 2))) == (
        items(2)
    )
    # Fewer items than before: the rest go.
    postbox.run(
        lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 2), items(2, 1))
    )
    assert (
        len(postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, 2)))) == 1
    )


def test_the_change_record_names_what_changed_and_nothing_else(postbox: Postbox) -> None:
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)

    def write(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, [pack(1), pack(2)])
        tx.replace_item_collection_items(ItemCollectionId(PACKS, 2), items(2))

    postbox.run(write)
    assert records[-1].updated_item_collection_infos == {PACKS}
    assert records[-1].updated_item_collection_items == {ItemCollectionId(PACKS, 2)}
    postbox.run(write)  # the same again: no commit at all
    assert len(records) == 1
    postbox.run(lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), items(1)))
    assert records[-1].updated_item_collection_infos == frozenset()
    assert records[-1].updated_item_collection_items == {ItemCollectionId(PACKS, 1)}


@pytest.mark.parametrize(
    "write",
    [
        lambda tx: tx.replace_item_collection_infos(PACKS, [pack(1), pack(1)]),
        lambda tx: tx.replace_item_collection_infos(GIFS, [pack(1)]),
        lambda tx: tx.replace_item_collection_infos(2**40, []),
        lambda tx: tx.replace_item_collection_infos(PACKS, [((PACKS, 2**70), pack(1)[1])]),
        lambda tx: tx.replace_item_collection_infos(PACKS, [(ItemCollectionId(PACKS, 1), "x")]),
        lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), items(1) * 2),
        lambda tx: tx.replace_item_collection_items(
            ItemCollectionId(PACKS, 1), [ItemCollectionItem(-1, sticker(1))]
        ),
        lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), [sticker(1)]),
    ],
)
def test_bad_arguments_are_refused_and_leave_the_data(
    postbox: Postbox, write: Callable[[Transaction], None]
) -> None:
    postbox.run(lambda tx: tx.replace_item_collection_infos(PACKS, [pack(5)]))
    with pytest.raises(InvalidArgumentError):
        postbox.run(write)
    assert postbox.run(lambda tx: tx.get_item_collection_infos(PACKS)) == [pack(5)]


@pytest.mark.parametrize(
    ("table", "value"),
    [
        ("t_item_collection_infos", msgpack.packb([1, 0, "id", "title", 0, 0])),
        ("t_item_collection_infos", msgpack.packb([2, 0, 1, "title", 0, 0])),
        ("t_item_collection_infos", b"\xc1"),
        ("t_item_collection_items", msgpack.packb([1, 0, [99, 1, 0, None, None]])),
        ("t_item_collection_items", msgpack.packb([1, 0, [5, 1, 0, None, None, [1, 0, 0, 0]]])),
        ("t_item_collection_items", msgpack.packb([1, 1, [5, 1, 0, None, None], [7]])),
    ],
)
def test_a_damaged_value_is_a_corrupt_value_error(db_path: Path, table: str, value: bytes) -> None:
    with Postbox(db_path) as postbox:
        postbox.run(lambda tx: tx.replace_item_collection_infos(PACKS, [pack(1)]))
        postbox.run(
            lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), items(1))
        )
    db = apsw.Connection(str(db_path))
    db.execute(f"UPDATE {table} SET value = ?", (value,))  # noqa: S608
    db.close()

    def read(tx: Transaction) -> None:
        tx.get_item_collection_infos(PACKS)
        tx.get_item_collection_items(ItemCollectionId(PACKS, 1))

    with Postbox(db_path) as postbox, pytest.raises(CorruptValueError):
        postbox.run(read)


def test_a_file_from_before_item_collections_opens_and_gains_them(db_path: Path) -> None:
    with Postbox(db_path) as postbox:
        postbox.run(lambda tx: tx.set_preference("kept", 1))
    db = apsw.Connection(str(db_path))
    for table in ("t_item_collection_infos", "t_item_collection_items"):
        db.execute(f"DROP TABLE {table}")
    db.close()
    with Postbox(db_path) as postbox:
        assert postbox.run(lambda tx: tx.get_preference("kept")) == 1
        assert postbox.run(lambda tx: tx.get_item_collection_infos(PACKS)) == []
        postbox.run(lambda tx: tx.replace_item_collection_infos(PACKS, [pack(1)]))
        assert postbox.run(lambda tx: tx.get_item_collection_infos(PACKS)) == [pack(1)]


def test_views_emit_only_when_their_namespace_or_collection_changed(postbox: Postbox) -> None:
    infos = ItemCollectionInfosViewKey((PACKS,), preview_items=2)
    gifs = ItemCollectionInfosViewKey((GIFS,))
    one = ItemCollectionItemsViewKey(ItemCollectionId(PACKS, 1))
    seen: list[CombinedView] = []
    subscription = postbox.combined_view([infos, gifs, one], callback=seen.append)
    subscription.ready.result()
    postbox.run(lambda tx: tx.replace_item_collection_infos(PACKS, [pack(1), pack(2)]))
    assert set(seen[-1].update_types) == {infos, one}
    postbox.run(lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 2), items(2)))
    assert set(seen[-1].update_types) == {infos}  # pack 2's preview, not pack 1's grid
    snapshot = seen[-1][infos]
    assert isinstance(snapshot, ItemCollectionInfosView)
    assert [len(entry.first_items) for entry in snapshot.entries()] == [0, 2]
    before = len(seen)
    postbox.run(lambda tx: tx.set_preference("unrelated", 1))
    postbox.run(lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 9), items(9)))
    assert len(seen) == before  # a collection nobody lists and shows
    postbox.run(lambda tx: tx.replace_item_collection_items(ItemCollectionId(PACKS, 1), items(1)))
    grid = seen[-1][one]
    assert isinstance(grid, ItemCollectionItemsView)
    assert grid.items == tuple(items(1)) and grid.info == pack(1)[1]
    subscription.dispose()


# -- live views equal fresh ones ---------------------------------------------------

COLLECTIONS = [ItemCollectionId(PACKS, i) for i in (1, 2, 3)] + [ItemCollectionId(GIFS, 0)]
KEYS: list[AnyViewKey] = [
    ItemCollectionInfosViewKey((PACKS,)),
    ItemCollectionInfosViewKey((PACKS, GIFS), preview_items=2),
    ItemCollectionInfosViewKey((GIFS,), preview_items=0),
    *(ItemCollectionItemsViewKey(collection_id) for collection_id in COLLECTIONS),
]

Write = Callable[[Transaction], Any]


def _replace_infos(namespace: int, ids: list[int], title: str) -> Write:
    listed = [
        (ItemCollectionId(namespace, id_), ItemCollectionInfo(f"{title}{id_}", id_, id_ * 3))
        for id_ in ids
    ]
    return lambda tx: tx.replace_item_collection_infos(namespace, listed)


def _replace_items(collection_id: ItemCollectionId, indexes: list[int], emoji: str) -> Write:
    stored = [ItemCollectionItem(i, sticker(i, emoji, collection_id.id)) for i in indexes]
    return lambda tx: tx.replace_item_collection_items(collection_id, stored)


writes: st.SearchStrategy[Write] = st.one_of(
    st.builds(
        _replace_infos,
        st.just(PACKS),
        st.lists(st.sampled_from([1, 2, 3]), unique=True, max_size=3),
        st.sampled_from("ab"),
    ),
    st.builds(
        _replace_infos, st.just(GIFS), st.lists(st.just(0), max_size=1), st.sampled_from("ab")
    ),
    st.builds(
        _replace_items,
        st.sampled_from(COLLECTIONS),
        st.lists(st.integers(0, 5), unique=True, max_size=4),
        st.sampled_from("😀🐱"),
    ),
    st.builds(lambda v: lambda tx: tx.set_preference("other", v), st.integers(0, 2)),
)


def _fresh(postbox: Postbox, key: AnyViewKey) -> object:
    subscription = postbox.combined_view([key])
    try:
        return subscription.ready.result()[key]
    finally:
        subscription.dispose()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(writes, min_size=1, max_size=4), min_size=1, max_size=10))
def test_live_item_collection_views_equal_freshly_opened_ones(
    transactions: list[list[Write]],
) -> None:
    with tempfile.TemporaryDirectory() as directory, Postbox(Path(directory) / "p.db") as postbox:
        latest: dict[AnyViewKey, object] = {}
        subscription = postbox.combined_view(KEYS, callback=lambda s: latest.update(s.views))
        subscription.ready.result()
        for batch in transactions:

            def run(tx: Transaction, batch: list[Write] = batch) -> None:
                for write in batch:
                    write(tx)

            postbox.run(run)
            for key in KEYS:
                assert latest[key] == _fresh(postbox, key), key
        subscription.dispose()
