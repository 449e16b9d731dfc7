"""What the inspector says about a commit: what it changed, which views it re-emitted
and why, and how many it consulted and left silent.

Pure Python. ``describe_commit(report, names)`` turns a ``ReplayReport``
(``Postbox.add_replay_listener``) into a ``CommitEntry`` of short lines: each view that
re-emitted with its update type and the part of the change that woke it ("2 new
messages in Ana"), and the views consulted but unchanged. ``TransactionLog`` keeps
the last few for the panel.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from client import operation_log_name
from postbox import (
    AnyViewKey,
    ChangeRecord,
    ChatListHolesViewKey,
    ChatListViewKey,
    HistoryAnchorKind,
    HoleOperationKind,
    InsertMessage,
    MessageHistoryHolesViewKey,
    MessageHistoryViewKey,
    OperationLogViewKey,
    PeerId,
    PeerNamespace,
    PeerViewKey,
    RemoveMessage,
    ReplayReport,
    StateViewKey,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    Topic,
    UnsentMessagesViewKey,
    UpdateKind,
    ViewUpdateType,
)

__all__ = [
    "CommitEntry",
    "TransactionLog",
    "commit_detail",
    "describe_changes",
    "describe_commit",
    "describe_key",
    "describe_keys",
    "describe_window",
    "describe_topic",
    "unknown_peer_name",
]

#: How a peer is named in the log: its title if known.
PeerNames = Callable[[PeerId], str]

_KIND_LABELS = {
    UpdateKind.INITIAL: "Initial",
    UpdateKind.INITIAL_UNREAD: "InitialUnread",
    UpdateKind.GENERIC: "Generic",
    UpdateKind.FILL_HOLE: "FillHole",
    UpdateKind.UPDATE_VISIBLE: "UpdateVisible",
}


@dataclass(frozen=True, slots=True)
class CommitEntry:
    version: int
    at: float
    changes: tuple[str, ...]
    #: (view, update type) for each view the commit re-emitted.
    views: tuple[tuple[str, str], ...]
    #: Why each of ``views`` re-emitted: the part of the change it watches.
    reasons: tuple[str, ...] = ()
    #: (view, why it was consulted) for each view consulted that did not change.
    silent: tuple[tuple[str, str], ...] = ()
    #: How many views were open when the commit was replayed.
    open_views: int = 0

    @property
    def consulted(self) -> int:
        return len(self.views) + len(self.silent)

    @property
    def headline(self) -> str:
        """ "2 of 14 re-emitted · 1 silent": of the views open, those the commit changed,
        and those it consulted that stayed as they were."""
        return f"{len(self.views)} of {self.open_views} re-emitted · {len(self.silent)} silent"

    @property
    def summary(self) -> str:
        return "; ".join(self.changes) or "no stored change"


_KIND_WORDS: dict[int, str] = {
    PeerNamespace.USER: "user",
    PeerNamespace.GROUP: "group",
    PeerNamespace.CHANNEL: "channel",
    PeerNamespace.SECRET_CHAT: "secret chat",
}


def unknown_peer_name(peer_id: PeerId) -> str:
    """How a peer this device has no name for is shown: "user 197456" (a presence
    pushed for a group's member who never wrote here, say)."""
    return f"{_KIND_WORDS.get(peer_id.namespace, 'peer')} {peer_id.id}"


def describe_window(key: MessageHistoryViewKey) -> str:
    """Where a history window sits: "at the newest", "around message 1,234"."""
    anchor = key.anchor
    if anchor.kind is HistoryAnchorKind.UPPER_BOUND:
        return "at the newest"
    if anchor.kind is HistoryAnchorKind.LOWER_BOUND:
        return "at the oldest"
    if anchor.kind is HistoryAnchorKind.FIRST_UNREAD:
        return "at the first unread"
    message = anchor.index.id if anchor.index is not None else anchor.message_id
    return "around a message" if message is None else f"around message {message.id:,}"


def describe_keys(
    keys: Iterable[AnyViewKey], names: PeerNames = unknown_peer_name
) -> dict[AnyViewKey, str]:
    """Each key as ``describe_key`` reads it; windows of one chat that would read alike
    ("history of Ana") also say where each sits, then how wide it is."""
    base = {key: describe_key(key, names) for key in keys}
    details: dict[AnyViewKey, list[str]] = {key: [] for key in base}

    def shown(key: AnyViewKey) -> str:
        return f"{base[key]} ({', '.join(details[key])})" if details[key] else base[key]

    for detail in (describe_window, _window_width):
        alike = Counter(shown(key) for key in base)
        for key in base:
            if alike[shown(key)] > 1 and isinstance(key, MessageHistoryViewKey):
                details[key].append(detail(key))
    return {key: shown(key) for key in base}


def _window_width(key: MessageHistoryViewKey) -> str:
    return f"{key.count} each side"


def describe_key(key: AnyViewKey, names: PeerNames = unknown_peer_name) -> str:
    """A view key as a person reads it: "history of Alice"."""
    if isinstance(key, MessageHistoryViewKey):
        what = "pending" if key.namespace else "history"
        if key.tag:
            what = f"media {key.tag}"
        return f"{what} of {names(key.peer_id)}"
    if isinstance(key, ChatListViewKey):
        return f"chat list ({key.count})"
    if isinstance(key, PeerViewKey):
        return f"peer {names(key.peer_id)}"
    if isinstance(key, TagSummaryViewKey):
        return f"tag summary {key.tag} of {names(key.peer_id)}"
    if isinstance(key, MessageHistoryHolesViewKey):
        return "history holes"
    if isinstance(key, ChatListHolesViewKey):
        return "chat list holes"
    if isinstance(key, StateViewKey):
        return "state cursor"
    if isinstance(key, OperationLogViewKey):
        return operation_log_name(key.tag)
    if isinstance(key, UnsentMessagesViewKey):
        return "unsent messages"
    if isinstance(key, SynchronizeReadStatesViewKey):
        return "read states to send"
    return type(key).__name__.removesuffix("ViewKey")


def describe_update(update: ViewUpdateType) -> str:
    return _KIND_LABELS.get(update.kind, update.kind.name)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def describe_changes(record: ChangeRecord, names: PeerNames = unknown_peer_name) -> list[str]:
    """One short line per kind of change the commit made."""
    lines: list[str] = []
    operations: Counter[str] = Counter()
    for operations_of_peer in record.message_operations.values():
        for operation in operations_of_peer:
            if isinstance(operation, InsertMessage):
                operations["stored"] += 1
            elif isinstance(operation, RemoveMessage):
                operations["deleted"] += 1
            else:
                operations["updated"] += 1
    peers = list(record.message_operations)
    if operations:
        where = names(peers[0]) if len(peers) == 1 else _plural(len(peers), "chat")
        done = ", ".join(f"{count} {what}" for what, count in operations.items())
        lines.append(f"messages: {done} in {where}")
    holes = sum(len(ops) for ops in record.hole_operations.values())
    if holes:
        lines.append(f"history holes: {_plural(holes, 'operation')}")
    chat_list = sum(len(ops) for ops in record.chat_list_operations.values())
    if chat_list:
        lines.append(f"chat list: {_plural(chat_list, 'operation')}")
    for label, mapping in (
        ("read states", record.updated_read_states),
        ("peers", record.updated_peers),
        ("presences", record.updated_presences),
        ("cached data", record.updated_cached_peer_data),
        ("notification settings", record.updated_notification_settings),
        ("channel states", record.updated_peer_chat_states),
    ):
        if mapping:
            shown = ", ".join(names(peer) for peer in list(mapping)[:3])
            more = f" +{len(mapping) - 3}" if len(mapping) > 3 else ""
            lines.append(f"{label}: {shown}{more}")
    if record.updated_state is not None:
        state = record.updated_state
        lines.append(f"cursor: pts {state.pts}, qts {state.qts}, seq {state.seq}")
    logs = sum(len(ops) for ops in record.operation_log_operations.values())
    if logs:
        lines.append(f"operation log: {logs} {'entry' if logs == 1 else 'entries'}")
    if record.added_unsent_ids or record.removed_unsent_ids:
        lines.append(
            f"outbox: +{len(record.added_unsent_ids)} -{len(record.removed_unsent_ids)} unsent"
        )
    if record.updated_tag_summaries:
        lines.append(f"tag summaries: {len(record.updated_tag_summaries)}")
    return lines


def describe_topic(topic: Topic, record: ChangeRecord, names: PeerNames = unknown_peer_name) -> str:
    """The part of a commit a topic stands for, as a person reads it."""
    kind, *rest = topic
    subject = rest[0] if rest else None
    name = names(subject) if isinstance(subject, PeerId) else str(subject)
    if kind == "messages" and isinstance(subject, PeerId):
        return _messages_of(record, subject, name)
    if kind == "chat_list" and isinstance(subject, int):
        count = len(record.chat_list_operations.get(subject, ()))
        where = "archive" if subject else "chat list"
        return f"{where} order: {_plural(count, 'change')}"
    if kind == "state" and record.updated_state is not None:
        state = record.updated_state
        return f"cursor moved: pts {state.pts}, qts {state.qts}, seq {state.seq}"
    if kind == "operation_log" and isinstance(subject, int):
        count = sum(len(ops) for (_, tag), ops in record.operation_log_operations.items()
                    if tag == subject)  # fmt: skip
        entries = "entry" if count == 1 else "entries"
        return f"{operation_log_name(subject)}: {count} {entries}"
    label = _TOPIC_LABELS.get(str(kind))
    if label is None:
        return " ".join(map(str, topic))
    return label.format(name=name)


_TOPIC_LABELS = {
    "read_state": "read state of {name}",
    "read_states": "a read state (unread totals)",
    "peer": "name or details of {name}",
    "presence": "presence of {name}",
    "cached_data": "profile data of {name}",
    "notification_settings": "notification settings of {name}",
    "chat_state": "channel pts of {name}",
    "chat_list_position": "{name} moved in the chat list",
    "tag_summary": "media counts of {name}",
    "state": "the cursor",
    "contacts": "the contact list",
    "unsent": "the outgoing queue",
    "preference": "preference {name}",
    "item_collection_infos": "the sticker sets",
    "item_collection_items": "the items of a sticker set",
    "holes_shown": "the holes on screen moved",
}


def _messages_of(record: ChangeRecord, peer_id: PeerId, name: str) -> str:
    """ "2 new messages, 1 deleted in Ana; hole 1-4,441 removed"."""
    counts: Counter[str] = Counter()
    for operation in record.message_operations.get(peer_id, ()):
        if isinstance(operation, InsertMessage):
            counts["new"] += 1
        elif isinstance(operation, RemoveMessage):
            counts["deleted"] += 1
        else:
            counts["changed"] += 1
    parts = []
    if counts:
        first, *others = counts.items()
        parts.append(
            ", ".join([_plural(first[1], f"{first[0]} message"), *(f"{n} {w}" for w, n in others)])
            + f" in {name}"
        )
    for key, operations in record.hole_operations.items():
        if key.peer_id != peer_id or key.space.tag:
            continue  # the tag spaces repeat what the whole history's space says
        for hole in operations:
            verb = "added" if hole.kind is HoleOperationKind.INSERT else "removed"
            parts.append(f"hole {hole.range.lower:,}-{hole.range.upper:,} {verb} in {name}")
    return "; ".join(parts) or f"history of {name}"


#: The order a view's reasons are told in: what it shows before what it counts.
_TOPIC_ORDER = {kind: rank for rank, kind in enumerate(
    ["messages", "chat_list", "chat_list_position", "read_state", "peer", "presence"]
)}  # fmt: skip


def _why(topics: tuple[Topic, ...], record: ChangeRecord, names: PeerNames) -> str:
    topics = tuple(
        sorted(topics, key=lambda topic: (_TOPIC_ORDER.get(str(topic[0]), 99), str(topic)))
    )
    shown = [describe_topic(topic, record, names) for topic in topics[:2]]
    more = f" (+{len(topics) - 2} more)" if len(topics) > 2 else ""
    return "; ".join(shown) + more


def describe_commit(
    report: ReplayReport,
    names: PeerNames = unknown_peer_name,
    *,
    at: float | None = None,
) -> CommitEntry:
    record = report.change
    described = describe_keys([*report.emitted, *report.silent], names)
    emitted = sorted(
        (described[key], describe_update(update), _why(report.woken[key], record, names))
        for key, update in report.emitted.items()
    )
    silent = sorted(
        (described[key], _why(report.woken[key], record, names)) for key in report.silent
    )
    return CommitEntry(
        record.transaction_state_version,
        time.time() if at is None else at,
        tuple(describe_changes(record, names)),
        tuple((view, update) for view, update, _ in emitted),
        tuple(why for _, _, why in emitted),
        tuple(silent),
        report.open_views,
    )


def commit_detail(entry: CommitEntry) -> str:
    """One commit told whole, for the inspector's detail pane: its change record, each
    view it re-emitted with the update type and why, the views it consulted that stayed
    silent, and those it never asked."""
    at = dt.datetime.fromtimestamp(entry.at).strftime("%H:%M:%S.%f")[:-3]
    never = entry.open_views - entry.consulted
    lines = [
        f"Commit #{entry.version} at {at}",
        f"{entry.open_views} views open: {len(entry.views)} re-emitted,"
        f" {len(entry.silent)} consulted and silent, {never} never asked.",
        "",
        "Change record:",
        *(f"  {change}" for change in entry.changes or ("nothing stored",)),
    ]
    if entry.views:
        lines += ["", "Re-emitted:"]
        for (view, update), why in zip(entry.views, entry.reasons, strict=True):
            lines.append(f"  {view}: {update}, because of {why}")
    if entry.silent:
        lines += ["", "Consulted, unchanged:"]
        lines += [f"  {view}: watched {why}" for view, why in entry.silent]
    return "\n".join(lines)


class TransactionLog:
    """The last ``limit`` commits, newest first."""

    def __init__(self, limit: int = 50) -> None:
        self.limit = limit
        self._entries: deque[CommitEntry] = deque(maxlen=limit)
        self.total = 0

    def add(self, entry: CommitEntry) -> None:
        self._entries.appendleft(entry)
        self.total += 1

    def __iter__(self) -> Iterator[CommitEntry]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
