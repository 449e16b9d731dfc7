"""Row diffs between two snapshots of a list: what a Qt model tells its views.

``diff_rows(old, new, key)`` returns the steps that turn ``old`` into ``new`` as a
list model applies them: removals of rows that are gone (bottom up, in runs), then,
top down, moves of rows that changed place and insertions of new ones (in runs), then
changes of rows whose content differs. A chat moving to the top of the list is one
move, so a view keeps its selection, its persistent indexes and the rows around it.

Pure Python: tested without Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import ne, not_
from typing import Any, Generic, TypeVar

__all__ = ["Change", "Insert", "Move", "Remove", "RowStep", "apply_steps", "diff_rows"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Remove:
    """Remove ``count`` rows starting at ``row``."""

    row: int
    count: int


@dataclass(frozen=True, slots=True)
class Insert(Generic[T]):
    """Insert ``items`` at ``row``."""

    row: int
    items: tuple[T, ...]


@dataclass(frozen=True, slots=True)
class Move:
    """Move the ``count`` rows starting at ``row`` up to ``to`` (``to < row``)."""

    row: int
    count: int
    to: int


@dataclass(frozen=True, slots=True)
class Change(Generic[T]):
    """Row ``row`` (after the removals and insertions) now holds ``item``."""

    row: int
    item: T


RowStep = Remove | Insert[T] | Move | Change[T]


def diff_rows(old: Sequence[T], new: Sequence[T], key: Callable[[T], Hashable]) -> list[RowStep[T]]:
    """The steps from ``old`` to ``new``; rows are matched by ``key`` (unique per list).

    The work in Python is proportional to what changed: whole-list passes (keys, sets,
    the common ends of both lists, rows that are the very same objects as before) run
    in C, and only the rows in between, and rows that are new objects, are visited
    one by one. Row builders that hand back the same object for an unchanged row
    (``ChatRowCache``, ``HistoryRowCache``) therefore make a diff of a long list cheap.
    """
    new_keys = list(map(key, new))
    if len(set(new_keys)) != len(new_keys):
        raise ValueError("keys must be unique within a snapshot")
    old_keys = list(map(key, old))
    steps: list[RowStep[T]] = []
    if old_keys != new_keys:
        _structure(old_keys, new, new_keys, steps)
    # Rows that were there before and whose content changed: only rows that are not
    # the very objects the old list held can have.
    old_ids = set(map(id, old))
    fresh = compress(count(), map(not_, map(old_ids.__contains__, map(id, new))))
    old_by_key: dict[Hashable, T] | None = None
    for row in fresh:
        if old_by_key is None:
            old_by_key = dict(zip(old_keys, old, strict=True))
        item = new[row]
        previous = old_by_key.get(new_keys[row], _ABSENT)
        if previous is not _ABSENT and previous != item:
            steps.append(Change(row, item))
    return steps


_ABSENT: Any = object()


def _structure(
    old_keys: list[Hashable], new: Sequence[T], new_keys: list[Hashable], steps: list[RowStep[T]]
) -> None:
    """Removals (bottom up, in runs), then top down moves and insertions."""
    wanted = set(new_keys)
    gone = set(old_keys).difference(wanted)
    current = old_keys
    if gone:
        where = dict(zip(old_keys, count()))
        positions = sorted(where[k] for k in gone)
        for start, number in reversed(_runs(positions)):
            steps.append(Remove(start, number))
        current = [k for k in old_keys if k not in gone]
    # The rows both lists share at their ends stay where they are.
    shortest = min(len(current), len(new_keys))
    head = _common_length(current, new_keys, shortest)
    tail = _common_length(reversed(current), reversed(new_keys), shortest - head)
    middle = current[head : len(current) - tail]
    wanted_middle = new_keys[head : len(new_keys) - tail]
    # Top down: rows above ``row`` are final, so what belongs at ``row`` is further
    # down (a move up) or new (an insertion).
    position = dict(zip(middle, count()))
    row = 0
    while row < len(wanted_middle):
        # Skip the rows already in place (in C: after a move, most of the rest are).
        row += _common_length(
            islice(middle, row, None),
            islice(wanted_middle, row, None),
            max(0, min(len(middle), len(wanted_middle)) - row),
        )
        if row >= len(wanted_middle):
            break
        wanted_key = wanted_middle[row]
        source = position.get(wanted_key)
        if source is None:
            end = row
            while end < len(wanted_middle) and wanted_middle[end] not in position:
                end += 1
            steps.append(Insert(head + row, tuple(new[head + row : head + end])))
            middle[row:row] = wanted_middle[row:end]
        else:
            number = 1
            while (
                row + number < len(wanted_middle)
                and source + number < len(middle)
                and middle[source + number] == wanted_middle[row + number]
            ):
                number += 1
            steps.append(Move(head + source, number, head + row))
            middle[row:row] = middle[source : source + number]
            del middle[source + number : source + 2 * number]
            end = row + number
        position = dict(zip(middle, count()))
        row = end


def _common_length(first: Iterable[Hashable], second: Iterable[Hashable], limit: int) -> int:
    """How many items the two sequences share at their start (at most ``limit``)."""
    differing = compress(count(), map(ne, first, second))
    return min(next(differing, limit), limit)


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Ascending indices as (start, count) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][0] + runs[-1][1] == index:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((index, 1))
    return runs


def apply_steps(rows: list[T], steps: Sequence[RowStep[T]]) -> list[T]:
    """Apply ``steps`` to a copy of ``rows`` (what a model does, without Qt)."""
    result = list(rows)
    for step in steps:
        if isinstance(step, Remove):
            del result[step.row : step.row + step.count]
        elif isinstance(step, Insert):
            result[step.row : step.row] = step.items
        elif isinstance(step, Move):
            moved = result[step.row : step.row + step.count]
            del result[step.row : step.row + step.count]
            result[step.to : step.to] = moved
        else:
            result[step.row] = step.item
    return result
