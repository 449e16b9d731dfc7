"""A client database belongs to the account that first authorized on it.

Synced with another account's token, the engine refuses before anything is sent: the
database, its cursor and its unsent messages stay as they were, and a message the first
account queued never goes out as the second.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from postbox import MessageFlags, PeerId, PeerNamespace, Postbox, PostboxError
from sync.engine import AccountMismatchError, AuthorizationError, SyncEngine, enqueue_send
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.simulation.user import queue_unchecked
from tests.sync.engine_helpers import FAST, TOKEN, running_engine, wait_quiescent

QUEUED = "queued by the first account"


def contact_of(server: EmbeddedServer) -> int:
    """A user with a private chat with the owner (an account of its own)."""

    def find(s: MockServer) -> int:
        people = {user for user, _ in s.service.accounts.users()[1:]}
        chats = [peer for peer, _ in s.service.store.chat_sizes()]
        return next(p for p in chats if p in people and p >> 56 == PeerNamespace.USER)

    found: int = server.call(find)
    return found


def texts_on_server(server: EmbeddedServer, account: int, peer: int) -> list[str]:
    return server.call(
        lambda s: [m.text for m in s.service.accounts.box(account).recent_messages(peer, 50)]
    )


def test_another_accounts_token_is_refused_before_anything_is_sent(tmp_path) -> None:
    db = tmp_path / "c.db"
    config = ServerConfig(token=TOKEN, peers=15, messages=400, seed=4)
    with EmbeddedServer(config) as server:
        owner = server.call(lambda s: s.service.store.self_id)
        contact = contact_of(server)
        contact_token = server.call(lambda s: s.service.accounts.token_for(contact))

        async def first_sync() -> None:
            async with running_engine(server, db) as (engine, _postbox):
                await wait_quiescent(engine)

        asyncio.run(first_sync())
        with Postbox(db) as postbox:
            local_id = postbox.run(
                lambda tx: enqueue_send(tx, PeerId(contact), QUEUED, timestamp=int(time.time()))
            )
            cursor = postbox.run(lambda tx: tx.get_state())

        async def other_account() -> BaseException | None:
            with Postbox(db) as postbox:
                engine = SyncEngine(postbox, "127.0.0.1", server.port, contact_token, timeouts=FAST)
                task = asyncio.create_task(engine.run())
                try:
                    connected = asyncio.create_task(engine.wait_for(lambda: engine.connected, 10))
                    await asyncio.wait({task, connected}, return_when=asyncio.FIRST_COMPLETED)
                    connected.cancel()
                    assert not engine.connected, "connected as another account"
                    assert engine.status().connection == "another account's database"
                    return task.exception()
                finally:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, AuthorizationError):
                        await task

        error = asyncio.run(other_account())
        assert isinstance(error, AccountMismatchError)
        assert (error.stored, error.authorized) == (owner, contact)
        assert str(error).count("\n") == 0
        with Postbox(db) as postbox:
            assert postbox.run(lambda tx: tx.get_preference("account.peer_id")) == owner
            assert postbox.run(lambda tx: tx.get_state()) == cursor
            pending = postbox.run(lambda tx: tx.get_message(local_id))
            assert pending is not None and pending.flags & MessageFlags.UNSENT
        assert QUEUED not in texts_on_server(server, contact, owner)
        assert QUEUED not in texts_on_server(server, owner, contact)

        # The right account then sends it, once, as itself.
        async def owner_again() -> None:
            async with running_engine(server, db) as (engine, postbox):
                await engine.wait_for(
                    lambda: postbox.run(lambda tx: tx.get_message(local_id)) is None
                )

        asyncio.run(owner_again())
        assert texts_on_server(server, owner, contact).count(QUEUED) == 1


@pytest.mark.parametrize("first", ["owner", "contact"])
def test_the_first_account_to_authorize_binds_a_new_database(tmp_path, first) -> None:
    config = ServerConfig(token=TOKEN, peers=15, messages=200, seed=4)
    with EmbeddedServer(config) as server:
        contact = contact_of(server)
        owner = server.call(lambda s: s.service.store.self_id)
        token = TOKEN if first == "owner" else server.call(
            lambda s: s.service.accounts.token_for(contact)
        )  # fmt: skip

        async def run() -> None:
            with Postbox(tmp_path / "c.db") as postbox:
                engine = SyncEngine(postbox, "127.0.0.1", server.port, token, timeouts=FAST)
                task = asyncio.create_task(engine.run())
                try:
                    await engine.wait_for(lambda: engine.connected, 10)
                finally:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

        asyncio.run(run())
        with Postbox(tmp_path / "c.db") as postbox:
            bound = postbox.run(lambda tx: tx.get_preference("account.peer_id"))
        assert bound == (owner if first == "owner" else contact)


def test_a_database_that_cannot_be_bound_is_not_used_until_it_is(tmp_path, monkeypatch) -> None:
    """A new database whose binding fails (the disk full) does not sync unbound: the
    engine connects again later and binds it then."""
    config = ServerConfig(token=TOKEN, peers=5, messages=50, seed=4)

    async def fixed_device(_engine: SyncEngine) -> int:
        return 7  # no transaction: the first commit is the binding

    monkeypatch.setattr(SyncEngine, "_device_id", fixed_device)
    with EmbeddedServer(config) as server, Postbox(tmp_path / "c.db") as postbox:
        failures = [PostboxError("database or disk is full")]

        def fail_once() -> None:
            if failures:
                raise failures.pop()

        postbox.before_commit = fail_once

        async def run() -> None:
            engine = SyncEngine(postbox, "127.0.0.1", server.port, TOKEN, timeouts=FAST)
            task = asyncio.create_task(engine.run())
            try:
                await engine.wait_for(lambda: engine.connected, 10)
                assert engine.connections == 1 and engine.connection_attempts == 2
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

        asyncio.run(run())
        owner = server.call(lambda s: s.service.store.self_id)
        assert postbox.run(lambda tx: tx.get_preference("account.peer_id")) == owner


def test_another_accounts_token_leaves_a_malformed_send_in_the_queue(tmp_path) -> None:
    """A queued send no request can carry is given up only once the token's account is
    known to own the database: another account's token leaves it unsent."""
    db = tmp_path / "c.db"
    config = ServerConfig(token=TOKEN, peers=15, messages=200, seed=4)
    with EmbeddedServer(config) as server:
        contact = contact_of(server)
        contact_token = server.call(lambda s: s.service.accounts.token_for(contact))

        async def first_sync() -> None:
            async with running_engine(server, db) as (engine, _postbox):
                await wait_quiescent(engine)

        asyncio.run(first_sync())
        with Postbox(db) as postbox:
            contents = {"random_id": 5, "text": 7, "reply_to": None}  # text not a string
            local_id = postbox.run(
                lambda tx: queue_unchecked(
                    tx, PeerId(contact), "7", contents, timestamp=int(time.time())
                )
            )

        async def other_account() -> None:
            with Postbox(db) as postbox:
                engine = SyncEngine(postbox, "127.0.0.1", server.port, contact_token, timeouts=FAST)
                with pytest.raises(AccountMismatchError):
                    await asyncio.wait_for(engine.run(), 10)

        asyncio.run(other_account())
        with Postbox(db) as postbox:
            assert postbox.run(lambda tx: tx.get_failed_message_ids()) == []
            assert postbox.run(lambda tx: list(tx.get_unsent_message_ids())) == [local_id]
