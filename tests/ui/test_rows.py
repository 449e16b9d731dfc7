"""What rows say, without Qt: avatar initials and how presence reads."""

from __future__ import annotations

import pytest

from ui.rows import initials


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
