"""The view protocol: a mutable view on the postbox thread, a frozen snapshot for anyone.

A mutable view loads its data once, then ``replay``s each change record and
says whether it changed; ``immutable()`` freezes it into a snapshot safe on any
thread. ``topics`` name what a view watches, so the tracker asks only the
views a commit can concern (see ``topics.py``).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from postbox.ids import MessageIndex

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = ["MutableView", "UpdateKind", "ViewSnapshot", "ViewUpdateType"]


class UpdateKind(enum.Enum):
    INITIAL = "initial"
    INITIAL_UNREAD = "initial_unread"
    GENERIC = "generic"
    FILL_HOLE = "fill_hole"
    UPDATE_VISIBLE = "update_visible"


@dataclass(frozen=True, slots=True)
class ViewUpdateType:
    """Why a snapshot was emitted; tells the UI whether to animate.

    ``INITIAL``: the first snapshot. ``INITIAL_UNREAD``: the first, opened at the
    first unread message ``anchor``. ``GENERIC``: a live change (animate).
    ``FILL_HOLE``: holes of the view's peer were filled or added (do not animate).
    ``UPDATE_VISIBLE``: the set of peers the view covers changed (reload).
    """

    kind: UpdateKind
    anchor: MessageIndex | None = None

    INITIAL: ClassVar[ViewUpdateType]
    GENERIC: ClassVar[ViewUpdateType]
    FILL_HOLE: ClassVar[ViewUpdateType]
    UPDATE_VISIBLE: ClassVar[ViewUpdateType]

    @classmethod
    def initial_unread(cls, anchor: MessageIndex) -> ViewUpdateType:
        return cls(UpdateKind.INITIAL_UNREAD, anchor)


ViewUpdateType.INITIAL = ViewUpdateType(UpdateKind.INITIAL)
ViewUpdateType.GENERIC = ViewUpdateType(UpdateKind.GENERIC)
ViewUpdateType.FILL_HOLE = ViewUpdateType(UpdateKind.FILL_HOLE)
ViewUpdateType.UPDATE_VISIBLE = ViewUpdateType(UpdateKind.UPDATE_VISIBLE)


class ViewSnapshot:
    """Base of every frozen snapshot (each is a frozen dataclass)."""

    __slots__ = ()


class MutableView(ABC):
    """A live query, owned by the postbox thread.

    ``update_type`` is the reason for the latest change; views whose snapshots
    carry one (history, chat list) set it in ``replay``.
    """

    update_type: ViewUpdateType = ViewUpdateType.INITIAL

    @property
    @abstractmethod
    def topics(self) -> frozenset[Topic]:
        """What this view watches; read again after every replay that returned True."""

    def take_topic_changes(self) -> tuple[Iterable[Topic], Iterable[Topic]] | None:
        """The topics added and removed since the tracker last indexed this view, for a
        view whose topics change by a few at a time; ``None``: read ``topics`` again."""
        return None

    @abstractmethod
    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        """Apply a committed change; True if the snapshot would differ."""

    @abstractmethod
    def refresh_external(self, tx: Transaction) -> bool:
        """Reload everything after another process wrote; True if anything differs."""

    @abstractmethod
    def immutable(self) -> ViewSnapshot:
        """A frozen copy of the current state."""
