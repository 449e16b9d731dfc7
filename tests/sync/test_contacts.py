"""The account's contacts: a list the server keeps, changed only on purpose, and every
device of the account told of a change (by push, or in its difference if it was away)."""

from __future__ import annotations

import asyncio

import pytest

from postbox import PeerId, Postbox
from sync.protocol import Difference, GetDifference, PeerKind, UpdateContact, peer_kind
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.server.store import ServerStore, StoreError
from tests.sync.engine_helpers import TOKEN, running_engine, server_report, wait_quiescent
from tests.sync.server_helpers import make_harness


def _people(store: ServerStore) -> list[int]:
    """The users (not bots) the account has a private chat with."""
    return [
        peer
        for peer, _ in store.chat_sizes()
        if peer_kind(peer) is PeerKind.USER and not store.require_peer(peer).flags & 2
    ]


def test_a_contact_change_takes_the_accounts_pts_and_a_difference_brings_it() -> None:
    store = make_harness(seed=12, peers=30, messages=3_000).store
    stranger = next(p for p in _people(store) if not store.full_peer(p).contact)
    before = store.state()
    added = store.set_contact(stranger, True)
    assert added == UpdateContact(stranger, True, before.pts + 1, 1)
    assert store.full_peer(stranger).contact
    assert store.set_contact(stranger, True) is None  # already one: nothing changes
    removed = store.set_contact(stranger, False)
    assert removed is not None and not removed.contact
    assert not store.full_peer(stranger).contact
    difference = store.difference(GetDifference(before.pts, before.qts, before.date))
    assert isinstance(difference, Difference)
    assert difference.other_updates == (added, removed)
    assert stranger in {peer.id for peer in difference.peers}


def test_only_a_person_can_be_a_contact() -> None:
    store = make_harness(seed=12, peers=30, messages=3_000).store
    others = [
        peer
        for peer, _ in store.chat_sizes()
        if peer_kind(peer) is not PeerKind.USER or store.require_peer(peer).flags & 2
    ]
    pts = store.state().pts
    for peer in (store.self_id, *others[:3]):
        with pytest.raises(StoreError, match="cannot be a contact"):
            store.set_contact(peer, True)
    assert store.state().pts == pts


def _contacts(postbox: Postbox) -> frozenset[PeerId]:
    return frozenset(postbox.run(lambda tx: tx.get_contact_peer_ids()))


def test_every_device_learns_a_contact_change(tmp_path) -> None:
    config = ServerConfig(token=TOKEN, peers=15, messages=500, seed=4)
    with EmbeddedServer(config) as server:
        stranger = server.call(
            lambda s: next(
                p for p in _people(s.service.store) if not s.service.store.full_peer(p).contact
            )
        )
        db = tmp_path / "c.db"

        async def run() -> None:
            async with running_engine(server, db) as (engine, postbox):
                await wait_quiescent(engine)
                assert PeerId(stranger) not in _contacts(postbox)
            # Added while this device was away: its difference says so.
            assert server.call(lambda s: s.service.set_contact_elsewhere(stranger, True))
            async with running_engine(server, db) as (engine, postbox):
                await wait_quiescent(engine)
                assert PeerId(stranger) in _contacts(postbox)
                assert postbox.run(lambda tx: tx.get_peer(PeerId(stranger))) is not None
                # Removed while it is here: the push says so.
                assert server.call(lambda s: s.service.set_contact_elsewhere(stranger, False))
                await engine.wait_for(lambda: PeerId(stranger) not in _contacts(postbox))
                await wait_quiescent(engine)
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())


def test_a_second_accounts_contacts_start_as_the_people_it_has_written_to() -> None:
    config = ServerConfig(token=TOKEN, peers=15, messages=500, seed=4)
    with EmbeddedServer(config) as server:

        def boxes(s: MockServer) -> list[tuple[tuple[int, ...], set[int]]]:
            accounts = s.service.accounts
            found = []
            for user, _name in accounts.users()[1:]:
                box = accounts.box(user)
                wrote = {
                    peer
                    for peer, _ in box.chat_sizes()
                    if peer_kind(peer) is PeerKind.USER
                    and any(m.out for m in box.recent_messages(peer, 100_000))
                }
                found.append((box.contacts(), wrote))
            return found

        found = server.call(boxes)
        assert any(wrote for _, wrote in found)
        assert all(contacts == tuple(sorted(wrote)) for contacts, wrote in found)
