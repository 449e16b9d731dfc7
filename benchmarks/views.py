"""Views benchmark: what a commit costs once views are open, and how fast snapshots arrive.

One postbox holds an open chat (a user peer whose history is fully loaded: its
initial hole removed, 200 messages) and 10,000 other stored peers. Every timed
commit is ``postbox.run`` adding one new incoming message to the chat (the
``StoreMessage`` is built before the clock starts).

a. **Commit to snapshot, on the postbox thread.** A callback subscription on the
   chat's history view (``MessageHistoryViewKey``, the newest 50 messages) appends
   ``perf_counter()`` and the snapshot to a list; the figure is the time from the start
   of the write's transaction function to the callback (aim: p99 < 1 ms), and, apart,
   from just before ``postbox.run`` on the caller's thread. Median and p99 in µs.
b. **Commit time against open views.** With the chat's subscription open, 0, 100,
   1,000 and 10,000 views of unrelated peers (alternately ``PeerViewKey`` with every
   component and ``BasicPeerViewKey``, one ``combined_view`` each) are opened in turn,
   then all closed again, over several rounds so that drift and noise spread over every
   level; at each level the median ``postbox.run`` time over all rounds, and the
   overhead per open view against level 0. Also shown: the same commit with no view
   open at all. Aim: 10,000 / 0 <= 1.25.
c. **Commit to an asyncio consumer on another thread.** A thread runs its own event
   loop, iterating the chat subscription with ``async for`` and recording each
   arrival; the figure is the time from just before ``postbox.run`` to the arrival.
   Median and p99 in ms; aim < 5 ms.
d. **Replay cost against window size.** One view open alone, its ``replay`` timed for
   one new message: history windows of 50 and 500 messages, chat list windows of 100
   and 5,000 chats, and the ratio large / small (see ``_views_replay``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final

from benchmarks._views_replay import replay_figures
from benchmarks.harness import BenchContext, Figure, benchmark, percentile
from postbox import (
    MAX_MESSAGE_ID,
    AnyViewKey,
    BasicPeerViewKey,
    CombinedView,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNamespace,
    PeerViewKey,
    Postbox,
    StoreMessage,
    Subscription,
    Transaction,
)

__all__ = ["run"]


@dataclass(frozen=True)
class _Config:
    callback_commits: int
    rounds: int
    commits_per_round: int
    async_commits: int
    replay_commits: int


_FULL: Final = _Config(
    callback_commits=2_000,
    rounds=5,
    commits_per_round=300,
    async_commits=1_000,
    replay_commits=300,
)
_QUICK: Final = _Config(
    callback_commits=300, rounds=2, commits_per_round=100, async_commits=200, replay_commits=60
)

_LEVELS: Final = (0, 100, 1_000, 10_000)
_WARMUP: Final = 50
_HISTORY: Final = 200
_WINDOW: Final = 50
_CLOUD: Final = MessageNamespace.CLOUD
_FIRST_TIMESTAMP: Final = 1_700_000_000
_ARRIVAL_TIMEOUT: Final = 5.0
_CHAT: Final = PeerId.make(PeerNamespace.USER, 1_000)
_PEERS_PER_TX: Final = 250


def _ok(condition: bool) -> str:
    return "OK" if condition else "MISSED"


def _median_p99(samples: Sequence[float]) -> tuple[float, float]:
    return percentile(samples, 50), percentile(samples, 99)


class _Chat:
    """The open chat: its next message, and a commit that adds it."""

    def __init__(self, postbox: Postbox) -> None:
        self.postbox = postbox
        self.next_id = 1
        #: When the last commit's transaction function started, on the postbox thread.
        self.write_started = 0.0

    def _message(self) -> StoreMessage:
        id_ = self.next_id
        self.next_id += 1
        return StoreMessage(
            _CHAT,
            _CLOUD,
            id_,
            _FIRST_TIMESTAMP + id_,
            int(MessageFlags.INCOMING),
            author_id=_CHAT.id,
            text=f"message {id_}",
        )

    def fill(self, count: int) -> None:
        messages = [self._message() for _ in range(count)]
        self.postbox.run(lambda tx: tx.add_messages(messages))

    def commit(self) -> tuple[float, float, int]:
        """Add one message: start time, end time (``perf_counter``) and its id."""
        messages = [self._message()]

        clock = time.perf_counter

        def write(tx: Transaction) -> None:
            self.write_started = clock()
            tx.add_messages(messages)

        start = clock()
        self.postbox.run(write)
        return start, clock(), self.next_id - 1


def _setup(postbox: Postbox, others: Sequence[PeerId]) -> None:
    def fn(tx: Transaction) -> None:
        tx.update_peers([Peer(_CHAT, "open chat")])
        # A fully loaded history: no hole left, so the window shows the newest messages.
        tx.remove_hole(_CHAT, _CLOUD, MessageHistoryHoleSpace.everywhere(), 1, MAX_MESSAGE_ID)

    postbox.run(fn)
    for i in range(0, len(others), _PEERS_PER_TX):
        postbox.run(partial(_store_peers, others[i : i + _PEERS_PER_TX]))


def _store_peers(peer_ids: Sequence[PeerId], tx: Transaction) -> None:
    tx.update_peers(Peer(peer_id, f"peer {peer_id.id}") for peer_id in peer_ids)


def _chat_keys() -> tuple[list[AnyViewKey], str]:
    """The chat's history window, and how the figures describe it."""
    history = MessageHistoryViewKey(_CHAT, HistoryAnchor.upper_bound(), count=_WINDOW)
    return [history], f"MessageHistoryViewKey, newest {_WINDOW} messages"


def _check_snapshot(snapshot: CombinedView, version: int, message_id: int) -> None:
    """The snapshot is the commit's, and a history window in it ends at the new message."""
    if snapshot.transaction_state_version != version:
        raise AssertionError(
            f"snapshot of version {snapshot.transaction_state_version}, not {version}"
        )
    for view in snapshot.views.values():
        # Duck-typed, so that the fallback runs where the history view does not exist yet.
        entries = getattr(view, "entries", None)
        if entries is not None and entries[-1].id.id != message_id:
            raise AssertionError(f"the history window ends at {entries[-1].id}, not {message_id}")


# -- a. commit to callback ---------------------------------------------------------


def _callback_latency(
    chat: _Chat, keys: list[AnyViewKey], commits: int
) -> tuple[list[float], list[float]]:
    """µs from ``postbox.run`` to the callback, and from the write's start to it."""
    arrivals: list[tuple[float, CombinedView]] = []
    clock = time.perf_counter

    def on_snapshot(snapshot: CombinedView) -> None:
        arrivals.append((clock(), snapshot))

    subscription = chat.postbox.combined_view(keys, on_snapshot)
    try:
        subscription.ready.result()
        samples: list[float] = []
        on_thread: list[float] = []
        gc.collect()
        for i in range(commits + _WARMUP):
            before = len(arrivals)
            start, _, message_id = chat.commit()
            if len(arrivals) != before + 1:
                raise AssertionError(f"{len(arrivals) - before} snapshots for one commit")
            arrival, snapshot = arrivals[-1]
            _check_snapshot(snapshot, chat.postbox.transaction_state_version, message_id)
            if i >= _WARMUP:
                samples.append((arrival - start) * 1e6)
                on_thread.append((arrival - chat.write_started) * 1e6)
        return samples, on_thread
    finally:
        subscription.dispose()


# -- b. commit time against open views ----------------------------------------------


def _commit_times(chat: _Chat, commits: int) -> list[float]:
    """µs of ``postbox.run`` for each commit (after a warm-up)."""
    gc.collect()
    samples: list[float] = []
    for i in range(commits + _WARMUP):
        start, end, _ = chat.commit()
        if i >= _WARMUP:
            samples.append((end - start) * 1e6)
    return samples


def _open_unrelated(postbox: Postbox, peers: Sequence[PeerId]) -> list[Subscription]:
    subscriptions = [
        postbox.combined_view([PeerViewKey(p) if i % 2 == 0 else BasicPeerViewKey(p)])
        for i, p in enumerate(peers)
    ]
    for subscription in subscriptions:
        subscription.ready.result()
    return subscriptions


def _barrier(postbox: Postbox) -> None:
    """Wait until everything queued on the postbox thread has run."""
    postbox.run(lambda tx: None)


def _commit_times_by_level(
    chat: _Chat, keys: Sequence[AnyViewKey], others: Sequence[PeerId], config: _Config
) -> dict[int, list[float]]:
    """Commit times with each level of unrelated views open, pooled over the rounds."""
    postbox = chat.postbox
    samples: dict[int, list[float]] = {level: [] for level in _LEVELS}
    for _ in range(config.rounds):
        unrelated: list[Subscription] = []
        try:
            for level in _LEVELS:
                unrelated += _open_unrelated(postbox, others[len(unrelated) : level])
                expected = level + len(keys)
                if postbox.tracker.view_count != expected:
                    raise AssertionError(f"{postbox.tracker.view_count} views open, not {expected}")
                samples[level] += _commit_times(chat, config.commits_per_round)
        finally:
            for subscription in unrelated:
                subscription.dispose()
            _barrier(postbox)
    return samples


# -- c. commit to an asyncio loop on another thread ---------------------------------


def _async_latency(chat: _Chat, keys: list[AnyViewKey], commits: int) -> list[float]:
    arrivals: queue.SimpleQueue[tuple[float, int]] = queue.SimpleQueue()
    subscription = chat.postbox.combined_view(keys)
    clock = time.perf_counter

    async def consume() -> None:
        async for snapshot in subscription:
            arrivals.put((clock(), snapshot.transaction_state_version))

    consumer = threading.Thread(target=lambda: asyncio.run(consume()), name="consumer")
    consumer.start()
    try:
        arrivals.get(timeout=_ARRIVAL_TIMEOUT)  # the first snapshot
        samples: list[float] = []
        gc.collect()
        for i in range(commits + _WARMUP):
            start, _, _ = chat.commit()
            arrival, version = arrivals.get(timeout=_ARRIVAL_TIMEOUT)
            if version != chat.postbox.transaction_state_version:
                raise AssertionError(f"snapshot of version {version} arrived for a newer commit")
            if i >= _WARMUP:
                samples.append((arrival - start) * 1e3)
        return samples
    finally:
        subscription.dispose()
        consumer.join(_ARRIVAL_TIMEOUT)


# -- the benchmark ------------------------------------------------------------------


def _level_figures(medians: dict[int, float], note: str) -> list[Figure]:
    base = medians[0]
    figures = [
        Figure(
            f"(b) commit, {level:,} unrelated views, median",
            median,
            "µs",
            note if level == 0 else f"x{median / base:.3f} of 0 views",
        )
        for level, median in medians.items()
    ]
    figures += [
        Figure(
            f"(b) overhead per view at {level:,}",
            (medians[level] - base) / level,
            "µs/view",
            "(median - median at 0) / views",
        )
        for level in medians
        if level
    ]
    top = max(medians)
    ratio = medians[top] / base
    figures.append(
        Figure(f"(b) ratio {top:,} / 0 views", ratio, "x", f"aim <= 1.25: {_ok(ratio <= 1.25)}")
    )
    return figures


@benchmark("views")
def run(ctx: BenchContext) -> list[Figure]:
    config = _QUICK if ctx.quick else _FULL
    path = ctx.scratch / "views.sqlite"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    others = [PeerId.make(PeerNamespace.USER, 100_000 + i) for i in range(max(_LEVELS))]
    figures: list[Figure] = []
    postbox = Postbox(path)
    try:
        _setup(postbox, others)
        chat = _Chat(postbox)
        chat.fill(_HISTORY)
        keys, keys_note = _chat_keys()

        # No view open at all: the commit skips view replay entirely.
        no_views = percentile(_commit_times(chat, config.commits_per_round), 50)

        # a.
        round_trip, on_thread = _callback_latency(chat, keys, config.callback_commits)
        median, p99 = _median_p99(on_thread)
        count = f"{config.callback_commits:,} commits"
        figures += [
            Figure("(a) commit -> snapshot, median", median, "µs", f"{keys_note}; {count}"),
            Figure(
                "(a) commit -> snapshot, p99",
                p99,
                "µs",
                f"aim < 1,000 µs: {_ok(p99 < 1000)}; write start to callback, postbox thread",
            ),
        ]
        median, p99 = _median_p99(round_trip)
        figures += [
            Figure("(a) run() -> snapshot, median", median, "µs", "from the caller's thread"),
            Figure("(a) run() -> snapshot, p99", p99, "µs", "thread hop and queue included"),
        ]

        # b.
        chat_subscription = postbox.combined_view(keys)
        try:
            chat_subscription.ready.result()
            samples = _commit_times_by_level(chat, keys, others, config)
        finally:
            chat_subscription.dispose()
        commits = config.rounds * config.commits_per_round
        medians = {level: percentile(values, 50) for level, values in samples.items()}
        figures += _level_figures(medians, f"{commits:,} commits in {config.rounds} rounds")
        figures.append(
            Figure("(b) commit, no view at all, median", no_views, "µs", "view replay skipped")
        )

        # c.
        median, p99 = _median_p99(_async_latency(chat, keys, config.async_commits))
        count = f"{config.async_commits:,} commits; consumer loop on its own thread"
        figures += [
            Figure(
                "(c) commit -> asyncio, median",
                median,
                "ms",
                f"aim < 5 ms: {_ok(median < 5)}; {count}",
            ),
            Figure("(c) commit -> asyncio, p99", p99, "ms", f"aim < 5 ms: {_ok(p99 < 5)}"),
        ]
    finally:
        postbox.close()

    # d.
    replay_path = ctx.scratch / "views-replay.sqlite"
    for suffix in ("", "-wal", "-shm"):
        replay_path.with_name(replay_path.name + suffix).unlink(missing_ok=True)
    replay_postbox = Postbox(replay_path)
    try:
        figures += replay_figures(replay_postbox, config.replay_commits)
    finally:
        replay_postbox.close()
    load = os.getloadavg()[0]
    figures.append(
        Figure("load average, 1 min", load, "", f"{os.cpu_count()} CPUs; the p99s feel it")
    )
    return figures
