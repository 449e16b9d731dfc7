"""The engine against a live server: outgoing changes, hole fills, events, the worker."""

from __future__ import annotations

import asyncio
import time

from postbox import (
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageId,
    PeerId,
    PeerNamespace,
    Postbox,
    Transaction,
)
from sync.engine import (
    SyncEngine,
    SyncWorker,
    enqueue_delete,
    enqueue_edit,
    enqueue_read,
    enqueue_send,
)
from sync.protocol import GetHistory
from sync.server.config import ServerConfig
from sync.server.pushes import push_for
from sync.server.server import EmbeddedServer
from sync.simulation.user import queue_unchecked
from tests.sync.engine_helpers import FAST, TOKEN, running_engine, server_report, wait_quiescent


def serve(**options) -> EmbeddedServer:
    return EmbeddedServer(ServerConfig(token=TOKEN, peers=15, messages=500, seed=4, **options))


def busiest_user(server: EmbeddedServer) -> int:
    sizes = server.call(lambda s: s.service.store.chat_sizes())
    return max((n, p) for p, n in sizes if p >> 56 == PeerNamespace.USER)[1]


def test_a_sent_message_goes_from_pending_to_sent(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                local_id = postbox.run(
                    lambda tx: enqueue_send(tx, peer, "on its way", timestamp=int(time.time()))
                )
                pending = postbox.run(lambda tx: tx.get_message(local_id))
                assert pending is not None and pending.flags & MessageFlags.UNSENT
                await engine.wait_for(
                    lambda: postbox.run(lambda tx: tx.get_message(local_id)) is None
                )
                top = postbox.run(lambda tx: tx.get_messages(peer, 0, limit=1, newest_first=True))
                assert top[0].text == "on its way" and not top[0].incoming
                await wait_quiescent(engine)
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())
        texts = server.call(
            lambda s: [m.text for m in s.service.store.recent_messages(int(peer), 3)]
        )
        assert texts.count("on its way") == 1


def test_reads_and_edits_reach_the_server(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))
        own = server.call(
            lambda s: next(m.id for m in s.service.store.recent_messages(int(peer), 50) if m.out)
        )
        top = server.call(lambda s: s.service.store.recent_messages(int(peer), 1)[0].id)

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                postbox.run(lambda tx: enqueue_read(tx, peer, top))
                assert postbox.run(lambda tx: enqueue_edit(tx, MessageId(peer, 0, own), "fixed"))
                await engine.wait_for(lambda: engine.outbound.idle and engine.outbound.sent == 0)
                await wait_quiescent(engine)
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())
        assert server.call(lambda s: s.service.store.read_marks(int(peer)))[0] == top
        fixed = server.call(lambda s: s.service.store.message(int(peer), own))
        assert fixed is not None and fixed.text == "fixed"


def test_a_reply_reaches_the_server_with_its_reference(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))
        answered = server.call(lambda s: s.service.store.recent_messages(int(peer), 5)[-1].id)

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                postbox.run(
                    lambda tx: enqueue_send(
                        tx, peer, "a reply", timestamp=int(time.time()), reply_to=answered
                    )
                )
                await engine.wait_for(lambda: engine.outbound.sent == 1)
                await wait_quiescent(engine)
                top = postbox.run(lambda tx: tx.get_messages(peer, 0, limit=1, newest_first=True))
                assert (top[0].text, top[0].reply_to_id) == ("a reply", answered)
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())
        sent = server.call(lambda s: s.service.store.recent_messages(int(peer), 1)[0])
        assert (sent.text, sent.reply_to) == ("a reply", answered)


def test_a_deletion_for_everyone_leaves_the_server_and_every_open_view(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))
        own = server.call(
            lambda s: [m.id for m in s.service.store.recent_messages(int(peer), 50) if m.out][:2]
        )
        seen: list[list[int]] = []

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                key = MessageHistoryViewKey(peer, HistoryAnchor.upper_bound(), 60)
                views = postbox.combined_view(
                    [key], callback=lambda combined: seen.append(
                        [m.id.id for m in combined[key].entries]
                    ),
                )  # fmt: skip
                views.ready.result()
                assert all(i in seen[-1] for i in own)
                gone = postbox.run(
                    lambda tx: enqueue_delete(tx, peer, [MessageId(peer, 0, i) for i in own])
                )
                assert gone == 2
                # Gone from the open view at once, before the server has heard of it.
                assert not any(i in seen[-1] for i in own)
                await engine.wait_for(lambda: engine.outbound.idle)
                await wait_quiescent(engine)
                views.dispose()
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())
        remaining = server.call(lambda s: [s.service.store.message(int(peer), i) for i in own])
        assert remaining == [None, None]


def test_a_send_the_server_refuses_is_marked_failed(tmp_path) -> None:
    with serve() as server:
        channel = server.call(
            lambda s: next(
                p for p, _ in s.service.store.chat_sizes() if p >> 56 == PeerNamespace.CHANNEL
            )
        )

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
                await wait_quiescent(engine)
                local_id = postbox.run(
                    lambda tx: enqueue_send(tx, PeerId(channel), "no", timestamp=int(time.time()))
                )
                await engine.wait_for(lambda: engine.outbound.failed == 1)
                message = postbox.run(lambda tx: tx.get_message(local_id))
                assert message is not None and message.flags & MessageFlags.FAILED
                assert not message.flags & MessageFlags.UNSENT
                failure = postbox.run(lambda tx: tx.get_message_failure(local_id))
                assert failure is not None and failure.code == "CHAT_WRITE_FORBIDDEN"
                # The client's own: verify finds nothing amiss once the queue is empty.
                await wait_quiescent(engine)
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())


def test_a_huge_send_queued_first_fails_and_holds_nothing_up(tmp_path) -> None:
    """Over the frame limit, written past enqueue's checks (an older client), first in
    the queue: every send after it, in its chat and in another, reaches the server."""
    with serve() as server:
        user = PeerId(busiest_user(server))
        group = PeerId(
            server.call(
                lambda s: next(
                    p for p, _ in s.service.store.chat_sizes() if p >> 56 == PeerNamespace.GROUP
                )
            )
        )
        huge_text = "h" * (4 * 1024 * 1024 + 1)
        huge_send = {"random_id": 77, "text": huge_text, "reply_to": None}
        now = int(time.time())

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
                await wait_quiescent(engine)

                def queue(tx: Transaction) -> MessageId:
                    huge = queue_unchecked(tx, user, huge_text, huge_send, timestamp=now)
                    enqueue_send(tx, user, "after it", timestamp=now)
                    enqueue_send(tx, group, "elsewhere", timestamp=now)
                    return huge

                huge = postbox.run(queue)
                await engine.wait_for(lambda: engine.outbound.sent == 2)
                await wait_quiescent(engine)
                failure = postbox.run(lambda tx: tx.get_message_failure(huge))
                assert failure is not None and failure.code == "MESSAGE_TOO_LONG"
                report = await server_report(server, postbox)
                assert report.ok, report.divergences

        asyncio.run(run())

        def texts(peer: PeerId) -> list[str]:
            return server.call(
                lambda s: [m.text for m in s.service.store.recent_messages(int(peer), 3)]
            )

        assert "after it" in texts(user) and "elsewhere" in texts(group)
        assert server.call(lambda s: s.service.store.sent_before(77)) is None


def test_scrolling_a_view_into_a_hole_fills_exactly_that_range(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))
        server_ids = server.call(
            lambda s: [m.id for m in s.service.store.recent_messages(int(peer), 10**6)]
        )

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=[peer]) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                stored = postbox.run(lambda tx: [m.id.id for m in tx.get_messages(peer, 0)])
                holes = postbox.run(lambda tx: tx.get_holes(peer, 0))
                # The open view (30 messages from the bottom) got what it shows, no more.
                assert stored == sorted(server_ids)[-len(stored) :]
                assert 30 <= len(stored) < len(server_ids)
                assert [(h.lower, h.upper) for h in holes] == [(1, stored[0] - 1)]
                # Opening the view further up fetches the next page below.
                key = MessageHistoryViewKey(
                    peer, HistoryAnchor.at_message(MessageId(peer, 0, stored[0])), 30
                )
                subscription = postbox.combined_view([key])
                await wait_quiescent(engine)
                subscription.dispose()
                more = postbox.run(lambda tx: [m.id.id for m in tx.get_messages(peer, 0)])
                assert len(more) > len(stored)
                assert more == sorted(server_ids)[-len(more) :]

        asyncio.run(run())


def test_a_fill_the_server_has_nothing_for_removes_the_whole_range(tmp_path) -> None:
    with serve() as server:
        peer = PeerId(busiest_user(server))
        oldest = server.call(
            lambda s: min(m.id for m in s.service.store.recent_messages(int(peer), 10**6))
        )

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
                await wait_quiescent(engine)
                answer = await engine.call(GetHistory(int(peer), max_id=oldest, limit=10))
                assert answer.messages == ()
                key = MessageHistoryViewKey(peer, HistoryAnchor.lower_bound(), 20)
                subscription = postbox.combined_view([key])
                await wait_quiescent(engine)
                subscription.dispose()
                holes = postbox.run(
                    lambda tx: tx.get_holes(peer, 0, MessageHistoryHoleSpace.everywhere())
                )
                assert all(h.lower >= oldest for h in holes)

        asyncio.run(run())


def test_events_report_new_incoming_messages(tmp_path) -> None:
    with serve() as server:

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, _postbox):
                await wait_quiescent(engine)
                seen: list[MessageId] = []
                engine.state_manager.add_event_listener(lambda e: seen.extend(e.added_incoming))
                server.call(lambda s: s.service.generate(40))
                await wait_quiescent(engine)
                assert seen and all(m.namespace == 0 for m in seen)

        asyncio.run(run())


def test_custom_operations_run_in_the_queue_and_polls_complete(tmp_path) -> None:
    with serve() as server:

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, _postbox):
                await wait_quiescent(engine)
                before = engine.state_manager.counters.differences
                await engine.state_manager.poll_completion()
                assert engine.state_manager.counters.differences > before

                async def work() -> str:
                    assert engine.state_manager.current_operation == "custom"
                    return "done"

                assert await engine.state_manager.custom(work) == "done"

        asyncio.run(run())


def test_the_worker_runs_the_engine_on_its_own_thread(tmp_path) -> None:
    with serve() as server:
        postbox = Postbox(tmp_path / "c.db")
        worker = SyncWorker(
            lambda: SyncEngine(postbox, "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        ).start()
        try:
            assert worker.call(lambda engine: engine.wait_idle(timeout=20))
            state = server.call(lambda s: s.service.store.state())
            cursor = postbox.run(lambda tx: tx.get_state())
            assert cursor is not None and cursor.pts == state.pts
        finally:
            worker.stop()
            postbox.close()
        assert worker.error is None


def test_a_short_message_from_an_unknown_user_comes_with_its_sender(tmp_path) -> None:
    """No chat list is open, so no dialog (and no peer) is stored: the compact push of a
    private message names a user the client does not know. It is dropped, and the
    difference brings the message together with its sender."""
    with serve() as server:
        peer = busiest_user(server)

        def push(s) -> None:
            update = s.service.store.add_message(peer, out=False, author=peer, text="who am I?")
            s.push([push_for(s.service.store, update)])

        async def run() -> None:
            postbox = Postbox(tmp_path / "c.db")
            engine = SyncEngine(postbox, "127.0.0.1", server.port, TOKEN, timeouts=FAST)
            task = asyncio.create_task(engine.run())
            try:
                await wait_quiescent(engine)
                assert postbox.run(lambda tx: tx.get_peer(PeerId(peer))) is None
                before = engine.state_manager.counters.differences
                server.call(push)
                await engine.wait_for(
                    lambda: postbox.run(lambda tx: tx.get_peer(PeerId(peer))) is not None
                )
                top = postbox.run(
                    lambda tx: tx.get_messages(PeerId(peer), 0, limit=1, newest_first=True)
                )
                assert top[0].text == "who am I?"
                assert engine.state_manager.counters.differences > before
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                postbox.close()

        asyncio.run(run())
