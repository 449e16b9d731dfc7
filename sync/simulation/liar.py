"""A lying server: frames rewritten on their way to the client, for a window of time.

While the window lasts, some of the pushes, difference answers, history and chat-list
pages, ``getPeerDialogs`` and ``getPeers`` answers the server sends are rewritten to
break the protocol's rules: a message by an author or in a chat the server cannot
describe, a field of the wrong type, an impossible message id, a peer id of no kind, a
``getPeers`` answer that leaves out what it was asked; or, legally, an answer whose peers
are left out (min peers, which ``getPeers`` describes). Every lie is one a client can
tell: a field of the right type with a false value would be undetectable, so none is
told; nor is a final difference stripped of a renamed peer, its only carrier of the new
name to a client that stores the old one. The client must refuse every lie whole and
keep nothing of it; once the window is over the honest server must heal everything.
What is rewritten is drawn from its own generator, so a schedule without a lying server
replays as before.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterator
from typing import Any

import msgpack

from sync.protocol import PeerKind, make_peer_id

__all__ = ["LIES", "Liar"]

_HEADER = 4
#: The kinds of rewrite; ``min-peers`` is the legal one.
LIES = (
    "ghost-author",
    "ghost-chat",
    "wrong-type",
    "impossible-id",
    "kindless-peer",
    "min-peers",
)
#: Results that carry what the engine stores from the update stream.
_DIFFERENCES = frozenset(
    {"difference", "differenceSlice", "channelDifference", "channelDifferenceTooLong"}
)
#: Values of the wrong type for a message's fields (never one a client could take).
_WRONG: dict[str, tuple[Any, ...]] = {
    "date": ("yesterday", 1.5, [1]),
    "text": (7, [1], {"_": "text"}),
    "out": ("yes", 1.5, None),
}
#: Ids no server hands out: a ghost is one of these.
_GHOSTS = 2**40


class Liar:
    """Rewrites server-to-client frames until ``until`` (virtual seconds)."""

    def __init__(
        self,
        rng: random.Random,
        until: float,
        note: Callable[[str], None],
        chance: float = 0.5,
        renamed: Callable[[], Collection[int]] = frozenset,
    ) -> None:
        self._rng = rng
        self.until = until
        self._note = note
        self.chance = chance
        #: The peers the server has renamed, which a final difference keeps.
        self._renamed = renamed
        #: Frames rewritten, by kind of lie.
        self.told: dict[str, int] = {}

    def rewrite(self, frame: bytes, now: float) -> bytes:
        if now >= self.until:
            return frame
        try:
            body = msgpack.unpackb(frame[_HEADER:], strict_map_key=False)
        except (ValueError, msgpack.ExtraData):
            return frame
        target = _target(body)
        if target is None or self._rng.random() >= self.chance:
            return frame
        lie = self._tell(target)
        if lie is None:
            return frame
        self.told[lie] = self.told.get(lie, 0) + 1
        self._note(f"lie: {lie}")
        data: bytes = msgpack.packb(body)
        return len(data).to_bytes(_HEADER, "big") + data

    def _tell(self, target: dict[str, Any]) -> str | None:
        rng = self._rng
        if "_" not in target and "messages" not in target:
            # A getPeers answer: it describes nothing it was asked.
            if not target.get("peers"):
                return None
            target["peers"] = []
            return "undescribed-peers"
        messages = list(_messages(target))
        lie = rng.choice(LIES) if messages else "min-peers"
        if lie == "min-peers":
            peers = target.get("peers") or []
            # The server describes in a final difference every peer changed since the
            # client's date: leaving one out would hide a rename (undetectable).
            renamed = set(self._renamed()) if target.get("_") == "difference" else set()
            kept = [peer for peer in peers if isinstance(peer, dict) and peer.get("id") in renamed]
            if len(kept) == len(peers):
                return None
            target["peers"] = kept
            return lie
        message = rng.choice(messages)
        ghost = _GHOSTS + rng.randrange(1_000)
        if lie == "ghost-author":
            message["author"] = make_peer_id(PeerKind.USER, ghost)
        elif lie == "ghost-chat":
            message["peer"] = make_peer_id(PeerKind.GROUP, ghost)
        elif lie == "wrong-type":
            name = rng.choice(sorted(_WRONG))
            message[name] = rng.choice(_WRONG[name])
        elif lie == "impossible-id":
            message["id"] = rng.choice((0, -1, 2**31))
        else:
            message["author"] = (0x7F << 56) | ghost
        return lie


def _target(body: Any) -> dict[str, Any] | None:
    """The part of a frame to lie in: a push's updates, a difference, a page, a
    getPeerDialogs or getPeers answer."""
    if not isinstance(body, dict):
        return None
    if "push" in body:
        updates = body.get("updates")
        return updates if isinstance(updates, dict) and updates.get("_") == "updates" else None
    result = body.get("result")
    if not isinstance(result, dict):
        return None
    if result.get("_") in _DIFFERENCES or set(result) <= {"peers", "presences"}:
        return result
    if {"messages", "peers", "count"} <= result.keys():
        return result  # a history page or a chat-list page
    if {"dialogs", "messages", "peers", "state"} <= result.keys():
        return result  # a getPeerDialogs answer
    return None


def _messages(value: Any) -> Iterator[dict[str, Any]]:
    """Every message map inside ``value``."""
    if isinstance(value, dict):
        if {"peer", "id", "date", "out"} <= value.keys():
            yield value
        for item in value.values():
            yield from _messages(item)
    elif isinstance(value, list):
        for item in value:
            yield from _messages(item)
