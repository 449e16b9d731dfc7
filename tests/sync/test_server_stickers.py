"""The server's sticker sets and saved GIFs: generated per seed, answered with hashes,
sent as messages, and found again in an older database file."""

from __future__ import annotations

import apsw
import pytest

from sync.protocol import (
    METHODS,
    AllStickers,
    EditMessage,
    ErrorCode,
    GetAllStickers,
    GetSavedGifs,
    GetStickerSet,
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    PeerKind,
    ProtocolError,
    SavedGifs,
    SavedGifsNotModified,
    SendMessage,
    SentMessage,
    StickerSetContents,
    StickerSetNotModified,
    StickerSetsNotModified,
    collection_hash,
    documents_hash,
    peer_kind,
)
from sync.server.service import Service
from sync.server.store import ServerStore
from sync.server.traffic import STICKER_SHARE
from tests.sync.server_helpers import Harness, make_harness


@pytest.fixture(scope="module")
def harness() -> Harness:
    return make_harness(seed=5, peers=12, messages=300)


def user_chat(harness: Harness) -> int:
    return next(p for p, _ in harness.store.chat_sizes() if peer_kind(p) is PeerKind.USER)


def all_sets(harness: Harness) -> AllStickers:
    found = harness.call(GetAllStickers(0))
    assert isinstance(found, AllStickers)
    return found


def test_the_hash_covers_every_value_in_order() -> None:
    assert collection_hash([]) == 0
    assert collection_hash([1, 2, 3]) != collection_hash([3, 2, 1])
    assert collection_hash([1, 2, 3]) != collection_hash([1, 2, 4])
    assert collection_hash([2**63 - 1, -(2**63)]) in range(-(2**63), 2**63)


def test_installed_sets_come_with_a_hash_that_is_then_not_modified(harness: Harness) -> None:
    found = all_sets(harness)
    assert 3 <= len(found.sets) <= 5
    assert found.hash == collection_hash(s.hash for s in found.sets)
    assert isinstance(harness.call(GetAllStickers(found.hash)), StickerSetsNotModified)
    assert isinstance(harness.call(GetAllStickers(found.hash ^ 1)), AllStickers)
    # The wire form decodes back to the same record.
    assert METHODS["getAllStickers"].decode_result(found.to_wire()) == found


def test_a_set_holds_its_stickers_and_is_not_resent_unchanged(harness: Harness) -> None:
    for listed in all_sets(harness).sets:
        contents = harness.call(GetStickerSet(listed.id, listed.access_hash, 0))
        assert isinstance(contents, StickerSetContents)
        assert contents.set == listed
        assert len(contents.documents) == listed.count >= 6
        for document in contents.documents:
            assert document.kind is MediaKind.STICKER
            assert document.glyph is not None and document.glyph.set_id == listed.id
        again = harness.call(GetStickerSet(listed.id, listed.access_hash, listed.hash))
        assert isinstance(again, StickerSetNotModified)


def test_a_set_needs_its_access_hash(harness: Harness) -> None:
    listed = all_sets(harness).sets[0]
    with pytest.raises(ProtocolError) as refused:
        harness.call(GetStickerSet(listed.id, listed.access_hash + 1))
    assert refused.value.code is ErrorCode.STICKERSET_INVALID


def test_saved_gifs_come_with_a_hash(harness: Harness) -> None:
    gifs = harness.call(GetSavedGifs(0))
    assert isinstance(gifs, SavedGifs)
    assert gifs.gifs and all(g.kind is MediaKind.GIF and g.glyph for g in gifs.gifs)
    assert gifs.hash == documents_hash(gifs.gifs)
    assert isinstance(harness.call(GetSavedGifs(gifs.hash)), SavedGifsNotModified)


def test_the_sets_are_a_function_of_the_seed() -> None:
    def titles(seed: int) -> list[tuple[str, int]]:
        found = make_harness(seed=seed, peers=6, messages=50).call(GetAllStickers(0))
        return [(s.title, s.hash) for s in found.sets]

    assert titles(21) == titles(21)
    assert titles(21) != titles(22)


def test_a_sticker_is_sent_with_empty_text_and_the_server_glyph(harness: Harness) -> None:
    listed = all_sets(harness).sets[0]
    contents = harness.call(GetStickerSet(listed.id, listed.access_hash))
    sticker = contents.documents[2]
    forged = Media(MediaKind.STICKER, sticker.id, glyph=Glyph("💣", GlyphShape.STAR, 0, 0))
    sent = harness.call(SendMessage(user_chat(harness), "", 9_001, media=(forged,)))
    assert isinstance(sent, SentMessage)
    assert sent.message.text == "" and sent.message.media == (sticker,)
    stored = harness.store.message(sent.message.peer, sent.message.id)
    assert stored is not None and stored.media == (sticker,)
    with pytest.raises(ProtocolError) as refused:
        harness.call(EditMessage(sent.message.peer, sent.message.id, "now with words"))
    assert refused.value.code is ErrorCode.MESSAGE_ID_INVALID


@pytest.mark.parametrize(
    ("text", "media"),
    [
        ("", (Media(MediaKind.STICKER, 12345),)),  # not a sticker of this server
        ("", (Media(MediaKind.GIF, 12345),)),
        ("caption", None),  # a sticker takes no text
    ],
)
def test_bad_sticker_sends_are_refused(
    harness: Harness, text: str, media: tuple[Media, ...] | None
) -> None:
    if media is None:
        listed = all_sets(harness).sets[0]
        media = harness.call(GetStickerSet(listed.id, listed.access_hash)).documents[:1]
    before = harness.store.digest()
    with pytest.raises(ProtocolError) as refused:
        harness.call(SendMessage(user_chat(harness), text, 9_100 + len(text), media=media))
    assert refused.value.code is ErrorCode.MEDIA_INVALID
    assert harness.store.digest() == before


def test_a_gif_may_carry_a_caption(harness: Harness) -> None:
    gif = harness.call(GetSavedGifs(0)).gifs[0]
    sent = harness.call(SendMessage(user_chat(harness), "look", 9_200, media=(gif,)))
    assert sent.message.media == (gif,) and sent.message.text == "look"


def test_traffic_sends_stickers_from_the_sets_now_and_then() -> None:
    harness = make_harness(seed=8, peers=12, messages=200)
    stickers = {
        document.id
        for listed in all_sets(harness).sets
        for document in harness.call(GetStickerSet(listed.id, listed.access_hash)).documents
    }
    before = harness.store.state().pts
    harness.service.generate(300, "message")
    sent = [
        m
        for peer, _ in harness.store.chat_sizes()
        for m in harness.store.recent_messages(peer, 400)
        if m.media and m.media[0].kind is MediaKind.STICKER
    ]
    new_messages = harness.store.state().pts - before
    assert 0 < len(sent) < new_messages * STICKER_SHARE * 3
    assert all(m.media[0].id in stickers and not m.text for m in sent)


def test_an_older_server_file_gains_the_sets_on_open(tmp_path) -> None:
    from dataset import generate_dataset

    path = tmp_path / "server.db"
    store = ServerStore(path, clock=lambda: 1_800_000_000)
    store.import_dataset(generate_dataset(3, 8, 100, 10))
    store.close()
    db = apsw.Connection(str(path))
    for table in ("sticker_sets", "sticker_documents"):
        db.execute(f"DROP TABLE {table}")
    db.close()
    reopened = ServerStore(path, clock=lambda: 1_800_000_000)
    Service(reopened, token="t", seed=3, publish=lambda _account, _pushes, _to: None)
    sets = reopened.stickers.sets()
    assert sets
    digest = reopened.digest()
    reopened.close()
    again = ServerStore(path, clock=lambda: 1_800_000_000)
    Service(again, token="t", seed=3, publish=lambda _account, _pushes, _to: None)
    assert again.stickers.sets() == sets and again.digest() == digest  # generated once
    again.close()
