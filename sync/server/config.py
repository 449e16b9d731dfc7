"""The mock server's options, shared by ``postbox-server`` and the embedded server."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dataset import MAX_DAYS, MAX_MESSAGES, MAX_PEERS
from sync.protocol import DEFAULT_MAX_FRAME_SIZE
from sync.server.store import DEFAULT_LOG_WINDOW

__all__ = ["MAX_LATENCY", "FaultConfig", "ServerConfig", "is_loopback"]

#: The longest slow-motion latency, in seconds.
MAX_LATENCY = 10.0


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _probability(name: str, value: float) -> None:
    _check(0.0 <= value <= 1.0, f"{name} must be a probability within 0..1, not {value}")


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """What the server does to pushes and answers, per connection. All off by default.

    ``drop``, ``duplicate``, ``too_long`` and ``channel_too_long`` are probabilities per
    push; ``reorder`` holds up to that many pushes and sends them shuffled; ``delay``
    holds each push up to that many seconds; ``disconnect_every`` closes the connection
    after that many pushes. For answers to requests: ``drop_response`` is the probability
    that an answer is never sent (the request still takes effect), ``cut_response`` that
    the connection is closed halfway through writing it, and ``delay_response`` holds each
    answer up to that many seconds. ``flood_limit`` calls of one kind (sends,
    differences, channel differences, history) within ``flood_window`` seconds are
    what a connection may make; one more is answered ``FLOOD_WAIT`` (0: no limit).
    ``channel_timeout`` is the ``timeout`` hint of every channel difference: the
    seconds the client is not to poll that channel again for (0: none).
    """

    drop: float = 0.0
    duplicate: float = 0.0
    reorder: int = 0
    delay: float = 0.0
    disconnect_every: int = 0
    too_long: float = 0.0
    channel_too_long: float = 0.0
    drop_response: float = 0.0
    delay_response: float = 0.0
    cut_response: float = 0.0
    flood_limit: int = 0
    flood_window: float = 1.0
    channel_timeout: int = 0

    def __post_init__(self) -> None:
        for name in (
            "drop",
            "duplicate",
            "too_long",
            "channel_too_long",
            "drop_response",
            "cut_response",
        ):
            _probability(name, getattr(self, name))
        _check(0 <= self.reorder <= 1000, f"reorder must be within 0..1000, not {self.reorder}")
        for name in ("delay", "delay_response"):
            value = getattr(self, name)
            _check(0.0 <= value <= 60.0, f"{name} must be within 0..60 s, not {value}")
        _check(
            0 <= self.flood_limit <= 1_000_000,
            f"flood_limit must be within 0..1000000, not {self.flood_limit}",
        )
        _check(
            0.0 < self.flood_window <= 3600.0,
            f"flood_window must be within 0..3600 s (more than 0), not {self.flood_window}",
        )
        _check(
            0 <= self.channel_timeout <= 3600,
            f"channel_timeout must be within 0..3600 s, not {self.channel_timeout}",
        )
        _check(
            self.disconnect_every >= 0,
            f"disconnect_every must be 0 (never) or more, not {self.disconnect_every}",
        )

    @property
    def any(self) -> bool:
        return self != _NO_FAULTS

    @property
    def any_response(self) -> bool:
        """Whether any fault applies to answers."""
        return bool(self.drop_response or self.delay_response or self.cut_response)


_NO_FAULTS = FaultConfig()


def _wall_clock() -> int:
    return int(time.time())


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything the server needs; ``ValueError`` with a readable message if out of range.

    Without ``dataset`` the server generates an account from ``seed``, ``peers``,
    ``messages`` and ``days``. ``db`` is the server's SQLite file (kept between runs);
    ``None`` keeps everything in memory (the other accounts' boxes live next to it, in
    ``<db>.accounts/``). ``rate`` is generated events per second. ``tokens_file``: where
    to write every account's token (readable by its owner only). The token is left out
    of the config's ``repr``, so that logging a config never shows it.
    """

    token: str = field(default="demo-token", repr=False)
    host: str = "127.0.0.1"
    port: int = 0
    db: Path | None = None
    dataset: Path | None = None
    tokens_file: Path | None = None
    seed: int = 1
    peers: int = 200
    messages: int = 5_000
    days: int = 60
    rate: float = 0.0
    #: Seconds every answer and push is held before it is sent, in order (slow motion).
    latency: float = 0.0
    log_window: int = DEFAULT_LOG_WINDOW
    faults: FaultConfig = field(default_factory=FaultConfig)
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    #: Bytes a connection may leave unread before it is cut off as stalled.
    max_write_buffer: int = 8 * 1024 * 1024
    #: Failed auth attempts after which a connection is closed.
    max_auth_failures: int = 3
    #: Requests read from one connection and not answered yet; the server stops reading
    #: the connection while it has this many (before auth: one at a time).
    max_requests_in_flight: int = 8
    #: Seconds a connection has to authorize before it is closed.
    auth_timeout: float = 10.0
    #: The frame size limit until a connection has authorized (``max_frame_size`` after,
    #: which also caps this one).
    max_frame_size_before_auth: int = 4096
    #: Connections at once; one more is answered with a ``FLOOD`` error and closed.
    max_connections: int = 1000
    #: Connections not authorized yet, at once; one more is refused like that too
    #: (``max_connections`` holds for them as well).
    max_unauthorized: int = 256
    clock: Callable[[], int] = _wall_clock

    @property
    def frame_limit_before_auth(self) -> int:
        """The frame size limit a connection has until it authorizes."""
        return min(self.max_frame_size_before_auth, self.max_frame_size)

    def __post_init__(self) -> None:
        _check(bool(self.token), "the token must not be empty")
        _check(len(self.token) <= 256, "the token must be at most 256 characters")
        _check(0 <= self.port <= 65535, f"port must be within 0..65535, not {self.port}")
        _check(0 <= self.seed < 2**63, f"seed must be within 0..2^63-1, not {self.seed}")
        _check(1 <= self.peers <= MAX_PEERS, f"peers must be within 1..{MAX_PEERS}")
        _check(0 <= self.messages <= MAX_MESSAGES, f"messages must be within 0..{MAX_MESSAGES}")
        _check(1 <= self.days <= MAX_DAYS, f"days must be within 1..{MAX_DAYS}")
        _check(0.0 <= self.rate <= 10_000.0, "rate must be within 0..10000 events/s")
        _check(
            0.0 <= self.latency <= MAX_LATENCY,
            f"latency must be within 0..{MAX_LATENCY:g} s, not {self.latency:g}",
        )
        _check(self.log_window >= 1, "the log window must be at least 1")
        _check(self.max_frame_size >= 1024, "the frame size limit must be at least 1024 bytes")
        _check(self.max_write_buffer >= 64 * 1024, "the write buffer limit must be >= 64 KiB")
        _check(self.max_auth_failures >= 1, "max_auth_failures must be at least 1")
        _check(
            1 <= self.max_requests_in_flight <= 10_000,
            f"max_requests_in_flight must be within 1..10000, not {self.max_requests_in_flight}",
        )
        _check(
            0.0 < self.auth_timeout <= 3600.0,
            f"the auth timeout must be within 0..3600 s (more than 0), not {self.auth_timeout}",
        )
        _check(
            self.max_frame_size_before_auth >= 512,
            "the frame size limit before auth must be at least 512 bytes",
        )
        _check(
            self.max_connections >= 1,
            f"max_connections must be at least 1, not {self.max_connections}",
        )
        _check(
            self.max_unauthorized >= 1,
            f"max_unauthorized must be at least 1, not {self.max_unauthorized}",
        )
