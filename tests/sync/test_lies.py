"""A server that lies, and one that names peers it has not sent yet (min peers).

A message may name a chat, author or forward source the client has not received: the
client asks ``getPeers`` and stores them with it. A peer the server cannot describe, or
a peer of the wrong kind, is a lie: the whole answer is refused and nothing of it stays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    ClosedRange,
    HoleDirection,
    MessageHistoryHolesEntry,
    MessageHistoryHoleSpace,
    PeerId,
    PeerNamespace,
    Postbox,
    StateCursor,
)
from postbox import Peer as StoredPeer
from sync.connection import ServerConnection
from sync.engine.hole_filler import HoleFiller
from sync.engine.state_manager import StateManager
from sync.engine.timing import Timeouts
from sync.engine.validators import ReadStateValidator
from sync.protocol import (
    Dialog,
    Difference,
    ForwardHeader,
    GetDifference,
    GetHistory,
    GetPeerDialogs,
    GetPeers,
    InvalidParamsError,
    Message,
    MessagesSlice,
    Peer,
    PeerDialogs,
    PeerKind,
    Peers,
    State,
    UpdateDeleteChannelMessages,
    UpdateNewChannelMessage,
    UpdateNewMessage,
    Updates,
    encode_frame,
    make_peer_id,
)
from sync.simulation.loop import VirtualLoop
from sync.state import PeerLookups, ServerLiedError, check_dialogs, check_update
from sync.state.answers import LIE_PAUSE_MAX, LIE_PAUSE_MIN
from sync.verify.local_side import read_local

ANN = PeerId.make(PeerNamespace.USER, 5)
ME = PeerId.make(PeerNamespace.USER, 1)
GROUP = PeerId.make(PeerNamespace.GROUP, 7)
#: A user the server knows but has not sent yet (a min peer).
BOB = make_peer_id(PeerKind.USER, 9)
#: A user no server has.
GHOST = make_peer_id(PeerKind.USER, 666)
CHANNEL = make_peer_id(PeerKind.CHANNEL, 3)
DESCRIBED = {BOB: Peer(BOB, "Bob"), CHANNEL: Peer(CHANNEL, "News")}


def message(id_: int, author: int = int(ANN), **fields: object) -> Message:
    return Message(int(GROUP), id_, 1_000 + id_, False, f"m{id_}", author, **fields)  # type: ignore[arg-type]


def push(update: object) -> Updates:
    return Updates((update,), (), 0)  # type: ignore[arg-type]


class Server:
    """Answers getPeers from ``DESCRIBED`` and getDifference as the test says."""

    def __init__(self, difference: Callable[[GetDifference], object] | None = None) -> None:
        self.difference = difference
        self.calls: list[object] = []

    async def call(self, params: object) -> object:
        self.calls.append(params)
        if isinstance(params, GetPeers):
            return Peers(tuple(DESCRIBED[i] for i in params.ids if i in DESCRIBED))
        assert isinstance(params, GetDifference) and self.difference is not None
        return self.difference(params)


@pytest.fixture
def box(tmp_path):
    postbox = Postbox(tmp_path / "client.db", inline=True)
    postbox.run(lambda tx: tx.set_state(StateCursor(10, 0, 1, 500)))
    stored = [StoredPeer(ANN, "Ann"), StoredPeer(ME, "Me"), StoredPeer(GROUP, "Team")]
    postbox.run(lambda tx: tx.update_peers(stored))
    yield postbox
    postbox.close()


def run(box: Postbox, server: Server, body) -> StateManager:
    manager = StateManager(box, server.call, self_id=int(ME), timeouts=Timeouts(gap=0.3))

    async def main() -> None:
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
    return manager


def group_ids(box: Postbox) -> list[int]:
    return box.run(lambda tx: [m.id.id for m in tx.get_messages(GROUP, 0)])


def pts(box: Postbox) -> int:
    cursor = box.run(lambda tx: tx.get_state())
    assert cursor is not None
    return cursor.pts


def peer_name(box: Postbox, peer: int) -> str | None:
    stored = box.run(lambda tx: tx.get_peer(PeerId(peer)))
    return None if stored is None else stored.name


# -- min peers ----------------------------------------------------------------------


def test_a_message_from_an_author_not_sent_yet_is_stored_with_the_author_fetched(box) -> None:
    server = Server()
    forwarded = ForwardHeader(CHANNEL, 900, CHANNEL, 4)

    async def body(manager: StateManager) -> None:
        manager.push(push(UpdateNewMessage(message(50, BOB, forward=forwarded), 11, 1)))
        await manager.changes.wait_for(lambda: pts(box) == 11 and manager.idle)

    manager = run(box, server, body)
    assert group_ids(box) == [50]
    assert (peer_name(box, BOB), peer_name(box, CHANNEL)) == ("Bob", "News")
    assert [c for c in server.calls if isinstance(c, GetPeers)] == [GetPeers((BOB, CHANNEL))]
    assert manager.counters.peers_fetched == 2 and manager.counters.lies_refused == 0


# -- lies -----------------------------------------------------------------------------


def test_a_push_naming_a_peer_the_server_cannot_describe_leaves_nothing(box) -> None:
    honest = Difference((message(50),), (), (), State(11, 0, 1, 600))
    answers = iter([honest])
    server = Server(lambda _: next(answers))

    async def body(manager: StateManager) -> None:
        manager.push(push(UpdateNewMessage(message(50, GHOST), 11, 1)))
        await manager.changes.wait_for(lambda: pts(box) == 11 and manager.idle)

    manager = run(box, server, body)
    # The lie was refused whole; the difference asked after it brought the truth.
    assert group_ids(box) == [50]
    stored = box.run(lambda tx: tx.get_messages(GROUP, 0))
    assert stored[0].author_id == ANN
    assert peer_name(box, GHOST) is None
    assert manager.counters.lies_refused == 1
    assert manager.problem is None  # the next operation succeeded


def test_a_difference_naming_an_undescribed_peer_is_refused_then_asked_again(box) -> None:
    lie = Difference((message(50), message(51, GHOST)), (), (), State(12, 0, 1, 600))
    truth = Difference((message(50), message(51)), (), (), State(12, 0, 1, 600))
    answers = iter([lie, truth])
    seen: list[tuple[int, list[int]]] = []
    server = Server(lambda _: next(answers))

    async def body(manager: StateManager) -> None:
        manager.request_poll("test")
        await manager.changes.wait_for(lambda: manager.counters.lies_refused == 1)
        seen.append((pts(box), group_ids(box)))
        await manager.changes.wait_for(lambda: pts(box) == 12 and manager.idle)

    manager = run(box, server, body)
    assert seen == [(10, [])]  # nothing of the lie was committed, the cursor stayed
    assert group_ids(box) == [50, 51] and peer_name(box, GHOST) is None
    assert manager.counters.differences == 2


def test_a_channel_update_about_a_private_chat_is_refused(box) -> None:
    # Before, it was stored in the group's history, over message 50.
    box.run(lambda tx: tx.set_state(StateCursor(10, 0, 1, 500)))
    server = Server(lambda _: Difference((), (), (), State(10, 0, 1, 600)))
    wrong = UpdateNewChannelMessage(message(50), 5, 1)

    async def body(manager: StateManager) -> None:
        manager.push(push(wrong))
        await manager.changes.wait_for(lambda: manager.counters.differences == 1)
        await manager.changes.wait_for(lambda: manager.idle)

    manager = run(box, server, body)
    assert group_ids(box) == [] and manager.counters.lies_refused == 1


@pytest.mark.parametrize(
    "update",
    [
        UpdateNewMessage(Message(CHANNEL, 1, 1, False, "x"), 11, 1),
        UpdateNewMessage(Message(int(GROUP), 1, 1, False, "x", 2**62), 11, 1),
        UpdateNewMessage(
            Message(int(GROUP), 1, 1, False, "x", forward=ForwardHeader(BOB, 1, BOB, 2)), 11, 1
        ),
        UpdateDeleteChannelMessages(int(GROUP), (1,), 5, 1),
    ],
    ids=["account-update-in-a-channel", "author-of-no-kind", "forward-source-a-user", "channel"],
)
def test_a_peer_of_the_wrong_kind_is_a_lie(update) -> None:
    with pytest.raises(ServerLiedError):
        check_update(update)


# -- when to ask again -----------------------------------------------------------------


@given(
    st.lists(st.tuples(st.floats(0, 100), st.booleans()), min_size=1, max_size=12),
)
def test_a_peer_the_server_could_not_describe_waits_a_doubling_pause(steps) -> None:
    lookups = PeerLookups()
    now = 0.0
    pause = None
    for advance, described in steps:
        now += advance
        plan = lookups.plan([GHOST], now)
        until = lookups.waiting().get(GHOST)
        if until is not None and now < until:
            assert plan.refuse == (GHOST,) and plan.fetch == ()
            continue
        assert plan.fetch == (GHOST,) and plan.refuse == ()
        missing = lookups.answered([GHOST], [GHOST] if described else [], now)
        if described:
            assert missing == set() and GHOST not in lookups.waiting()
            pause = None
        else:
            assert missing == {GHOST}
            pause = LIE_PAUSE_MIN if pause is None else min(pause * 2, LIE_PAUSE_MAX)
            assert lookups.waiting()[GHOST] == pytest.approx(now + pause)


def test_verify_reads_every_stored_peer_so_one_a_lie_left_is_compared(box) -> None:
    box.run(lambda tx: tx.update_peers([StoredPeer(PeerId(GHOST), "Nobody")]))
    local = box.run(lambda tx: read_local(tx, []))
    assert PeerId(GHOST) in local.peers


# -- hole fills -------------------------------------------------------------------------


def _fill(box: Postbox, page: MessagesSlice) -> HoleFiller:
    """One fill of the group's whole history, answered with ``page``."""

    async def call(params: object) -> object:
        if isinstance(params, GetPeers):
            return Peers(tuple(DESCRIBED[i] for i in params.ids if i in DESCRIBED))
        assert isinstance(params, GetHistory)
        return page

    filler = HoleFiller(box, call)
    hole = MessageHistoryHolesEntry(
        GROUP, 0, MessageHistoryHoleSpace.everywhere(), ClosedRange(1, MAX_MESSAGE_ID),
        HoleDirection.OLDER, MAX_MESSAGE_ID, 20,
    )  # fmt: skip

    async def main() -> None:
        await filler._fetch(hole)

    loop = VirtualLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return filler


def test_a_history_page_naming_a_min_peer_stores_it_fetched(box) -> None:
    filler = _fill(box, MessagesSlice((message(51, BOB), message(50)), (), 2))
    assert group_ids(box) == [50, 51] and peer_name(box, BOB) == "Bob"
    assert filler.describer.fetched == 1 and filler.lies_refused == 0


@pytest.mark.parametrize(
    "lie",
    [
        message(51, GHOST),
        Message(CHANNEL, 51, 1_051, False, "another chat's message"),
        Message(int(GROUP), 51, 1_051, False, "by nobody", (0x7F << 56) | 1),
    ],
    ids=["ghost-author", "another-chat", "author-of-no-kind"],
)
def test_a_history_page_that_lies_is_refused_whole(box, lie: Message) -> None:
    filler = _fill(box, MessagesSlice((lie, message(50)), (), 2))
    assert group_ids(box) == [] and peer_name(box, GHOST) is None
    assert filler.lies_refused == 1 and filler.fills == 0


# -- chat-list pages and getPeerDialogs ---------------------------------------------------


def _dialog(peer: int, top: int, pts: int | None = None) -> Dialog:
    return Dialog(peer, top, 0, 0, 0, pts=pts)


@pytest.mark.parametrize(
    ("dialogs", "messages"),
    [
        ((_dialog(int(GROUP), 50),), (message(51),)),
        ((_dialog(int(GROUP), 50, pts=3),), (message(50),)),
        ((_dialog((0x7F << 56) | 1, 50),), ()),
        ((_dialog(int(GROUP), 50),), (message(50, (0x7F << 56) | 1),)),
    ],
    ids=["message-tops-no-dialog", "pts-of-a-group", "dialog-of-no-kind", "author-of-no-kind"],
)
def test_a_chat_list_page_that_lies_is_refused(dialogs, messages) -> None:
    with pytest.raises(ServerLiedError):
        check_dialogs(dialogs, messages, (), "a page")


def test_a_peer_dialogs_answer_naming_a_ghost_is_refused_and_stores_nothing(box) -> None:
    box.run(lambda tx: tx.update_chat_list_inclusion(GROUP, ChatListInclusion()))
    answer = PeerDialogs((_dialog(int(GROUP), 50),), (message(50, GHOST),), (), State(10, 0, 1, 0))

    async def call(params: object) -> object:
        if isinstance(params, GetPeers):
            return Peers(())
        assert isinstance(params, GetPeerDialogs)
        return answer

    async def body(manager: StateManager) -> None:
        validator = ReadStateValidator(box, call, manager)
        with pytest.raises(ServerLiedError):
            await validator._fetch_and_apply([GROUP])

    run(box, Server(), body)
    assert group_ids(box) == [] and peer_name(box, GHOST) is None


def test_a_push_with_a_field_of_the_wrong_type_gives_the_connection_up() -> None:
    class Writer:
        def write(self, data: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    async def main() -> None:
        reader = asyncio.StreamReader()
        connection = ServerConnection(reader, Writer())  # type: ignore[arg-type]
        update = push(UpdateNewMessage(message(50), 11, 1)).to_wire()
        update["updates"][0]["message"]["date"] = "yesterday"
        reader.feed_data(encode_frame({"push": "updates", "updates": update}))
        assert await connection.pushes.get() is None
        assert isinstance(connection.bad_frame, InvalidParamsError)
        assert "date" in str(connection.bad_frame)
        reader.feed_eof()

    asyncio.run(main())
