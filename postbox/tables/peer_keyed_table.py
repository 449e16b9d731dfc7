"""A table of one encodable record per peer, keyed by the PeerId as an int64."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from postbox.ids import PeerId
from postbox.tables.table import COMMITTED_CACHE_LIMIT, Table
from postbox.value_box import KeyType, ValueBox

__all__ = ["PeerKeyedTable"]


class Encodable(Protocol):
    def encode(self) -> bytes: ...


V = TypeVar("V", bound=Encodable)


class PeerKeyedTable(Table[int], Generic[V]):
    """``PeerId -> V``; subclasses say how to decode a stored value."""

    def __init__(self, box: ValueBox, name: str) -> None:
        super().__init__(box, name, KeyType.INT64)
        #: id(bytes) -> (the bytes, their record) for the values this transaction read or
        #: wrote, so that reading a record again, or diffing it at commit, decodes nothing
        #: twice (the bytes are kept, so their id is not reused meanwhile).
        self._decoded: dict[int, tuple[bytes, V]] = {}

    def _decode(self, peer_id: int, data: bytes) -> V:
        raise NotImplementedError

    def _record(self, peer: int, data: bytes) -> V:
        known = self._decoded.get(id(data))
        if known is not None and known[0] is data:
            return known[1]
        value = self._decode(peer, data)
        if self._listed:  # in a transaction: reset forgets it
            self._decoded[id(data)] = (data, value)
        return value

    def get(self, peer_id: int) -> V | None:
        peer = int(peer_id)
        data = self._get(peer)
        return None if data is None else self._record(peer, data)

    def set(self, peer_id: int, value: V) -> None:
        peer = int(peer_id)
        data = value.encode()
        self._set(peer, data)  # lists the table
        self._decoded[id(data)] = (data, value)

    def remove(self, peer_id: int) -> None:
        self._remove(int(peer_id))

    def all(self) -> dict[PeerId, V]:
        return {
            PeerId(int(key)): self._decode(int(key), data)
            for key, data in self._range(-(2**63), 2**63 - 1)
        }

    def updated(self) -> dict[PeerId, tuple[V | None, V | None]]:
        """``peer -> (before, after)`` for every record this transaction changed."""
        result: dict[PeerId, tuple[V | None, V | None]] = {}
        for key, before, after in self.changes():
            peer = int(key)
            result[PeerId(peer)] = (
                None if before is None else self._record(peer, before),
                None if after is None else self._record(peer, after),
            )
        return result

    def reset(self) -> None:
        super().reset()
        # A table keeping committed values keeps their records too, up to a bound.
        if self._decoded and (
            not self.keeps_committed_values or len(self._decoded) > 2 * COMMITTED_CACHE_LIMIT
        ):
            self._decoded = {}

    def forget_committed(self) -> None:
        super().forget_committed()
        self._decoded = {}
