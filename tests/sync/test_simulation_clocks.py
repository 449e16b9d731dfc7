"""The simulation's clock faults, replayed: each seed below draws one."""

from __future__ import annotations

from collections import Counter

from sync.simulation import simulate
from sync.simulation.schedule import CLIENT_CLOCK_JUMP, SERVER_2038, SUSPEND, Schedule

#: Seeds that draw each clock fault (and nothing about them fails).
SUSPENDED_A_NIGHT = 28  # a client suspended for 1,613 s; its connection goes half-open
SERVER_PAST_2038 = 30  # the server's clock passes 2038-01-19, a client's jumps 21 days back


def _time(line: str) -> float:
    return float(line.split(" ", 1)[0])


def test_a_client_woken_from_a_long_sleep_reconnects_at_once() -> None:
    """Its connection died without a word while it slept: it notices the sleep from its
    clocks and reconnects within a look (``Timeouts.wake_check``), not after the
    15-minute quiet poll."""
    assert "client-suspend" in Schedule.from_seed(SUSPENDED_A_NIGHT).mix
    outcome = simulate(SUSPENDED_A_NIGHT)
    assert outcome.ok, outcome.divergences
    woke = next(_time(line) for line in outcome.trace if "client woke after" in line)
    connects = [_time(line) for line in outcome.trace if " connect " in f" {line.split(' ', 1)[1]}"]
    assert any(woke < at <= woke + 10 for at in connects), (woke, connects)


def test_a_server_clock_past_2038_and_a_client_clock_set_back_converge() -> None:
    schedule = Schedule.from_seed(SERVER_PAST_2038)
    assert {"server-2038", "client-clock-jump"} <= set(schedule.mix.split("+"))
    outcome = simulate(SERVER_PAST_2038)
    assert outcome.ok, outcome.divergences
    assert outcome.digest == simulate(SERVER_PAST_2038).digest  # replays exactly


def test_the_ci_batch_draws_every_clock_fault() -> None:
    """Seeds 0..499 (``test_simulation.CI_SEEDS``): 69 draw a client's clock jump, 41 the
    server's clock at 2038, 62 a suspended client."""
    counts = Counter(
        kind for seed in range(500) for kind in set(Schedule.from_seed(seed).mix.split("+"))
    )
    assert [counts[kind] for kind in (CLIENT_CLOCK_JUMP, SERVER_2038, SUSPEND)] == [69, 41, 62]
