"""One simulated run: a schedule played against the real engine, server and Postbox.

``simulate(seed)`` builds the world on a ``VirtualLoop`` in a temporary directory,
plays the schedule (traffic, faults, restarts, crashes, clock jumps, storage errors,
the user, a kill at a crash point of the engine), then stops every fault, lets the
engine settle (idle, the open windows' holes filled, the queue empty, and once more
after the engine's quiet poll), and
compares the Postbox with the server through ``sync.verify.verify``. The ``Outcome``
lists the divergences and a digest of everything that happened: the same seed gives
the same digest.

This module plays the schedule and applies its events; ``staging.py`` readies clients
for the faults aimed at them, ``settling.py`` waits for quiet and ``end_checks.py``
runs the checks at the end.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import apsw

from postbox import PostboxError
from postbox.errors import translate_sqlite_error
from sync.protocol import PeerKind, peer_kind
from sync.server.config import FaultConfig, ServerConfig
from sync.simulation import schedule as kinds
from sync.simulation.end_checks import EndChecks, queued_sends
from sync.simulation.liar import Liar
from sync.simulation.loop import SimulationError, VirtualLoop, owned_context, run_virtual
from sync.simulation.network import QUIET, Network
from sync.simulation.schedule import Schedule
from sync.simulation.sends import SendLedger
from sync.simulation.settling import settled, waiting
from sync.simulation.staging import (
    another_account,
    file_facts,
    file_owner,
    prepare_crash_point,
    queue_offline,
)
from sync.simulation.user import SimulatedUser
from sync.simulation.world import TIMEOUTS, TOKEN, SimClient, SimServer, pick_contact

__all__ = ["Outcome", "replay_command", "simulate"]

#: The server's date at virtual time zero.
EPOCH = 1_700_000_000
#: A client asleep longer than this finds its connections dead without a word.
HALF_OPEN_AFTER = 60.0


@dataclass(frozen=True, slots=True)
class Outcome:
    seed: int
    mix: str
    divergences: tuple[str, ...]
    digest: str
    trace: tuple[str, ...]
    virtual_seconds: float
    #: Sends the server refused for good, failed in the clients at the end.
    failed_messages: int = 0
    #: The crash points the clients' engines reached, and the one a client was killed at.
    points_reached: frozenset[str] = frozenset()
    killed_at: str | None = None

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def categories(self) -> tuple[str, ...]:
        """Each divergence with its numbers blanked out, once."""
        return tuple(sorted({category_of(line) for line in self.divergences}))


def category_of(line: str) -> str:
    """The kind of a divergence: its text before any details, numbers blanked."""
    return re.sub(r"-?\d+", "N", line.split(" (", 1)[0])


def replay_command(seed: int) -> str:
    return f"python -m sync.simulation --seed {seed} --trace"


def simulate(seed: int) -> Outcome:
    schedule = Schedule.from_seed(seed)
    with tempfile.TemporaryDirectory(prefix="postbox-sim-", dir=_scratch()) as directory:
        return run_virtual(_World(schedule, Path(directory)).run())


def _scratch() -> str | None:
    """Memory-backed scratch space if the system has it: the files never need a disk."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class _World:
    def __init__(self, schedule: Schedule, directory: Path) -> None:
        self.schedule = schedule
        self.rng = random.Random(f"world:{schedule.seed}")
        self.trace: list[str] = []
        self.network = Network(random.Random(f"network:{schedule.seed}"))
        self.clock_offset = 0
        #: How far each client's wall clock is from the server's (``CLIENT_CLOCK_JUMP``).
        self.client_offsets = [0.0] * len(schedule.seats)
        #: When the last suspended client wakes: the world waits for it before healing.
        self.wake_at = 0.0
        #: Whether the user dates things as the app does, by the engine's estimate of
        #: the server's time; without clock faults, the server's date, as it always was.
        self.app_dates = any(
            event.kind in (kinds.CLIENT_CLOCK_JUMP, kinds.SUSPEND, kinds.SERVER_2038)
            for event in schedule.events
        )
        self.config = ServerConfig(
            token=TOKEN,
            db=directory / "server.db",
            seed=schedule.seed % 2**63,
            peers=schedule.peers,
            messages=schedule.messages,
            days=3,
            log_window=schedule.log_window,
            faults=schedule.server_faults,
            clock=self.server_date,
        )
        self.server: SimServer | None = None
        self.server_tasks: set[asyncio.Task[None]] = set()
        self.directory = directory
        #: The clients and the users at them, in the order of ``schedule.seats``.
        self.clients: list[SimClient] = []
        self.users: list[SimulatedUser] = []
        self.storage_error: str | None = None
        self.storage_rng = random.Random(f"storage:{schedule.seed}")
        self.divergences: list[str] = []
        #: Channels the account was removed from (``CHANNEL_PRIVATE``).
        self.left_channels: set[int] = set()
        #: Which client a file is opened by with another account's token (drawn apart).
        self.wrong_account_rng = random.Random(f"wrong-account:{schedule.seed}:client")
        #: The random ids of the sends each client's file queued, by client name.
        self.queued_sends: dict[str, set[int]] = {}
        #: Accounts that logged in on a file not their own.
        self.intruders: set[int] = set()
        #: Every send a client committed, held against the server at the end.
        self.ledger = SendLedger()
        self.payload_rng = random.Random(f"payloads-user:{schedule.seed}")
        #: The crash point still to kill a client at, and how often it was reached.
        self.crash_at = schedule.crash_at
        self.crash_count = 0
        self.crash_rng = random.Random(f"crash-point-restart:{schedule.seed}")
        self.points_reached: set[str] = set()
        self.killed_at: str | None = None
        self.restarting: asyncio.Task[None] | None = None
        #: Clients whose file another account has open: nothing else may start them.
        self.lent: set[SimClient] = set()
        self.checks = EndChecks(
            self.divergences,
            self.note,
            ledger=self.ledger,
            queued=self.queued_sends,
            intruders=self.intruders,
            left_channels=self.left_channels,
        )

    # -- time --------------------------------------------------------------------------

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def server_date(self) -> int:
        return EPOCH + int(self.now()) + self.clock_offset

    def wall_clock(self, seat: int) -> Callable[[], float]:
        """A client's wall clock: the world's time, moved by that client's jumps; it
        runs on while the client is suspended."""
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        return lambda: EPOCH + loop.global_time() + self.client_offsets[seat]

    def user_date(self, number: int) -> int:
        """What the user's action at client ``number`` is dated."""
        client = self.clients[number]
        if not self.app_dates or client.engine is None:
            return self.server_date()
        return owned_context(client.owner).run(client.engine.server_time)

    def _loop(self) -> VirtualLoop:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        return loop

    def note(self, event: str) -> None:
        self.trace.append(f"{self.now():.4f} {event}")

    # -- running -----------------------------------------------------------------------

    async def run(self) -> Outcome:
        schedule = self.schedule
        self.network.to_client = schedule.to_client
        self.network.to_server = schedule.to_server
        await self._start_server()
        self._seat_clients()
        for client in self.clients:
            self._start_client(client)
        try:
            await self._play()
            await self._settle_and_verify()
        except SimulationError as error:
            self.divergences.append(f"simulation: {error}")
        except Exception as error:  # noqa: BLE001 - every failure is a finding with a seed
            self.divergences.append(f"harness: {type(error).__name__}: {error}")
        finally:
            if self.restarting is not None:
                self.restarting.cancel()
                await asyncio.gather(self.restarting, return_exceptions=True)
            for client, user in zip(self.clients, self.users, strict=True):
                if client.engine is not None:
                    self.note(f"{client.name}engine counters {client.engine.status().counters}")
                user.close_all()
                await client.crash()
            await self._stop_server()
        for client in self.clients:
            self.divergences.extend(client.name + failure for failure in client.failures)
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        for failure in dict.fromkeys(loop.failed_tasks):
            self.divergences.append(f"task died: {failure}")
        trace = tuple(sorted_merge(self.trace, self.network.trace))
        digest = hashlib.sha256("\n".join(trace).encode()).hexdigest()[:16]
        return Outcome(
            schedule.seed,
            schedule.mix,
            tuple(self.divergences),
            digest,
            trace,
            self.now(),
            self.checks.failed_messages,
            frozenset(self.points_reached),
            self.killed_at,
        )

    async def _start_server(self) -> None:
        server = SimServer(self.config)
        await server.start_simulated()
        self.server = server
        self.note("server up")

    async def _stop_server(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await server.stop()
            self.note("server down")

    def _seat_clients(self) -> None:
        """A client for each seat of the schedule: the owner's with the server's token,
        a contact's with the token the server derives for that contact."""
        server = self.server
        assert server is not None
        seats = self.schedule.seats
        contact = pick_contact(server) if kinds.CONTACT in seats else None
        for number, seat in enumerate(seats):
            name = f"c{number}:" if number else ""
            token = TOKEN
            if seat == kinds.CONTACT and contact is not None:
                token = server.service.accounts.token_for(contact)
            path = self.directory / (f"client-{number}.db" if number else "client.db")
            self.clients.append(
                SimClient(
                    path, self.network, lambda: self.server, self.server_tasks,
                    token=token, name=name, crash_hook=self._crash_hook(number),
                    wall_clock=self.wall_clock(number), owner=f"client{number}",
                )
            )  # fmt: skip
            seed = self.schedule.seed
            rng = random.Random(f"user:{seed}:{number}" if number else f"user:{seed}")
            self.users.append(
                SimulatedUser(rng, self._noter(name), token=token, ledger=self.ledger, seat=number)
            )
        if len(seats) > 1:
            self.note(f"seats {', '.join(seats)} (contact {contact})")

    def _crash_hook(self, seat: int) -> Callable[[str], None]:
        return lambda point: self._at_crash_point(seat, point)

    def _at_crash_point(self, seat: int, point: str) -> None:
        """Client ``seat``'s engine is at ``point``: kill it there if the schedule says
        so (it starts again from its file a moment later)."""
        self.points_reached.add(point)
        crash_at = self.crash_at
        if crash_at is None or crash_at.seat != seat or crash_at.point != point:
            return
        self.crash_count += 1
        if self.crash_count < crash_at.time:
            return
        self.crash_at = None
        self.killed_at = point
        client = self.clients[seat]
        self.note(f"{client.name}killed at {point}")
        self.users[seat].close_all()
        client.kill()
        self.restarting = asyncio.get_running_loop().create_task(self._restart(client))
        raise asyncio.CancelledError(f"killed at {point}")

    async def _restart(self, client: SimClient) -> None:
        await client.crash()  # the killed engine's task ends
        await asyncio.sleep(self.crash_rng.uniform(0.0, 1.0))
        # Unless a scheduled crash started it meanwhile, or another account holds the file.
        if client.task is None and client not in self.lent:
            self._start_client(client)

    def _noter(self, name: str) -> Callable[[str], None]:
        return lambda event: self.note(name + event)

    def _start_client(self, client: SimClient) -> None:
        client.start()
        postbox = client.postbox
        assert postbox is not None
        postbox.before_commit = self._maybe_fail_commit
        queued = self.queued_sends.setdefault(client.name, set())
        postbox.add_commit_listener(lambda record: queued.update(queued_sends(record)))
        number = self.clients.index(client)
        postbox.add_commit_listener(lambda record: self.ledger.record_commit(number, record))
        self.note(f"{client.name}client start {client.starts}")
        crash_at = self.schedule.crash_at
        if crash_at is not None and self.clients.index(client) == crash_at.seat:
            prepare_crash_point(
                client, crash_at.point, self.server, self.crash_rng, self.server_date()
            )

    async def _open_as_another_account(self, length: float) -> None:
        """Open a client's file with another account's token for ``length`` seconds,
        as a person who picks the wrong file would: the engine must refuse it, send
        nothing and leave the file as it was; then the file's own account resumes."""
        number = self.wrong_account_rng.randrange(len(self.clients))
        client, server = self.clients[number], self.server
        assert server is not None
        other = another_account(server, client.token)
        if other is None:
            self.note(f"{client.name}no other account to open the file with")
            return
        account, token = other
        self.intruders.add(account)
        self.users[number].close_all()
        self.lent.add(client)
        await client.crash()
        if file_owner(client.path) is None:
            # No account synced into it yet: the first to authorize owns it, rightly.
            self.note(f"{client.name}file not bound to an account yet: not opened")
            self.lent.discard(client)
            self._start_client(client)
            return
        intruder = SimClient(
            client.path, self.network, lambda: self.server, self.server_tasks,
            token=token, name=f"{client.name}as {account}:",
        )  # fmt: skip
        intruder.start()
        assert intruder.postbox is not None and intruder.engine is not None
        queued = queue_offline(
            client.token, intruder.postbox, server, account,
            self.wrong_account_rng, self.server_date(),
        )  # fmt: skip
        if queued is not None:
            peer, random_id = queued
            self.queued_sends.setdefault(client.name, set()).add(random_id)
            self.note(f"{client.name}queued offline to {int(peer)}")
        engine, before = intruder.engine, intruder.postbox.run(file_facts)
        self.note(f"{client.name}file opened as account {account}")
        await asyncio.sleep(length)
        after = intruder.postbox.run(file_facts)
        await intruder.crash()
        name = client.name
        if engine.connections:
            self.divergences.append(f"{name}file of another account: synced as account {account}")
        for failure in intruder.failures:
            if "AccountMismatchError" not in failure:
                self.divergences.append(f"{name}file of another account: {failure}")
        if after != before:
            self.divergences.append(
                f"{name}file of another account: changed ({before} before, {after} after)"
            )
        self.note(f"{name}file closed as account {account} ({len(intruder.failures)} refusals)")
        self.lent.discard(client)
        self._start_client(client)

    def _maybe_fail_commit(self) -> None:
        kind = self.storage_error
        if kind is None or self.storage_rng.random() >= 0.5:
            return
        self.note(f"storage error: {kind}")
        error: BaseException
        if kind == kinds.STORAGE_FULL:
            error = apsw.FullError("database or disk is full")
        else:
            error = apsw.BusyError("database is locked")
        raise translate_sqlite_error(error, "client.db")

    async def _play(self) -> None:
        schedule = self.schedule
        traffic = asyncio.create_task(self._traffic())
        try:
            for event in schedule.events:
                await asyncio.sleep(max(0.0, event.at - self.now()))
                await self._apply(event)
            await asyncio.sleep(max(0.0, schedule.duration - self.now()))
        finally:
            traffic.cancel()
            await asyncio.gather(traffic, return_exceptions=True)

    async def _traffic(self) -> None:
        rate = self.schedule.rate
        if rate <= 0:
            return
        while True:
            await asyncio.sleep(self.rng.expovariate(rate))
            server = self.server
            if server is not None and server.store is not None:
                made = server.service.generate(1)
                self.note(f"traffic {made}")

    async def _apply(self, event: kinds.Event) -> None:
        kind = event.kind
        if kind == kinds.USER:
            client, user = self.clients[int(event.amount)], self.users[int(event.amount)]
            postbox = client.postbox
            if self._loop().asleep(client.owner):
                self.note(f"{client.name}user away: the client is suspended")
                return
            if postbox is not None and client.running:
                try:
                    user.act(postbox, self.server, self.user_date(int(event.amount)))
                except PostboxError as error:  # the app would show it; the user goes on
                    self.note(f"{client.name}user action failed: {error}")
            return
        if kind == kinds.BAD_PAYLOAD:
            client, user = self.clients[int(event.amount)], self.users[int(event.amount)]
            postbox = client.postbox
            if postbox is not None and client.running:
                try:
                    found = user.bad_payload(
                        postbox, self.server, self.server_date(), self.payload_rng
                    )
                except PostboxError as error:
                    self.note(f"{client.name}user action failed: {error}")
                    return
                if found is not None:
                    self.divergences.append(client.name + found)
            return
        self.note(f"{kind} {event.amount}")
        if kind == kinds.RESTART:
            await self._stop_server()
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))
            await self._start_server()
        elif kind == kinds.CRASH:
            client = self.clients[int(event.amount)]
            self._wake(client)  # a process killed in its sleep: it is gone all the same
            self.users[int(event.amount)].close_all()
            await client.crash()
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))
            # Unless the restart after a crash point did, or another account holds the file.
            if client.task is None and client not in self.lent:
                self._start_client(client)
        elif kind == kinds.CLOCK_JUMP:
            self.clock_offset += int(event.amount)
        elif kind == kinds.WRONG_ACCOUNT:
            await self._open_as_another_account(event.amount)
        elif kind == kinds.LYING_SERVER:
            rng = random.Random(f"lies:{self.schedule.seed}:frames")
            self.network.liar = Liar(
                rng, self.now() + event.amount, self.note, renamed=self._renamed_peers
            )
        elif kind == kinds.CHANNEL_PRIVATE:
            self._remove_from_channel(event.amount)
        elif kind == kinds.CLIENT_CLOCK_JUMP:
            self.client_offsets[event.seat] += event.amount
        elif kind == kinds.SERVER_2038:
            # Set just before 2038-01-19T03:14:08Z (never back: the server's dates do not).
            self.clock_offset += max(0, 2**31 - int(event.amount) - self.server_date())
        elif kind == kinds.SUSPEND:
            client = self.clients[event.seat]
            self._loop().suspend(client.owner)
            if event.amount > HALF_OPEN_AFTER:
                client.go_half_open()
            self._loop().call_later(event.amount, self._wake, client)
            self.wake_at = max(self.wake_at, self.now() + event.amount)
        else:
            self.storage_error = kind
            asyncio.get_running_loop().call_later(event.amount, self._end_storage_error)

    def _remove_from_channel(self, pick: float) -> None:
        """The account loses one of its channels (``pick`` in 0..1 says which)."""
        server = self.server
        if server is None or server.store is None:
            return
        channels = [
            peer for peer, _ in server.store.chat_sizes() if peer_kind(peer) is PeerKind.CHANNEL
        ]
        if channels:
            channel = channels[min(int(pick * len(channels)), len(channels) - 1)]
            server.service.remove_from_channel(channel)
            self.left_channels.add(channel)
            self.note(f"removed from channel {channel}")

    def _renamed_peers(self) -> list[int]:
        """Every peer the server has renamed (none while it is down)."""
        server = self.server
        if server is None or server.store is None:
            return []
        return server.store.peers_changed_since(0)

    def _end_storage_error(self) -> None:
        self.storage_error = None

    def _wake(self, client: SimClient) -> None:
        slept = self._loop().resume(client.owner)
        if slept:
            self.note(f"{client.name}client woke after {slept:.3f} s")

    # -- quiescence ----------------------------------------------------------------------

    def _heal(self) -> None:
        self.network.to_client = replace(QUIET, latency=self.schedule.to_client.latency)
        self.network.to_server = replace(QUIET, latency=self.schedule.to_server.latency)
        self.storage_error = None
        self.network.liar = None
        for client in self.clients:
            self._wake(client)
        server = self.server
        assert server is not None
        server.clear_faults()
        self.config = replace(self.config, faults=FaultConfig())
        self.note("healed")

    async def _settle_and_verify(self) -> None:
        # A sleeping client sleeps on (the server's clock with it) until it wakes.
        await asyncio.sleep(max(0.0, self.wake_at - self.now()))
        self._heal()
        if self.restarting is not None:
            await self.restarting
        for client in self.clients:
            if not client.running:
                self.divergences.append(
                    f"{client.name}client: the engine was not running at the end"
                )
                await client.crash()
                self._start_client(client)
        if not await settled(self.clients, self.users):
            self.divergences.append(f"settle: not quiescent {waiting(self.clients, self.users)}")
            return
        # Past the engine's quiet poll: whatever it missed silently, it asks for now.
        await asyncio.sleep(TIMEOUTS.quiet_poll + 1.0)
        if not await settled(self.clients, self.users):
            held = waiting(self.clients, self.users)
            self.divergences.append(f"settle: not quiescent after a quiet poll {held}")
            return
        self.crash_at = None  # the clients stay as they are while compared
        server = self.server
        assert server is not None
        await self.checks.run(server, self.clients)


def sorted_merge(first: list[str], second: list[str]) -> list[str]:
    """Two traces as one, by their leading virtual time (stable within each)."""
    key: Callable[[str], float] = lambda line: float(line.split(" ", 1)[0])  # noqa: E731
    return sorted([*first, *second], key=key)
