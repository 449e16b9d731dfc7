"""What the server told one client of each channel's pts, for a check beyond ``verify``.

``ToldChannelPts`` watches every answer a client's connections receive and every push
the client takes from them, and keeps, per channel, the highest pts any of them carried:
a channel update, a ``channelTooLong`` or a difference's hint, a chat-list entry, a
channel's own difference, the answer to a post. Once the world has settled, no channel
may be stored behind it (``behind``): a client that was told a channel moved and still
lags it lost the news somewhere, which ``verify`` sees only if the lost messages are
outside holes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Set as AbstractSet
from typing import Any

import msgspec

from postbox import PeerId, Transaction
from sync.connection import ServerConnection
from sync.protocol import (
    AnyUpdates,
    ChannelDifference,
    ChannelDifferenceEmpty,
    ChannelPts,
    Dialog,
    GetChannelDifference,
    PeerKind,
    SentMessage,
    SentMessages,
    UpdateChannelTooLong,
    UpdateDeleteChannelMessages,
    UpdateEditChannelMessage,
    UpdateNewChannelMessage,
    UpdateReadChannelInbox,
    WireRecord,
    peer_kind,
)

__all__ = ["ObservedConnection", "ToldChannelPts"]


class ToldChannelPts:
    """The highest pts each channel was said to have reached, over a client's life."""

    def __init__(self) -> None:
        self.highest: dict[int, int] = {}

    def tell(self, channel: int, pts: int | None) -> None:
        # A pts on a chat that is not a channel is a lie the client refuses, not news.
        if peer_kind(channel) is not PeerKind.CHANNEL:
            return
        if pts is not None and pts > self.highest.get(channel, 0):
            self.highest[channel] = pts

    def answer(self, params: WireRecord, result: Any) -> None:
        if isinstance(params, GetChannelDifference) and isinstance(
            result, ChannelDifference | ChannelDifferenceEmpty
        ):
            self.tell(params.channel, result.pts)
        if isinstance(result, SentMessage | SentMessages):
            messages = (result.message,) if isinstance(result, SentMessage) else result.messages
            for message in messages:
                self.tell(message.peer, result.pts)
        self.walk(result)

    def walk(self, value: Any) -> None:
        """Every channel pts inside ``value`` (a wire record, or tuples of them)."""
        match value:
            case ChannelPts() | UpdateChannelTooLong():
                self.tell(value.channel, value.pts)
            case UpdateDeleteChannelMessages() | UpdateReadChannelInbox():
                self.tell(value.channel, value.pts)
            case UpdateNewChannelMessage() | UpdateEditChannelMessage():
                self.tell(value.message.peer, value.pts)
            case Dialog():
                self.tell(value.peer, value.pts)
            case tuple() | list():
                for item in value:
                    self.walk(item)
            case msgspec.Struct():
                for name in value.__struct_fields__:
                    item = getattr(value, name)
                    if isinstance(item, msgspec.Struct | tuple | list):
                        self.walk(item)

    def behind(self, tx: Transaction, left: AbstractSet[int] = frozenset()) -> list[str]:
        """The channels stored behind what they were told, one line each; ``left``:
        channels the account was removed from, which the client forgets."""
        lines = []
        for channel, told in sorted(self.highest.items()):
            if channel in left:
                continue
            state = tx.get_peer_chat_state(PeerId(channel))
            stored = None if state is None else state.pts
            if stored is None or stored < told:
                lines.append(
                    f"channel behind a pts it was told of ({channel}: stored {stored}, told {told})"
                )
        return lines


class _TellingQueue(asyncio.Queue[AnyUpdates | None]):
    """Tells of a push when the client takes it: one left on a connection the client
    never finished opening (its authorization lost) was never news to it."""

    def __init__(self, told: ToldChannelPts) -> None:
        super().__init__()
        self._told = told

    def get_nowait(self) -> AnyUpdates | None:
        item = super().get_nowait()  # ``get`` ends here too
        if item is not None:
            self._told.walk(item)
        return item


class ObservedConnection(ServerConnection):
    """A client's connection that tells ``told`` of every answer and push it receives."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, told: ToldChannelPts
    ) -> None:
        super().__init__(reader, writer)
        self._told = told
        self.pushes = _TellingQueue(told)

    async def call(self, params: WireRecord) -> Any:
        result = await super().call(params)
        self._told.answer(params, result)
        return result
