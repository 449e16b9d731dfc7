"""A table of one encodable record per peer, keyed by the PeerId as an int64."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from postbox.ids import PeerId
from postbox.tables.table import Table
from postbox.value_box import KeyType, ValueBox

__all__ = ["PeerKeyedTable"]


class Encodable(Protocol):
    def encode(self) -> bytes: ...


V = TypeVar("V", bound=Encodable)


class PeerKeyedTable(Table[int], Generic[V]):
    """``PeerId -> V``; subclasses say how to decode a stored value."""

    def __init__(self, box: ValueBox, name: str) -> None:
        super().__init__(box, name, KeyType.INT64)

    def _decode(self, peer_id: int, data: bytes) -> V:
        raise NotImplementedError

    def get(self, peer_id: int) -> V | None:
        data = self._get(int(peer_id))
        return None if data is None else self._decode(int(peer_id), data)

    def set(self, peer_id: int, value: V) -> None:
        self._set(int(peer_id), value.encode())

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
                None if before is None else self._decode(peer, before),
                None if after is None else self._decode(peer, after),
            )
        return result
