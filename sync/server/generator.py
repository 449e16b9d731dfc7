"""A deterministic generated account: the mock server's built-in dataset, the storage demo's.

``generate_dataset(seed, peers, messages, days)`` builds, from ``random.Random(seed)``
alone, the account of one user: ``peers`` chats (private chats, groups and channels)
holding ``messages`` messages in total over the ``days`` days before ``DEMO_NOW``.
The same arguments give an identical (equal) dataset on every run and platform.

How it looks like a real account:

* message counts per chat are heavy-tailed (log-normal): a few busy chats, a long tail;
* message ids ascend within each chat; channels number their messages themselves,
  while private chats and groups share one account-wide counter, as on Telegram;
* messages come in bursts (a conversation), more by day than by night (UTC);
* texts are drawn from a small vocabulary, with some emoji; photos, videos, files,
  voice messages and links come in plausible shares, each with its ``Media`` item
  and shared-media tag;
* about 40% of the messages of a private chat are incoming; group messages are mostly
  others', channel posts all are;
* read states leave some chats with unread messages, a few chats are pinned, one is
  archived, some are muted, and users have presences.

Everything here is a pure function of its arguments: no clock, no global state.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from postbox import (
    Media,
    MediaKind,
    MessageFlags,
    MessageNamespace,
    MessageTags,
    Peer,
    PeerFlags,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    PresenceStatus,
    StoreMessage,
)

__all__ = [
    "DEMO_NOW",
    "MAX_DAYS",
    "MAX_MESSAGES",
    "MAX_PEERS",
    "SEARCH_WORD",
    "DemoDataset",
    "describe_media",
    "generate_dataset",
    "live_message",
    "message_content",
]

#: The dataset's "now" (2024-06-01 18:30 UTC): the newest generated message is older.
DEMO_NOW = 1_717_266_600
#: Upper bounds that keep ids and timestamps well inside their 32-bit ranges.
MAX_PEERS = 100_000
MAX_MESSAGES = 10_000_000
MAX_DAYS = 3_650
#: A vocabulary word common enough that a full-text search for it finds messages.
SEARCH_WORD = "coffee"

_DAY = 86_400
_CLOUD = int(MessageNamespace.CLOUD)
_INCOMING = int(MessageFlags.INCOMING)

# -- word lists -----------------------------------------------------------------

_FIRST_NAMES = (
    "Alice", "Amir", "Anna", "Ben", "Carla", "Chen", "Daniel", "Dmitri", "Elena", "Emma",
    "Farah", "Felix", "Grace", "Hana", "Igor", "Isabel", "Jonas", "Julia", "Kai", "Lena",
    "Leo", "Lucia", "Marco", "Maya", "Mia", "Nadia", "Noah", "Olga", "Omar", "Paula",
    "Pavel", "Priya", "Rosa", "Sam", "Sara", "Tariq", "Theo", "Vera", "Yuki", "Zoe",
)  # fmt: skip
_LAST_NAMES = (
    "Andersen", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ito",
    "Jensen", "Kowalski", "Larsen", "Martin", "Novak", "Okafor", "Petrov", "Quinn", "Rossi",
    "Schmidt", "Silva", "Tanaka", "Ueda", "Volkov", "Weber", "Xu", "Yilmaz", "Zhang",
)  # fmt: skip
_BOT_NAMES = ("Weather", "Translate", "Reminder", "Poll", "News", "Music", "Quiz", "Stickers")
_GROUP_ADJECTIVES = (
    "Weekend", "Family", "Office", "Morning", "Night", "Book", "Board Game", "Climbing",
    "Garden", "Neighbourhood", "Study", "Running", "Coffee", "Jazz", "Travel", "Cooking",
)  # fmt: skip
_GROUP_NOUNS = (
    "Club", "Crew", "Team", "Gang", "Friends", "Circle", "Squad", "Chat", "Group", "Collective",
)  # fmt: skip
_CHANNEL_TOPICS = (
    "Tech", "Science", "Football", "Design", "Python", "Space", "Cinema", "Economy", "Photo",
    "Music", "Travel", "History", "Food", "Markets", "Climate", "Gaming",
)  # fmt: skip
_CHANNEL_PATTERNS = ("{} Daily", "The {} Digest", "{} News", "{} Weekly", "All About {}")

#: Words with Zipf-like weights (earlier words are more frequent).
_VOCABULARY = (
    "the", "I", "you", "to", "and", "a", "it", "is", "we", "that", "of", "in", "for", "this",
    "on", "be", "have", "do", "not", "with", "what", "just", "so", "are", "can", "will",
    "now", "there", "how", "time", "today", "tomorrow", "good", "think", "know", "see",
    "like", "really", "maybe", "later", "coffee", "meeting", "call", "home", "work",
    "weekend", "tonight", "dinner", "lunch", "photos", "plan", "idea", "train", "late",
    "early", "nice", "great", "thanks", "sorry", "again", "need", "want", "going", "back",
    "new", "still", "already", "soon", "morning", "evening", "week", "project", "deadline",
    "review", "code", "release", "ticket", "party", "birthday", "movie", "book", "music",
    "concert", "weather", "rain", "sun", "beach", "mountains", "hike", "bike", "car", "bus",
    "station", "airport", "flight", "hotel", "trip", "holiday", "office", "kitchen", "pizza",
    "pasta", "tea", "cake", "market", "shop", "price", "money", "game", "match", "score",
    "team", "news", "article", "link", "video", "song", "playlist", "garden", "flowers",
    "dog", "cat", "kids", "school", "class", "exam", "homework", "doctor", "gym", "run",
    "walk", "park", "river", "bridge", "city", "street", "neighbours", "keys", "phone",
    "laptop", "battery", "update", "bug", "fix", "server", "database", "message", "chat",
)  # fmt: skip
_VOCABULARY_CUMULATIVE = tuple(
    itertools.accumulate(1.0 / (rank + 8) ** 0.9 for rank in range(len(_VOCABULARY)))
)
_SHORT_REPLIES = (
    "ok", "OK!", "sure", "thanks!", "Thank you!", "haha", "lol", "yes", "no", "nope",
    "on my way", "sounds good", "good night", "see you", "why?", "wow", "nice!", "agreed",
    "one sec", "brb", "same here", "no worries", "love it", "exactly",
)  # fmt: skip
#: Emoji that terminals draw two columns wide (no variation selectors), for aligned output.
_EMOJI = ("😀", "😂", "👍", "🎉", "🔥", "🙏", "😅", "🤔", "👀", "🚀", "☕", "😍", "🙌", "💪", "😎")
_LINK_DOMAINS = ("example.com", "example.org", "news.example.net", "blog.example.com")
_LINK_INTROS = ("look at this", "have you seen this?", "interesting:", "as promised", "fyi")
_FILE_EXTENSIONS = ("pdf", "docx", "xlsx", "zip", "txt", "pptx")

#: Hour-of-day activity (UTC): quiet at night, peaks at lunch and in the evening.
_HOUR_WEIGHTS = (
    3, 2, 1, 1, 1, 1, 2, 4, 6, 7, 8, 8, 9, 8, 7, 7, 8, 8, 9, 10, 10, 9, 7, 5,
)  # fmt: skip
_MAX_HOUR_WEIGHT = max(_HOUR_WEIGHTS)

#: Shares of the media kinds per chat kind; the rest are plain text messages.
_MEDIA_SHARES: dict[int, tuple[tuple[MediaKind, float], ...]] = {
    int(PeerNamespace.USER): (
        (MediaKind.PHOTO, 0.09),
        (MediaKind.VIDEO, 0.03),
        (MediaKind.FILE, 0.02),
        (MediaKind.VOICE, 0.05),
        (MediaKind.LINK, 0.04),
    ),
    int(PeerNamespace.GROUP): (
        (MediaKind.PHOTO, 0.12),
        (MediaKind.VIDEO, 0.04),
        (MediaKind.FILE, 0.03),
        (MediaKind.VOICE, 0.03),
        (MediaKind.LINK, 0.06),
    ),
    int(PeerNamespace.CHANNEL): (
        (MediaKind.PHOTO, 0.30),
        (MediaKind.VIDEO, 0.08),
        (MediaKind.FILE, 0.03),
        (MediaKind.LINK, 0.15),
    ),
}
_MEDIA_TAGS = {
    MediaKind.PHOTO: MessageTags.PHOTO,
    MediaKind.VIDEO: MessageTags.VIDEO,
    MediaKind.FILE: MessageTags.FILE,
    MediaKind.VOICE: MessageTags.VOICE,
    MediaKind.LINK: MessageTags.LINK,
}
#: Share of incoming messages: private chats ~40%, groups mostly others', channels all.
_INCOMING_SHARE = {
    int(PeerNamespace.USER): 0.40,
    int(PeerNamespace.GROUP): 0.80,
    int(PeerNamespace.CHANNEL): 1.0,
}
_UNREAD_CHANCE = {
    int(PeerNamespace.USER): 0.20,
    int(PeerNamespace.GROUP): 0.35,
    int(PeerNamespace.CHANNEL): 0.60,
}
_MUTED_CHANCE = {
    int(PeerNamespace.USER): 0.05,
    int(PeerNamespace.GROUP): 0.30,
    int(PeerNamespace.CHANNEL): 0.50,
}


# -- the dataset ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DemoDataset:
    """One generated account. Every collection is a tuple, so datasets compare by value."""

    seed: int
    days: int
    #: The dataset's current time; every message is older.
    now: int
    #: The account's own user (``PeerFlags.SELF``); the author of outgoing messages.
    self_peer: Peer
    #: The chats, in generation order.
    peers: tuple[Peer, ...]
    #: Every message, sorted by history key: (peer, namespace, timestamp, id).
    messages: tuple[StoreMessage, ...]
    #: The members of each group (users among ``peers``).
    group_members: tuple[tuple[PeerId, tuple[PeerId, ...]], ...]
    #: The read state of each chat that has messages (namespace ``CLOUD``).
    read_states: tuple[tuple[PeerId, PeerReadState], ...]
    #: Pinned chats of the root chat list, in pinning order.
    pinned: tuple[PeerId, ...]
    #: Chats in the archive group.
    archived: tuple[PeerId, ...]
    notification_settings: tuple[tuple[PeerId, PeerNotificationSettings], ...]
    presences: tuple[tuple[PeerId, PeerPresence], ...]

    def peer(self, peer_id: PeerId) -> Peer | None:
        """The chat or the account's own user with id ``peer_id``."""
        if peer_id == self.self_peer.id:
            return self.self_peer
        return next((peer for peer in self.peers if peer.id == peer_id), None)

    def message_counts(self) -> dict[PeerId, int]:
        """Messages per chat, for every chat (zero included), in ``peers`` order."""
        counts = dict.fromkeys((peer.id for peer in self.peers), 0)
        for message in self.messages:
            counts[message.peer_id] += 1
        return counts

    def busiest_peer_id(self) -> PeerId:
        """The chat with the most messages (the first one on a tie)."""
        counts = self.message_counts()
        return max(counts, key=lambda peer_id: counts[peer_id])

    def members(self, peer_id: PeerId) -> tuple[PeerId, ...]:
        """The members of a group; empty for other chats."""
        for group_id, members in self.group_members:
            if group_id == peer_id:
                return members
        return ()


def generate_dataset(seed: int, peers: int, messages: int, days: int) -> DemoDataset:
    """Generate ``peers`` chats with ``messages`` messages in total over ``days`` days.

    Raises ``ValueError`` for sizes outside ``1..MAX_PEERS`` chats, ``0..MAX_MESSAGES``
    messages or ``1..MAX_DAYS`` days.
    """
    if not 1 <= peers <= MAX_PEERS:
        raise ValueError(f"the number of chats must be within 1..{MAX_PEERS}, not {peers}")
    if not 0 <= messages <= MAX_MESSAGES:
        raise ValueError(f"the number of messages must be within 0..{MAX_MESSAGES}, not {messages}")
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"the number of days must be within 1..{MAX_DAYS}, not {days}")
    rng = random.Random(seed)
    now = DEMO_NOW
    self_peer, chats = _generate_peers(rng, peers)
    users = [peer.id for peer in chats if peer.id.namespace == PeerNamespace.USER]
    group_members = tuple(
        (peer.id, _sample_members(rng, users))
        for peer in chats
        if peer.id.namespace == PeerNamespace.GROUP
    )
    counts = _message_counts(rng, peers, messages)
    timestamps = [_chat_timestamps(rng, count, now, days) for count in counts]
    ids = _assign_ids(rng, chats, timestamps)
    members = dict(group_members)
    media_ids = itertools.count(rng.getrandbits(40) + 1)
    history: list[StoreMessage] = []
    per_chat: list[list[StoreMessage]] = []
    for peer, chat_timestamps, chat_ids in zip(chats, timestamps, ids, strict=True):
        chat_messages = _chat_messages(
            rng, peer, self_peer.id, members.get(peer.id, ()), chat_timestamps, chat_ids, media_ids
        )
        per_chat.append(chat_messages)
        history.extend(chat_messages)
    history.sort(key=lambda m: (m.peer_id, m.namespace, m.timestamp, m.id))
    read_states = _read_states(rng, chats, per_chat)
    pinned, archived = _pinned_and_archived(rng, chats, counts)
    return DemoDataset(
        seed=seed,
        days=days,
        now=now,
        self_peer=self_peer,
        peers=tuple(chats),
        messages=tuple(history),
        group_members=group_members,
        read_states=read_states,
        pinned=pinned,
        archived=archived,
        notification_settings=_notification_settings(rng, chats, now, archived),
        presences=_presences(rng, chats, now),
    )


def live_message(
    dataset: DemoDataset, peer_id: PeerId, message_id: int, timestamp: int
) -> StoreMessage:
    """A new incoming message for chat ``peer_id``, as if it had just arrived.

    Deterministic for the dataset's seed and the arguments.
    """
    rng = random.Random(f"{dataset.seed}:{int(peer_id)}:{message_id}")
    author: PeerId | None = peer_id
    if peer_id.namespace == PeerNamespace.GROUP:
        members = dataset.members(peer_id)
        author = rng.choice(members) if members else None
    return StoreMessage(
        peer_id,
        _CLOUD,
        message_id,
        timestamp,
        flags=_INCOMING,
        author_id=author,
        text=f"{_sentence(rng)} {rng.choice(_EMOJI)}",
    )


def message_content(
    rng: random.Random, namespace: int, media_id: int
) -> tuple[str, tuple[Media, ...]]:
    """Text and media for a new message in a chat of peer ``namespace``, in the dataset's
    shares (``media_id`` names the media item, if there is one)."""
    kind = _pick_media(rng, _MEDIA_SHARES[namespace])
    return _content(rng, kind, itertools.count(media_id))


def describe_media(media: Sequence[Media]) -> str:
    """A short label for a message's media, as a chat list preview shows it ("" if none)."""
    if not media:
        return ""
    item = media[0]
    if item.kind is MediaKind.PHOTO:
        return "[photo]"
    if item.kind is MediaKind.VIDEO:
        return "[video]"
    if item.kind is MediaKind.VOICE:
        return "[voice message]"
    if item.kind is MediaKind.FILE:
        return f"[file {item.title}]" if item.title else "[file]"
    return ""  # a link's text already carries its address


# -- peers ----------------------------------------------------------------------


def _generate_peers(rng: random.Random, count: int) -> tuple[Peer, list[Peer]]:
    user_ids = _id_sequence(rng, 100_000)
    group_ids = _id_sequence(rng, 10_000)
    channel_ids = _id_sequence(rng, 1_000_000)
    self_peer = Peer(
        PeerId.make(PeerNamespace.USER, next(user_ids)),
        "You",
        username="me",
        access_hash=rng.getrandbits(62),
        flags=int(PeerFlags.SELF),
    )
    used_names: set[str] = set()
    chats: list[Peer] = []
    for position in range(count):
        # The first chat is always a private one, so groups have members to draw from.
        kind = 0.0 if position == 0 else rng.random()
        if kind < 0.70:
            chats.append(_user(rng, PeerId.make(PeerNamespace.USER, next(user_ids)), used_names))
        elif kind < 0.88:
            name = _unique(used_names, lambda: _group_name(rng))
            chats.append(
                Peer(PeerId.make(PeerNamespace.GROUP, next(group_ids)), name, access_hash=0)
            )
        else:
            name = _unique(used_names, lambda: _channel_name(rng))
            flags = int(PeerFlags.BROADCAST)
            if rng.random() < 0.3:
                flags |= PeerFlags.VERIFIED
            chats.append(
                Peer(
                    PeerId.make(PeerNamespace.CHANNEL, next(channel_ids)),
                    name,
                    username=_slug(name),
                    access_hash=rng.getrandbits(62),
                    flags=flags,
                )
            )
    return self_peer, chats


def _id_sequence(rng: random.Random, start: int) -> itertools.count[int]:
    """Ids that look like real ones: an arbitrary start, unique by construction."""
    return itertools.count(start + rng.randrange(start))


def _user(rng: random.Random, peer_id: PeerId, used_names: set[str]) -> Peer:
    if rng.random() < 0.05:
        name = _unique(used_names, lambda: f"{rng.choice(_BOT_NAMES)} Bot")
        return Peer(
            peer_id,
            name,
            username=_slug(name) + "_bot",
            access_hash=rng.getrandbits(62),
            flags=int(PeerFlags.BOT),
        )
    name = _unique(used_names, lambda: f"{rng.choice(_FIRST_NAMES)} {rng.choice(_LAST_NAMES)}")
    username = _slug(name) if rng.random() < 0.5 else None
    return Peer(peer_id, name, username=username, access_hash=rng.getrandbits(62))


def _group_name(rng: random.Random) -> str:
    return f"{rng.choice(_GROUP_ADJECTIVES)} {rng.choice(_GROUP_NOUNS)}"


def _channel_name(rng: random.Random) -> str:
    return rng.choice(_CHANNEL_PATTERNS).format(rng.choice(_CHANNEL_TOPICS))


def _unique(used: set[str], make: Callable[[], str]) -> str:
    """A name from ``make()`` not used yet; numbered after a few collisions."""
    name = make()
    for _ in range(8):
        if name not in used:
            break
        name = make()
    base, number = name, 2
    while name in used:
        name = f"{base} {number}"
        number += 1
    used.add(name)
    return name


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


def _sample_members(rng: random.Random, users: list[PeerId]) -> tuple[PeerId, ...]:
    size = min(len(users), rng.randint(3, 12))
    return tuple(sorted(rng.sample(users, size)))


# -- messages -------------------------------------------------------------------


def _message_counts(rng: random.Random, chats: int, total: int) -> list[int]:
    """Split ``total`` messages over ``chats`` chats with heavy-tailed (log-normal) weights.

    Every chat gets one message first (if there are enough); the rest goes by weight,
    the remainder by largest fractional part, so the counts add up exactly. With
    sigma 1.8 a few chats hold most messages and many hold only a handful.
    """
    weights = [rng.lognormvariate(0.0, 1.8) for _ in range(chats)]
    base = 1 if total >= chats else 0
    rest = total - base * chats
    scale = rest / sum(weights)
    shares = [weight * scale for weight in weights]
    counts = [base + math.floor(share) for share in shares]
    leftover = total - sum(counts)
    by_fraction = sorted(range(chats), key=lambda i: (math.floor(shares[i]) - shares[i], i))
    for i in by_fraction[:leftover]:
        counts[i] += 1
    return counts


def _chat_timestamps(rng: random.Random, count: int, now: int, days: int) -> list[int]:
    """``count`` sorted timestamps before ``now``, in conversation bursts.

    Some chats went quiet a while ago, so the chat list is not ordered by size alone.
    """
    span = days * _DAY
    start = now - span
    end = now - 1
    if rng.random() < 0.5:
        end = max(start + span // 20, end - int(rng.expovariate(1.0) * span / 4))
    result: list[int] = []
    while len(result) < count:
        moment = _daytime_moment(rng, start, end)
        burst = min(count - len(result), 1 + int(rng.expovariate(1 / 4)))
        for _ in range(burst):
            result.append(min(moment, now - 1))
            moment += 3 + int(rng.expovariate(1 / 50))
    result.sort()
    return result


def _daytime_moment(rng: random.Random, start: int, end: int) -> int:
    """A moment in ``start..end``, more likely by day than by night (rejection sampling)."""
    moment = start
    for _ in range(32):
        moment = rng.randint(start, end)
        hour = (moment % _DAY) // 3600
        if rng.random() * _MAX_HOUR_WEIGHT < _HOUR_WEIGHTS[hour]:
            break
    return moment


def _assign_ids(
    rng: random.Random, chats: Sequence[Peer], timestamps: Sequence[list[int]]
) -> list[list[int]]:
    """Message ids for every chat, ascending with time.

    Private chats and groups share the account's counter, so their ids interleave in
    time order; each channel counts on its own, from an arbitrary start.
    """
    ids: list[list[int]] = [[] for _ in chats]
    shared: list[tuple[int, int, int]] = []
    for position, (peer, chat_timestamps) in enumerate(zip(chats, timestamps, strict=True)):
        if peer.id.namespace == PeerNamespace.CHANNEL:
            first = rng.randint(1, 5_000)
            ids[position] = list(range(first, first + len(chat_timestamps)))
        else:
            shared.extend((ts, position, seq) for seq, ts in enumerate(chat_timestamps))
    shared.sort()
    next_id = rng.randint(10_000, 100_000)
    for _, position, _seq in shared:
        ids[position].append(next_id)
        next_id += 1
    return ids


def _chat_messages(
    rng: random.Random,
    peer: Peer,
    self_id: PeerId,
    members: tuple[PeerId, ...],
    timestamps: list[int],
    ids: list[int],
    media_ids: itertools.count[int],
) -> list[StoreMessage]:
    namespace = peer.id.namespace
    incoming_share = _INCOMING_SHARE[namespace]
    shares = _MEDIA_SHARES[namespace]
    result: list[StoreMessage] = []
    for timestamp, id_ in zip(timestamps, ids, strict=True):
        incoming = rng.random() < incoming_share
        if not incoming:
            author: PeerId | None = self_id
        elif namespace == PeerNamespace.GROUP:
            author = rng.choice(members) if members else None
        else:
            author = peer.id
        kind = _pick_media(rng, shares)
        text, media = _content(rng, kind, media_ids)
        reply_to = None
        if result and namespace != PeerNamespace.CHANNEL and rng.random() < 0.06:
            reply_to = rng.choice(result[-20:]).id
        result.append(
            StoreMessage(
                peer.id,
                _CLOUD,
                id_,
                timestamp,
                flags=_INCOMING if incoming else 0,
                tags=int(_MEDIA_TAGS[kind]) if kind is not None else 0,
                author_id=author,
                text=text,
                media=media,
                reply_to_id=reply_to,
            )
        )
    return result


def _pick_media(
    rng: random.Random, shares: tuple[tuple[MediaKind, float], ...]
) -> MediaKind | None:
    roll = rng.random()
    for kind, share in shares:
        if roll < share:
            return kind
        roll -= share
    return None


def _content(
    rng: random.Random, kind: MediaKind | None, media_ids: itertools.count[int]
) -> tuple[str, tuple[Media, ...]]:
    if kind is None:
        return _text(rng), ()
    media_id = next(media_ids)
    if kind is MediaKind.PHOTO:
        caption = _sentence(rng) if rng.random() < 0.3 else ""
        return caption, (Media(kind, media_id, size=rng.randint(80_000, 3_000_000)),)
    if kind is MediaKind.VIDEO:
        caption = _sentence(rng) if rng.random() < 0.3 else ""
        return caption, (Media(kind, media_id, size=rng.randint(1_000_000, 80_000_000)),)
    if kind is MediaKind.VOICE:
        return "", (Media(kind, media_id, size=rng.randint(5_000, 300_000)),)
    if kind is MediaKind.FILE:
        title = f"{_word(rng)}_{_word(rng)}.{rng.choice(_FILE_EXTENSIONS)}"
        size = rng.randint(10_000, 20_000_000)
        return "", (Media(kind, media_id, size=size, title=title),)
    words = [_word(rng) for _ in range(rng.randint(2, 4))]
    url = f"https://{rng.choice(_LINK_DOMAINS)}/{'-'.join(words).lower()}"
    title = " ".join(words).capitalize()
    text = f"{rng.choice(_LINK_INTROS)} {url}"
    return text, (Media(kind, media_id, url=url, title=title),)


def _word(rng: random.Random) -> str:
    index = bisect.bisect(_VOCABULARY_CUMULATIVE, rng.random() * _VOCABULARY_CUMULATIVE[-1])
    return _VOCABULARY[min(index, len(_VOCABULARY) - 1)]


def _sentence(rng: random.Random) -> str:
    words = [_word(rng) for _ in range(1 + min(15, int(rng.expovariate(1 / 6))))]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + rng.choice((".", ".", "!", "?", ""))


def _text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        text = rng.choice(_SHORT_REPLIES)
    elif roll < 0.85:
        text = _sentence(rng)
    else:
        text = f"{_sentence(rng)} {_sentence(rng)}"
    if rng.random() < 0.12:
        text = f"{text} {rng.choice(_EMOJI)}"
    return text


# -- per-chat state -------------------------------------------------------------


def _read_states(
    rng: random.Random, chats: Sequence[Peer], per_chat: Sequence[list[StoreMessage]]
) -> tuple[tuple[PeerId, PeerReadState], ...]:
    """Read states consistent with the history: unread messages are the newest incoming
    ones after our last own message (sending a message reads the chat up to it)."""
    result: list[tuple[PeerId, PeerReadState]] = []
    marked_one = False
    for peer, history in zip(chats, per_chat, strict=True):
        if not history:
            continue
        ids = [message.id or 0 for message in history]
        incoming = [bool(message.flags & _INCOMING) for message in history]
        trailing = 0
        while trailing < len(history) and incoming[-1 - trailing]:
            trailing += 1
        unread = 0
        if trailing and rng.random() < _UNREAD_CHANCE[peer.id.namespace]:
            mean = 25 if peer.id.namespace == PeerNamespace.CHANNEL else 3
            unread = min(trailing, 1 + int(rng.expovariate(1 / mean)))
        first_unread = len(history) - unread
        max_incoming_read = ids[first_unread - 1] if first_unread > 0 else 0
        outgoing = [id_ for id_, inc in zip(ids, incoming, strict=True) if not inc]
        max_outgoing_read = 0
        if outgoing:
            seen_all = peer.id.namespace != PeerNamespace.USER or rng.random() < 0.8
            max_outgoing_read = outgoing[-1] if seen_all or len(outgoing) < 2 else outgoing[-2]
        marked = False
        if not unread and not marked_one and peer.id.namespace == PeerNamespace.USER:
            marked = marked_one = rng.random() < 0.1
        result.append(
            (
                peer.id,
                PeerReadState(max_incoming_read, max_outgoing_read, ids[-1], unread, marked),
            )
        )
    return tuple(result)


def _pinned_and_archived(
    rng: random.Random, chats: Sequence[Peer], counts: Sequence[int]
) -> tuple[tuple[PeerId, ...], tuple[PeerId, ...]]:
    """A few pinned favourites among the busier chats, and one archived chat."""
    order = sorted(range(len(chats)), key=lambda i: -counts[i])
    busy = order[: max(1, len(chats) * 3 // 10)]
    pinned_positions = rng.sample(busy, min(3, len(chats) // 5, len(busy)))
    pinned = tuple(chats[i].id for i in pinned_positions)
    candidates = [
        peer.id for i, peer in enumerate(chats) if i not in pinned_positions and counts[i] > 0
    ]
    if len(chats) < 2 or not candidates:
        return pinned, ()
    channels = [peer_id for peer_id in candidates if peer_id.namespace == PeerNamespace.CHANNEL]
    return pinned, (rng.choice(channels or candidates),)


def _notification_settings(
    rng: random.Random, chats: Sequence[Peer], now: int, archived: tuple[PeerId, ...]
) -> tuple[tuple[PeerId, PeerNotificationSettings], ...]:
    result: list[tuple[PeerId, PeerNotificationSettings]] = []
    for peer in chats:
        if peer.id in archived or rng.random() < _MUTED_CHANCE[peer.id.namespace]:
            if rng.random() < 0.8:
                until = PeerNotificationSettings.MUTED_FOREVER
            else:
                until = now + rng.choice((1, 8, 24, 72)) * 3600
            result.append((peer.id, PeerNotificationSettings(muted_until=until)))
    return tuple(result)


def _presences(
    rng: random.Random, chats: Sequence[Peer], now: int
) -> tuple[tuple[PeerId, PeerPresence], ...]:
    result: list[tuple[PeerId, PeerPresence]] = []
    for peer in chats:
        if peer.id.namespace != PeerNamespace.USER or peer.flags & PeerFlags.BOT:
            continue
        roll = rng.random()
        if roll < 0.10:
            presence = PeerPresence(PresenceStatus.ONLINE, now + 300)
        elif roll < 0.45:
            presence = PeerPresence(PresenceStatus.OFFLINE, now - int(rng.expovariate(1 / 20_000)))
        elif roll < 0.85:
            presence = PeerPresence(PresenceStatus.RECENTLY)
        else:
            presence = PeerPresence(PresenceStatus.LONG_AGO)
        result.append((peer.id, presence))
    return tuple(result)
