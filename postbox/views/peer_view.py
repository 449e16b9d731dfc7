"""Peer views: one peer with opt-in components, or just the peer (``BasicPeerView``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from postbox.peer import CachedPeerData, Peer, PeerNotificationSettings, PeerPresence
from postbox.view_keys import BasicPeerViewKey, PeerViewComponents, PeerViewKey
from postbox.views import topics
from postbox.views.reloading_view import ReloadingView
from postbox.views.view import ViewSnapshot

if TYPE_CHECKING:
    from postbox.transaction import Transaction

__all__ = ["BasicPeerView", "MutableBasicPeerView", "MutablePeerView", "PeerView"]


@dataclass(frozen=True, slots=True)
class PeerView(ViewSnapshot):
    """A peer and the components its key asked for (``None`` when absent or not asked)."""

    peer: Peer | None
    cached_data: CachedPeerData | None = None
    presence: PeerPresence | None = None
    notification_settings: PeerNotificationSettings | None = None
    is_contact: bool = False
    group_id: int | None = None


class MutablePeerView(ReloadingView[PeerView]):
    def __init__(self, key: PeerViewKey, tx: Transaction) -> None:
        self.key = key
        peer_id, components = key.peer_id, key.components
        watched = {topics.peer(peer_id)}
        if components & PeerViewComponents.CACHED_DATA:
            watched.add(topics.cached_data(peer_id))
        if components & PeerViewComponents.PRESENCE:
            watched.add(topics.presence(peer_id))
        if components & PeerViewComponents.NOTIFICATION_SETTINGS:
            watched.add(topics.notification_settings(peer_id))
        if components & PeerViewComponents.CONTACT:
            watched.add(topics.CONTACTS)
        if components & PeerViewComponents.GROUP:
            watched.add(topics.chat_list_position(peer_id))
        self.watched = frozenset(watched)
        super().__init__(tx)

    def load(self, tx: Transaction) -> PeerView:
        peer_id, components = self.key.peer_id, self.key.components
        group_id = None
        if components & PeerViewComponents.GROUP:
            position = tx.get_chat_list_position(peer_id)
            group_id = None if position is None else position[0]
        return PeerView(
            tx.get_peer(peer_id),
            tx.get_cached_peer_data(peer_id)
            if components & PeerViewComponents.CACHED_DATA
            else None,
            tx.get_peer_presence(peer_id) if components & PeerViewComponents.PRESENCE else None,
            tx.get_notification_settings(peer_id)
            if components & PeerViewComponents.NOTIFICATION_SETTINGS
            else None,
            tx.is_contact(peer_id) if components & PeerViewComponents.CONTACT else False,
            group_id,
        )


@dataclass(frozen=True, slots=True)
class BasicPeerView(ViewSnapshot):
    peer: Peer | None


class MutableBasicPeerView(ReloadingView[BasicPeerView]):
    def __init__(self, key: BasicPeerViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.peer(key.peer_id)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> BasicPeerView:
        return BasicPeerView(tx.get_peer(self.key.peer_id))
