"""Peers and the per-peer records kept beside them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from postbox.coding import decoding, pack, unpack
from postbox.errors import CorruptValueError
from postbox.ids import INT32_MAX, PeerId

__all__ = [
    "CachedPeerData",
    "Peer",
    "PeerFlags",
    "PeerNotificationSettings",
    "PeerPresence",
    "PresenceStatus",
]


def _fields(data: bytes, what: str, version: int, count: int) -> tuple[Any, ...]:
    fields = unpack(data, what)
    if not isinstance(fields, tuple) or len(fields) != count + 1 or fields[0] != version:
        raise CorruptValueError(f"stored {what} has an unknown layout")
    return fields[1:]


def _check(what: str, *fields: tuple[Any, type, bool]) -> None:
    """Each ``(value, type, optional)`` holds: else the stored ``what`` is corrupt."""
    for value, kind, optional in fields:
        if value is None and optional:
            continue
        if type(value) is not kind:
            raise CorruptValueError(
                f"stored {what} holds {value!r} where a {kind.__name__} belongs"
            )


class PeerFlags(enum.IntFlag):
    VERIFIED = 1 << 0
    BOT = 1 << 1
    BROADCAST = 1 << 2
    SELF = 1 << 3
    #: The account may post in this broadcast channel (its creator, or an admin with
    #: the right to post); its readers may not.
    CAN_POST = 1 << 4


@dataclass(frozen=True, slots=True)
class Peer:
    """A user, group or channel; its kind is the namespace of its id."""

    id: PeerId
    name: str
    username: str | None = None
    access_hash: int = 0
    flags: int = 0
    associated_peer_id: PeerId | None = None

    @property
    def can_post(self) -> bool:
        """Whether the account may write here: anywhere but a broadcast channel it only
        reads (``CAN_POST`` unset)."""
        return not self.flags & PeerFlags.BROADCAST or bool(self.flags & PeerFlags.CAN_POST)

    def encode(self) -> bytes:
        return pack(
            (1, self.name, self.username, self.access_hash, self.flags, self.associated_peer_id)
        )

    @classmethod
    def decode(cls, peer_id: int, data: bytes) -> Peer:
        name, username, access_hash, flags, associated = _fields(data, "peer", 1, 5)
        _check(
            "peer",
            (name, str, False),
            (username, str, True),
            (access_hash, int, False),
            (flags, int, False),
            (associated, int, True),
        )
        return cls(
            PeerId(peer_id),
            name,
            username,
            access_hash,
            flags,
            None if associated is None else PeerId(associated),
        )


class PresenceStatus(enum.IntEnum):
    OFFLINE = 0
    ONLINE = 1
    RECENTLY = 2
    LONG_AGO = 3


@dataclass(frozen=True, slots=True)
class PeerPresence:
    """Online until ``timestamp``, or last seen at ``timestamp``."""

    status: PresenceStatus
    timestamp: int = 0

    def encode(self) -> bytes:
        return pack((1, int(self.status), self.timestamp))

    @classmethod
    def decode(cls, data: bytes) -> PeerPresence:
        status, timestamp = _fields(data, "presence", 1, 2)
        _check("presence", (status, int, False), (timestamp, int, False))
        with decoding("presence"):
            return cls(PresenceStatus(status), timestamp)


@dataclass(frozen=True, slots=True)
class CachedPeerData:
    """The slower-changing details of a peer, loaded when its profile is opened."""

    about: str = ""
    participant_count: int | None = None
    pinned_message_id: int | None = None
    peer_ids: tuple[PeerId, ...] = ()

    def encode(self) -> bytes:
        return pack((1, self.about, self.participant_count, self.pinned_message_id, self.peer_ids))

    @classmethod
    def decode(cls, data: bytes) -> CachedPeerData:
        about, count, pinned, peer_ids = _fields(data, "cached peer data", 1, 4)
        _check("cached peer data", (about, str, False), (count, int, True), (pinned, int, True))
        _check("cached peer data", (peer_ids, tuple, False))
        _check("cached peer data", *((p, int, False) for p in peer_ids))
        with decoding("cached peer data"):
            return cls(about, count, pinned, tuple(PeerId(p) for p in peer_ids))


@dataclass(frozen=True, slots=True)
class PeerNotificationSettings:
    """``muted_until`` is a timestamp; ``MUTED_FOREVER`` (2**31 - 1, as on Telegram's
    wire) mutes for ever, past 2038 too, and 0 not at all."""

    muted_until: int = 0
    sound: str | None = None
    show_previews: bool = True

    MUTED_FOREVER = INT32_MAX

    def is_muted(self, now: int) -> bool:
        return self.muted_until == self.MUTED_FOREVER or self.muted_until > now

    def encode(self) -> bytes:
        return pack((1, self.muted_until, self.sound, self.show_previews))

    @classmethod
    def decode(cls, data: bytes) -> PeerNotificationSettings:
        muted_until, sound, previews = _fields(data, "notification settings", 1, 3)
        _check(
            "notification settings",
            (muted_until, int, False),
            (sound, str, True),
            (previews, bool, False),
        )
        return cls(muted_until, sound, previews)
