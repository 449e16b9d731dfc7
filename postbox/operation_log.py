"""Entries of the persistent operation log (the outbound task queue)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from postbox.ids import PeerId

__all__ = ["PeerOperationLogEntry"]


@dataclass(frozen=True, slots=True)
class PeerOperationLogEntry:
    """One queued operation for ``peer_id``.

    ``tag_local_index`` orders a peer's entries of one tag; ``merged_index``, when
    present, orders the tag's entries across all peers. ``contents`` is any
    msgpack-encodable value.
    """

    peer_id: PeerId
    tag: int
    tag_local_index: int
    merged_index: int | None
    contents: Any
