"""``verify`` compares the installed sticker sets and the saved GIFs: a mirrored database
agrees, and each kind of difference is found in its category."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postbox import GlyphShape, Postbox, Transaction
from sync.engine.item_collections import PACKS, SAVED_GIFS
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from sync.verify import Category, Report
from tests.sync.verify_helpers import mirror, report_for

TOKEN = "verify-stickers"


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=6, messages=60, seed=14)) as running:
        yield running


@pytest.fixture(scope="module")
def template(server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("verify-stickers") / "mirror.db"
    mirror(server, TOKEN, db)
    return db


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "client.db"
    shutil.copyfile(template, copy)
    return copy


def tampered(server: EmbeddedServer, db: Path, change: Callable[[Transaction], object]) -> Report:
    postbox = Postbox(db)
    try:
        postbox.run(change)
    finally:
        postbox.close()
    return report_for(server, TOKEN, db)


def categories(report: Report) -> set[Category]:
    return {divergence.category for divergence in report.divergences}


def test_a_mirrored_database_has_the_server_sets_and_gifs(server: EmbeddedServer, db: Path) -> None:
    report = report_for(server, TOKEN, db)
    assert report.ok, report.divergences
    assert report.sticker_sets_compared >= 3
    assert report.saved_gifs_compared >= 5


def test_a_missing_set_is_a_stickers_divergence(server: EmbeddedServer, db: Path) -> None:
    def drop_last(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, tx.get_item_collection_infos(PACKS)[:-1])

    report = tampered(server, db, drop_last)
    assert categories(report) == {Category.STICKERS}
    assert "installed sets" in report.divergences[0].what


def test_the_order_of_the_sets_is_compared(server: EmbeddedServer, db: Path) -> None:
    def reverse(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, tx.get_item_collection_infos(PACKS)[::-1])

    assert categories(tampered(server, db, reverse)) == {Category.STICKERS}


def test_a_sticker_drawn_otherwise_is_a_stickers_divergence(
    server: EmbeddedServer, db: Path
) -> None:
    def recolour(tx: Transaction) -> None:
        collection_id, _ = tx.get_item_collection_infos(PACKS)[0]
        items = tx.get_item_collection_items(collection_id)
        media = items[0].media
        assert media.glyph is not None
        shape = GlyphShape((media.glyph.shape + 1) % len(GlyphShape))
        changed = dataclasses.replace(media, glyph=dataclasses.replace(media.glyph, shape=shape))
        items[0] = dataclasses.replace(items[0], media=changed)
        tx.replace_item_collection_items(collection_id, items)

    report = tampered(server, db, recolour)
    assert categories(report) == {Category.STICKERS}
    assert "stickers" in report.divergences[0].what


def test_a_stale_set_hash_is_a_stickers_divergence(server: EmbeddedServer, db: Path) -> None:
    def stale(tx: Transaction) -> None:
        listed = tx.get_item_collection_infos(PACKS)
        collection_id, info = listed[0]
        listed[0] = (collection_id, dataclasses.replace(info, hash=info.hash + 1))
        tx.replace_item_collection_infos(PACKS, listed)

    assert categories(tampered(server, db, stale)) == {Category.STICKERS}


def test_a_lost_saved_gif_is_a_saved_gifs_divergence(server: EmbeddedServer, db: Path) -> None:
    def drop_gif(tx: Transaction) -> None:
        tx.replace_item_collection_items(SAVED_GIFS, tx.get_item_collection_items(SAVED_GIFS)[1:])

    report = tampered(server, db, drop_gif)
    assert categories(report) == {Category.SAVED_GIFS}


def test_a_database_that_never_fetched_them_diverges(server: EmbeddedServer, db: Path) -> None:
    def forget(tx: Transaction) -> None:
        tx.replace_item_collection_infos(PACKS, [])
        tx.replace_item_collection_infos(SAVED_GIFS.namespace, [])
        tx.replace_item_collection_items(SAVED_GIFS, [])

    report = tampered(server, db, forget)
    assert categories(report) == {Category.STICKERS, Category.SAVED_GIFS}
