"""How changes are pushed: the compact short-message form when it fits, else a container;
several changes together in a seq container."""

from __future__ import annotations

from collections.abc import Sequence

from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    Message,
    Peer,
    PeerKind,
    ShortMessage,
    UpdateNewMessage,
    UpdatePeer,
    Updates,
    peer_kind,
)
from sync.server.differences import left_out, without
from sync.server.store import ServerStore

__all__ = ["push_for", "seq_container"]


def push_for(store: ServerStore, update: AnyUpdate, seq: int = 0) -> AnyUpdates:
    """The push that carries ``update``; ``seq`` is its seq if it is seq-ordered."""
    if (
        isinstance(update, UpdateNewMessage)
        and peer_kind(update.message.peer) is PeerKind.USER
        and not update.message.media
        and update.message.forward is None
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
    return Updates((update,), _peers_of(store, update), store.now())


def _peers_of(store: ServerStore, update: AnyUpdate) -> tuple[Peer, ...]:
    """The peers a push describes: a share of messages name a min peer (``left_out``)."""
    message = getattr(update, "message", None)
    named = (message,) if isinstance(message, Message) else ()
    return without(store.peers_of_update(update), left_out(named))


def seq_container(store: ServerStore, updates: Sequence[AnyUpdate], points: int = 1) -> Updates:
    """``updates`` in one container that takes the next ``points`` seq values.

    Each pts update inside was logged on its own when it was made, so a difference brings
    it exactly as a lone push would; the container's seq only orders the push itself.
    """
    peers: dict[int, Peer] = {}
    for update in updates:
        for peer in _peers_of(store, update):
            peers[peer.id] = peer
    seq_start, seq = store.advance_seq(points)
    ordered = tuple(peers[key] for key in sorted(peers))
    return Updates(tuple(updates), ordered, store.now(), seq_start, seq)
