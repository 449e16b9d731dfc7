"""Fair turns between connections: a few requests in flight each, served round-robin.

``RoundRobin`` holds the requests read from each connection and not answered yet, up to
a limit per connection, and hands them out one connection at a time: each ready
connection gets one turn before any gets a second, and one connection's requests are
handed out in the order they came, one after another. No sockets and no clock: the
server reads a connection only while it ``has_room``, takes turns with ``take`` and
reports each answered request with ``done``.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sync.errors import SyncError

__all__ = ["RoundRobin", "SchedulingError"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class SchedulingError(SyncError, RuntimeError):
    """A caller broke ``RoundRobin``'s rules (the server's bug, not the peer's)."""


@dataclass(slots=True)
class _Queue(Generic[T]):
    limit: int
    waiting: deque[T] = field(default_factory=deque)
    #: Whether one of its requests was taken and is not done yet.
    busy: bool = False

    @property
    def in_flight(self) -> int:
        return len(self.waiting) + self.busy


class RoundRobin(Generic[K, T]):
    """Requests in flight per key (a connection), taken one key at a time in turn.

    A request is in flight from ``put`` until ``done``: waiting in its key's queue, then
    taken. A key has at most ``limit`` in flight (its own limit, which may change) and at
    most one taken at a time, so its requests are answered in order.
    """

    def __init__(self) -> None:
        self._queues: dict[K, _Queue[T]] = {}
        #: Keys with a request waiting and none taken, in the order of their turns.
        self._ready: OrderedDict[K, None] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._queues

    def __len__(self) -> int:
        return len(self._queues)

    def add(self, key: K, limit: int) -> None:
        if key in self._queues:
            raise SchedulingError(f"{key!r} is already scheduled")
        self._queues[key] = _Queue(self._checked(limit))

    def remove(self, key: K) -> list[T]:
        """Forget ``key``; the requests it still had waiting (a taken one is not among
        them). Removing a key that is not there returns nothing."""
        queue = self._queues.pop(key, None)
        if queue is None:
            return []
        self._ready.pop(key, None)
        return list(queue.waiting)

    def set_limit(self, key: K, limit: int) -> None:
        """Change the key's limit; a lower one only stops new requests until enough are done."""
        self._queue(key).limit = self._checked(limit)

    def limit(self, key: K) -> int:
        return self._queue(key).limit

    def in_flight(self, key: K) -> int:
        return self._queue(key).in_flight

    def has_room(self, key: K) -> bool:
        """Whether ``key`` may ``put`` another request; a key that is gone has none."""
        queue = self._queues.get(key)
        return queue is not None and queue.in_flight < queue.limit

    def put(self, key: K, request: T) -> None:
        """Queue a request read from ``key``; ``SchedulingError`` if it had no room."""
        queue = self._queue(key)
        if queue.in_flight >= queue.limit:
            raise SchedulingError(f"{key!r} already has {queue.in_flight} requests in flight")
        queue.waiting.append(request)
        if not queue.busy:
            self._ready.setdefault(key, None)

    @property
    def ready(self) -> bool:
        """Whether ``take`` would hand out a request."""
        return bool(self._ready)

    def take(self) -> tuple[K, T] | None:
        """The next request: the first waiting one of the key whose turn it is, or
        ``None`` if no key has one (or all that have are busy)."""
        if not self._ready:
            return None
        key, _ = self._ready.popitem(last=False)
        queue = self._queues[key]
        queue.busy = True
        return key, queue.waiting.popleft()

    def done(self, key: K) -> None:
        """The request taken from ``key`` is answered: its next one (if any) waits for its
        turn behind every key that is ready now. A key removed meanwhile is ignored."""
        queue = self._queues.get(key)
        if queue is None:
            return
        if not queue.busy:
            raise SchedulingError(f"{key!r} has no request taken")
        queue.busy = False
        if queue.waiting:
            self._ready[key] = None

    def _queue(self, key: K) -> _Queue[T]:
        queue = self._queues.get(key)
        if queue is None:
            raise SchedulingError(f"{key!r} is not scheduled")
        return queue

    @staticmethod
    def _checked(limit: int) -> int:
        if limit < 1:
            raise SchedulingError(f"the limit must be at least 1, not {limit}")
        return limit
