"""Message actions end to end: an account against the real server on loopback, and a
second device of the same account watching.

Each action is written locally first and delivered through the outbound queue; what is
checked is what the server then stores, what the other device receives, and that
``verify`` finds both databases equal to the server.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import postbox
from client.account import Account
from postbox import (
    ForwardInfo,
    MessageFlags,
    MessageId,
    MessageNamespace,
    PeerId,
    PeerNamespace,
    Transaction,
)
from sync.protocol import ForwardHeader, Message, PeerKind, peer_kind
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.client.account_helpers import synced_as, verify_agrees_for, wait_until
from tests.sync.engine_helpers import FAST

TOKEN = "actions"
CLOUD = int(MessageNamespace.CLOUD)


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=11)) as running:
        yield running


def synced(
    server: EmbeddedServer, db: Path, *chats: int
) -> contextlib.AbstractContextManager[Account]:
    return synced_as(server, db, TOKEN, *chats)


@contextlib.contextmanager
def held(server: EmbeddedServer) -> Iterator[None]:
    """The server's loop is kept busy: it answers nothing until the block ends."""
    gate = threading.Event()
    started = threading.Event()

    def hold(_server: object) -> None:
        started.set()
        gate.wait(30)

    holder = threading.Thread(target=lambda: server.call(hold))
    holder.start()
    started.wait(30)
    try:
        yield
    finally:
        gate.set()
        holder.join()


def chat_of(server: EmbeddedServer, kind: PeerKind) -> int:
    """The busiest chat of a kind."""
    sizes = server.call(lambda s: s.service.store.chat_sizes())
    return max((n, p) for p, n in sizes if peer_kind(p) is kind)[1]


def newest(server: EmbeddedServer, peer: int, count: int = 1) -> list[Message]:
    return server.call(lambda s: s.service.store.recent_messages(peer, count))


def stored(account: Account, peer: int, id_: int) -> postbox.Message | None:
    return account.postbox.run(lambda tx: tx.get_message(MessageId(PeerId(peer), CLOUD, id_)))


def verify_agrees(server: EmbeddedServer, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verify_agrees_for(server, db, TOKEN, capsys)


def test_a_reply_carries_its_reference_to_the_server(server, tmp_path, capsys) -> None:
    user = chat_of(server, PeerKind.USER)
    answered = newest(server, user, 3)[-1]
    with synced(server, tmp_path / "a.db", user) as account:
        account.send_message(PeerId(user), "about that", reply_to=answered.id).result()
        wait_until(account, lambda: newest(server, user)[0].text == "about that")
        assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    top = newest(server, user)[0]
    assert top.reply_to == answered.id and top.out
    verify_agrees(server, tmp_path / "a.db", capsys)


def test_delete_for_everyone_leaves_the_server_and_the_other_device(
    server, tmp_path, capsys
) -> None:
    group = chat_of(server, PeerKind.GROUP)
    target = newest(server, group)[0]
    with (
        synced(server, tmp_path / "a.db", group) as here,
        synced(server, tmp_path / "b.db", group) as there,
    ):
        assert stored(there, group, target.id) is not None
        gone = here.delete_messages(PeerId(group), [MessageId(PeerId(group), CLOUD, target.id)])
        assert gone.result() == 1
        assert stored(here, group, target.id) is None  # at once, before the server answers
        wait_until(there, lambda: stored(there, group, target.id) is None)
        assert server.call(lambda s: s.service.store.message(group, target.id)) is None
        for account in (here, there):
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    verify_agrees(server, tmp_path / "a.db", capsys)
    verify_agrees(server, tmp_path / "b.db", capsys)


def test_a_forward_appears_in_the_target_chat_saying_where_it_came_from(
    server, tmp_path, capsys
) -> None:
    channel = chat_of(server, PeerKind.CHANNEL)
    group = chat_of(server, PeerKind.GROUP)
    user = chat_of(server, PeerKind.USER)
    post = newest(server, channel)[0]
    said = next(m for m in newest(server, group, 10) if not m.out and m.author is not None)
    assert said.author is not None
    with (
        synced(server, tmp_path / "a.db", channel, group, user) as here,
        synced(server, tmp_path / "b.db", user) as there,
    ):
        sources = [
            MessageId(PeerId(channel), CLOUD, post.id),
            MessageId(PeerId(group), CLOUD, said.id),
        ]
        assert all(
            here.postbox.run(functools.partial(Transaction.get_message, message_id=s))
            for s in sources
        )
        with held(server):  # the copies stay pending while they are looked at
            pending = here.forward_messages(PeerId(user), sources[:1]).result()
            pending += here.forward_messages(PeerId(user), sources[1:]).result()
            assert len(pending) == 2
            copy = here.postbox.run(lambda tx: tx.get_message(pending[0]))
            assert copy is not None and copy.flags & MessageFlags.UNSENT
            assert copy.forward_info == ForwardInfo(channel, post.date, channel, post.id)

        def arrived() -> bool:
            top = newest(server, user, 2)
            return [m.forward is not None for m in top] == [True, True]

        wait_until(here, arrived)
        second, first = newest(server, user, 2)
        assert first.forward == ForwardHeader(channel, post.date, channel, post.id)
        assert (first.text, first.media) == (post.text, post.media)
        assert second.forward == ForwardHeader(said.author, said.date)
        assert second.out and second.id > first.id
        # Here the pending copies became the server's; the other device got them pushed.
        for account in (here, there):

            def second_arrived(a: Account = account) -> bool:
                return stored(a, user, second.id) is not None

            wait_until(account, second_arrived)
            message = stored(account, user, first.id)
            assert message is not None and message.forward_info == copy.forward_info
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
        assert here.postbox.run(lambda tx: [tx.get_message(p) for p in pending]) == [None, None]
    verify_agrees(server, tmp_path / "a.db", capsys)
    verify_agrees(server, tmp_path / "b.db", capsys)


def forward_offline(server: EmbeddedServer, db: Path) -> tuple[int, int, Message, MessageId]:
    """Sync ``db`` once with the busiest group open, then, not syncing, forward the group's
    newest message to the busiest private chat. The group, the chat, the source message
    and the pending copy's id."""
    group = chat_of(server, PeerKind.GROUP)
    user = chat_of(server, PeerKind.USER)
    with synced(server, db, group):
        pass
    source = newest(server, group)[0]
    offline = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST)  # not syncing
    try:
        (pending,) = offline.forward_messages(
            PeerId(user), [MessageId(PeerId(group), CLOUD, source.id)]
        ).result()
    finally:
        offline.close()
    return group, user, source, pending


def test_a_forward_made_offline_is_delivered_once_after_a_restart(server, tmp_path, capsys) -> None:
    db = tmp_path / "a.db"
    group, user, source, _pending = forward_offline(server, db)
    before = server.call(lambda s: s.service.store.message_count(user))
    assert server.call(lambda s: s.service.store.message_count(user)) == before
    with synced(server, db, user) as account:
        wait_until(
            account, lambda: server.call(lambda s: s.service.store.message_count(user)) > before
        )
        assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    assert server.call(lambda s: s.service.store.message_count(user)) == before + 1
    assert newest(server, user)[0].forward is not None
    verify_agrees(server, db, capsys)


def test_secret_chats_take_no_forwards_and_forwards_take_no_edits(server, tmp_path) -> None:
    group = chat_of(server, PeerKind.GROUP)
    user = chat_of(server, PeerKind.USER)
    source = MessageId(PeerId(group), CLOUD, newest(server, group)[0].id)
    secret = PeerId.make(PeerNamespace.SECRET_CHAT, 1)
    with synced(server, tmp_path / "a.db", group) as account:
        with pytest.raises(ValueError, match="secret chats"):
            account.forward_messages(secret, [source]).result()
        (pending,) = account.forward_messages(PeerId(user), [source]).result()
        wait_until(account, lambda: account.postbox.run(lambda tx: tx.get_message(pending)) is None)
        copy = newest(server, user)[0]
        assert copy.forward is not None
        edited = account.edit_message(MessageId(PeerId(user), CLOUD, copy.id), "changed")
        assert edited.result() is False


def test_a_forward_whose_source_is_deleted_first_is_dropped(server, tmp_path, capsys) -> None:
    db = tmp_path / "a.db"
    group, user, source, pending = forward_offline(server, db)
    before = server.call(lambda s: s.service.store.message_count(user))
    server.call(lambda s: s.service.store.delete_messages(group, (source.id,)))
    with synced(server, db, user, group) as account:
        wait_until(account, lambda: account.postbox.run(lambda tx: tx.get_message(pending)) is None)
        status = account.status()
        assert status is not None and status.counters["given_up"] == 1
    assert server.call(lambda s: s.service.store.message_count(user)) == before
    verify_agrees(server, db, capsys)


def test_a_post_refused_for_good_fails_and_can_be_retried_or_deleted(
    server, tmp_path, capsys
) -> None:
    channel = PeerId(chat_of(server, PeerKind.CHANNEL))
    user = chat_of(server, PeerKind.USER)

    def failure_of(account: Account, message_id: MessageId) -> postbox.MessageFailure | None:
        return account.postbox.run(lambda tx: tx.get_message_failure(message_id))

    with synced(server, tmp_path / "a.db", int(channel), user) as account:
        kept = account.send_message(channel, "kept, failed").result()
        dropped = account.send_message(channel, "dropped").result()
        account.send_message(PeerId(user), "after them").result()
        wait_until(account, lambda: failure_of(account, dropped) is not None)
        wait_until(account, lambda: newest(server, user)[0].text == "after them")
        first = failure_of(account, kept)
        assert first is not None and first.code == "CHAT_WRITE_FORBIDDEN"
        assert account.retry_messages([kept, MessageId(channel, 1, 999)]).result() == 1
        wait_until(account, lambda: failure_of(account, kept) is not None)
        again = failure_of(account, kept)
        assert again is not None and again.request == first.request  # the same random id
        assert account.delete_messages(channel, [dropped]).result() == 1
        assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    with synced(server, tmp_path / "a.db") as account:  # after a restart: still failed
        assert account.postbox.run(lambda tx: tx.get_failed_messages(channel)) == [(kept, again)]
    assert "kept, failed" not in [m.text for m in newest(server, int(channel), 5)]
    verify_agrees(server, tmp_path / "a.db", capsys)
