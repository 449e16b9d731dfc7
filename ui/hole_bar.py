"""The hole map as a picture: a chat's id space as one bar, oldest ids on the left.

Pure geometry, no Qt. Each segment of ``client.hole_map`` (stored, hole, fetching) gets
a width by the logarithm of how many ids it spans, so a window of sixty messages next
to a hole of a hundred thousand ids is still a visible stretch. The open-ended newest
segment (up to the largest id) ends at the newest id known: the window's top, or as
many ids as it stores. Within a segment, ids are placed linearly; the window is
outlined from its oldest to its newest message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from client import HoleSegment
from postbox import MAX_MESSAGE_ID, ClosedRange

__all__ = ["MIN_SPAN", "BarLayout", "BarSpan", "bar_layout"]

#: The narrowest a segment is drawn, in pixels.
MIN_SPAN = 6


@dataclass(frozen=True, slots=True)
class BarSpan:
    segment: HoleSegment
    #: The ids the span stands for (the newest segment's end clipped to what is known).
    lower: int
    upper: int
    left: float
    right: float


@dataclass(frozen=True, slots=True)
class BarLayout:
    spans: tuple[BarSpan, ...]
    #: The window's outline, left and right, if a window is open.
    window: tuple[float, float] | None

    def x_of(self, message_id: int) -> float:
        """Where an id sits on the bar (ids past the last span sit at its right end)."""
        for span in self.spans:
            if span.lower <= message_id <= span.upper:
                share = (message_id - span.lower) / (span.upper - span.lower + 1)
                return span.left + share * (span.right - span.left)
        return self.spans[-1].right if self.spans else 0.0


def bar_layout(
    segments: Sequence[HoleSegment], window: ClosedRange | None, width: float
) -> BarLayout:
    """Lay ``segments`` (newest first, as ``hole_map`` gives them) out on a bar of
    ``width`` pixels, oldest on the left, and outline ``window``."""
    ordered = sorted(segments, key=lambda segment: segment.lower)
    ranges = [(segment.lower, _known_upper(segment, window)) for segment in ordered]
    weights = [math.log2(1 + upper - lower + 1) for lower, upper in ranges]
    floor = MIN_SPAN * len(ordered)
    spare = max(0.0, width - floor)
    total = sum(weights) or 1.0
    spans: list[BarSpan] = []
    left = 0.0
    for segment, (lower, upper), weight in zip(ordered, ranges, weights, strict=True):
        right = left + MIN_SPAN + spare * weight / total
        spans.append(BarSpan(segment, lower, upper, left, right))
        left = right
    layout = BarLayout(tuple(spans), None)
    if window is None or not spans:
        return layout
    start = layout.x_of(window.lower)
    end = layout.x_of(window.upper + 1) if window.upper < spans[-1].upper else spans[-1].right
    return BarLayout(layout.spans, (start, max(end, start + 3.0)))


def _known_upper(segment: HoleSegment, window: ClosedRange | None) -> int:
    if segment.upper != MAX_MESSAGE_ID:
        return segment.upper
    newest = segment.lower + max(segment.messages, 1) - 1
    if window is not None and window.upper < MAX_MESSAGE_ID:
        newest = max(newest, window.upper)
    return max(newest, segment.lower)
