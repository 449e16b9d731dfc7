"""ItemCollectionItemTable: the items of each collection, in index order.

Key: namespace(4) collection id(8) item index(4); value: the ``ItemCollectionItem``
(its media and search keys). A collection's items are one key range, read without
touching any other collection's.
"""

from __future__ import annotations

from collections.abc import Sequence

from postbox.item_collection import ItemCollectionId, ItemCollectionItem
from postbox.keys import (
    decode_item_collection_item_key,
    item_collection_item_key,
    item_collection_items_prefix,
    successor,
)
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["ItemCollectionItemTable"]


class ItemCollectionItemTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "item_collection_items")

    def _rows(self, collection_id: ItemCollectionId, limit: int = -1) -> list[tuple[bytes, bytes]]:
        prefix = item_collection_items_prefix(*collection_id)
        return self._range_list(prefix, successor(prefix), limit=limit)

    def items(self, collection_id: ItemCollectionId, limit: int = -1) -> list[ItemCollectionItem]:
        """The collection's first ``limit`` items (all with -1), in index order."""
        return [
            ItemCollectionItem.decode(decode_item_collection_item_key(key)[2], value)
            for key, value in self._rows(collection_id, limit)
        ]

    def replace(self, collection_id: ItemCollectionId, items: Sequence[ItemCollectionItem]) -> None:
        """Make ``items`` the collection's items (their indexes distinct)."""
        namespace, id_ = collection_id
        written = set()
        for item in items:
            key = item_collection_item_key(namespace, id_, item.index)
            written.add(key)
            self._set(key, item.encode())
        for key, value in self._rows(collection_id):
            if key not in written:
                self._remove(key, value)

    def updated_collections(self) -> frozenset[ItemCollectionId]:
        """The collections whose items this transaction changed."""
        changed = set()
        for key, _, _ in self.changes():
            namespace, collection_id, _index = decode_item_collection_item_key(key)
            changed.add(ItemCollectionId(namespace, collection_id))
        return frozenset(changed)
