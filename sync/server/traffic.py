"""Simulated traffic: what the account's contacts, groups and channels do while we watch.

Each ``step`` makes one event, chosen with fixed weights: a new message in a private
chat or group (busy chats far more often than quiet ones), a channel post, an edit or a
deletion of a recent message, the other side reading our messages, a presence change,
or a rename. Every choice comes from a ``random.Random`` seeded with the server's seed
and reads only the store, so the same seed and the same requests give the same events.
"""

from __future__ import annotations

import bisect
import itertools
import random

from sync.protocol import (
    AnyUpdates,
    Media,
    MediaKind,
    PeerKind,
    PresenceStatus,
    Updates,
    UpdateUserStatus,
    peer_kind,
)
from sync.server.generator import message_content
from sync.server.pushes import push_for
from sync.server.store import ServerStore

__all__ = ["EVENT_WEIGHTS", "Traffic"]

#: Relative frequency of each kind of event.
EVENT_WEIGHTS = {
    "message": 45,
    "channel_post": 15,
    "edit": 5,
    "delete": 3,
    "read_outbox": 10,
    "presence": 20,
    "rename": 2,
}
_MEDIA_KINDS = ("photo", "video", "file", "voice", "link")
_RENAME_SUFFIXES = (" 🎉", " (new)", " ✈️", " 2.0", " 🏠")
#: How far back edits and deletions reach.
_RECENT = 10


class Traffic:
    """Makes events against ``store``; each ``step`` returns the pushes it caused."""

    def __init__(self, store: ServerStore, seed: int) -> None:
        self.store = store
        self.rng = random.Random(f"traffic:{seed}")
        self._media_ids = itertools.count(self.rng.getrandbits(40) + 1)
        self._kinds = list(EVENT_WEIGHTS)
        self._kind_weights = list(itertools.accumulate(EVENT_WEIGHTS.values()))
        chats: list[int] = []
        channels: list[int] = []
        chat_weights: list[float] = []
        channel_weights: list[float] = []
        for peer_id, count in store.chat_sizes():
            if peer_kind(peer_id) is PeerKind.CHANNEL:
                channels.append(peer_id)
                channel_weights.append(count + 1.0)
            else:
                chats.append(peer_id)
                chat_weights.append(count + 1.0)
        self._chats = chats
        self._chat_weights = list(itertools.accumulate(chat_weights))
        self._channels = channels
        self._channel_weights = list(itertools.accumulate(channel_weights))
        self._users = [peer for peer in chats if peer_kind(peer) is PeerKind.USER]
        self.events = 0

    def _pick(self, items: list[int], cumulative: list[float]) -> int | None:
        if not items:
            return None
        index = bisect.bisect(cumulative, self.rng.random() * cumulative[-1])
        return items[min(index, len(items) - 1)]

    def step(self) -> list[AnyUpdates]:
        """Make one event; the pushes to send to every connection (maybe none)."""
        self.events += 1
        roll = self.rng.random() * self._kind_weights[-1]
        kind = self._kinds[bisect.bisect(self._kind_weights, roll)]
        handler = getattr(self, f"_{kind}")
        pushes: list[AnyUpdates] = handler()
        return pushes

    def _content(self, peer_id: int) -> tuple[str, tuple[Media, ...]]:
        namespace = int(peer_kind(peer_id) or PeerKind.USER)
        text, media = message_content(self.rng, namespace, next(self._media_ids))
        wire = tuple(
            Media(MediaKind(_MEDIA_KINDS[int(m.kind)]), m.id, m.size, m.url, m.title) for m in media
        )
        return text, wire

    def _message(self) -> list[AnyUpdates]:
        peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None:
            return []
        author: int = peer_id
        if peer_kind(peer_id) is PeerKind.GROUP:
            members = self.store.members(peer_id)
            if not members:
                return []
            author = self.rng.choice(members)
        text, media = self._content(peer_id)
        update = self.store.add_message(peer_id, out=False, author=author, text=text, media=media)
        return [push_for(self.store, update)]

    def _channel_post(self) -> list[AnyUpdates]:
        channel = self._pick(self._channels, self._channel_weights)
        if channel is None:
            return []
        text, media = self._content(channel)
        update = self.store.add_message(channel, out=False, author=channel, text=text, media=media)
        return [push_for(self.store, update)]

    def _recent_incoming(self) -> tuple[int, int] | None:
        """A recent incoming message of a chat or (one time in three) a channel."""
        if self._channels and self.rng.random() < 1 / 3:
            peer_id = self._pick(self._channels, self._channel_weights)
        else:
            peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None:
            return None
        recent = [m for m in self.store.recent_messages(peer_id, _RECENT) if not m.out]
        if not recent:
            return None
        return peer_id, self.rng.choice(recent).id

    def _edit(self) -> list[AnyUpdates]:
        target = self._recent_incoming()
        if target is None:
            return []
        peer_id, message_id = target
        text, _ = self._content(peer_id)
        update = self.store.edit_message(peer_id, message_id, text or "(edited)")
        return [push_for(self.store, update)]

    def _delete(self) -> list[AnyUpdates]:
        target = self._recent_incoming()
        if target is None:
            return []
        update = self.store.delete_messages(target[0], (target[1],))
        return [] if update is None else [push_for(self.store, update)]

    def _read_outbox(self) -> list[AnyUpdates]:
        peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None:
            return []
        outgoing = [m.id for m in self.store.recent_messages(peer_id, _RECENT) if m.out]
        if not outgoing:
            return []
        update = self.store.read_outbox(peer_id, max(outgoing))
        return [] if update is None else [push_for(self.store, update)]

    def _presence(self) -> list[AnyUpdates]:
        if not self._users:
            return []
        user = self.rng.choice(self._users)
        now = self.store.now()
        if self.rng.random() < 0.5:
            presence = self.store.set_presence(user, PresenceStatus.ONLINE, now + 300)
        else:
            presence = self.store.set_presence(user, PresenceStatus.OFFLINE, now)
        return [Updates((UpdateUserStatus(presence),), (), now)]

    def _rename(self) -> list[AnyUpdates]:
        peer_id = self._pick(self._chats, self._chat_weights)
        peer = None if peer_id is None else self.store.peer(peer_id)
        if peer is None:
            return []
        base = peer.name
        for suffix in _RENAME_SUFFIXES:
            base = base.removesuffix(suffix)
        name = base + self.rng.choice(_RENAME_SUFFIXES) if base == peer.name else base
        update, seq = self.store.rename_peer(peer.id, name)
        return [push_for(self.store, update, seq)]
