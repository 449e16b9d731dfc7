"""The hole map of a chat: which id ranges are stored, which are holes, which are fetching.

``hole_map(holes, counts, fetching)`` is pure: it splits ids ``1..MAX_ID`` into
segments, newest first: a hole (nothing is known there), a hole being fetched, or a
known range with how many messages it stores. ``read_hole_map(tx, peer_id)`` reads
the holes and counts of one chat's cloud history in a transaction.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from postbox import (
    MAX_MESSAGE_ID,
    ClosedRange,
    MessageHistoryHoleSpace,
    MessageNamespace,
    PeerId,
    Transaction,
)

__all__ = ["MAX_ID", "HoleSegment", "SegmentKind", "hole_map", "read_hole_map"]

#: The largest message id.
MAX_ID = MAX_MESSAGE_ID


class SegmentKind(enum.Enum):
    STORED = "stored"
    HOLE = "hole"
    FETCHING = "fetching"


@dataclass(frozen=True, slots=True)
class HoleSegment:
    lower: int
    upper: int
    kind: SegmentKind
    #: Messages stored in the range (0 for holes).
    messages: int = 0

    def label(self) -> str:
        upper = "∞" if self.upper == MAX_ID else str(self.upper)
        span = f"{self.lower}–{upper}"
        if self.kind is SegmentKind.STORED:
            return f"{span}: {self.messages} stored"
        return f"{span}: {self.kind.value}"


def hole_map(
    holes: Sequence[ClosedRange],
    count_stored: Callable[[int, int], int],
    fetching: Iterable[ClosedRange] = (),
) -> list[HoleSegment]:
    """Segments covering ``1..MAX_ID``, newest first. ``holes`` must not overlap;
    ``count_stored(lower, upper)`` gives how many messages a known range stores."""
    in_flight = list(fetching)
    segments: list[HoleSegment] = []
    next_id = 1
    for hole in sorted(holes):
        if hole.lower > next_id:
            lower, upper = next_id, hole.lower - 1
            segments.append(
                HoleSegment(lower, upper, SegmentKind.STORED, count_stored(lower, upper))
            )
        busy = any(hole.overlaps(other) for other in in_flight)
        segments.append(
            HoleSegment(hole.lower, hole.upper, SegmentKind.FETCHING if busy else SegmentKind.HOLE)
        )
        next_id = hole.upper + 1
    if next_id <= MAX_ID:
        segments.append(
            HoleSegment(next_id, MAX_ID, SegmentKind.STORED, count_stored(next_id, MAX_ID))
        )
    segments.reverse()
    return segments


def read_hole_map(
    tx: Transaction, peer_id: PeerId, fetching: Iterable[ClosedRange] = ()
) -> list[HoleSegment]:
    """The map of a chat's cloud history as stored now."""
    namespace = int(MessageNamespace.CLOUD)
    holes = tx.get_holes(peer_id, namespace, MessageHistoryHoleSpace.everywhere())

    def count(lower: int, upper: int) -> int:
        return tx.count_messages_in_id_range(peer_id, namespace, lower, upper)

    return hole_map(holes, count, fetching)
