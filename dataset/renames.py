"""Renames that read like renames, and renaming back.

A group adds what it is about this season ("Climbing Club · Summer trip"), a channel
a season and year ("Football Daily · Summer 2024"), a person a nickname
("Katarzyna Nowak (Kasia)") or a status emoji ("Chen Ito 🌴"). Renaming a peer whose
name carries such an addition takes it off again, so names do not pile up.
"""

from __future__ import annotations

import datetime

from dataset.name_tables import NICKNAMES
from postbox import PeerNamespace

__all__ = ["GROUP_OCCASIONS", "STATUS_EMOJI", "renamed", "season"]

_SEPARATOR = " · "
GROUP_OCCASIONS = (
    "Summer trip", "Birthday planning", "Road trip", "Reunion", "New season", "Weekend away",
    "Christmas dinner", "Moving day", "Finals week", "Cabin weekend",
)  # fmt: skip
#: What a person may put after their name for a while (emoji presentation, one column
#: pair each).
STATUS_EMOJI = ("🌴", "🎄", "💻", "🎓", "🚲", "🌞", "🏃", "🎧")
_SEASONS = ("Winter", "Winter", "Spring", "Spring", "Spring", "Summer", "Summer", "Summer",
            "Autumn", "Autumn", "Autumn", "Winter")  # fmt: skip


def season(now: int) -> str:
    """The season and year of the Unix time ``now`` ("Summer 2024"), northern."""
    date = datetime.datetime.fromtimestamp(now, datetime.UTC)
    return f"{_SEASONS[date.month - 1]} {date.year}"


def renamed(name: str, namespace: int, h: int, now: int) -> str:
    """The new name of a peer called ``name`` (of peer ``namespace``), from the draw
    ``h`` at Unix time ``now``: an addition of its kind, or the name without one."""
    if _SEPARATOR in name:
        return name.split(_SEPARATOR)[0]
    if namespace == int(PeerNamespace.GROUP):
        return f"{name}{_SEPARATOR}{GROUP_OCCASIONS[h % len(GROUP_OCCASIONS)]}"
    if namespace == int(PeerNamespace.CHANNEL):
        return f"{name}{_SEPARATOR}{season(now)}"
    if name.endswith(")") and " (" in name:
        return name[: name.rindex(" (")]
    base, _, last = name.rpartition(" ")
    if base and last in STATUS_EMOJI:
        return base
    nickname = NICKNAMES.get(name.split(" ")[0])
    if nickname is not None and h & 1:
        return f"{name} ({nickname})"
    return f"{name} {STATUS_EMOJI[(h >> 1) % len(STATUS_EMOJI)]}"
