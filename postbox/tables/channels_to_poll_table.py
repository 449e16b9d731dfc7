"""ChannelsToPollTable: the channels whose own difference is still to be fetched.

The seeds' state manager keeps these in memory (``channelsToPollExplicitely``,
``missingUpdatesFromChannels``) and fetches them before it replays. Here they are
fetched after the account's difference is stored, so they are stored with it, in the
transaction that moves the cursor past the news that named them; a channel's row goes
in the transaction that stores it caught up. A process that dies between the two finds
them here when it starts again.
"""

from __future__ import annotations

from postbox.state import ChannelToPoll
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["ChannelsToPollTable"]


class ChannelsToPollTable(PeerKeyedTable[ChannelToPoll]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "channels_to_poll")

    def _decode(self, peer_id: int, data: bytes) -> ChannelToPoll:
        return ChannelToPoll.decode(data)
