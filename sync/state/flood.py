"""Flood waits: which kinds of request must wait, and until when, on a clock passed in.

A server that finds an account calling one kind of method too often answers
``FLOOD_WAIT`` with a number of seconds (Telegram's ``FLOOD_WAIT_X``). That kind of
method (``sync.protocol.FLOOD_LIMITED`` names the kinds) is not called again before
the wait is over; every other kind goes on. ``FloodWaits`` keeps the deadlines: the
driver tells it each answer with the time, and asks before each call how long to wait.
Nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.protocol import FLOOD_LIMITED, MAX_FLOOD_WAIT

__all__ = ["MIN_FLOOD_WAIT", "FloodWaits", "flood_kind"]

#: The shortest wait kept: a wait of 0 would send the request again at once, and a
#: server that keeps saying so would have the client spin.
MIN_FLOOD_WAIT = 1.0


def flood_kind(method: str) -> str:
    """The rate limit a method counts against: its kind, or the method itself."""
    return FLOOD_LIMITED.get(method, method)


@dataclass(slots=True)
class FloodWaits:
    """Until when each kind of method waits after a ``FLOOD_WAIT``."""

    _until: dict[str, float] = field(default_factory=dict)
    #: Flood waits received so far, for the engine's counters.
    received: int = 0

    def observe(self, kind: str, seconds: float, now: float) -> float:
        """The server asked ``kind`` to wait ``seconds`` (held within ``MIN_FLOOD_WAIT``
        and ``MAX_FLOOD_WAIT``) from ``now``; when that kind may be called again. A
        shorter wait never cuts one already running short."""
        seconds = min(max(seconds, MIN_FLOOD_WAIT), float(MAX_FLOOD_WAIT))
        self.received += 1
        until = max(self._until.get(kind, now), now + seconds)
        self._until[kind] = until
        return until

    def delay(self, kind: str, now: float) -> float:
        """Seconds to wait before calling a method of ``kind``; 0 once its wait is over."""
        until = self._until.get(kind)
        if until is None:
            return 0.0
        if until <= now:
            del self._until[kind]
            return 0.0
        return until - now

    def waiting(self, now: float) -> tuple[tuple[str, float], ...]:
        """The kinds still waiting and the seconds left for each, by kind."""
        return tuple(
            (kind, until - now) for kind, until in sorted(self._until.items()) if until > now
        )
