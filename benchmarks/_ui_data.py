"""Client databases for the UI benchmark, written straight into a Postbox (no server).

``write_chats`` stores many chats with one message each, as a synced account would have
them (peers, chat-list inclusion, no holes left); ``write_long_chat`` adds one chat with
a long, fully loaded history. Both write in large transactions with sorted keys.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageNamespace,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)

__all__ = ["FIRST_TIMESTAMP", "LONG_CHAT", "chat_peer", "write_chats", "write_long_chat"]

#: The timestamp of the oldest stored message.
FIRST_TIMESTAMP: Final = 1_700_000_000
#: The chat with the long history.
LONG_CHAT: Final = PeerId.make(PeerNamespace.USER, 7)
_CLOUD: Final = int(MessageNamespace.CLOUD)
_ROOT: Final = int(PeerGroupId.ROOT)
_PER_TX: Final = 5_000
_WORDS: Final = (
    "sure", "see you at", "the station", "tomorrow", "did you read", "the draft", "thanks",
    "a long day", "call me", "when you can", "photos from", "the weekend", "on my way",
)  # fmt: skip


def chat_peer(number: int) -> PeerId:
    """The ``number``-th chat of ``write_chats`` (0-based)."""
    return PeerId.make(PeerNamespace.USER, 1_000 + number)


def _text(n: int) -> str:
    """Message text of varied length, so bubbles wrap to one to three lines."""
    words = [_WORDS[(n * 7 + k * 3) % len(_WORDS)] for k in range(1 + (n * 5) % 17)]
    return f"{n}: " + " ".join(words)


def _clear_holes(tx: Transaction, peers: Sequence[PeerId]) -> None:
    everywhere = MessageHistoryHoleSpace.everywhere()
    for peer_id in peers:
        tx.remove_hole(peer_id, _CLOUD, everywhere, 1, MAX_MESSAGE_ID)


def _write_chat_batch(numbers: range, tx: Transaction) -> None:
    peers = [chat_peer(n) for n in numbers]
    tx.update_peers(
        Peer(peer_id, f"Contact {n}") for peer_id, n in zip(peers, numbers, strict=True)
    )
    for peer_id in peers:
        tx.update_chat_list_inclusion(peer_id, ChatListInclusion(_ROOT))
    _clear_holes(tx, peers)
    tx.add_messages(
        StoreMessage(
            peer_id,
            _CLOUD,
            1,
            FIRST_TIMESTAMP + n * 30,
            int(MessageFlags.INCOMING) if n % 3 else 0,
            author_id=peer_id.id,
            text=_text(n),
        )
        for peer_id, n in zip(peers, numbers, strict=True)
    )


def _drop_chat_list_holes(tx: Transaction) -> None:
    for hole in tx.get_chat_list_holes(_ROOT):
        tx.remove_chat_list_hole(_ROOT, hole)


def write_chats(postbox: Postbox, count: int) -> None:
    """Store ``count`` chats, each with one message, and no chat-list hole."""
    postbox.run(_drop_chat_list_holes)
    for start in range(0, count, _PER_TX):
        numbers = range(start, min(count, start + _PER_TX))
        postbox.run(functools.partial(_write_chat_batch, numbers))


def _write_messages(first: int, last: int, tx: Transaction) -> None:
    tx.add_messages(
        StoreMessage(
            LONG_CHAT,
            _CLOUD,
            n,
            FIRST_TIMESTAMP + n * 97,  # a few hundred messages a day: date rows appear
            int(MessageFlags.INCOMING) if n % 4 else 0,
            author_id=LONG_CHAT.id,
            text=_text(n),
        )
        for n in range(first, last + 1)
    )


def write_long_chat(postbox: Postbox, messages: int) -> None:
    """Store ``LONG_CHAT`` with ``messages`` messages (ids 1..messages), fully loaded."""

    def setup(tx: Transaction) -> None:
        tx.update_peers([Peer(LONG_CHAT, "Long history")])
        tx.update_chat_list_inclusion(LONG_CHAT, ChatListInclusion(_ROOT))
        _clear_holes(tx, [LONG_CHAT])
        _drop_chat_list_holes(tx)

    postbox.run(setup)
    for first in range(1, messages + 1, _PER_TX):
        last = min(messages, first + _PER_TX - 1)
        postbox.run(functools.partial(_write_messages, first, last))
