"""The small views: presences, read states, unread counts, tag summaries, the state
cursor, contacts, preferences, a chat's interface state, the operation log and the unsent queue."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from postbox.chat_interface_state import ChatInterfaceState
from postbox.ids import MessageId, PeerId
from postbox.operation_log import PeerOperationLogEntry
from postbox.peer import Peer, PeerPresence
from postbox.read_state import CombinedPeerReadState
from postbox.state import StateCursor
from postbox.tag_summary import MessageHistoryTagSummary
from postbox.view_keys import (
    ChatInterfaceStateViewKey,
    ContactsViewKey,
    OperationLogViewKey,
    PeerPresencesViewKey,
    PreferencesViewKey,
    ReadStateViewKey,
    StateViewKey,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    UnreadCountsViewKey,
    UnsentMessagesViewKey,
)
from postbox.views import topics
from postbox.views.reloading_view import ReloadingView
from postbox.views.view import ViewSnapshot

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.topics import Topic

__all__ = [
    "ContactsView",
    "OperationLogView",
    "PeerPresencesView",
    "PreferencesView",
    "ChatInterfaceStateView",
    "MutableChatInterfaceStateView",
    "ReadStateView",
    "StateView",
    "SynchronizeReadStatesView",
    "TagSummaryView",
    "UnreadCountsView",
    "UnsentMessagesView",
]


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class PeerPresencesView(ViewSnapshot):
    presences: Mapping[PeerId, PeerPresence]


class MutablePeerPresencesView(ReloadingView[PeerPresencesView]):
    def __init__(self, key: PeerPresencesViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset(topics.presence(p) for p in key.peer_ids)
        super().__init__(tx)

    def load(self, tx: Transaction) -> PeerPresencesView:
        presences = {}
        for peer_id in self.key.peer_ids:
            presence = tx.get_peer_presence(peer_id)
            if presence is not None:
                presences[peer_id] = presence
        return PeerPresencesView(_frozen(presences))

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        """Take the presences the commit changed, not every presence asked for."""
        presences = dict(self.snapshot.presences)
        for peer_id, presence in change.updated_presences.items():
            if peer_id not in self.key.peer_ids:
                continue
            if presence is None:
                presences.pop(peer_id, None)
            else:
                presences[peer_id] = presence
        return self._take(PeerPresencesView(_frozen(presences)))


@dataclass(frozen=True, slots=True)
class ReadStateView(ViewSnapshot):
    read_state: CombinedPeerReadState | None


class MutableReadStateView(ReloadingView[ReadStateView]):
    def __init__(self, key: ReadStateViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.read_state(key.peer_id)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> ReadStateView:
        return ReadStateView(tx.get_read_state(self.key.peer_id))


@dataclass(frozen=True, slots=True)
class UnreadCountsView(ViewSnapshot):
    """Unread messages per asked peer; over every chat, unread messages and chats."""

    counts: Mapping[PeerId, int]
    total_messages: int = 0
    total_chats: int = 0


class MutableUnreadCountsView(ReloadingView[UnreadCountsView]):
    """Counts and totals follow the change record's new read states: a replay costs as
    many read states as the commit changed, never a sum over every chat."""

    def __init__(self, key: UnreadCountsViewKey, tx: Transaction) -> None:
        self.key = key
        watched = {topics.read_state(p) for p in key.peer_ids}
        if key.total:
            watched.add(topics.READ_STATES)
        self.watched = frozenset(watched)
        self._all: dict[PeerId, CombinedPeerReadState] = {}
        self._counts: dict[PeerId, int] = {}
        self._total_messages = 0
        self._total_chats = 0
        super().__init__(tx)

    def load(self, tx: Transaction) -> UnreadCountsView:
        self._counts = {}
        for peer_id in self.key.peer_ids:
            state = tx.get_read_state(peer_id)
            self._counts[peer_id] = 0 if state is None else state.count
        if self.key.total:
            self._all = dict(tx.get_all_read_states())
            self._total_messages = sum(state.count for state in self._all.values())
            self._total_chats = sum(1 for state in self._all.values() if state.is_unread)
        return self._snapshot()

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        total, peer_ids = self.key.total, self.key.peer_ids
        for peer_id, state in change.updated_read_states.items():
            if peer_id in peer_ids:
                self._counts[peer_id] = 0 if state is None else state.count
            if total:
                self._count(self._all.pop(peer_id, None), -1)
                if state is not None:
                    self._all[peer_id] = state
                    self._count(state, 1)
        return self._take(self._snapshot())

    def _count(self, state: CombinedPeerReadState | None, sign: int) -> None:
        if state is not None:
            self._total_messages += sign * state.count
            self._total_chats += sign * state.is_unread

    def _snapshot(self) -> UnreadCountsView:
        if not self.key.total:
            return UnreadCountsView(_frozen(self._counts))
        return UnreadCountsView(_frozen(self._counts), self._total_messages, self._total_chats)


@dataclass(frozen=True, slots=True)
class TagSummaryView(ViewSnapshot):
    summary: MessageHistoryTagSummary | None


class MutableTagSummaryView(ReloadingView[TagSummaryView]):
    def __init__(self, key: TagSummaryViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.tag_summary(key.peer_id)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> TagSummaryView:
        key = self.key
        return TagSummaryView(tx.get_tag_summary(key.peer_id, key.tag, key.namespace))


@dataclass(frozen=True, slots=True)
class StateView(ViewSnapshot):
    state: StateCursor | None


class MutableStateView(ReloadingView[StateView]):
    def __init__(self, key: StateViewKey, tx: Transaction) -> None:
        self.key = key
        super().__init__(tx)

    @property
    def topics(self) -> frozenset[Topic]:
        return frozenset({topics.STATE})

    def load(self, tx: Transaction) -> StateView:
        return StateView(tx.get_state())


@dataclass(frozen=True, slots=True)
class ContactsView(ViewSnapshot):
    peers: Mapping[PeerId, Peer | None]
    presences: Mapping[PeerId, PeerPresence]


class MutableContactsView(ReloadingView[ContactsView]):
    """Reloads when the contact list is replaced; otherwise takes the peers and
    presences of the contacts the commit changed."""

    def __init__(self, key: ContactsViewKey, tx: Transaction) -> None:
        self.key = key
        super().__init__(tx)

    @property
    def topics(self) -> frozenset[Topic]:
        return self.watched

    def load(self, tx: Transaction) -> ContactsView:
        peer_ids = sorted(tx.get_contact_peer_ids())
        presences = {}
        for peer_id in peer_ids:
            presence = tx.get_peer_presence(peer_id)
            if presence is not None:
                presences[peer_id] = presence
        watched = {topics.CONTACTS}
        for peer_id in peer_ids:
            watched.add(topics.peer(peer_id))
            watched.add(topics.presence(peer_id))
        self.watched = frozenset(watched)
        return ContactsView(
            _frozen({peer_id: tx.get_peer(peer_id) for peer_id in peer_ids}), _frozen(presences)
        )

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        if change.replaced_contact_peer_ids is not None:
            return self.refresh_external(tx)
        contacts = self.snapshot.peers
        peers = {p: peer for p, peer in change.updated_peers.items() if p in contacts}
        presences = dict(self.snapshot.presences)
        changed_presences = False
        for peer_id, presence in change.updated_presences.items():
            if peer_id not in contacts:
                continue
            changed_presences = True
            if presence is None:
                presences.pop(peer_id, None)
            else:
                presences[peer_id] = presence
        if not peers and not changed_presences:
            return False
        return self._take(
            ContactsView(
                _frozen({**contacts, **peers}) if peers else contacts,
                _frozen(presences) if changed_presences else self.snapshot.presences,
            )
        )


@dataclass(frozen=True, slots=True)
class PreferencesView(ViewSnapshot):
    values: Mapping[str, Any]


class MutablePreferencesView(ReloadingView[PreferencesView]):
    def __init__(self, key: PreferencesViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset(topics.preference(k) for k in key.keys)
        super().__init__(tx)

    def load(self, tx: Transaction) -> PreferencesView:
        values = {}
        for key in self.key.keys:
            value = tx.get_preference(key)
            if value is not None:
                values[key] = value
        return PreferencesView(_frozen(values))


@dataclass(frozen=True, slots=True)
class ChatInterfaceStateView(ViewSnapshot):
    """``state`` is ``None`` for a chat left with nothing to keep."""

    peer_id: PeerId
    thread_id: int
    state: ChatInterfaceState | None


class MutableChatInterfaceStateView(ReloadingView[ChatInterfaceStateView]):
    def __init__(self, key: ChatInterfaceStateViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.chat_interface_state(key.peer_id, key.thread_id)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> ChatInterfaceStateView:
        key = self.key
        state = tx.get_chat_interface_state(key.peer_id, key.thread_id)
        return ChatInterfaceStateView(key.peer_id, key.thread_id, state)


@dataclass(frozen=True, slots=True)
class OperationLogView(ViewSnapshot):
    """A tag's operation-log entries in the order they were added, across peers."""

    entries: tuple[PeerOperationLogEntry, ...]


class MutableOperationLogView(ReloadingView[OperationLogView]):
    """Applies the commit's entries of its tag by merged index; reads entries only to
    refill a full list that lost some."""

    def __init__(self, key: OperationLogViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.operation_log(key.tag)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> OperationLogView:
        entries = tx.get_merged_operation_log_entries(self.key.tag, limit=self.key.limit)
        #: Whether the list holds every merged entry of the tag (it is under the limit).
        self._complete = self.key.limit < 0 or len(entries) < self.key.limit
        return OperationLogView(tuple(entries))

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        tag, limit = self.key.tag, self.key.limit
        entries = list(self.snapshot.entries)
        # Every entry of the merged list has a merged index.
        merged = [entry.merged_index or 0 for entry in entries]
        lost = False
        for (_, operation_tag), operations in change.operation_log_operations.items():
            if operation_tag != tag:
                continue
            for operation in operations:
                entry = operation.entry
                index = entry.merged_index
                if index is None:
                    continue
                position = bisect_left(merged, index)
                present = position < len(merged) and merged[position] == index
                if operation.action == "add":
                    if not present and (self._complete or position < len(merged)):
                        merged.insert(position, index)
                        entries.insert(position, entry)
                elif operation.action == "update":
                    if present:
                        entries[position] = entry
                elif present:
                    del merged[position], entries[position]
                    lost = True
        if 0 <= limit < len(entries):
            del entries[limit:]
            self._complete = False
        elif lost and not self._complete:
            after = merged[-1] + 1 if merged else 0
            more = tx.get_merged_operation_log_entries(
                tag, from_index=after, limit=limit - len(entries)
            )
            entries += more
            self._complete = len(entries) < limit
        return self._take(OperationLogView(tuple(entries)))


@dataclass(frozen=True, slots=True)
class SynchronizeReadStatesView(ViewSnapshot):
    """Per peer, the newest pending read-state operation of the tag."""

    operations: Mapping[PeerId, PeerOperationLogEntry]


class MutableSynchronizeReadStatesView(ReloadingView[SynchronizeReadStatesView]):
    """Per peer, the entry with the highest merged index; a commit's entries replace it,
    and only a peer that lost that entry has its own entries read again."""

    def __init__(self, key: SynchronizeReadStatesViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.operation_log(key.tag)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> SynchronizeReadStatesView:
        latest: dict[PeerId, PeerOperationLogEntry] = {}
        for entry in tx.get_merged_operation_log_entries(self.key.tag):
            latest[entry.peer_id] = entry
        return SynchronizeReadStatesView(_frozen(latest))

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        tag = self.key.tag
        latest = dict(self.snapshot.operations)
        for (peer_id, operation_tag), operations in change.operation_log_operations.items():
            if operation_tag != tag:
                continue
            for operation in operations:
                entry, current = operation.entry, latest.get(peer_id)
                if entry.merged_index is None:
                    continue
                if operation.action == "add":
                    if current is None or entry.merged_index > current.merged_index:  # type: ignore[operator]
                        latest[peer_id] = entry
                elif current is None or current.tag_local_index != entry.tag_local_index:
                    continue
                elif operation.action == "update":
                    latest[peer_id] = entry
                else:
                    newest = _newest_merged(tx.get_operation_log_entries(peer_id, tag))
                    if newest is None:
                        del latest[peer_id]
                    else:
                        latest[peer_id] = newest
        return self._take(SynchronizeReadStatesView(_frozen(latest)))


def _newest_merged(entries: list[PeerOperationLogEntry]) -> PeerOperationLogEntry | None:
    merged = [entry for entry in entries if entry.merged_index is not None]
    return max(merged, key=lambda entry: entry.merged_index or 0, default=None)


@dataclass(frozen=True, slots=True)
class UnsentMessagesView(ViewSnapshot):
    ids: tuple[MessageId, ...]


class MutableUnsentMessagesView(ReloadingView[UnsentMessagesView]):
    """Keeps the ids in the table's order, adding and removing the commit's."""

    def __init__(self, key: UnsentMessagesViewKey, tx: Transaction) -> None:
        self.key = key
        super().__init__(tx)

    @property
    def topics(self) -> frozenset[Topic]:
        return frozenset({topics.UNSENT})

    def load(self, tx: Transaction) -> UnsentMessagesView:
        return UnsentMessagesView(tuple(tx.get_unsent_message_ids()))

    def replay(self, change: ChangeRecord, tx: Transaction) -> bool:
        ids = list(self.snapshot.ids)
        for message_id in change.removed_unsent_ids:
            position = bisect_left(ids, message_id)
            if position < len(ids) and ids[position] == message_id:
                del ids[position]
        for message_id in change.added_unsent_ids:
            position = bisect_left(ids, message_id)
            if position == len(ids) or ids[position] != message_id:
                ids.insert(position, message_id)
        return self._take(UnsentMessagesView(tuple(ids)))
