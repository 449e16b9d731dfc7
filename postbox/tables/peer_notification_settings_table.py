"""PeerNotificationSettingsTable: each peer's notification settings."""

from __future__ import annotations

from postbox.peer import PeerNotificationSettings
from postbox.tables.peer_keyed_table import PeerKeyedTable
from postbox.value_box import ValueBox

__all__ = ["PeerNotificationSettingsTable"]


class PeerNotificationSettingsTable(PeerKeyedTable[PeerNotificationSettings]):
    keeps_committed_values = True

    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "notification_settings")

    def _decode(self, peer_id: int, data: bytes) -> PeerNotificationSettings:
        return PeerNotificationSettings.decode(data)
