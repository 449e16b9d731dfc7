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
from sync.engine import MAX_DRAFT_LENGTH, EngineStatus, PayloadError
from sync.protocol import MAX_TEXT as MAX_MESSAGE_LENGTH

__all__ = [
    "MAX_DRAFT_LENGTH",
    "MAX_MESSAGE_LENGTH",
    "PayloadError",
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
