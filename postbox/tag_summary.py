"""Tag summaries: how many messages of a peer carry a shared-media tag."""

from __future__ import annotations

from dataclasses import dataclass

from postbox.ids import PeerId

__all__ = ["MessageHistoryTagSummary", "TagSummaryKey"]


@dataclass(frozen=True, slots=True)
class TagSummaryKey:
    peer_id: PeerId
    tag: int
    namespace: int


@dataclass(frozen=True, slots=True)
class MessageHistoryTagSummary:
    """``count`` messages carry the tag, counted up to message id ``max_id``."""

    count: int
    max_id: int
