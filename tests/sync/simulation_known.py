"""Engine bugs the simulation has found and that are not fixed yet.

``KNOWN_BUGS`` says which divergences are expected, and only when the schedule's fault
mix holds their cause: any other failure is new. Which seeds fail moves with every
change of the engine's timing, so seeds are not pinned here; once a fix lands, rerun
``python -m sync.simulation --count 500 --jobs 2`` and drop the bugs no seed shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from sync.simulation import Outcome

__all__ = ["KNOWN_BUGS", "KnownBug", "unexplained"]


@dataclass(frozen=True, slots=True)
class KnownBug:
    #: How the divergence's category starts.
    category: str
    #: A part of the fault mix without which this divergence is a new bug.
    cause: str
    diagnosis: str


KNOWN_BUGS: tuple[KnownBug, ...] = ()


def unexplained(outcome: Outcome) -> list[str]:
    """The outcome's divergence categories that no known bug accounts for."""
    return [
        category
        for category in outcome.categories
        if not any(
            category.startswith(bug.category) and bug.cause in outcome.mix for bug in KNOWN_BUGS
        )
    ]
