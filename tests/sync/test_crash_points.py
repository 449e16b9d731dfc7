"""The engine's crash points: listed in one place, each called at exactly one call site,
silent without a hook, and a hook that raises stops the engine right there."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path

import pytest

from sync.engine import crash_points
from sync.engine.crash_points import (
    CRASH_POINTS,
    crash_point,
    with_crash_point_hook,
)
from sync.simulation import Schedule, run_virtual, simulate

ENGINE = Path(crash_points.__file__).parent
CALL = re.compile(r'crash_point\("([^"]+)"\)')


def test_every_listed_point_is_called_at_exactly_one_call_site_and_no_other() -> None:
    calls = [
        name
        for path in sorted(ENGINE.glob("*.py"))
        if path.name != "crash_points.py"
        for name in CALL.findall(path.read_text())
    ]
    assert sorted(calls) == sorted(CRASH_POINTS)
    assert len(set(CRASH_POINTS)) == len(CRASH_POINTS)


def test_without_a_hook_a_crash_point_does_nothing() -> None:
    crash_point("state_manager.poll_difference.replayed")
    crash_point("not a point at all")  # unchecked too: production pays one lookup


def test_a_hook_sees_the_points_of_the_tasks_started_in_its_context_only() -> None:
    seen: list[str] = []

    async def engine() -> None:
        crash_point("engine.authorize.answered")
        await asyncio.create_task(child())

    async def child() -> None:
        crash_point("state_manager.poll_channels.answered")

    async def main() -> None:
        await asyncio.create_task(engine(), context=with_crash_point_hook(seen.append))
        await engine()  # outside the hook's context: unseen

    run_virtual(main())
    assert seen == ["engine.authorize.answered", "state_manager.poll_channels.answered"]


def test_a_hook_refuses_a_point_that_is_not_listed() -> None:
    context = with_crash_point_hook(lambda _name: None)
    with pytest.raises(ValueError, match="not listed"):
        context.run(crash_point, "state_manager.somewhere_else")


def test_a_hook_that_raises_stops_the_task_as_a_cancellation() -> None:
    def kill(name: str) -> None:
        raise asyncio.CancelledError(f"killed at {name}")

    async def engine() -> str:
        crash_point("state_manager.process.replayed")
        return "went on"

    async def main() -> bool:
        task = asyncio.create_task(engine(), context=with_crash_point_hook(kill))
        await asyncio.gather(task, return_exceptions=True)
        return task.cancelled()

    assert run_virtual(main())


def test_a_schedule_kills_a_client_at_its_crash_point_and_replays_exactly() -> None:
    seed = next(
        seed
        for seed in range(200)
        if (crash := Schedule.from_seed(seed).crash_at) is not None
        and crash.point == "state_manager.poll_difference.replayed"
    )
    schedule = Schedule.from_seed(seed)
    assert "crash-point" in schedule.mix
    first, second = simulate(seed), simulate(seed)
    assert first.killed_at == "state_manager.poll_difference.replayed"
    assert any("killed at state_manager.poll_difference.replayed" in line for line in first.trace)
    assert first.trace == second.trace and first.digest == second.digest
    assert first.ok, first.divergences
    assert "state_manager.poll_difference.replayed" in first.points_reached


def test_the_ci_batch_draws_every_crash_point_several_times() -> None:
    drawn = [Schedule.from_seed(seed).crash_at for seed in range(500)]
    points = Counter(crash.point for crash in drawn if crash is not None)
    assert sum(points.values()) >= 200
    assert set(points) == set(CRASH_POINTS) and min(points.values()) >= 2
    assert sum("crash-point" in Schedule.from_seed(seed).mix for seed in range(500)) == sum(
        points.values()
    )
