"""EngineData: typed items over one combined view per call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from client import EngineContactList, EngineData, EngineDataItem, EngineDataMap, Item
from postbox import (
    AnyViewKey,
    BasicPeerView,
    BasicPeerViewKey,
    CachedPeerData,
    CombinedView,
    MessageFlags,
    MessageHistoryTagSummary,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNotificationSettings,
    PeerPresence,
    Postbox,
    PostboxError,
    PresenceStatus,
    StateCursor,
    StoreMessage,
    Transaction,
)

T = TypeVar("T")
TIMEOUT = 5.0


@pytest.fixture
def data(postbox: Postbox) -> EngineData:
    return EngineData(postbox)


def incoming(peer_id: PeerId, id_: int) -> StoreMessage:
    return StoreMessage(
        peer_id, MessageNamespace.CLOUD, id_, 1_700_000_000 + id_, int(MessageFlags.INCOMING)
    )


def write(postbox: Postbox, fn: Callable[[Transaction], object]) -> None:
    postbox.run(fn)


async def commit(postbox: Postbox, fn: Callable[[Transaction], object]) -> None:
    await asyncio.wrap_future(postbox.transaction(fn))


async def next_of(iterator: AsyncIterator[T]) -> T:
    return await asyncio.wait_for(anext(iterator), TIMEOUT)


def barrier(postbox: Postbox) -> None:
    """Wait until everything queued on the postbox thread (view removals too) has run."""
    postbox.run(lambda tx: None)


@dataclass(frozen=True, slots=True)
class PeerName(EngineDataItem[str | None]):
    """A custom item: one field of a bigger view, so the view can change and it not."""

    peer_id: PeerId

    def keys(self) -> tuple[AnyViewKey, ...]:
        return (BasicPeerViewKey(self.peer_id),)

    def extract(self, view: CombinedView) -> str | None:
        snapshot = view[BasicPeerViewKey(self.peer_id)]
        assert isinstance(snapshot, BasicPeerView)
        return None if snapshot.peer is None else snapshot.peer.name


# -- typed results ------------------------------------------------------------


def test_absent_data_gives_empty_results(data: EngineData, alice: PeerId) -> None:
    assert data.get_now(Item.Peer.Peer(alice), Item.Peer.Presence(alice)) == (None, None)
    assert data.get_now(
        Item.Peer.NotificationSettings(alice),
        Item.Peer.CachedData(alice),
        Item.Peer.IsContact(alice),
    ) == (None, None, False)
    assert data.get_now(
        Item.Messages.ReadState(alice),
        Item.Messages.UnreadCount(alice),
        Item.Messages.TotalUnread(),
        Item.Messages.TagSummary(alice, 1),
    ) == (None, 0, (0, 0), None)
    assert data.get_now(Item.State.Cursor()) is None
    assert data.get_now(Item.Contacts.List()) == EngineContactList((), {})
    assert data.get_now(Item.Preferences.Value("theme")) is None


def test_typed_results(postbox: Postbox, data: EngineData, alice: PeerId, bob: PeerId) -> None:
    peer = Peer(alice, "Alice", "alice")
    presence = PeerPresence(PresenceStatus.ONLINE, 1_700_000_100)
    settings = PeerNotificationSettings(muted_until=PeerNotificationSettings.MUTED_FOREVER)
    cached = CachedPeerData(about="hello")
    cursor = StateCursor(pts=10, qts=2, seq=3, date=1_700_000_000)

    def fill(tx: Transaction) -> None:
        tx.update_peers([peer, Peer(bob, "Bob")])
        tx.update_peer_presences({alice: presence})
        tx.update_notification_settings(alice, settings)
        tx.update_cached_peer_data(alice, cached)
        tx.replace_contact_peer_ids([alice])
        tx.add_messages([incoming(alice, 1), incoming(alice, 2), incoming(bob, 1)])
        tx.replace_tag_summary(alice, 1, MessageNamespace.CLOUD, 7, 2)
        tx.set_state(cursor)
        tx.set_preference("theme", {"dark": True})

    write(postbox, fill)

    assert data.get_now(Item.Peer.Peer(alice)) == peer
    assert data.get_now(Item.Peer.Presence(alice), Item.Peer.Presence(bob)) == (presence, None)
    assert data.get_now(
        Item.Peer.NotificationSettings(alice),
        Item.Peer.CachedData(alice),
        Item.Peer.IsContact(alice),
        Item.Peer.IsContact(bob),
    ) == (settings, cached, True, False)
    read_state = data.get_now(Item.Messages.ReadState(alice))
    assert read_state is not None and read_state.count == 2
    assert data.get_now(
        Item.Messages.UnreadCount(alice),
        Item.Messages.UnreadCount(bob),
        Item.Messages.TotalUnread(),
    ) == (2, 1, (3, 2))
    assert data.get_now(Item.Messages.TagSummary(alice, 1)) == MessageHistoryTagSummary(7, 2)
    assert data.get_now(Item.State.Cursor()) == cursor
    assert data.get_now(Item.Contacts.List()) == EngineContactList((peer,), {alice: presence})
    assert data.get_now(Item.Preferences.Value("theme")) == {"dark": True}


def test_get_is_awaitable_and_leaves_no_views(
    postbox: Postbox, data: EngineData, alice: PeerId
) -> None:
    write(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))

    async def main() -> tuple[Peer | None, bool]:
        return await data.get(Item.Peer.Peer(alice), Item.Peer.IsContact(alice))

    assert asyncio.run(main()) == (Peer(alice, "Alice"), False)
    barrier(postbox)
    assert postbox.tracker.view_count == 0


def test_get_now_refuses_the_postbox_thread(
    postbox: Postbox, data: EngineData, alice: PeerId
) -> None:
    with pytest.raises(PostboxError, match="postbox thread"):
        postbox.run(lambda tx: data.get_now(Item.Peer.Peer(alice)))


# -- live updates -------------------------------------------------------------


def test_updates_flow_on_commit(postbox: Postbox, data: EngineData, alice: PeerId) -> None:
    presence = PeerPresence(PresenceStatus.RECENTLY)

    async def main() -> list[tuple[Peer | None, PeerPresence | None, int]]:
        seen = []
        updates = data.subscribe(
            Item.Peer.Peer(alice), Item.Peer.Presence(alice), Item.Messages.UnreadCount(alice)
        )
        with updates:
            results = aiter(updates)
            seen.append(await next_of(results))
            await commit(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
            seen.append(await next_of(results))
            await commit(postbox, lambda tx: tx.update_peer_presences({alice: presence}))
            seen.append(await next_of(results))
            await commit(postbox, lambda tx: tx.add_messages([incoming(alice, 1)]))
            seen.append(await next_of(results))
        return seen

    alice_peer = Peer(alice, "Alice")
    assert asyncio.run(main()) == [
        (None, None, 0),
        (alice_peer, None, 0),
        (alice_peer, presence, 0),
        (alice_peer, presence, 1),
    ]


def test_equal_results_are_not_repeated(postbox: Postbox, data: EngineData, alice: PeerId) -> None:
    async def main() -> list[str | None]:
        seen = []
        async with data.subscribe(PeerName(alice)) as updates:
            results = aiter(updates)
            seen.append(await next_of(results))
            await commit(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
            seen.append(await next_of(results))
            # The view emits (the username changed) but the name did not: nothing yielded.
            await commit(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice", "al")]))
            await commit(postbox, lambda tx: tx.update_peers([Peer(alice, "Alicia", "al")]))
            seen.append(await next_of(results))
            assert updates.subscription.emitted == 4
        return seen

    assert asyncio.run(main()) == [None, "Alice", "Alicia"]


# -- one subscription per call ----------------------------------------------------


def count_combined_views(postbox: Postbox, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = postbox.combined_view

    def counting(keys: Any, callback: Any = None) -> Any:
        keys = tuple(keys)
        calls.append(len(keys))
        return original(keys, callback)

    monkeypatch.setattr(postbox, "combined_view", counting)
    return calls


def test_one_combined_view_per_call_with_deduplicated_keys(
    postbox: Postbox,
    data: EngineData,
    alice: PeerId,
    bob: PeerId,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = count_combined_views(postbox, monkeypatch)
    write(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    updates = data.subscribe(
        Item.Peer.Peer(alice),
        Item.Peer.Peer(alice),
        Item.Messages.TotalUnread(),
        Item.Peer.Peer(bob),
    )
    with updates:
        updates.subscription.ready.result(TIMEOUT)
        assert calls == [3]
        assert postbox.tracker.view_count == 3
        assert updates.latest == (Peer(alice, "Alice"), Peer(alice, "Alice"), (0, 0), None)
    barrier(postbox)
    assert postbox.tracker.view_count == 0


def test_the_same_key_twice_updates_both_results(
    postbox: Postbox, data: EngineData, alice: PeerId
) -> None:
    async def main() -> list[tuple[Peer | None, Peer | None]]:
        async with data.subscribe(Item.Peer.Peer(alice), Item.Peer.Peer(alice)) as updates:
            results = aiter(updates)
            first = await next_of(results)
            await commit(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
            return [first, await next_of(results)]

    alice_peer = Peer(alice, "Alice")
    assert asyncio.run(main()) == [(None, None), (alice_peer, alice_peer)]


# -- the map form -------------------------------------------------------------


def test_map_gives_a_result_per_item_key(
    postbox: Postbox,
    data: EngineData,
    alice: PeerId,
    bob: PeerId,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = count_combined_views(postbox, monkeypatch)
    write(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    peers = data.get_now(EngineDataMap([Item.Peer.Peer(alice), Item.Peer.Peer(bob)]))
    assert peers == {alice: Peer(alice, "Alice"), bob: None}
    prefs = data.get_now(EngineDataMap([Item.Preferences.Value("a"), Item.Preferences.Value("b")]))
    assert prefs == {"a": None, "b": None}
    assert calls == [2, 2]


def test_map_updates_live_beside_other_items(
    postbox: Postbox, data: EngineData, alice: PeerId, bob: PeerId
) -> None:
    peers = EngineDataMap(Item.Peer.Peer(p) for p in (alice, bob))

    async def main() -> list[tuple[dict[PeerId, Peer | None], StateCursor | None]]:
        async with data.subscribe(peers, Item.State.Cursor()) as updates:
            assert len(updates.subscription.keys) == 3
            results = aiter(updates)
            first = await next_of(results)
            await commit(postbox, lambda tx: tx.update_peers([Peer(bob, "Bob")]))
            return [first, await next_of(results)]

    assert asyncio.run(main()) == [
        ({alice: None, bob: None}, None),
        ({alice: None, bob: Peer(bob, "Bob")}, None),
    ]


def test_an_empty_map_gives_an_empty_dict(data: EngineData) -> None:
    assert data.get_now(EngineDataMap[PeerId, Peer | None]([])) == {}


# -- disposal -----------------------------------------------------------------


def test_dispose_removes_the_views(postbox: Postbox, data: EngineData, alice: PeerId) -> None:
    updates = data.subscribe(Item.Peer.Peer(alice), Item.Peer.Presence(alice))
    updates.subscription.ready.result(TIMEOUT)
    assert postbox.tracker.view_count == 2
    updates.dispose()
    updates.dispose()
    barrier(postbox)
    assert postbox.tracker.view_count == 0
    assert updates.subscription.disposed


def test_leaving_the_loop_disposes(postbox: Postbox, data: EngineData, alice: PeerId) -> None:
    async def main() -> bool:
        updates = data.subscribe(Item.Peer.Peer(alice))
        async for peer in updates:
            assert peer is None
            break
        # The loop's iterator is closed by the event loop right after the break.
        for _ in range(10):
            if updates.subscription.disposed:
                break
            await asyncio.sleep(0)
        return updates.subscription.disposed

    assert asyncio.run(main())
    barrier(postbox)
    assert postbox.tracker.view_count == 0


def test_dispose_ends_a_waiting_loop(postbox: Postbox, data: EngineData, alice: PeerId) -> None:
    async def main() -> list[Peer | None]:
        updates = data.subscribe(Item.Peer.Peer(alice))
        seen = []

        async def consume() -> None:
            async for peer in updates:
                seen.append(peer)
                updates.dispose()

        await asyncio.wait_for(consume(), TIMEOUT)
        return seen

    assert asyncio.run(main()) == [None]
    barrier(postbox)
    assert postbox.tracker.view_count == 0


def test_nothing_is_yielded_after_dispose(
    postbox: Postbox, data: EngineData, alice: PeerId
) -> None:
    async def main() -> list[Peer | None]:
        seen = []
        updates = data.subscribe(Item.Peer.Peer(alice))
        async for peer in updates:
            seen.append(peer)
            # Delivered before the dispose below, so the subscription holds it pending.
            write(postbox, lambda tx: tx.update_peers([Peer(alice, "Alice")]))
            updates.dispose()
        return seen

    assert asyncio.run(main()) == [None]


def test_no_items_is_an_error(data: EngineData) -> None:
    with pytest.raises(TypeError, match="at least one item"):
        data.subscribe()  # type: ignore[call-overload]
