"""How one change is pushed: the compact short-message form when it fits, else a container."""

from __future__ import annotations

from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    PeerKind,
    ShortMessage,
    UpdateNewMessage,
    UpdatePeer,
    Updates,
    peer_kind,
)
from sync.server.store import ServerStore

__all__ = ["push_for"]


def push_for(store: ServerStore, update: AnyUpdate, seq: int = 0) -> AnyUpdates:
    """The push that carries ``update``; ``seq`` is its seq if it is seq-ordered."""
    if (
        isinstance(update, UpdateNewMessage)
        and peer_kind(update.message.peer) is PeerKind.USER
        and not update.message.media
    ):
        message = update.message
        return ShortMessage(
            message.id,
            message.peer,
            message.out,
            message.text,
            message.date,
            update.pts,
            update.pts_count,
            message.reply_to,
        )
    if isinstance(update, UpdatePeer):
        return Updates((update,), (update.peer,), store.now(), seq, seq)
    return Updates((update,), store.peers_of_update(update), store.now())
