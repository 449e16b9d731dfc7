"""What Ctrl+K asks the database, run on the postbox thread. Pure Python, no Qt.

``search_database(tx, query)`` finds chats by name (case-insensitive substring over
both chat-list groups) and messages through the full-text index, each word of the
query a prefix term, so any text typed is a valid query.
"""

from __future__ import annotations

from dataclasses import dataclass

from postbox import ChatListEntryType, Message, PeerGroupId, PeerId, Transaction

__all__ = ["SearchResults", "search_database"]


@dataclass(frozen=True, slots=True)
class SearchResults:
    """Chats whose name matches, and messages whose text does (newest first)."""

    query: str
    chats: tuple[tuple[PeerId, str], ...]
    messages: tuple[tuple[Message, str], ...]


def _fts_query(text: str) -> str:
    """Each word as a quoted prefix term, so any input is a valid FTS5 query."""
    words = [word.replace('"', '""') for word in text.split()]
    return " ".join(f'"{word}"*' for word in words)


def search_database(tx: Transaction, query: str, limit: int = 50) -> SearchResults:
    """Chats whose name holds ``query`` and messages whose text matches it, newest first."""
    needle = query.strip().casefold()
    if not needle:
        return SearchResults(query, (), ())
    chats: list[tuple[PeerId, str]] = []
    for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
        for entry in tx.get_chat_list(group):
            if entry.type is not ChatListEntryType.MESSAGE:
                continue
            peer = tx.get_peer(entry.peer_id)
            if peer is not None and needle in peer.name.casefold():
                chats.append((entry.peer_id, peer.name))
    messages: list[tuple[Message, str]] = []
    for index in tx.search_messages(_fts_query(query), limit=limit):
        message = tx.get_message(index.id)
        if message is None:
            continue
        peer = tx.get_peer(message.peer_id)
        messages.append((message, peer.name if peer else f"Chat {message.peer_id.id}"))
    messages.sort(key=lambda pair: pair[0].timestamp, reverse=True)
    return SearchResults(query, tuple(chats[:limit]), tuple(messages))
