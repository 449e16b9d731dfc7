"""Item collection views: a namespace's collections with previews, and one collection.

``ItemCollectionInfosView`` lists the collections of some namespaces in their order,
each with its first items (a picker's strip of packs, each shown by its first sticker),
as Telegram's ``ItemCollectionsView``. ``ItemCollectionItemsView`` holds one
collection's info and all its items (the grid of a pack). Each is replayed only when a
commit changed one of its namespaces' lists or one of the collections it shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from postbox.item_collection import ItemCollectionId, ItemCollectionInfo, ItemCollectionItem
from postbox.view_keys import ItemCollectionInfosViewKey, ItemCollectionItemsViewKey
from postbox.views import topics
from postbox.views.reloading_view import ReloadingView
from postbox.views.view import MutableView, ViewSnapshot, ViewUpdateType

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = [
    "ItemCollectionEntry",
    "ItemCollectionInfosView",
    "ItemCollectionItemsView",
    "MutableItemCollectionInfosView",
    "MutableItemCollectionItemsView",
]


@dataclass(frozen=True, slots=True)
class ItemCollectionEntry:
    """A listed collection, with its first items for a preview."""

    id: ItemCollectionId
    info: ItemCollectionInfo
    first_items: tuple[ItemCollectionItem, ...]


@dataclass(frozen=True, slots=True)
class ItemCollectionInfosView(ViewSnapshot):
    """Each namespace asked for, with its collections in their order."""

    collections: Mapping[int, tuple[ItemCollectionEntry, ...]]

    def entries(self) -> tuple[ItemCollectionEntry, ...]:
        """Every collection, namespace after namespace in the order the key named them."""
        return tuple(entry for listed in self.collections.values() for entry in listed)


class MutableItemCollectionInfosView(MutableView):
    def __init__(self, key: ItemCollectionInfosViewKey, tx: Transaction) -> None:
        self.key = key
        self._lists = {namespace: self._load(tx, namespace) for namespace in key.namespaces}
        self._snapshot = self._freeze()

    def _load(self, tx: Transaction, namespace: int) -> tuple[ItemCollectionEntry, ...]:
        return tuple(
            ItemCollectionEntry(collection_id, info, self._first_items(tx, collection_id))
            for collection_id, info in tx.get_item_collection_infos(namespace)
        )

    def _first_items(
        self, tx: Transaction, collection_id: ItemCollectionId
    ) -> tuple[ItemCollectionItem, ...]:
        count = self.key.preview_items
        if count <= 0:
            return ()
        return tuple(tx.get_item_collection_items(collection_id, limit=count))

    def _freeze(self) -> ItemCollectionInfosView:
        return ItemCollectionInfosView(MappingProxyType(dict(self._lists)))

    @property
    def topics(self) -> frozenset[Topic]:
        watched = {topics.item_collection_infos(namespace) for namespace in self.key.namespaces}
        if self.key.preview_items > 0:
            for listed in self._lists.values():
                watched.update(topics.item_collection_items(entry.id) for entry in listed)
        return frozenset(watched)

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        changed = False
        updated_items = change.updated_item_collection_items
        for namespace, listed in self._lists.items():
            if namespace in change.updated_item_collection_infos:
                current = self._load(tx, namespace)
            elif self.key.preview_items > 0 and any(e.id in updated_items for e in listed):
                current = tuple(
                    replace(entry, first_items=self._first_items(tx, entry.id))
                    if entry.id in updated_items
                    else entry
                    for entry in listed
                )
            else:
                continue
            if current != listed:
                self._lists[namespace] = current
                changed = True
        if changed:
            self._snapshot = self._freeze()
            self.update_type = ViewUpdateType.GENERIC
        return changed

    def refresh_external(self, tx: Transaction) -> bool:
        lists = {namespace: self._load(tx, namespace) for namespace in self.key.namespaces}
        if lists == self._lists:
            return False
        self._lists = lists
        self._snapshot = self._freeze()
        self.update_type = ViewUpdateType.GENERIC
        return True

    def immutable(self) -> ItemCollectionInfosView:
        return self._snapshot


@dataclass(frozen=True, slots=True)
class ItemCollectionItemsView(ViewSnapshot):
    """One collection: its info (``None`` while it is not listed) and its items."""

    collection_id: ItemCollectionId
    info: ItemCollectionInfo | None
    items: tuple[ItemCollectionItem, ...]


class MutableItemCollectionItemsView(ReloadingView[ItemCollectionItemsView]):
    def __init__(self, key: ItemCollectionItemsViewKey, tx: Transaction) -> None:
        self.key = key
        collection_id = key.collection_id
        self.watched = frozenset(
            {
                topics.item_collection_items(collection_id),
                topics.item_collection_infos(collection_id.namespace),
            }
        )
        super().__init__(tx)

    def load(self, tx: Transaction) -> ItemCollectionItemsView:
        collection_id = self.key.collection_id
        return ItemCollectionItemsView(
            collection_id,
            tx.get_item_collection_info(collection_id),
            tuple(tx.get_item_collection_items(collection_id)),
        )
