"""How long the engine waits, and how it spaces out retries.

``Timeouts`` holds every wait in one place (tests shorten them). ``loop_time`` is the
running loop's clock, virtual in the simulation. ``Backoff`` gives the pauses between
attempts of something that keeps failing: doubling from a first to a last pause, each
drawn at random from its upper half ("equal jitter"), so that many clients cut off
at once do not come back at once.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

__all__ = ["Backoff", "Timeouts", "loop_time"]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long the engine waits; tests shorten them."""

    #: Wait for a missing update before asking for the difference (the known clients: 0.5-1 s).
    gap: float = 0.5
    #: Poll the difference after this long without any push.
    quiet_poll: float = 15 * 60
    #: Reconnect back-off, doubling from the first to the last.
    reconnect_min: float = 0.1
    reconnect_max: float = 5.0
    #: A connection that stayed up this long was healthy: the back-off starts over.
    stable_connection: float = 10.0
    #: A request not answered in this long is lost: the connection is dropped and the
    #: request sent again on the next one.
    request: float = 20.0
    #: A fetch whose result was used is not repeated for this long (hole filler).
    fill_cooldown: float = 20.0
    #: A fetch whose hole left the view is kept this long in case it comes back.
    fill_grace: float = 2.0
    #: A validation whose answer came from a pts not stored yet is asked again after
    #: this long (the engine catches up meanwhile).
    validation_retry: float = 1.0
    #: First and last pause between retries of a failed operation.
    retry_min: float = 0.2
    retry_max: float = 30.0
    #: How often the engine compares its wall and monotonic clocks to notice that the
    #: process slept (``sync.state.ClockReading``).
    wake_check: float = 5.0
    #: How often a process sharing its database looks whether it is (still) the one
    #: that syncs it: the longest a standby waits to take over from a killed master.
    master_check: float = 0.5


def loop_time() -> float:
    """The running event loop's clock (virtual in a simulation); the monotonic clock
    when no loop runs (the loop's default clock)."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()


class Backoff:
    """Pauses that double from ``first`` to ``last``, with jitter; ``reset`` on success."""

    def __init__(self, first: float, last: float, rng: random.Random | None = None) -> None:
        self.first = first
        self.last = last
        self._rng = rng or random.Random()
        self.failures = 0

    def next(self) -> float:
        """The pause before the next attempt, and one more failure counted."""
        ceiling: float = min(self.last, self.first * 2.0 ** min(self.failures, 60))
        self.failures += 1
        return ceiling / 2 + self._rng.random() * ceiling / 2

    def reset(self) -> None:
        self.failures = 0
