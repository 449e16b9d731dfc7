"""Row diffs between two snapshots of a list: what a Qt model tells its views.

``diff_rows(old, new, key)`` returns the steps that turn ``old`` into ``new`` as a
list model applies them: removals first (bottom up, in runs), then insertions (top
down, in runs), then changes of rows that stayed. Rows that changed place are removed
and inserted again; the longest run of rows already in order stays put, so a chat
moving to the top of the list is one removal and one insertion, not a reset.

Pure Python: tested without Qt.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Change", "Insert", "Remove", "RowStep", "apply_steps", "diff_rows"]

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
class Change(Generic[T]):
    """Row ``row`` (after the removals and insertions) now holds ``item``."""

    row: int
    item: T


RowStep = Remove | Insert[T] | Change[T]


def _longest_increasing(values: Sequence[int]) -> set[int]:
    """Indices (into ``values``) of one longest strictly increasing subsequence."""
    tails: list[int] = []
    tail_index: list[int] = []
    previous = [-1] * len(values)
    for i, value in enumerate(values):
        position = bisect.bisect_left(tails, value)
        if position == len(tails):
            tails.append(value)
            tail_index.append(i)
        else:
            tails[position] = value
            tail_index[position] = i
        previous[i] = tail_index[position - 1] if position else -1
    result: set[int] = set()
    i = tail_index[-1] if tail_index else -1
    while i >= 0:
        result.add(i)
        i = previous[i]
    return result


def diff_rows(old: Sequence[T], new: Sequence[T], key: Callable[[T], Hashable]) -> list[RowStep[T]]:
    """The steps from ``old`` to ``new``; rows are matched by ``key`` (unique per list)."""
    new_position = {key(item): i for i, item in enumerate(new)}
    if len(new_position) != len(new):
        raise ValueError("keys must be unique within a snapshot")
    # Rows of old that survive, and which of them keep their relative order.
    surviving = [i for i, item in enumerate(old) if key(item) in new_position]
    order = [new_position[key(old[i])] for i in surviving]
    stay = {surviving[i] for i in _longest_increasing(order)}
    steps: list[RowStep[T]] = []
    # Removals, bottom up, merged into runs.
    removed = [i for i in range(len(old)) if i not in stay]
    run_end = None
    run_start = None
    for i in reversed(removed):
        if run_start is not None and i == run_start - 1:
            run_start = i
            continue
        if run_start is not None and run_end is not None:
            steps.append(Remove(run_start, run_end - run_start + 1))
        run_start = run_end = i
    if run_start is not None and run_end is not None:
        steps.append(Remove(run_start, run_end - run_start + 1))
    # Insertions, top down: every row of new whose key is not a staying row.
    staying_keys = {key(old[i]) for i in stay}
    row = 0
    pending: list[T] = []
    pending_row = 0
    for item in new:
        if key(item) in staying_keys:
            if pending:
                steps.append(Insert(pending_row, tuple(pending)))
                pending = []
            row += 1
            continue
        if not pending:
            pending_row = row
        pending.append(item)
        row += 1
    if pending:
        steps.append(Insert(pending_row, tuple(pending)))
    # Rows that stayed but whose content changed.
    old_by_key = {key(item): item for item in old}
    for row, item in enumerate(new):
        k = key(item)
        if k in staying_keys and old_by_key[k] != item:
            steps.append(Change(row, item))
    return steps


def apply_steps(rows: list[T], steps: Sequence[RowStep[T]]) -> list[T]:
    """Apply ``steps`` to a copy of ``rows`` (what a model does, without Qt)."""
    result = list(rows)
    for step in steps:
        if isinstance(step, Remove):
            del result[step.row : step.row + step.count]
        elif isinstance(step, Insert):
            result[step.row : step.row] = step.items
        else:
            result[step.row] = step.item
    return result
