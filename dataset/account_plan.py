"""The plan of a generated account: who the chats are and when each one talks.

``plan_account(spec)`` decides, from the spec alone, everything that is per chat: the
peers and their names, each chat's message count (heavy-tailed), the days it was active
and how many messages fell on each, and the message ids of each day. Messages
themselves are then a pure function of (plan, chat, message index) in
``dataset.message_rows``, so any slice of any chat can be generated on its own, in
any process, with the same result: this is what lets a Spark job and a plain loop
produce the same dataset.

The plan costs O(chats + active chat-days) and is built once, on the driver.

Ids: channels number their messages themselves; private chats and groups share one
account-wide counter that ascends day by day (within a day, chat by chat), so ids are
unique across those chats and grow with time at day granularity.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections import Counter
from dataclasses import dataclass

from dataset.counter_hash import hash64, index_below, lognormal, unit
from dataset.name_tables import SELF_NAME
from dataset.peer_names import NAME_KEY, PeerNamer, slug
from dataset.vocabulary import HOUR_WEIGHTS
from postbox import Peer, PeerFlags, PeerId, PeerNamespace

__all__ = ["DAY", "DEMO_NOW", "AccountPlan", "AccountSpec", "ChatPlan", "plan_account"]

#: The dataset's default "now" (2024-06-01 18:30 UTC): the newest generated message is older.
DEMO_NOW = 1_717_266_600
DAY = 86_400

_USER = int(PeerNamespace.USER)
_GROUP = int(PeerNamespace.GROUP)
_CHANNEL = int(PeerNamespace.CHANNEL)

# Keys that name what a draw is for, so two properties never share a draw.
_K_KIND, _K_WEIGHT, _K_QUIET, _K_DAYS, _K_DAY_PICK, _K_NAME, _K_PEER, _K_MEMBERS = range(8)
# The peer namer draws under the plan's key for names, never under another property's.
assert _K_NAME == NAME_KEY
_K_IDS, _K_CHANNEL_ID = 8, 9
#: Messages laid out on a day together.
_THREAD = 3


@dataclass(frozen=True, slots=True)
class AccountSpec:
    """What to generate. ``log_days`` > 0 gives the server an update log of the last
    ``log_days`` days (edits and deletions in it included); ``delete_share`` is the
    share of messages deleted some time after they were sent."""

    seed: int
    users: int
    groups: int
    channels: int
    messages: int
    days: int
    now: int = DEMO_NOW
    log_days: int = 0
    edit_share: float = 0.02
    delete_share: float = 0.0

    @property
    def chats(self) -> int:
        return self.users + self.groups + self.channels

    @property
    def log_from(self) -> int | None:
        """The first second of the update log, or ``None`` without one."""
        return self.now - self.log_days * DAY if self.log_days else None


@dataclass(frozen=True, slots=True)
class ChatPlan:
    """One chat: its peer, message count and per-day layout.

    ``day_numbers[k]`` is the k-th active day (0 is the oldest day of the dataset),
    ``day_firsts[k]`` the index of its first message within the chat and
    ``day_ids[k]`` that message's id; ``day_firsts`` ends with ``count``. ``theme`` is
    what the chat talks about: the index of a group's theme, a channel's topic or a
    bot's kind in ``dataset.name_tables``, and -1 for a person.
    """

    position: int
    peer: Peer
    count: int
    members: tuple[PeerId, ...]
    day_numbers: tuple[int, ...]
    day_firsts: tuple[int, ...]
    day_ids: tuple[int, ...]
    theme: int = -1

    @property
    def namespace(self) -> int:
        return int(self.peer.id.namespace)

    def locate(self, index: int) -> tuple[int, int, int, int]:
        """(day number, index within the day, messages that day, id) of message ``index``."""
        k = bisect.bisect_right(self.day_firsts, index) - 1
        first = self.day_firsts[k]
        within = index - first
        return self.day_numbers[k], within, self.day_firsts[k + 1] - first, self.day_ids[k] + within


@dataclass(frozen=True, slots=True)
class AccountPlan:
    spec: AccountSpec
    self_peer: Peer
    chats: tuple[ChatPlan, ...]

    @property
    def peers(self) -> tuple[Peer, ...]:
        return tuple(chat.peer for chat in self.chats)


def plan_account(spec: AccountSpec) -> AccountPlan:
    seed = spec.seed
    kinds = _chat_kinds(spec)
    self_peer, peers, themes = _peers(seed, kinds)
    user_ids = [  # people, who can be members of groups
        peer.id
        for peer in peers
        if peer.id.namespace == PeerNamespace.USER and not peer.flags & PeerFlags.BOT
    ]
    counts = _message_counts(seed, len(peers), spec.messages)
    layouts = [
        _day_layout(seed, spec.days, position, count) for position, count in enumerate(counts)
    ]
    ids = _day_ids(seed, peers, layouts)
    chats = []
    for position, peer in enumerate(peers):
        members: tuple[PeerId, ...] = ()
        if peer.id.namespace == PeerNamespace.GROUP:
            members = _members(seed, position, user_ids)
        numbers, firsts = layouts[position]
        chats.append(
            ChatPlan(
                position,
                peer,
                counts[position],
                members,
                numbers,
                firsts,
                ids[position],
                themes[position],
            )
        )
    return AccountPlan(spec, self_peer, tuple(chats))


# -- peers ----------------------------------------------------------------------


def _chat_kinds(spec: AccountSpec) -> list[int]:
    """Chat kinds in chat order: shuffled by a keyed hash, a private chat first."""
    kinds = [_USER] * spec.users + [_GROUP] * spec.groups + [_CHANNEL] * spec.channels
    order = sorted(range(len(kinds)), key=lambda i: hash64(spec.seed, _K_KIND, i))
    shuffled = [kinds[i] for i in order]
    if _USER in shuffled:
        first_user = shuffled.index(_USER)
        shuffled[0], shuffled[first_user] = shuffled[first_user], shuffled[0]
    return shuffled


def _peers(seed: int, kinds: list[int]) -> tuple[Peer, list[Peer], list[int]]:
    """The account's own user, then each chat's peer and theme, every name distinct."""
    next_user = 100_000 + index_below(100_000, seed, _K_PEER, 0)
    next_group = 10_000 + index_below(10_000, seed, _K_PEER, 1)
    next_channel = 1_000_000 + index_below(1_000_000, seed, _K_PEER, 2)
    self_peer = Peer(
        PeerId.make(PeerNamespace.USER, next_user),
        SELF_NAME,
        username="me",
        access_hash=hash64(seed, _K_PEER, 3) >> 2,
        flags=int(PeerFlags.SELF),
    )
    namer = PeerNamer(seed)
    peers = []
    themes = []
    for position, kind in enumerate(kinds):
        access_hash = hash64(seed, _K_PEER, 4, position) >> 2
        theme = -1
        if kind == _USER:
            next_user += 1
            peer_id = PeerId.make(PeerNamespace.USER, next_user)
            if unit(seed, _K_NAME, position, 0) < 0.05:
                name, theme = namer.bot(position)
                bot = Peer(peer_id, name, slug(name) + "_bot", access_hash, int(PeerFlags.BOT))
                peers.append(bot)
            else:
                name = namer.person(position)
                username = slug(name) if unit(seed, _K_NAME, position, 4) < 0.5 else None
                peers.append(Peer(peer_id, name, username, access_hash))
        elif kind == _GROUP:
            next_group += 1
            name, theme = namer.group(position)
            peers.append(Peer(PeerId.make(PeerNamespace.GROUP, next_group), name, access_hash=0))
        else:
            next_channel += 1
            name, theme = namer.channel(position)
            flags = int(PeerFlags.BROADCAST)
            if unit(seed, _K_NAME, position, 9) < 0.3:
                flags |= PeerFlags.VERIFIED
            peer_id = PeerId.make(PeerNamespace.CHANNEL, next_channel)
            peers.append(Peer(peer_id, name, slug(name), access_hash, flags))
        themes.append(theme)
    return self_peer, peers, themes


def _members(seed: int, position: int, users: list[PeerId]) -> tuple[PeerId, ...]:
    if not users:
        return ()
    size = min(len(users), 3 + index_below(10, seed, _K_MEMBERS, position))
    chosen: set[int] = set()
    draw = 0
    while len(chosen) < size:  # distinct users by keyed draws: O(size), not O(users)
        chosen.add(index_below(len(users), seed, _K_MEMBERS, position, draw))
        draw += 1
    return tuple(sorted(users[i] for i in chosen))


# -- when chats talk ------------------------------------------------------------


def _message_counts(seed: int, chats: int, total: int) -> list[int]:
    """Split ``total`` over ``chats`` with log-normal weights (sigma 1.8): a few busy
    chats, a long tail. Every chat gets one message first if there are enough; the
    remainder goes by largest fractional part, so the counts add up exactly."""
    weights = [lognormal(1.8, seed, _K_WEIGHT, i) for i in range(chats)]
    base = 1 if total >= chats else 0
    scale = (total - base * chats) / sum(weights)
    shares = [weight * scale for weight in weights]
    counts = [base + math.floor(share) for share in shares]
    leftover = total - sum(counts)
    by_fraction = sorted(range(chats), key=lambda i: (math.floor(shares[i]) - shares[i], i))
    for i in by_fraction[:leftover]:
        counts[i] += 1
    return counts


def _day_layout(
    seed: int, days: int, position: int, count: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The chat's active days and the index of each day's first message (plus ``count``).

    Half the chats went quiet some time ago; busy days are heavy-tailed and weekends a
    little quieter. Messages are laid out in threes (the last three may be fewer), so
    a day holds a conversation rather than one message. Costs O(min(count, days)).
    """
    last = days - 1
    if unit(seed, _K_QUIET, position) < 0.5:
        quiet = int(-math.log(1.0 - unit(seed, _K_QUIET, position, 1)) * days / 4)
        last = max(days // 20, last - quiet)
    active = last + 1
    per_day: dict[int, int] = {}
    units = (count + _THREAD - 1) // _THREAD
    if units < active:
        picks = Counter(index_below(active, seed, _K_DAY_PICK, position, j) for j in range(units))
        per_day = dict(picks)
    elif units:
        weights = [
            lognormal(1.0, seed, _K_DAYS, position, d) * (0.8 if d % 7 in (2, 3) else 1.0)
            for d in range(active)
        ]
        scale = units / sum(weights)
        shares = [w * scale for w in weights]
        floors = [math.floor(s) for s in shares]
        leftover = units - sum(floors)
        for d in sorted(range(active), key=lambda d: (floors[d] - shares[d], d))[:leftover]:
            floors[d] += 1
        per_day = {d: n for d, n in enumerate(floors) if n}
    per_day = {d: n * _THREAD for d, n in per_day.items()}
    if per_day:  # the units hold up to two messages more than there are
        busiest = max(per_day, key=lambda d: (per_day[d], -d))
        per_day[busiest] -= units * _THREAD - count
    numbers = tuple(sorted(per_day))
    firsts = (0, *itertools.accumulate(per_day[d] for d in numbers))
    return numbers, firsts


def _day_ids(
    seed: int,
    peers: list[Peer],
    layouts: list[tuple[tuple[int, ...], tuple[int, ...]]],
) -> list[tuple[int, ...]]:
    """The id of each chat's first message on each of its days."""
    result: list[tuple[int, ...]] = []
    by_day: dict[int, list[tuple[int, int, int]]] = {}
    for position, (peer, (numbers, firsts)) in enumerate(zip(peers, layouts, strict=True)):
        if peer.id.namespace == PeerNamespace.CHANNEL:
            start = 1 + index_below(5_000, seed, _K_CHANNEL_ID, position)
            result.append(tuple(start + first for first in firsts[:-1]))
            continue
        result.append(())
        for k, day in enumerate(numbers):
            by_day.setdefault(day, []).append((position, k, firsts[k + 1] - firsts[k]))
    starts: dict[int, list[int]] = {}
    next_id = 10_000 + index_below(90_000, seed, _K_IDS)
    for day in sorted(by_day):
        for position, _k, count in by_day[day]:  # chat order within the day
            starts.setdefault(position, []).append(next_id)
            next_id += count
    for position, chat_starts in starts.items():
        result[position] = tuple(chat_starts)
    return result


@functools.lru_cache(maxsize=8)
def day_warp(now: int) -> tuple[tuple[float, ...], tuple[int, ...], tuple[int, ...]]:
    """Pieces of a day window ending at ``now``'s time of day, split at hour boundaries:
    (cumulative activity at each piece's start, piece start in seconds, piece weight).

    Mapping a uniform draw through it (``warp``) puts more messages by day than by
    night (UTC) and keeps the order of the draws.
    """
    phase = now % DAY
    starts = [0]
    while starts[-1] < DAY:
        absolute = phase + starts[-1]
        starts.append(min(DAY, starts[-1] + 3600 - absolute % 3600))
    starts.pop()
    weights = [HOUR_WEIGHTS[((phase + s) // 3600) % 24] for s in starts]
    ends = [*starts[1:], DAY]
    areas = (w * (e - s) for w, s, e in zip(weights, starts, ends, strict=True))
    cumulative = [0.0, *itertools.accumulate(areas)]
    return tuple(cumulative), tuple(starts), tuple(weights)


def warp(now: int, fraction: float) -> int:
    """Seconds into a day window for a draw ``fraction`` in [0, 1] (monotone)."""
    cumulative, starts, weights = day_warp(now)
    x = fraction * cumulative[-1]
    piece = min(len(starts) - 1, bisect.bisect_right(cumulative, x) - 1)
    return min(DAY - 1, starts[piece] + int((x - cumulative[piece]) / weights[piece]))
