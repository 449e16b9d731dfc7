"""ContactTable: the set of peers that are contacts."""

from __future__ import annotations

from postbox.ids import PeerId
from postbox.keys import decode_int64, encode_int64
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["ContactTable"]

_LOWER = encode_int64(-(2**63))
_UPPER = b"\xff" * 9


class ContactTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "contacts")

    def is_contact(self, peer_id: int) -> bool:
        return self._contains(encode_int64(peer_id))

    def peer_ids(self) -> frozenset[PeerId]:
        return frozenset(PeerId(decode_int64(key)) for key, _ in self._range(_LOWER, _UPPER))

    def replace(self, peer_ids: frozenset[PeerId]) -> bool:
        """Make ``peer_ids`` the contact list; True if it changed."""
        current = self.peer_ids()
        for peer_id in current - peer_ids:
            self._remove(encode_int64(peer_id), b"")
        for peer_id in peer_ids - current:
            self._set(encode_int64(peer_id), b"", None)
        return current != peer_ids
