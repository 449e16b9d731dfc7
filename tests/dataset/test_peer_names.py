"""Peer names: distinct without numbers to tell them apart, at any size."""

from __future__ import annotations

import re

from dataset import AccountSpec, plan_account
from dataset.name_tables import CITIES
from dataset.peer_names import (
    _INITIALS,
    ALL_FAMILY_NAMES,
    ALL_GIVEN_NAMES,
    PeerNamer,
    _Bijection,
    slug,
)
from postbox import PeerFlags, PeerNamespace

_NUMBERED = re.compile(r"\d")


def test_a_realistic_account_has_distinct_names_without_numbers():
    plan = plan_account(AccountSpec(3, 2_000, 500, 300, 0, 30))
    names = [chat.peer.name for chat in plan.chats] + [plan.self_peer.name]
    assert len(set(names)) == len(names)
    assert not [name for name in names if _NUMBERED.search(name)]
    people = [
        chat.peer.name
        for chat in plan.chats
        if chat.namespace == int(PeerNamespace.USER) and not chat.peer.flags & PeerFlags.BOT
    ]
    # Given and family name, now and then a middle initial; never more.
    assert all(2 <= len(name.split(" ")) <= 4 for name in people)
    assert sum("." in name for name in people) < len(people) // 10
    usernames = [chat.peer.username for chat in plan.chats if chat.peer.username]
    assert all(re.fullmatch(r"[a-z0-9_]+", name) for name in usernames)


def test_groups_channels_and_bots_stay_distinct_past_their_plain_names():
    namer = PeerNamer(9)
    groups = [namer.group(position) for position in range(1_500)]
    channels = [namer.channel(10_000 + position) for position in range(800)]
    bots = [namer.bot(20_000 + position) for position in range(300)]
    names = [name for name, _ in groups + channels + bots]
    assert len(set(names)) == len(names)
    assert not [name for name in names if _NUMBERED.search(name)]
    # Past their plain names (945 groups, 480 channels, 144 bots) a city comes in.
    for named in (groups, channels, bots):
        assert any(any(city in name for city in CITIES) for name, _ in named)
    assert all(theme >= 0 for _, theme in groups + channels + bots)


def test_a_tier_bijection_reaches_every_combination_once():
    bijection = _Bijection(5, 1, (7, 4, 3))
    choices = [bijection[k] for k in range(bijection.capacity)]
    assert len(set(choices)) == bijection.capacity == 84
    assert all(0 <= a < 7 and 0 <= b < 4 and 0 <= c < 3 for a, b, c in choices)


def test_spare_people_are_distinct_with_two_or_more_initials():
    namer = PeerNamer(1)
    capacity = len(namer._spare_person(0).split(" "))  # given, two initials, family
    assert capacity == 4
    sample = [namer._spare_person(k) for k in range(0, 40_000_000, 9_973)]
    assert len(set(sample)) == len(sample)
    two_initials = len(ALL_GIVEN_NAMES) * len(ALL_FAMILY_NAMES) * len(_INITIALS) ** 2
    assert namer._spare_person(two_initials - 1).count(".") == 2
    beyond = namer._spare_person(two_initials)  # past two initials: a third comes in
    assert beyond.count(".") == 3
    assert not _NUMBERED.search(beyond)


def test_slugs_are_ascii_usernames():
    assert slug("Lucía García") == "lucia_garcia"
    assert slug("Daan de Vries") == "daan_de_vries"
    assert slug("Mei L. Chen") == "mei_l_chen"
    assert slug("Ten-minute pasta? We tried it", "-") == "ten-minute-pasta-we-tried-it"
