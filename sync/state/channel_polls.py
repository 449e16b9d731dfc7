"""Channel poll timeouts: when a channel may be polled again, on a clock passed in.

Every channel difference may carry a ``timeout`` (Telegram's
``updates.channelDifference.timeout``): the seconds the client is not to ask that
channel's difference again for. ``ChannelPollTimeouts`` keeps those deadlines; the
driver tells it each final answer with the time, asks which of the channels it wants
to poll are due now, and wakes at the next deadline for the rest. Nothing here reads a
clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["MAX_CHANNEL_TIMEOUT", "ChannelPollTimeouts"]

#: The longest timeout kept, in seconds: a larger one is held to this, so that a
#: server cannot keep a channel from being polled for days.
MAX_CHANNEL_TIMEOUT = 3600.0


@dataclass(slots=True)
class ChannelPollTimeouts:
    """Until when each channel is not to be polled."""

    _not_before: dict[int, float] = field(default_factory=dict)

    def observe(self, channel: int, timeout: float | None, *, final: bool, now: float) -> None:
        """A channel difference for ``channel`` came at ``now``. A final one with a
        timeout holds the channel's next poll back that long (at most
        ``MAX_CHANNEL_TIMEOUT``); one that is not final must be followed at once, and
        one without a timeout lifts an earlier hold."""
        if final and timeout is not None and timeout > 0:
            self._not_before[channel] = now + min(float(timeout), MAX_CHANNEL_TIMEOUT)
        else:
            self._not_before.pop(channel, None)

    def due(self, channels: Iterable[int], now: float) -> list[int]:
        """Those of ``channels`` that may be polled at ``now``, in order."""
        ready = []
        for channel in sorted(channels):
            until = self._not_before.get(channel)
            if until is not None and until > now:
                continue
            self._not_before.pop(channel, None)
            ready.append(channel)
        return ready

    def next_deadline(self, channels: Iterable[int]) -> float | None:
        """When the first of ``channels`` held back may be polled, if any is."""
        return min((self._not_before[c] for c in channels if c in self._not_before), default=None)

    def held_until(self, channel: int) -> float | None:
        return self._not_before.get(channel)
