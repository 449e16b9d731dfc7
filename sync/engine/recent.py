"""Messages the engine added, edited or deleted recently, for fills racing with them.

A hole fill asks the server for a page, and by the time it stores that page a push may
have deleted, edited or added a message in its range. The fill notes ``generation``
before its request and, when it stores the page, leaves alone what changed since: it
never brings back a deleted message or an old text, and never takes a message that
arrived meanwhile for one the server no longer has.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable

from postbox import StoreMessage

__all__ = ["RecentChanges"]

#: How many changes are remembered; a fill older than that is refused and retried.
_KEPT = 10_000


class RecentChanges:
    """Thread-safe: the engine records on its loop, fills read on the postbox thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes: deque[tuple[int, int, int]] = deque(maxlen=_KEPT)
        self._generation = 0
        self._jump = 0

    @property
    def generation(self) -> int:
        with self._lock:
            return self._generation

    def record(self, peer_id: int, message_ids: Iterable[int]) -> None:
        with self._lock:
            for message_id in message_ids:
                self._generation += 1
                self._changes.append((self._generation, int(peer_id), message_id))

    def record_jump(self) -> None:
        """The cursor jumped over updates it did not apply (first sync, too long): a
        page fetched before this may miss messages that no update will bring."""
        with self._lock:
            self._generation += 1
            self._jump = self._generation

    def record_messages(self, messages: Iterable[StoreMessage]) -> None:
        with self._lock:
            for message in messages:
                self._generation += 1
                self._changes.append((self._generation, int(message.peer_id), message.id or 0))

    def changed_since(self, generation: int, peer_id: int) -> set[int] | None:
        """Ids of ``peer_id`` changed after ``generation``; ``None`` if the changes
        since then are no longer all remembered, or the cursor jumped since."""
        with self._lock:
            if self._jump > generation:
                return None
            if self._changes and generation < self._changes[0][0] - 1:
                return None
            return {m for g, p, m in self._changes if g > generation and p == int(peer_id)}
