"""EngineData: typed live queries over Postbox views (TelegramEngine.EngineData).

An item (``Item.Peer.Peer(peer_id)``) names the view keys it needs and how to pull
its typed result out of a ``CombinedView``. ``EngineData.subscribe(i0, i1, ...)``
opens ONE combined view over the deduplicated keys of every item and yields the
results as a tuple (a single item yields its result alone), typed per item by the
overloads. ``EngineDataMap(items)`` is an item too: one result per item, keyed by
each item's ``map_key``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

from postbox import (
    AnyViewKey,
    BasicPeerView,
    BasicPeerViewKey,
    CachedPeerData,
    CombinedPeerReadState,
    CombinedView,
    ContactsView,
    ContactsViewKey,
    MessageHistoryTagSummary,
    PeerId,
    PeerNotificationSettings,
    PeerPresence,
    PeerPresencesView,
    PeerPresencesViewKey,
    PeerView,
    PeerViewComponents,
    PeerViewKey,
    Postbox,
    PostboxError,
    PreferencesView,
    PreferencesViewKey,
    ReadStateView,
    ReadStateViewKey,
    StateCursor,
    StateView,
    StateViewKey,
    Subscription,
    TagSummaryView,
    TagSummaryViewKey,
    UnreadCountsView,
    UnreadCountsViewKey,
    ViewSnapshot,
)
from postbox import Peer as PostboxPeer

__all__ = [
    "EngineContactList",
    "EngineData",
    "EngineDataItem",
    "EngineDataMap",
    "EngineDataMapItem",
    "EngineDataSubscription",
    "Item",
]

T_co = TypeVar("T_co", covariant=True)
K_co = TypeVar("K_co", covariant=True)
K = TypeVar("K")
T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S", bound=ViewSnapshot)
T0 = TypeVar("T0")
T1 = TypeVar("T1")
T2 = TypeVar("T2")
T3 = TypeVar("T3")


# -- items ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EngineDataItem(ABC, Generic[T_co]):
    """A typed value read from one or more Postbox views."""

    @abstractmethod
    def keys(self) -> tuple[AnyViewKey, ...]:
        """The view keys the item reads."""

    @abstractmethod
    def extract(self, view: CombinedView) -> T_co:
        """The item's result from a combined view holding (at least) its keys."""


@dataclass(frozen=True, slots=True)
class EngineDataMapItem(EngineDataItem[T_co], Generic[K_co, T_co]):
    """An item that can go into an ``EngineDataMap``, under ``map_key``."""

    @property
    @abstractmethod
    def map_key(self) -> K_co:
        """The item's key in an ``EngineDataMap`` result."""


@dataclass(frozen=True, slots=True)
class _PeerItem(EngineDataMapItem[PeerId, T_co]):
    peer_id: PeerId

    @property
    def map_key(self) -> PeerId:
        return self.peer_id


def _snapshot(view: CombinedView, key: AnyViewKey, kind: type[S]) -> S:
    snapshot = view.views[key]
    if not isinstance(snapshot, kind):
        raise TypeError(f"{key!r} gave a {type(snapshot).__name__}, not a {kind.__name__}")
    return snapshot


@dataclass(frozen=True, slots=True)
class EngineContactList:
    """The contacts whose peers are stored (by id), and the presences known of them."""

    peers: tuple[PostboxPeer, ...]
    presences: Mapping[PeerId, PeerPresence]


class Item:
    """The items, grouped as in ``TelegramEngine.EngineData.Item``."""

    class Peer:
        @dataclass(frozen=True, slots=True)
        class Peer(_PeerItem[PostboxPeer | None]):
            """The peer, or ``None`` if it is not stored."""

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (BasicPeerViewKey(self.peer_id),)

            def extract(self, view: CombinedView) -> PostboxPeer | None:
                return _snapshot(view, BasicPeerViewKey(self.peer_id), BasicPeerView).peer

        @dataclass(frozen=True, slots=True)
        class Presence(_PeerItem[PeerPresence | None]):
            def _key(self) -> PeerPresencesViewKey:
                return PeerPresencesViewKey(frozenset((self.peer_id,)))

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (self._key(),)

            def extract(self, view: CombinedView) -> PeerPresence | None:
                presences = _snapshot(view, self._key(), PeerPresencesView).presences
                return presences.get(self.peer_id)

        @dataclass(frozen=True, slots=True)
        class NotificationSettings(_PeerItem[PeerNotificationSettings | None]):
            def keys(self) -> tuple[AnyViewKey, ...]:
                return (_peer_key(self.peer_id, PeerViewComponents.NOTIFICATION_SETTINGS),)

            def extract(self, view: CombinedView) -> PeerNotificationSettings | None:
                key = _peer_key(self.peer_id, PeerViewComponents.NOTIFICATION_SETTINGS)
                return _snapshot(view, key, PeerView).notification_settings

        @dataclass(frozen=True, slots=True)
        class CachedData(_PeerItem[CachedPeerData | None]):
            def keys(self) -> tuple[AnyViewKey, ...]:
                return (_peer_key(self.peer_id, PeerViewComponents.CACHED_DATA),)

            def extract(self, view: CombinedView) -> CachedPeerData | None:
                key = _peer_key(self.peer_id, PeerViewComponents.CACHED_DATA)
                return _snapshot(view, key, PeerView).cached_data

        @dataclass(frozen=True, slots=True)
        class IsContact(_PeerItem[bool]):
            def keys(self) -> tuple[AnyViewKey, ...]:
                return (_peer_key(self.peer_id, PeerViewComponents.CONTACT),)

            def extract(self, view: CombinedView) -> bool:
                key = _peer_key(self.peer_id, PeerViewComponents.CONTACT)
                return _snapshot(view, key, PeerView).is_contact

    class Messages:
        @dataclass(frozen=True, slots=True)
        class ReadState(_PeerItem[CombinedPeerReadState | None]):
            def keys(self) -> tuple[AnyViewKey, ...]:
                return (ReadStateViewKey(self.peer_id),)

            def extract(self, view: CombinedView) -> CombinedPeerReadState | None:
                return _snapshot(view, ReadStateViewKey(self.peer_id), ReadStateView).read_state

        @dataclass(frozen=True, slots=True)
        class UnreadCount(_PeerItem[int]):
            """Unread incoming messages of the peer (0 without a read state)."""

            def _key(self) -> UnreadCountsViewKey:
                return UnreadCountsViewKey(frozenset((self.peer_id,)), total=False)

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (self._key(),)

            def extract(self, view: CombinedView) -> int:
                return _snapshot(view, self._key(), UnreadCountsView).counts.get(self.peer_id, 0)

        @dataclass(frozen=True, slots=True)
        class TotalUnread(EngineDataItem[tuple[int, int]]):
            """Over every chat: (unread messages, unread chats)."""

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (UnreadCountsViewKey(),)

            def extract(self, view: CombinedView) -> tuple[int, int]:
                counts = _snapshot(view, UnreadCountsViewKey(), UnreadCountsView)
                return counts.total_messages, counts.total_chats

        @dataclass(frozen=True, slots=True)
        class TagSummary(EngineDataItem[MessageHistoryTagSummary | None]):
            """How many of the peer's messages carry ``tag``, if the server said."""

            peer_id: PeerId
            tag: int
            namespace: int = 0

            def _key(self) -> TagSummaryViewKey:
                return TagSummaryViewKey(self.peer_id, self.tag, self.namespace)

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (self._key(),)

            def extract(self, view: CombinedView) -> MessageHistoryTagSummary | None:
                return _snapshot(view, self._key(), TagSummaryView).summary

    class State:
        @dataclass(frozen=True, slots=True)
        class Cursor(EngineDataItem[StateCursor | None]):
            """The sync state cursor (pts, qts, seq, date), once there is one."""

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (StateViewKey(),)

            def extract(self, view: CombinedView) -> StateCursor | None:
                return _snapshot(view, StateViewKey(), StateView).state

    class Contacts:
        @dataclass(frozen=True, slots=True)
        class List(EngineDataItem[EngineContactList]):
            def keys(self) -> tuple[AnyViewKey, ...]:
                return (ContactsViewKey(),)

            def extract(self, view: CombinedView) -> EngineContactList:
                contacts = _snapshot(view, ContactsViewKey(), ContactsView)
                peers = tuple(peer for peer in contacts.peers.values() if peer is not None)
                return EngineContactList(peers, contacts.presences)

    class Preferences:
        @dataclass(frozen=True, slots=True)
        class Value(EngineDataMapItem[str, Any]):
            """A stored preference, or ``None``."""

            key: str

            @property
            def map_key(self) -> str:
                return self.key

            def _key(self) -> PreferencesViewKey:
                return PreferencesViewKey(frozenset((self.key,)))

            def keys(self) -> tuple[AnyViewKey, ...]:
                return (self._key(),)

            def extract(self, view: CombinedView) -> Any:
                return _snapshot(view, self._key(), PreferencesView).values.get(self.key)


def _peer_key(peer_id: PeerId, components: PeerViewComponents) -> PeerViewKey:
    return PeerViewKey(peer_id, components)


# No slots: on Python 3.11 a frozen slotted generic dataclass cannot be built through its
# subscripted alias (``EngineDataMap[K, T](...)`` raises TypeError setting __orig_class__).
@dataclass(frozen=True, init=False)
class EngineDataMap(EngineDataItem[dict[K, T]]):
    """Many items as one: ``{item.map_key: result}``, read from one combined view."""

    items: tuple[EngineDataMapItem[K, T], ...]

    def __init__(self, items: Iterable[EngineDataMapItem[K, T]]) -> None:
        object.__setattr__(self, "items", tuple(items))

    def keys(self) -> tuple[AnyViewKey, ...]:
        return _unique_keys(self.items)

    def extract(self, view: CombinedView) -> dict[K, T]:
        return {item.map_key: item.extract(view) for item in self.items}


def _unique_keys(items: Iterable[EngineDataItem[Any]]) -> tuple[AnyViewKey, ...]:
    return tuple(dict.fromkeys(chain.from_iterable(item.keys() for item in items)))


# -- subscriptions ----------------------------------------------------------------


class EngineDataSubscription(Generic[R]):
    """Typed results of one combined view; iterate it with ``async for``.

    Each iteration yields the results as of one commit, skipping results equal to
    the previous ones. Leaving ``async with``/``with`` or calling ``dispose()`` disposes
    the underlying subscription at once; leaving the ``async for`` loop does when the
    event loop closes the abandoned iterator (its next turn, under asyncio), and so
    does cancelling a pending iteration (a ``wait_for`` timeout, for instance).
    """

    def __init__(self, subscription: Subscription, extract: Callable[[CombinedView], R]) -> None:
        self.subscription = subscription
        self._extract = extract

    @property
    def latest(self) -> R | None:
        """The results of the newest snapshot delivered, ``None`` before the first."""
        latest = self.subscription.latest
        return None if latest is None else self._extract(latest)

    def dispose(self) -> None:
        self.subscription.dispose()

    def __aiter__(self) -> AsyncIterator[R]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[R]:
        sentinel: Any = object()
        previous: R = sentinel
        try:
            subscription = self.subscription
            while (combined := await subscription.next()) is not None:
                if subscription.disposed:  # a snapshot left pending when it was disposed
                    break
                result = self._extract(combined)
                if result is previous or result == previous:
                    continue
                previous = result
                yield result
        finally:
            self.dispose()

    async def __aenter__(self) -> EngineDataSubscription[R]:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.dispose()

    def __enter__(self) -> EngineDataSubscription[R]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.dispose()


def _extractor(items: Sequence[EngineDataItem[Any]]) -> Callable[[CombinedView], Any]:
    if not items:
        raise TypeError("EngineData needs at least one item")
    if len(items) == 1:
        return items[0].extract
    return lambda view: tuple(item.extract(view) for item in items)


class EngineData:
    """Typed reads of a postbox: live (``subscribe``) or once (``get``, ``get_now``)."""

    def __init__(self, postbox: Postbox) -> None:
        self.postbox = postbox

    def _open(
        self, items: Sequence[EngineDataItem[Any]]
    ) -> tuple[Subscription, Callable[[CombinedView], Any]]:
        extract = _extractor(items)
        return self.postbox.combined_view(_unique_keys(items)), extract

    @overload
    def subscribe(self, i0: EngineDataItem[T0], /) -> EngineDataSubscription[T0]: ...
    @overload
    def subscribe(
        self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], /
    ) -> EngineDataSubscription[tuple[T0, T1]]: ...
    @overload
    def subscribe(
        self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], i2: EngineDataItem[T2], /
    ) -> EngineDataSubscription[tuple[T0, T1, T2]]: ...
    @overload
    def subscribe(
        self,
        i0: EngineDataItem[T0],
        i1: EngineDataItem[T1],
        i2: EngineDataItem[T2],
        i3: EngineDataItem[T3],
        /,
    ) -> EngineDataSubscription[tuple[T0, T1, T2, T3]]: ...
    def subscribe(self, *items: EngineDataItem[Any]) -> EngineDataSubscription[Any]:
        """Live results of ``items``, all read from one combined view."""
        subscription, extract = self._open(items)
        return EngineDataSubscription(subscription, extract)

    @overload
    async def get(self, i0: EngineDataItem[T0], /) -> T0: ...
    @overload
    async def get(self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], /) -> tuple[T0, T1]: ...
    @overload
    async def get(
        self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], i2: EngineDataItem[T2], /
    ) -> tuple[T0, T1, T2]: ...
    @overload
    async def get(
        self,
        i0: EngineDataItem[T0],
        i1: EngineDataItem[T1],
        i2: EngineDataItem[T2],
        i3: EngineDataItem[T3],
        /,
    ) -> tuple[T0, T1, T2, T3]: ...
    async def get(self, *items: EngineDataItem[Any]) -> Any:
        """The current results of ``items``, once (``subscribe`` and take the first)."""
        subscription, extract = self._open(items)
        try:
            return extract(await asyncio.wrap_future(subscription.ready))
        finally:
            subscription.dispose()

    @overload
    def get_now(self, i0: EngineDataItem[T0], /) -> T0: ...
    @overload
    def get_now(self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], /) -> tuple[T0, T1]: ...
    @overload
    def get_now(
        self, i0: EngineDataItem[T0], i1: EngineDataItem[T1], i2: EngineDataItem[T2], /
    ) -> tuple[T0, T1, T2]: ...
    @overload
    def get_now(
        self,
        i0: EngineDataItem[T0],
        i1: EngineDataItem[T1],
        i2: EngineDataItem[T2],
        i3: EngineDataItem[T3],
        /,
    ) -> tuple[T0, T1, T2, T3]: ...
    def get_now(self, *items: EngineDataItem[Any]) -> Any:
        """``get``, blocking this thread; not for the postbox thread (it would wait on itself)."""
        if self.postbox.is_postbox_thread:
            raise PostboxError("get_now() would wait on the postbox thread itself")
        subscription, extract = self._open(items)
        try:
            return extract(subscription.ready.result())
        finally:
            subscription.dispose()
