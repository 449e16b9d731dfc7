"""A chat's interface state: what the screen of one chat (or forum topic) was left with.

As Telegram keeps it per peer and thread: the draft being typed (the part that syncs to
the account's other devices), where the history was scrolled to and which messages
were selected. A chat left with nothing of these has no stored state at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError

__all__ = ["ChatInterfaceState", "ScrollPosition", "SynchronizeableDraft"]

_WHAT = "chat interface state"


@dataclass(frozen=True, slots=True)
class SynchronizeableDraft:
    """The draft of a chat: its text, the message it replies to, and when it was last
    changed (seconds; the newest change wins between devices)."""

    text: str
    reply_to_id: int | None = None
    date: int = 0

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and self.reply_to_id is None


@dataclass(frozen=True, slots=True)
class ScrollPosition:
    """The first message on screen, and where its top sat (pixels from the top of the
    history's viewport; negative when it began above it)."""

    message_id: int
    offset: int = 0


@dataclass(frozen=True, slots=True)
class ChatInterfaceState:
    draft: SynchronizeableDraft | None = None
    scroll: ScrollPosition | None = None
    selected_ids: tuple[int, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.draft is None and self.scroll is None and not self.selected_ids

    def encode(self) -> bytes:
        draft = self.draft
        scroll = self.scroll
        return pack(
            (
                1,
                None if draft is None else (draft.text, draft.reply_to_id, draft.date),
                None if scroll is None else (scroll.message_id, scroll.offset),
                self.selected_ids,
            )
        )

    @classmethod
    def decode(cls, data: bytes) -> ChatInterfaceState:
        fields = unpack(data, _WHAT)
        if not isinstance(fields, tuple) or len(fields) != 4 or fields[0] != 1:
            raise CorruptValueError(f"stored {_WHAT} has an unknown layout")
        _, draft, scroll, selected = fields
        with decoding(_WHAT):
            return cls(
                None if draft is None else _draft(*draft),
                None if scroll is None else _scroll(*scroll),
                _ids(selected),
            )


def _draft(text: Any, reply_to_id: Any, date: Any) -> SynchronizeableDraft:
    if type(text) is not str or type(date) is not int:
        raise CorruptValueError(f"stored {_WHAT} holds a draft of the wrong types")
    if reply_to_id is not None and type(reply_to_id) is not int:
        raise CorruptValueError(f"stored {_WHAT} replies to {reply_to_id!r}")
    return SynchronizeableDraft(text, reply_to_id, date)


def _scroll(message_id: Any, offset: Any) -> ScrollPosition:
    if type(message_id) is not int or type(offset) is not int:
        raise CorruptValueError(f"stored {_WHAT} holds a scroll position of the wrong types")
    return ScrollPosition(message_id, offset)


def _ids(selected: Any) -> tuple[int, ...]:
    if not isinstance(selected, tuple) or any(type(i) is not int for i in selected):
        raise CorruptValueError(f"stored {_WHAT} holds a selection of the wrong types")
    return tuple(selected)
