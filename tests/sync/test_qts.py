"""The qts stream: secret chats' new messages, on the server and in the client's rules."""

from __future__ import annotations

import asyncio

import pytest

from postbox import Peer as StoredPeer
from postbox import PeerId, PeerNamespace, Postbox, StateCursor
from sync.engine.state_manager import StateManager
from sync.engine.timing import Timeouts
from sync.protocol import (
    Difference,
    DifferenceSlice,
    DifferenceTooLong,
    EditMessage,
    GetDifference,
    Message,
    PeerKind,
    ProtocolError,
    ReadHistory,
    SendMessage,
    State,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    Updates,
    make_peer_id,
    peer_kind,
)
from sync.simulation.loop import VirtualLoop
from sync.state import QTS, group_push
from tests.sync.server_helpers import make_harness
from tests.sync.test_state_manager import ScriptedServer

# -- the server -------------------------------------------------------------------------


def open_secret_chat(harness) -> tuple[int, int]:
    """A secret chat with the dataset's first person; (chat, user)."""
    store = harness.store
    user = next(
        peer
        for peer, _ in store.chat_sizes()
        if peer_kind(peer) is PeerKind.USER
        and peer != store.self_id
        and not (store.peer(peer).flags & 2)
    )
    return store.open_secret_chat(user), user


def test_secret_messages_take_the_next_qts_and_leave_pts_alone() -> None:
    harness = make_harness()
    store = harness.store
    chat, user = open_secret_chat(harness)
    before = store.state()
    first = store.add_message(chat, out=False, author=user, text="hello")
    second = store.add_message(chat, out=False, author=user, text="again")
    assert isinstance(first, UpdateNewEncryptedMessage)
    assert isinstance(second, UpdateNewEncryptedMessage)
    assert (first.qts, second.qts) == (before.qts + 1, before.qts + 2)
    # A secret chat numbers its own messages; the account's pts does not move.
    assert (first.message.id, second.message.id) == (1, 2)
    assert store.state().pts == before.pts and store.state().qts == before.qts + 2
    assert store.dialog(chat).top_message == 2
    chat_peer, user_peer = store.peer(chat), store.peer(user)
    assert chat_peer is not None and user_peer is not None
    assert chat_peer.name == user_peer.name


def test_a_send_to_a_secret_chat_answers_with_its_qts() -> None:
    harness = make_harness()
    chat, user = open_secret_chat(harness)
    harness.store.add_message(chat, out=False, author=user, text="hi")
    qts = harness.store.state().qts
    sent = harness.call(SendMessage(chat, "hi back", 42))
    assert (sent.pts, sent.pts_count) == (qts + 1, 1)
    assert harness.store.state().qts == qts + 1
    # Sending again with the same random id gives the same message and point.
    assert harness.call(SendMessage(chat, "hi back", 42)) == sent


def test_secret_messages_are_not_edited_and_their_reads_move_the_pts() -> None:
    """A secret chat's read is the account's, so its other devices learn it: it takes
    the next pts (not the qts, which counts secret messages only)."""
    harness = make_harness()
    chat, user = open_secret_chat(harness)
    harness.store.add_message(chat, out=False, author=user, text="one")
    sent = harness.call(SendMessage(chat, "two", 7))
    with pytest.raises(ProtocolError, match="secret chat"):
        harness.call(EditMessage(chat, sent.message.id, "changed"))
    state = harness.store.state()
    affected = harness.call(ReadHistory(chat, 2))
    assert (affected.pts, affected.pts_count) == (state.pts + 1, 1)
    assert harness.store.read_marks(chat) == (2, 0)
    assert harness.store.state().qts == state.qts


def test_the_difference_brings_secret_messages_in_qts_order_and_slices_them() -> None:
    harness = make_harness()
    store = harness.store
    chat, user = open_secret_chat(harness)
    start = store.state()
    for index in range(5):
        store.add_message(chat, out=False, author=user, text=f"s{index}")
        harness.service.generate(1, "message")
    pts, qts, seen = start.pts, start.qts, []
    for _ in range(20):
        answer = harness.call(GetDifference(pts, qts, start.date, pts_total_limit=2))
        seen += [m.text for m in answer.new_encrypted_messages]
        # The secret chat's peer comes with its messages.
        if answer.new_encrypted_messages:
            assert chat in {peer.id for peer in answer.peers}
        if isinstance(answer, DifferenceSlice):
            pts, qts = answer.intermediate_state.pts, answer.intermediate_state.qts
            continue
        assert isinstance(answer, Difference)
        assert (answer.state.pts, answer.state.qts) == (store.state().pts, store.state().qts)
        break
    assert seen == [f"s{index}" for index in range(5)]


def test_a_too_long_pts_gap_keeps_the_qts_stream_whole() -> None:
    harness = make_harness(log_window=5)
    store = harness.store
    chat, user = open_secret_chat(harness)
    start = store.state()
    store.add_message(chat, out=False, author=user, text="kept")
    harness.service.generate(20, "message")
    answer = harness.call(GetDifference(start.pts, start.qts, start.date))
    assert isinstance(answer, DifferenceTooLong)
    after = harness.call(GetDifference(answer.pts, start.qts, start.date))
    assert [m.text for m in after.new_encrypted_messages] == ["kept"]


def test_traffic_opens_secret_chats_and_pushes_their_messages() -> None:
    harness = make_harness()
    before = harness.store.state()
    harness.service.generate(30, "secret")
    pushed = [
        update
        for push, _ in harness.pushes
        if isinstance(push, Updates)
        for update in push.updates
        if isinstance(update, UpdateNewEncryptedMessage)
    ]
    assert [u.qts for u in pushed] == list(range(before.qts + 1, before.qts + 31))
    assert harness.store.state().pts == before.pts
    chats = {u.message.peer for u in pushed}
    assert chats and all(peer_kind(peer) is PeerKind.SECRET for peer in chats)


# -- the client's rules -----------------------------------------------------------------

SECRET = PeerId.make(PeerNamespace.SECRET_CHAT, 1)
USER = PeerId.make(PeerNamespace.USER, 5)
ME = PeerId.make(PeerNamespace.USER, 1)
GAP = 0.3


def secret_message(id_: int) -> Message:
    return Message(int(SECRET), id_, 1_000 + id_, False, f"secret {id_}", int(USER))


def encrypted(qts: int) -> Updates:
    return Updates((UpdateNewEncryptedMessage(secret_message(qts), qts),), (), 0)


def test_a_qts_update_is_sorted_apart_from_pts_in_containers_with_a_seq() -> None:
    pts_update = UpdateNewMessage(Message(int(USER), 9, 1, False, "x", int(USER)), 11, 1)
    container = Updates((pts_update, UpdateNewEncryptedMessage(secret_message(1), 4)), (), 0, 2, 2)
    grouped = group_push(container, int(ME))
    assert grouped.seq is not None
    contents = grouped.seq[2]
    assert [u.qts for u in contents.qts] == [4] and contents.pts == [pts_update]


def make_postbox(path) -> Postbox:
    box = Postbox(path, inline=True)
    box.run(lambda tx: tx.set_state(StateCursor(10, 3, 1, 500)))
    box.run(
        lambda tx: tx.update_peers(
            [StoredPeer(USER, "Ann"), StoredPeer(ME, "Me"), StoredPeer(SECRET, "Ann")]
        )
    )
    return box


def run_manager(box: Postbox, server: ScriptedServer, body) -> None:
    async def main() -> None:
        manager = StateManager(box, server.call, self_id=int(ME), timeouts=Timeouts(gap=GAP))
        task = asyncio.create_task(manager.run())
        try:
            await body(manager)
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    loop = VirtualLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def stored(box: Postbox) -> StateCursor:
    cursor = box.run(lambda tx: tx.get_state())
    assert cursor is not None
    return cursor


def secret_ids(box: Postbox) -> list[int]:
    return box.run(lambda tx: [m.id.id for m in tx.get_messages(SECRET, 0)])


def test_qts_updates_apply_once_in_order_and_wait_for_a_missing_one(tmp_path) -> None:
    box = make_postbox(tmp_path / "client.db")
    server = ScriptedServer(lambda _: pytest.fail("no difference expected"))

    async def body(manager: StateManager) -> None:
        manager.push(encrypted(5))
        await manager.changes.wait_for(lambda: bool(manager._qts.held))
        assert stored(box).qts == 3 and manager._gaps.waiting(QTS)
        for qts in (4, 4, 3, 5):
            manager.push(encrypted(qts))
        await manager.changes.wait_for(lambda: stored(box).qts == 5)
        await manager.changes.wait_for(lambda: manager.idle)

    run_manager(box, server, body)
    assert secret_ids(box) == [4, 5]
    assert stored(box).pts == 10  # the qts stream moves no pts
    box.close()


def test_a_qts_gap_never_filled_asks_one_difference_from_the_stored_qts(tmp_path) -> None:
    box = make_postbox(tmp_path / "client.db")

    def answer(request: GetDifference) -> object:
        assert (request.pts, request.qts) == (10, 3)
        messages = (secret_message(4), secret_message(5))
        return Difference((), (), (), State(10, 5, 1, 600), new_encrypted_messages=messages)

    server = ScriptedServer(answer)

    async def body(manager: StateManager) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        manager.push(encrypted(5))
        await manager.changes.wait_for(lambda: stored(box).qts == 5)
        assert loop.time() - started == pytest.approx(GAP)
        await manager.changes.wait_for(lambda: manager.idle)

    run_manager(box, server, body)
    assert len(server.calls) == 1
    assert stored(box).qts == 5 and secret_ids(box) == [4, 5]
    box.close()


def test_a_difference_whose_qts_goes_backwards_is_refused(tmp_path) -> None:
    box = make_postbox(tmp_path / "client.db")
    server = ScriptedServer(lambda _: Difference((), (), (), State(10, 1, 1, 600)))

    async def body(manager: StateManager) -> None:
        manager.request_poll("test")
        await manager.changes.wait_for(lambda: manager.problem is not None)

    run_manager(box, server, body)
    assert stored(box).qts == 3
    box.close()


def test_a_secret_chat_peer_id_is_the_same_on_the_wire_and_in_postbox() -> None:
    assert make_peer_id(PeerKind.SECRET, 1) == int(SECRET)
