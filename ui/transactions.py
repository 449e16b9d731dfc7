"""What the inspector says about a commit: what it changed and which views it re-emitted.

Pure Python. ``describe_commit(record, emitted, names)`` turns a ``ChangeRecord`` and
the views it made re-emit (``Postbox.add_replay_listener``) into a ``CommitEntry``
of short lines; ``TransactionLog`` keeps the last few for the panel.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from postbox import (
    AnyViewKey,
    ChangeRecord,
    ChatListHolesViewKey,
    ChatListViewKey,
    InsertMessage,
    MessageHistoryHolesViewKey,
    MessageHistoryViewKey,
    OperationLogViewKey,
    PeerId,
    PeerViewKey,
    RemoveMessage,
    StateViewKey,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    UnsentMessagesViewKey,
    UpdateKind,
    ViewUpdateType,
)

__all__ = ["CommitEntry", "TransactionLog", "describe_changes", "describe_commit", "describe_key"]

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

    @property
    def summary(self) -> str:
        return "; ".join(self.changes) or "no stored change"


def _default_name(peer_id: PeerId) -> str:
    return f"peer {peer_id.namespace}:{peer_id.id}"


def describe_key(key: AnyViewKey, names: PeerNames = _default_name) -> str:
    """A view key as a person reads it: "history of Alice (around the newest)"."""
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
        return f"operation log (tag {key.tag})"
    if isinstance(key, UnsentMessagesViewKey):
        return "unsent messages"
    if isinstance(key, SynchronizeReadStatesViewKey):
        return "read states to send"
    return type(key).__name__.removesuffix("ViewKey")


def describe_update(update: ViewUpdateType) -> str:
    return _KIND_LABELS.get(update.kind, update.kind.name)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def describe_changes(record: ChangeRecord, names: PeerNames = _default_name) -> list[str]:
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
        lines.append(f"operation log: {_plural(logs, 'entry')}")
    if record.added_unsent_ids or record.removed_unsent_ids:
        lines.append(
            f"outbox: +{len(record.added_unsent_ids)} -{len(record.removed_unsent_ids)} unsent"
        )
    if record.updated_tag_summaries:
        lines.append(f"tag summaries: {len(record.updated_tag_summaries)}")
    return lines


def describe_commit(
    record: ChangeRecord,
    emitted: Mapping[AnyViewKey, ViewUpdateType],
    names: PeerNames = _default_name,
    *,
    at: float | None = None,
) -> CommitEntry:
    views = sorted(
        (describe_key(key, names), describe_update(update)) for key, update in emitted.items()
    )
    return CommitEntry(
        record.transaction_state_version,
        time.time() if at is None else at,
        tuple(describe_changes(record, names)),
        tuple(views),
    )


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
