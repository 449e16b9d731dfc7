"""The chat list keeps its rows in place while the pointer rests over it.

A chat moves to the top when a message arrives, so in a busy account the row under the
pointer can change between reading a preview and clicking, and the click opens another
chat. While the pointer is over the list, the list shows ``held_order``: every row it
shows keeps its place, with its newest content (preview, time, badge); rows the newest
snapshot adds after the last one shown (the window growing at its end) come in below
them, and a loading row gone from the bottom leaves. Everything else (a chat moving up,
a new chat, a chat gone) waits until the pointer leaves, and ``HeldOrder.changed``
counts the chats waiting, for the hint that says so. Pure Python: tested without Qt.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from ui.rows import ChatRow

__all__ = ["HeldOrder", "changed_text", "held_order"]


@dataclass(frozen=True, slots=True)
class HeldOrder:
    """The rows to show while the order is held, and how many chats would move, come
    or go if the list caught up with the newest order."""

    rows: tuple[ChatRow, ...]
    changed: int


def held_order(shown: Sequence[ChatRow], newest: Sequence[ChatRow]) -> HeldOrder:
    """``shown`` in its order with each row's newest content, then the rows of
    ``newest`` that follow the last shown one there. A shown chat ``newest`` lacks
    stays as it was; a shown loading row it lacks leaves only from the bottom, where
    no row moves up to fill its place."""
    position = {row.key: at for at, row in enumerate(newest)}
    #: Each held row, and where the newest rows have it (``None``: not at all).
    held: list[tuple[ChatRow, int | None]] = []
    for row in shown:
        at = position.get(row.key)
        held.append((row if at is None else newest[at], at))
    while held and held[-1][1] is None and held[-1][0].is_hole:
        held.pop()
    kept = [at for _row, at in held if at is not None]
    last = max(kept, default=-1)
    held_keys = {row.key for row, _at in held}
    # Chats that would come in above the last held one...
    waiting = [row for row in newest[: last + 1] if row.key not in held_keys]
    # ...move (the held chats outside the longest run that keeps the newest order)...
    chats = [at for row, at in held if at is not None and not row.is_hole]
    moved = len(chats) - _longest_rising(chats)
    # ...or leave from above the last one kept. A chat gone from below it was pushed
    # past the window's end by one coming in above, already counted.
    last_kept = max((n for n, (_row, at) in enumerate(held) if at is not None), default=-1)
    left = [row for row, at in held[:last_kept] if at is None]
    changed = moved + sum(not row.is_hole for row in (*waiting, *left))
    return HeldOrder((*(row for row, _at in held), *newest[last + 1 :]), changed)


def _longest_rising(values: Sequence[int]) -> int:
    """The length of the longest strictly increasing subsequence of ``values``: the
    held chats that keep their order relative to each other; the rest moved."""
    tails: list[int] = []
    for value in values:
        at = bisect.bisect_left(tails, value)
        if at == len(tails):
            tails.append(value)
        else:
            tails[at] = value
    return len(tails)


def changed_text(changed: int) -> str:
    """The hint over a held list: "1 chat changed", "3 chats changed"."""
    return f"{changed} chat{'' if changed == 1 else 's'} changed"
