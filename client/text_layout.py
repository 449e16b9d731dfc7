"""Plain-text layout for terminal output: times, counts, sizes, columns and tables.

Pure functions of their arguments (times are UTC, so no clock and no locale). Widths
are terminal columns, not characters: wide characters such as emoji and CJK take two,
combining marks and joiners none.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime

__all__ = [
    "char_width",
    "display_width",
    "figures",
    "fit",
    "long_time",
    "mib",
    "n",
    "short_time",
    "snippet",
    "table",
    "utc",
]

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def utc(timestamp: int) -> datetime:
    """The moment of Unix time ``timestamp`` as an aware UTC ``datetime``."""
    return datetime.fromtimestamp(timestamp, UTC)


def long_time(timestamp: int) -> str:
    """``timestamp`` as date and minute in UTC: "2024-06-01 18:30"."""
    return utc(timestamp).strftime("%Y-%m-%d %H:%M")


def short_time(timestamp: int, now: int) -> str:
    """As a chat list shows it: the time today, the weekday this week, else the date."""
    moment, today = utc(timestamp), utc(now).date()
    age = (today - moment.date()).days
    if age <= 0:
        return moment.strftime("%H:%M")
    if age < 7:
        return _WEEKDAYS[moment.weekday()]
    return moment.strftime("%d.%m.%y")


def n(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: "1 chat", "2,000 messages"."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def mib(size: int) -> str:
    """``size`` bytes in mebibytes with one decimal: "0.8 MiB"."""
    return f"{size / 2**20:,.1f} MiB"


def figures(rows: Sequence[tuple[str, str]]) -> str:
    """(name, value) rows as indented lines, the values aligned in one column."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {value}" for name, value in rows)


def char_width(char: str) -> int:
    """Terminal columns ``char`` takes: 0, 1, or 2 for a wide character."""
    if unicodedata.combining(char) or char in "\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide characters (emoji, CJK) take two."""
    return sum(char_width(char) for char in text)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns (ending in "…" if cut), padded to exactly ``width``."""
    if display_width(text) > width:
        kept, used = [], 0
        for char in text:
            columns = char_width(char)
            if used + columns > width - 1:
                break
            kept.append(char)
            used += columns
        text = "".join(kept).rstrip() + "…"
    return text + " " * (width - display_width(text))


def snippet(text: str, word: str, width: int) -> str:
    """A ``width``-column piece of one-line ``text`` that shows ``word``."""
    text = " ".join(text.split())
    found = text.lower().find(word.lower())
    if found > width // 2:
        text = "…" + text[found - width // 3 :].lstrip()
    return fit(text, width).rstrip()


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    widths: Sequence[int | None],
    right: Sequence[int] = (),
) -> str:
    """Rows as aligned columns: a fixed width cuts longer cells, ``None`` fits the widest."""
    columns = [
        fixed if fixed is not None else max(display_width(row[i]) for row in [headers, *rows])
        for i, fixed in enumerate(widths)
    ]

    def line(cells: Sequence[str]) -> str:
        parts = []
        for i, (cell, width) in enumerate(zip(cells, columns, strict=True)):
            cell_width = display_width(cell)
            if i in right and cell_width <= width:
                parts.append(" " * (width - cell_width) + cell)
            else:
                parts.append(fit(cell, width))
        return ("  " + "  ".join(parts)).rstrip()

    return "\n".join([line(headers), *(line(row) for row in rows)])
