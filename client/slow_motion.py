"""Slow motion: the demo's server holds every answer and push for a while, so a person
can watch a loading row, the fetch and the fill arrive, next to a live insert."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DEMO_LATENCY", "SlowMotion"]

#: The slow-motion latency when none is given, in seconds.
DEMO_LATENCY = 0.8


@dataclass
class SlowMotion:
    """How long the server holds each frame when slow motion is on, whether it is on,
    and how to tell the server (``set_latency(seconds)``; 0 turns it off). One is
    shared by every window of the demo: each is told when another switches it."""

    seconds: float
    #: Asks the server for the latency; it need not wait for the answer.
    set_latency: Callable[[float], object]
    on: bool = False
    _listeners: list[Callable[[bool], None]] = field(default_factory=list, repr=False)

    def switch(self, on: bool) -> None:
        if on == self.on:
            return
        self.set_latency(self.seconds if on else 0.0)
        self.on = on
        for listener in list(self._listeners):
            listener(on)

    def watch(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(on)`` after every switch; returns what stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @property
    def label(self) -> str:
        return f"Slow motion ({self.seconds * 1000:.0f} ms)"
