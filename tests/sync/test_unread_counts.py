"""Unread counts equal the server's: after history fills, deletions the client never
stored, reads made on another device, and a fill racing a validation."""

from __future__ import annotations

import asyncio

import pytest

from postbox import Peer as StoredPeer
from postbox import PeerId, PeerNamespace, PeerReadState, Postbox, StateCursor, StoreMessage
from sync.engine.convert import CLOUD, message_from_wire
from sync.engine.log_tags import VALIDATE_READ_STATE_TAG
from sync.engine.read_states import request_validation
from sync.engine.replay import replace_range
from sync.engine.state_manager import StateManager
from sync.engine.validators import ReadStateValidator
from sync.protocol import Dialog, GetDialogs, GetPeerDialogs, Message, PeerDialogs, State
from sync.server.config import ServerConfig
from sync.server.pushes import push_for
from sync.server.server import EmbeddedServer, MockServer
from sync.simulation.loop import VirtualLoop
from tests.sync.engine_helpers import TOKEN, running_engine, wait_quiescent


def serve() -> EmbeddedServer:
    """An account whose chats of every kind have unread messages."""
    return EmbeddedServer(ServerConfig(token=TOKEN, peers=30, messages=1500, seed=5))


def server_unread(server: EmbeddedServer) -> dict[int, int]:
    page = server.call(lambda s: s.service.store.dialogs(GetDialogs(limit=100)))
    return {dialog.peer: dialog.unread_count for dialog in page.dialogs}


def local_unread(postbox: Postbox, peers: list[int]) -> dict[int, int]:
    def read(tx) -> dict[int, int]:
        counts = {}
        for peer in peers:
            state = tx.get_read_state(PeerId(peer))
            counts[peer] = 0 if state is None else state.count
        return counts

    return postbox.run(read)


def unread_incoming(server: EmbeddedServer, peer: int) -> list[int]:
    """Ids of the chat's incoming messages above its read mark, oldest first."""

    def find(s: MockServer) -> list[int]:
        read_inbox = s.service.store.dialog(peer).read_inbox_max_id
        recent = s.service.store.recent_messages(peer, 500)
        return sorted(m.id for m in recent if not m.out and m.id > read_inbox)

    return server.call(find)


def publish(server: EmbeddedServer, make) -> None:
    """Apply one change to the server's store and push it to every connection."""

    def run(s: MockServer) -> None:
        update = make(s.service.store)
        assert update is not None
        s.push([push_for(s.service.store, update)])

    server.call(run)


def test_filling_the_history_of_unread_chats_keeps_the_servers_counts(tmp_path) -> None:
    with serve() as server:
        expected = server_unread(server)
        unread_chats = [peer for peer, count in expected.items() if count]
        assert len(unread_chats) >= 3, "the generated account should have unread chats"

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db", open_peers=unread_chats) as (
                engine,
                postbox,
            ):
                await wait_quiescent(engine)
                assert engine.hole_filler.messages_filled > 0
                assert local_unread(postbox, unread_chats) == {
                    peer: expected[peer] for peer in unread_chats
                }

        asyncio.run(run())


@pytest.mark.parametrize("kind", [PeerNamespace.USER, PeerNamespace.CHANNEL])
def test_deleting_unread_messages_never_stored_lowers_the_count(tmp_path, kind) -> None:
    with serve() as server:
        counts = server_unread(server)
        peer = max((count, peer) for peer, count in counts.items() if peer >> 56 == kind)[1]
        unread = unread_incoming(server, peer)
        assert len(unread) >= 2
        # The chat list stores only each chat's top message: the older unread ones are
        # in a hole, never stored here.
        victims = unread[:-1][:3]

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
                await wait_quiescent(engine)
                assert local_unread(postbox, [peer]) == {peer: counts[peer]}
                publish(server, lambda store: store.delete_messages(peer, victims))
                await wait_quiescent(engine)
                assert server_unread(server)[peer] == counts[peer] - len(victims)
                assert local_unread(postbox, [peer]) == {peer: counts[peer] - len(victims)}
                assert engine.read_states.corrected >= 1

        asyncio.run(run())


def test_a_read_on_another_device_sets_the_servers_count(tmp_path) -> None:
    with serve() as server:
        counts = server_unread(server)
        peer = max((count, peer) for peer, count in counts.items())[1]
        unread = unread_incoming(server, peer)
        middle = unread[len(unread) // 2]

        async def run() -> None:
            async with running_engine(server, tmp_path / "c.db") as (engine, postbox):
                await wait_quiescent(engine)
                publish(server, lambda store: store.read_inbox(peer, middle))
                await wait_quiescent(engine)
                expected = server_unread(server)[peer]
                assert 0 < expected < counts[peer]
                assert local_unread(postbox, [peer]) == {peer: expected}
                state = postbox.run(lambda tx: tx.get_read_state(PeerId(peer)))
                assert state is not None
                cloud = state.get(0)
                assert cloud is not None and cloud.max_incoming_read_id == middle

        asyncio.run(run())


def test_a_validation_answer_older_than_a_fill_that_asked_again_is_not_taken(tmp_path) -> None:
    """A getPeerDialogs answer is asked for at the cursor's state; while it travels a
    fill stores message 7, which the answer predates, and asks for validation again.
    The cursor has not moved (the update for 7 waits behind the validation), so only
    the request tells: the chat waits and stays queued rather than taking unread 0 and
    then never counting 7 (its update finds it stored)."""
    ann = PeerId.make(PeerNamespace.USER, 5)
    box = Postbox(tmp_path / "client.db", inline=True)

    def incoming(id_: int) -> Message:
        return Message(int(ann), id_, 1_000 + id_, False, f"m{id_}", int(ann))

    def setup(tx) -> None:
        tx.set_state(StateCursor(10, 0, 1, 500))
        tx.update_peers([StoredPeer(ann, "Ann")])
        stored: list[StoreMessage] = [message_from_wire(incoming(6))]
        replace_range(tx, ann, 1, 6, stored)
        tx.reset_read_state(ann, CLOUD, PeerReadState(6, 0, 6, 0))
        request_validation(tx, ann)

    box.run(setup)
    # The server's dialog as of pts 10, before message 7 existed.
    answer = PeerDialogs((Dialog(int(ann), 6, 6, 0, 0),), (incoming(6),), (), State(10, 0, 1, 0))

    async def call(params: object) -> object:
        assert isinstance(params, GetPeerDialogs)

        def fill(tx) -> None:  # answered later than the validation, stored first
            replace_range(tx, ann, 7, 7, [message_from_wire(incoming(7))])
            request_validation(tx, ann)

        box.run(fill)
        return answer

    manager = StateManager(box, call, self_id=1)

    async def main() -> list[PeerId]:
        task = asyncio.create_task(manager.run())
        try:
            return await ReadStateValidator(box, call, manager)._fetch_and_apply([ann])
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    loop = VirtualLoop()
    try:
        waiting = loop.run_until_complete(main())
    finally:
        loop.close()
    queued = box.run(lambda tx: tx.get_operation_log_entries(ann, VALIDATE_READ_STATE_TAG))
    state = box.run(lambda tx: tx.get_read_state(ann))
    box.close()
    assert waiting == [ann]
    assert queued, "the chat must be asked about again"
    assert state is not None and state.count == 1  # 7 as the fill counted it, not the answer's 0
