"""The hole singletons: every open history view's first hole, every chat list's holes.

The tracker rebuilds these sets after each replay; the hole filler subscribes
to them and fetches exactly what some open view is missing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from postbox.chat_list import ChatListHole
from postbox.holes import ClosedRange, MessageHistoryHoleSpace
from postbox.ids import PeerId
from postbox.views.view import MutableView, ViewSnapshot

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = [
    "ChatListHolesEntry",
    "ChatListHolesView",
    "HoleDirection",
    "MessageHistoryHolesEntry",
    "MessageHistoryHolesView",
]


class HoleDirection(enum.Enum):
    """Which part of a hole a view needs first."""

    OLDER = "older"  # the hole's top end, just below the window
    NEWER = "newer"  # the hole's bottom end, just above the window
    AROUND = "around"  # the anchor itself lies in the hole


@dataclass(frozen=True, slots=True)
class MessageHistoryHolesEntry:
    """A hole an open history view shows, and how much of it the view wants."""

    peer_id: PeerId
    namespace: int
    space: MessageHistoryHoleSpace
    hole: ClosedRange
    direction: HoleDirection
    anchor_id: int
    count: int


@dataclass(frozen=True, slots=True)
class ChatListHolesEntry:
    group_id: int
    hole: ChatListHole


@dataclass(frozen=True, slots=True)
class MessageHistoryHolesView(ViewSnapshot):
    entries: frozenset[MessageHistoryHolesEntry]


@dataclass(frozen=True, slots=True)
class ChatListHolesView(ViewSnapshot):
    entries: frozenset[ChatListHolesEntry]


class _SingletonView(MutableView):
    """A view the tracker sets directly; it does not watch change records."""

    def __init__(self, entries: frozenset[object]) -> None:
        self.entries = entries

    @property
    def topics(self) -> frozenset[Topic]:
        return frozenset()

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        return False

    def refresh_external(self, tx: Transaction) -> bool:
        return False

    def set_entries(self, entries: frozenset[object]) -> bool:
        if entries == self.entries:
            return False
        self.entries = entries
        return True


class MutableMessageHistoryHolesView(_SingletonView):
    def immutable(self) -> MessageHistoryHolesView:
        return MessageHistoryHolesView(self.entries)  # type: ignore[arg-type]


class MutableChatListHolesView(_SingletonView):
    def immutable(self) -> ChatListHolesView:
        return ChatListHolesView(self.entries)  # type: ignore[arg-type]
