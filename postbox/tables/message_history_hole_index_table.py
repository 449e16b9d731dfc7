"""MessageHistoryHoleIndexTable: the id ranges of each history not fetched yet.

Key peer(8) namespace(4) space(4) upper(4), value lower(4): keyed by the upper
end, the hole containing an id is the first key at or above it. A change to
the everywhere space applies to every tag space the seed configuration lists.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from postbox.coding import decoding
from postbox.holes import (
    ALL_MESSAGE_IDS,
    ClosedRange,
    HoleKey,
    HoleOperation,
    HoleOperationKind,
    MessageHistoryHoleSpace,
    add_range,
    remove_range,
)
from postbox.ids import PeerId
from postbox.keys import INT32, O32, O64
from postbox.seed_configuration import SeedConfiguration
from postbox.tables.message_history_metadata_table import MessageHistoryMetadataTable
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MessageHistoryHoleIndexTable"]

# peer(8) namespace(4) space(4) upper(4)
_KEY = struct.Struct(">QIII")
_PREFIX = struct.Struct(">QII")
_DECODING = decoding("hole")

HoleObserver = Callable[[HoleKey, HoleOperation], None]


class MessageHistoryHoleIndexTable(Table[bytes]):
    def __init__(
        self,
        box: ValueBox,
        seed_configuration: SeedConfiguration,
        metadata: MessageHistoryMetadataTable,
    ) -> None:
        super().__init__(box, "message_history_holes")
        self.seed_configuration = seed_configuration
        self.metadata = metadata
        #: Told of every effective hole change; the transaction records them.
        self.observer: HoleObserver | None = None

    # -- reading --------------------------------------------------------------

    def holes(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace
    ) -> list[ClosedRange]:
        """Every hole of a (peer, namespace, space), lowest first.

        A peer whose holes were never initialized has its configured namespaces
        wholly missing, exactly as after initialization.
        """
        if not self.metadata.is_initialized(peer_id):
            return self._initial_holes(peer_id, namespace, space)
        return self._overlapping(peer_id, namespace, space, ALL_MESSAGE_IDS)

    def overlapping(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, ids: ClosedRange
    ) -> list[ClosedRange]:
        """The holes that share at least one id with ``ids``."""
        if not self.metadata.is_initialized(peer_id):
            return [h for h in self._initial_holes(peer_id, namespace, space) if h.overlaps(ids)]
        return self._overlapping(peer_id, namespace, space, ids)

    def containing(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, id_: int
    ) -> ClosedRange | None:
        holes = self.overlapping(peer_id, namespace, space, ClosedRange(id_, id_))
        return holes[0] if holes else None

    def _initial_holes(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace
    ) -> list[ClosedRange]:
        if namespace not in self.seed_configuration.hole_namespaces(peer_id.namespace):
            return []
        if space.is_everywhere or space.tag in self.seed_configuration.hole_tags(
            peer_id.namespace, namespace
        ):
            return [ALL_MESSAGE_IDS]
        return []

    def _overlapping(
        self, peer_id: int, namespace: int, space: MessageHistoryHoleSpace, ids: ClosedRange
    ) -> list[ClosedRange]:
        prefix = (peer_id + O64, namespace + O32, space.tag)
        lower_key = _KEY.pack(*prefix, max(ids.lower, -(2**31)) + O32)
        upper_key = _PREFIX.pack(peer_id + O64, namespace + O32, space.tag + 1)
        result: list[ClosedRange] = []
        with _DECODING:
            for key, value in self._range(lower_key, upper_key):
                lower = INT32.unpack(value)[0] - O32
                if lower > ids.upper:
                    break
                upper = _KEY.unpack(key)[3] - O32
                result.append(ClosedRange(lower, upper))
        return result

    # -- writing --------------------------------------------------------------

    def ensure_initialized(self, peer_id: PeerId) -> None:
        """Give a newly seen peer its configured holes: every id, in every listed space."""
        if self.metadata.is_initialized(peer_id):
            return
        self.metadata.set_initialized(peer_id)
        for namespace in self.seed_configuration.hole_namespaces(peer_id.namespace):
            self.add(peer_id, namespace, MessageHistoryHoleSpace.everywhere(), ALL_MESSAGE_IDS)

    def add(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, ids: ClosedRange
    ) -> None:
        """Mark ``ids`` as missing, merging with overlapping and adjacent holes."""
        self.ensure_initialized(peer_id)
        for target in self._spaces(peer_id, namespace, space):
            self._add_internal(peer_id, namespace, target, ids)

    def remove(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, ids: ClosedRange
    ) -> None:
        """Mark ``ids`` as fetched, cutting and splitting the holes they touch."""
        self.ensure_initialized(peer_id)
        spaces = self._spaces(peer_id, namespace, space)
        if len(spaces) > 1:
            # Every space of a (peer, namespace) is one key range: one read finds what
            # to cut in all of them (usually nothing, after a catch-up's first slice).
            touched = self._overlapping_by_tag(peer_id, namespace, ids)
            for target in spaces:
                overlapping = touched.get(target.tag)
                if overlapping:
                    self._remove_internal(peer_id, namespace, target, ids, overlapping)
            return
        for target in spaces:
            self._remove_internal(peer_id, namespace, target, ids)

    def _overlapping_by_tag(
        self, peer_id: int, namespace: int, ids: ClosedRange
    ) -> dict[int, list[ClosedRange]]:
        """The holes of every space of (peer, namespace) that overlap ``ids``, by tag."""
        lower_key = _PREFIX.pack(peer_id + O64, namespace + O32, 0)
        upper_key = _PREFIX.pack(peer_id + O64, namespace + O32 + 1, 0)
        result: dict[int, list[ClosedRange]] = {}
        with _DECODING:
            for key, value in self._range(lower_key, upper_key):
                _, _, tag, upper_key_id = _KEY.unpack(key)
                hole = ClosedRange(INT32.unpack(value)[0] - O32, upper_key_id - O32)
                if hole.upper >= ids.lower and hole.lower <= ids.upper:
                    result.setdefault(tag, []).append(hole)
        return result

    def _spaces(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace
    ) -> list[MessageHistoryHoleSpace]:
        if not space.is_everywhere:
            return [space]
        tags = self.seed_configuration.hole_tags(peer_id.namespace, namespace)
        return [space, *(MessageHistoryHoleSpace.tagged(tag) for tag in sorted(tags))]

    def _add_internal(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, ids: ClosedRange
    ) -> None:
        near = ClosedRange(max(ids.lower - 1, 1), min(ids.upper + 1, ALL_MESSAGE_IDS.upper))
        dropped, merged = add_range(self._overlapping(peer_id, namespace, space, near), ids)
        if merged is None:
            return
        for hole in dropped:
            self._remove(self._key(peer_id, namespace, space, hole.upper))
        self._set(
            self._key(peer_id, namespace, space, merged.upper), INT32.pack(merged.lower + O32)
        )
        self._notify(peer_id, namespace, space, HoleOperation(HoleOperationKind.INSERT, ids))

    def _remove_internal(
        self,
        peer_id: PeerId,
        namespace: int,
        space: MessageHistoryHoleSpace,
        ids: ClosedRange,
        overlapping: list[ClosedRange] | None = None,
    ) -> None:
        if overlapping is None:
            overlapping = self._overlapping(peer_id, namespace, space, ids)
        dropped, kept = remove_range(overlapping, ids)
        if not dropped:
            return
        for hole in dropped:
            self._remove(self._key(peer_id, namespace, space, hole.upper))
        for hole in kept:
            self._set(
                self._key(peer_id, namespace, space, hole.upper), INT32.pack(hole.lower + O32)
            )
        self._notify(peer_id, namespace, space, HoleOperation(HoleOperationKind.REMOVE, ids))

    def _notify(
        self, peer_id: PeerId, namespace: int, space: MessageHistoryHoleSpace, op: HoleOperation
    ) -> None:
        if self.observer is not None:
            self.observer(HoleKey(peer_id, namespace, space), op)

    @staticmethod
    def _key(peer_id: int, namespace: int, space: MessageHistoryHoleSpace, upper: int) -> bytes:
        return _KEY.pack(peer_id + O64, namespace + O32, space.tag, upper + O32)
