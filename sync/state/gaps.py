"""Gap deadlines: how long a counter waits for a missing update, on a clock passed in.

A counter (the account's pts, its qts, the seq, or one channel's pts) that holds updates
beyond a missing one gets a deadline ``timeout`` after the gap was first seen; the
gap closing clears it. An update that overlaps the position ("inconsistent") cannot
be waited out and is resolved at once. ``expired(now)`` hands back the counters whose
wait is over: for them the driver asks for the difference (the account's) or the
channel's difference. Nothing here reads a clock: every method takes ``now``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ACCOUNT_PTS", "POSSIBLE_GAP_TIMEOUT", "QTS", "SEQ", "GapDeadlines", "GapKey"]

#: Seconds to wait for a missing update (the known clients wait 0.5 to 1 s).
POSSIBLE_GAP_TIMEOUT = 0.5

#: A counter: ``ACCOUNT_PTS``, ``QTS``, ``SEQ``, or a channel's id.
GapKey = int | None
ACCOUNT_PTS: GapKey = None
SEQ: GapKey = -1
QTS: GapKey = -2


@dataclass(slots=True)
class GapDeadlines:
    """The counters waiting for a missing update, each with its deadline."""

    timeout: float = POSSIBLE_GAP_TIMEOUT
    _deadlines: dict[GapKey, float] = field(default_factory=dict)
    #: Gaps seen so far (each wait started), for the engine's counters.
    opened: int = 0

    def observe(self, key: GapKey, *, gap: bool, inconsistent: bool, now: float) -> bool:
        """What one check of ``key``'s counter found; ``True`` if it must be resolved
        now (an update overlapped its position: no wait can fix that)."""
        if inconsistent:
            self._deadlines.pop(key, None)
            return True
        if not gap:
            self._deadlines.pop(key, None)
        elif key not in self._deadlines:
            self._deadlines[key] = now + self.timeout
            self.opened += 1
        return False

    def clear(self, key: GapKey) -> None:
        """``key`` was resolved another way (a difference covered it)."""
        self._deadlines.pop(key, None)

    def expired(self, now: float) -> list[GapKey]:
        """The counters whose wait is over, oldest deadline first; they are cleared."""
        due = sorted(
            (deadline, index, key)
            for index, (key, deadline) in enumerate(self._deadlines.items())
            if deadline <= now
        )
        for _, _, key in due:
            del self._deadlines[key]
        return [key for _, _, key in due]

    def next_deadline(self) -> float | None:
        """When the next wait ends, if any counter waits."""
        return min(self._deadlines.values(), default=None)

    def waiting(self, key: GapKey) -> bool:
        return key in self._deadlines
