"""The app's wiring: account, typed data layer and CLI entry points."""

from client.devices import Device
from client.engine_data import (
    EngineContactList,
    EngineData,
    EngineDataItem,
    EngineDataMap,
    EngineDataMapItem,
    EngineDataSubscription,
    Item,
)
from client.hole_map import HoleSegment, SegmentKind
from client.log_names import operation_log_name
from client.search_query import SearchResults
from client.status_line import StatusLine, status_line
from sync.engine import EngineStatus

__all__ = [
    "operation_log_name",
    "Device",
    "EngineContactList",
    "EngineData",
    "EngineDataItem",
    "EngineDataMap",
    "EngineDataMapItem",
    "EngineDataSubscription",
    "EngineStatus",
    "HoleSegment",
    "Item",
    "SearchResults",
    "SegmentKind",
    "StatusLine",
    "status_line",
]
