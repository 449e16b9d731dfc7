"""The base of every Postbox table: a ValueBox table behind a write-behind cache.

Writes stay in memory until the transaction commits; each key also remembers
the value it had before the transaction, which is what change records and
dependent tables diff against. Reads inside a transaction see its own writes,
range scans included. Point reads are kept for the rest of the transaction (the
write lock, or the read snapshot, keeps them true). An exception before commit
simply drops the caches.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from itertools import islice
from operator import itemgetter
from typing import Final, Generic, Protocol, TypeVar, cast

from postbox.value_box import KeyType, ValueBox, ValueBoxTable

__all__ = ["MISSING", "CommitParticipant", "Table", "WrittenTables"]


class CommitParticipant(Protocol):
    """What the postbox needs of a table to commit or drop a transaction."""

    written: WrittenTables

    @property
    def has_changes(self) -> bool: ...

    def before_commit(self) -> None: ...

    def committed(self) -> None: ...

    def forget_committed(self) -> None: ...

    def reset(self) -> None: ...


class WrittenTables:
    """The tables a transaction used, so that a commit visits those and no others.

    A table joins on its first write of a transaction, or its first read kept in its
    cache; ``reset`` empties the list for the next one. ``rank`` is each table's place in
    the commit order.
    """

    __slots__ = ("rank", "tables")

    def __init__(self) -> None:
        self.tables: list[CommitParticipant] = []
        self.rank: dict[CommitParticipant, int] = {}

    def join(self, table: CommitParticipant) -> None:
        self.tables.append(table)

    def in_commit_order(self) -> list[CommitParticipant]:
        tables = self.tables
        if len(tables) > 1 and self.rank:
            tables.sort(key=self.rank.__getitem__)
        return list(tables)

    def reset(self) -> None:
        self.tables = []


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: "Not known": the caller did not say what a key held before this transaction.
MISSING: Final = _Missing()

#: The key type of a table: binary keys (``bytes``) or int64 keys (``int``).
K = TypeVar("K", bytes, int)

#: New keys that ``_pending_keys`` inserts one by one rather than merging.
_INSERTED_IN_PLACE = 16
_KEY = itemgetter(0)
#: Committed values a table keeps across transactions before it starts afresh.
COMMITTED_CACHE_LIMIT: Final = 10_000


class Table(Generic[K]):
    """One Postbox table keyed by ``K`` (``bytes`` for binary keys, ``int`` for int64
    ones). Subclasses add typed accessors over the raw ``_get``/``_set``."""

    #: Whether the table keeps the committed values it read or wrote across
    #: transactions (small tables every commit reads: read states, chat list index);
    #: the postbox drops them when another process commits.
    keeps_committed_values = False

    def __init__(self, box: ValueBox, name: str, key_type: KeyType = KeyType.BINARY) -> None:
        self.box = box
        self._committed: dict[K, bytes | None] | None = {} if self.keeps_committed_values else None
        self.spec = ValueBoxTable(name, key_type)
        box.ensure_table(self.spec)
        self._updated: dict[K, bytes | None] = {}
        self._initial: dict[K, bytes | None] = {}
        #: Stored values read in this transaction, for keys it has not written.
        self._read: dict[K, bytes | None] = {}
        self._sorted_keys: list[K] | None = None
        self._previous_sorted: list[K] | None = None
        #: True while every key written held nothing before the transaction.
        self._only_new_keys = True
        #: Where the table lists itself on its first write of a transaction (the
        #: ``Tables``' shared list; a table of its own otherwise).
        self.written = WrittenTables()
        self._listed = False

    # -- raw access -----------------------------------------------------------

    def _get(self, key: K) -> bytes | None:
        value = self._updated.get(key, MISSING)
        if value is MISSING:
            value = self._read.get(key, MISSING)
            if value is MISSING and self._committed is not None:
                value = self._committed.get(key, MISSING)
            if value is MISSING:
                value = self.box.get(self.spec, key)
                if self.box.in_transaction:  # outside one, nothing keeps it true
                    self._read[key] = value
                    if not self._listed:
                        self._listed = True
                        self.written.join(self)
        return value  # type: ignore[return-value]

    def _assume_stored(self, key: K, value: bytes | None) -> None:
        """Take ``value`` as what ``key`` holds in the file, for this transaction, without
        reading it (the caller knows it)."""
        self._read[key] = value
        if not self._listed:
            self._listed = True
            self.written.join(self)

    def write_caches(self) -> tuple[dict[K, bytes | None], dict[K, bytes | None]]:
        """This transaction's written values and what their keys held before it, for a
        bulk insert that writes keys it knows to be new straight into them (the hot path
        of adding messages). The sorted-key cache is dropped, as after any bulk write."""
        self._sorted_keys = None
        if not self._listed:
            self._listed = True
            self.written.join(self)
        return self._updated, self._initial

    def _contains(self, key: K) -> bool:
        return self._get(key) is not None

    def _set(self, key: K, value: bytes, previous: bytes | None | _Missing = MISSING) -> None:
        """Cache a write; ``previous`` saves a read when the caller knows the old value."""
        if key not in self._updated:
            self._remember(key, previous)
        self._updated[key] = value

    def _put_new(self, key: K, value: bytes) -> None:
        """Cache a write to a key known to hold nothing before this transaction."""
        if key not in self._updated:
            self._remember(key, None)
        self._updated[key] = value

    def _remove(self, key: K, previous: bytes | None | _Missing = MISSING) -> None:
        if key not in self._updated:
            self._remember(key, previous)
        self._updated[key] = None

    def _remember(self, key: K, previous: bytes | None | _Missing) -> None:
        """Record what ``key`` held before the transaction, on its first write."""
        if not self._listed:
            self._listed = True
            self.written.join(self)
        if isinstance(previous, _Missing):
            previous = self._read.get(key, MISSING)
            if isinstance(previous, _Missing) and self._committed is not None:
                previous = self._committed.get(key, MISSING)
            if isinstance(previous, _Missing):
                previous = self.box.get(self.spec, key)
        self._initial[key] = previous
        if previous is not None:
            self._only_new_keys = False
        if self._sorted_keys is not None:
            insort(self._sorted_keys, key)

    def _pending_keys(self) -> list[K]:
        """The keys written in this transaction, sorted.

        A bulk write drops the sorted list instead of inserting each key into it; the
        keys written since are then the dictionary's tail (keys are never removed from
        it within a transaction), so the list is rebuilt by merging that tail, sorted,
        into the previous list: linear, not a full sort per range read. A short tail
        (a write of one message between reads) is inserted in place instead.
        """
        if self._sorted_keys is None:
            previous = self._previous_sorted
            if previous is not None and len(previous) <= len(self._updated):
                tail = sorted(islice(self._updated, len(previous), None))
                if len(tail) <= _INSERTED_IN_PLACE:
                    for key in tail:
                        insort(previous, key)
                    self._sorted_keys = previous
                else:
                    self._sorted_keys = sorted(previous + tail)  # two runs: a merge
            else:
                self._sorted_keys = sorted(self._updated)
            self._previous_sorted = self._sorted_keys
        return self._sorted_keys

    def _range(
        self, lower: K, upper: K, *, limit: int = -1, reverse: bool = False
    ) -> Iterator[tuple[K, bytes]]:
        """Rows with ``lower <= key < upper`` as this transaction sees them."""
        if limit == 0:
            return
        updated = self._updated
        stored = self._stored(lower, upper, limit=limit, reverse=reverse)
        if not updated:
            yield from stored
            return
        pending = self._pending_keys()
        start, end = bisect_left(pending, lower), bisect_left(pending, upper)
        if start == end:
            yield from stored
            return
        stored = self._stored(lower, upper, reverse=reverse)
        keys = pending[start:end]
        if reverse:
            keys.reverse()
        yield from _merge(stored, keys, updated, limit, reverse)

    def _range_list(
        self, lower: K, upper: K, *, limit: int = -1, reverse: bool = False
    ) -> list[tuple[K, bytes]]:
        """``_range`` read at once; a window with no pending writes is one fetch."""
        updated = self._updated
        if updated:
            pending = self._pending_keys()
            if bisect_left(pending, lower) != bisect_left(pending, upper):
                return list(self._range(lower, upper, limit=limit, reverse=reverse))
        rows = self.box.range_list(self.spec, lower, upper, limit=limit, reverse=reverse)
        return cast("list[tuple[K, bytes]]", rows)

    def _stored(
        self, lower: K, upper: K, *, limit: int = -1, reverse: bool = False
    ) -> Iterator[tuple[K, bytes]]:
        """Committed rows only (the box's keys are this table's key type)."""
        rows = self.box.range(self.spec, lower, upper, limit=limit, reverse=reverse)
        return cast("Iterator[tuple[K, bytes]]", rows)

    def _count(self, lower: K, upper: K) -> int:
        total = self.box.count(self.spec, lower, upper)
        if self._updated:
            pending = self._pending_keys()
            start, end = bisect_left(pending, lower), bisect_left(pending, upper)
            for key in pending[start:end]:
                total += (self._updated[key] is not None) - (self._initial[key] is not None)
        return total

    # -- transaction life cycle -----------------------------------------------

    @property
    def is_written(self) -> bool:
        """Whether the transaction wrote to any key (possibly what it held already)."""
        return bool(self._updated)

    @property
    def has_changes(self) -> bool:
        """Whether any key holds something else than before the transaction."""
        if not self._updated:
            return False
        initial = self._initial
        return any(initial[key] != value for key, value in self._updated.items())

    def changes(self) -> Iterator[tuple[K, bytes | None, bytes | None]]:
        """``(key, before, after)`` for every key whose value this transaction changed."""
        initial = self._initial
        for key, value in self._updated.items():
            before = initial[key]
            if before != value:
                yield key, before, value

    def before_commit(self) -> None:
        """Flush cached writes in key order; the transaction's SQLite write lock is held."""
        updated, initial = self._updated, self._initial
        if not updated:
            return
        if self._only_new_keys:
            # Every key was empty before (a bulk load): no removals, no unchanged values.
            # Sorting by the key alone compares bytes, not (key, value) tuples: twice as fast.
            rows = [
                row
                for row in (
                    sorted(updated.items(), key=_KEY) if len(updated) > 1 else updated.items()
                )
                if row[1] is not None
            ]
            if rows:
                self.box.set_many(self.spec, cast("list[tuple[K, bytes]]", rows))
            return
        if len(updated) == 1:  # a row of state (a read state, a chat's position)
            [(key, value)] = updated.items()
            if value is None:
                if initial[key] is not None:
                    self.box.remove(self.spec, key)
            elif value != initial[key]:
                self.box.set(self.spec, key, value)
            return
        keys = self._pending_keys()
        removals = [k for k in keys if updated[k] is None and initial[k] is not None]
        if removals:
            self.box.remove_many(self.spec, removals)
        writes = [
            (k, value) for k in keys if (value := updated[k]) is not None and value != initial[k]
        ]
        if writes:
            self.box.set_many(self.spec, writes)

    def committed(self) -> None:
        """The transaction committed: keep what it read and wrote, if the table keeps
        committed values. ``reset`` follows."""
        committed = self._committed
        if committed is None:
            return
        if len(committed) > COMMITTED_CACHE_LIMIT:
            committed.clear()
        committed.update(self._read)
        committed.update(self._updated)

    def forget_committed(self) -> None:
        """Another process committed: what this table kept may be stale."""
        if self._committed:
            self._committed.clear()

    def reset(self) -> None:
        """Forget the transaction's reads and writes (after commit, or to roll back)."""
        if self._read:
            self._read = {}
        self._listed = False
        if not self._initial:
            return
        self._updated = {}
        self._initial = {}
        self._sorted_keys = self._previous_sorted = None
        self._only_new_keys = True


def _merge(
    stored: Iterator[tuple[K, bytes]],
    pending: list[K],
    updated: dict[K, bytes | None],
    limit: int,
    reverse: bool,
) -> Iterator[tuple[K, bytes]]:
    """Merge stored rows with the cache's rows of the same range, cache winning."""
    emitted = 0
    row = next(stored, None)
    index = 0
    count = len(pending)
    while row is not None or index < count:
        if index < count and (
            row is None or (pending[index] > row[0] if reverse else pending[index] < row[0])
        ):
            key = pending[index]
            index += 1
            value = updated[key]
            if value is None:
                continue
            yield key, value
        else:
            assert row is not None
            key = row[0]
            if key in updated:
                row = next(stored, None)
                continue
            yield row
            row = next(stored, None)
        emitted += 1
        if emitted == limit:
            return
