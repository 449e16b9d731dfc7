"""Replay cost against window size: what one new message costs an open view.

Part (d) of the views benchmark. One postbox holds a chat of ``_HISTORY`` messages
with no hole, and ``_CHATS`` other chats with one message each, all in the root chat
list. Each figure opens one view alone and times its ``replay`` (the mutable view's
method, on the postbox thread) for commits that each add one message:

* history windows at the upper bound of 50 and 500 messages, one new message in the
  chat (the window slides by one);
* chat list windows of 100 and 5,000 rows, one new message in the chat at the middle
  of the window (it moves to the top);
* the same chat list windows, one new message in the chat that has waited longest
  below the window (it enters at the top, the bottom row leaves).

The ratio large / small says whether the cost follows the window (about 10x and 50x)
or the change (about 1x).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Final

from benchmarks.harness import Figure, percentile
from postbox import (
    MAX_MESSAGE_ID,
    AnyViewKey,
    ChatListInclusion,
    ChatListViewKey,
    CombinedView,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageNamespace,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.views.chat_list_view import ChatListView

__all__ = ["replay_figures"]

_CLOUD: Final = MessageNamespace.CLOUD
_CHAT: Final = PeerId.make(PeerNamespace.USER, 7_000_000)
_HISTORY: Final = 1_200
_CHATS: Final = 5_200
_HISTORY_WINDOWS: Final = (50, 500)
_CHAT_LIST_WINDOWS: Final = (100, 5_000)
_WARMUP: Final = 20
_BATCH: Final = 400
_TIMESTAMP: Final = 1_600_000_000


class _Clock:
    """Message timestamps and ids that only grow."""

    def __init__(self) -> None:
        self.now = _TIMESTAMP
        self.ids: dict[PeerId, int] = {}

    def message(self, peer_id: PeerId) -> StoreMessage:
        self.now += 1
        id_ = self.ids.get(peer_id, 0) + 1
        self.ids[peer_id] = id_
        return StoreMessage(
            peer_id, _CLOUD, id_, self.now, int(MessageFlags.INCOMING), text=f"m{id_}"
        )


def _chat_peers() -> list[PeerId]:
    return [PeerId.make(PeerNamespace.USER, 8_000_000 + i) for i in range(_CHATS)]


def _setup(postbox: Postbox, clock: _Clock) -> None:
    def history(tx: Transaction) -> None:
        tx.remove_hole(_CHAT, _CLOUD, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)
        tx.add_messages([clock.message(_CHAT) for _ in range(_HISTORY)])

    postbox.run(history)
    peers = _chat_peers()
    for start in range(0, len(peers), _BATCH):
        postbox.run(partial(_add_chats, peers[start : start + _BATCH], clock))


def _add_chats(peers: Sequence[PeerId], clock: _Clock, tx: Transaction) -> None:
    for peer_id in peers:
        tx.update_chat_list_inclusion(peer_id, ChatListInclusion())
    tx.add_messages([clock.message(peer_id) for peer_id in peers])


def _replay_times(
    postbox: Postbox,
    key: AnyViewKey,
    commits: int,
    next_message: Callable[[Any], StoreMessage],
) -> list[float]:
    """µs of the view's ``replay`` for each commit; ``next_message`` gets the latest
    snapshot of ``key`` and names the message the next commit adds."""
    latest: list[Any] = []

    def keep(snapshot: CombinedView) -> None:
        latest[:] = [snapshot[key]]

    subscription = postbox.combined_view([key], keep)
    samples: list[float] = []
    try:
        subscription.ready.result()
        view = subscription.views[key]
        replay = view.replay
        clock = time.perf_counter

        def timed_replay(*args: Any) -> bool:
            start = clock()
            result = replay(*args)
            samples.append((clock() - start) * 1e6)
            return result

        setattr(view, "replay", timed_replay)  # noqa: B010 - an instance attribute over the method
        gc.collect()
        for _ in range(commits + _WARMUP):
            message = next_message(latest[0])
            emitted = len(samples)
            postbox.run(partial(_add, message))
            if len(samples) != emitted + 1:
                raise AssertionError(f"{len(samples) - emitted} replays for one commit")
    finally:
        subscription.dispose()
    return samples[_WARMUP:]


def _add(message: StoreMessage, tx: Transaction) -> None:
    tx.add_messages([message])


def _middle_chat(clock: _Clock, count: int, snapshot: ChatListView) -> StoreMessage:
    return clock.message(snapshot.peer_ids[count // 2])


class _Outside:
    """Names the chat below the window that has waited longest, for each next commit."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.waiting: deque[PeerId] = deque()

    def __call__(self, snapshot: ChatListView) -> StoreMessage:
        if not self.waiting:
            shown = set(snapshot.peer_ids)
            # Stored oldest first: the first chats not shown are the longest waiting.
            self.waiting.extend(p for p in _chat_peers() if p not in shown)
        peer_id = self.waiting.popleft()
        self.waiting.append(snapshot.peer_ids[-1])  # pushed out by this commit
        return self.clock.message(peer_id)


def _ratio_figures(kind: str, unit_name: str, medians: dict[int, float], note: str) -> list[Figure]:
    small, large = min(medians), max(medians)
    figures = [
        Figure(
            f"(d) {kind} replay, {size:,} {unit_name}, median",
            median,
            "µs",
            note,
        )
        for size, median in medians.items()
    ]
    ratio = medians[large] / medians[small]
    figures.append(
        Figure(
            f"(d) {kind} replay ratio {large:,} / {small:,}",
            ratio,
            "x",
            f"window x{large / small:.0f}; cost follows the change if near 1",
        )
    )
    return figures


def replay_figures(postbox: Postbox, commits: int) -> list[Figure]:
    clock = _Clock()
    _setup(postbox, clock)
    history: dict[int, float] = {}
    for count in _HISTORY_WINDOWS:
        key = MessageHistoryViewKey(_CHAT, HistoryAnchor.upper_bound(), count=count)
        times = _replay_times(postbox, key, commits, lambda _: clock.message(_CHAT))
        history[count] = percentile(times, 50)
    moved: dict[int, float] = {}
    entered: dict[int, float] = {}
    for count in _CHAT_LIST_WINDOWS:
        list_key = ChatListViewKey(count=count)
        times = _replay_times(postbox, list_key, commits, partial(_middle_chat, clock, count))
        moved[count] = percentile(times, 50)
        times = _replay_times(postbox, list_key, commits, _Outside(clock))
        entered[count] = percentile(times, 50)
    return [
        *_ratio_figures("history", "messages", history, "one new message; the window slides"),
        *_ratio_figures("chat list", "chats", moved, "a chat in the window moves to the top"),
        *_ratio_figures(
            "chat list entry", "chats", entered, "a chat below the window enters at the top"
        ),
    ]
