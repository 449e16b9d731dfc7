"""Identifiers: PeerId, MessageId, MessageIndex and their namespaces.

A ``PeerId`` packs a namespace and an id into one int64 so it can key an
INTEGER table and a binary key alike. Message ids are int32 within a
(peer, namespace); a ``MessageIndex`` adds the timestamp and orders messages
the way a chat shows them: by time, then namespace, id and peer.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

from postbox.errors import InvalidArgumentError

__all__ = [
    "INT32_MAX",
    "MAX_MESSAGE_ID",
    "MAX_TIMESTAMP",
    "MIN_TIMESTAMP",
    "MessageId",
    "MessageIndex",
    "MessageNamespace",
    "PeerId",
    "PeerNamespace",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
#: The largest message id a hole can cover; ``INT32_MAX`` stays free as a bound.
MAX_MESSAGE_ID = INT32_MAX - 1
#: A message's timestamp is unsigned 32-bit Unix seconds, as the keys store it: from
#: 1970 through 2106-02-07T06:28:15Z (a signed field would end in 2038).
MIN_TIMESTAMP = 0
MAX_TIMESTAMP = 2**32 - 1

_PEER_ID_BITS = 56
_PEER_ID_MASK = (1 << _PEER_ID_BITS) - 1


class PeerNamespace(enum.IntEnum):
    """The kind of peer, stored in the top byte of a ``PeerId``."""

    USER = 0
    GROUP = 1
    CHANNEL = 2
    SECRET_CHAT = 3


class MessageNamespace(enum.IntEnum):
    """Where a message id comes from: the server, or this device before sending."""

    CLOUD = 0
    LOCAL = 1


class PeerId(int):
    """A peer's namespace (top byte) and id (low 56 bits) in one non-negative int64."""

    __slots__ = ()

    @classmethod
    def make(cls, namespace: int, id: int) -> PeerId:  # noqa: A002 - the seeds' name
        if not 0 <= namespace < 128:
            raise InvalidArgumentError(f"peer namespace {namespace} is outside 0..127")
        if not 0 <= id <= _PEER_ID_MASK:
            raise InvalidArgumentError(f"peer id {id} is outside 0..2^56-1")
        return cls((namespace << _PEER_ID_BITS) | id)

    @property
    def namespace(self) -> int:
        return int(self) >> _PEER_ID_BITS

    @property
    def id(self) -> int:
        return int(self) & _PEER_ID_MASK

    def __repr__(self) -> str:
        try:
            name = PeerNamespace(self.namespace).name.lower()
        except ValueError:
            name = str(self.namespace)
        return f"PeerId({name}:{self.id})"


class MessageId(NamedTuple):
    """A message's identity: peer, message namespace and int32 id."""

    peer_id: PeerId
    namespace: int
    id: int


class MessageIndex(NamedTuple):
    """A message's place in history: its id and timestamp, ordered by time first."""

    id: MessageId
    timestamp: int

    @property
    def sort_key(self) -> tuple[int, int, int, int]:
        message_id = self.id
        return (self.timestamp, message_id.namespace, message_id.id, message_id.peer_id)

    @classmethod
    def absolute_lower_bound(cls, peer_id: PeerId, namespace: int = 0) -> MessageIndex:
        return cls(MessageId(peer_id, namespace, INT32_MIN), MIN_TIMESTAMP)

    @classmethod
    def absolute_upper_bound(cls, peer_id: PeerId, namespace: int = 0) -> MessageIndex:
        return cls(MessageId(peer_id, namespace, INT32_MAX), MAX_TIMESTAMP)

    def __lt__(self, other: Any) -> bool:
        if not isinstance(other, MessageIndex):
            return NotImplemented
        return self.sort_key < other.sort_key

    def __le__(self, other: Any) -> bool:
        if not isinstance(other, MessageIndex):
            return NotImplemented
        return self.sort_key <= other.sort_key

    def __gt__(self, other: Any) -> bool:
        if not isinstance(other, MessageIndex):
            return NotImplemented
        return self.sort_key > other.sort_key

    def __ge__(self, other: Any) -> bool:
        if not isinstance(other, MessageIndex):
            return NotImplemented
        return self.sort_key >= other.sort_key
