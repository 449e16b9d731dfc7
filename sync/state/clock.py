"""The server's time as the client estimates it, from the dates the server sends.

An outgoing message is stored at once with a date of the client's own making; the
server's answer replaces it. Telegram dates it by the server's time, as the client
knows it (``globalTimeDifference``), not by the device's wall clock, which may be set
years off or jump. ``ServerClock`` keeps the last date the server sent with the
client's wall and monotonic time when it came, and estimates the server's time now:

- the time elapsed since that date is the wall clock's, but never less than the
  monotonic clock's: a wall clock set back does not move the estimate back, and one
  that ran on while the process was suspended (the monotonic clock stops) counts the
  time asleep; a wall clock set forward runs the estimate ahead until the next date
  from the server sets it right;
- a date older than the one kept (a push held back on the way) teaches nothing: the
  server's dates never go back;
- with no date from the server yet, the wall clock is all there is;
- the estimate stays within ``0..MAX_MESSAGE_DATE``, what a message's date can be.

A process that slept (a laptop's lid closed) finds on waking that its wall clock ran
on while its monotonic clock stood still. ``ClockReading.slept`` measures that between
two looks: past ``WAKE_THRESHOLD`` the driver treats its connection as dead (it most
likely is, half-open, after a night) and reconnects, which asks for the difference, as
Telegram's clients do when they find the local time moved. A wall clock set forward
looks the same and costs one reconnect.

Nothing here reads a clock: every method takes the times as arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sync.protocol import (
    MAX_MESSAGE_DATE,
    Difference,
    DifferenceEmpty,
    ShortMessage,
    State,
    Updates,
)

__all__ = ["WAKE_THRESHOLD", "ClockReading", "ServerClock", "server_date_of"]

#: Seconds the wall clock may run beyond the monotonic one between two looks before
#: the process is taken to have slept.
WAKE_THRESHOLD = 10.0


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The client's wall and monotonic clocks read at one moment."""

    wall: float
    monotonic: float

    def slept(self, *, wall: float, monotonic: float) -> float:
        """Seconds the wall clock ran beyond the monotonic one since this reading: the
        time the process was suspended (or the wall clock was set forward); 0 if none."""
        return max(0.0, (wall - self.wall) - (monotonic - self.monotonic))

    def woke(self, *, wall: float, monotonic: float) -> bool:
        """Whether the process slept since this reading (beyond ``WAKE_THRESHOLD``)."""
        return self.slept(wall=wall, monotonic=monotonic) > WAKE_THRESHOLD


@dataclass(frozen=True, slots=True)
class ServerClock:
    """The last server date seen (``None``: none yet), with the client's wall and
    monotonic time at its arrival."""

    server_date: int | None = None
    wall: float = 0.0
    monotonic: float = 0.0

    def observe(self, server_date: int, *, wall: float, monotonic: float) -> ServerClock:
        """The clock after the server sent ``server_date`` (the time it is now, at
        the server) when the client's clocks read ``wall`` and ``monotonic``."""
        if self.server_date is not None and server_date < self.server_date:
            return self
        return ServerClock(server_date, wall, monotonic)

    def now(self, *, wall: float, monotonic: float) -> int:
        """The server's date now, in whole seconds within ``0..MAX_MESSAGE_DATE``."""
        if self.server_date is None:
            estimate = int(wall)
        else:
            elapsed = max(wall - self.wall, monotonic - self.monotonic, 0.0)
            estimate = self.server_date + int(elapsed)
        return min(max(estimate, 0), MAX_MESSAGE_DATE)


def server_date_of(answer: Any) -> int | None:
    """The server's date at the time of sending, for the answers and pushes that carry
    it (a state, a difference's final state, a push), else ``None``. A slice's
    intermediate state is not one (it keeps the request's date), nor a sent message (a
    send repeated after a lost answer gets the message stored then)."""
    if isinstance(answer, State):
        return answer.date
    if isinstance(answer, Difference):
        return answer.state.date
    if isinstance(answer, DifferenceEmpty | ShortMessage):
        return answer.date
    if isinstance(answer, Updates):
        return answer.date or None
    return None
