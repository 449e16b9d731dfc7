"""``verify`` finds each category of divergence, and only that one, and no more than the
holes allow.

Every test starts from a database that mirrors the server exactly (written through
Postbox transactions), checks that nothing is reported where that matters, changes one
thing and checks what is reported.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    ChatInterfaceState,
    ChatListHole,
    ChatListInclusion,
    ForwardInfo,
    MessageFailure,
    MessageHistoryHoleSpace,
    MessageId,
    MessageIndex,
    MessageTags,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNotificationSettings,
    PeerPresence,
    Postbox,
    PresenceStatus,
    ScrollPosition,
    StateCursor,
    SynchronizeableDraft,
    Transaction,
)
from sync.connection import ServerConnection
from sync.engine import enqueue_send
from sync.engine.convert import CLOUD, message_from_wire, peer_from_wire
from sync.engine.log_tags import EDIT_TAG, SEND_TAG
from sync.protocol import (
    Auth,
    Dialog,
    GetDialogs,
    GetSentMessages,
    Message,
    PeerKind,
    SentMessageId,
    SentMessageIds,
    peer_kind,
)
from sync.protocol import Peer as WirePeer
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.verify import Category, Report, verify
from tests.sync.verify_helpers import mirror, profile_peer, report_for

TOKEN = "verify-token"
_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=8)) as running:
        yield running


@pytest.fixture(scope="module")
def template(server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("verify") / "mirror.db"
    mirror(server, TOKEN, db)
    return db


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "client.db"
    shutil.copyfile(template, copy)
    return copy


def tamper(db: Path, change: Callable[[Transaction], object]) -> None:
    postbox = Postbox(db)
    try:
        postbox.run(change)
    finally:
        postbox.close()


def check(server: EmbeddedServer, db: Path) -> Report:
    return report_for(server, TOKEN, db)


def categories(report: Report) -> set[Category]:
    return {divergence.category for divergence in report.divergences}


def dialogs(server: EmbeddedServer) -> list[Dialog]:
    """Every chat, pinned first, then newest first (the server's chat-list order)."""

    def read(s: MockServer) -> list[tuple[Dialog, Message | None]]:
        store = s.service.store
        listed = [store.dialog(peer) for peer, _ in store.chat_sizes()]
        return [(d, store.message(d.peer, d.top_message)) for d in listed]

    result: list[Dialog] = []
    dates: dict[int, int] = {}
    for dialog, top in server.call(read):
        dates[dialog.peer] = top.date if top else 0
        result.append(dialog)
    result.sort(key=lambda d: (not d.pinned, -dates[d.peer], -d.top_message, -d.peer))
    return result


def history(server: EmbeddedServer, peer: int) -> list[Message]:
    """A chat's messages, newest first."""
    return server.call(lambda s: s.service.store.recent_messages(peer, 10**6))


def root_unpinned(server: EmbeddedServer) -> list[Dialog]:
    return [d for d in dialogs(server) if not d.pinned and not d.folder]


def test_a_mirrored_database_converges(server: EmbeddedServer, db: Path) -> None:
    report = check(server, db)
    assert report.ok, report.divergences
    summary = report.summary()
    assert set(summary["by_category"]) == {str(c) for c in Category}
    assert not any(summary["by_category"].values())
    assert summary["chats"] == 12
    assert summary["server_messages"] == summary["local_messages"] == 300
    assert summary["server_messages_in_holes"] == 0
    assert summary["peers_compared"] >= 12
    assert summary["presences_compared"] > 0
    assert summary["contacts_compared"] == 1
    assert summary["tag_summaries_compared"] > 0


# -- messages -----------------------------------------------------------------------


def test_an_edited_message_is_a_message_divergence(server: EmbeddedServer, db: Path) -> None:
    peer = root_unpinned(server)[0].peer
    message = history(server, peer)[3]
    changed = message_from_wire(message)._replace(text="not what the server has")
    tamper(db, lambda tx: tx.update_message(MessageId(PeerId(peer), CLOUD, message.id), changed))
    report = check(server, db)
    assert categories(report) == {Category.MESSAGES}
    assert [str(d) for d in report.divergences] == [
        f"messages peer {peer}: message {message.id} differs from the server's"
    ]


def test_a_forward_header_the_server_lacks_is_a_message_divergence(
    server: EmbeddedServer, db: Path
) -> None:
    peer = root_unpinned(server)[0].peer
    message = history(server, peer)[4]
    header = ForwardInfo(PeerId(peer), message.date - 60)
    changed = message_from_wire(message)._replace(forward_info=header)
    tamper(db, lambda tx: tx.update_message(MessageId(PeerId(peer), CLOUD, message.id), changed))
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"messages peer {peer}: message {message.id} differs from the server's"
    ]


def _quiet_message(server: EmbeddedServer) -> tuple[int, Message]:
    """An old outgoing message without media: losing it changes no count."""
    for dialog in root_unpinned(server):
        for message in history(server, dialog.peer)[2:]:
            if message.out and not message.media:
                return dialog.peer, message
    raise AssertionError("no outgoing message without media")


def test_a_lost_message_is_excused_only_inside_a_hole(server: EmbeddedServer, db: Path) -> None:
    peer, message = _quiet_message(server)
    message_id = MessageId(PeerId(peer), CLOUD, message.id)
    tamper(db, lambda tx: tx.delete_messages([message_id]))
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"messages peer {peer}: message {message.id} is missing outside the holes"
    ]
    tamper(db, lambda tx: tx.add_hole(PeerId(peer), CLOUD, _EVERYWHERE, message.id, message.id))
    report = check(server, db)
    assert report.ok, report.divergences
    assert report.messages_in_holes == 1


# -- read states --------------------------------------------------------------------


def _replace_read_state(db: Path, peer: int, **changes: int) -> None:
    def change(tx: Transaction) -> None:
        combined = tx.get_read_state(PeerId(peer))
        assert combined is not None
        state = combined.get(CLOUD)
        assert state is not None
        fields = {
            "max_incoming_read_id": state.max_incoming_read_id,
            "max_outgoing_read_id": state.max_outgoing_read_id,
            "max_known_id": state.max_known_id,
            "count": state.count,
            "marked_unread": state.marked_unread,
        }
        fields.update(changes)
        tx.reset_read_state(PeerId(peer), CLOUD, type(state)(**fields))  # type: ignore[arg-type]

    tamper(db, change)


@pytest.mark.parametrize(
    ("field", "shown"),
    [
        ("count", "unread count"),
        ("max_incoming_read_id", "incoming read mark"),
        ("max_outgoing_read_id", "outgoing read mark"),
        ("marked_unread", "marked unread"),
    ],
)
def test_each_read_state_field_is_compared(
    server: EmbeddedServer, db: Path, field: str, shown: str
) -> None:
    dialog = root_unpinned(server)[0]
    value = True if field == "marked_unread" else 1_000_003
    _replace_read_state(db, dialog.peer, **{field: value})
    report = check(server, db)
    assert categories(report) == {Category.READ_STATES}
    server_value = {
        "count": dialog.unread_count,
        "max_incoming_read_id": dialog.read_inbox_max_id,
        "max_outgoing_read_id": dialog.read_outbox_max_id,
        "marked_unread": False,
    }[field]
    assert [d.what for d in report.divergences] == [f"{shown} {value} != server {server_value}"]


def test_an_unread_count_is_not_excused_by_a_history_hole(server: EmbeddedServer, db: Path) -> None:
    dialog = root_unpinned(server)[0]
    peer = PeerId(dialog.peer)
    tamper(db, lambda tx: tx.add_hole(peer, CLOUD, _EVERYWHERE, 1, MAX_MESSAGE_ID))
    assert check(server, db).ok
    _replace_read_state(db, dialog.peer, count=dialog.unread_count + 5)
    report = check(server, db)
    assert categories(report) == {Category.READ_STATES}
    assert report.unverified == len(history(server, dialog.peer))


# -- chat list ----------------------------------------------------------------------


def test_a_chat_in_the_wrong_group(server: EmbeddedServer, db: Path) -> None:
    peer = root_unpinned(server)[2].peer
    tamper(
        db,
        lambda tx: tx.update_chat_list_inclusion(
            PeerId(peer), ChatListInclusion(PeerGroupId.ARCHIVE)
        ),
    )
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"chat_list peer {peer}: listed in ARCHIVE, server: ROOT"
    ]


def _index_of(tx: Transaction, peer: int) -> MessageIndex:
    position = tx.get_chat_list_position(PeerId(peer))
    assert position is not None
    return position[1].message_index


def test_a_lost_chat_is_excused_only_inside_the_chat_list_hole(
    server: EmbeddedServer, db: Path
) -> None:
    *_, second_oldest, oldest = root_unpinned(server)
    lost = PeerId(oldest.peer)
    postbox = Postbox(db)
    try:
        own_index = postbox.run(lambda tx: _index_of(tx, oldest.peer))
        above = postbox.run(lambda tx: _index_of(tx, second_oldest.peer))
    finally:
        postbox.close()
    tamper(db, lambda tx: tx.update_chat_list_inclusion(lost, None))
    missing = [f"chat_list peer {oldest.peer}: missing from the ROOT list"]
    assert [str(d) for d in check(server, db).divergences] == missing
    # A hole at the chat's own index covers only what is older: the chat is still lost.
    tamper(db, lambda tx: tx.add_chat_list_hole(PeerGroupId.ROOT, ChatListHole(own_index)))
    assert [str(d) for d in check(server, db).divergences] == missing
    tamper(db, lambda tx: tx.add_chat_list_hole(PeerGroupId.ROOT, ChatListHole(above)))
    report = check(server, db)
    assert report.ok, report.divergences
    assert report.chats_in_chat_list_holes == 1


def test_pinned_chats_and_their_order(server: EmbeddedServer, db: Path) -> None:
    first_page = server.call(lambda s: s.service.store.dialogs(GetDialogs()))
    archived = {d.peer for d in first_page.dialogs if d.folder}
    pinned = [p for p in first_page.pinned if p not in archived]
    assert pinned, "the generated account should have pinned chats"
    extra = root_unpinned(server)[-1].peer
    wrong = [PeerId(p) for p in [extra, *pinned]]
    tamper(db, lambda tx: tx.set_pinned_peer_ids(PeerGroupId.ROOT, wrong))
    report = check(server, db)
    assert categories(report) == {Category.CHAT_LIST}
    assert [d.what for d in report.divergences] == [
        f"ROOT pinned {[extra, *pinned]} != server {pinned}"
    ]


def test_the_order_of_unpinned_chats(server: EmbeddedServer, db: Path) -> None:
    chats = root_unpinned(server)
    oldest = chats[-1].peer
    late = ChatListInclusion(PeerGroupId.ROOT, None, 2**31 - 2)
    tamper(db, lambda tx: tx.update_chat_list_inclusion(PeerId(oldest), late))
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"chat_list peer {oldest}: ROOT list position 0: server has {chats[0].peer} there"
    ]


def test_a_top_message_is_not_excused_by_a_history_hole(server: EmbeddedServer, db: Path) -> None:
    for dialog in root_unpinned(server):
        top, below = history(server, dialog.peer)[:2]
        if not top.media and (top.out or top.id <= dialog.read_inbox_max_id):
            break
    else:
        raise AssertionError("no chat whose top message can go unnoticed elsewhere")
    peer = PeerId(dialog.peer)

    def lose_top(tx: Transaction) -> None:
        tx.delete_messages([MessageId(peer, CLOUD, top.id)])
        tx.add_hole(peer, CLOUD, _EVERYWHERE, top.id, MAX_MESSAGE_ID)

    tamper(db, lose_top)
    report = check(server, db)
    assert f"top message {below.id} != server {top.id}" in [d.what for d in report.divergences]
    assert categories(report) == {Category.CHAT_LIST}
    assert report.messages_in_holes == 1


def test_a_chat_the_server_does_not_have(server: EmbeddedServer, db: Path) -> None:
    stranger = PeerId(10**12)
    number = int(stranger)

    def invent(tx: Transaction) -> None:
        tx.update_peers([Peer(stranger, "Nobody")])
        tx.update_chat_list_inclusion(stranger, ChatListInclusion(PeerGroupId.ROOT, None, 1))

    tamper(db, invent)
    lines = [str(d) for d in check(server, db).divergences]
    assert lines == [
        f"chat_list peer {number}: listed, but the server has no such chat",
        f"peers peer {number}: stored, but the server has no such peer",
    ]


# -- peers, presences, mutes, contacts ------------------------------------------------


@pytest.mark.parametrize("field", ["name", "username"])
def test_a_stale_name_or_username(server: EmbeddedServer, db: Path, field: str) -> None:
    peer = root_unpinned(server)[1].peer
    record = server.call(lambda s: s.service.store.peer(peer))

    def rename(tx: Transaction) -> None:
        stored = tx.get_peer(PeerId(peer))
        assert stored is not None
        if field == "name":
            tx.update_peers([Peer(stored.id, "Old Name", stored.username)])
        else:
            tx.update_peers([Peer(stored.id, stored.name, "old_username")])

    tamper(db, rename)
    report = check(server, db)
    assert categories(report) == {Category.PEERS}
    expected = "Old Name" if field == "name" else "old_username"
    assert [d.what for d in report.divergences] == [
        f"{field} {expected!r} != server {getattr(record, field)!r}"
    ]


def test_a_stale_presence(server: EmbeddedServer, db: Path) -> None:
    postbox = Postbox(db)

    def has_presence(peer: int) -> bool:
        return postbox.run(lambda tx: tx.get_peer_presence(PeerId(peer))) is not None

    try:
        users = [
            d.peer
            for d in dialogs(server)
            if peer_kind(d.peer) is PeerKind.USER and has_presence(d.peer)
        ]
    finally:
        postbox.close()
    user = PeerId(users[0])
    stale = PeerPresence(PresenceStatus.OFFLINE, 12345)
    tamper(db, lambda tx: tx.update_peer_presences({user: stale}))
    report = check(server, db)
    assert categories(report) == {Category.PRESENCES}
    assert len(report.divergences) == 1
    assert report.divergences[0].what.startswith("OFFLINE 12345 != server ")


def test_a_wrong_mute(server: EmbeddedServer, db: Path) -> None:
    dialog = root_unpinned(server)[0]
    muted = PeerNotificationSettings(muted_until=dialog.muted_until + 3600)
    tamper(db, lambda tx: tx.update_notification_settings(PeerId(dialog.peer), muted))
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"notification_settings peer {dialog.peer}: muted until {dialog.muted_until + 3600}"
        f" != server {dialog.muted_until}"
    ]


def test_a_draft_the_server_does_not_have_and_one_it_lost(server: EmbeddedServer, db: Path) -> None:
    first, second = (PeerId(d.peer) for d in root_unpinned(server)[:2])
    typed = ChatInterfaceState(SynchronizeableDraft("never sent to the server", None, 1))
    tamper(db, lambda tx: tx.set_chat_interface_state(first, typed))
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"drafts peer {int(first)}: draft ('never sent to the server', None) != server None"
    ]
    # Only the scroll position kept: no draft, and none on the server either.
    scrolled = ChatInterfaceState(scroll=ScrollPosition(3, 0))
    tamper(db, lambda tx: tx.set_chat_interface_state(first, scrolled))
    tamper(db, lambda tx: tx.set_chat_interface_state(second, scrolled))
    assert check(server, db).ok


def test_contacts_the_client_claims(server: EmbeddedServer, db: Path) -> None:
    profile = PeerId(profile_peer(server))
    group = PeerId(next(d.peer for d in dialogs(server) if peer_kind(d.peer) is PeerKind.GROUP))

    def flip(tx: Transaction) -> None:
        contacts = tx.get_contact_peer_ids()
        tx.replace_contact_peer_ids((contacts ^ {profile}) | {group})

    tamper(db, flip)
    report = check(server, db)
    assert categories(report) == {Category.CONTACTS}
    assert sorted(d.peer_id or 0 for d in report.divergences) == sorted([profile, group])
    assert report.contacts_compared == 2


# -- cursor, tag summaries, pending -------------------------------------------------------


def test_the_cursor_and_channel_pts(server: EmbeddedServer, db: Path) -> None:
    state = server.call(lambda s: s.service.store.state())
    channel = next(d for d in dialogs(server) if d.pts is not None)
    channel_pts = channel.pts
    assert channel_pts is not None

    def move(tx: Transaction) -> None:
        tx.set_state(StateCursor(state.pts + 1, state.qts, state.seq, state.date))
        tx.set_peer_chat_state(PeerId(channel.peer), ChannelState(channel_pts - 1))

    tamper(db, move)
    report = check(server, db)
    assert [str(d) for d in report.divergences] == [
        f"cursor account: pts/qts/seq {state.pts + 1}/{state.qts}/{state.seq}"
        f" != server {state.pts}/{state.qts}/{state.seq}",
        f"cursor peer {channel.peer}: channel pts {channel_pts - 1} != server {channel_pts}",
    ]
    assert report_without_cursor(server, db).ok


def report_without_cursor(server: EmbeddedServer, db: Path) -> Report:
    async def run() -> Report:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        postbox = Postbox(db)
        try:
            await connection.call(Auth(TOKEN))
            return await verify(postbox, connection.call, cursor=False)
        finally:
            postbox.close()
            await connection.close()

    return asyncio.run(run())


def test_a_wrong_shared_media_count(server: EmbeddedServer, db: Path) -> None:
    profile = PeerId(profile_peer(server))
    tag = int(MessageTags.PHOTO)

    def miscount(tx: Transaction) -> None:
        summary = tx.get_tag_summary(profile, tag, CLOUD)
        assert summary is not None
        tx.replace_tag_summary(profile, tag, CLOUD, summary.count + 1, summary.max_id)

    tamper(db, miscount)
    report = check(server, db)
    assert categories(report) == {Category.TAG_SUMMARIES}
    assert len(report.divergences) == 1
    assert report.divergences[0].what.startswith("photo count ")


def test_pending_outbound(server: EmbeddedServer, db: Path) -> None:
    top = root_unpinned(server)[0].peer
    newest = history(server, top)[0].date
    tamper(db, lambda tx: enqueue_send(tx, PeerId(top), "on its way", timestamp=newest + 60))
    tamper(db, lambda tx: tx.add_operation_log_entry(PeerId(top), EDIT_TAG, {"id": 1, "text": "x"}))
    report = check(server, db)
    assert categories(report) == {Category.PENDING}
    whats = [d.what for d in report.divergences]
    assert len(whats) == 3
    assert whats[0].startswith("local message ") and whats[0].endswith(" is still unsent")
    assert "send operation" in whats[1] and "edit operation" in whats[2]


def _fail(peer: PeerId, random_id: int, timestamp: int) -> Callable[[Transaction], object]:
    """A send to ``peer`` the server refused: failed here, with the request it went with."""

    def fail(tx: Transaction) -> None:
        message_id = enqueue_send(tx, peer, "refused", timestamp=timestamp, random_id=random_id)
        [entry] = tx.get_operation_log_entries(peer, SEND_TAG)
        tx.remove_operation_log_entry(peer, SEND_TAG, entry.tag_local_index)
        refused = MessageFailure("CHAT_WRITE_FORBIDDEN", "only admins post", entry.contents)
        assert tx.mark_message_failed(message_id, refused)

    return fail


def test_a_failed_message_is_the_clients_own(server: EmbeddedServer, db: Path) -> None:
    top = root_unpinned(server)[0].peer
    tamper(db, _fail(PeerId(top), 4242, history(server, top)[0].date + 60))
    report = check(server, db)
    assert report.ok, report.divergences
    assert report.failed_messages == report.summary()["failed_messages"] == 1


def test_a_failed_message_moves_its_chat_up_here_alone(server: EmbeddedServer, db: Path) -> None:
    """As on Telegram, the chat stands where its failed message puts it (at the top)."""
    chats = root_unpinned(server)
    oldest = chats[-1].peer
    tamper(db, _fail(PeerId(oldest), 4242, history(server, chats[0].peer)[0].date + 60))
    report = check(server, db)
    assert report.ok, report.divergences
    assert report.failed_messages == 1


def test_a_failed_message_the_server_stored_after_all(server: EmbeddedServer, db: Path) -> None:
    top = root_unpinned(server)[0].peer
    tamper(db, _fail(PeerId(top), 4242, history(server, top)[0].date + 60))
    asked: list[GetSentMessages] = []

    def stored_after_all(params: object) -> SentMessageIds | None:
        if not isinstance(params, GetSentMessages):
            return None
        asked.append(params)
        return SentMessageIds(tuple(SentMessageId(r, top, 77) for r in params.random_ids))

    report = report_for(server, TOKEN, db, stored_after_all)
    assert [a.random_ids for a in asked] == [(4242,)]
    assert categories(report) == {Category.PENDING}
    [divergence] = report.divergences
    assert divergence.what == (
        f"local message 1 failed here, but the server stored it as message 77 in chat {top}"
    )


def test_a_failed_send_lists_a_chat_the_server_does_not_have(tmp_path: Path) -> None:
    """As on Telegram, a chat written to stays listed with the send that failed, though
    the server has no chat with the peer (here every message of it was deleted)."""
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=4, messages=40, seed=3)) as server:
        user = next(
            d.peer for d in dialogs(server) if peer_kind(d.peer) is PeerKind.USER and not d.pinned
        )

        def empty_the_chat(s: MockServer) -> WirePeer | None:
            store = s.service.store
            store.delete_messages(user, [m.id for m in store.recent_messages(user, 10**6)])
            return store.peer(user)

        wire_peer = server.call(empty_the_chat)
        assert wire_peer is not None
        db = tmp_path / "client.db"
        mirror(server, TOKEN, db)
        tamper(db, lambda tx: tx.update_peers([peer_from_wire(wire_peer)]))
        tamper(db, _fail(PeerId(user), 4242, 1_700_000_000))
        report = check(server, db)
    assert report.ok, report.divergences
    assert report.failed_messages == 1
