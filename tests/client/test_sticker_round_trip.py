"""Stickers round trip: two devices of one account against the real server on loopback.

Each device fetches the sticker sets with hashes; one sends a sticker from a stored set
(pending first, through the outbound queue); the server stores it and the other device
receives it as a sticker message; asking again brings "not modified"; ``verify`` finds
both databases equal to the server, the sets and saved GIFs included.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.account import Account
from postbox import MediaKind, MessageFlags, MessageId, MessageNamespace, PeerId
from sync.protocol import MediaKind as WireMediaKind
from sync.protocol import PeerKind
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from sync.verify.compare_stickers import read_local_collections
from tests.client.account_helpers import wait_until
from tests.client.test_message_actions import (
    TOKEN,
    chat_of,
    held,
    newest,
    stored,
    synced,
    verify_agrees,
)

LOCAL = int(MessageNamespace.LOCAL)


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    config = ServerConfig(token=TOKEN, peers=12, messages=300, seed=23, rate=0)
    with EmbeddedServer(config) as running:
        yield running


def server_sets(server: EmbeddedServer) -> list[tuple[int, list[int]]]:
    def read(running: object) -> list[tuple[int, list[int]]]:
        stickers = running.service.store.stickers  # type: ignore[attr-defined]
        return [(found.id, [d.id for d in documents]) for found, documents in stickers.sets()]

    return server.call(read)


def local_sets(account: Account) -> list[tuple[int, list[int]]]:
    collections = account.postbox.run(read_local_collections)
    return [(cid.id, [item.media.id for item in items]) for cid, _info, items in collections.sets]


def top_media(server: EmbeddedServer, peer: int) -> int | None:
    """The id of the media of a chat's newest message on the server, if it has any."""
    top = newest(server, peer)[0]
    return top.media[0].id if top.media else None


def rounds(account: Account) -> tuple[int, int, int]:
    def read(engine: object) -> tuple[int, int, int]:
        part = engine.item_collections  # type: ignore[attr-defined]
        return part.rounds, part.sets_fetched, part.not_modified

    result: tuple[int, int, int] = account.worker.call(read)
    return result


def test_a_sticker_sent_on_one_device_arrives_as_a_sticker_on_the_other(
    server, tmp_path, capsys
) -> None:
    user = chat_of(server, PeerKind.USER)
    with (
        synced(server, tmp_path / "a.db", user) as here,
        synced(server, tmp_path / "b.db", user) as there,
    ):
        expected = server_sets(server)
        assert len(expected) >= 3
        for account in (here, there):
            assert local_sets(account) == expected
            assert rounds(account)[1] == len(expected)  # each set fetched once
        # The sticker comes from the stored set, as the picker offers it.
        collections = here.postbox.run(read_local_collections)
        chosen = collections.sets[1][2][3].media
        assert chosen.kind is MediaKind.STICKER and chosen.glyph is not None
        with held(server):  # pending first, while the server cannot answer
            local_id = here.send_media(PeerId(user), chosen).result()
            pending = here.postbox.run(lambda tx: tx.get_message(local_id))
            assert local_id.namespace == LOCAL and pending is not None
            assert pending.flags & MessageFlags.UNSENT and pending.media == (chosen,)
        wait_until(here, lambda: top_media(server, user) == chosen.id)
        sent = newest(server, user)[0]
        assert sent.out and sent.text == "" and sent.media[0].kind is WireMediaKind.STICKER
        for account in (here, there):

            def arrived(a: Account = account) -> bool:
                return stored(a, user, sent.id) is not None

            wait_until(account, arrived)
            message = stored(account, user, sent.id)
            assert message is not None
            assert message.text == "" and message.media == (chosen,)
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        assert here.postbox.run(lambda tx: tx.get_message(local_id)) is None
        # Asked again, the other device sends its hashes and is told nothing changed.
        before = rounds(there)
        there.refresh_stickers()
        engine = there.worker.engine
        assert engine is not None
        wait_until(there, lambda: engine.item_collections.rounds > before[0])
        after = rounds(there)
        assert after[1] == before[1] and after[2] == before[2] + 2
        assert local_sets(there) == expected
    verify_agrees(server, tmp_path / "a.db", capsys)
    verify_agrees(server, tmp_path / "b.db", capsys)


def test_a_deleted_sticker_message_leaves_both_devices(server, tmp_path, capsys) -> None:
    user = chat_of(server, PeerKind.USER)
    with synced(server, tmp_path / "a.db", user) as here:
        chosen = here.postbox.run(read_local_collections).sets[0][2][0].media
        here.send_media(PeerId(user), chosen).result()
        wait_until(here, lambda: top_media(server, user) == chosen.id)
        sent = newest(server, user)[0]
        wait_until(here, lambda: stored(here, user, sent.id) is not None)
        here.delete_messages(PeerId(user), [MessageId(PeerId(user), 0, sent.id)]).result()
        wait_until(
            here, lambda: server.call(lambda s: s.service.store.message(user, sent.id)) is None
        )
        assert here.worker.call(lambda engine: engine.wait_idle(timeout=30))
    verify_agrees(server, tmp_path / "a.db", capsys)
