"""Distinct names for a generated account's peers, without numbers to tell them apart.

``PeerNamer`` names peers one after another (in chat order, on the driver) and never
gives a name twice. A person is a given name and a family name, mostly of one region of
origin; when the draws keep hitting names already taken, a middle initial comes in
("Mei L. Chen"), and past that (hundreds of thousands of people) a bijection from a
counter to given name, family name and two or more initials, which cannot repeat.
Groups, channels and bots are a theme and a pattern ("Climbing Crew", "Football Daily",
"Weather Helper"); when those run out, a city ("Lisbon Climbing Crew"), then a second
theme or a language edition, each tier numbered by a bijection so it cannot repeat.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence

from dataset.counter_hash import hash64
from dataset.name_tables import (
    BOT_KINDS,
    BOT_PATTERNS,
    CHANNEL_PATTERNS,
    CHANNEL_TOPICS,
    CITIES,
    EDITIONS,
    GROUP_NOUNS,
    GROUP_THEMES,
    REGIONS,
    SELF_NAME,
)

__all__ = ["ALL_FAMILY_NAMES", "ALL_GIVEN_NAMES", "NAME_KEY", "PeerNamer", "slug"]

ALL_GIVEN_NAMES = tuple(dict.fromkeys(name for given, _ in REGIONS for name in given))
ALL_FAMILY_NAMES = tuple(dict.fromkeys(name for _, family in REGIONS for name in family))
_INITIALS = "ABCDEFGHIJKLMNOPRSTVW"
#: Random draws of a tier before the next one is tried.
_TRIES = 6
#: Share of people whose family name comes from another region than their given name.
_MIXED_SHARE = 38  # of 256

#: The key of the account plan's draws for names; theirs use the sub-keys 0 to 19.
NAME_KEY = 5
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def slug(name: str, joint: str = "_") -> str:
    """A username (or an address's path) made of a name: ASCII letters and digits,
    words joined by ``joint``."""
    if not name.isascii():
        name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return _NOT_WORD.sub(joint, name.lower()).strip(joint)


#: One tier of names: the size of each of its tables, and how a choice reads.
Tier = tuple[tuple[int, ...], Callable[[tuple[int, ...]], str]]


def _digits(index: int, sizes: Sequence[int]) -> tuple[int, ...]:
    out = []
    for size in reversed(sizes):
        index, digit = divmod(index, size)
        out.append(digit)
    return tuple(reversed(out))


class _Bijection:
    """The k-th name of a tier, for k = 0, 1, 2 ...: a scrambled bijection onto its
    combinations (k * stride + offset modulo their number, stride coprime to it)."""

    def __init__(self, seed: int, key: int, sizes: tuple[int, ...]) -> None:
        self.sizes = sizes
        self.capacity = math.prod(sizes)
        self.offset = hash64(seed, key, 0) % self.capacity
        stride = (hash64(seed, key, 1) % self.capacity) | 1
        while math.gcd(stride, self.capacity) != 1:
            stride += 1
        self.stride = stride

    def __getitem__(self, k: int) -> tuple[int, ...]:
        return _digits((k * self.stride + self.offset) % self.capacity, self.sizes)


class PeerNamer:
    """Names peers of one seed in order; each name differs from all names before it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.used = {SELF_NAME}
        self._spare_people = 0
        # Per kind of name: the bijective tiers and how many of their names are taken.
        self._tiers: dict[str, list[tuple[_Bijection, Callable[[tuple[int, ...]], str]]]] = {}
        self._taken: dict[str, int] = {}

    def _draw(self, position: int, *keys: int) -> int:
        return hash64(self.seed, NAME_KEY, position, *keys)

    def _take(self, name: str) -> bool:
        if name in self.used:
            return False
        self.used.add(name)
        return True

    # -- people ----------------------------------------------------------------------

    def person(self, position: int) -> str:
        """A person's name: given and family name, with a middle initial or more only
        when the plain ones keep being taken."""
        for attempt in range(2 * _TRIES):
            h = self._draw(position, 20 + attempt)
            given, family = REGIONS[h % len(REGIONS)]
            if (h >> 16) & 0xFF < _MIXED_SHARE:
                family = REGIONS[(h >> 24) % len(REGIONS)][1]
            first, last = given[(h >> 32) % len(given)], family[(h >> 40) % len(family)]
            if attempt < _TRIES:
                name = f"{first} {last}"
            else:
                name = f"{first} {_INITIALS[(h >> 48) % len(_INITIALS)]}. {last}"
            if self._take(name):
                return name
        while True:  # the tiers above hold one initial at most: these cannot clash
            name = self._spare_person(self._spare_people)
            self._spare_people += 1
            if self._take(name):
                return name

    def _spare_person(self, k: int) -> str:
        """The k-th name with two or more initials (a bijection from k)."""
        count = 2
        capacity = len(ALL_GIVEN_NAMES) * len(ALL_FAMILY_NAMES) * len(_INITIALS) ** count
        while k >= capacity:
            k -= capacity
            count += 1
            capacity *= len(_INITIALS)
        sizes = (len(ALL_GIVEN_NAMES), len(ALL_FAMILY_NAMES), *[len(_INITIALS)] * count)
        first, last, *initials = _digits(k, sizes)
        middle = " ".join(f"{_INITIALS[i]}." for i in initials)
        return f"{ALL_GIVEN_NAMES[first]} {middle} {ALL_FAMILY_NAMES[last]}"

    # -- groups, channels, bots ------------------------------------------------------

    def _themed(self, kind: str, position: int, first: Tier, tiers: list[Tier]) -> tuple[str, int]:
        """A name of ``first``'s tables (random draws), else of the next tiers' in turn
        (bijections), and its theme (the first table's choice)."""
        sizes, render = first
        for attempt in range(_TRIES):
            h = self._draw(position, 40 + attempt)
            choice = tuple((h >> (16 * i)) % size for i, size in enumerate(sizes))
            if self._take(name := render(choice)):
                return name, choice[0]
        if kind not in self._tiers:
            self._tiers[kind] = [
                (_Bijection(self.seed, 1000 + 10 * number + len(kind), tier_sizes), tier_render)
                for number, (tier_sizes, tier_render) in enumerate(tiers)
            ]
            self._taken[kind] = 0
        while True:
            k = self._taken[kind]
            self._taken[kind] += 1
            for bijection, tier_render in self._tiers[kind]:
                if k < bijection.capacity:
                    choice = bijection[k]
                    if self._take(name := tier_render(choice)):
                        return name, choice[0]
                    break
                k -= bijection.capacity
            else:
                raise ValueError(f"more {kind} names asked for than there are")

    def group(self, position: int) -> tuple[str, int]:
        """A group's name and theme (an index of ``GROUP_THEMES``)."""
        themes, nouns, cities = len(GROUP_THEMES), len(GROUP_NOUNS), len(CITIES)

        def plain(c: tuple[int, ...]) -> str:
            return f"{GROUP_THEMES[c[0]][0]} {GROUP_NOUNS[c[1]]}"

        def local(c: tuple[int, ...]) -> str:
            return f"{CITIES[c[2]]} {plain(c)}"

        def double(c: tuple[int, ...]) -> str:
            second = GROUP_THEMES[(c[0] + 1 + c[3]) % themes][0]
            return f"{CITIES[c[2]]} {GROUP_THEMES[c[0]][0]} & {second} {GROUP_NOUNS[c[1]]}"

        return self._themed(
            "group",
            position,
            ((themes, nouns), plain),
            [((themes, nouns, cities), local), ((themes, nouns, cities, themes - 1), double)],
        )

    def channel(self, position: int) -> tuple[str, int]:
        """A channel's name and topic (an index of ``CHANNEL_TOPICS``)."""
        topics, patterns, cities = len(CHANNEL_TOPICS), len(CHANNEL_PATTERNS), len(CITIES)

        def plain(c: tuple[int, ...]) -> str:
            return CHANNEL_PATTERNS[c[1]].format(CHANNEL_TOPICS[c[0]][0])

        def local(c: tuple[int, ...]) -> str:
            return CHANNEL_PATTERNS[c[1]].format(f"{CITIES[c[2]]} {CHANNEL_TOPICS[c[0]][0]}")

        def edition(c: tuple[int, ...]) -> str:
            return f"{local(c)} ({EDITIONS[c[3]]})"

        return self._themed(
            "channel",
            position,
            ((topics, patterns), plain),
            [((topics, patterns, cities), local), ((topics, patterns, cities, 10), edition)],
        )

    def bot(self, position: int) -> tuple[str, int]:
        """A bot's name and kind (an index of ``BOT_KINDS``)."""
        kinds, patterns, cities = len(BOT_KINDS), len(BOT_PATTERNS), len(CITIES)

        def plain(c: tuple[int, ...]) -> str:
            return BOT_PATTERNS[c[1]].format(BOT_KINDS[c[0]])

        def local(c: tuple[int, ...]) -> str:
            return BOT_PATTERNS[c[1]].format(f"{CITIES[c[2]]} {BOT_KINDS[c[0]]}")

        def edition(c: tuple[int, ...]) -> str:
            return f"{local(c)} ({EDITIONS[c[3]]})"

        return self._themed(
            "bot",
            position,
            ((kinds, patterns), plain),
            [((kinds, patterns, cities), local), ((kinds, patterns, cities, 10), edition)],
        )
