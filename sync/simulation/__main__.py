"""``python -m sync.simulation``: run simulated schedules, or replay one seed."""

from __future__ import annotations

import argparse
import sys
import time

from sync.simulation.batch import Summary, run_batch
from sync.simulation.harness import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sync.simulation",
        description="Run the client, the network and the server on virtual time, from seeds.",
    )
    parser.add_argument("--seed", type=int, help="replay this one seed")
    parser.add_argument("--start", type=int, default=0, help="first seed of a batch")
    parser.add_argument("--count", type=int, default=100, help="schedules in a batch")
    parser.add_argument("--jobs", type=int, default=1, help="processes for a batch")
    parser.add_argument("--trace", action="store_true", help="print the replayed run's events")
    parser.add_argument(
        "--points", action="store_true", help="list the crash points a batch reached and killed at"
    )
    args = parser.parse_args(argv)
    if args.seed is not None:
        outcome = simulate(args.seed)
        if args.trace:
            print("\n".join(outcome.trace))
        print(f"seed {outcome.seed} [{outcome.mix}] digest {outcome.digest}")
        print("\n".join(outcome.divergences) or "no divergence")
        return 0 if outcome.ok else 1
    summary = Summary()
    started = time.perf_counter()
    for outcome in run_batch(range(args.start, args.start + args.count), args.jobs):
        summary.add(outcome)
    print("\n".join(summary.lines(time.perf_counter() - started)))
    if args.points:
        print("\n".join(summary.point_lines()))
    return 0 if not summary.failing else 1


if __name__ == "__main__":
    sys.exit(main())
