"""The peer screen: name, presence, about, contact, notifications and shared media, live.

It follows a ``PeerViewKey`` (the peer, its cached data, presence and notification
settings) and a ``TagSummaryViewKey`` per shared-media kind. Opening it asks the sync
engine to fetch the full profile (``Account.refresh_profile``); what arrives lands
in the database and reaches the panel through those views, like every other change.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from postbox import (
    CombinedView,
    MessageTags,
    PeerFlags,
    PeerId,
    PeerViewKey,
    TagSummaryView,
    TagSummaryViewKey,
)
from ui.account_port import AccountLike
from ui.feed import SnapshotFeed
from ui.futures import FutureRelay
from ui.rows import avatar_color, initials, peer_kind, peer_subtitle

__all__ = ["MEDIA_LABELS", "ProfilePanel"]

#: Shared-media kinds, in the order the panel lists them.
MEDIA_LABELS = (
    (MessageTags.PHOTO, "Photos"),
    (MessageTags.VIDEO, "Videos"),
    (MessageTags.FILE, "Files"),
    (MessageTags.LINK, "Links"),
    (MessageTags.VOICE, "Voice messages"),
)


class ProfilePanel(QWidget):
    def __init__(
        self,
        account: AccountLike,
        relay: FutureRelay,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.setObjectName("peer")
        self.account = account
        self._relay = relay
        self._clock = clock
        self.peer_id: PeerId | None = None
        self._feed: SnapshotFeed | None = None
        self._peer_key: PeerViewKey | None = None
        self._applying = False
        self.setMinimumWidth(240)
        self.setMaximumWidth(320)

        self.avatar = QLabel()
        self.avatar.setFixedSize(72, 72)
        self.avatar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.name = QLabel()
        self.name.setObjectName("title")
        self.name.setWordWrap(True)
        self.name.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.presence = QLabel()
        self.presence.setObjectName("subtitle")
        self.presence.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.username = QLabel()
        self.kind = QLabel()
        self.contact = QLabel()
        self.notifications = QCheckBox("Notifications")
        self.notifications.toggled.connect(self._notifications_toggled)
        self.media_counts: dict[int, QLabel] = {}
        column = QVBoxLayout(self)
        column.setContentsMargins(16, 18, 16, 16)
        column.addWidget(self.avatar, 0, Qt.AlignmentFlag.AlignHCenter)
        column.addWidget(self.name)
        column.addWidget(self.presence)
        info = QLabel("Info")
        info.setObjectName("section")
        column.addWidget(info)
        details = QFormLayout()
        details.addRow(self._caption("about"), self.about)
        details.addRow(self._caption("username"), self.username)
        details.addRow(self._caption("type"), self.kind)
        details.addRow(self._caption("contact"), self.contact)
        column.addLayout(details)
        column.addWidget(self.notifications)
        media = QLabel("Shared media")
        media.setObjectName("section")
        column.addWidget(media)
        counts = QFormLayout()
        for tag, label in MEDIA_LABELS:
            value = QLabel("…")
            self.media_counts[int(tag)] = value
            counts.addRow(self._caption(label), value)
        column.addLayout(counts)
        column.addStretch(1)

    @staticmethod
    def _caption(text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName("caption")
        return label

    def show_peer(self, peer_id: PeerId) -> None:
        """Follow a peer (and fetch its full profile once per opening)."""
        if peer_id == self.peer_id and self._feed is not None:
            return
        self.close_feed()
        self.peer_id = peer_id
        for label in self.media_counts.values():
            label.setText("…")
        self._peer_key = PeerViewKey(peer_id)
        keys = [self._peer_key] + [TagSummaryViewKey(peer_id, int(tag)) for tag, _ in MEDIA_LABELS]
        self._feed = SnapshotFeed(self.account.postbox, keys, self._snapshot)
        self._relay.watch(self.account.refresh_profile(peer_id), lambda _done: None)

    @Slot(object)
    def _snapshot(self, combined: CombinedView) -> None:
        if self._peer_key is None or self._peer_key not in combined.views:
            return
        view = combined[self._peer_key]
        now = int(self._clock())
        peer = view.peer
        name = peer.name if peer is not None else "…"
        self.name.setText(name)
        color = avatar_color(int(self._peer_key.peer_id))
        self.avatar.setText(initials(name))
        self.avatar.setStyleSheet(
            f"background: {color}; color: white; border-radius: 36px;"
            "font-size: 22px; font-weight: bold;"
        )
        self.presence.setText(peer_subtitle(view, now))
        about = view.cached_data.about if view.cached_data is not None else ""
        self.about.setText(about or "—")
        self.username.setText(f"@{peer.username}" if peer is not None and peer.username else "—")
        kind = peer_kind(int(self._peer_key.peer_id))
        self.kind.setText(kind)
        if kind == "user" and peer is not None and not peer.flags & PeerFlags.BOT:
            self.contact.setText("in your contacts" if view.is_contact else "not a contact")
        else:
            self.contact.setText("—")
        settings = view.notification_settings
        self._applying = True
        self.notifications.setChecked(not (settings is not None and settings.is_muted(now)))
        self._applying = False
        for key, snapshot in combined.views.items():
            if isinstance(key, TagSummaryViewKey) and isinstance(snapshot, TagSummaryView):
                summary = snapshot.summary
                self.media_counts[key.tag].setText("…" if summary is None else f"{summary.count:,}")

    @Slot(bool)
    def _notifications_toggled(self, enabled: bool) -> None:
        if self._applying or self.peer_id is None:
            return
        self._relay.watch(self.account.set_muted(self.peer_id, not enabled), lambda _done: None)

    def close_feed(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None
