"""Fault injection on one connection: pushes dropped, duplicated, reordered, delayed,
replaced by "too long", the connection cut; answers dropped, delayed or cut mid-frame.

Every decision comes from a ``random.Random`` seeded with the server's seed and the
connection's number (one for pushes, one for answers), so the same seed and the same
traffic and requests give the same faults.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sync.protocol import (
    AnyUpdates,
    UpdateChannelTooLong,
    UpdateDeleteChannelMessages,
    UpdateEditChannelMessage,
    UpdateNewChannelMessage,
    UpdateReadChannelInbox,
    Updates,
    UpdatesTooLong,
)
from sync.server.config import FaultConfig
from sync.server.flood import FloodLimiter

__all__ = ["Delivery", "FaultInjector", "ResponsePlan"]

_CHANNEL_UPDATES = (
    UpdateNewChannelMessage,
    UpdateEditChannelMessage,
    UpdateDeleteChannelMessages,
    UpdateReadChannelInbox,
)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One push to send, ``delay`` seconds from now."""

    updates: AnyUpdates
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class ResponsePlan:
    """What happens to one answer: sent after ``delay`` seconds, never sent, or cut."""

    drop: bool = False
    cut: bool = False
    delay: float = 0.0


_SEND_NOW = ResponsePlan()


def _channel_of(update: object) -> int | None:
    if isinstance(update, UpdateNewChannelMessage | UpdateEditChannelMessage):
        return update.message.peer
    if isinstance(update, UpdateDeleteChannelMessages | UpdateReadChannelInbox):
        return update.channel
    return None


@dataclass(slots=True)
class FaultInjector:
    config: FaultConfig
    rng: random.Random
    #: Pushes held back for reordering.
    held: list[AnyUpdates] = field(default_factory=list)
    #: The next getDifference answers "too long" (a push was replaced by updatesTooLong).
    difference_too_long: bool = False
    #: Every getDifference from a pts below this answers "too long": the device fell
    #: that far behind, and a retry from a few pts on is no nearer.
    too_long_below: int = 0
    #: Channels whose next getChannelDifference answers "too long".
    channels_too_long: set[int] = field(default_factory=set)
    pushes_sent: int = 0
    #: Decides the answers' faults, apart from ``rng`` so push faults stay as they were.
    response_rng: random.Random = field(default_factory=lambda: random.Random(0))
    responses_dropped: int = 0
    responses_delayed: int = 0
    #: The connection's rate limits (``FaultConfig.flood_limit``), if any.
    flood: FloodLimiter | None = None

    def __post_init__(self) -> None:
        if self.config.flood_limit and self.flood is None:
            self.flood = FloodLimiter(self.config.flood_limit, self.config.flood_window)

    def check_rate(self, method: str, now: float) -> None:
        """Refuse a call over the connection's rate limit with ``FLOOD_WAIT``."""
        if self.flood is not None:
            self.flood.check(method, now)

    @classmethod
    def for_connection(cls, config: FaultConfig, seed: int, number: int) -> FaultInjector:
        return cls(
            config,
            random.Random(f"faults:{seed}:{number}"),
            response_rng=random.Random(f"response-faults:{seed}:{number}"),
        )

    def plan_response(self) -> ResponsePlan:
        """What to do with the next answer on this connection."""
        config = self.config
        if not config.any_response:
            return _SEND_NOW
        rng = self.response_rng
        if config.cut_response and rng.random() < config.cut_response:
            return ResponsePlan(cut=True)
        if config.drop_response and rng.random() < config.drop_response:
            self.responses_dropped += 1
            return ResponsePlan(drop=True)
        if config.delay_response:
            self.responses_delayed += 1
            return ResponsePlan(delay=rng.uniform(0.0, config.delay_response))
        return _SEND_NOW

    def plan(self, updates: AnyUpdates) -> list[Delivery]:
        """What to send, and when, for one push (possibly nothing, possibly later)."""
        config = self.config
        if not config.any:
            return [Delivery(updates)]
        rng = self.rng
        updates = self._maybe_too_long(updates)
        if config.drop and rng.random() < config.drop:
            return []
        copies = 2 if config.duplicate and rng.random() < config.duplicate else 1
        pending = [updates] * copies
        if config.reorder:
            self.held.extend(pending)
            if len(self.held) < config.reorder:
                return []
            pending = self.release_held()
        return [Delivery(item, self._delay()) for item in pending]

    def release_held(self) -> list[AnyUpdates]:
        """The held pushes, shuffled; called when the window fills or its timer fires."""
        held, self.held = self.held, []
        self.rng.shuffle(held)
        return held

    def count_sent(self) -> bool:
        """Count one push sent; ``True`` when the connection should now be cut."""
        self.pushes_sent += 1
        every = self.config.disconnect_every
        return bool(every) and self.pushes_sent % every == 0

    def _delay(self) -> float:
        return self.rng.uniform(0.0, self.config.delay) if self.config.delay else 0.0

    def _maybe_too_long(self, updates: AnyUpdates) -> AnyUpdates:
        config = self.config
        if config.too_long and self.rng.random() < config.too_long:
            self.difference_too_long = True
            return UpdatesTooLong()
        if not config.channel_too_long or not isinstance(updates, Updates):
            return updates
        channels = {c for c in map(_channel_of, updates.updates) if c is not None}
        if not channels or self.rng.random() >= config.channel_too_long:
            return updates
        self.channels_too_long |= channels
        kept = tuple(u for u in updates.updates if not isinstance(u, _CHANNEL_UPDATES))
        hints = tuple(UpdateChannelTooLong(channel) for channel in sorted(channels))
        return Updates(kept + hints, updates.peers, updates.date, updates.seq_start, updates.seq)
