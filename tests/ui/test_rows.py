"""What rows say, without Qt: avatar initials and how presence reads."""

from __future__ import annotations

import pytest

from postbox import PeerPresence, PresenceStatus
from ui.rows import initials, presence_text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Alice Baker", "AB"),
        ("Web Dev Notes", "WD"),
        ("Travel Notes · Autumn 2026", "TN"),
        ("Climbing Club · Summer trip", "CC"),
        ("Katarzyna Nowak (Kasia)", "KN"),
        ("Chen Ito 🌴", "CI"),
        ("Chen 🌴", "C"),
        ("Room 101", "R"),
        ("şahin can", "ŞC"),
        ("2026", "2"),
        ("(Kasia) Nowak", "KN"),
        ("· ·", "?"),
        ("", "?"),
    ],
)
def test_initials_are_the_first_letters_of_the_first_two_words(name: str, expected: str) -> None:
    assert initials(name) == expected


NOW = 1_800_000_000  # 2027-01-15 08:00 UTC


@pytest.mark.parametrize(
    ("presence", "expected"),
    [
        (PeerPresence(PresenceStatus.ONLINE, NOW + 300), "online"),
        (PeerPresence(PresenceStatus.ONLINE, NOW - 20), "last seen just now"),  # it lapsed
        (PeerPresence(PresenceStatus.OFFLINE, NOW - 300), "last seen 5 minutes ago"),
        (PeerPresence(PresenceStatus.OFFLINE, NOW - 60), "last seen 1 minute ago"),
        (PeerPresence(PresenceStatus.OFFLINE, NOW - 2 * 3600), "last seen today at 06:00"),
        (PeerPresence(PresenceStatus.OFFLINE, NOW - 12 * 3600), "last seen yesterday at 20:00"),
        (PeerPresence(PresenceStatus.OFFLINE, NOW - 5 * 86_400), "last seen 10.01.27"),
        (PeerPresence(PresenceStatus.RECENTLY), "last seen recently"),
        (PeerPresence(PresenceStatus.LONG_AGO), "last seen a long time ago"),
        (None, "last seen a long time ago"),
    ],
)
def test_presence_reads_as_telegram_says_it(presence: PeerPresence | None, expected: str) -> None:
    assert presence_text(presence, NOW) == expected
