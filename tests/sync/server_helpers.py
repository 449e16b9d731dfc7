"""Building a server store and service without sockets, and reading its truth back."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from dataset import generate_dataset
from sync.protocol import (
    AnyUpdates,
    Auth,
    DeleteMessages,
    EditMessage,
    Message,
    PeerKind,
    ReadHistory,
    Request,
    SendMessage,
    peer_kind,
)
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
from sync.server.service import Service, Session
from sync.server.store import ServerStore

NOW = 1_800_000_000
TOKEN = "t"


@dataclass
class Harness:
    store: ServerStore
    service: Service
    session: Session
    pushes: list[tuple[AnyUpdates, Session | None]] = field(default_factory=list)
    _request_ids: int = 0

    def call(self, params: Any) -> Any:
        self._request_ids += 1
        return self.service.handle(self.session, Request(self._request_ids, "", params))


def make_harness(
    seed: int = 7, peers: int = 12, messages: int = 300, log_window: int = 10_000
) -> Harness:
    """A fresh account; its clock ticks one second each time the server reads it."""
    ticks = itertools.count(NOW)
    store = ServerStore(clock=lambda: next(ticks), log_window=log_window)
    store.import_dataset(generate_dataset(seed, peers, messages, 30))
    pushes: list[tuple[AnyUpdates, Session | None]] = []

    def publish(_account: int, updates: list[AnyUpdates], exclude: Session | None) -> None:
        pushes.extend((u, exclude) for u in updates)

    service = Service(store, token=TOKEN, seed=seed, publish=publish)
    session = Session(1, FaultInjector.for_connection(FaultConfig(), seed, 1))
    harness = Harness(store, service, session, pushes)
    harness.call(Auth(TOKEN))
    return harness


@dataclass(frozen=True)
class Truth:
    """The server's messages and read marks, split into the account's part and channels'."""

    messages: dict[tuple[int, int], Message]
    read_marks: dict[int, tuple[int, int]]
    pts: int
    channel_pts: dict[int, int]
    date: int
    qts: int = 0

    def account_part(self) -> tuple[dict[tuple[int, int], Message], dict[int, tuple[int, int]]]:
        return (
            {k: m for k, m in self.messages.items() if not _is_channel(k[0])},
            {p: r for p, r in self.read_marks.items() if not _is_channel(p)},
        )

    def channel_part(self, channel: int) -> tuple[dict[tuple[int, int], Message], int]:
        return (
            {k: m for k, m in self.messages.items() if k[0] == channel},
            self.read_marks[channel][0],
        )


def _is_channel(peer_id: int) -> bool:
    return peer_kind(peer_id) is PeerKind.CHANNEL


def truth(store: ServerStore) -> Truth:
    messages: dict[tuple[int, int], Message] = {}
    read_marks: dict[int, tuple[int, int]] = {}
    channel_pts: dict[int, int] = {}
    for peer_id, _count in store.chat_sizes():
        for message in store.recent_messages(peer_id, 10**9):
            messages[(peer_id, message.id)] = message
        read_marks[peer_id] = store.read_marks(peer_id)
        if _is_channel(peer_id):
            channel_pts[peer_id] = store.dialog(peer_id).pts or 0
    state = store.state()
    return Truth(messages, read_marks, state.pts, channel_pts, state.date, state.qts)


def random_action(harness: Harness, rng: random.Random) -> None:
    """One change: generated traffic mostly, and now and then this account's own actions."""
    roll = rng.random()
    store = harness.store
    # Secret chats take sends only: their messages are not edited or deleted, and a read
    # of one concerns this device alone (no update carries it).
    chats = [p for p, _ in store.chat_sizes() if peer_kind(p) in (PeerKind.USER, PeerKind.GROUP)]
    secret = [p for p, _ in store.chat_sizes() if peer_kind(p) is PeerKind.SECRET]
    everything = [p for p, _ in store.chat_sizes() if peer_kind(p) is not PeerKind.SECRET]
    if roll < 0.6:
        harness.service.generate(1)
    elif roll < 0.72:
        harness.call(
            SendMessage(rng.choice(chats + secret), f"note {rng.random():.6f}", rng.getrandbits(62))
        )
    elif roll < 0.8:
        peer_id = rng.choice(chats)
        own = [m.id for m in store.recent_messages(peer_id, 20) if m.out]
        if own:
            harness.call(EditMessage(peer_id, rng.choice(own), f"edited {rng.random():.6f}"))
    elif roll < 0.88:
        peer_id = rng.choice(chats)
        recent = [m.id for m in store.recent_messages(peer_id, 5)]
        if recent:
            harness.call(DeleteMessages(peer_id, tuple(rng.sample(recent, min(2, len(recent))))))
    else:
        peer_id = rng.choice(everything)
        recent = [m.id for m in store.recent_messages(peer_id, 10)]
        if recent:
            harness.call(ReadHistory(peer_id, rng.choice(recent)))
