"""Id-based read states, as the seeds' ``PeerReadState.idBased``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError

__all__ = ["CombinedPeerReadState", "PeerReadState"]


@dataclass(frozen=True, slots=True)
class PeerReadState:
    """What has been read in one (peer, message namespace).

    ``max_incoming_read_id``: the newest incoming message we have read.
    ``max_outgoing_read_id``: the newest of our messages the other side has read.
    ``max_known_id``: the newest message id known here. ``count``: unread incoming
    messages. ``marked_unread``: the user asked to see the chat as unread.
    """

    max_incoming_read_id: int = 0
    max_outgoing_read_id: int = 0
    max_known_id: int = 0
    count: int = 0
    marked_unread: bool = False

    @property
    def is_unread(self) -> bool:
        return self.count > 0 or self.marked_unread

    def is_outgoing_read(self, message_id: int) -> bool:
        return message_id <= self.max_outgoing_read_id

    def with_count(self, count: int) -> PeerReadState:
        return replace(self, count=max(0, count))

    def encode(self) -> tuple[int, int, int, int, bool]:
        return (
            self.max_incoming_read_id,
            self.max_outgoing_read_id,
            self.max_known_id,
            self.count,
            self.marked_unread,
        )


@dataclass(frozen=True, slots=True)
class CombinedPeerReadState:
    """A peer's read states across message namespaces."""

    states: tuple[tuple[int, PeerReadState], ...]

    @property
    def count(self) -> int:
        return sum(state.count for _, state in self.states)

    @property
    def is_unread(self) -> bool:
        return any(state.is_unread for _, state in self.states)

    @property
    def marked_unread(self) -> bool:
        return any(state.marked_unread for _, state in self.states)

    def get(self, namespace: int) -> PeerReadState | None:
        for state_namespace, state in self.states:
            if state_namespace == namespace:
                return state
        return None

    def as_dict(self) -> dict[int, PeerReadState]:
        return dict(self.states)

    @classmethod
    def from_mapping(cls, states: Mapping[int, PeerReadState]) -> CombinedPeerReadState:
        return cls(tuple(sorted(states.items())))

    def encode(self) -> bytes:
        return pack((1, [(namespace, *state.encode()) for namespace, state in self.states]))

    @classmethod
    def decode(cls, data: bytes) -> CombinedPeerReadState:
        fields = unpack(data, "read state")
        if not isinstance(fields, tuple) or len(fields) != 2 or fields[0] != 1:
            raise CorruptValueError("stored read state has an unknown layout")
        states = []
        with decoding("read state"):
            for namespace, incoming, outgoing, known, count, marked in fields[1]:
                if not all(type(v) is int for v in (namespace, incoming, outgoing, known, count)):
                    raise TypeError("a read mark or count is not a number")
                if type(marked) is not bool:
                    raise TypeError("the marked-unread flag is not a boolean")
                states.append((namespace, PeerReadState(incoming, outgoing, known, count, marked)))
        return cls(tuple(states))
