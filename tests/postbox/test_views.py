"""Live views: subscriptions, selectivity, update types, threads and other processes."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from postbox import (
    CachedPeerData,
    ChatListInclusion,
    InvalidArgumentError,
    MessageId,
    MessageTags,
    Peer,
    PeerId,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    Postbox,
    PresenceStatus,
    StateCursor,
    StoreMessage,
    Transaction,
)
from postbox.view_keys import (
    AnyViewKey,
    BasicPeerViewKey,
    ContactsViewKey,
    OperationLogViewKey,
    PeerPresencesViewKey,
    PeerViewComponents,
    PeerViewKey,
    PostboxViewKey,
    PreferencesViewKey,
    ReadStateViewKey,
    StateViewKey,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    UnreadCountsViewKey,
    UnsentMessagesViewKey,
)
from postbox.views.subscription import CombinedView
from postbox.views.view import UpdateKind, ViewUpdateType
from tests.postbox.live_views import Recorder


def test_initial_snapshot_then_generic_updates(postbox: Postbox, alice: PeerId) -> None:
    recorder = Recorder()
    key = PeerViewKey(alice)
    subscription = postbox.combined_view([key], callback=recorder)
    initial = subscription.ready.result()
    assert initial[key].peer is None
    assert initial.update_types[key] == {ViewUpdateType.INITIAL}

    def change(tx: Transaction) -> None:
        tx.update_peers([Peer(alice, "Alice")])
        tx.update_cached_peer_data(alice, CachedPeerData(about="hi"))
        tx.update_peer_presences({alice: PeerPresence(PresenceStatus.ONLINE, 99)})
        tx.update_notification_settings(alice, PeerNotificationSettings(muted_until=5))
        tx.replace_contact_peer_ids([alice])
        tx.update_chat_list_inclusion(alice, ChatListInclusion(pinning_index=0))

    postbox.run(change)
    assert recorder.count == 2  # one snapshot for the whole commit
    view = recorder.last[key]
    assert view.peer == Peer(alice, "Alice")
    assert view.cached_data == CachedPeerData(about="hi")
    assert view.presence == PeerPresence(PresenceStatus.ONLINE, 99)
    assert view.notification_settings is not None
    assert view.notification_settings.muted_until == 5
    assert view.is_contact and view.group_id == 0
    assert recorder.last.update_types[key] == {ViewUpdateType.GENERIC}
    subscription.dispose()


def test_opt_in_components_are_not_loaded_or_watched(postbox: Postbox, alice: PeerId) -> None:
    recorder = Recorder()
    key = PeerViewKey(alice, PeerViewComponents(0))
    postbox.combined_view([key], callback=recorder).ready.result()
    postbox.run(lambda tx: tx.update_peer_presences({alice: PeerPresence(PresenceStatus.ONLINE)}))
    assert recorder.count == 1
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "A")]))
    assert recorder.count == 2 and recorder.last[key].presence is None


def test_a_commit_for_one_peer_does_not_touch_views_of_another(
    postbox: Postbox, alice: PeerId, bob: PeerId
) -> None:
    bob_views = Recorder()
    keys: list[AnyViewKey] = [
        PeerViewKey(bob),
        BasicPeerViewKey(bob),
        ReadStateViewKey(bob),
        PeerPresencesViewKey(frozenset({bob})),
        TagSummaryViewKey(bob, MessageTags.PHOTO),
        UnreadCountsViewKey(frozenset({bob}), total=False),
    ]
    postbox.combined_view(keys, callback=bob_views).ready.result()
    replays = postbox.tracker.replays

    def alice_only(tx: Transaction) -> None:
        tx.update_peers([Peer(alice, "Alice")])
        tx.add_messages([StoreMessage(alice, 0, 1, 10, flags=1, tags=MessageTags.PHOTO)])
        tx.update_peer_presences({alice: PeerPresence(PresenceStatus.ONLINE)})

    for _ in range(5):
        postbox.run(alice_only)
    assert bob_views.count == 1
    assert postbox.tracker.replays == replays  # not even asked


def test_unchanged_reloads_do_not_emit(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    recorder = Recorder()
    postbox.combined_view([ReadStateViewKey(alice)], callback=recorder).ready.result()
    # Outgoing messages move max_known_id only: the read state changes, so it emits...
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10)]))
    assert recorder.count == 2
    # ...but a peer change does not concern a read-state view at all.
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alicia")]))
    assert recorder.count == 2


def test_simple_views_follow_their_tables(postbox: Postbox, alice: PeerId, bob: PeerId) -> None:
    keys: list[AnyViewKey] = [
        StateViewKey(),
        ContactsViewKey(),
        PreferencesViewKey(frozenset({"theme"})),
        OperationLogViewKey(1),
        SynchronizeReadStatesViewKey(2),
        UnsentMessagesViewKey(),
        UnreadCountsViewKey(frozenset({alice})),
        TagSummaryViewKey(alice, MessageTags.PHOTO),
    ]
    recorder = Recorder()
    postbox.combined_view(keys, callback=recorder).ready.result()

    def change(tx: Transaction) -> None:
        tx.set_state(StateCursor(1, 2, 3, 4))
        tx.update_peers([Peer(bob, "Bob")])
        tx.replace_contact_peer_ids([bob])
        tx.set_preference("theme", "night")
        tx.add_operation_log_entry(alice, 1, "send")
        tx.add_operation_log_entry(alice, 2, {"max_id": 3})
        tx.add_operation_log_entry(alice, 2, {"max_id": 4})
        tx.add_messages([StoreMessage(alice, 1, None, 10, flags=2)])
        tx.add_messages(
            [StoreMessage(bob, 0, 7, 10, flags=1), StoreMessage(alice, 0, 8, 11, flags=1)]
        )
        tx.replace_tag_summary(alice, MessageTags.PHOTO, 0, 0, 0)
        tx.add_messages([StoreMessage(alice, 0, 9, 12, tags=MessageTags.PHOTO)])

    postbox.run(change)
    views = recorder.last
    assert set(views.update_types) == set(keys)
    assert views[StateViewKey()].state == StateCursor(1, 2, 3, 4)
    assert dict(views[ContactsViewKey()].peers) == {bob: Peer(bob, "Bob")}
    assert dict(views[PreferencesViewKey(frozenset({"theme"}))].values) == {"theme": "night"}
    assert [e.contents for e in views[OperationLogViewKey(1)].entries] == ["send"]
    sync = views[SynchronizeReadStatesViewKey(2)].operations
    assert sync[alice].contents == {"max_id": 4}
    assert views[UnsentMessagesViewKey()].ids == (MessageId(alice, 1, 1),)
    unread = views[UnreadCountsViewKey(frozenset({alice}))]
    assert dict(unread.counts) == {alice: 1}
    assert (unread.total_messages, unread.total_chats) == (2, 2)
    summary = views[TagSummaryViewKey(alice, MessageTags.PHOTO)].summary
    assert summary is not None and summary.count == 1
    postbox.run(lambda tx: tx.reset_read_state(bob, 0, PeerReadState(7, 0, 7, 0)))
    unread = recorder.last[UnreadCountsViewKey(frozenset({alice}))]
    assert (unread.total_messages, unread.total_chats) == (1, 1)


def test_an_unknown_key_is_refused(postbox: Postbox) -> None:
    subscription = postbox.combined_view([PostboxViewKey()])
    with pytest.raises(InvalidArgumentError, match="no view is known"):
        subscription.ready.result()
    assert postbox.tracker.view_count == 0


def test_dispose_removes_the_views(postbox: Postbox, alice: PeerId) -> None:
    recorder = Recorder()
    subscription = postbox.combined_view([PeerViewKey(alice), StateViewKey()], callback=recorder)
    subscription.ready.result()
    assert postbox.tracker.view_count == 2
    subscription.dispose()
    subscription.dispose()
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "A")]))  # runs after the removal
    assert postbox.tracker.view_count == 0
    assert recorder.count == 1


def run_loop_in_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    return loop, thread


def test_snapshots_reach_an_asyncio_loop_on_another_thread(postbox: Postbox, alice: PeerId) -> None:
    loop, thread = run_loop_in_thread()
    key = BasicPeerViewKey(alice)
    subscription = postbox.combined_view([key])
    seen_names: list[str | None] = []
    threads: set[str] = set()

    async def consume() -> None:
        async for snapshot in subscription:
            threads.add(threading.current_thread().name)
            peer = snapshot[key].peer
            seen_names.append(None if peer is None else peer.name)
            if peer is not None and peer.name == "done":
                break

    future = asyncio.run_coroutine_threadsafe(consume(), loop)
    subscription.ready.result()
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "done")]))
    future.result(timeout=10)
    # A consumer slower than the commit gets the newest snapshot only (by design).
    assert seen_names[-1] == "done" and set(seen_names[:-1]) <= {None}
    assert threads == {thread.name}
    # Leaving the loop disposes the subscription (once the generator is finalized).
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(timeout=10)
    postbox.run(lambda tx: None)
    assert subscription.disposed
    assert postbox.tracker.view_count == 0
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def test_a_stalled_consumer_gets_the_newest_snapshot_and_merged_types(
    postbox: Postbox, alice: PeerId
) -> None:
    key = BasicPeerViewKey(alice)
    subscription = postbox.combined_view([key])
    subscription.ready.result()

    def rename(tx: Transaction, name: str) -> None:
        tx.update_peers([Peer(alice, name)])

    for n in range(200):  # nobody consumes meanwhile
        postbox.run(functools.partial(rename, name=f"v{n}"))

    async def take_two() -> list[CombinedView]:
        first = await subscription.next()
        assert first is not None
        task = asyncio.ensure_future(subscription.next())
        await asyncio.sleep(0)
        assert not task.done()  # nothing newer: it waits
        subscription.dispose()
        assert await task is None
        return [first]

    [snapshot] = asyncio.run(take_two())
    peer = snapshot[key].peer
    assert peer is not None and peer.name == "v199"
    kinds = {t.kind for t in snapshot.update_types[key]}
    assert kinds == {UpdateKind.INITIAL, UpdateKind.GENERIC}
    assert subscription.emitted == 201  # delivered each time, kept only the newest


WRITER = """
import sys
from postbox import Peer, PeerId, Postbox
with Postbox(sys.argv[1]) as postbox:
    postbox.run(lambda tx: tx.update_peers([Peer(PeerId(int(sys.argv[2])), "written elsewhere")]))
"""


def test_another_process_commit_reaches_open_views(db_path: Path, alice: PeerId) -> None:
    arrived = threading.Event()
    names: list[str] = []

    def on_snapshot(snapshot: CombinedView) -> None:
        peer = snapshot[BasicPeerViewKey(alice)].peer
        if peer is not None:
            names.append(peer.name)
            arrived.set()

    with Postbox(db_path, external_check_interval=0.01) as watcher:
        watcher.combined_view([BasicPeerViewKey(alice)], callback=on_snapshot).ready.result()
        subprocess.run(
            [sys.executable, "-c", WRITER, str(db_path), str(int(alice))],
            check=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert arrived.wait(timeout=10)
    assert names == ["written elsewhere"]


def test_a_cancelled_wait_loses_no_snapshot(postbox: Postbox, alice: PeerId) -> None:
    key = BasicPeerViewKey(alice)
    subscription = postbox.combined_view([key])
    subscription.ready.result()

    async def scenario() -> CombinedView | None:
        await subscription.next()  # the first snapshot
        task = asyncio.ensure_future(subscription.next())
        await asyncio.sleep(0)  # now waiting
        postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))  # handed over
        task.cancel()  # ...but cancelled before the loop resumed it
        await asyncio.gather(task, return_exceptions=True)
        return await asyncio.wait_for(subscription.next(), timeout=10)

    snapshot = asyncio.run(scenario())
    assert snapshot is not None and snapshot[key].peer == Peer(alice, "Alice")
    subscription.dispose()


def test_nothing_is_returned_after_dispose(postbox: Postbox, alice: PeerId) -> None:
    subscription = postbox.combined_view([BasicPeerViewKey(alice)])
    subscription.ready.result()
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "pending")]))
    subscription.dispose()
    assert asyncio.run(subscription.next()) is None


def test_many_new_peers_in_one_transaction(postbox: Postbox) -> None:
    peers = [Peer(PeerId.make(0, n), f"p{n}") for n in range(1, 5001)]
    postbox.run(lambda tx: tx.update_peers(peers))
    assert postbox.run(lambda tx: tx.get_peer(peers[-1].id)) == peers[-1]
