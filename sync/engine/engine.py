"""The sync engine: one connection to the server, and the parts that share it.

``SyncEngine.run`` keeps a connection up (reconnecting with a growing pause), feeds
pushes to the ``StateManager``, and runs the ``HoleFiller`` and ``Outbound`` beside it.
Every (re)connection counts as a gap: the state manager asks for the difference. A
request interrupted by a lost connection is sent again once the connection is back.
Given a ``master_lock``, the engine does all this only while its process is the master
client of the database (``master.py``); as a standby it waits, and takes over when the
master exits. Waits with a time limit use ``asyncio.timeout``: on Python 3.11,
``asyncio.wait_for`` can swallow a cancellation that comes as the awaited thing
finishes, and an engine being stopped then kept running. ``SyncWorker`` runs an engine
on a thread with its own event loop, for the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from postbox import (
    ChatListHolesEntry,
    MasterLock,
    MasterRole,
    MessageHistoryHolesEntry,
    PeerId,
    Postbox,
    PostboxError,
    Transaction,
)
from postbox.errors import is_final
from sync.connection import ConnectionLostError, ServerConnection
from sync.engine.convert import peer_from_wire
from sync.engine.crash_points import crash_point
from sync.engine.enqueue import ACCOUNT_PEER_PREFERENCE
from sync.engine.hole_filler import HoleFiller
from sync.engine.item_collections import ItemCollectionSync
from sync.engine.master import MasterElection
from sync.engine.outbound import Outbound
from sync.engine.profile import refresh_profile
from sync.engine.recent import RecentChanges
from sync.engine.state_manager import DIFFERENCE_SLICE, StateManager
from sync.engine.timing import Backoff, Timeouts, loop_time
from sync.engine.validators import ReadStateValidator, TagSummaryValidator
from sync.errors import SyncError
from sync.notifier import ChangeNotifier
from sync.protocol import Auth, Authorization, ErrorCode, RpcError, method_name
from sync.state import ClockReading, FloodWaits, ServerClock, flood_kind, server_date_of

__all__ = [
    "DEVICE_PREFERENCE",
    "AccountMismatchError",
    "AuthorizationError",
    "DatabaseDamagedError",
    "EngineStatus",
    "SessionTerminatedError",
    "SyncEngine",
    "SyncWorker",
]

log = logging.getLogger("postbox.sync")

T = TypeVar("T")
Connector = Callable[[], Awaitable[ServerConnection]]


class AuthorizationError(SyncError):
    """The server refused the token: reconnecting will not help."""


class SessionTerminatedError(AuthorizationError):
    """This device's session was terminated from another device: only logging out helps."""


class AccountMismatchError(AuthorizationError):
    """The token logs in as another account than the one the database belongs to:
    syncing would put one account's chats and unsent messages under the other's."""

    def __init__(self, stored: int, authorized: int) -> None:
        super().__init__(
            f"the database belongs to account {stored}, and the token logs in as"
            f" account {authorized}"
        )
        self.stored = stored
        self.authorized = authorized


class DatabaseDamagedError(SyncError):
    """The database's content is damaged (``postbox.errors.is_final``): retrying would
    fail the same way for ever, and writing more into it could spread the damage."""

    def __init__(self, path: str | None, error: BaseException) -> None:
        where = path or "the in-memory database"
        super().__init__(
            f"{where} is damaged ({error}): restore it from a copy, or run"
            " `postbox-chat sync --start-over` to empty it and fetch everything again"
        )
        self.path = path


#: The preference holding this database's device id (``Auth.device``).
DEVICE_PREFERENCE = "account.device_id"


@dataclass(frozen=True, slots=True)
class EngineStatus:
    """A snapshot for progress output and the inspector."""

    connection: str
    operation: str
    queue: tuple[str, ...]
    fills_in_flight: int
    outgoing: int
    counters: dict[str, int]
    #: The holes being fetched now.
    fetching: tuple[MessageHistoryHolesEntry | ChatListHolesEntry, ...] = ()
    #: What keeps failing, in a line (cannot connect, the database full, ...), if any.
    problem: str | None = None
    #: Chats whose read state or media counts wait for the server's word.
    validating: int = 0
    #: Seconds until the next attempt to connect, while waiting for one.
    retry_in: float | None = None
    #: "master" (this process syncs the database) or "standby" (another one does).
    role: str = "master"
    #: This process's client id, and the master's as last read (with a master lock).
    client_id: int | None = None
    master_client_id: int | None = None
    #: The kinds of request the server asked to wait (``FLOOD_WAIT``), with the seconds
    #: left for each.
    flood_waits: tuple[tuple[str, float], ...] = ()


class SyncEngine:
    def __init__(
        self,
        postbox: Postbox,
        host: str,
        port: int,
        token: str,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        difference_limit: int = DIFFERENCE_SLICE,
        connector: Connector | None = None,
        rng: random.Random | None = None,
        device_name: str = "postbox-chat",
        master_lock: MasterLock | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.postbox = postbox
        #: Set once the token's account is known to own the database: until then the
        #: outgoing queue is left as it is (another account's token must find it intact).
        self._account_checked = asyncio.Event()
        #: The device's wall clock (a simulation sets it apart from the server's).
        self.wall_clock = wall_clock
        #: What the server's dates teach of its time (``server_time``).
        self.server_clock = ServerClock()
        self.host, self.port, self.token = host, port, token
        self.device_name = device_name
        #: Opens a connection (a simulation passes its own network's).
        self.connector = connector or (lambda: ServerConnection.open(host, port))
        self.timeouts = timeouts
        self._rng = rng or random.Random()
        recent = RecentChanges()
        #: Notified by every part and after every Postbox commit: ``wait_for`` uses it.
        self.changes = ChangeNotifier()
        self.state_manager = StateManager(
            postbox, self.call, self_id=0, timeouts=timeouts,
            difference_limit=difference_limit, recent=recent, changes=self.changes, rng=self._rng,
        )  # fmt: skip
        self.hole_filler = HoleFiller(
            postbox, self.call, timeouts=timeouts, recent=recent, changes=self.changes,
            on_channel_behind=self.state_manager.request_channel_poll,
            describer=self.state_manager.describer,
            on_channel_refused=self.state_manager.channel_refused,
        )  # fmt: skip
        self.outbound = Outbound(
            postbox, self.call, on_gap=self.state_manager.request_poll, timeouts=timeouts,
            recent=recent, changes=self.changes, rng=self._rng,
            on_channel_refused=self.state_manager.channel_refused,
            on_channel_check=self.state_manager.request_channel_poll,
            account_checked=self._account_checked,
        )  # fmt: skip
        self.read_states = ReadStateValidator(
            postbox, self.call, self.state_manager, timeouts=timeouts, changes=self.changes,
            rng=self._rng,
        )  # fmt: skip
        self.tag_summaries = TagSummaryValidator(
            postbox, self.call, self.state_manager, timeouts=timeouts, changes=self.changes,
            recent=recent, rng=self._rng,
        )  # fmt: skip
        #: The installed sticker sets and saved GIFs, fetched on every connection.
        self.item_collections = ItemCollectionSync(
            postbox, self.call, timeouts=timeouts, changes=self.changes, rng=self._rng
        )
        #: With a master lock: syncs only while this process is the database's master.
        self.election = None if master_lock is None else MasterElection(
            postbox, master_lock, interval=timeouts.master_check, changes=self.changes,
        )  # fmt: skip
        self.connection_state = "connecting"
        #: Times the process was found to have slept (``_watch_for_wake``).
        self.wakes = 0
        #: Connections authorized, and attempts to open one.
        self.connections = 0
        self.connection_attempts = 0
        #: Why the engine cannot connect, if it cannot (for the status line and ``sync``).
        self.problem: str | None = None
        #: The last part that stopped on an unhandled error (a bug), if any.
        self.part_problem: str | None = None
        self._connection: ServerConnection | None = None
        self._connected = asyncio.Event()
        self._fatal: BaseException | None = None
        #: Set when a part stopped the engine for good (``stop_for_damage``).
        self._stopped = asyncio.Event()
        #: When (loop time) the next attempt to connect is due, while waiting for it.
        self._retry_at: float | None = None
        self._retry_now = asyncio.Event()
        #: The account the database belongs to, as last read (``None``: not bound yet).
        self._bound_account: int | None = None
        #: Until when each kind of request waits after the server's ``FLOOD_WAIT``.
        self.floods = FloodWaits()

    # -- requests ----------------------------------------------------------------------

    async def call(self, params: Any) -> Any:
        """Send a request on the current connection; again after a reconnect if it was
        cut (every request here is safe to repeat). A request not answered within
        ``Timeouts.request`` is taken as lost: the connection is given up. A request
        the server refused with ``FLOOD_WAIT`` was not carried out: it is sent again
        once its kind's wait is over, and no request of that kind goes before then."""
        kind = flood_kind(method_name(params))
        while True:
            if self._fatal is not None:
                raise self._fatal
            wait = self.floods.delay(kind, loop_time())
            if wait > 0:
                self.changes.notify()
                await asyncio.sleep(wait)
                continue
            await self._connected.wait()
            connection = self._connection
            if connection is None:
                continue
            try:
                async with asyncio.timeout(self.timeouts.request):
                    result = await connection.call(params)
                self._learn_server_date(result)
                return result
            except RpcError as error:
                if error.code is not ErrorCode.FLOOD_WAIT:
                    raise
                log.info("%s: the server asks to wait %s s", method_name(params), error.seconds)
                self.floods.observe(kind, float(error.seconds or 0), loop_time())
            except TimeoutError:
                reason = f"no answer to {method_name(params)} in {self.timeouts.request:g} s"
                log.warning("%s: reconnecting", reason)
                self._drop(connection, reason)
            except ConnectionLostError:
                self._drop(connection, None)
                await asyncio.sleep(0)

    async def refresh_profile(self, peer_id: PeerId) -> None:
        """Fetch a peer's full profile into the database (``profile``), once a sync
        stored a cursor, as an operation of the state manager's queue: no update lands
        while the answer travels."""
        if await asyncio.wrap_future(self.postbox.transaction(lambda tx: tx.get_state())) is None:
            await self.state_manager.poll_completion()
        await self.state_manager.custom(
            functools.partial(refresh_profile, self.call, self.postbox, peer_id)
        )

    def _learn_server_date(self, answer: Any) -> None:
        date = server_date_of(answer)
        if date is not None:
            self.server_clock = self.server_clock.observe(
                date, wall=self.wall_clock(), monotonic=loop_time()
            )

    def server_time(self) -> int:
        """The server's date now as this client estimates it (``ServerClock``): what an
        outgoing message is dated until the server's answer replaces it. Safe to call
        from any thread."""
        return self.server_clock.now(wall=self.wall_clock(), monotonic=loop_time())

    def _drop(self, connection: ServerConnection, reason: str | None) -> None:
        """Stop using ``connection`` (the connection loop then reconnects)."""
        if self._connection is connection:
            self._connected.clear()
        if reason is not None:
            connection.abort(reason)

    # -- running -----------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        """Return once ``predicate()`` holds, checking it whenever the engine or the
        Postbox changes; ``TimeoutError`` after ``timeout`` seconds."""
        await self.changes.wait_for(predicate, timeout)

    async def run(self) -> None:
        """Run until cancelled; raises ``AuthorizationError`` if the token is refused.
        With a master lock, sync only while this process is the master client."""
        remove_listener = self.postbox.add_external_change_listener(self._on_external_change)
        try:
            if self.election is None:
                await self._sync()
            else:
                await self._sync_as_master(self.election)
        finally:
            remove_listener()

    def _on_external_change(self, _version: int) -> None:
        """Another process committed (postbox thread)."""
        if self.election is not None:
            self.election.external_change()
        self.changes.notify()

    async def _sync_as_master(self, election: MasterElection) -> None:
        """Wait as a standby until this process is the master, sync while it is; again
        if it stops being one. Resigns when the engine stops."""
        try:
            while True:
                if await election.step() is not MasterRole.MASTER:
                    self.connection_state = "standby"
                    self.changes.notify()
                    await election.wait_until_master()
                self.connection_state = "connecting"
                self.changes.notify()
                syncing = asyncio.create_task(self._sync(), name="sync")
                demoted = asyncio.create_task(election.wait_until_standby(), name="master-check")
                try:
                    done, _ = await asyncio.wait(
                        {syncing, demoted}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    syncing.cancel()
                    demoted.cancel()
                    await asyncio.gather(syncing, demoted, return_exceptions=True)
                if syncing in done:
                    syncing.result()  # what ended it (a refused token)
                    return
                log.warning("client %x is no longer the master", election.client_id)
        finally:
            await election.resign()

    async def _sync(self) -> None:
        """The network side: the connection and every part that uses it."""
        remove_listener = self.postbox.add_commit_listener(lambda _record: self.changes.notify())
        parts = [
            asyncio.create_task(self._supervised(name, run), name=name)
            for name, run in (
                ("state-manager", self.state_manager.run),
                ("hole-filler", self.hole_filler.run),
                ("outbound", self.outbound.run),
                ("read-states", self.read_states.run),
                ("tag-summaries", self.tag_summaries.run),
                ("sticker-sets", self.item_collections.run),
                ("quiet-poll", self._poll_when_quiet),
                ("wake-watch", self._watch_for_wake),
            )
        ]
        keeping = asyncio.create_task(self._keep_connected(), name="connection")
        stopped = asyncio.create_task(self._stopped.wait(), name="stop")
        try:
            await asyncio.wait({keeping, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if self._fatal is not None and self._stopped.is_set():
                raise self._fatal
            keeping.result()
        finally:
            # What must happen does so before the first await: a caller that cancels
            # the engine while it stops (on a fatal error, say) cuts the rest short.
            for task in (keeping, stopped, *parts):
                task.cancel()
            remove_listener()
            connection, self._connection = self._connection, None
            self._connected.clear()
            if connection is not None:
                connection.abort("the engine stopped")
            await asyncio.gather(keeping, stopped, *parts, return_exceptions=True)
            if connection is not None:
                await connection.close()

    async def _supervised(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Run a part for ever: one that stops on an error it did not handle is logged,
        shown in the status and started again after a pause, never lost silently."""
        backoff = Backoff(self.timeouts.retry_min, self.timeouts.retry_max, self._rng)
        while True:
            try:
                await run()
                return
            except Exception as error:
                if is_final(error):
                    self.stop_for_damage(error)
                    return
                pause = backoff.next()
                log.exception("the %s stopped; starting it again in %.1f s", name, pause)
                self.part_problem = f"the {name} stopped: {error}"
                self.changes.notify()
                await asyncio.sleep(pause)

    def stop_for_damage(self, error: BaseException) -> BaseException:
        """Stop the engine for good: the database's content is damaged (``is_final``).
        Every part stops, nothing more is written, and ``run`` raises
        ``DatabaseDamagedError`` naming the file and what to do."""
        if self._fatal is None:
            log.error("the database is damaged; syncing stops: %s", error)
            self._fatal = DatabaseDamagedError(self.postbox.path, error)
            self._fatal.__cause__ = error
            self.connection_state = "database damaged"
            self.problem = str(self._fatal)
            self.changes.notify()
        self._stopped.set()
        return self._fatal

    async def _keep_connected(self) -> None:
        """Connect, authorize, feed pushes to the state manager; again when the
        connection ends. Attempts are spaced by a jittered, doubling back-off that
        starts over only after a connection stayed up ``Timeouts.stable_connection``."""
        backoff = Backoff(self.timeouts.reconnect_min, self.timeouts.reconnect_max, self._rng)
        while True:
            connection = await self._open()
            if connection is None:
                await self._wait_to_reconnect(backoff.next())
                continue
            try:
                authorization = await self._authorize(connection)
                if authorization is not None and not await self._bind_account(authorization):
                    await connection.close()
                    authorization = None
            except BaseException:  # cancelled (or token refused) before it was in use
                connection.abort("the engine stopped")
                raise
            if authorization is None:
                await self._wait_to_reconnect(backoff.next())
                continue
            connected_at = loop_time()
            self.connections += 1
            self.problem = None
            self.state_manager.self_id = authorization.user.id
            self._connection = connection
            self.connection_state = "connected"
            self._connected.set()
            self.changes.notify()
            self.state_manager.request_poll("connected")
            self.item_collections.request("connected")
            while True:
                push = await connection.pushes.get()
                if push is None:
                    break
                self._learn_server_date(push)
                self.state_manager.push(push)
            if connection.bad_frame is not None:
                # Nothing of it was taken: the difference after the reconnect heals.
                self.state_manager.counters.lies_refused += 1
                log.error("refused a frame from the server: %s", connection.bad_frame)
            self._connected.clear()
            self._connection = None
            self.connection_state = f"reconnecting ({connection.closed_reason})"
            self.changes.notify()
            await connection.close()
            if loop_time() - connected_at >= self.timeouts.stable_connection:
                backoff.reset()
            await self._wait_to_reconnect(backoff.next())

    async def _wait_to_reconnect(self, pause: float) -> None:
        """Wait ``pause`` seconds before the next attempt, or until ``reconnect_now``."""
        self._retry_at = loop_time() + pause
        self._retry_now.clear()
        self.changes.notify()
        try:
            async with asyncio.timeout(pause):
                await self._retry_now.wait()
        except TimeoutError:
            pass
        finally:
            self._retry_at = None

    def reconnect_now(self) -> None:
        """Cut short the wait before the next attempt to connect (a retry button)."""
        self._retry_now.set()

    async def _bind_account(self, authorization: Authorization) -> bool:
        """Check that the database is the authorized account's, and store the account's
        own peer (the author of what is sent from here). The first authorization binds
        the database to its account; another account raises ``AccountMismatchError``
        before anything is sent. False (try again later) if an unbound database could
        not be bound."""
        me = peer_from_wire(authorization.user)

        def bind(tx: Transaction) -> int | None:
            stored = tx.get_preference(ACCOUNT_PEER_PREFERENCE)
            if isinstance(stored, int) and stored != int(me.id):
                return stored
            tx.update_peers([me])
            tx.set_preference(ACCOUNT_PEER_PREFERENCE, int(me.id))
            return None

        try:
            other = await asyncio.wrap_future(self.postbox.transaction(bind))
            crash_point("engine.bind_account.stored")
        except PostboxError as error:
            if is_final(error):
                raise self.stop_for_damage(error) from error
            if self._bound_account == int(me.id):  # bound already: stored next time
                log.warning("could not store the account's peer: %s", error)
                self._account_checked.set()
                return True
            self.problem = f"cannot store the account: {error}"
            self.changes.notify()
            return False
        if other is not None:
            self._fatal = AccountMismatchError(other, int(me.id))
            self.connection_state = "another account's database"
            self.problem = str(self._fatal)
            self.changes.notify()
            raise self._fatal
        self._bound_account = int(me.id)
        self._account_checked.set()
        return True

    async def _open(self) -> ServerConnection | None:
        self.connection_attempts += 1
        try:
            async with asyncio.timeout(self.timeouts.request):
                return await self.connector()
        except (OSError, TimeoutError) as error:
            if isinstance(error, ConnectionRefusedError):
                cause = "connection refused"
            else:
                cause = getattr(error, "strerror", None) or str(error) or "no answer"
            self.problem = f"cannot reach the server: {cause}"
            self.connection_state = f"waiting to reconnect ({cause})"
            self.changes.notify()
            return None

    async def _device_id(self) -> int:
        """This database's device id, made the first time it is asked for; notes the
        account the database belongs to, as stored."""
        candidate = self._rng.getrandbits(62) + 1

        def read_or_make(tx: Transaction) -> tuple[int, int | None]:
            device = tx.get_preference(DEVICE_PREFERENCE)
            if not isinstance(device, int) or device <= 0:
                device = candidate
                tx.set_preference(DEVICE_PREFERENCE, device)
            account = tx.get_preference(ACCOUNT_PEER_PREFERENCE)
            return device, account if isinstance(account, int) else None

        found, self._bound_account = await asyncio.wrap_future(
            self.postbox.transaction(read_or_make)
        )
        return found

    async def _authorize(self, connection: ServerConnection) -> Authorization | None:
        try:
            device = await self._device_id()
            crash_point("engine.device_id.stored")
        except PostboxError as error:  # the database is full or busy: try again later
            connection.abort("no device id")
            await connection.close()
            if is_final(error):
                raise self.stop_for_damage(error) from error
            self.problem = f"cannot read the device id: {error}"
            self.changes.notify()
            return None
        try:
            async with asyncio.timeout(self.timeouts.request):
                answer: Authorization = await connection.call(
                    Auth(self.token, device, self.device_name[:128])
                )
            crash_point("engine.authorize.answered")
            return answer
        except RpcError as error:
            await connection.close()
            if error.code is ErrorCode.SESSION_REVOKED:
                self._fatal = SessionTerminatedError(
                    "this session was terminated from another device"
                )
                self.connection_state = "session terminated"
                self.problem = str(self._fatal)
                self.changes.notify()
                raise self._fatal from error
            if error.code is ErrorCode.AUTH_FAILED:
                self._fatal = AuthorizationError(f"the server refused the token: {error}")
                self.connection_state = "token refused"
                self.problem = str(self._fatal)
                self.changes.notify()
                raise self._fatal from error
            self.problem = f"authorization failed: {error}"
        except (ConnectionLostError, TimeoutError) as error:
            connection.abort("no answer to auth")
            await connection.close()
            self.problem = f"authorization failed: {str(error) or 'no answer'}"
        self.changes.notify()
        return None

    async def _poll_when_quiet(self) -> None:
        quiet = self.timeouts.quiet_poll
        while True:
            idle_for = loop_time() - self.state_manager.counters.last_activity
            if idle_for >= quiet:
                self.state_manager.request_poll("quiet for a while")
                self.state_manager.counters.last_activity = loop_time()
                idle_for = 0.0
            await asyncio.sleep(quiet - idle_for)

    async def _watch_for_wake(self) -> None:
        """Reconnect when the process woke from a sleep: its connection is most likely
        dead without a word, and whatever happened meanwhile is only in the difference,
        which a new connection asks for."""
        reading = ClockReading(self.wall_clock(), loop_time())
        while True:
            await asyncio.sleep(self.timeouts.wake_check)
            now = ClockReading(self.wall_clock(), loop_time())
            if reading.woke(wall=now.wall, monotonic=now.monotonic):
                slept = reading.slept(wall=now.wall, monotonic=now.monotonic)
                self.wakes += 1
                connection = self._connection
                log.info("woke after about %.0f s asleep: reconnecting", slept)
                if connection is not None:
                    self._drop(connection, f"woke after about {slept:.0f} s asleep")
            reading = now

    # -- observing ---------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """Connected, with nothing queued, held, being fetched, waiting to be sent or
        waiting for the server's read states or media counts."""
        return (
            self._connected.is_set()
            and self.state_manager.idle
            and self.hole_filler.idle
            and self.outbound.idle
            and self.read_states.idle
            and self.tag_summaries.idle
            and self.item_collections.idle
        )

    def busy_parts(self) -> list[str]:
        """Which parts keep the engine from :attr:`idle`, by name (empty when idle)."""
        parts = [] if self._connected.is_set() else ["connection"]
        if not self.state_manager.idle:
            held = self.state_manager.holding() + self.state_manager.queue_description()
            parts.append(f"state manager ({', '.join(held)})")
        workers = (
            ("hole filler", self.hole_filler),
            ("outbound", self.outbound),
            ("read states", self.read_states),
            ("tag summaries", self.tag_summaries),
            ("item collections", self.item_collections),
        )
        parts.extend(name for name, worker in workers if not worker.idle)
        return parts

    async def wait_idle(self, *, settle: float = 0.2, timeout: float = 60.0) -> bool:
        """Wait until the engine has been idle for ``settle`` seconds in a row."""
        deadline = loop_time() + timeout
        idle_since: float | None = None
        while loop_time() < deadline:
            if self._fatal is not None:
                raise self._fatal
            if self.idle:
                idle_since = idle_since or loop_time()
                if loop_time() - idle_since >= settle:
                    return True
            else:
                idle_since = None
            await asyncio.sleep(0.02)
        return False

    @property
    def connected(self) -> bool:
        """Authorized on a live connection."""
        return self._connected.is_set()

    def status(self) -> EngineStatus:
        source = self.state_manager.counters
        counters = {name: getattr(source, name) for name in source.__slots__}
        counters.pop("last_activity", None)
        counters["lies_refused"] += (
            self.hole_filler.lies_refused
            + self.read_states.lies_refused
            + self.tag_summaries.lies_refused
        )
        counters["fills"] = self.hole_filler.fills
        counters["messages_filled"] = self.hole_filler.messages_filled
        counters["dialogs_filled"] = self.hole_filler.dialogs_filled
        counters["sent"] = self.outbound.sent
        counters["given_up"] = self.outbound.failed
        counters["read_states_validated"] = self.read_states.validated
        counters["read_states_corrected"] = self.read_states.corrected
        counters["media_counts_validated"] = self.tag_summaries.validated
        counters["sticker_sets_fetched"] = self.item_collections.sets_fetched
        counters["connections"] = self.connections
        counters["connection_attempts"] = self.connection_attempts
        election = self.election
        problems = (
            None if election is None else election.problem,
            self.problem,
            self.state_manager.problem,
            self.outbound.problem,
            self.read_states.problem,
            self.tag_summaries.problem,
            self.item_collections.problem,
            self.part_problem,
        )
        return EngineStatus(
            self.connection_state,
            self.state_manager.current_operation,
            tuple(self.state_manager.queue_description()),
            len(self.hole_filler.in_flight()),
            self.outbound.pending,
            counters,
            tuple(self.hole_filler.in_flight()),
            next((problem for problem in problems if problem), None),
            self.read_states.pending + self.tag_summaries.pending,
            None if self._retry_at is None else max(0.0, self._retry_at - loop_time()),
            "master" if election is None else election.role.value,
            None if election is None else election.client_id,
            None if election is None else election.master_client_id,
            self.floods.waiting(loop_time()),
        )


class SyncWorker:
    """A ``SyncEngine`` on its own thread and event loop (the app's sync worker)."""

    def __init__(self, engine_factory: Callable[[], SyncEngine]) -> None:
        self._factory = engine_factory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.engine: SyncEngine | None = None
        self._task: asyncio.Task[None] | None = None
        self.error: BaseException | None = None

    def start(self) -> SyncWorker:
        started: Future[None] = Future()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self.engine = self._factory()
            self._task = loop.create_task(self.engine.run())
            started.set_result(None)
            try:
                loop.run_until_complete(self._task)
            except asyncio.CancelledError:
                pass
            except BaseException as error:  # noqa: BLE001 - kept for the owner to read
                self.error = error
                if isinstance(error, AuthorizationError | DatabaseDamagedError):  # not a bug
                    log.warning("sync worker stopped: %s", error)
                else:
                    log.error("sync worker stopped: %s", error)
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="sync-worker", daemon=True)
        self._thread.start()
        started.result()
        return self

    @property
    def running(self) -> bool:
        """Whether the engine still runs (it stops for good when the token is refused)."""
        loop = self._loop
        return loop is not None and not loop.is_closed() and self.error is None

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the engine has stopped by itself (as for a refused token or a
        terminated session); whether it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def call(self, fn: Callable[[SyncEngine], Any], timeout: float = 30.0) -> Any:
        """Run ``fn(engine)`` (a coroutine function or a plain one) on the worker's loop."""
        return self.submit(fn).result(timeout)

    def submit(self, fn: Callable[[SyncEngine], Any]) -> Future[Any]:
        """Schedule ``fn(engine)`` on the worker's loop; its result comes as a future."""
        loop, engine = self._loop, self.engine
        if loop is None or engine is None or loop.is_closed():
            raise RuntimeError("the sync worker is not running")

        async def invoke() -> Any:
            result = fn(engine)
            if asyncio.iscoroutine(result):
                return await result
            return result

        return asyncio.run_coroutine_threadsafe(invoke(), loop)

    def stop(self) -> None:
        loop, task, thread = self._loop, self._task, self._thread
        if loop is None or task is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=30)
        self._loop = self._task = self._thread = None
