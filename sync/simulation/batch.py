"""Many seeds at once: run them (on several processes if asked) and sum up.

``run_batch(seeds, jobs)`` gives one ``Outcome`` per seed, in seed order, whatever the
number of processes; ``Summary`` counts divergences per category and lists the
failing seeds with the command that replays each, and which of the engine's crash
points the batch reached and killed a client at.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sync.engine.crash_points import CRASH_POINTS
from sync.simulation.harness import Outcome, replay_command, simulate

__all__ = ["Summary", "run_batch"]


def _quiet_simulate(seed: int) -> Outcome:
    logging.disable(logging.CRITICAL)
    return simulate(seed)


def run_batch(seeds: Iterable[int], jobs: int = 1) -> Iterator[Outcome]:
    """Each seed's outcome, in order; ``jobs`` processes share the work."""
    seeds = list(seeds)
    if jobs <= 1:
        yield from map(_quiet_simulate, seeds)
        return
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_quiet_simulate, seeds, chunksize=4)


@dataclass(slots=True)
class Summary:
    runs: int = 0
    #: Schedules with more than one client, and those with two devices of one account.
    several_clients: int = 0
    two_devices: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    failing: list[Outcome] = field(default_factory=list)
    #: Per crash point: the schedules that reached it, and those that killed a client there.
    reached: Counter[str] = field(default_factory=Counter)
    killed: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.runs += 1
        seats = _seats(outcome.mix)
        if len(seats) > 1:
            self.several_clients += 1
        if len(seats) > len(set(seats)):
            self.two_devices += 1
        self.reached.update(outcome.points_reached)
        if outcome.killed_at is not None:
            self.killed[outcome.killed_at] += 1
        if not outcome.ok:
            self.failing.append(outcome)
            self.categories.update(outcome.categories)

    def lines(self, seconds: float) -> list[str]:
        rate = self.runs / seconds * 60 if seconds > 0 else 0.0
        lines = [
            f"{self.runs} schedules in {seconds:.1f} s ({rate:.0f} per minute),"
            f" {len(self.failing)} failing",
            f"  {self.several_clients} with several clients,"
            f" {self.two_devices} with two devices of one account",
            f"  {sum(self.killed.values())} killed at a crash point: {len(self.killed)} of the"
            f" {len(CRASH_POINTS)} points, {len(self.reached)} reached",
        ]
        for category, count in self.categories.most_common():
            lines.append(f"  {count:5d}  {category}")
        for outcome in self.failing:
            lines.append(f"seed {outcome.seed} [{outcome.mix}]: {replay_command(outcome.seed)}")
            lines.extend(f"    {line}" for line in outcome.divergences[:5])
        return lines

    def point_lines(self) -> list[str]:
        """Each crash point: the schedules that reached it and that killed a client there."""
        lines = ["  reached  killed  crash point"]
        for point in CRASH_POINTS:
            lines.append(f"  {self.reached[point]:7d}  {self.killed[point]:6d}  {point}")
        return lines


def _seats(mix: str) -> list[str]:
    """The clients named in a schedule's mix (``clients:owner,contact``), if several."""
    for part in mix.split("+"):
        if part.startswith("clients:"):
            return part.removeprefix("clients:").split(",")
    return []
