"""Profile one-message commits on the postbox thread: ``python -m benchmarks._profile_commit``.

Builds the storage benchmark's commit database (``_storage_commit``), then runs
``--commits`` one-message commits through ``Postbox.run`` with cProfile enabled on the
postbox thread (switched on and off from inside a transaction), with no view open or,
with ``--views``, the chat's history view and the root chat list open. Prints the
functions by cumulative and by own time; ``--out FILE`` writes the same text to a file
(``benchmarks/profiles/`` keeps the ones that guided the work).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import _storage_commit as commit
from benchmarks.harness import percentile
from postbox import ChatListViewKey, HistoryAnchor, MessageHistoryViewKey, Postbox, Transaction
from postbox.view_keys import AnyViewKey


def _profile(path: Path, commits: int, views: bool) -> tuple[pstats.Stats, list[float]]:
    keys: list[AnyViewKey] = []
    if views:
        keys = [
            MessageHistoryViewKey(commit.CHAT, HistoryAnchor.upper_bound(), count=50),
            ChatListViewKey(count=50),
        ]
    profiler = cProfile.Profile()
    samples: list[float] = []
    history = commit.FULL.history
    postbox = Postbox(path)
    try:
        subscription = postbox.combined_view(keys, lambda _: None) if keys else None
        if subscription is not None:
            subscription.ready.result()
        messages = [
            commit.message(commit.CHAT, history + i, commit.FIRST_TIMESTAMP + i)
            for i in range(1, commits + 1)
        ]

        def start(tx: Transaction) -> None:
            profiler.enable()

        def stop(tx: Transaction) -> None:
            profiler.disable()

        postbox.run(start)
        clock = time.perf_counter
        for message in messages:
            fn = commit.adder(message)
            begun = clock()
            postbox.run(fn)
            samples.append((clock() - begun) * 1e6)
        postbox.run(stop)
        if subscription is not None:
            subscription.dispose()
    finally:
        postbox.close()
    return pstats.Stats(profiler), samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._profile_commit")
    parser.add_argument("--commits", type=int, default=3_000)
    parser.add_argument("--views", action="store_true", help="history and chat list views open")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="postbox-profile-") as scratch:
        path = Path(scratch) / "commit.sqlite"
        commit.build(path, commit.FULL)
        stats, samples = _profile(path, args.commits, args.views)
    text = io.StringIO()
    views = "the chat's history view and the root chat list open" if args.views else "no view open"
    print(
        f"{args.commits:,} one-message commits through Postbox.run, {views}; cProfile on the "
        f"postbox thread.\nrun() median under the profiler: {percentile(samples, 50):,.1f} µs\n",
        file=text,
    )
    stats.stream = text  # type: ignore[attr-defined]
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)
    report = text.getvalue().replace(str(Path.cwd()) + "/", "")
    sys.stdout.write(report)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
