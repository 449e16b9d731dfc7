"""What ``verify`` found: divergences, each in one category, and the figures it measured."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Category", "Divergence", "Report"]


class Category(enum.StrEnum):
    """The things a user sees, compared and counted apart."""

    MESSAGES = "messages"
    READ_STATES = "read_states"
    CHAT_LIST = "chat_list"
    PEERS = "peers"
    PRESENCES = "presences"
    NOTIFICATION_SETTINGS = "notification_settings"
    DRAFTS = "drafts"
    CONTACTS = "contacts"
    CURSOR = "cursor"
    TAG_SUMMARIES = "tag_summaries"
    PENDING = "pending"
    STICKERS = "stickers"
    SAVED_GIFS = "saved_gifs"


@dataclass(frozen=True, slots=True)
class Divergence:
    """One way the local database differs from the server, about a peer or the account."""

    category: Category
    peer_id: int | None
    what: str

    def __str__(self) -> str:
        where = "account" if self.peer_id is None else f"peer {self.peer_id}"
        return f"{self.category} {where}: {self.what}"


@dataclass(slots=True)
class Report:
    """Divergences in the order found, and what was compared (see ``summary``)."""

    divergences: list[Divergence] = field(default_factory=list)
    chats: int = 0
    server_messages: int = 0
    local_messages: int = 0
    messages_in_holes: int = 0
    unverified: int = 0
    chats_in_chat_list_holes: int = 0
    peers_compared: int = 0
    presences_compared: int = 0
    presences_unknown: int = 0
    contacts_compared: int = 0
    tag_summaries_compared: int = 0
    sticker_sets_compared: int = 0
    saved_gifs_compared: int = 0
    #: Messages the server refused, kept here as failed (the client's own).
    failed_messages: int = 0

    @property
    def ok(self) -> bool:
        return not self.divergences

    def add(self, category: Category, peer_id: int | None, what: str) -> None:
        self.divergences.append(Divergence(category, peer_id, what))

    def by_category(self) -> dict[str, int]:
        """Every category's divergence count, zeros included."""
        counts = Counter(divergence.category for divergence in self.divergences)
        return {str(category): counts[category] for category in Category}

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "divergences": len(self.divergences),
            "by_category": self.by_category(),
            "chats": self.chats,
            "server_messages": self.server_messages,
            "local_messages": self.local_messages,
            "server_messages_in_holes": self.messages_in_holes,
            "unverified_local_messages": self.unverified,
            "server_chats_in_chat_list_holes": self.chats_in_chat_list_holes,
            "peers_compared": self.peers_compared,
            "presences_compared": self.presences_compared,
            "presences_unknown_locally": self.presences_unknown,
            "contacts_compared": self.contacts_compared,
            "tag_summaries_compared": self.tag_summaries_compared,
            "sticker_sets_compared": self.sticker_sets_compared,
            "saved_gifs_compared": self.saved_gifs_compared,
            "failed_messages": self.failed_messages,
        }
