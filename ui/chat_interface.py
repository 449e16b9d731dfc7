"""A chat's interface state as the screen uses it (Qt-free): what a chat is left with
when the reader goes elsewhere, what it shows on return, a draft that arrives from
another device, and a text too long for one message.

The widgets only draw what these functions decide; they are tested without Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from client import MAX_MESSAGE_LENGTH
from postbox import ChatInterfaceState, ScrollPosition, SynchronizeableDraft

__all__ = [
    "COUNTER_MARGIN",
    "ComposeDraft",
    "Restore",
    "length_hint",
    "remote_draft_applies",
    "restore_of",
    "split_message",
]

#: How close to the limit a text gets before the compose box counts its characters.
COUNTER_MARGIN = 200
#: A split never leaves a part shorter than this share of the limit to end at a word.
_MIN_PART_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ComposeDraft:
    """What the compose box holds as a draft: its text and the message it answers."""

    text: str = ""
    reply_to_id: int | None = None

    @classmethod
    def of(cls, draft: SynchronizeableDraft | None) -> ComposeDraft:
        return cls() if draft is None else cls(draft.text, draft.reply_to_id)

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and self.reply_to_id is None


@dataclass(frozen=True, slots=True)
class Restore:
    """What a chat shows when it is opened again: its draft, and the scroll position
    (``None``: open as usual, at the first unread message or the bottom)."""

    draft: ComposeDraft
    scroll: ScrollPosition | None
    selected_ids: tuple[int, ...] = ()


def restore_of(state: ChatInterfaceState | None, *, unread: int) -> Restore:
    """A chat's saved state as the screen restores it. With unread messages the chat
    opens at the first of them instead of where it was left, as Telegram does."""
    if state is None:
        return Restore(ComposeDraft(), None)
    scroll = None if unread else state.scroll
    return Restore(ComposeDraft.of(state.draft), scroll, state.selected_ids)


def remote_draft_applies(shown: ComposeDraft, last_known: ComposeDraft) -> bool:
    """Whether a draft saved on another device may replace what the compose box shows:
    only if the reader has not changed the box since the last draft it knew (their
    typing is never overwritten)."""
    return shown == last_known


def length_hint(text: str, limit: int = MAX_MESSAGE_LENGTH) -> tuple[str, bool] | None:
    """The compose box's counter for ``text``, and whether it is past the limit (it then
    goes as several messages); ``None`` while far from the limit."""
    length = len(text.strip())
    if length < limit - COUNTER_MARGIN:
        return None
    if length <= limit:
        return f"{length:,} / {limit:,}", False
    parts = len(split_message(text, limit))
    return f"{length:,} / {limit:,} · sends as {parts} messages", True


def split_message(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """``text`` cut into messages of at most ``limit`` characters, as Telegram Desktop
    sends a long text: at a paragraph if one ends in the second half of a part, else at
    a line, a sentence, a word, and only then inside a word. Edge spaces are dropped."""
    parts: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        part, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        if part:
            parts.append(part)
    if rest:
        parts.append(rest)
    return parts


def _cut_point(text: str, limit: int) -> int:
    """Where the first part of ``text`` ends (1..limit)."""
    window = text[: limit + 1]  # a separator right after the limit still counts
    lowest = int(limit * _MIN_PART_SHARE)
    for separator in ("\n\n", "\n", ". ", "! ", "? ", " "):
        found = window.rfind(separator, lowest)
        if found != -1 and found + len(separator.rstrip()) <= limit:
            return found + len(separator.rstrip()) if separator.strip() else found
    return limit
