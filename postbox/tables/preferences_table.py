"""PreferencesTable: app and account settings under string keys."""

from __future__ import annotations

from typing import Any

from postbox.coding import pack, unpack
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["PreferencesTable"]


class PreferencesTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "preferences")

    def get(self, key: str) -> Any:
        data = self._get(key.encode())
        return None if data is None else unpack(data, f"preference {key!r}")

    def set(self, key: str, value: Any) -> None:
        """Store any msgpack-encodable value; ``None`` removes the key."""
        if value is None:
            self._remove(key.encode())
        else:
            self._set(key.encode(), pack(value))

    def updated_keys(self) -> frozenset[str]:
        return frozenset(bytes(key).decode() for key, _, _ in self.changes())
