"""What the generated accounts share besides their talk: the word a full-text search
finds in them, and the hour-of-day activity (UTC)."""

from __future__ import annotations

__all__ = ["HOUR_WEIGHTS", "SEARCH_WORD"]

#: A word common enough in the conversations that a full-text search for it finds
#: messages (a topic of its own, and plans often involve it).
SEARCH_WORD = "coffee"

#: Hour-of-day activity (UTC): quiet at night, peaks at lunch and in the evening.
HOUR_WEIGHTS = (
    3, 2, 1, 1, 1, 1, 2, 4, 6, 7, 8, 8, 9, 8, 7, 7, 8, 8, 9, 10, 10, 9, 7, 5,
)  # fmt: skip
