"""ItemCollectionInfoTable: each namespace's ordered list of collections.

Key: namespace(4) index(4); value: the collection id and its ``ItemCollectionInfo``.
Listing a namespace's collections (the sticker packs a picker shows) reads these rows
only, never the items; reordering rewrites them without touching the items.
"""

from __future__ import annotations

from collections.abc import Sequence

from postbox.item_collection import ItemCollectionId, ItemCollectionInfo
from postbox.keys import (
    decode_item_collection_info_key,
    encode_int32,
    item_collection_info_key,
    successor,
)
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["ItemCollectionInfoTable"]


class ItemCollectionInfoTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "item_collection_infos")

    def _rows(self, namespace: int) -> list[tuple[bytes, bytes]]:
        prefix = encode_int32(namespace)
        return self._range_list(prefix, successor(prefix))

    def infos(self, namespace: int) -> list[tuple[ItemCollectionId, ItemCollectionInfo]]:
        """The namespace's collections in their order."""
        found = []
        for _key, value in self._rows(namespace):
            collection_id, info = ItemCollectionInfo.decode(value)
            found.append((ItemCollectionId(namespace, collection_id), info))
        return found

    def replace(self, namespace: int, infos: Sequence[tuple[int, ItemCollectionInfo]]) -> None:
        """Make ``infos`` (collection id, info) the namespace's list, in this order."""
        stored = self._rows(namespace)
        for index, (collection_id, info) in enumerate(infos):
            self._set(item_collection_info_key(namespace, index), info.encode(collection_id))
        for key, value in stored[len(infos) :]:
            self._remove(key, value)

    def updated_namespaces(self) -> frozenset[int]:
        """The namespaces whose list this transaction changed."""
        return frozenset(decode_item_collection_info_key(key)[0] for key, _, _ in self.changes())
