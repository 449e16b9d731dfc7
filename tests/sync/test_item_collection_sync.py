"""Fetching the sticker sets and saved GIFs with hashes: a round against the server's
methods (no sockets), and the engine against a real server on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from postbox import ChangeRecord, ItemCollectionId, Postbox
from sync.engine.item_collections import PACKS, SAVED_GIFS, ItemCollectionSync
from sync.protocol import (
    GetAllStickers,
    GetSavedGifs,
    GetStickerSet,
    StickerSetContents,
    collection_hash,
)
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from sync.verify.compare_stickers import read_local_collections
from tests.sync.engine_helpers import TOKEN, running_engine, wait_quiescent
from tests.sync.server_helpers import Harness, make_harness


class Recorder:
    """The server's methods as an engine's ``call``, remembering each request."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.requests: list[Any] = []

    async def __call__(self, params: Any) -> Any:
        self.requests.append(params)
        return self.harness.call(params)


def server_sets(harness: Harness) -> list[StickerSetContents]:
    listed = harness.call(GetAllStickers(0)).sets
    return [harness.call(GetStickerSet(s.id, s.access_hash)) for s in listed]


def stored_sets(postbox: Postbox) -> list[tuple[int, list[int]]]:
    local = postbox.run(read_local_collections)
    return [(cid.id, [item.media.id for item in items]) for cid, _info, items in local.sets]


def expected_sets(harness: Harness) -> list[tuple[int, list[int]]]:
    return [(c.set.id, [d.id for d in c.documents]) for c in server_sets(harness)]


def test_a_second_round_sends_the_hashes_and_writes_nothing(postbox: Postbox) -> None:
    harness = make_harness(seed=4, peers=6, messages=50)
    call = Recorder(harness)
    part = ItemCollectionSync(postbox, call)
    commits: list[ChangeRecord] = []
    postbox.add_commit_listener(commits.append)
    assert asyncio.run(part.sync_once()) is True
    sets = server_sets(harness)
    assert [type(r) for r in call.requests] == (
        [GetAllStickers] + [GetStickerSet] * len(sets) + [GetSavedGifs]
    )
    assert call.requests[0].hash == 0 and call.requests[-1].hash == 0
    assert stored_sets(postbox) == expected_sets(harness)
    assert part.sets_fetched == len(sets) and len(commits) == 1
    gifs = postbox.run(lambda tx: tx.get_item_collection_items(SAVED_GIFS))
    assert [g.media.id for g in gifs] == [g.id for g in harness.call(GetSavedGifs(0)).gifs]

    call.requests.clear()
    assert asyncio.run(part.sync_once()) is False
    assert call.requests == [
        GetAllStickers(collection_hash(c.set.hash for c in sets)),
        GetSavedGifs(harness.call(GetSavedGifs(0)).hash),
    ]
    assert part.not_modified == 2 and part.sets_fetched == len(sets)
    assert len(commits) == 1  # nothing written


def test_only_the_set_that_changed_is_asked_again(postbox: Postbox) -> None:
    harness = make_harness(seed=4, peers=6, messages=50)
    call = Recorder(harness)
    part = ItemCollectionSync(postbox, call)
    asyncio.run(part.sync_once())
    first, second, *_ = server_sets(harness)
    with harness.store.transaction() as db:  # one sticker leaves the first set; sets swap
        db.execute("DELETE FROM sticker_documents WHERE id = ?", (first.documents[0].id,))
        db.execute("UPDATE sticker_sets SET position = -1 WHERE id = ?", (second.set.id,))
    call.requests.clear()
    assert asyncio.run(part.sync_once()) is True
    asked = [r for r in call.requests if isinstance(r, GetStickerSet)]
    assert asked == [GetStickerSet(first.set.id, first.set.access_hash, first.set.hash)]
    assert stored_sets(postbox) == expected_sets(harness)
    assert stored_sets(postbox)[0][0] == second.set.id


def test_a_set_the_server_dropped_goes_with_its_stickers(postbox: Postbox) -> None:
    harness = make_harness(seed=4, peers=6, messages=50)
    part = ItemCollectionSync(postbox, Recorder(harness))
    asyncio.run(part.sync_once())
    dropped = server_sets(harness)[-1].set.id
    with harness.store.transaction() as db:
        db.execute("DELETE FROM sticker_sets WHERE id = ?", (dropped,))
    asyncio.run(part.sync_once())
    assert stored_sets(postbox) == expected_sets(harness)
    gone = postbox.run(lambda tx: tx.get_item_collection_items(ItemCollectionId(PACKS, dropped)))
    assert gone == []


@pytest.fixture(scope="module")
def server() -> Any:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=8, messages=100, seed=9)) as running:
        yield running


def test_the_engine_fetches_on_connecting_and_asks_with_the_hash_after_a_reconnect(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
            await wait_quiescent(engine)
            part = engine.item_collections
            fetched, rounds = part.sets_fetched, part.rounds
            assert fetched >= 3 and part.not_modified == 0
            assert len(postbox.run(read_local_collections).sets) == fetched
            connections = engine.connections

            def cut(running: Any) -> None:
                for connection in list(running._connections):
                    connection.close("the test cuts it")

            server.call(cut)
            await engine.wait_for(lambda: engine.connections > connections)
            await engine.wait_for(lambda: part.rounds > rounds and part.idle)
            assert part.sets_fetched == fetched  # nothing asked again
            assert part.not_modified == 2
            assert engine.status().counters["sticker_sets_fetched"] == fetched

    asyncio.run(scenario())
