"""The events the demo's tour makes happen (``sync.server.stage``), against a syncing
client on loopback: each reaches the client as the real server's would, and the client
ends equal to its account by ``verify``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.account import Account
from postbox import MessageNamespace, PeerId
from sync.protocol import PeerKind, peer_kind
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from sync.server.store import StoreError
from tests.client.account_helpers import synced_as, verify_agrees_for, wait_until

TOKEN = "stage"
CLOUD = MessageNamespace.CLOUD


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=4)) as running:
        yield running


def people(server: EmbeddedServer) -> list[int]:
    """The primary account's private chats with people, busiest first."""

    def find(s) -> list[int]:
        store = s.service.store
        chats = sorted(store.chat_sizes(), key=lambda chat: -chat[1])
        return [
            peer
            for peer, _ in chats
            if peer_kind(peer) is PeerKind.USER
            and (found := store.peer(peer)) is not None
            and not found.flags & 2
        ]

    return server.call(find)


def stored(account: Account, peer: int, ids: list[int]) -> bool:
    messages = account.postbox.run(lambda tx: tx.get_messages(PeerId(peer), CLOUD))
    return set(ids) <= {m.id.id for m in messages}


def counter(account: Account, name: str) -> int:
    """One of the engine's counters, read on the engine's thread (as ``wait_until``'s
    predicates run there) or from another one."""
    engine = account.worker.engine
    assert engine is not None
    return engine.status().counters[name]


def unread(account: Account, peer: int) -> int:
    state = account.postbox.run(lambda tx: tx.get_read_state(PeerId(peer)))
    found = None if state is None else state.get(CLOUD)
    return 0 if found is None else found.count


def test_each_stage_event_reaches_the_client_as_the_server_would_send_it(
    server, tmp_path, capsys
) -> None:
    open_chat, other, *_ = people(server)
    db = tmp_path / "c.db"
    with synced_as(server, db, TOKEN, open_chat, other) as account:
        # A contact writes: pushed, stored at once.
        said = server.call(lambda s: s.stage.say(open_chat))
        assert said is not None
        wait_until(account, lambda: stored(account, open_chat, [said]))
        # A message and then a read on another device: the badge comes and goes.
        server.call(lambda s: s.stage.say(other))
        wait_until(account, lambda: unread(account, other) >= 1)
        assert server.call(lambda s: s.stage.read_elsewhere(other))
        wait_until(account, lambda: unread(account, other) == 0)
        # Messages while the connection is down arrive by getDifference.
        differences = counter(account, "differences")
        missed = server.call(lambda s: s.stage.drop_connections(open_chat, 3))
        assert len(missed) == 3
        wait_until(account, lambda: stored(account, open_chat, missed))
        assert counter(account, "differences") > differences
        # Too long: the histories become holes, and the open ones fill on demand.
        assert counter(account, "too_long") == 0
        late = server.call(lambda s: s.stage.too_long(open_chat, 4))
        assert len(late) == 4
        wait_until(account, lambda: counter(account, "too_long") == 1)
        wait_until(account, lambda: stored(account, open_chat, late))
        assert account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    verify_agrees_for(server, db, TOKEN, capsys)


def test_a_channel_posts_and_an_unknown_chat_is_refused(server) -> None:
    def channel(s: MockServer) -> int:
        chats = s.service.store.chat_sizes()
        return next(p for p, _ in chats if peer_kind(p) is PeerKind.CHANNEL)

    posted = server.call(lambda s: s.stage.say(channel(s)))
    newest = server.call(lambda s: s.service.store.recent_messages(channel(s), 1)[0])
    assert (newest.id, newest.author) == (posted, newest.peer)
    me = server.call(lambda s: s.service.store.self_id)
    with pytest.raises(StoreError, match="no chat"):
        server.call(lambda s: s.stage.say(me))
