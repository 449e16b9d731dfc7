"""A base for small views: reload from the tables when a watched topic changed.

The tracker only replays a view when the change record touched one of its
topics (a dictionary look-up), so reloading a few rows then is both correct
and cheap; the view emits only if the reloaded snapshot differs.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Generic, TypeVar

from postbox.views.view import MutableView, ViewSnapshot, ViewUpdateType

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = ["ReloadingView"]

S = TypeVar("S", bound=ViewSnapshot)


class ReloadingView(MutableView, Generic[S]):
    """Subclasses set ``watched`` (or override ``topics``) and write ``load``."""

    watched: frozenset[Topic] = frozenset()

    def __init__(self, tx: Transaction) -> None:
        self.snapshot: S = self.load(tx)

    @property
    def topics(self) -> frozenset[Topic]:
        return self.watched

    @abstractmethod
    def load(self, tx: Transaction) -> S:
        """The view's snapshot as the tables hold it now."""

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        return self.refresh_external(tx)

    def refresh_external(self, tx: Transaction) -> bool:
        return self._take(self.load(tx))

    def _take(self, snapshot: S) -> bool:
        """Keep ``snapshot`` if it differs from the current one; True if it did."""
        if snapshot == self.snapshot:
            return False
        self.snapshot = snapshot
        self.update_type = ViewUpdateType.GENERIC
        return True

    def immutable(self) -> S:
        return self.snapshot
