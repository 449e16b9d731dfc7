"""The mock server's truth: one account's peers, messages, dialogs and update logs in SQLite.

Private chats and groups share one message-id sequence and the account's ``pts``;
each channel has its own ids and ``pts``, as on Telegram. A secret chat has its own ids
too, and each new message in one takes the account's next ``qts``. Every change that
moves a ``pts`` is appended to a log (``update_log`` for the account, ``channel_log``
per channel) as the update a client would have been pushed, and every new secret
message to ``qts_log``, so ``difference`` and ``channel_difference`` can replay exactly
what a client missed. The pts logs keep the last ``log_window`` points (a client older
than that gets "too long"); the qts log is kept whole, as a secret message missed is
lost for good.

Every mutation returns the updates it caused; the caller decides whom to push them to.
All methods run on one thread (the server's event loop).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw
import msgspec

from postbox import StoreMessage
from sync.protocol import (
    AnyChannelDifference,
    AnyDifference,
    AnyUpdate,
    Dialog,
    Dialogs,
    ErrorCode,
    ForwardHeader,
    FullPeer,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetHistory,
    Media,
    Message,
    MessagesSlice,
    Peer,
    PeerDialogs,
    PeerKind,
    Presence,
    PresenceStatus,
    ProtocolError,
    State,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    UpdatePeer,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
    make_peer_id,
    peer_kind,
)
from sync.server import differences
from sync.server.differences import DIFFERENCE_LIMIT
from sync.server.generator import DemoDataset
from sync.server.importer import import_dataset
from sync.server.schema import (
    JOINED_COLUMNS,
    MESSAGE_COLUMNS,
    database_digest,
    forward_to_db,
    media_to_db,
    message_from_row,
    open_database,
    pack,
    unpack,
)

__all__ = [
    "DEFAULT_LOG_WINDOW",
    "DIFFERENCE_LIMIT",
    "ServerStore",
    "StoreError",
    "forward_header",
]

#: Peer flags (``sync.protocol.Peer.flags``) the contact rule looks at.
_BOT, _SELF = 2, 8

#: pts points each log keeps; a client further behind gets "too long".
DEFAULT_LOG_WINDOW = 10_000
_INT32_MAX = 2**31 - 1


class StoreError(ProtocolError):
    """A request the server's data refuses (an unknown peer or message)."""


def forward_header(source: Message) -> ForwardHeader:
    """The header a forwarded copy of ``source`` carries: its own if it is a forward."""
    if source.forward is not None:
        return source.forward
    if peer_kind(source.peer) is PeerKind.CHANNEL:
        return ForwardHeader(source.peer, source.date, source.peer, source.id)
    return ForwardHeader(source.author if source.author is not None else source.peer, source.date)


class ServerStore:
    """The account on the server. ``clock`` gives unix seconds; dates never go back."""

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        clock: Callable[[], int],
        log_window: int = DEFAULT_LOG_WINDOW,
    ) -> None:
        if log_window < 1:
            raise ValueError("the log window must hold at least one pts point")
        self._clock = clock
        self.log_window = log_window
        try:
            self._db = open_database(path)
        except apsw.Error as error:
            raise OSError(f"cannot open the server database {path}: {error}") from error
        self._last_date = self._meta("date", 0)

    # -- plumbing --------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def transaction(self) -> apsw.Connection:
        """A context manager: the changes made inside it land together or not at all."""
        return self._db

    def _execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, bindings).fetchall()

    def _one(self, sql: str, bindings: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self._execute(sql, bindings)
        return rows[0] if rows else None

    def _meta(self, key: str, default: int) -> int:
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return default if row is None else int(row[0])

    def _set_meta(self, key: str, value: int) -> None:
        self._execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def now(self) -> int:
        """The server's date: the clock, but never earlier than a date already given out."""
        date = max(self._clock(), self._last_date)
        self._last_date = date
        return date

    @property
    def is_empty(self) -> bool:
        return self._one("SELECT 1 FROM peers LIMIT 1") is None

    @property
    def self_id(self) -> int:
        return self._meta("self_id", 0)

    def state(self) -> State:
        return State(self._meta("pts", 0), self._meta("qts", 0), self._meta("seq", 0), self.now())

    def digest(self) -> str:
        """A hash of everything the server stores: equal digests, equal truth."""
        return database_digest(self._db)

    # -- loading a dataset -----------------------------------------------------------

    def import_dataset(
        self,
        dataset: DemoDataset,
        messages: Iterable[StoreMessage] | None = None,
        *,
        rows: Iterable[Sequence[Any]] | None = None,
    ) -> None:
        """Fill an empty store from ``dataset`` (see ``sync.server.importer``)."""
        import_dataset(self, dataset, messages, rows=rows)

    # -- reading ---------------------------------------------------------------------

    def peer(self, peer_id: int) -> Peer | None:
        row = self._one(
            "SELECT id, name, username, access_hash, flags FROM peers WHERE id = ?", (peer_id,)
        )
        return None if row is None else Peer(*row)

    def require_peer(self, peer_id: int) -> Peer:
        peer = self.peer(peer_id)
        if peer is None or peer_id == self.self_id and peer_kind(peer_id) is not PeerKind.USER:
            raise StoreError(f"no peer with id {peer_id}", ErrorCode.PEER_ID_INVALID)
        return peer

    def _require_dialog(self, peer_id: int) -> None:
        if self._one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is None:
            raise StoreError(f"no chat with peer {peer_id}", ErrorCode.PEER_ID_INVALID)

    def peers(self, ids: Iterable[int]) -> tuple[Peer, ...]:
        """The known peers among ``ids``, in ascending id order."""
        wanted = sorted({int(i) for i in ids})
        found = (self.peer(peer_id) for peer_id in wanted)
        return tuple(peer for peer in found if peer is not None)

    def presences(self, ids: Iterable[int]) -> tuple[Presence, ...]:
        result = []
        for peer_id in sorted(set(ids)):
            row = self._one("SELECT status, status_time FROM peers WHERE id = ?", (peer_id,))
            if row is not None and row[0] is not None:
                result.append(Presence(peer_id, PresenceStatus(row[0]), row[1]))
        return tuple(result)

    def full_peer(self, peer_id: int) -> FullPeer:
        peer = self.require_peer(peer_id)
        about, members, participants = self._one(
            "SELECT about, members, participants FROM peers WHERE id = ?", (peer_id,)
        ) or ("", None, None)
        presence = self.presences((peer_id,))
        return FullPeer(
            peer,
            about,
            participants,
            tuple(unpack(members)) if members else (),
            None,
            presence[0] if presence else None,
            self._is_contact(peer),
        )

    def _is_contact(self, peer: Peer) -> bool:
        """The account's contacts: the people (not bots) it has written to in private."""
        if peer.kind is not PeerKind.USER or peer.flags & (_BOT | _SELF):
            return False
        wrote = self._one("SELECT 1 FROM messages WHERE peer = ? AND out = 1 LIMIT 1", (peer.id,))
        return wrote is not None

    def message(self, peer_id: int, message_id: int) -> Message | None:
        row = self._one(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? AND id = ?",
            (peer_id, message_id),
        )
        return None if row is None else message_from_row(row)

    def _messages(self, peer_id: int, ids: Sequence[int]) -> list[Message]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? AND id IN ({marks})"  # noqa: S608
            " ORDER BY id DESC",
            (peer_id, *ids),
        )
        return [message_from_row(row) for row in rows]

    def _peers_of(self, messages: Iterable[Message], extra: Iterable[int] = ()) -> tuple[Peer, ...]:
        ids = set(extra)
        for message in messages:
            ids.add(message.peer)
            if message.author is not None:
                ids.add(message.author)
            if message.forward is not None:
                ids.add(message.forward.author)
                if message.forward.channel is not None:
                    ids.add(message.forward.channel)
        return self.peers(ids)

    def peers_of_update(self, update: AnyUpdate) -> tuple[Peer, ...]:
        """The peers a client needs to show ``update``."""
        message = getattr(update, "message", None)
        if isinstance(message, Message):
            return self._peers_of((message,))
        peer_id = getattr(update, "peer", None)
        if peer_id is None:
            peer_id = getattr(update, "channel", None)
        return self.peers((peer_id,)) if isinstance(peer_id, int) else ()

    def history(self, request: GetHistory) -> MessagesSlice:
        """A page of history under Telegram's offset rules (see ``GetHistory``)."""
        self.require_peer(request.peer)
        base: list[Any]
        if request.filter is None:
            columns, source = MESSAGE_COLUMNS, "messages WHERE peer = ?"
            base = [request.peer]
            count_source = source
        else:
            columns = JOINED_COLUMNS
            source = (
                "media_index i JOIN messages m ON m.peer = i.peer AND m.id = i.id"
                " WHERE i.peer = ? AND i.kind = ?"
            )
            base = [request.peer, request.filter]
            count_source = "media_index WHERE peer = ? AND kind = ?"
        id_column = "id" if request.filter is None else "i.id"
        bounds, bound_args = "", []
        if request.min_id:
            bounds += f" AND {id_column} > ?"
            bound_args.append(request.min_id)
        if request.max_id:
            bounds += f" AND {id_column} < ?"
            bound_args.append(request.max_id)
        (count,) = self._one(f"SELECT count(*) FROM {count_source}", base) or (0,)  # noqa: S608
        select = f"SELECT {columns} FROM {source}{bounds}"  # noqa: S608

        def older(below: int, skip: int, take: int) -> list[tuple[Any, ...]]:
            if take <= 0:
                return []
            return self._execute(
                f"{select} AND {id_column} < ? ORDER BY {id_column} DESC LIMIT ? OFFSET ?",
                (*base, *bound_args, below, take, skip),
            )

        limit = request.limit
        offset_id = request.offset_id or _INT32_MAX
        if request.add_offset >= 0:
            rows = older(offset_id, request.add_offset, limit)
        else:
            reach = -request.add_offset
            newer = self._execute(
                f"{select} AND {id_column} >= ? ORDER BY {id_column} ASC LIMIT ?",
                (*base, *bound_args, offset_id, reach),
            )
            found = len(newer)
            newer.reverse()
            rows = newer[max(found - reach, 0) : max(0, min(found - reach + limit, found))]
            rows += older(offset_id, 0, limit - reach)
        messages = [message_from_row(row) for row in rows]
        return MessagesSlice(tuple(messages), self._peers_of(messages, (request.peer,)), count)

    def _dialog(self, row: Sequence[Any]) -> Dialog:
        peer, top_id, _date, read_inbox, read_outbox, pinned, folder, muted, pts = row
        (unread,) = self._one(
            "SELECT count(*) FROM messages WHERE peer = ? AND id > ? AND out = 0",
            (peer, read_inbox),
        ) or (0,)
        return Dialog(
            peer, top_id, read_inbox, read_outbox, unread, pinned is not None, folder, muted, pts
        )

    _DIALOG_COLUMNS = (
        "peer, top_id, top_date, read_inbox, read_outbox, pinned, folder, muted_until, pts"
    )

    def dialog(self, peer_id: int) -> Dialog:
        row = self._one(f"SELECT {self._DIALOG_COLUMNS} FROM dialogs WHERE peer = ?", (peer_id,))
        if row is None:
            raise StoreError(f"no chat with peer {peer_id}", ErrorCode.PEER_ID_INVALID)
        return self._dialog(row)

    def dialogs(self, request: GetDialogs) -> Dialogs:
        """The chat list after an offset, as Telegram pages it.

        The first page (no offset) starts with every pinned chat in pinning order; then,
        on every page, up to ``limit`` unpinned chats by (top date, top id, peer),
        newest first, older than the offset. An unpinned chat with no message left is
        not listed (as in a client's chat list, which orders chats by their last one).
        """
        where, args = "WHERE pinned IS NULL AND top_id > 0", []
        first_page = not (request.offset_date or request.offset_id or request.offset_peer)
        if not first_page:
            where += " AND (top_date, top_id, peer) < (?, ?, ?)"
            args = [request.offset_date, request.offset_id, request.offset_peer]
        rows = self._execute(
            f"SELECT {self._DIALOG_COLUMNS} FROM dialogs {where}"  # noqa: S608
            " ORDER BY top_date DESC, top_id DESC, peer DESC LIMIT ?",
            (*args, request.limit),
        )
        pinned_rows = []
        if first_page:
            pinned_rows = self._execute(
                f"SELECT {self._DIALOG_COLUMNS} FROM dialogs"  # noqa: S608
                " WHERE pinned IS NOT NULL ORDER BY pinned"
            )
        dialogs = tuple(self._dialog(row) for row in (*pinned_rows, *rows))
        tops = [self.message(d.peer, d.top_message) for d in dialogs if d.top_message]
        messages = tuple(m for m in tops if m is not None)
        (count,) = self._one(
            "SELECT count(*) FROM dialogs WHERE pinned IS NOT NULL OR top_id > 0"
        ) or (0,)
        pinned = tuple(row[0] for row in pinned_rows)
        peers = self._peers_of(messages, (d.peer for d in dialogs))
        return Dialogs(dialogs, messages, peers, count, pinned, self.state())

    def peer_dialogs(self, peer_ids: Iterable[int]) -> PeerDialogs:
        """The dialogs of ``peer_ids`` that exist, as of the current state."""
        dialogs = []
        for peer_id in dict.fromkeys(peer_ids):
            row = self._one(
                f"SELECT {self._DIALOG_COLUMNS} FROM dialogs WHERE peer = ?",  # noqa: S608
                (peer_id,),
            )
            if row is not None:
                dialogs.append(self._dialog(row))
        tops = [self.message(d.peer, d.top_message) for d in dialogs if d.top_message]
        messages = tuple(m for m in tops if m is not None)
        peers = self._peers_of(messages, (d.peer for d in dialogs))
        return PeerDialogs(tuple(dialogs), messages, peers, self.state())

    # -- what the traffic generator looks at -----------------------------------------

    def chat_sizes(self) -> list[tuple[int, int]]:
        """(peer, message count) for every chat, in peer order."""
        return self._execute(
            "SELECT d.peer, (SELECT count(*) FROM messages m WHERE m.peer = d.peer)"
            " FROM dialogs d ORDER BY d.peer"
        )

    def recent_messages(self, peer_id: int, count: int) -> list[Message]:
        """The newest ``count`` messages of a chat, newest first."""
        rows = self._execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? ORDER BY id DESC LIMIT ?",
            (peer_id, count),
        )
        return [message_from_row(row) for row in rows]

    def members(self, group_id: int) -> tuple[int, ...]:
        row = self._one("SELECT members FROM peers WHERE id = ?", (group_id,))
        return tuple(unpack(row[0])) if row and row[0] else ()

    def unread_incoming(self, peer_id: int, limit: int) -> list[int]:
        """Ids of the oldest ``limit`` incoming messages after the read inbox mark."""
        rows = self._execute(
            "SELECT m.id FROM messages m JOIN dialogs d ON d.peer = m.peer"
            " WHERE m.peer = ? AND m.out = 0 AND m.id > d.read_inbox ORDER BY m.id LIMIT ?",
            (peer_id, limit),
        )
        return [row[0] for row in rows]

    def message_count(self, peer_id: int) -> int:
        (count,) = self._one("SELECT count(*) FROM messages WHERE peer = ?", (peer_id,)) or (0,)
        return int(count)

    def message_ids_at(self, peer_id: int, positions: Iterable[int]) -> list[int]:
        """The ids at these positions of a chat's history, oldest first (0 is the oldest)."""
        found = []
        for position in sorted(set(positions)):
            row = self._one(
                "SELECT id FROM messages WHERE peer = ? ORDER BY id LIMIT 1 OFFSET ?",
                (peer_id, position),
            )
            if row is not None:
                found.append(int(row[0]))
        return found

    def read_marks(self, peer_id: int) -> tuple[int, int]:
        """(read inbox max id, read outbox max id) of a chat."""
        row = self._one("SELECT read_inbox, read_outbox FROM dialogs WHERE peer = ?", (peer_id,))
        return (row[0], row[1]) if row else (0, 0)

    # -- differences -----------------------------------------------------------------

    def difference(self, request: GetDifference, *, force_too_long: bool = False) -> AnyDifference:
        """What happened after the client's state (``sync.server.differences``)."""
        return differences.difference(self, request, force_too_long=force_too_long)

    def channel_difference(
        self, request: GetChannelDifference, *, force_too_long: bool = False
    ) -> AnyChannelDifference:
        return differences.channel_difference(self, request, force_too_long=force_too_long)

    # -- writing ---------------------------------------------------------------------

    def _next_pts(self, channel: int | None, points: int) -> int:
        if channel is None:
            pts = self._meta("pts", 0) + points
            self._set_meta("pts", pts)
            return pts
        row = self._one("SELECT pts FROM dialogs WHERE peer = ?", (channel,))
        assert row is not None
        pts = int(row[0]) + points
        self._execute("UPDATE dialogs SET pts = ? WHERE peer = ?", (pts, channel))
        return pts

    def _append(self, channel: int | None, update: Any, date: int) -> None:
        body = pack(update.to_wire())
        if channel is None:
            self._execute(
                "INSERT INTO update_log VALUES (?, ?, ?, ?)",
                (update.pts, update.pts_count, date, body),
            )
            start = update.pts - self.log_window
            if start > self._meta("log_start", 0):
                self._execute("DELETE FROM update_log WHERE pts <= ?", (start,))
                self._set_meta("log_start", start)
        else:
            self._execute(
                "INSERT INTO channel_log VALUES (?, ?, ?, ?, ?)",
                (channel, update.pts, update.pts_count, date, body),
            )
            start = update.pts - self.log_window
            self._execute(
                "UPDATE dialogs SET event_date = ?, log_start = max(log_start, ?) WHERE peer = ?",
                (date, start, channel),
            )
            self._execute(
                "DELETE FROM channel_log WHERE channel = ? AND pts <= ?", (channel, start)
            )
        self._set_meta("date", date)

    def _refresh_top(self, peer_id: int) -> None:
        top = self._one(
            "SELECT id, date FROM messages WHERE peer = ? ORDER BY id DESC LIMIT 1", (peer_id,)
        )
        top_id, top_date = top if top is not None else (0, 0)
        self._execute(
            "UPDATE dialogs SET top_id = ?, top_date = ? WHERE peer = ?",
            (top_id, top_date, peer_id),
        )

    def _channel_of(self, peer_id: int) -> int | None:
        return peer_id if peer_kind(peer_id) is PeerKind.CHANNEL else None

    def _refuse_secret(self, peer_id: int, what: str) -> None:
        if peer_kind(peer_id) is PeerKind.SECRET:
            raise StoreError(
                f"messages of a secret chat cannot be {what}", ErrorCode.PEER_ID_INVALID
            )

    # -- secret chats ----------------------------------------------------------------

    def secret_chat_with(self, user_id: int) -> int | None:
        """The secret chat opened with ``user_id``, if there is one."""
        for (peer_id,) in self._execute(
            "SELECT id FROM peers WHERE id >= ? AND id < ? ORDER BY id",
            (PeerKind.SECRET << 56, (PeerKind.SECRET + 1) << 56),
        ):
            if self.members(peer_id) == (user_id,):
                return int(peer_id)
        return None

    def open_secret_chat(self, user_id: int) -> int:
        """Open a secret chat with ``user_id`` (an empty chat, listed once it has a
        message); its peer carries the user's name and has the user as its one member."""
        user = self.require_peer(user_id)
        if user.kind is not PeerKind.USER or user_id == self.self_id:
            raise StoreError(f"no user with id {user_id}", ErrorCode.PEER_ID_INVALID)
        with self._db:
            number = self._meta("secret_chats", 0) + 1
            self._set_meta("secret_chats", number)
            peer_id = make_peer_id(PeerKind.SECRET, number)
            self._execute(
                "INSERT INTO peers VALUES (?, ?, NULL, ?, 0, '', ?, NULL, 0, NULL, 0, 0)",
                (peer_id, user.name, number, pack([user_id])),
            )
        return peer_id

    def add_message(
        self,
        peer_id: int,
        *,
        out: bool,
        author: int | None,
        text: str,
        media: Sequence[Media] = (),
        reply_to: int | None = None,
        forward: ForwardHeader | None = None,
        random_id: int | None = None,
    ) -> UpdateNewMessage | UpdateNewChannelMessage | UpdateNewEncryptedMessage:
        """Store a new message in a chat and log it; the update says where it landed.

        With ``random_id`` the send is remembered in the same transaction, so a resend
        finds it (``sent_before``) whether or not the first answer reached the client.
        A secret chat's first message lists it.
        """
        secret = peer_kind(peer_id) is PeerKind.SECRET
        if secret:
            self.require_peer(peer_id)
        else:
            self._require_dialog(peer_id)
        channel = self._channel_of(peer_id)
        date = self.now()
        with self._db:
            if secret and self._one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is None:
                self._execute(
                    "INSERT INTO dialogs VALUES (?, 0, 0, 0, 0, NULL, 0, 0, NULL, 1, NULL, ?)",
                    (peer_id, date),
                )
            if channel is None and not secret:
                message_id = self._meta("next_id", 1)
                self._set_meta("next_id", message_id + 1)
            else:
                (message_id,) = self._one(
                    "SELECT next_id FROM dialogs WHERE peer = ?", (peer_id,)
                ) or (1,)
                self._execute(
                    "UPDATE dialogs SET next_id = ? WHERE peer = ?", (message_id + 1, peer_id)
                )
            if message_id > _INT32_MAX:
                raise StoreError("message ids are exhausted", ErrorCode.INTERNAL)
            message = Message(
                peer_id, message_id, date, out, text, author, tuple(media), reply_to, None, forward
            )
            self._execute(
                f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    peer_id,
                    message_id,
                    date,
                    int(out),
                    author,
                    text,
                    media_to_db(media),
                    reply_to,
                    None,
                    forward_to_db(forward),
                ),
            )
            for item in media:
                self._execute(
                    "INSERT OR IGNORE INTO media_index VALUES (?, ?, ?)",
                    (peer_id, str(item.kind), message_id),
                )
            self._execute(
                "UPDATE dialogs SET top_id = ?, top_date = ? WHERE peer = ?",
                (message_id, date, peer_id),
            )
            update: UpdateNewMessage | UpdateNewChannelMessage | UpdateNewEncryptedMessage
            if secret:
                qts = self._meta("qts", 0) + 1
                self._set_meta("qts", qts)
                update = UpdateNewEncryptedMessage(message, qts)
                self._execute(
                    "INSERT INTO qts_log VALUES (?, ?, ?)", (qts, date, pack(update.to_wire()))
                )
                self._set_meta("date", date)
                point, points = qts, 1
            else:
                pts = self._next_pts(channel, 1)
                if channel is None:
                    update = UpdateNewMessage(message, pts, 1)
                else:
                    update = UpdateNewChannelMessage(message, pts, 1)
                self._append(channel, update, date)
                point, points = update.pts, update.pts_count
            if random_id is not None:
                self._execute(
                    "INSERT INTO sent_messages VALUES (?, ?, ?, ?, ?, ?)",
                    (random_id, peer_id, message_id, point, points, pack(message.to_wire())),
                )
        return update

    def edit_message(
        self, peer_id: int, message_id: int, text: str
    ) -> UpdateEditMessage | UpdateEditChannelMessage:
        self._refuse_secret(peer_id, "edited")
        self._require_dialog(peer_id)
        current = self.message(peer_id, message_id)
        if current is None:
            raise StoreError(
                f"no message {message_id} in chat {peer_id}", ErrorCode.MESSAGE_ID_INVALID
            )
        channel = self._channel_of(peer_id)
        date = self.now()
        edited = msgspec.structs.replace(current, text=text, edit_date=date)
        with self._db:
            self._execute(
                "UPDATE messages SET text = ?, edit_date = ? WHERE peer = ? AND id = ?",
                (text, date, peer_id, message_id),
            )
            pts = self._next_pts(channel, 1)
            update: UpdateEditMessage | UpdateEditChannelMessage
            if channel is None:
                update = UpdateEditMessage(edited, pts, 1)
            else:
                update = UpdateEditChannelMessage(edited, pts, 1)
            self._append(channel, update, date)
        return update

    def delete_messages(
        self, peer_id: int, ids: Iterable[int]
    ) -> UpdateDeleteMessages | UpdateDeleteChannelMessages | None:
        """Delete the messages among ``ids`` that exist; ``None`` if none did."""
        self._refuse_secret(peer_id, "deleted")
        self._require_dialog(peer_id)
        wanted = sorted(set(ids))
        existing = [m.id for m in self._messages(peer_id, wanted)]
        if not existing:
            return None
        existing.sort()
        channel = self._channel_of(peer_id)
        date = self.now()
        with self._db:
            marks = ", ".join("?" * len(existing))
            for table in ("messages", "media_index"):
                self._execute(
                    f"DELETE FROM {table} WHERE peer = ? AND id IN ({marks})",  # noqa: S608
                    (peer_id, *existing),
                )
            self._refresh_top(peer_id)
            pts = self._next_pts(channel, len(existing))
            update: UpdateDeleteMessages | UpdateDeleteChannelMessages
            if channel is None:
                update = UpdateDeleteMessages(peer_id, tuple(existing), pts, len(existing))
            else:
                update = UpdateDeleteChannelMessages(peer_id, tuple(existing), pts, len(existing))
            self._append(channel, update, date)
        return update

    def read_inbox(
        self, peer_id: int, max_id: int
    ) -> UpdateReadHistoryInbox | UpdateReadChannelInbox | None:
        """This account read the chat up to ``max_id``; ``None`` if that changes nothing,
        and in a secret chat, whose read concerns only the device that has it."""
        self._require_dialog(peer_id)
        top_id, read_inbox = self._one(
            "SELECT top_id, read_inbox FROM dialogs WHERE peer = ?", (peer_id,)
        ) or (0, 0)
        max_id = min(max_id, top_id)
        if max_id <= read_inbox:
            return None
        if peer_kind(peer_id) is PeerKind.SECRET:
            with self._db:
                self._execute("UPDATE dialogs SET read_inbox = ? WHERE peer = ?", (max_id, peer_id))
            return None
        channel = self._channel_of(peer_id)
        date = self.now()
        with self._db:
            self._execute("UPDATE dialogs SET read_inbox = ? WHERE peer = ?", (max_id, peer_id))
            (unread,) = self._one(
                "SELECT count(*) FROM messages WHERE peer = ? AND id > ? AND out = 0",
                (peer_id, max_id),
            ) or (0,)
            pts = self._next_pts(channel, 1)
            update: UpdateReadHistoryInbox | UpdateReadChannelInbox
            if channel is None:
                update = UpdateReadHistoryInbox(peer_id, max_id, unread, pts, 1)
            else:
                update = UpdateReadChannelInbox(peer_id, max_id, unread, pts, 1)
            self._append(channel, update, date)
        return update

    def read_outbox(self, peer_id: int, max_id: int) -> UpdateReadHistoryOutbox | None:
        """The other side of a private chat or group read our messages up to ``max_id``."""
        self._refuse_secret(peer_id, "marked read by the other side here")
        self._require_dialog(peer_id)
        if self._channel_of(peer_id) is not None:
            raise StoreError("channels have no outbox read marks", ErrorCode.PEER_ID_INVALID)
        top_id, read_outbox = self._one(
            "SELECT top_id, read_outbox FROM dialogs WHERE peer = ?", (peer_id,)
        ) or (0, 0)
        max_id = min(max_id, top_id)
        if max_id <= read_outbox:
            return None
        date = self.now()
        with self._db:
            self._execute("UPDATE dialogs SET read_outbox = ? WHERE peer = ?", (max_id, peer_id))
            update = UpdateReadHistoryOutbox(peer_id, max_id, self._next_pts(None, 1), 1)
            self._append(None, update, date)
        return update

    def set_presence(self, user_id: int, status: PresenceStatus, timestamp: int) -> Presence:
        if peer_kind(user_id) is not PeerKind.USER or self.peer(user_id) is None:
            raise StoreError(f"no user with id {user_id}", ErrorCode.PEER_ID_INVALID)
        date = self.now()
        with self._db:
            self._execute(
                "UPDATE peers SET status = ?, status_time = ?, status_date = ? WHERE id = ?",
                (str(status), timestamp, date, user_id),
            )
            self._set_meta("date", date)
        return Presence(user_id, status, timestamp)

    def rename_peer(self, peer_id: int, name: str) -> tuple[UpdatePeer, int]:
        """Change a peer's name; a seq-ordered update. Returns it and its seq."""
        peer = self.require_peer(peer_id)
        date = self.now()
        with self._db:
            self._execute(
                "UPDATE peers SET name = ?, changed_date = ? WHERE id = ?", (name, date, peer_id)
            )
            _start, seq = self.advance_seq(1)
            self._set_meta("date", date)
        renamed = Peer(peer.id, name, peer.username, peer.access_hash, peer.flags)
        return UpdatePeer(renamed), seq

    def advance_seq(self, points: int = 1) -> tuple[int, int]:
        """Take the next ``points`` seq values for one container: (seq_start, seq)."""
        if points < 1:
            raise ValueError("a seq container takes at least one seq point")
        with self._db:
            start = self._meta("seq", 0) + 1
            self._set_meta("seq", start + points - 1)
        return start, start + points - 1

    # -- idempotent sending ----------------------------------------------------------

    def sent_before(self, random_id: int) -> tuple[Message, int, int] | None:
        """The message an earlier send with ``random_id`` stored (as it is now, or as it
        was sent if it has been deleted since), with the pts it took and their count."""
        row = self._one(
            "SELECT peer, id, pts, pts_count, message FROM sent_messages WHERE random_id = ?",
            (random_id,),
        )
        if row is None:
            return None
        peer_id, message_id, pts, pts_count, original = row
        message = self.message(peer_id, message_id) or Message.from_wire(unpack(original))
        return message, pts, pts_count
