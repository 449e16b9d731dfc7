"""A deterministic generated account: the mock server's built-in dataset, the storage demo's.

``generate_dataset(seed, peers, messages, days)`` builds the account of one user:
``peers`` chats (about 70% private chats, 18% groups, 12% channels) holding ``messages``
messages in total over the ``days`` days before ``DEMO_NOW``. ``build_dataset(spec)``
does the same for a full ``AccountSpec`` (chat kinds counted apart, an update log,
deletions). Both are the plain-Python path over the row functions of
``dataset.message_rows``, which the Spark job in ``spark_tools`` runs in parallel:
the same spec gives an equal dataset either way, on every run and platform.

How it looks like a real account:

* message counts per chat are heavy-tailed (log-normal): a few busy chats, a long tail;
* message ids ascend within each chat; channels number their messages themselves,
  while private chats and groups share one account-wide counter that grows day by day;
* messages come in bursts (a conversation), more by day than by night (UTC);
* each burst is a conversation on one topic (plans, work, food, travel, a film...):
  greetings, questions and the answers that fit them, reactions, closings, with some
  emoji; photos, videos, files, voice messages and links come in plausible shares with
  captions that fit them, each with its ``Media`` item and shared-media tag; some
  answers quote the question they answer, a few messages were edited (a typo fixed, a
  time changed, a word added); channels post headlines, some with a link;
* names are distinct without numbers: people of many origins, themed groups,
  channels and bots;
* about 40% of the messages of a private chat are incoming; group messages are mostly
  others', channel posts all are;
* read states leave some chats with unread messages, a few chats are pinned, one is
  archived, some are muted, and users have presences.

Everything here is a pure function of its arguments: no clock, no global state.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from dataset.account_plan import DEMO_NOW, AccountPlan, AccountSpec, plan_account
from dataset.account_tables import AccountTables, account_tables
from dataset.message_rows import Deletion, content, generate_slice, plan_slices
from dataset.rows import build_message
from dataset.vocabulary import SEARCH_WORD
from postbox import (
    Media,
    MediaKind,
    MessageFlags,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    StoreMessage,
)

__all__ = [
    "DEMO_NOW",
    "MAX_DAYS",
    "MAX_MESSAGES",
    "MAX_PEERS",
    "SEARCH_WORD",
    "DemoDataset",
    "assemble_dataset",
    "build_dataset",
    "demo_spec",
    "describe_media",
    "generate_dataset",
    "live_message",
]

#: Upper bounds that keep ids and timestamps well inside their 32-bit ranges.
MAX_PEERS = 100_000
MAX_MESSAGES = 10_000_000
MAX_DAYS = 3_650

_CLOUD = int(MessageNamespace.CLOUD)
_INCOMING = int(MessageFlags.INCOMING)


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
    #: The first second of the server's update log (events from then on are replayed
    #: by getDifference), or ``None``: the log starts empty at import.
    log_from: int | None = None
    #: Serve the dates as they are, instead of moving "now" to the server's today.
    keep_dates: bool = False
    #: Messages sent before ``log_from`` and deleted after it: (peer, id, when).
    deletions: tuple[tuple[PeerId, int, int], ...] = ()

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


def demo_spec(seed: int, peers: int, messages: int, days: int) -> AccountSpec:
    """The spec of ``generate_dataset``'s account; ``ValueError`` for sizes outside
    ``1..MAX_PEERS`` chats, ``0..MAX_MESSAGES`` messages or ``1..MAX_DAYS`` days."""
    if not 1 <= peers <= MAX_PEERS:
        raise ValueError(f"the number of chats must be within 1..{MAX_PEERS}, not {peers}")
    if not 0 <= messages <= MAX_MESSAGES:
        raise ValueError(f"the number of messages must be within 0..{MAX_MESSAGES}, not {messages}")
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"the number of days must be within 1..{MAX_DAYS}, not {days}")
    groups = peers * 18 // 100
    channels = peers * 12 // 100
    return AccountSpec(seed, peers - groups - channels, groups, channels, messages, days)


def generate_dataset(seed: int, peers: int, messages: int, days: int) -> DemoDataset:
    """Generate ``peers`` chats with ``messages`` messages in total over ``days`` days.

    Raises ``ValueError`` for sizes outside ``1..MAX_PEERS`` chats, ``0..MAX_MESSAGES``
    messages or ``1..MAX_DAYS`` days.
    """
    return build_dataset(demo_spec(seed, peers, messages, days))


def build_dataset(spec: AccountSpec, *, keep_dates: bool = False) -> DemoDataset:
    """The whole account of ``spec`` in memory, generated by plain Python."""
    plan = plan_account(spec)
    messages: list[StoreMessage] = []
    deletions: list[Deletion] = []
    for pieces in plan_slices(plan, 100_000):
        rows, deleted = generate_slice(plan, pieces)
        messages.extend(map(build_message, rows))
        deletions.extend(deleted)
    return assemble_dataset(plan, account_tables(plan), messages, deletions, keep_dates=keep_dates)


def assemble_dataset(
    plan: AccountPlan,
    tables: AccountTables,
    messages: Sequence[StoreMessage],
    deletions: Sequence[Deletion],
    *,
    keep_dates: bool,
) -> DemoDataset:
    """The dataset of a planned account from its tables, its messages (none when they
    are written part by part elsewhere) and its deletions, in date order."""
    spec = plan.spec
    return DemoDataset(
        seed=spec.seed,
        days=spec.days,
        now=spec.now,
        self_peer=plan.self_peer,
        peers=plan.peers,
        messages=tuple(messages),
        group_members=tuple(
            (chat.peer.id, chat.members)
            for chat in plan.chats
            if chat.peer.id.namespace == PeerNamespace.GROUP
        ),
        read_states=tables.read_states,
        pinned=tables.pinned,
        archived=tables.archived,
        notification_settings=tables.notification_settings,
        presences=tables.presences,
        log_from=spec.log_from,
        keep_dates=keep_dates,
        deletions=tuple(
            (PeerId(peer), id_, when)
            for peer, id_, when in sorted(deletions, key=lambda d: (d[2], d[0], d[1]))
        ),
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
    namespace = int(peer_id.namespace)
    text = ""
    while not text:  # a text message, not media
        text, media = content(rng.getrandbits(64), namespace, 0)
        text = "" if media else text
    return StoreMessage(
        peer_id, _CLOUD, message_id, timestamp, flags=_INCOMING, author_id=author, text=text
    )


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
