"""Row diffs between two snapshots of a list: what a Qt model tells its views.

``diff_rows(old, new, key)`` returns the steps that turn ``old`` into ``new`` as a
list model applies them: removals of rows that are gone (bottom up, in runs), then,
top down, moves of rows that changed place and insertions of new ones (in runs), then
changes of rows whose content differs. A chat moving to the top of the list is one
move, so a view keeps its selection, its persistent indexes and the rows around it.

Pure Python: tested without Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

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
    """The steps from ``old`` to ``new``; rows are matched by ``key`` (unique per list)."""
    new_keys = [key(item) for item in new]
    if len(set(new_keys)) != len(new_keys):
        raise ValueError("keys must be unique within a snapshot")
    wanted = set(new_keys)
    steps: list[RowStep[T]] = []
    # Removals, bottom up, merged into runs.
    current = [key(item) for item in old]
    gone = [i for i, k in enumerate(current) if k not in wanted]
    for start, count in reversed(_runs(gone)):
        steps.append(Remove(start, count))
    current = [k for k in current if k in wanted]
    # Top down: rows above ``row`` are final, so what belongs at ``row`` is further
    # down (a move up) or new (an insertion).
    position = {k: i for i, k in enumerate(current)}
    row = 0
    while row < len(new_keys):
        wanted_key = new_keys[row]
        if row < len(current) and current[row] == wanted_key:
            row += 1
            continue
        source = position.get(wanted_key)
        if source is None:
            end = row
            while end < len(new_keys) and new_keys[end] not in position:
                end += 1
            steps.append(Insert(row, tuple(new[row:end])))
            current[row:row] = new_keys[row:end]
        else:
            count = 1
            while (
                row + count < len(new_keys)
                and source + count < len(current)
                and current[source + count] == new_keys[row + count]
            ):
                count += 1
            steps.append(Move(source, count, row))
            current[row:row] = current[source : source + count]
            del current[source + count : source + 2 * count]
            end = row + count
        position = {k: i for i, k in enumerate(current)}
        row = end
    # Rows that were there before and whose content changed.
    old_by_key = {key(item): item for item in old}
    for row, item in enumerate(new):
        previous = old_by_key.get(new_keys[row])
        if previous is not None and previous != item:
            steps.append(Change(row, item))
    return steps


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
