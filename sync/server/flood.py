"""Rate limits: how often one connection may call each kind of method.

As Telegram's ``FLOOD_WAIT_X``: a connection that calls one kind of method (sends,
differences, channel differences, history; ``sync.protocol.FLOOD_LIMITED``) more than
``limit`` times within ``window`` seconds is refused with ``FLOOD_WAIT`` and the whole
seconds until its oldest counted call leaves the window. A refused call is not counted,
and the other kinds go on. Time is passed in.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field

from sync.protocol import FLOOD_LIMITED, ErrorCode, ProtocolError

__all__ = ["FloodLimiter"]


@dataclass(slots=True)
class FloodLimiter:
    """The calls of each limited kind within the last ``window`` seconds."""

    limit: int
    window: float
    _calls: dict[str, collections.deque[float]] = field(default_factory=dict)
    #: Calls refused so far.
    refused: int = 0

    def check(self, method: str, now: float) -> None:
        """Count a call of ``method`` at ``now``, or refuse it with ``FLOOD_WAIT``."""
        kind = FLOOD_LIMITED.get(method)
        if kind is None or self.limit <= 0:
            return
        calls = self._calls.setdefault(kind, collections.deque())
        while calls and calls[0] <= now - self.window:
            calls.popleft()
        if len(calls) < self.limit:
            calls.append(now)
            return
        self.refused += 1
        seconds = max(1, math.ceil(calls[0] + self.window - now))
        raise ProtocolError(
            f"too many {kind} requests: wait {seconds} s", ErrorCode.FLOOD_WAIT, seconds=seconds
        )
