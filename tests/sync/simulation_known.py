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


_DEAD_PART = (
    "a PostboxError (disk full, database busy) raised in a transaction of the state manager"
    " or the outbound queue is not caught there: the part's task ends for good while the"
    " engine stays connected and looks alive, so pushes and outgoing entries pile up"
)
_NO_TIMEOUT = (
    "requests have no timeout: a lost response leaves its call (auth, getDifference, a"
    " send) waiting for as long as the connection stays up"
)

KNOWN_BUGS = (
    KnownBug("task died: state-manager: ", "storage", _DEAD_PART),
    KnownBug("task died: outbound: ", "storage", _DEAD_PART),
    KnownBug("settle: not quiescent", "storage", _DEAD_PART),
    KnownBug("account: N outgoing messages are still pending", "storage", _DEAD_PART),
    # An edit made after the outbound queue died stays local (seed 1232).
    KnownBug("peer N: message N differs from the server's", "storage", _DEAD_PART),
    KnownBug("settle: not quiescent", "drop-response", _NO_TIMEOUT),
)


def unexplained(outcome: Outcome) -> list[str]:
    """The outcome's divergence categories that no known bug accounts for."""
    return [
        category
        for category in outcome.categories
        if not any(
            category.startswith(bug.category) and bug.cause in outcome.mix for bug in KNOWN_BUGS
        )
    ]
