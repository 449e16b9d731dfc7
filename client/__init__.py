"""The app's wiring: account, typed data layer and CLI entry points."""

from client.engine_data import (
    EngineContactList,
    EngineData,
    EngineDataItem,
    EngineDataMap,
    EngineDataMapItem,
    EngineDataSubscription,
    Item,
)

__all__ = [
    "EngineContactList",
    "EngineData",
    "EngineDataItem",
    "EngineDataMap",
    "EngineDataMapItem",
    "EngineDataSubscription",
    "Item",
]
