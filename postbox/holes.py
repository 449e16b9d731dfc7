"""Holes: ranges of message ids not fetched from the server yet.

Pure interval arithmetic over closed id ranges, shared by the hole index table
and the views that clip their entries to it. A hole lives in a space: the
whole history ("everywhere") or the subset carrying one tag.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from postbox.errors import InvalidArgumentError
from postbox.ids import MAX_MESSAGE_ID, PeerId

__all__ = [
    "ALL_MESSAGE_IDS",
    "ClosedRange",
    "HoleOperation",
    "HoleOperationKind",
    "MessageHistoryHoleSpace",
    "add_range",
    "remove_range",
]


class ClosedRange(NamedTuple):
    """Ids ``lower..upper``, both included."""

    lower: int
    upper: int

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.lower <= value <= self.upper

    def overlaps(self, other: ClosedRange) -> bool:
        return self.lower <= other.upper and other.lower <= self.upper

    @property
    def length(self) -> int:
        return self.upper - self.lower + 1

    @classmethod
    def checked(cls, lower: int, upper: int) -> ClosedRange:
        if not 1 <= lower <= upper <= MAX_MESSAGE_ID:
            raise InvalidArgumentError(
                f"hole range {lower}..{upper} is empty or outside 1..{MAX_MESSAGE_ID}"
            )
        return cls(lower, upper)


#: The whole id space: what a peer's history is before anything is fetched.
ALL_MESSAGE_IDS = ClosedRange(1, MAX_MESSAGE_ID)


@dataclass(frozen=True, slots=True)
class MessageHistoryHoleSpace:
    """Everywhere (``tag == 0``) or the messages carrying one tag bit."""

    tag: int = 0

    @property
    def is_everywhere(self) -> bool:
        return self.tag == 0

    @classmethod
    def everywhere(cls) -> MessageHistoryHoleSpace:
        return _EVERYWHERE

    @classmethod
    def tagged(cls, tag: int) -> MessageHistoryHoleSpace:
        if tag <= 0 or tag & (tag - 1):
            raise InvalidArgumentError(f"a hole space takes exactly one tag bit, not {tag:#x}")
        return cls(tag)


_EVERYWHERE = MessageHistoryHoleSpace(0)


class HoleOperationKind(enum.Enum):
    INSERT = "insert"
    REMOVE = "remove"


class HoleOperation(NamedTuple):
    """One hole change in a (peer, namespace, space), as the change record lists it."""

    kind: HoleOperationKind
    range: ClosedRange


class HoleKey(NamedTuple):
    peer_id: PeerId
    namespace: int
    space: MessageHistoryHoleSpace


def add_range(
    holes: Sequence[ClosedRange], new: ClosedRange
) -> tuple[list[ClosedRange], ClosedRange | None]:
    """Add ``new`` to sorted disjoint ``holes``, merging overlapping and adjacent ranges.

    Returns the ranges to drop and the merged range to store (``None`` if ``new``
    was already covered).
    """
    lower, upper = new
    merged: list[ClosedRange] = []
    for hole in holes:
        if hole.upper < lower - 1 or hole.lower > upper + 1:
            continue
        if hole.lower <= new.lower and new.upper <= hole.upper:
            return [], None
        merged.append(hole)
        lower = min(lower, hole.lower)
        upper = max(upper, hole.upper)
    return merged, ClosedRange(lower, upper)


def remove_range(
    holes: Sequence[ClosedRange], cut: ClosedRange
) -> tuple[list[ClosedRange], list[ClosedRange]]:
    """Cut ``cut`` out of sorted disjoint ``holes``; returns (dropped, stored) ranges."""
    dropped: list[ClosedRange] = []
    kept: list[ClosedRange] = []
    for hole in holes:
        if not hole.overlaps(cut):
            continue
        dropped.append(hole)
        if hole.lower < cut.lower:
            kept.append(ClosedRange(hole.lower, cut.lower - 1))
        if hole.upper > cut.upper:
            kept.append(ClosedRange(cut.upper + 1, hole.upper))
    return dropped, kept


def normalize(ranges: Iterable[ClosedRange]) -> list[ClosedRange]:
    """Sorted, merged (overlapping and adjacent) ranges: the canonical form of a hole set."""
    result: list[ClosedRange] = []
    for lower, upper in sorted(ranges):
        if result and lower <= result[-1].upper + 1:
            if upper > result[-1].upper:
                result[-1] = ClosedRange(result[-1].lower, upper)
        else:
            result.append(ClosedRange(lower, upper))
    return result
