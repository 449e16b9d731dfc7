"""Simulated traffic: what the account's contacts, groups and channels do while we watch.

Each ``step`` makes one event, chosen with the fixed weights of ``EVENT_WEIGHTS``: a new
message in a private chat or group (busy chats far more often than quiet ones), a channel
post, an edit or a deletion of a recent message, a deletion of old messages anywhere in a
history (unread ones among them), the other side reading our messages, the account
reading or muting a chat on another device, a presence change, a rename (a nickname, a
group's occasion, a channel's season), someone
forwarding a channel post or a message of another chat, the account answering in a
chat on another device (a read, then the next turn of the conversation), and a burst: two to five
messages and reads pushed together in one seq container, as Telegram does, and a
message in a secret chat (now and then in a newly opened one), which moves the qts
stream instead of a pts one. Now and then a new message is a sticker from the server's
sets, drawn from a stream of its own so the other choices stay as they were. A person who
writes is online, as on Telegram: a status push follows their message unless they are
still online from an earlier one. Every choice
comes from a ``random.Random`` seeded with the server's seed and the store's counters, so
the same seed and the same requests give the same events, and a server restarted from
its file does not replay the events it already made.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable

from dataset import LastMessage, LiveTalk, added_caption, edited, has_typo, renamed
from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    Media,
    MediaKind,
    Message,
    PeerKind,
    PresenceStatus,
    ShortMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    Updates,
    UpdateUserStatus,
    peer_kind,
)
from sync.server.pushes import push_for, seq_container
from sync.server.store import ServerStore, forward_header

__all__ = ["BURST_KINDS", "EVENT_WEIGHTS", "ONLINE_AFTER_WRITING", "STICKER_SHARE", "Traffic"]

#: Relative frequency of each kind of event. New messages and presence dominate, as in a
#: real account; reads from another device and deletions deep in history are rarer; a
#: burst (several updates in one seq container) comes about once in twenty events.
EVENT_WEIGHTS = {
    "message": 35,
    "channel_post": 14,
    "edit": 5,
    "delete": 3,
    "delete_old": 3,
    "read_outbox": 9,
    "read_inbox": 6,
    "presence": 14,
    "rename": 2,
    "burst": 4,
    "secret": 5,
    "forward": 3,
    "mute": 2,
    "answer": 8,
}
#: What a burst is made of, drawn with equal chances for each of its two to five parts.
BURST_KINDS = ("message", "message", "message", "read_inbox", "read_outbox", "secret")
_MEDIA_KINDS = ("photo", "video", "file", "voice", "link")
#: ``muted_until`` of a chat muted for ever.
_MUTED_FOREVER = 2**31 - 1
#: How far back edits and ordinary deletions reach.
_RECENT = 10
#: Chance that a secret message opens a new secret chat rather than using an open one.
_NEW_SECRET_CHAT = 0.1
#: Peer flags of users nobody opens a secret chat with: bots, and the account itself.
_NOT_A_PERSON = 2 | 8
#: Share of new messages in private chats and groups that are a sticker.
STICKER_SHARE = 0.08
#: How long a person who writes counts as online (a Telegram client renews its status
#: every few minutes while in use).
ONLINE_AFTER_WRITING = 300


def _is_sticker(message: Message) -> bool:
    """A sticker message: nobody edits one."""
    return any(item.kind is MediaKind.STICKER for item in message.media)


class Traffic:
    """Makes events against ``store``; each ``step`` returns the pushes it caused."""

    def __init__(
        self, store: ServerStore, seed: int, *, is_account: Callable[[int], bool] = lambda _: False
    ) -> None:
        self.store = store
        #: Users who are accounts themselves: traffic never writes or reads for them.
        self.is_account = is_account
        state = store.state()
        # The counters make a restarted server draw new events, not the ones it made.
        self.rng = random.Random(f"traffic:{seed}:{state.pts}:{state.seq}:{state.qts}")
        self._sticker_rng = random.Random(f"stickers:{seed}:{state.pts}:{state.seq}:{state.qts}")
        self._stickers = [sticker for _, stickers in store.stickers.sets() for sticker in stickers]
        self._media_ids = itertools.count(self.rng.getrandbits(40) + 1)
        #: Which live conversation each chat is in; new messages answer the last one.
        self._talk = LiveTalk()
        self._kinds = list(EVENT_WEIGHTS)
        self._kind_weights = list(itertools.accumulate(EVENT_WEIGHTS.values()))
        chats: list[int] = []
        channels: list[int] = []
        chat_weights: list[float] = []
        channel_weights: list[float] = []
        self._secret_chats: list[int] = []
        for peer_id, count in store.chat_sizes():
            if peer_kind(peer_id) is PeerKind.SECRET:
                self._secret_chats.append(peer_id)
            elif peer_kind(peer_id) is PeerKind.CHANNEL:
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
        self._people = [
            user
            for user in self._users
            if (peer := store.peer(user)) is not None and not peer.flags & _NOT_A_PERSON
        ]
        self.events = 0
        self._handlers: dict[str, Callable[[], list[AnyUpdates]]] = {
            "message": self._message,
            "channel_post": self._channel_post,
            "edit": self._edit,
            "delete": self._delete,
            "delete_old": self._delete_old,
            "read_outbox": self._read_outbox,
            "read_inbox": self._read_inbox,
            "presence": self._presence,
            "rename": self._rename,
            "burst": self._burst,
            "secret": self._secret,
            "forward": self._forward,
            "mute": self._mute,
            "answer": self._answer,
        }
        assert self._handlers.keys() == EVENT_WEIGHTS.keys()

    def forget_chat(self, peer_id: int) -> None:
        """Make no more events in a chat the account left (a channel it was removed from)."""
        for items, name in ((self._chats, "_chat_weights"), (self._channels, "_channel_weights")):
            if peer_id in items:
                index = items.index(peer_id)
                weights = getattr(self, name)
                sizes = [b - a for a, b in zip([0.0, *weights], weights, strict=False)]
                del items[index], sizes[index]
                setattr(self, name, list(itertools.accumulate(sizes)))
        if peer_id in self._users:
            self._users.remove(peer_id)
        if peer_id in self._people:
            self._people.remove(peer_id)

    def _pick(self, items: list[int], cumulative: list[float]) -> int | None:
        if not items:
            return None
        index = bisect.bisect(cumulative, self.rng.random() * cumulative[-1])
        return items[min(index, len(items) - 1)]

    def _pick_any(self) -> int | None:
        """A chat or (one time in three) a channel, busy ones more often."""
        if self._channels and self.rng.random() < 1 / 3:
            return self._pick(self._channels, self._channel_weights)
        return self._pick(self._chats, self._chat_weights)

    def step(self, kind: str | None = None) -> list[AnyUpdates]:
        """Make one event (of ``kind`` if given); the pushes to send to every connection."""
        self.events += 1
        if kind is None:
            roll = self.rng.random() * self._kind_weights[-1]
            kind = self._kinds[bisect.bisect(self._kind_weights, roll)]
        elif kind not in EVENT_WEIGHTS:
            raise ValueError(f"no traffic event {kind!r}; known: {', '.join(EVENT_WEIGHTS)}")
        pushes = self._handlers[kind]()
        return [*pushes, *self.writers_online(pushes)]

    def writers_online(self, pushes: list[AnyUpdates]) -> list[AnyUpdates]:
        """A person who writes is online, as on Telegram: a status push for the people
        whose new messages ``pushes`` carry, leaving out those still online for a while
        (someone who writes every minute is not announced every minute)."""
        now = self.store.now()
        statuses = []
        for user in self._writers(pushes):
            known = self.store.presences((user,))
            if (
                known
                and known[0].status is PresenceStatus.ONLINE
                and known[0].timestamp - now >= ONLINE_AFTER_WRITING // 2
            ):
                continue
            until = now + ONLINE_AFTER_WRITING
            statuses.append(
                UpdateUserStatus(self.store.set_presence(user, PresenceStatus.ONLINE, until))
            )
        return [Updates(tuple(statuses), (), now)] if statuses else []

    def _writers(self, pushes: list[AnyUpdates]) -> list[int]:
        """The people (not accounts) who wrote the new messages ``pushes`` carry."""
        writers: list[int] = []
        for push in pushes:
            if isinstance(push, ShortMessage):
                updates: tuple[AnyUpdate, ...] = (push.as_update(self.store.self_id),)
            else:
                updates = push.updates if isinstance(push, Updates) else ()
            for update in updates:
                if not isinstance(update, UpdateNewMessage | UpdateNewEncryptedMessage):
                    continue
                author = update.message.author
                if (
                    author is not None
                    and not update.message.out
                    and author not in writers
                    and peer_kind(author) is PeerKind.USER
                    and not self.is_account(author)
                    and self.store.peer(author) is not None
                ):
                    writers.append(author)
        return writers

    def _push(self, update: AnyUpdate | None) -> list[AnyUpdates]:
        return [] if update is None else [push_for(self.store, update)]

    def _content(self, peer_id: int, author: int) -> tuple[str, tuple[Media, ...]]:
        """What ``author`` writes next in ``peer_id``, going on with its conversation."""
        kind = peer_kind(peer_id)
        namespace = int(PeerKind.USER if kind in (None, PeerKind.SECRET) else kind)
        h = self.rng.getrandbits(64)
        peer = self.store.peer(peer_id)
        newest = self.store.recent_messages(peer_id, 1)
        last = LastMessage(newest[0].id, newest[0].out, newest[0].author) if newest else None
        text, media = self._talk.say(
            peer_id,
            namespace,
            "" if peer is None else peer.name,
            0 if peer is None else peer.flags,
            author,
            last,
            h,
            next(self._media_ids),
        )
        wire = tuple(
            Media(MediaKind(_MEDIA_KINDS[int(m.kind)]), m.id, m.size, m.url, m.title) for m in media
        )
        return text, wire

    # -- updates: each makes one change and returns its update (or None) ---------------

    def _author_in(self, peer_id: int) -> int | None:
        """Who speaks in a private chat or group: its user, or one of its members; never
        an account (a person who writes for themselves)."""
        author: int = peer_id
        if peer_kind(peer_id) is PeerKind.GROUP:
            members = self.store.members(peer_id)
            if not members:
                return None
            author = self.rng.choice(members)
        return None if self.is_account(author) else author

    def _new_message(self) -> AnyUpdate | None:
        peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None:
            return None
        return self.message_in(peer_id)

    def can_write_in(self, peer_id: int) -> bool:
        """Whether someone (not an account) can write in ``peer_id`` now."""
        kind = peer_kind(peer_id)
        if kind is PeerKind.CHANNEL:
            return True
        if kind is PeerKind.GROUP:
            return any(not self.is_account(member) for member in self.store.members(peer_id))
        return kind is PeerKind.USER and not self.is_account(peer_id)

    def message_in(
        self, peer_id: int
    ) -> UpdateNewMessage | UpdateNewChannelMessage | UpdateNewEncryptedMessage | None:
        """Someone writes in ``peer_id``, going on with its conversation (a channel posts);
        ``None`` if nobody can (an account's own chat, a group without members)."""
        if peer_kind(peer_id) is PeerKind.CHANNEL:
            text, media = self._content(peer_id, peer_id)
            return self._said(peer_id, peer_id, text, media)
        author = self._author_in(peer_id)
        if author is None:
            return None
        text, media = self._content(peer_id, author)
        if self._stickers and self._sticker_rng.random() < STICKER_SHARE:
            text, media = "", (self._sticker_rng.choice(self._stickers),)
            return self.store.add_message(peer_id, out=False, author=author, media=media, text="")
        return self._said(peer_id, author, text, media)

    def _said(
        self, peer_id: int, author: int, text: str, media: tuple[Media, ...], *, out: bool = False
    ) -> UpdateNewMessage | UpdateNewChannelMessage | UpdateNewEncryptedMessage:
        """Store what the live talk wrote (``out``: the account wrote it), and tell the
        talk the id it got."""
        update = self.store.add_message(peer_id, out=out, author=author, text=text, media=media)
        self._talk.sent(peer_id, update.message.id)
        return update

    def _secret_message(self) -> AnyUpdate | None:
        """A message from the other side of a secret chat, mostly an open one."""
        if self._secret_chats and self.rng.random() >= _NEW_SECRET_CHAT:
            peer_id = self.rng.choice(self._secret_chats)
        elif self._people:
            user = self.rng.choice(self._people)
            found = self.store.secret_chat_with(user)
            peer_id = found if found is not None else self.store.open_secret_chat(user)
            if peer_id not in self._secret_chats:
                self._secret_chats.append(peer_id)
        else:
            return None
        (author,) = self.store.members(peer_id)
        if self.is_account(author):
            return None
        text, media = self._content(peer_id, author)
        return self._said(peer_id, author, text, media)

    def _read_inbox_update(self, peer_id: int | None) -> AnyUpdate | None:
        """The account read ``peer_id`` on another device: all of it, or part of it."""
        if peer_id is None:
            return None
        unread = self.store.unread_incoming(peer_id, 50)
        if not unread:
            return None
        max_id = self.rng.choice(unread) if self.rng.random() < 0.5 else 2**31 - 1
        return self.store.read_inbox(peer_id, max_id)

    def _read_outbox_update(self) -> AnyUpdate | None:
        peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None or self.is_account(peer_id):
            return None
        outgoing = [m.id for m in self.store.recent_messages(peer_id, _RECENT) if m.out]
        if not outgoing:
            return None
        return self.store.read_outbox(peer_id, max(outgoing))

    # -- events ------------------------------------------------------------------------

    def _message(self) -> list[AnyUpdates]:
        return self._push(self._new_message())

    def _channel_post(self) -> list[AnyUpdates]:
        channel = self._pick(self._channels, self._channel_weights)
        return [] if channel is None else self._push(self.message_in(channel))

    def _recent_incoming(self, *, editable: bool = False) -> tuple[int, int] | None:
        """A recent incoming message of a chat or (one time in three) a channel;
        ``editable``: not a forward, which nobody can edit, and one with a typo if there
        is one (that is what people edit)."""
        peer_id = self._pick_any()
        if peer_id is None:
            return None
        recent = [
            m
            for m in self.store.recent_messages(peer_id, _RECENT)
            if not m.out
            and not (editable and (m.forward is not None or _is_sticker(m)))
            and not self.is_account(m.author or peer_id)
        ]
        if not recent:
            return None
        if editable:
            recent = [m for m in recent if has_typo(m.text)] or recent
        return peer_id, self.rng.choice(recent).id

    def _forward(self) -> list[AnyUpdates]:
        """Someone in a private chat or group forwards a recent message of another chat
        or channel, which carries the header of where it first appeared."""
        source = self._recent_incoming()
        peer_id = self._pick(self._chats, self._chat_weights)
        if source is None or peer_id is None or peer_id == source[0]:
            return []
        message = self.store.message(*source)
        author = self._author_in(peer_id)
        if author is None:
            return []
        assert message is not None
        update = self.store.add_message(
            peer_id,
            out=False,
            author=author,
            text=message.text,
            media=message.media,
            forward=forward_header(message),
        )
        return [push_for(self.store, update)]

    def _edit(self) -> list[AnyUpdates]:
        target = self._recent_incoming(editable=True)
        if target is None:
            return []
        peer_id, message_id = target
        message = self.store.message(peer_id, message_id)
        assert message is not None
        h = self.rng.getrandbits(64)
        text = edited(message.text, h, post=peer_kind(peer_id) is PeerKind.CHANNEL)
        if text is None and message.media and not message.text:  # a caption is added
            text = added_caption(message.media[0].kind.value, h)
        if text is None:
            return []
        update = self.store.edit_message(peer_id, message_id, text)
        return [push_for(self.store, update)]

    def _delete(self) -> list[AnyUpdates]:
        target = self._recent_incoming()
        if target is None:
            return []
        return self._push(self.store.delete_messages(target[0], (target[1],)))

    def _delete_old(self) -> list[AnyUpdates]:
        """One to three messages from anywhere in a history; half the time unread ones."""
        peer_id = self._pick_any()
        if peer_id is None:
            return []
        count = self.rng.randint(1, 3)
        unread = self.store.unread_incoming(peer_id, 200)
        if unread and self.rng.random() < 0.5:
            ids = self.rng.sample(unread, min(count, len(unread)))
        else:
            size = self.store.message_count(peer_id)
            if not size:
                return []
            positions = [self.rng.randrange(size) for _ in range(count)]
            ids = self.store.message_ids_at(peer_id, positions)
        return self._push(self.store.delete_messages(peer_id, ids))

    def _secret(self) -> list[AnyUpdates]:
        return self._push(self._secret_message())

    def _answer(self) -> list[AnyUpdates]:
        """The account answers in a private chat or group on another device (its phone):
        it reads the chat, then writes the next turn of the conversation there."""
        peer_id = self._pick(self._chats, self._chat_weights)
        if peer_id is None or self.is_account(peer_id):
            return []
        peer = self.store.peer(peer_id)
        if peer is None or peer_kind(peer_id) is PeerKind.USER and peer.flags & _NOT_A_PERSON:
            return []
        newest = self.store.recent_messages(peer_id, 1)
        if not newest or newest[0].out:
            return []  # nothing to answer
        me = self.store.self_id
        pushes = self._push(self.store.read_inbox(peer_id, newest[0].id))
        text, media = self._content(peer_id, me)
        return [*pushes, *self._push(self._said(peer_id, me, text, media, out=True))]

    def _read_outbox(self) -> list[AnyUpdates]:
        return self._push(self._read_outbox_update())

    def _read_inbox(self) -> list[AnyUpdates]:
        return self._push(self._read_inbox_update(self._pick_any()))

    def _burst(self) -> list[AnyUpdates]:
        """Two to five messages (secret ones among them) and reads of private chats and
        groups in one seq container.

        Half the containers take one seq point (Telegram's ``updates``), half one per
        update (``updatesCombined``, ``seq_start < seq``)."""
        updates: list[AnyUpdate] = []
        for _ in range(self.rng.randint(2, 5)):
            kind = self.rng.choice(BURST_KINDS)
            if kind == "message":
                update = self._new_message()
            elif kind == "secret":
                update = self._secret_message()
            elif kind == "read_inbox":
                update = self._read_inbox_update(self._pick(self._chats, self._chat_weights))
            else:
                update = self._read_outbox_update()
            if update is not None:
                updates.append(update)
        if not updates:
            return []
        points = 1 if self.rng.random() < 0.5 else len(updates)
        return [seq_container(self.store, updates, points)]

    def _mute(self) -> list[AnyUpdates]:
        """The account mutes or unmutes a chat or channel on another device."""
        peer_id = self._pick_any()
        if peer_id is None:
            return []
        until = self.rng.choice((0, _MUTED_FOREVER, self.store.now() + 8 * 3600))
        return self._push(self.store.set_notify_settings(peer_id, until))

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
        """A person adds a nickname or a status emoji, a group what it is about this
        season, a channel the season; renaming one again takes that off."""
        peer_id = self._pick_any()
        peer = None if peer_id is None else self.store.peer(peer_id)
        if peer is None:
            return []
        namespace = int(peer_kind(peer.id) or PeerKind.USER)
        name = renamed(peer.name, namespace, self.rng.getrandbits(32), self.store.now())
        update, seq = self.store.rename_peer(peer.id, name)
        return [push_for(self.store, update, seq)]
