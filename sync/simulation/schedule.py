"""What happens in one simulated run, drawn from its seed.

``Schedule.from_seed(seed)`` picks a small account, a traffic rate, the faults of
each network direction and of the server, and a timeline of events: server restarts,
client crashes, clock jumps, windows of storage errors, a file opened with another
account's token, and the user's actions; the server may limit request rates
(``FLOOD_WAIT``), hint channel timeouts and remove the account from a channel. About a
third of the schedules run several clients (``seats``): the account's owner and a
contact of it as a second account, some of them on two devices; each user action and
crash then happens at one of them. Some schedules also kill one client at a named crash
point of its engine (``crash_at``: the point, and at which time it is reached). The same
seed always gives the same schedule.

Clock faults are drawn apart (``_clocks``), so a schedule without them is as it was: a
client's wall clock jumping apart from the server's, the server's clock set to
2038-01-19, where signed 32-bit dates end, and a client process suspended (the machine
asleep: the process and its clock stop while the world's goes on) and woken.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from sync.engine.crash_points import CRASH_POINTS
from sync.server.config import FaultConfig
from sync.simulation.network import QUIET, LinkFaults

__all__ = ["CrashAt", "Event", "Schedule"]

#: Kinds of timeline events.
RESTART = "server-restart"
CRASH = "client-crash"
CLOCK_JUMP = "clock-jump"
STORAGE_FULL = "storage-full"
STORAGE_BUSY = "storage-busy"
USER = "user"
#: A client's file opened for a while with another account's token (``amount``: how
#: long); its own account then resumes.
WRONG_ACCOUNT = "wrong-account"
#: The share of schedules with a ``WRONG_ACCOUNT`` event.
WRONG_ACCOUNT_CHANCE = 0.12
#: The user queues a payload the protocol cannot carry, through enqueue (refused) or
#: written straight into the Postbox as an older client or a bug could (it must fail).
BAD_PAYLOAD = "bad-payload"
#: The share of schedules with bad payloads.
BAD_PAYLOADS = 0.15
#: A window in which the server's answers break the protocol's rules (``liar.py``).
LYING_SERVER = "lying-server"
#: The share of schedules with a lying server.
LIES = 0.15
#: Fault classes of the server's answers, by their names in ``Schedule.mix``: a rate
#: limit answered with ``FLOOD_WAIT``, and channel differences with a ``timeout``.
FLOOD = "flood"
CHANNEL_TIMEOUT = "channel-timeout"
#: A timeline event: the account is removed from one of its channels, which the server
#: refuses from then on (``CHANNEL_PRIVATE``); ``amount`` in 0..1 picks the channel.
CHANNEL_PRIVATE = "channel-private"
#: The share of schedules that draw each of them.
LIMITED_SHARE = 0.15
#: The share that remove the account from a channel (only some accounts have one).
REMOVAL_SHARE = 0.3
CLIENT_CLOCK_JUMP = "client-clock-jump"
SERVER_2038 = "server-2038"
SUSPEND = "client-suspend"
#: The share of schedules drawing each clock fault.
CLOCK_FAULTS = ((CLIENT_CLOCK_JUMP, 0.15), (SERVER_2038, 0.1), (SUSPEND, 0.15))

#: Who the clients of a schedule with several are: the dataset's owner, and a contact
#: who is an account too.
OWNER, CONTACT = "owner", "contact"
#: The share of schedules with more than one client, and the seatings they draw from.
SEVERAL_CLIENTS = 0.35
SEATINGS = (
    (OWNER, CONTACT),
    (OWNER, OWNER),
    (OWNER, CONTACT, CONTACT),
    (OWNER, CONTACT, OWNER, CONTACT),
)


@dataclass(frozen=True, slots=True)
class Event:
    """At ``at`` virtual seconds, ``kind`` happens; ``amount`` is its size (the jump in
    seconds, the length of a storage error window or of a suspension, the seconds before
    2038 the server's clock is set to), if any, and for a user action or a crash, the
    client it happens at; a clock fault of a client names it in ``seat``."""

    at: float
    kind: str
    amount: float = 0.0
    seat: int = 0


#: The share of schedules that kill a client at a crash point, and at which time the
#: point is reached (the first far more often: many points are reached once a start).
CRASH_POINT_SHARE = 0.5
CRASH_POINT_TIMES = (1, 1, 1, 1, 2, 3)


@dataclass(frozen=True, slots=True)
class CrashAt:
    """Kill client ``seat`` the ``time``-th time its engine reaches crash point ``point``
    (one of ``sync.engine.crash_points.CRASH_POINTS``)."""

    point: str
    time: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class Schedule:
    seed: int
    peers: int
    messages: int
    log_window: int
    #: Virtual seconds of traffic and faults before the world is left to settle.
    duration: float
    #: Server traffic events per virtual second.
    rate: float
    to_client: LinkFaults
    to_server: LinkFaults
    server_faults: FaultConfig
    events: tuple[Event, ...]
    #: Whose each client is (``OWNER`` or ``CONTACT``), in order.
    seats: tuple[str, ...] = (OWNER,)
    #: The crash point where one client is killed, if any.
    crash_at: CrashAt | None = None

    @classmethod
    def from_seed(cls, seed: int) -> Schedule:
        rng = random.Random(f"schedule:{seed}")
        duration = rng.choice((4.0, 8.0, 15.0))
        to_client = _link_faults(rng, responses=True)
        to_server = _link_faults(rng, responses=False)
        server_faults = FaultConfig()
        if rng.random() < 0.3:
            server_faults = FaultConfig(
                drop=rng.choice((0.0, 0.05)),
                duplicate=rng.choice((0.0, 0.05)),
                reorder=rng.choice((0, 3)),
                too_long=rng.choice((0.0, 0.02)),
                channel_too_long=rng.choice((0.0, 0.02)),
            )
        events: list[Event] = []

        def some(kind: str, chance: float, most: int, amount: tuple[float, float] = (0, 0)) -> None:
            if rng.random() >= chance:
                return
            for _ in range(rng.randint(1, most)):
                at = round(rng.uniform(0.5, duration), 3)
                events.append(Event(at, kind, round(rng.uniform(*amount), 3)))

        some(RESTART, 0.25, 2)
        some(CRASH, 0.25, 2)
        some(CLOCK_JUMP, 0.2, 2, (-3600.0, 86_400.0))
        some(STORAGE_FULL, 0.1, 1, (0.2, 2.0))
        some(STORAGE_BUSY, 0.1, 1, (0.2, 2.0))
        actions = rng.randint(0, 40)
        events.extend(Event(round(rng.uniform(0.0, duration), 3), USER) for _ in range(actions))
        events.sort(key=lambda event: (event.at, event.kind))
        seats, events = _seat(seed, events)
        events = _wrong_account(seed, duration, events)
        events = _bad_payloads(seed, duration, len(seats), events)
        events = _lie(seed, events, duration)
        server_faults = _server_limits(seed, server_faults)
        events = _channel_removals(seed, duration, events)
        events = sorted(events + _clocks(seed, duration, len(seats)), key=_order)
        return cls(
            seed=seed,
            peers=rng.randint(3, 12),
            messages=rng.randint(20, 200),
            log_window=rng.choice((10_000, 10_000, 50)),
            duration=duration,
            rate=rng.choice((0.0, 1.0, 3.0, 6.0)),
            to_client=to_client,
            to_server=to_server,
            server_faults=server_faults,
            events=tuple(events),
            seats=seats,
            crash_at=_crash_at(seed, seats),
        )

    @property
    def mix(self) -> str:
        """The kinds of fault in play, for reports: ``drop+dup+restart``."""
        parts: list[str] = []
        for side, faults in (("down", self.to_client), ("up", self.to_server)):
            for name in _LINK_FAULTS:
                if getattr(faults, name):
                    parts.append(f"{side}-{name.replace('_', '-')}")
        others = replace(self.server_faults, flood_limit=0, flood_window=1.0, channel_timeout=0)
        if others.any:
            parts.append("server-faults")
        if self.server_faults.flood_limit:
            parts.append(FLOOD)
        if self.server_faults.channel_timeout:
            parts.append(CHANNEL_TIMEOUT)
        if self.log_window < 10_000:
            parts.append("short-log")
        kinds = sorted({event.kind for event in self.events if event.kind != USER})
        parts.extend(kinds)
        if any(event.kind == USER for event in self.events):
            parts.append("user")
        if self.crash_at is not None:
            parts.append("crash-point")
        if len(self.seats) > 1:
            parts.append("clients:" + ",".join(self.seats))
        return "+".join(parts) or "none"


def _order(event: Event) -> tuple[float, str]:
    return (event.at, event.kind)


def _clocks(seed: int, duration: float, seats: int) -> list[Event]:
    """The clock faults of a schedule, drawn apart from everything else."""
    rng = random.Random(f"clocks:{seed}")
    events: list[Event] = []
    for kind, chance in CLOCK_FAULTS:
        if rng.random() >= chance:
            continue
        for _ in range(1 if kind == SERVER_2038 else rng.randint(1, 2)):
            at = round(rng.uniform(0.5, duration), 3)
            seat = rng.randrange(seats)
            if kind == CLIENT_CLOCK_JUMP:  # minutes to years, either way
                amount = rng.choice((-1, 1)) * 10 ** rng.uniform(2, 8.7)
            elif kind == SUSPEND:  # a second to a night
                amount = 10 ** rng.uniform(0, 4.5)
            else:  # land just before 2038-01-19T03:14:08Z, so it passes during the run
                amount = rng.uniform(0.0, 3.0)
            events.append(Event(at, kind, round(amount, 3), seat))
    return events


def _seat(seed: int, events: list[Event]) -> tuple[tuple[str, ...], list[Event]]:
    """The clients of a schedule, and its user actions and crashes spread over them
    (drawn apart from the rest, so the single-client schedules stay as they were)."""
    rng = random.Random(f"seats:{seed}")
    if rng.random() >= SEVERAL_CLIENTS:
        return (OWNER,), events
    seats = rng.choice(SEATINGS)
    spread = [
        Event(event.at, event.kind, rng.randrange(len(seats)))
        if event.kind in (USER, CRASH)
        else event
        for event in events
    ]
    return seats, spread


def _wrong_account(seed: int, duration: float, events: list[Event]) -> list[Event]:
    """Now and then, a file opened with another account's token (drawn apart from the
    rest, so the schedules without it stay as they were)."""
    rng = random.Random(f"wrong-account:{seed}")
    if rng.random() >= WRONG_ACCOUNT_CHANCE:
        return events
    swap = Event(
        round(rng.uniform(0.5, duration), 3), WRONG_ACCOUNT, round(rng.uniform(0.5, 4.0), 3)
    )
    return sorted([*events, swap], key=lambda event: (event.at, event.kind))


def _bad_payloads(seed: int, duration: float, seats: int, events: list[Event]) -> list[Event]:
    """A few bad payloads, each at one of the clients (drawn apart from the rest, so the
    schedules without them stay as they were)."""
    rng = random.Random(f"payloads:{seed}")
    if rng.random() >= BAD_PAYLOADS:
        return events
    drawn = [
        Event(round(rng.uniform(0.0, duration), 3), BAD_PAYLOAD, rng.randrange(seats))
        for _ in range(rng.randint(1, 4))
    ]
    return sorted([*events, *drawn], key=lambda event: (event.at, event.kind))


def _lie(seed: int, events: list[Event], duration: float) -> list[Event]:
    """A lying server's window (its start and length), drawn apart from the rest so that
    schedules without one stay as they were."""
    rng = random.Random(f"lies:{seed}")
    if rng.random() >= LIES:
        return events
    at = round(rng.uniform(0.2, duration * 0.7), 3)
    window = Event(at, LYING_SERVER, round(rng.uniform(0.5, 3.0), 3))
    return sorted([*events, window], key=lambda event: (event.at, event.kind))


def _crash_at(seed: int, seats: tuple[str, ...]) -> CrashAt | None:
    """The crash point of a schedule, if it has one (drawn apart from the rest, so the
    schedules without one stay as they were)."""
    rng = random.Random(f"crash-point:{seed}")
    if rng.random() >= CRASH_POINT_SHARE:
        return None
    # The point turns with the seed, so that consecutive seeds cover the points evenly.
    point = CRASH_POINTS[seed % len(CRASH_POINTS)]
    return CrashAt(point, rng.choice(CRASH_POINT_TIMES), rng.randrange(len(seats)))


def _channel_removals(seed: int, duration: float, events: list[Event]) -> list[Event]:
    """Now and then the account is removed from a channel (drawn apart from the rest)."""
    rng = random.Random(f"channel-private:{seed}")
    if rng.random() >= REMOVAL_SHARE:
        return events
    removal = Event(round(rng.uniform(0.5, duration), 3), CHANNEL_PRIVATE, rng.random())
    return sorted([*events, removal], key=lambda event: (event.at, event.kind))


def _server_limits(seed: int, faults: FaultConfig) -> FaultConfig:
    """The server's rate limits (``FLOOD_WAIT``) and channel timeout hints, small, each
    drawn from its own generator so that schedules without them stay as they were."""
    flood = random.Random(f"flood:{seed}")
    if flood.random() < LIMITED_SHARE:
        window = flood.choice((0.5, 1.0, 2.0))
        faults = replace(faults, flood_limit=flood.choice((1, 2, 4)), flood_window=window)
    hint = random.Random(f"channel-timeout:{seed}")
    if hint.random() < LIMITED_SHARE:
        faults = replace(faults, channel_timeout=hint.choice((1, 3, 10)))
    return faults


_LINK_FAULTS = ("drop", "drop_response", "duplicate", "reorder", "delay", "cut", "disconnect")


def _link_faults(rng: random.Random, *, responses: bool) -> LinkFaults:
    """Faults for one direction; pushes and responses travel server to client."""
    slow = rng.random() < 0.2
    latency = (0.001, rng.choice((0.02, 0.2))) if slow else (0.001, 0.02)
    if rng.random() < 0.3:
        return LinkFaults(latency=latency) if slow else QUIET

    def maybe(chance: float, value: float) -> float:
        return value if rng.random() < chance else 0.0

    return LinkFaults(
        latency=latency,
        drop=maybe(0.3, 0.05) if responses else 0.0,
        drop_response=maybe(0.1, 0.02) if responses else 0.0,
        duplicate=maybe(0.3, 0.05) if responses else 0.0,
        reorder=maybe(0.3, 0.05) if responses else 0.0,
        delay=maybe(0.3, 0.05),
        cut=maybe(0.2, 0.01),
        disconnect=maybe(0.2, 0.01),
    )
