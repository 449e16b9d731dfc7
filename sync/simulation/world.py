"""The simulated world's two ends: the real mock server and the real client.

``SimServer`` is the mock server's own connection, session and service code with the
TCP listener replaced by ``accept``, which the simulated network calls. ``SimClient``
is a Postbox on a file (run inline, on the loop's thread) and a ``SyncEngine`` whose
connector dials through the simulated network; ``crash`` drops both and ``start``
reopens the file, as a restarted app would. ``kill`` does the same at once, from inside
the engine (a crash point): nothing the engine does after it reaches the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postbox import PeerId, Postbox, PostboxError, Subscription
from sync.connection import ServerConnection
from sync.engine import SyncEngine
from sync.engine.crash_points import with_crash_point_hook
from sync.engine.timing import Timeouts
from sync.errors import SyncError
from sync.protocol import PeerKind, ProtocolError, peer_kind
from sync.server.server import MockServer, import_into
from sync.server.store import ServerStore
from sync.simulation.loop import OWNER, owned_context
from sync.simulation.network import Network, Pipe
from sync.simulation.told import ObservedConnection, ToldChannelPts

__all__ = ["ServerDownError", "SimClient", "SimServer"]

log = logging.getLogger("postbox.simulation")

TOKEN = "simulation-token"
#: Engine timeouts for the simulation: the defaults, so virtual time tells the truth.
TIMEOUTS = Timeouts()


class ServerDownError(SyncError, ConnectionRefusedError):
    """The simulated server is restarting: the connection is refused."""


class SimServer(MockServer):
    """``MockServer`` without a listening socket: ``accept`` takes simulated streams."""

    def new_account_secret(self) -> int | None:
        return random.Random(f"accounts:{self.config.seed}").getrandbits(62) + 1

    async def start_simulated(self) -> None:
        config = self.config
        store = ServerStore(str(config.db), clock=config.clock, log_window=config.log_window)
        try:
            if store.is_empty:
                import_into(store, config)
            self._service = self.make_service(store)
        except BaseException:
            store.close()
            raise
        self.store = store

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._accept(reader, writer)


def pick_contact(server: SimServer) -> int | None:
    """The person the owner shares most with: a private chat, and a group if possible."""
    store = server.service.store
    people = {user for user, _ in server.service.accounts.users()[1:]}
    chats = [peer for peer, _ in store.chat_sizes()]
    private = [peer for peer in chats if peer in people]
    in_groups = {
        member
        for peer in chats
        if peer_kind(peer) is PeerKind.GROUP
        for member in store.members(peer)
    }
    best = [peer for peer in private if peer in in_groups] or private
    return best[0] if best else None


def _loop_clock() -> float:
    """A wall clock that is the loop's: virtual, never the machine's."""
    return asyncio.get_running_loop().time()


def _streams() -> tuple[asyncio.StreamReader, asyncio.StreamReaderProtocol]:
    reader = asyncio.StreamReader()
    return reader, asyncio.StreamReaderProtocol(reader)


class SimClient:
    """The app's storage and sync engine, restartable from its file."""

    def __init__(
        self,
        path: Path,
        network: Network,
        server: Callable[[], SimServer | None],
        server_tasks: set[asyncio.Task[None]],
        *,
        token: str = TOKEN,
        name: str = "",
        crash_hook: Callable[[str], None] | None = None,
        wall_clock: Callable[[], float] | None = None,
        owner: str = "client0",
    ) -> None:
        self.path = path
        #: Told of every crash point the engine reaches (see ``sync.engine.crash_points``).
        self.crash_hook = crash_hook
        self.token = token
        #: The client's process, as the loop knows it (to suspend it).
        self.owner = owner
        #: The device's wall clock (the loop's clock by default).
        self.wall_clock = wall_clock
        #: Tells this client's trace lines and random draws from the others' ("" for the
        #: first, whose draws are those of a run with one client).
        self.name = name
        self.network = network
        self._server = server
        self._server_tasks = server_tasks
        self.postbox: Postbox | None = None
        self.engine: SyncEngine | None = None
        self.task: asyncio.Task[None] | None = None
        self.starts = 0
        #: The connections this client opened, each as its two directions.
        self.links: list[tuple[Pipe, Pipe]] = []
        #: Exceptions the engine stopped with (besides being cancelled).
        self.failures: list[str] = []
        #: The engine task ``kill`` stopped, until ``crash`` has seen it end.
        self._killed: asyncio.Task[None] | None = None
        #: What the server told this client of the channels' pts, over all its starts.
        self.told = ToldChannelPts()
        #: The app's screens open beside the engine (``show``, ``open_profile``).
        self._views: list[Subscription] = []
        self._screens: set[asyncio.Task[None]] = set()
        self._context: contextvars.Context | None = None

    def start(self) -> None:
        self.starts += 1
        self.postbox = Postbox(self.path, inline=True)
        self.engine = SyncEngine(
            self.postbox, "sim", 0, self.token, timeouts=TIMEOUTS, connector=self._connect,
            rng=random.Random(f"engine:{self.name}{self.starts}"),
            wall_clock=self.wall_clock or _loop_clock,
        )  # fmt: skip
        hook = self.crash_hook
        # Everything the engine starts runs in its process's context (see ``suspend``),
        # which also tells the crash hook, if any, of each crash point reached.
        context = contextvars.copy_context() if hook is None else with_crash_point_hook(hook)
        context.run(OWNER.set, self.owner)
        self._context = context
        self.task = asyncio.create_task(
            self.engine.run(), name=f"engine-{self.name}{self.starts}", context=context
        )
        self.task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        self.failures.append(f"engine stopped: {type(error).__name__}: {error}")

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def show(self, keys: list[Any]) -> None:
        """Keep views of ``keys`` open until the client stops, as an app's screen does
        (the hole filler fills what they show)."""
        assert self.postbox is not None
        self._views.append(self.postbox.combined_view(keys))

    def open_profile(self, peer_id: PeerId) -> None:
        """Open a peer's profile screen: its refresh runs beside the engine, as the app
        asks it of the sync worker."""
        engine = self.engine
        assert engine is not None

        async def refresh() -> None:
            try:
                await engine.refresh_profile(peer_id)
            except (ProtocolError, PostboxError, ConnectionError) as error:
                log.info("profile of %s not refreshed: %s", int(peer_id), error)

        task = asyncio.create_task(refresh(), context=self._context)
        self._screens.add(task)
        task.add_done_callback(self._screens.discard)

    def _close_screens(self) -> None:
        for subscription in self._views:
            subscription.dispose()
        self._views.clear()
        for task in self._screens:
            task.cancel()

    def kill(self) -> asyncio.Task[None] | None:
        """Die here and now: the engine is cancelled and the Postbox closed before
        anything else runs, so nothing after this moment reaches the file. The engine's
        task is returned, to be awaited (``crash``) before the next ``start``."""
        task, postbox = self.task, self.postbox
        self.task = self.engine = self.postbox = None
        self._killed = task
        self._close_screens()
        if task is not None:
            task.cancel()
        if postbox is not None:
            postbox.close()
        return task

    def go_half_open(self) -> None:
        """Its open connections die without a word (a router forgot them while the
        machine slept): nothing written on them arrives, either way."""
        for up, down in self.links:
            up.silent = down.silent = True

    async def crash(self) -> None:
        """Stop the engine and forget everything but the file."""
        task, postbox = self.task, self.postbox
        self.task = self.engine = self.postbox = None
        self._close_screens()
        if task is not None:
            task.cancel()
        # A killed engine was cancelled already: cancelling it again would cut short the
        # clean-up it is doing (closing its connection).
        for ending in (task, self._killed):
            if ending is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ending
        self._killed = None
        if postbox is not None:
            postbox.close()

    async def _connect(self) -> ServerConnection:
        await asyncio.sleep(self.network.to_server.latency[1])
        server = self._server()
        if server is None or server.store is None:
            raise ServerDownError("the server is restarting")
        client_reader, client_protocol = _streams()
        server_reader, server_protocol = _streams()
        up, down = self.network.connect(client_protocol, server_protocol)
        self.links = [(a, b) for a, b in self.links if not a.is_closing()] + [(up, down)]
        loop = asyncio.get_running_loop()
        client_writer = asyncio.StreamWriter(up, client_protocol, client_reader, loop)
        server_writer = asyncio.StreamWriter(down, server_protocol, server_reader, loop)
        # The server's side of the connection is the server's, not this client's.
        task = asyncio.create_task(
            server.accept(server_reader, server_writer), context=owned_context(None)
        )
        self._server_tasks.add(task)
        task.add_done_callback(self._server_tasks.discard)
        return ObservedConnection(client_reader, client_writer, self.told)
