"""Sync positions: the account's state cursor, each channel's own pts, and the channels
still to catch up."""

from __future__ import annotations

from dataclasses import dataclass

from postbox.coding import pack, unpack
from postbox.errors import CorruptValueError

__all__ = ["ChannelState", "ChannelToPoll", "StateCursor"]


@dataclass(frozen=True, slots=True)
class StateCursor:
    """The position in the server's update stream: pts, qts, seq and date."""

    pts: int
    qts: int
    seq: int
    date: int

    def encode(self) -> bytes:
        return pack((1, self.pts, self.qts, self.seq, self.date))

    @classmethod
    def decode(cls, data: bytes) -> StateCursor:
        fields = unpack(data, "state cursor")
        if not isinstance(fields, tuple) or len(fields) != 5 or fields[0] != 1:
            raise CorruptValueError("stored state cursor has an unknown layout")
        if not all(type(value) is int for value in fields[1:]):
            raise CorruptValueError("stored state cursor holds a value that is not a number")
        return cls(*fields[1:])


@dataclass(frozen=True, slots=True)
class ChannelState:
    """A channel's own pts, and the pts below which its history is known to be invalid."""

    pts: int
    invalidated_pts: int | None = None

    def encode(self) -> bytes:
        return pack((1, self.pts, self.invalidated_pts))

    @classmethod
    def decode(cls, data: bytes) -> ChannelState:
        fields = unpack(data, "channel state")
        if not isinstance(fields, tuple) or len(fields) != 3 or fields[0] != 1:
            raise CorruptValueError("stored channel state has an unknown layout")
        if type(fields[1]) is not int or not (fields[2] is None or type(fields[2]) is int):
            raise CorruptValueError("stored channel state holds a value that is not a number")
        return cls(fields[1], fields[2])


@dataclass(frozen=True, slots=True)
class ChannelToPoll:
    """A channel to ask its own difference for: ``pts`` is the highest pts the server
    said it reached (0: not said, as in a ``channelTooLong`` without one)."""

    pts: int

    def encode(self) -> bytes:
        return pack((1, self.pts))

    @classmethod
    def decode(cls, data: bytes) -> ChannelToPoll:
        fields = unpack(data, "channel to poll")
        if not isinstance(fields, tuple) or len(fields) != 2 or fields[0] != 1:
            raise CorruptValueError("stored channel to poll has an unknown layout")
        if type(fields[1]) is not int:
            raise CorruptValueError("stored channel to poll holds a pts that is not a number")
        return cls(fields[1])
