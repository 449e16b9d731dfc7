"""The per-chat tables of a generated account: read states, pinned and archived chats,
notification settings, presences and the update log's deletions.

Each is a pure function of the plan (and, for read states, of the chat's newest
messages), computed on the driver in O(chats).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from dataset.account_plan import AccountPlan, ChatPlan
from dataset.counter_hash import hash64, index_below, unit
from dataset.message_rows import ChatRows, MessageFate
from postbox import (
    PeerFlags,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    PresenceStatus,
)

__all__ = ["AccountTables", "account_tables", "newest_fates"]

_K_READ, _K_PIN, _K_MUTE, _K_PRESENCE = 200, 201, 202, 203
#: Newest messages looked at for a chat's read state: unread ones are among them.
_READ_WINDOW = 16

_UNREAD_CHANCE = {
    int(PeerNamespace.USER): 0.20,
    int(PeerNamespace.GROUP): 0.35,
    int(PeerNamespace.CHANNEL): 0.60,
}
_MUTED_CHANCE = {
    int(PeerNamespace.USER): 0.05,
    int(PeerNamespace.GROUP): 0.30,
    int(PeerNamespace.CHANNEL): 0.50,
}


@dataclass(frozen=True, slots=True)
class AccountTables:
    read_states: tuple[tuple[PeerId, PeerReadState], ...]
    pinned: tuple[PeerId, ...]
    archived: tuple[PeerId, ...]
    notification_settings: tuple[tuple[PeerId, PeerNotificationSettings], ...]
    presences: tuple[tuple[PeerId, PeerPresence], ...]


def newest_fates(rows: ChatRows, limit: int, before: int | None = None) -> Iterator[MessageFate]:
    """The chat's messages newest first, up to ``limit``, that exist at ``before``
    (default: "now"): sent before it and not deleted by then."""
    moment = rows.now if before is None else before
    index = rows.chat.count - 1
    found = 0
    while index >= 0 and found < limit:
        fate = rows.fate(index)
        index -= 1
        if fate.sent_at >= moment or (fate.deleted_at is not None and fate.deleted_at < moment):
            continue
        found += 1
        yield fate


def _read_state(plan: AccountPlan, chat: ChatPlan) -> PeerReadState | None:
    """Unread messages are the newest incoming ones after our last own message."""
    seed = plan.spec.seed
    newest = list(newest_fates(ChatRows(plan, chat), _READ_WINDOW))
    if not newest:
        return None
    incoming = [bool(fate.row[4] & 1) for fate in newest]
    trailing = 0
    while trailing < len(newest) and incoming[trailing]:
        trailing += 1
    namespace = chat.namespace
    unread = 0
    if trailing and unit(seed, _K_READ, chat.position) < _UNREAD_CHANCE[namespace]:
        mean = 25 if namespace == PeerNamespace.CHANNEL else 3
        draw = -math.log1p(-unit(seed, _K_READ, chat.position, 1)) * mean
        unread = min(trailing, 1 + int(draw))
    max_incoming_read = newest[unread].id if unread < len(newest) else 0
    if unread == len(newest) and len(newest) == _READ_WINDOW:
        max_incoming_read = newest[-1].id - 1
    outgoing = [fate.id for fate, inc in zip(newest, incoming, strict=True) if not inc]
    max_outgoing_read = 0
    if outgoing:
        seen_all = namespace != PeerNamespace.USER or unit(seed, _K_READ, chat.position, 2) < 0.8
        max_outgoing_read = outgoing[0] if seen_all or len(outgoing) < 2 else outgoing[1]
    return PeerReadState(max_incoming_read, max_outgoing_read, newest[0].id, unread, False)


def account_tables(plan: AccountPlan) -> AccountTables:
    seed = plan.spec.seed
    now = plan.spec.now
    chats = plan.chats
    read_states = []
    for chat in chats:
        state = _read_state(plan, chat)
        if state is not None:
            read_states.append((chat.peer.id, state))
    has_messages = {peer_id for peer_id, _ in read_states}
    order = sorted(range(len(chats)), key=lambda i: (-chats[i].count, i))
    busy = order[: max(1, len(chats) * 3 // 10)]
    busy.sort(key=lambda i: hash64(seed, _K_PIN, i))
    pinned_positions = busy[: min(3, len(chats) // 5, len(busy))]
    pinned = tuple(chats[i].peer.id for i in pinned_positions)
    candidates = [
        chat.peer.id
        for chat in chats
        if chat.position not in pinned_positions and chat.peer.id in has_messages
    ]
    archived: tuple[PeerId, ...] = ()
    if len(chats) >= 2 and candidates:
        channels = [p for p in candidates if p.namespace == PeerNamespace.CHANNEL] or candidates
        archived = (channels[index_below(len(channels), seed, _K_PIN, 1 << 32)],)
    settings = []
    presences = []
    for chat in chats:
        peer = chat.peer
        position = chat.position
        muted = unit(seed, _K_MUTE, position) < _MUTED_CHANCE[chat.namespace]
        if peer.id in archived or muted:
            until = PeerNotificationSettings.MUTED_FOREVER
            if unit(seed, _K_MUTE, position, 1) >= 0.8:
                until = now + (1, 8, 24, 72)[index_below(4, seed, _K_MUTE, position, 2)] * 3600
            settings.append((peer.id, PeerNotificationSettings(muted_until=until)))
        if peer.id.namespace != PeerNamespace.USER or peer.flags & PeerFlags.BOT:
            continue
        roll = unit(seed, _K_PRESENCE, position)
        if roll < 0.10:
            presence = PeerPresence(PresenceStatus.ONLINE, now + 300)
        elif roll < 0.45:
            ago = int(-math.log1p(-unit(seed, _K_PRESENCE, position, 1)) * 20_000)
            presence = PeerPresence(PresenceStatus.OFFLINE, now - ago)
        elif roll < 0.85:
            presence = PeerPresence(PresenceStatus.RECENTLY)
        else:
            presence = PeerPresence(PresenceStatus.LONG_AGO)
        presences.append((peer.id, presence))
    return AccountTables(tuple(read_states), pinned, archived, tuple(settings), tuple(presences))
