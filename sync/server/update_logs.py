"""The server's update logs: what a client that missed pushes is told on its next ask.

``update_log`` holds the account's updates by ``pts``, ``channel_log`` each channel's
by its own ``pts`` (a channel's counter and log start are columns of its dialog), and
``qts_log`` the secret chats' new messages by the account's ``qts``. Every update is
stored as the wire map a client would have been pushed. The pts logs keep the newest
``window`` points; the qts log is kept whole, as a secret message missed is lost for
good.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sync.protocol import ANY_UPDATE, AnyUpdate, ChannelPts, UpdateNewEncryptedMessage
from sync.server.database import ServerDatabase
from sync.server.schema import pack

__all__ = ["LogEntry", "UpdateLogs"]


@dataclass(frozen=True, slots=True)
class LogEntry:
    pts: int
    pts_count: int
    date: int
    update: AnyUpdate


class UpdateLogs:
    """The logs in ``database``, each pts log keeping its newest ``window`` points."""

    def __init__(self, database: ServerDatabase, window: int) -> None:
        self._db = database
        self.window = window
        #: Told of every update appended (the accounts mirror them into other boxes).
        self.on_append: Callable[[Any], None] | None = None

    # -- counters --------------------------------------------------------------------

    @property
    def start(self) -> int:
        """The account's oldest pts a difference can start from."""
        return self._db.meta("log_start", 0)

    def channel_cursor(self, channel: int) -> tuple[int, int] | None:
        """A channel's (pts, oldest pts a difference can start from); ``None`` if
        ``channel`` is no channel of the account."""
        row = self._db.one(
            "SELECT pts, log_start FROM dialogs WHERE peer = ? AND pts IS NOT NULL", (channel,)
        )
        return None if row is None else (int(row[0]), int(row[1]))

    def next_pts(self, channel: int | None, points: int) -> int:
        """Take ``points`` pts of the account (``channel`` ``None``) or of a channel;
        returns the new pts."""
        if channel is None:
            pts = self._db.meta("pts", 0) + points
            self._db.set_meta("pts", pts)
            return pts
        row = self._db.one("SELECT pts FROM dialogs WHERE peer = ?", (channel,))
        assert row is not None
        pts = int(row[0]) + points
        self._db.execute("UPDATE dialogs SET pts = ? WHERE peer = ?", (pts, channel))
        return pts

    def next_qts(self) -> int:
        """Take the account's next qts."""
        qts = self._db.meta("qts", 0) + 1
        self._db.set_meta("qts", qts)
        return qts

    # -- writing ---------------------------------------------------------------------

    def append(self, channel: int | None, update: Any, date: int) -> None:
        """Log an update that took pts (``update.pts``, ``update.pts_count``) of the
        account or of ``channel``, made at ``date``; the oldest points beyond the window
        go."""
        body = pack(update.to_wire())
        if channel is None:
            self._db.execute(
                "INSERT INTO update_log VALUES (?, ?, ?, ?)",
                (update.pts, update.pts_count, date, body),
            )
            start = update.pts - self.window
            if start > self._db.meta("log_start", 0):
                self._db.execute("DELETE FROM update_log WHERE pts <= ?", (start,))
                self._db.set_meta("log_start", start)
        else:
            self._db.execute(
                "INSERT INTO channel_log VALUES (?, ?, ?, ?, ?)",
                (channel, update.pts, update.pts_count, date, body),
            )
            start = update.pts - self.window
            self._db.execute(
                "UPDATE dialogs SET event_date = ?, log_start = max(log_start, ?) WHERE peer = ?",
                (date, start, channel),
            )
            self._db.execute(
                "DELETE FROM channel_log WHERE channel = ? AND pts <= ?", (channel, start)
            )
        self._db.set_meta("date", date)
        if self.on_append is not None:
            self.on_append(update)

    def append_secret(self, update: UpdateNewEncryptedMessage, date: int) -> None:
        """Log a secret chat's new message under its qts (``next_qts``)."""
        self._db.execute(
            "INSERT INTO qts_log VALUES (?, ?, ?)", (update.qts, date, pack(update.to_wire()))
        )
        self._db.set_meta("date", date)

    def load(
        self, account: Sequence[tuple[Any, int]], channels: Sequence[tuple[int, Any, int]]
    ) -> None:
        """Fill empty pts logs with past updates in the order they were made: ``account``
        holds (update, date) from pts 2 on, ``channels`` (channel, update, date), each
        channel's from its pts 2 on. Each log keeps its newest ``window`` points, and the
        account's and every logged channel's pts move to their last update."""
        account_pts = account[-1][0].pts if account else 1
        start = max(1, account_pts - self.window)
        self._db.execute_many(
            "INSERT INTO update_log VALUES (?, ?, ?, ?)",
            [
                (update.pts, update.pts_count, date, pack(update.to_wire()))
                for update, date in account
                if update.pts > start
            ],
        )
        self._db.set_meta("pts", account_pts)
        self._db.set_meta("log_start", start)
        last: dict[int, tuple[int, int]] = {}
        for channel, update, date in channels:
            last[channel] = (update.pts, date)
        self._db.execute_many(
            "INSERT INTO channel_log VALUES (?, ?, ?, ?, ?)",
            [
                (channel, update.pts, update.pts_count, date, pack(update.to_wire()))
                for channel, update, date in channels
                if update.pts > last[channel][0] - self.window
            ],
        )
        for channel, (pts, date) in last.items():
            self._db.execute(
                "UPDATE dialogs SET pts = ?, log_start = ?, event_date = ? WHERE peer = ?",
                (pts, max(1, pts - self.window), date, channel),
            )

    # -- reading ---------------------------------------------------------------------

    def entries(self, after: int, limit: int) -> list[LogEntry]:
        """The account's logged updates after pts ``after``, at most ``limit``, in order."""
        return self._entries(
            "SELECT pts, pts_count, date, body FROM update_log WHERE pts > ? ORDER BY pts LIMIT ?",
            (after, limit),
        )

    def channel_entries(self, channel: int, after: int, limit: int) -> list[LogEntry]:
        """A channel's logged updates after its pts ``after``, at most ``limit``, in order."""
        return self._entries(
            "SELECT pts, pts_count, date, body FROM channel_log WHERE channel = ? AND pts > ?"
            " ORDER BY pts LIMIT ?",
            (channel, after, limit),
        )

    def _entries(self, sql: str, bindings: Sequence[Any]) -> list[LogEntry]:
        return [
            LogEntry(pts, count, date, ANY_UPDATE.decode(body))
            for pts, count, date, body in self._db.execute(sql, bindings)
        ]

    def secret_updates(self, after: int, limit: int) -> list[UpdateNewEncryptedMessage]:
        """The secret chats' new messages after qts ``after``, at most ``limit``, in order."""
        rows = self._db.execute(
            "SELECT body FROM qts_log WHERE qts > ? ORDER BY qts LIMIT ?", (after, limit)
        )
        updates = [ANY_UPDATE.decode(body) for (body,) in rows]
        return [u for u in updates if isinstance(u, UpdateNewEncryptedMessage)]

    def channels_changed_since(self, date: int) -> tuple[ChannelPts, ...]:
        """The pts of every channel that logged an update at or after ``date``, by id."""
        return tuple(
            ChannelPts(peer, pts)
            for peer, pts in self._db.execute(
                "SELECT peer, pts FROM dialogs WHERE pts IS NOT NULL AND event_date >= ?"
                " ORDER BY peer",
                (date,),
            )
        )
