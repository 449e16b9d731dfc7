"""A channel the account was removed from: the server refuses it for good
(``CHANNEL_PRIVATE``), and the client forgets it while the other channels go on."""

from __future__ import annotations

import asyncio

import pytest

from postbox import (
    ChannelState,
    ChatListInclusion,
    MessageId,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerOperationLogEntry,
    PeerReadState,
    Postbox,
    StateCursor,
    StoreMessage,
    Transaction,
)
from postbox import Peer as StoredPeer
from sync.engine import enqueue_forward
from sync.engine.channel_access import INACCESSIBLE_CHANNELS_PREFERENCE
from sync.engine.convert import CLOUD, message_from_wire, read_state_from_dialog, tags_of
from sync.engine.log_tags import VALIDATE_READ_STATE_TAG, VALIDATE_TAG_SUMMARIES_TAG
from sync.engine.mutable_state import ResetHistories
from sync.engine.outbound import Outbound
from sync.engine.read_states import request_validation
from sync.engine.replay import apply_operation
from sync.engine.state_manager import StateManager
from sync.engine.timing import Timeouts
from sync.engine.validators import ReadStateValidator, TagSummaryValidator
from sync.protocol import (
    ChannelDifference,
    Difference,
    ErrorCode,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetHistory,
    GetPeerDialogs,
    Media,
    MediaKind,
    Message,
    ProtocolError,
    RpcError,
    SendMessage,
    UpdateChannel,
    WireRecord,
)
from sync.simulation.loop import run_virtual
from sync.simulation.told import ToldChannelPts
from tests.sync.server_helpers import make_harness, truth

GONE = int(PeerId.make(PeerNamespace.CHANNEL, 9))
KEPT = int(PeerId.make(PeerNamespace.CHANNEL, 10))


def test_the_server_refuses_a_channel_the_account_was_removed_from() -> None:
    harness = make_harness()
    channel = next(iter(truth(harness.store).channel_pts))
    before = harness.store.state().pts
    assert harness.service.remove_from_channel(channel)
    assert not harness.service.remove_from_channel(channel)  # once
    dialogs = harness.call(GetDialogs())
    assert channel not in {dialog.peer for dialog in dialogs.dialogs}
    for request in (
        GetChannelDifference(channel, 0),
        GetHistory(channel),
        SendMessage(channel, "hello", 77),
    ):
        with pytest.raises(ProtocolError) as refused:
            harness.call(request)
        assert refused.value.code is ErrorCode.CHANNEL_PRIVATE
    # Every device learns it, from a push or from its difference.
    update = UpdateChannel(channel, before + 1, 1)
    assert harness.pushes[-1][0].updates == (update,)  # type: ignore[union-attr]
    answer = harness.call(GetDifference(before, 0, 0))
    assert isinstance(answer, Difference) and update in answer.other_updates
    # Traffic goes on in the account's other chats, never in that one.
    for _ in range(200):
        harness.service.generate(1, "channel_post")
    assert channel not in {dialog.peer for dialog in harness.call(GetDialogs()).dialogs}


def post(channel: int, id_: int) -> Message:
    return Message(channel, id_, 1_000 + id_, False, f"post {id_}", channel)


class ChannelServer:
    """Refuses one channel for good; answers the other's difference."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    async def call(self, params: WireRecord) -> object:
        assert isinstance(params, GetChannelDifference)
        self.calls.append(params.channel)
        if len(self.calls) > 10:
            pytest.fail(f"asked again and again: {self.calls}")
        if params.channel == GONE:
            raise RpcError("not a member", ErrorCode.CHANNEL_PRIVATE)
        return ChannelDifference((post(KEPT, 4),), (), (), params.pts + 1)


def make_postbox(tmp_path) -> Postbox:
    box = Postbox(tmp_path / "client.db", inline=True)

    def seed(tx) -> None:
        tx.set_state(StateCursor(10, 0, 1, 500))
        # Known peers: the posts name nobody the client must look up first.
        tx.update_peers([StoredPeer(PeerId(GONE), "Gone"), StoredPeer(PeerId(KEPT), "Kept")])
        for channel in (GONE, KEPT):
            tx.set_peer_chat_state(PeerId(channel), ChannelState(3))
            tx.update_chat_list_inclusion(PeerId(channel), ChatListInclusion(PeerGroupId.ROOT))
        tx.add_messages([StoreMessage(PeerId(GONE), 0, 3, 1_003, text="old post")])
        tx.set_pinned_peer_ids(PeerGroupId.ROOT, [PeerId(GONE)])

    box.run(seed)
    return box


def run_manager(box: Postbox, server: ChannelServer, *channels: int) -> None:
    async def main() -> None:
        manager = StateManager(box, server.call, self_id=1, timeouts=Timeouts())
        task = asyncio.create_task(manager.run())
        try:
            for channel in channels:
                manager.request_channel_poll(channel)
            await manager.changes.wait_for(lambda: manager.idle, 60.0)
        finally:
            task.cancel()

    run_virtual(main())


def test_a_refused_channel_is_forgotten_and_the_others_sync(tmp_path) -> None:
    box = make_postbox(tmp_path)
    server = ChannelServer()
    run_manager(box, server, GONE, KEPT)
    assert sorted(server.calls) == [GONE, KEPT]

    def look(tx):
        listed = {entry.peer_id for entry in tx.get_chat_list(PeerGroupId.ROOT)}
        return (
            listed,
            tx.get_pinned_peer_ids(PeerGroupId.ROOT),
            tx.message_exists(MessageId(PeerId(GONE), 0, 3)),
            tx.get_peer_chat_state(PeerId(KEPT)),
            tx.get_preference(INACCESSIBLE_CHANNELS_PREFERENCE),
        )

    listed, pinned, kept_post, kept_state, recorded = box.run(look)
    assert PeerId(GONE) not in listed and PeerId(KEPT) in listed
    assert pinned == [] and not kept_post
    assert kept_state == ChannelState(4)
    assert list(recorded) == [GONE]
    # Recorded: neither this run nor a restarted one asks about it again.
    server.calls.clear()
    run_manager(box, server, GONE)
    assert server.calls == []
    box.close()


def test_a_forward_out_of_a_channel_the_account_left_is_dropped_and_the_channel_checked(
    tmp_path,
) -> None:
    """Found by seed 762: the forward failed, and its failed copy listed the target chat
    above where the server has it."""
    harness = make_harness(seed=5, peers=20, messages=400)
    channel = next(iter(truth(harness.store).channel_pts))
    user = next(
        p for p, _ in harness.store.chat_sizes() if PeerId(p).namespace == PeerNamespace.USER
    )
    post = harness.store.recent_messages(channel, 1)[0]
    box = Postbox(tmp_path / "client.db", inline=True)
    box.run(lambda tx: tx.add_messages([message_from_wire(post)]))
    box.run(
        lambda tx: enqueue_forward(
            tx, PeerId(user), [MessageId(PeerId(channel), 0, post.id)], timestamp=1_800_000_000
        )
    )
    harness.service.remove_from_channel(channel)
    checked: list[int] = []

    async def call(params: WireRecord) -> object:
        return harness.call(params)

    async def main() -> None:
        outbound = Outbound(box, call, on_gap=lambda _reason: None, on_channel_check=checked.append)
        task = asyncio.create_task(outbound.run())
        try:
            await outbound.changes.wait_for(lambda: outbound.failed == 1 and outbound.idle, 60)
        finally:
            task.cancel()

    run_virtual(main())
    assert checked == [channel]  # the state manager's poll then finds it refused
    assert box.run(lambda tx: tx.get_failed_message_ids()) == []
    assert box.run(lambda tx: tx.get_messages(PeerId(user), int(MessageNamespace.LOCAL))) == []
    box.close()


def test_a_channel_the_account_left_is_not_held_behind_what_it_was_told(tmp_path) -> None:
    """Found by seed 8: the client forgets a channel it was removed from, so the pts it
    was told of it is no longer its to reach."""
    told = ToldChannelPts()
    told.tell(GONE, 4)
    box = Postbox(tmp_path / "client.db", inline=True)
    assert len(box.run(told.behind)) == 1
    assert box.run(lambda tx: told.behind(tx, left={GONE})) == []
    box.close()


def test_a_channel_left_in_a_difference_too_long_is_forgotten_by_its_validation(
    tmp_path,
) -> None:
    """Found by seed 936: the difference that would have said the account was removed
    from a channel came too long, so the refilled chat list left the channel out and
    its validation found no dialog of it. The channel's difference is asked for then,
    and the refusal forgets the chat rather than leaving it listed with its unread."""
    harness = make_harness()
    channel = PeerId(next(iter(truth(harness.store).channel_pts)))
    dialog = harness.call(GetPeerDialogs((int(channel),))).dialogs[0]
    assert harness.service.remove_from_channel(int(channel))
    state = harness.store.state()
    box = Postbox(tmp_path / "client.db", inline=True)

    def seed(tx) -> None:
        # Caught up past the removal by a difference too long, the channel still listed.
        tx.set_state(StateCursor(state.pts, state.qts, state.seq, state.date))
        tx.set_peer_chat_state(channel, ChannelState(dialog.pts or 0))
        tx.update_chat_list_inclusion(channel, ChatListInclusion(PeerGroupId.ROOT))
        tx.reset_read_state(channel, CLOUD, read_state_from_dialog(dialog))
        request_validation(tx, channel)

    box.run(seed)

    async def call(params: WireRecord) -> object:
        return harness.call(params)

    async def main() -> list[PeerId]:
        manager = StateManager(box, call, self_id=1, timeouts=Timeouts())
        task = asyncio.create_task(manager.run())
        try:
            waiting = await ReadStateValidator(box, call, manager).validate([channel])
            await manager.changes.wait_for(lambda: manager.idle, 60.0)
            return waiting
        finally:
            task.cancel()

    waiting = run_virtual(main())

    def look(tx):
        return (
            tx.get_chat_list_inclusion(channel),
            tx.get_read_state(channel),
            tx.get_operation_log_entries(channel, VALIDATE_READ_STATE_TAG),
            tx.get_preference(INACCESSIBLE_CHANNELS_PREFERENCE),
        )

    inclusion, read_state, queued, recorded = box.run(look)
    box.close()
    assert waiting == [channel]
    assert inclusion is None and not queued
    assert read_state is None or read_state.get(CLOUD) == PeerReadState()
    assert list(recorded) == [int(channel)]


def forgotten_channel_box(tmp_path) -> Postbox:
    """A client that forgot ``GONE`` (refused for good) after it had a read state and
    media counts there, and still knows ``KEPT``."""
    box = make_postbox(tmp_path)
    server = ChannelServer()
    run_manager(box, server, GONE)

    def counts(tx) -> None:
        for channel in (GONE, KEPT):
            tx.replace_tag_summary(PeerId(channel), tags_of((Media(MediaKind.PHOTO, 0),)), 0, 2, 3)

    box.run(counts)
    return box


def test_a_difference_too_long_does_not_queue_a_forgotten_channel(tmp_path) -> None:
    """Found by seed 4836: a forgotten channel keeps an empty read state, and the reset a
    too-long difference makes queued it for validation that no answer could end."""
    box = forgotten_channel_box(tmp_path)
    box.run(lambda tx: apply_operation(tx, ResetHistories(), set()))

    def queued(tx, tag: int) -> set[int]:
        return {int(entry.peer_id) for entry in tx.get_merged_operation_log_entries(tag)}

    assert GONE not in box.run(lambda tx: queued(tx, VALIDATE_READ_STATE_TAG))
    assert box.run(lambda tx: queued(tx, VALIDATE_TAG_SUMMARIES_TAG)) == {KEPT}
    box.close()


@pytest.mark.parametrize("validator", [ReadStateValidator, TagSummaryValidator])
def test_a_validation_queued_for_a_forgotten_channel_is_dropped_unasked(
    tmp_path, validator: type[ReadStateValidator] | type[TagSummaryValidator]
) -> None:
    box = forgotten_channel_box(tmp_path)
    box.run(lambda tx: tx.add_operation_log_entry(PeerId(GONE), validator.tag, {}))
    asked: list[WireRecord] = []

    async def call(params: WireRecord) -> object:
        asked.append(params)
        raise AssertionError(f"asked about a forgotten channel: {params}")

    def queued(tx: Transaction) -> list[PeerOperationLogEntry]:
        return tx.get_operation_log_entries(PeerId(GONE), validator.tag)

    async def main() -> None:
        manager = StateManager(box, call, self_id=1, timeouts=Timeouts())
        part = validator(box, call, manager)
        task = asyncio.create_task(part.run())
        try:
            for _ in range(100):
                await asyncio.sleep(0.1)
                if not box.run(queued):
                    break
        finally:
            task.cancel()

    run_virtual(main())
    assert asked == []
    assert box.run(queued) == []
    box.close()


def test_media_counts_refused_for_good_forget_the_channel(tmp_path) -> None:
    box = make_postbox(tmp_path)
    refused: list[int] = []

    async def call(params: WireRecord) -> object:
        assert isinstance(params, GetHistory) and params.peer == GONE
        raise RpcError("not a member", ErrorCode.CHANNEL_PRIVATE)

    async def main() -> None:
        manager = StateManager(box, call, self_id=1, timeouts=Timeouts())
        manager.channel_refused = refused.append  # type: ignore[method-assign,assignment]
        with pytest.raises(RpcError):
            await TagSummaryValidator(box, call, manager).validate([PeerId(GONE)])

    run_virtual(main())
    assert refused == [GONE]
    box.close()
