"""A simulated network: in-memory transports with seeded latency and faults.

``Network.connect()`` makes one connection: two ``Pipe`` transports joined back to
back, each feeding the other side's asyncio ``StreamReaderProtocol``, so the client's
``ServerConnection`` and the server's connection code run unchanged over it. A pipe
cuts the byte stream it is given into frames (4-byte length, body) and schedules each
on the virtual clock: delivered after a latency, in order, unless the faults say
otherwise. Server-to-client frames (pushes and responses) may be dropped, duplicated,
overtake the ones before them, or be held back; either side may have a frame cut part
way through and the connection closed, or the connection may simply close.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from sync.simulation.liar import Liar
from sync.simulation.loop import VirtualLoop, owned_context

__all__ = ["LinkFaults", "Network", "Pipe"]

_HEADER = 4
#: Frames sent back to back arrive this far apart, so timer ties never reorder them.
_TICK = 1e-6


@dataclass(frozen=True, slots=True)
class LinkFaults:
    """Per-frame probabilities for one direction, and the latency range in seconds."""

    latency: tuple[float, float] = (0.001, 0.02)
    #: Pushes lost (the server's own push faults do the same at the source).
    drop: float = 0.0
    #: Responses lost: the request waits until its connection goes.
    drop_response: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    delay: float = 0.0
    #: Extra seconds a delayed frame waits (the ones after it wait too, as on TCP).
    delay_by: float = 0.5
    cut: float = 0.0
    disconnect: float = 0.0

    @property
    def any(self) -> bool:
        return any(
            (self.drop, self.drop_response, self.duplicate, self.reorder, self.delay, self.cut)
        ) or bool(self.disconnect)


QUIET = LinkFaults()


class Pipe(asyncio.Transport):
    """One direction of a simulated connection: what is written here arrives there."""

    def __init__(
        self, network: Network, name: str, rng: random.Random, faults: Callable[[], LinkFaults]
    ) -> None:
        super().__init__()
        self.network = network
        self.name = name
        self._rng = rng
        self._faults = faults
        self._protocol: asyncio.Protocol | None = None
        self.peer: Pipe | None = None
        self._buffer = bytearray()
        self._last_arrival = 0.0
        self._pending: set[asyncio.TimerHandle] = set()
        self._closing = False
        self._lost = False
        #: Half-open: whatever is written here vanishes, and neither side is told.
        self.silent = False

    # -- asyncio.Transport -------------------------------------------------------------

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        self._protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self._protocol is not None
        return self._protocol

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("sim", self.name) if name == "peername" else default

    def is_closing(self) -> bool:
        return self._closing

    def get_write_buffer_size(self) -> int:
        return 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        self._buffer += data
        while len(self._buffer) >= _HEADER:
            size = _HEADER + int.from_bytes(self._buffer[:_HEADER], "big")
            if len(self._buffer) < size:
                return
            frame = bytes(self._buffer[:size])
            del self._buffer[:size]
            self._send(frame)
            if self._closing:
                return

    def close(self) -> None:
        """Close after the frames already sent arrive (an orderly FIN)."""
        if self._closing:
            return
        self._closing = True
        loop = asyncio.get_running_loop()
        at = max(_world_time(loop), self._last_arrival)
        self._schedule(at, self._finish)
        peer = self.peer
        if peer is not None and not peer._closing:
            peer._closing = True
            peer._schedule(max(_world_time(loop), peer._last_arrival), peer._finish)

    def abort(self) -> None:
        """Close now; frames still on the way are lost (a reset)."""
        self._reset()
        if self.peer is not None:
            self.peer._reset()

    # -- delivery ----------------------------------------------------------------------

    def _send(self, frame: bytes) -> None:
        if self.silent:
            self.network.note(f"{self.name}: lost on a half-open connection")
            return
        faults = self._faults()
        rng = self._rng
        loop = asyncio.get_running_loop()
        now = _world_time(loop)
        liar = self.network.liar
        if liar is not None and self.name.startswith("s>"):
            frame = liar.rewrite(frame, now)
        self.network.frames += 1
        low, high = faults.latency
        arrival = max(self._last_arrival + _TICK, now + rng.uniform(low, high))
        if faults.disconnect and rng.random() < faults.disconnect:
            self.network.note(f"{self.name}: disconnect")
            self.abort()
            return
        if faults.cut and rng.random() < faults.cut:
            self.network.note(f"{self.name}: cut a {len(frame)}-byte frame")
            self._schedule(arrival, lambda: self._deliver(frame[: rng.randrange(1, len(frame))]))
            self._last_arrival = arrival
            self._schedule(arrival + _TICK, self._reset_both)
            self._closing = True
            return
        if faults.drop or faults.drop_response:
            is_push = _is_push(frame)
            chance = faults.drop if is_push else faults.drop_response
            if chance and rng.random() < chance:
                self.network.note(f"{self.name}: drop {'push' if is_push else 'response'}")
                return
        copies = 2 if faults.duplicate and rng.random() < faults.duplicate else 1
        if copies == 2:
            self.network.note(f"{self.name}: duplicate")
        if faults.reorder and rng.random() < faults.reorder:
            self.network.note(f"{self.name}: reorder")
            # This frame overtakes whatever is still on the way.
            self._schedule(now + low, lambda: self._deliver(frame))
            copies -= 1
        elif faults.delay and rng.random() < faults.delay:
            self.network.note(f"{self.name}: delay")
            arrival += rng.uniform(0.0, faults.delay_by)
        for _ in range(copies):
            self._schedule(arrival, lambda: self._deliver(frame))
        self._last_arrival = arrival

    def _schedule(self, at: float, action: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            assert handle is not None
            self._pending.discard(handle)
            action()

        # On the world's clock, in the world's context: a frame on the way arrives even
        # if its sender is suspended now (the time of a suspended sender stands still).
        world = owned_context(None)
        handle = world.run(lambda: loop.call_at(at, fire, context=world))
        self._pending.add(handle)

    def _deliver(self, data: bytes) -> None:
        peer = self.peer
        if self._lost or peer is None or peer._protocol is None or peer._lost:
            return
        peer._protocol.data_received(data)

    def _finish(self) -> None:
        """The orderly end of this direction: the peer reads EOF; both sides are lost."""
        self._reset()

    def _reset_both(self) -> None:
        self._reset()
        if self.peer is not None:
            self.peer._reset()

    def _reset(self) -> None:
        if self._lost:
            return
        self._closing = True
        self._lost = True
        for handle in self._pending:
            handle.cancel()
        self._pending.clear()
        protocol = self._protocol
        if protocol is not None:
            asyncio.get_running_loop().call_soon(protocol.connection_lost, None)


def _world_time(loop: asyncio.AbstractEventLoop) -> float:
    """The world's clock (a suspended process's own clock stands still)."""
    return loop.global_time() if isinstance(loop, VirtualLoop) else loop.time()


def _is_push(frame: bytes) -> bool:
    try:
        body = msgpack.unpackb(frame[_HEADER:])
    except ValueError:
        return False
    return isinstance(body, dict) and "push" in body


class Network:
    """Makes connections; ``faults`` says what each direction does to frames now."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self.to_client = QUIET
        self.to_server = QUIET
        self.connections = 0
        self.frames = 0
        self.trace: list[str] = []
        #: Rewrites what the server sends while a lying window lasts.
        self.liar: Liar | None = None
        self._open: list[tuple[Pipe, Pipe]] = []

    def note(self, event: str) -> None:
        self.trace.append(f"{_world_time(asyncio.get_running_loop()):.4f} {event}")

    def connect(self, client: asyncio.Protocol, server: asyncio.Protocol) -> tuple[Pipe, Pipe]:
        """Join ``client`` and ``server``; returns their transports (client's first)."""
        self.connections += 1
        number = self.connections
        seed = self._rng.getrandbits(64)
        up = Pipe(self, f"c{number}>s", random.Random(seed), lambda: self.to_server)
        down = Pipe(self, f"s>c{number}", random.Random(seed + 1), lambda: self.to_client)
        up.peer, down.peer = down, up
        up.set_protocol(client)
        down.set_protocol(server)
        self._open = [(a, b) for a, b in self._open if not a._lost] + [(up, down)]
        client.connection_made(up)
        server.connection_made(down)
        self.note(f"connect {number}")
        return up, down
