"""The mock server's truth: one account's peers, messages, dialogs and update logs in SQLite.

Private chats and groups share one message-id sequence and the account's ``pts``;
each channel has its own ids and ``pts``, as on Telegram. A secret chat has its own ids
too, and each new message in one takes the account's next ``qts``. Every change that
moves a ``pts`` is appended to a log (``update_log`` for the account, ``channel_log``
per channel) as the update a client would have been pushed, and every new secret
message to ``qts_log``, so ``difference`` and ``channel_difference`` can replay exactly
what a client missed. The pts logs keep the last ``log_window`` points (a client older
than that gets "too long"); the qts log is kept whole, as a secret message missed is
lost for good. The logs are the store's ``logs`` (``sync.server.update_logs``).

Every mutation returns the updates it caused; the caller decides whom to push them to.
All methods run on one thread (the server's event loop).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from dataset import DemoDataset
from postbox import StoreMessage
from sync.protocol import (
    MAX_MESSAGE_DATE,
    AnyChannelDifference,
    AnyDifference,
    AnyUpdate,
    Dialog,
    Dialogs,
    DraftMessage,
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
    UpdateChannel,
    UpdateContact,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateDraftMessage,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    UpdateNotifySettings,
    UpdatePeer,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
    UpdateUserStatus,
    make_peer_id,
    peer_kind,
)
from sync.server import dialog_pages, differences
from sync.server.database import ServerDatabase, ServerTransaction
from sync.server.differences import DIFFERENCE_LIMIT
from sync.server.history_pages import history_page
from sync.server.importer import import_dataset
from sync.server.schema import (
    CONTACTS_FROM_HISTORY,
    DATASET_COLUMNS,
    MESSAGE_COLUMNS,
    forward_to_db,
    media_to_db,
    message_from_row,
    pack,
    unpack,
)
from sync.server.stickers import StickerStore
from sync.server.update_logs import UpdateLogs

__all__ = [
    "DEFAULT_LOG_WINDOW",
    "DIFFERENCE_LIMIT",
    "ServerStore",
    "StoreError",
    "forward_header",
]

#: ``Peer.flags`` bit of a bot, which cannot be a contact.
_BOT = 2

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
        self._db = ServerDatabase(path)
        #: The pts and qts logs that answer differences.
        self.logs = UpdateLogs(self._db, log_window)
        self.stickers = StickerStore(self._db)  #: the sticker sets and saved GIFs
        self._last_date = self.meta("date", 0)
        self._observer: Callable[[AnyUpdate], None] | None = None

    def observe(self, observer: Callable[[AnyUpdate], None] | None) -> None:
        """Tell ``observer`` of every change this store makes to what a client sees."""
        self._observer = self.logs.on_append = observer

    # -- plumbing --------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    @property
    def database(self) -> ServerDatabase:
        return self._db

    def transaction(self) -> ServerTransaction:
        """A context manager: the changes made inside it land together or not at all."""
        return self._db.transaction()

    def meta(self, key: str, default: int) -> int:
        """The counter ``key`` (``pts``, ``qts``, ``seq``, ``next_id``, ``date``, ...)."""
        return self._db.meta(key, default)

    def set_meta(self, key: str, value: int) -> None:
        self._db.set_meta(key, value)

    @property
    def log_window(self) -> int:
        """pts points each log keeps; a client further behind gets "too long"."""
        return self.logs.window

    def now(self) -> int:
        """The server's date: the clock, but never earlier than a date already given out.

        A date past 2106-02-07T06:28:15Z is refused (``INTERNAL``), never wrapped: no
        message could carry it (``MAX_MESSAGE_DATE``)."""
        date = max(self._clock(), self._last_date)
        if date > MAX_MESSAGE_DATE:
            raise StoreError(
                f"the server's clock reads {date}, past {MAX_MESSAGE_DATE} "
                "(2106-02-07T06:28:15Z), the last date a message can carry",
                ErrorCode.INTERNAL,
            )
        self._last_date = date
        return date

    @property
    def is_empty(self) -> bool:
        return self._db.one("SELECT 1 FROM peers LIMIT 1") is None

    @property
    def self_id(self) -> int:
        return self.meta("self_id", 0)

    def state(self) -> State:
        return State(self.meta("pts", 0), self.meta("qts", 0), self.meta("seq", 0), self.now())

    def digest(self) -> str:
        """A hash of everything the server stores: equal digests, equal truth."""
        return self._db.digest()

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

    def insert_peers(self, rows: Iterable[Sequence[Any]]) -> None:
        """Insert peers as a dataset brings them: rows of (id, name, username, access_hash,
        flags, about, members, participants, status, status_time), never renamed and with
        no status pushed yet."""
        self._db.execute_many("INSERT INTO peers VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0)", rows)

    def insert_messages(
        self, rows: Iterable[Sequence[Any]], media_rows: Iterable[Sequence[Any]]
    ) -> None:
        """Insert messages as a dataset brings them (rows of ``DATASET_COLUMNS``) and their
        shared-media index rows of (peer, kind, id)."""
        self._db.execute_many(
            f"INSERT INTO messages ({DATASET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )
        self._db.execute_many(
            "INSERT OR IGNORE INTO media_index (peer, kind, id) VALUES (?, ?, ?)", media_rows
        )

    def insert_dialogs(self, rows: Iterable[Sequence[Any]]) -> None:
        """Insert whole ``dialogs`` rows, every column in schema order."""
        self._db.execute_many(
            "INSERT INTO dialogs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def max_shared_message_id(self) -> int:
        """The newest id of the account-wide sequence (private chats and groups), 0 if none."""
        row = self._db.one("SELECT max(id) FROM messages WHERE peer < ?", (PeerKind.CHANNEL << 56,))
        return int(row[0] or 0) if row else 0

    def messages_since(self, date: int) -> list[Message]:
        """Every message sent at or after ``date``."""
        rows = self._db.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE date >= ?", (date,))
        return [message_from_row(row) for row in rows]

    def messages_edited_since(self, date: int) -> list[Message]:
        """Every message last edited at or after ``date``."""
        rows = self._db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE edit_date >= ?", (date,)
        )
        return [message_from_row(row) for row in rows]

    def all_read_marks(self) -> list[tuple[int, int, int]]:
        """(peer, read inbox max id, read outbox max id) of every chat, in peer order."""
        return [
            (int(peer), int(inbox), int(outbox))
            for peer, inbox, outbox in self._db.execute(
                "SELECT peer, read_inbox, read_outbox FROM dialogs ORDER BY peer"
            )
        ]

    def top_id_before(self, peer_id: int, date: int) -> int:
        """The newest id among a chat's messages sent before ``date``, 0 if none."""
        (top,) = self._db.one(
            "SELECT coalesce(max(id), 0) FROM messages WHERE peer = ? AND date < ?",
            (peer_id, date),
        ) or (0,)
        return int(top)

    # -- reading ---------------------------------------------------------------------

    def peer(self, peer_id: int) -> Peer | None:
        row = self._db.one(
            "SELECT id, name, username, access_hash, flags FROM peers WHERE id = ?", (peer_id,)
        )
        return None if row is None else Peer(*row)

    def require_peer(self, peer_id: int) -> Peer:
        peer = self.peer(peer_id)
        if peer is None or peer_id == self.self_id and peer_kind(peer_id) is not PeerKind.USER:
            raise StoreError(f"no peer with id {peer_id}", ErrorCode.PEER_ID_INVALID)
        return peer

    def require_member(self, peer_id: int) -> None:
        """Refuse, for good, a channel the account is not in (it was removed from it)
        with ``CHANNEL_PRIVATE``, as Telegram does."""
        if (
            peer_kind(peer_id) is PeerKind.CHANNEL
            and self.peer(peer_id) is not None
            and self._db.one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is None
        ):
            raise StoreError(f"not a member of channel {peer_id}", ErrorCode.CHANNEL_PRIVATE)

    def _require_dialog(self, peer_id: int) -> None:
        self.require_member(peer_id)
        if self._db.one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is None:
            raise StoreError(f"no chat with peer {peer_id}", ErrorCode.PEER_ID_INVALID)

    def peers(self, ids: Iterable[int]) -> tuple[Peer, ...]:
        """The known peers among ``ids``, in ascending id order."""
        wanted = sorted({int(i) for i in ids})
        found = (self.peer(peer_id) for peer_id in wanted)
        return tuple(peer for peer in found if peer is not None)

    def presences(self, ids: Iterable[int]) -> tuple[Presence, ...]:
        result = []
        for peer_id in sorted(set(ids)):
            row = self._db.one("SELECT status, status_time FROM peers WHERE id = ?", (peer_id,))
            if row is not None and row[0] is not None:
                result.append(Presence(peer_id, PresenceStatus(row[0]), row[1]))
        return tuple(result)

    def full_peer(self, peer_id: int) -> FullPeer:
        peer = self.require_peer(peer_id)
        about, members, participants = self._db.one(
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
        """Whether ``peer`` is on the account's contacts list (``contacts``)."""
        return self._db.one("SELECT 1 FROM contacts WHERE peer = ?", (peer.id,)) is not None

    def contacts(self) -> tuple[int, ...]:
        """The account's contacts, in ascending id order: a list of its own, filled when the
        account is made (``fill_contacts``) and changed by nothing a chat does."""
        return tuple(
            int(row[0]) for row in self._db.execute("SELECT peer FROM contacts ORDER BY peer")
        )

    def set_contact(self, user_id: int, contact: bool) -> UpdateContact | None:
        """Add a user to the account's contacts or remove one, as ``contacts.addContact``
        and ``contacts.deleteContacts`` do, logged on the account's pts; ``None`` if that
        changes nothing. A bot or the account's own user cannot be one."""
        peer = self.require_peer(user_id)
        if peer.kind is not PeerKind.USER or peer.flags & _BOT or user_id == self.self_id:
            raise StoreError(f"{user_id} cannot be a contact", ErrorCode.PEER_ID_INVALID)
        if self._is_contact(peer) == contact:
            return None
        date = self.now()
        with self.transaction():
            if contact:
                self._db.execute("INSERT INTO contacts (peer) VALUES (?)", (user_id,))
            else:
                self._db.execute("DELETE FROM contacts WHERE peer = ?", (user_id,))
            update = UpdateContact(user_id, contact, self.logs.next_pts(None, 1), 1)
            self.logs.append(None, update, date)
        return update

    def fill_contacts(self) -> None:
        """Add to the contacts the people the account has written to in private, as a
        new account's list starts (``CONTACTS_FROM_HISTORY``)."""
        self._db.execute(CONTACTS_FROM_HISTORY)

    def message(self, peer_id: int, message_id: int) -> Message | None:
        row = self._db.one(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? AND id = ?",
            (peer_id, message_id),
        )
        return None if row is None else message_from_row(row)

    def _messages(self, peer_id: int, ids: Sequence[int]) -> list[Message]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? AND id IN ({marks})"  # noqa: S608
            " ORDER BY id DESC",
            (peer_id, *ids),
        )
        return [message_from_row(row) for row in rows]

    def peers_of(self, messages: Iterable[Message], extra: Iterable[int] = ()) -> tuple[Peer, ...]:
        """The peers a client needs to show ``messages`` (their chats, authors and forward
        sources) and the peers ``extra``, in ascending id order."""
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
            return self.peers_of((message,))
        peer_id = getattr(update, "peer", None)
        if peer_id is None:
            peer_id = getattr(update, "channel", None)
        return self.peers((peer_id,)) if isinstance(peer_id, int) else ()

    def history(self, request: GetHistory) -> MessagesSlice:
        """A page of history under Telegram's offset rules (``sync.server.history_pages``)."""
        self.require_peer(request.peer)
        self.require_member(request.peer)
        messages, count = history_page(self._db, request)
        return MessagesSlice(messages, self.peers_of(messages, (request.peer,)), count)

    def top_message(self, peer_id: int) -> tuple[int, int]:
        """(id, date) of a chat's newest message; (0, 0) if it has none."""
        top = self._db.one(
            "SELECT id, date FROM messages WHERE peer = ? ORDER BY id DESC LIMIT 1", (peer_id,)
        )
        return (int(top[0]), int(top[1])) if top is not None else (0, 0)

    def unread_count(self, peer_id: int, read_inbox: int) -> int:
        """The incoming messages of a chat after id ``read_inbox``."""
        (count,) = self._db.one(
            "SELECT count(*) FROM messages WHERE peer = ? AND id > ? AND out = 0",
            (peer_id, read_inbox),
        ) or (0,)
        return int(count)

    def dialog(self, peer_id: int) -> Dialog:
        return dialog_pages.dialog(self, peer_id)

    def dialogs(self, request: GetDialogs) -> Dialogs:
        """The chat list after an offset, as Telegram pages it (``dialog_pages``)."""
        return dialog_pages.dialogs(self, request)

    def peer_dialogs(self, peer_ids: Iterable[int]) -> PeerDialogs:
        """The dialogs of ``peer_ids`` that exist, as of the current state."""
        return dialog_pages.peer_dialogs(self, peer_ids)

    # -- what the traffic generator looks at -----------------------------------------

    def chat_sizes(self) -> list[tuple[int, int]]:
        """(peer, message count) for every chat, in peer order."""
        return self._db.execute(
            "SELECT d.peer, (SELECT count(*) FROM messages m WHERE m.peer = d.peer)"
            " FROM dialogs d ORDER BY d.peer"
        )

    def recent_messages(self, peer_id: int, count: int) -> list[Message]:
        """The newest ``count`` messages of a chat, newest first."""
        rows = self._db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? ORDER BY id DESC LIMIT ?",
            (peer_id, count),
        )
        return [message_from_row(row) for row in rows]

    def members(self, group_id: int) -> tuple[int, ...]:
        row = self._db.one("SELECT members FROM peers WHERE id = ?", (group_id,))
        return tuple(unpack(row[0])) if row and row[0] else ()

    def unread_incoming(self, peer_id: int, limit: int) -> list[int]:
        """Ids of the oldest ``limit`` incoming messages after the read inbox mark."""
        rows = self._db.execute(
            "SELECT m.id FROM messages m JOIN dialogs d ON d.peer = m.peer"
            " WHERE m.peer = ? AND m.out = 0 AND m.id > d.read_inbox ORDER BY m.id LIMIT ?",
            (peer_id, limit),
        )
        return [row[0] for row in rows]

    def message_count(self, peer_id: int) -> int:
        (count,) = self._db.one("SELECT count(*) FROM messages WHERE peer = ?", (peer_id,)) or (0,)
        return int(count)

    def message_ids_at(self, peer_id: int, positions: Iterable[int]) -> list[int]:
        """The ids at these positions of a chat's history, oldest first (0 is the oldest)."""
        found = []
        for position in sorted(set(positions)):
            row = self._db.one(
                "SELECT id FROM messages WHERE peer = ? ORDER BY id LIMIT 1 OFFSET ?",
                (peer_id, position),
            )
            if row is not None:
                found.append(int(row[0]))
        return found

    def read_marks(self, peer_id: int) -> tuple[int, int]:
        """(read inbox max id, read outbox max id) of a chat."""
        row = self._db.one("SELECT read_inbox, read_outbox FROM dialogs WHERE peer = ?", (peer_id,))
        return (row[0], row[1]) if row else (0, 0)

    # -- differences -----------------------------------------------------------------

    def peers_changed_since(self, date: int) -> list[int]:
        """The peers renamed at or after ``date``."""
        rows = self._db.execute(
            "SELECT id FROM peers WHERE changed_date >= ? AND changed_date > 0", (date,)
        )
        return [int(row[0]) for row in rows]

    def presences_changed_since(self, date: int) -> tuple[Presence, ...]:
        """The presences of the users whose status changed at or after ``date``."""
        rows = self._db.execute(
            "SELECT id FROM peers WHERE status_date >= ? AND status_date > 0", (date,)
        )
        return self.presences(int(row[0]) for row in rows)

    def difference(self, request: GetDifference, *, force_too_long: bool = False) -> AnyDifference:
        """What happened after the client's state (``sync.server.differences``)."""
        return differences.difference(self, request, force_too_long=force_too_long)

    def channel_difference(
        self,
        request: GetChannelDifference,
        *,
        force_too_long: bool = False,
        timeout: int | None = None,
    ) -> AnyChannelDifference:
        return differences.channel_difference(
            self, request, force_too_long=force_too_long, timeout=timeout
        )

    # -- writing ---------------------------------------------------------------------

    def _refresh_top(self, peer_id: int) -> None:
        top_id, top_date = self.top_message(peer_id)
        self._db.execute(
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
        for (peer_id,) in self._db.execute(
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
        with self.transaction():
            number = self.meta("secret_chats", 0) + 1
            self.set_meta("secret_chats", number)
            peer_id = make_peer_id(PeerKind.SECRET, number)
            self._db.execute(
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
        with self.transaction():
            if secret and self._db.one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is None:
                self._db.execute(
                    "INSERT INTO dialogs VALUES (?, 0, 0, 0, 0, NULL, 0, 0, NULL, 1, NULL, ?)",
                    (peer_id, date),
                )
            if channel is None and not secret:
                message_id = self.meta("next_id", 1)
                self.set_meta("next_id", message_id + 1)
            else:
                (message_id,) = self._db.one(
                    "SELECT next_id FROM dialogs WHERE peer = ?", (peer_id,)
                ) or (1,)
                self._db.execute(
                    "UPDATE dialogs SET next_id = ? WHERE peer = ?", (message_id + 1, peer_id)
                )
            if message_id > _INT32_MAX:
                raise StoreError("message ids are exhausted", ErrorCode.INTERNAL)
            message = Message(
                peer_id, message_id, date, out, text, author, tuple(media), reply_to, None, forward
            )
            self._db.execute(
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
                self._db.execute(
                    "INSERT OR IGNORE INTO media_index VALUES (?, ?, ?)",
                    (peer_id, str(item.kind), message_id),
                )
            self._db.execute(
                "UPDATE dialogs SET top_id = ?, top_date = ? WHERE peer = ?",
                (message_id, date, peer_id),
            )
            update: UpdateNewMessage | UpdateNewChannelMessage | UpdateNewEncryptedMessage
            if secret:
                update = UpdateNewEncryptedMessage(message, self.logs.next_qts())
                self.logs.append_secret(update, date)
                point, points = update.qts, 1
            else:
                pts = self.logs.next_pts(channel, 1)
                if channel is None:
                    update = UpdateNewMessage(message, pts, 1)
                else:
                    update = UpdateNewChannelMessage(message, pts, 1)
                self.logs.append(channel, update, date)
                point, points = update.pts, update.pts_count
            if random_id is not None:
                self._db.execute(
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
        with self.transaction():
            self._db.execute(
                "UPDATE messages SET text = ?, edit_date = ? WHERE peer = ? AND id = ?",
                (text, date, peer_id, message_id),
            )
            pts = self.logs.next_pts(channel, 1)
            update: UpdateEditMessage | UpdateEditChannelMessage
            if channel is None:
                update = UpdateEditMessage(edited, pts, 1)
            else:
                update = UpdateEditChannelMessage(edited, pts, 1)
            self.logs.append(channel, update, date)
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
        with self.transaction():
            marks = ", ".join("?" * len(existing))
            for table in ("messages", "media_index"):
                self._db.execute(
                    f"DELETE FROM {table} WHERE peer = ? AND id IN ({marks})",  # noqa: S608
                    (peer_id, *existing),
                )
            self._refresh_top(peer_id)
            pts = self.logs.next_pts(channel, len(existing))
            update: UpdateDeleteMessages | UpdateDeleteChannelMessages
            if channel is None:
                update = UpdateDeleteMessages(peer_id, tuple(existing), pts, len(existing))
            else:
                update = UpdateDeleteChannelMessages(peer_id, tuple(existing), pts, len(existing))
            self.logs.append(channel, update, date)
        return update

    def read_inbox(
        self, peer_id: int, max_id: int
    ) -> UpdateReadHistoryInbox | UpdateReadChannelInbox | None:
        """This account read the chat up to ``max_id``; ``None`` if that changes nothing.
        A secret chat's read takes the account's pts like any other chat's, so that the
        account's other devices learn it."""
        self._require_dialog(peer_id)
        top_id, read_inbox = self._db.one(
            "SELECT top_id, read_inbox FROM dialogs WHERE peer = ?", (peer_id,)
        ) or (0, 0)
        max_id = min(max_id, top_id)
        if max_id <= read_inbox:
            return None
        channel = self._channel_of(peer_id)
        date = self.now()
        with self.transaction():
            self._db.execute("UPDATE dialogs SET read_inbox = ? WHERE peer = ?", (max_id, peer_id))
            unread = self.unread_count(peer_id, max_id)
            pts = self.logs.next_pts(channel, 1)
            update: UpdateReadHistoryInbox | UpdateReadChannelInbox
            if channel is None:
                update = UpdateReadHistoryInbox(peer_id, max_id, unread, pts, 1)
            else:
                update = UpdateReadChannelInbox(peer_id, max_id, unread, pts, 1)
            self.logs.append(channel, update, date)
        return update

    def read_outbox(self, peer_id: int, max_id: int) -> UpdateReadHistoryOutbox | None:
        """The other side of a private chat or group read our messages up to ``max_id``."""
        self._refuse_secret(peer_id, "marked read by the other side here")
        self._require_dialog(peer_id)
        if self._channel_of(peer_id) is not None:
            raise StoreError("channels have no outbox read marks", ErrorCode.PEER_ID_INVALID)
        top_id, read_outbox = self._db.one(
            "SELECT top_id, read_outbox FROM dialogs WHERE peer = ?", (peer_id,)
        ) or (0, 0)
        max_id = min(max_id, top_id)
        if max_id <= read_outbox:
            return None
        date = self.now()
        with self.transaction():
            self._db.execute("UPDATE dialogs SET read_outbox = ? WHERE peer = ?", (max_id, peer_id))
            update = UpdateReadHistoryOutbox(peer_id, max_id, self.logs.next_pts(None, 1), 1)
            self.logs.append(None, update, date)
        return update

    def leave_channel(self, channel: int) -> UpdateChannel | None:
        """The account is removed from ``channel`` (Telegram's kick): the chat leaves its
        list with its draft, and every request about it is refused with
        ``CHANNEL_PRIVATE`` from now on; ``None`` if it was no channel of the account.
        The channel's posts stay: it goes on for its other members."""
        if peer_kind(channel) is not PeerKind.CHANNEL or self.logs.channel_cursor(channel) is None:
            return None
        date = self.now()
        with self.transaction():
            self._db.execute("DELETE FROM dialogs WHERE peer = ?", (channel,))
            self._db.execute("DELETE FROM drafts WHERE peer = ?", (channel,))
            update = UpdateChannel(channel, self.logs.next_pts(None, 1), 1)
            self.logs.append(None, update, date)
        return update

    def set_notify_settings(self, peer_id: int, muted_until: int) -> UpdateNotifySettings | None:
        """The account muted a chat (0: unmuted); ``None`` if that changes nothing."""
        self._require_dialog(peer_id)
        (current,) = self._db.one("SELECT muted_until FROM dialogs WHERE peer = ?", (peer_id,)) or (
            0,
        )
        if current == muted_until:
            return None
        date = self.now()
        with self.transaction():
            self._db.execute(
                "UPDATE dialogs SET muted_until = ? WHERE peer = ?", (muted_until, peer_id)
            )
            update = UpdateNotifySettings(peer_id, muted_until, self.logs.next_pts(None, 1), 1)
            self.logs.append(None, update, date)
        return update

    def draft(self, peer_id: int) -> DraftMessage | None:
        row = self._db.one("SELECT text, reply_to, date FROM drafts WHERE peer = ?", (peer_id,))
        if row is None:
            return None
        text, reply_to, date = row
        return DraftMessage(text, date, reply_to)

    def save_draft(
        self, peer_id: int, text: str, reply_to: int | None
    ) -> UpdateDraftMessage | None:
        """The account saved a chat's draft (an empty text with no reply clears it);
        ``None`` if that changes nothing."""
        self._require_dialog(peer_id)
        current = self.draft(peer_id)
        empty = not text.strip() and reply_to is None
        if current is None and empty:
            return None
        if current is not None and (current.text, current.reply_to) == (text, reply_to):
            return None
        date = self.now()
        draft = None if empty else DraftMessage(text, date, reply_to)
        with self.transaction():
            if draft is None:
                self._db.execute("DELETE FROM drafts WHERE peer = ?", (peer_id,))
            else:
                self._db.execute(
                    "INSERT OR REPLACE INTO drafts (peer, text, reply_to, date)"
                    " VALUES (?, ?, ?, ?)",
                    (peer_id, text, reply_to, date),
                )
            update = UpdateDraftMessage(peer_id, draft, self.logs.next_pts(None, 1), 1)
            self.logs.append(None, update, date)
        return update

    def set_presence(self, user_id: int, status: PresenceStatus, timestamp: int) -> Presence:
        if peer_kind(user_id) is not PeerKind.USER or self.peer(user_id) is None:
            raise StoreError(f"no user with id {user_id}", ErrorCode.PEER_ID_INVALID)
        date = self.now()
        with self.transaction():
            self._db.execute(
                "UPDATE peers SET status = ?, status_time = ?, status_date = ? WHERE id = ?",
                (str(status), timestamp, date, user_id),
            )
            self.set_meta("date", date)
        presence = Presence(user_id, status, timestamp)
        if self._observer is not None:
            self._observer(UpdateUserStatus(presence))
        return presence

    def rename_peer(self, peer_id: int, name: str) -> tuple[UpdatePeer, int]:
        """Change a peer's name; a seq-ordered update. Returns it and its seq."""
        peer = self.require_peer(peer_id)
        date = self.now()
        with self.transaction():
            self._db.execute(
                "UPDATE peers SET name = ?, changed_date = ? WHERE id = ?", (name, date, peer_id)
            )
            _start, seq = self.advance_seq(1)
            self.set_meta("date", date)
        update = UpdatePeer(Peer(peer.id, name, peer.username, peer.access_hash, peer.flags))
        if self._observer is not None:
            self._observer(update)
        return update, seq

    def advance_seq(self, points: int = 1) -> tuple[int, int]:
        """Take the next ``points`` seq values for one container: (seq_start, seq)."""
        if points < 1:
            raise ValueError("a seq container takes at least one seq point")
        with self.transaction():
            start = self.meta("seq", 0) + 1
            self.set_meta("seq", start + points - 1)
        return start, start + points - 1

    # -- idempotent sending ----------------------------------------------------------

    def sent_messages(self) -> list[tuple[int, int, int]]:
        """Every send stored with its random id: (random id, peer, message id)."""
        return [
            (random_id, peer_id, message_id)
            for random_id, peer_id, message_id in self._db.execute(
                "SELECT random_id, peer, id FROM sent_messages ORDER BY random_id"
            )
        ]

    def sent_before(self, random_id: int) -> tuple[Message, int, int] | None:
        """The message an earlier send with ``random_id`` stored (as it is now, or as it
        was sent if it has been deleted since), with the pts it took and their count."""
        row = self._db.one(
            "SELECT peer, id, pts, pts_count, message FROM sent_messages WHERE random_id = ?",
            (random_id,),
        )
        if row is None:
            return None
        peer_id, message_id, pts, pts_count, original = row
        message = self.message(peer_id, message_id) or Message.from_wire(unpack(original))
        return message, pts, pts_count
