"""The client's estimate of the server's time (``sync.state.ServerClock``), with the
times passed in: wall clocks set off, set back and forward, a suspended process."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sync.protocol import (
    MAX_MESSAGE_DATE,
    DifferenceEmpty,
    DifferenceSlice,
    ShortMessage,
    State,
    Updates,
)
from sync.state import WAKE_THRESHOLD, ClockReading, ServerClock, server_date_of

SERVER = 2**31 + 100  # past 2038
WALL = 1_700_000_000.0  # the device's wall clock, 16 years behind


def test_with_no_server_date_the_wall_clock_is_all_there_is() -> None:
    clock = ServerClock()
    assert clock.now(wall=WALL + 0.9, monotonic=5.0) == int(WALL)
    assert clock.now(wall=-5.0, monotonic=5.0) == 0
    assert clock.now(wall=2.0**40, monotonic=5.0) == MAX_MESSAGE_DATE


def test_the_server_date_runs_on_with_the_wall_clock() -> None:
    clock = ServerClock().observe(SERVER, wall=WALL, monotonic=10.0)
    assert clock.now(wall=WALL, monotonic=10.0) == SERVER
    assert clock.now(wall=WALL + 30.5, monotonic=40.5) == SERVER + 30


def test_a_wall_clock_set_back_does_not_move_the_estimate_back() -> None:
    clock = ServerClock().observe(SERVER, wall=WALL, monotonic=10.0)
    assert clock.now(wall=WALL - 86_400 + 20, monotonic=30.0) == SERVER + 20


def test_time_asleep_counts_though_the_monotonic_clock_stopped() -> None:
    clock = ServerClock().observe(SERVER, wall=WALL, monotonic=10.0)
    # Suspended for an hour: the wall clock ran on, the monotonic clock did not.
    assert clock.now(wall=WALL + 3600 + 2, monotonic=12.0) == SERVER + 3602


def test_a_wall_clock_set_forward_is_set_right_by_the_next_server_date() -> None:
    clock = ServerClock().observe(SERVER, wall=WALL, monotonic=10.0)
    assert clock.now(wall=WALL + 86_400 + 5, monotonic=15.0) == SERVER + 86_405  # ahead
    clock = clock.observe(SERVER + 6, wall=WALL + 86_400 + 6, monotonic=16.0)
    assert clock.now(wall=WALL + 86_400 + 7, monotonic=17.0) == SERVER + 7


def test_a_date_held_back_on_the_way_teaches_nothing() -> None:
    clock = ServerClock().observe(SERVER, wall=WALL, monotonic=10.0)
    assert clock.observe(SERVER - 50, wall=WALL + 1, monotonic=11.0) is clock


@given(
    start=st.integers(0, MAX_MESSAGE_DATE),
    wall=st.floats(-(2.0**33), 2.0**34, allow_nan=False),
    steps=st.lists(
        st.tuples(
            st.floats(-(10.0**6), 10.0**6, allow_nan=False),  # the wall clock's move
            st.floats(0.0, 10.0**4, allow_nan=False),  # the monotonic clock's
            st.one_of(st.none(), st.integers(0, 10**5)),  # a server date, this far on
        ),
        max_size=20,
    ),
)
def test_the_estimate_stays_in_range_and_after_the_last_server_date(start, wall, steps) -> None:
    """However the wall clock moves, the estimate is never before the newest date the
    server sent, and it never goes back while the wall clock does not."""
    monotonic = 0.0
    clock = ServerClock().observe(start, wall=wall, monotonic=monotonic)
    newest = start
    previous = clock.now(wall=wall, monotonic=monotonic)
    for wall_move, monotonic_move, server_move in steps:
        wall += wall_move
        monotonic += monotonic_move
        if server_move is not None:
            sent = min(newest + server_move, MAX_MESSAGE_DATE)
            clock = clock.observe(sent, wall=wall, monotonic=monotonic)
            newest = max(newest, sent)
        estimate = clock.now(wall=wall, monotonic=monotonic)
        assert newest <= estimate <= MAX_MESSAGE_DATE
        if server_move is None and wall_move >= 0:
            assert estimate >= previous
        previous = estimate


def test_the_answers_that_date_the_server_now() -> None:
    state = State(1, 0, 0, SERVER)
    assert server_date_of(state) == SERVER
    assert server_date_of(DifferenceEmpty(SERVER, 0)) == SERVER
    assert server_date_of(Updates((), (), SERVER)) == SERVER
    assert server_date_of(Updates(())) is None  # no date given
    assert server_date_of(ShortMessage(1, 5, False, "hi", SERVER, 2, 1)) == SERVER
    assert server_date_of(DifferenceSlice((), (), (), state)) is None


def test_a_sleep_shows_as_the_wall_clock_running_beyond_the_monotonic_one() -> None:
    reading = ClockReading(wall=WALL, monotonic=50.0)
    assert reading.slept(wall=WALL + 5, monotonic=55.0) == 0.0  # awake
    assert not reading.woke(wall=WALL + 5 + WAKE_THRESHOLD, monotonic=55.0)
    assert reading.woke(wall=WALL + 3605, monotonic=55.0)  # an hour asleep
    assert reading.slept(wall=WALL + 3605, monotonic=55.0) == 3600.0
    assert reading.slept(wall=WALL - 3600, monotonic=55.0) == 0.0  # a clock set back
