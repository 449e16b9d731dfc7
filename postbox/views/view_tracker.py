"""ViewTracker: replays each commit against the open views that it concerns.

Views are indexed by the topics they watch; a commit's topics select the views
to replay, so a commit costs as much as it is large, not as many views as are
open. Views whose replay returns True emit, one snapshot per subscription.
Afterwards the first hole of every open history view (and the boundary holes
of every chat list) are gathered into the hole singletons, which emit only
when their set changed.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from postbox.view_keys import (
    AnyViewKey,
    ChatListHolesViewKey,
    MessageHistoryHolesViewKey,
)
from postbox.views.holes_views import (
    ChatListHolesEntry,
    MessageHistoryHolesEntry,
    MutableChatListHolesView,
    MutableMessageHistoryHolesView,
)
from postbox.views.topics import HOLES_SHOWN, Topic, topics_of
from postbox.views.view import MutableView, ViewUpdateType

if TYPE_CHECKING:
    from postbox.change_record import ChangeRecord
    from postbox.transaction import Transaction
    from postbox.views.subscription import Subscription

__all__ = ["ReplayListener", "ReplayReport", "ViewTracker"]

_log = logging.getLogger(__name__)

_Entry = tuple["Subscription", AnyViewKey]
H = TypeVar("H", MessageHistoryHolesEntry, ChatListHolesEntry)


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What one commit did to the open views, and why: the seeds' point that a commit
    consults only the views watching what it touched, and most of those stay silent."""

    change: ChangeRecord
    #: Every view key that re-emitted, with its update type.
    emitted: Mapping[AnyViewKey, ViewUpdateType]
    #: Every view key the commit consulted, with the topics of the change it watches
    #: (``HOLES_SHOWN`` for a hole singleton whose set the commit moved).
    woken: Mapping[AnyViewKey, tuple[Topic, ...]]
    #: How many views were open (a key opened by two subscriptions counts twice).
    open_views: int

    @property
    def silent(self) -> list[AnyViewKey]:
        """The views consulted that did not change."""
        return [key for key in self.woken if key not in self.emitted]


#: Told, after each replayed commit, which views it consulted, which re-emitted and why.
ReplayListener = Callable[[ReplayReport], None]


@runtime_checkable
class HistoryHoleSource(Protocol):
    def first_hole(self) -> MessageHistoryHolesEntry | None: ...


@runtime_checkable
class ChatListHoleSource(Protocol):
    def boundary_holes(self) -> frozenset[ChatListHolesEntry]: ...


class ViewTracker:
    def __init__(self) -> None:
        #: The open subscriptions in the order they opened, which is the order a commit
        #: delivers in: never the order of a set, which changes with the process's hash
        #: seed or memory layout, and with it which waiter wakes first.
        self._subscriptions: dict[Subscription, int] = {}
        self._opened = 0
        self._index: defaultdict[Topic, set[_Entry]] = defaultdict(set)
        #: What each view is indexed under (a set once it reports changes itself).
        self._watched: dict[_Entry, AbstractSet[Topic]] = {}
        self._history_hole_entries: frozenset[MessageHistoryHolesEntry] = frozenset()
        self._chat_list_hole_entries: frozenset[ChatListHolesEntry] = frozenset()
        #: Views that show holes: how to ask each (first_hole / boundary_holes).
        self._history_hole_sources: dict[_Entry, HistoryHoleSource] = {}
        self._chat_list_hole_sources: dict[_Entry, ChatListHoleSource] = {}
        #: The holes each view shows now, and how many views show each: the singletons
        #: are the counted holes, kept as views change rather than gathered from all.
        self._history_holes: dict[_Entry, MessageHistoryHolesEntry] = {}
        self._history_hole_counts: Counter[MessageHistoryHolesEntry] = Counter()
        self._chat_list_holes: dict[_Entry, frozenset[ChatListHolesEntry]] = {}
        self._chat_list_hole_counts: Counter[ChatListHolesEntry] = Counter()
        #: Whether a hole began or ceased to be shown since the singletons were set.
        self._holes_moved = False
        #: The hole singletons.
        self._hole_holders: dict[_Entry, MutableView] = {}
        #: Counters for tests and the inspector: replays asked, snapshots emitted.
        self.replays = 0
        self.replay_listeners: list[ReplayListener] = []

    @property
    def has_views(self) -> bool:
        return bool(self._subscriptions)

    @property
    def view_count(self) -> int:
        return len(self._watched)

    # -- registration ---------------------------------------------------------

    def add(self, subscription: Subscription, version: int) -> None:
        """Register a subscription whose views are loaded; deliver its first snapshot."""
        self._opened += 1
        self._subscriptions[subscription] = self._opened
        initial: dict[AnyViewKey, ViewUpdateType] = {}
        for key, view in subscription.views.items():
            self._index_entry((subscription, key), view.topics)
            # Protocol checks are slow: classify each view once, when it opens.
            if isinstance(view, HistoryHoleSource):
                self._history_hole_sources[(subscription, key)] = view
            if isinstance(view, ChatListHoleSource):
                self._chat_list_hole_sources[(subscription, key)] = view
            if isinstance(key, MessageHistoryHolesViewKey | ChatListHolesViewKey):
                self._hole_holders[(subscription, key)] = view
            if isinstance(key, MessageHistoryHolesViewKey):
                assert isinstance(view, MutableMessageHistoryHolesView)
                view.set_entries(frozenset(self._history_hole_entries))
            elif isinstance(key, ChatListHolesViewKey):
                assert isinstance(view, MutableChatListHolesView)
                view.set_entries(frozenset(self._chat_list_hole_entries))
            initial[key] = view.update_type
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]] = {}
        self._update_holes(changes, [(subscription, key) for key in subscription.views])
        changes.pop(subscription, None)  # its first snapshot has the holes already
        self._deliver(changes, version)
        subscription.deliver(subscription.snapshot(initial, version))

    def remove(self, subscription: Subscription, version: int) -> None:
        if subscription not in self._subscriptions:
            return
        del self._subscriptions[subscription]
        for key in subscription.views:
            self._unindex_entry((subscription, key))
            self._hole_holders.pop((subscription, key), None)
            self._history_hole_sources.pop((subscription, key), None)
            self._chat_list_hole_sources.pop((subscription, key), None)
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]] = {}
        self._update_holes(changes, [(subscription, key) for key in subscription.views])
        self._deliver(changes, version)

    def _index_entry(self, entry: _Entry, topics: frozenset[Topic]) -> None:
        previous = self._watched.get(entry, frozenset())
        for topic in previous - topics:
            watchers = self._index[topic]
            watchers.discard(entry)
            if not watchers:
                del self._index[topic]
        for topic in topics - previous:
            self._index[topic].add(entry)
        self._watched[entry] = topics

    def _index_changes(
        self, entry: _Entry, added: Iterable[Topic], removed: Iterable[Topic]
    ) -> None:
        """Index a view by what it says changed, without comparing all it watches."""
        watched = self._watched[entry]
        if not isinstance(watched, set):
            watched = self._watched[entry] = set(watched)
        index = self._index
        for topic in removed:
            watched.discard(topic)
            watchers = index.get(topic)
            if watchers is not None:
                watchers.discard(entry)
                if not watchers:
                    del index[topic]
        for topic in added:
            watched.add(topic)
            index[topic].add(entry)

    def _unindex_entry(self, entry: _Entry) -> None:
        self._index_entry(entry, frozenset())
        del self._watched[entry]

    # -- commits --------------------------------------------------------------

    def replay(self, change: ChangeRecord, tx: Transaction) -> None:
        """Replay a commit against the views it concerns, then emit what changed."""
        touched: dict[Subscription, list[AnyViewKey]] = {}
        index = self._index
        # Why each view was consulted, only while someone listens (the inspector).
        woken: dict[AnyViewKey, list[Topic]] | None = {} if self.replay_listeners else None
        for topic in topics_of(change):
            for subscription, key in index.get(topic, ()):
                touched.setdefault(subscription, []).append(key)
                if woken is not None:
                    woken.setdefault(key, []).append(topic)
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]] = {}
        showing_holes: list[_Entry] = []
        for subscription in sorted(touched, key=self._subscriptions.__getitem__):
            for key in _in_view_order(subscription, touched[subscription]):
                view = subscription.views[key]
                self.replays += 1
                try:
                    updated = view.replay(change, tx)
                except Exception:
                    _log.exception("view %r failed to replay a commit", key)
                    continue
                if updated:
                    changes.setdefault(subscription, {})[key] = view.update_type
                    self._reindex(subscription, key, view)
                    if self._shows_holes((subscription, key)):
                        showing_holes.append((subscription, key))
        if showing_holes:
            self._update_holes(changes, showing_holes)
        self._deliver(changes, change.transaction_state_version)
        if woken is not None:
            self._tell_listeners(change, changes, woken)

    def _tell_listeners(
        self,
        change: ChangeRecord,
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]],
        woken: dict[AnyViewKey, list[Topic]],
    ) -> None:
        emitted: dict[AnyViewKey, ViewUpdateType] = {}
        for changed in changes.values():
            emitted.update(changed)
        reasons = {key: tuple(topics) for key, topics in woken.items()}
        for key in emitted:
            if key not in reasons:  # a hole singleton, moved by the views that changed
                reasons[key] = (HOLES_SHOWN,)
        report = ReplayReport(change, emitted, reasons, self.view_count)
        for listener in list(self.replay_listeners):
            try:
                listener(report)
            except Exception:
                _log.exception("replay listener %r failed", listener)

    def refresh_all(self, tx: Transaction, version: int) -> None:
        """Reload every view after another process wrote; emit those that changed."""
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]] = {}
        updated_entries: list[_Entry] = []
        for subscription in list(self._subscriptions):
            for key, view in subscription.views.items():
                try:
                    updated = view.refresh_external(tx)
                except Exception:
                    _log.exception("view %r failed to refresh", key)
                    continue
                if updated:
                    changes.setdefault(subscription, {})[key] = view.update_type
                    self._reindex(subscription, key, view)
                    updated_entries.append((subscription, key))
        self._update_holes(changes, updated_entries)
        self._deliver(changes, version)

    @staticmethod
    def _deliver(
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]], version: int
    ) -> None:
        """One snapshot per subscription, holding every key the commit changed."""
        for subscription, changed in changes.items():
            subscription.deliver(subscription.snapshot(changed, version))

    def _shows_holes(self, entry: _Entry) -> bool:
        return entry in self._history_hole_sources or entry in self._chat_list_hole_sources

    def _reindex(self, subscription: Subscription, key: AnyViewKey, view: MutableView) -> None:
        entry = (subscription, key)
        changes = view.take_topic_changes()
        if changes is not None:
            self._index_changes(entry, *changes)
            return
        topics = view.topics
        previous = self._watched.get(entry)
        # A view keeps the same set while it watches the same things: comparing two
        # large sets for equality would cost as much as the window is large.
        if previous is not topics and previous != topics:
            self._index_entry(entry, topics)

    # -- hole singletons ------------------------------------------------------

    def _update_holes(
        self,
        changes: dict[Subscription, dict[AnyViewKey, ViewUpdateType]],
        entries: Iterable[_Entry],
    ) -> None:
        """Count again the holes of ``entries`` (views that changed, opened or closed);
        if a hole began or ceased to be shown, set the singletons and mark those that
        moved."""
        for entry in entries:
            self._follow_holes(entry)
        if not self._holes_moved:
            return
        self._holes_moved = False
        history_entries = frozenset(self._history_hole_counts)
        chat_list_entries = frozenset(self._chat_list_hole_counts)
        self._history_hole_entries = history_entries
        self._chat_list_hole_entries = chat_list_entries
        for (subscription, key), view in self._hole_holders.items():
            is_history = isinstance(key, MessageHistoryHolesViewKey)
            shown: frozenset[object] = history_entries if is_history else chat_list_entries
            assert isinstance(view, MutableMessageHistoryHolesView | MutableChatListHolesView)
            if view.set_entries(shown):
                changes.setdefault(subscription, {})[key] = ViewUpdateType.GENERIC

    def _follow_holes(self, entry: _Entry) -> None:
        """Take the holes one view shows now (none once closed) into the counts."""
        history_source = self._history_hole_sources.get(entry)
        first = None if history_source is None else history_source.first_hole()
        if first != self._history_holes.get(entry):
            previous = self._history_holes.pop(entry, None)
            if previous is not None:
                self._count(self._history_hole_counts, (previous,), -1)
            if first is not None:
                self._history_holes[entry] = first
                self._count(self._history_hole_counts, (first,), 1)
        chat_list_source = self._chat_list_hole_sources.get(entry)
        holes = frozenset() if chat_list_source is None else chat_list_source.boundary_holes()
        before = self._chat_list_holes.get(entry, frozenset())
        if holes != before:
            self._count(self._chat_list_hole_counts, before - holes, -1)
            self._count(self._chat_list_hole_counts, holes - before, 1)
            if holes:
                self._chat_list_holes[entry] = holes
            else:
                self._chat_list_holes.pop(entry, None)

    def _count(self, counts: Counter[H], holes: Iterable[H], step: int) -> None:
        for hole in holes:
            count = counts[hole] + step
            if count:
                counts[hole] = count
                self._holes_moved = self._holes_moved or count == 1 and step == 1
            else:
                del counts[hole]
                self._holes_moved = True


def _in_view_order(subscription: Subscription, keys: list[AnyViewKey]) -> Iterable[AnyViewKey]:
    """The keys a commit touched, once each, in the order the subscription holds them
    (the topics that found them come from a set)."""
    if len(keys) == 1:
        return keys
    touched = set(keys)
    return [key for key in subscription.views if key in touched]
