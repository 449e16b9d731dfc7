"""Two accounts talking through the real server on loopback, and two devices of one.

The primary account is the dataset's owner; the other is one of its contacts, logging in
with the token the server derives for it. What one writes, edits, deletes or reads
reaches the other's box and, pushed, the other's database; ``verify`` finds every
database equal to its own account's truth (checked while the clients are connected: an
account's presence, as the others see it, follows its connections).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import postbox
from client import MAX_MESSAGE_LENGTH
from client.account import Account
from client.status_line import status_line
from postbox import (
    MessageNamespace,
    PeerId,
    PeerReadState,
    PresenceStatus,
)
from sync.engine import AccountMismatchError, enqueue_send
from sync.protocol import PeerKind, peer_kind
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer
from tests.client.account_helpers import synced_as as synced
from tests.client.account_helpers import verify_agrees_for, wait_until
from tests.sync.engine_helpers import FAST

TOKEN = "accounts"
CLOUD = int(MessageNamespace.CLOUD)


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=16, messages=400, seed=5)) as running:
        yield running


def contact_in_a_group(server: EmbeddedServer) -> tuple[int, int, int]:
    """(primary account, a user with a private chat with it who is also a member of one
    of its groups, that group)."""

    def find(s) -> tuple[int, int, int]:
        store = s.service.store
        chats = [peer for peer, _ in store.chat_sizes()]
        users = {p for p in chats if peer_kind(p) is PeerKind.USER}
        for group in (p for p in chats if peer_kind(p) is PeerKind.GROUP):
            for member in store.members(group):
                person = store.peer(member)
                if member in users and person is not None and not person.flags & 2:
                    return store.self_id, member, group
        raise AssertionError("the dataset has no contact in a group")

    return server.call(find)


def token_of(server: EmbeddedServer, user: int) -> str:
    return server.call(lambda s: s.service.accounts.token_for(user))


def history(account: Account, peer: int) -> list[postbox.Message]:
    return account.postbox.run(lambda tx: tx.get_messages(PeerId(peer), CLOUD))


def texts(account: Account, peer: int) -> list[str]:
    return [m.text for m in history(account, peer)]


def read_state(account: Account, peer: int) -> PeerReadState:
    state = account.postbox.run(lambda tx: tx.get_read_state(PeerId(peer)))
    found = None if state is None else state.get(CLOUD)
    return PeerReadState() if found is None else found


def read_outbox(account: Account, peer: int) -> int:
    return read_state(account, peer).max_outgoing_read_id


def unread(account: Account, peer: int) -> int:
    return read_state(account, peer).count


def verify_agrees(server: EmbeddedServer, db: Path, token: str, capsys) -> None:
    verify_agrees_for(server, db, token, capsys)


def test_a_send_reaches_the_other_account_and_its_read_comes_back(server, tmp_path, capsys) -> None:
    me, friend, _group = contact_in_a_group(server)
    friend_token = token_of(server, friend)
    with (
        synced(server, tmp_path / "a.db", TOKEN, friend) as alice,
        synced(server, tmp_path / "b.db", friend_token, me) as bob,
    ):
        assert bob.postbox.run(lambda tx: tx.get_preference("account.peer_id")) == friend
        alice.send_message(PeerId(friend), "hello from the other account").result()
        wait_until(bob, lambda: "hello from the other account" in texts(bob, me))
        arrived = next(m for m in history(bob, me) if m.text == "hello from the other account")
        assert arrived.flags & postbox.MessageFlags.INCOMING
        assert unread(bob, me) >= 1
        # Bob reads: Alice's message turns read on her side.
        bob.mark_read(PeerId(me), arrived.id.id).result()
        mine = next(m for m in history(alice, friend) if m.text == "hello from the other account")
        wait_until(alice, lambda: read_outbox(alice, friend) >= mine.id.id)
        wait_until(bob, lambda: unread(bob, me) == 0)
        # Bob answers; Alice receives it as incoming.
        bob.send_message(PeerId(me), "hi, got it").result()
        wait_until(alice, lambda: "hi, got it" in texts(alice, friend))
        for account in (alice, bob):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        verify_agrees(server, tmp_path / "a.db", TOKEN, capsys)
        verify_agrees(server, tmp_path / "b.db", friend_token, capsys)


def test_group_messages_edits_and_deletes_reach_every_member_account(
    server, tmp_path, capsys
) -> None:
    me, friend, group = contact_in_a_group(server)
    friend_token = token_of(server, friend)
    with (
        synced(server, tmp_path / "a.db", TOKEN, group) as alice,
        synced(server, tmp_path / "b.db", friend_token, group) as bob,
    ):
        bob.send_message(PeerId(group), "bob in the group").result()
        wait_until(alice, lambda: "bob in the group" in texts(alice, group))
        alice.send_message(PeerId(group), "alice in the group").result()
        wait_until(bob, lambda: "alice in the group" in texts(bob, group))
        theirs = next(m for m in history(bob, group) if m.text == "alice in the group")
        assert theirs.author_id == PeerId(me)
        assert alice.worker.call(lambda engine: engine.wait_idle(timeout=30))
        mine = next(m for m in history(alice, group) if m.text == "alice in the group")
        alice.edit_message(mine.id, "alice, edited").result()
        wait_until(bob, lambda: "alice, edited" in texts(bob, group))
        alice.delete_messages(PeerId(group), [mine.id]).result()
        wait_until(bob, lambda: "alice, edited" not in texts(bob, group))
        # Traffic from the other members reaches both accounts.
        server.call(lambda s: s.service.generate(60, "message"))
        for account in (alice, bob):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        verify_agrees(server, tmp_path / "a.db", TOKEN, capsys)
        verify_agrees(server, tmp_path / "b.db", friend_token, capsys)


def test_a_read_on_one_device_clears_the_badge_on_the_other(server, tmp_path, capsys) -> None:
    _me, friend, _group = contact_in_a_group(server)
    friend_token = token_of(server, friend)
    with (
        synced(server, tmp_path / "a.db", TOKEN, friend) as alice,
        synced(server, tmp_path / "b1.db", friend_token) as phone,
        synced(server, tmp_path / "b2.db", friend_token) as laptop,
    ):
        me = alice.postbox.run(lambda tx: tx.get_preference("account.peer_id"))
        alice.send_message(PeerId(friend), "are you there?").result()
        wait_until(phone, lambda: unread(phone, me) >= 1)
        wait_until(laptop, lambda: unread(laptop, me) >= 1)
        arrived = next(m for m in history(laptop, me) if m.text == "are you there?")
        laptop.mark_read(PeerId(me), arrived.id.id).result()
        wait_until(phone, lambda: unread(phone, me) == 0)
        # A send on one device arrives on the other as outgoing.
        phone.send_message(PeerId(me), "yes, on my phone").result()
        wait_until(laptop, lambda: "yes, on my phone" in texts(laptop, me))
        echoed = next(m for m in history(laptop, me) if m.text == "yes, on my phone")
        assert not echoed.flags & postbox.MessageFlags.INCOMING
        for account in (alice, phone, laptop):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        for db in ("b1.db", "b2.db"):
            verify_agrees(server, tmp_path / db, friend_token, capsys)
        verify_agrees(server, tmp_path / "a.db", TOKEN, capsys)


def test_a_wrong_token_for_another_user_is_refused(server) -> None:
    _me, friend, _group = contact_in_a_group(server)
    token = token_of(server, friend)
    assert server.call(lambda s: s.service.accounts.authorize(token)) == friend
    forged = token[:-1] + ("0" if token[-1] != "0" else "1")
    assert server.call(lambda s: s.service.accounts.authorize(forged)) is None
    assert server.call(lambda s: s.service.accounts.authorize(f"u{friend}")) is None


def test_a_database_opened_with_another_accounts_token_stops_and_sends_nothing(
    server, tmp_path
) -> None:
    me, friend, _group = contact_in_a_group(server)
    db = tmp_path / "a.db"
    with synced(server, db, TOKEN, friend):
        pass
    with postbox.Postbox(db) as offline:  # written offline: the message waits in the database
        offline.run(
            lambda tx: enqueue_send(tx, PeerId(friend), "alice's, never bob's", timestamp=1)
        )
    with Account(db, "127.0.0.1", server.port, token_of(server, friend), timeouts=FAST) as bob:
        assert bob.worker.join(timeout=30)
        assert isinstance(bob.worker.error, AccountMismatchError)
        line = status_line(bob.status_later().result())
        assert line.final and line.can_log_out
        assert line.text.startswith("This database belongs to another account")
    with postbox.Postbox(db) as after:
        assert after.run(lambda tx: tx.get_preference("account.peer_id")) == me
    boxes = server.call(
        lambda s: [
            m.text
            for account, peer in ((me, friend), (friend, me))
            for m in s.service.accounts.box(account).recent_messages(peer, 50)
        ]
    )
    assert "alice's, never bob's" not in boxes


def test_the_tokens_file_is_private_and_lists_every_person(tmp_path) -> None:
    tokens = tmp_path / "tokens.tsv"
    config = ServerConfig(token=TOKEN, peers=16, messages=100, seed=5, tokens_file=tokens)
    with EmbeddedServer(config) as server:
        lines = tokens.read_text(encoding="utf-8").splitlines()
        assert tokens.stat().st_mode & 0o077 == 0
        rows = [line.split("\t") for line in lines]
        assert rows[0][1] == TOKEN
        accounts = server.call(lambda s: s.service.accounts)
        for user, token, _name in rows:
            assert server.call(lambda _s: accounts.authorize(token)) == int(user)  # noqa: B023


def test_two_accounts_and_a_second_device_converge_under_faults(tmp_path, capsys) -> None:
    """Pushes dropped, doubled and reordered, answers lost: both accounts and both
    devices still end equal to their truth once the faults stop."""
    faults = FaultConfig(drop=0.2, duplicate=0.1, reorder=3, drop_response=0.05)
    config = ServerConfig(token=TOKEN, peers=16, messages=400, seed=5, faults=faults)
    with EmbeddedServer(config) as server:
        me, friend, group = contact_in_a_group(server)
        friend_token = token_of(server, friend)
        with (
            synced(server, tmp_path / "a.db", TOKEN, friend, group) as alice,
            synced(server, tmp_path / "b1.db", friend_token, me, group) as phone,
            synced(server, tmp_path / "b2.db", friend_token, group) as laptop,
        ):
            for round_ in range(4):
                alice.send_message(PeerId(friend), f"to bob {round_}")
                phone.send_message(PeerId(group), f"bob to the group {round_}")
                laptop.send_message(PeerId(me), f"bob from the laptop {round_}")
                server.call(lambda s: s.service.generate(25))
            server.call(lambda s: s.clear_faults())
            for account in (alice, phone, laptop):
                account.worker.call(lambda engine: engine.state_manager.request_poll("test"))
                assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
            laptop_chat = texts(laptop, me)
            assert all(f"to bob {n}" in laptop_chat for n in range(4))
            assert all(f"bob to the group {n}" in texts(alice, group) for n in range(4))
            verify_agrees(server, tmp_path / "a.db", TOKEN, capsys)
            for db in ("b1.db", "b2.db"):
                verify_agrees(server, tmp_path / db, friend_token, capsys)


def test_an_account_is_online_to_the_others_while_it_is_connected(server, tmp_path) -> None:
    me, friend, _group = contact_in_a_group(server)
    friend_token = token_of(server, friend)

    def status(account: Account) -> PresenceStatus | None:
        presence = account.postbox.run(lambda tx: tx.get_peer_presence(PeerId(me)))
        return None if presence is None else presence.status

    with synced(server, tmp_path / "b.db", friend_token, me) as bob:
        with synced(server, tmp_path / "a.db", TOKEN):
            wait_until(bob, lambda: status(bob) is PresenceStatus.ONLINE)
        wait_until(bob, lambda: status(bob) is PresenceStatus.OFFLINE)


def test_a_mute_on_one_device_reaches_the_other(server, tmp_path, capsys) -> None:
    me, friend, group = contact_in_a_group(server)
    friend_token = token_of(server, friend)

    def muted_until(account: Account, peer: int) -> int:
        settings = account.postbox.run(lambda tx: tx.get_notification_settings(PeerId(peer)))
        return 0 if settings is None else settings.muted_until

    with (
        synced(server, tmp_path / "b1.db", friend_token, me) as phone,
        synced(server, tmp_path / "b2.db", friend_token, me) as laptop,
    ):
        phone.set_muted(PeerId(group), True).result()
        wait_until(laptop, lambda: muted_until(laptop, group) > 0)
        laptop.set_muted(PeerId(group), False).result()
        wait_until(phone, lambda: muted_until(phone, group) == 0)
        for account in (phone, laptop):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        for db in ("b1.db", "b2.db"):
            verify_agrees(server, tmp_path / db, friend_token, capsys)


def test_a_draft_typed_on_one_device_is_waiting_on_the_other(server, tmp_path, capsys) -> None:
    me, friend, group = contact_in_a_group(server)
    friend_token = token_of(server, friend)

    def draft(account: Account, peer: int) -> tuple[str, int | None] | None:
        state = account.postbox.run(lambda tx: tx.get_chat_interface_state(PeerId(peer)))
        if state is None or state.draft is None:
            return None
        return state.draft.text, state.draft.reply_to_id

    with (
        synced(server, tmp_path / "b1.db", friend_token, me) as phone,
        synced(server, tmp_path / "b2.db", friend_token, me) as laptop,
    ):
        phone.save_draft(PeerId(group), "bring the maps").result()
        phone.save_draft(PeerId(me), "see you at 5", reply_to=None).result()
        wait_until(laptop, lambda: draft(laptop, group) == ("bring the maps", None))
        wait_until(laptop, lambda: draft(laptop, me) == ("see you at 5", None))
        # Changed on the laptop, cleared on the phone: the newest word stands everywhere.
        laptop.save_draft(PeerId(group), "bring the maps and a torch").result()
        wait_until(phone, lambda: draft(phone, group) == ("bring the maps and a torch", None))
        phone.save_draft(PeerId(me), "").result()
        wait_until(laptop, lambda: draft(laptop, me) is None)
        # Longer than a message may be: the server keeps its first 4,096 characters, the
        # phone the whole text (pasted, to be sent as several messages).
        long_draft = "word " * 1_000
        phone.save_draft(PeerId(me), long_draft).result()
        wait_until(laptop, lambda: draft(laptop, me) == (long_draft[:MAX_MESSAGE_LENGTH], None))
        for account in (phone, laptop):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        assert draft(phone, me) == (long_draft, None)
        for db in ("b1.db", "b2.db"):
            verify_agrees(server, tmp_path / db, friend_token, capsys)
    # A device that was away gets the drafts saved meanwhile from its difference.
    with synced(server, tmp_path / "b1.db", friend_token, me) as phone:
        phone.save_draft(PeerId(group), "").result()
        assert phone.worker.call(lambda engine: engine.wait_idle(timeout=30))
    with synced(server, tmp_path / "b2.db", friend_token, me) as laptop:
        wait_until(laptop, lambda: draft(laptop, group) is None)
        assert laptop.worker.call(lambda engine: engine.wait_idle(timeout=30))
        verify_agrees(server, tmp_path / "b2.db", friend_token, capsys)
