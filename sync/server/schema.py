"""The mock server's SQLite schema, and converting its rows to wire records.

A server database is marked by ``PRAGMA application_id`` and carries its schema version
in ``PRAGMA user_version``: a file of an older version (0: from before versions were
kept) gains what was added since; a newer one, or another application's file, is
refused before anything in it changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import msgpack

from sync.errors import NewerServerDatabaseError, NotAServerDatabaseError
from sync.protocol import (
    ForwardHeader,
    Glyph,
    GlyphShape,
    Media,
    MediaKind,
    Message,
)

__all__ = [
    "ADDED_COLUMNS",
    "CONTACTS_FROM_HISTORY",
    "DATASET_COLUMNS",
    "JOINED_COLUMNS",
    "MESSAGE_COLUMNS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "media_from_db",
    "database_digest",
    "forward_from_db",
    "forward_to_db",
    "media_to_db",
    "message_from_row",
    "open_database",
    "pack",
    "unpack",
]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS peers (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL, username TEXT, access_hash INTEGER NOT NULL,
        flags INTEGER NOT NULL, about TEXT NOT NULL, members BLOB, participants INTEGER,
        changed_date INTEGER NOT NULL, status TEXT, status_time INTEGER NOT NULL,
        status_date INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS dialogs (
        peer INTEGER PRIMARY KEY, top_id INTEGER NOT NULL, top_date INTEGER NOT NULL,
        read_inbox INTEGER NOT NULL, read_outbox INTEGER NOT NULL, pinned INTEGER,
        folder INTEGER NOT NULL, muted_until INTEGER NOT NULL,
        pts INTEGER, next_id INTEGER, log_start INTEGER, event_date INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS dialogs_by_top ON dialogs (top_date, top_id, peer)",
    """CREATE TABLE IF NOT EXISTS drafts (
        peer INTEGER PRIMARY KEY, text TEXT NOT NULL, reply_to INTEGER,
        date INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS messages (
        peer INTEGER NOT NULL, id INTEGER NOT NULL, date INTEGER NOT NULL, out INTEGER NOT NULL,
        author INTEGER, text TEXT NOT NULL, media BLOB, reply_to INTEGER, edit_date INTEGER,
        forward BLOB, PRIMARY KEY (peer, id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS media_index (
        peer INTEGER NOT NULL, kind TEXT NOT NULL, id INTEGER NOT NULL,
        PRIMARY KEY (peer, kind, id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS update_log (
        pts INTEGER PRIMARY KEY, pts_count INTEGER NOT NULL, date INTEGER NOT NULL,
        body BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS channel_log (
        channel INTEGER NOT NULL, pts INTEGER NOT NULL, pts_count INTEGER NOT NULL,
        date INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (channel, pts)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS qts_log (
        qts INTEGER PRIMARY KEY, date INTEGER NOT NULL, body BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sent_messages (
        random_id INTEGER PRIMARY KEY, peer INTEGER NOT NULL, id INTEGER NOT NULL,
        pts INTEGER NOT NULL, pts_count INTEGER NOT NULL, message BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS links (
        peer INTEGER NOT NULL, id INTEGER NOT NULL, link INTEGER NOT NULL,
        PRIMARY KEY (peer, id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS links_by_link ON links (link)",
    "CREATE INDEX IF NOT EXISTS links_in_order ON links (peer, link, id)",
    """CREATE TABLE IF NOT EXISTS devices (
        device INTEGER PRIMARY KEY, name TEXT NOT NULL, last_active INTEGER NOT NULL,
        revoked INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS sticker_sets (
        id INTEGER PRIMARY KEY, position INTEGER NOT NULL, access_hash INTEGER NOT NULL,
        title TEXT NOT NULL, short_name TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sticker_documents (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL, set_id INTEGER NOT NULL,
        position INTEGER NOT NULL, emoji TEXT NOT NULL, shape TEXT NOT NULL,
        colour INTEGER NOT NULL)""",
    # The account's contacts: an explicit list, as on Telegram (a message sent or deleted
    # changes nothing in it).
    "CREATE TABLE IF NOT EXISTS contacts (peer INTEGER PRIMARY KEY)",
)
#: The columns a seeded dataset fills (it has no forwarded messages).
DATASET_COLUMNS = "peer, id, date, out, author, text, media, reply_to, edit_date"
MESSAGE_COLUMNS = f"{DATASET_COLUMNS}, forward"
#: Columns added since the first schema, with their type: added to an older file on open.
ADDED_COLUMNS = (("messages", "forward", "BLOB"),)
#: The schema version this server writes (``PRAGMA user_version``); it reads any older one.
#: 2: the ``contacts`` list, filled from the history of a file of version 1 or 0.
SCHEMA_VERSION = 2
#: Fills the contacts list the way a dataset's import does (and a file from before the
#: list, whose contacts were the rule itself): every user, neither a bot (flag 2) nor the
#: account's own (flag 8), that the account has written to in private.
CONTACTS_FROM_HISTORY = """INSERT OR IGNORE INTO contacts (peer)
    SELECT DISTINCT m.peer FROM messages m JOIN peers p ON p.id = m.peer
    WHERE m.out = 1 AND m.peer >> 56 = 0 AND p.flags & 10 = 0"""
JOINED_COLUMNS = ", ".join(f"m.{column}" for column in MESSAGE_COLUMNS.split(", "))


#: Marks a file as a postbox-server database ("PBSV").
APPLICATION_ID = 0x50425356
#: Tables a server database from before the mark has (so it is claimed, not refused).
_OUR_TABLES = frozenset({"meta", "peers", "dialogs", "messages", "update_log"})

#: Every table, with the order that makes its rows comparable.
_TABLE_ORDER = (
    ("meta", "key"),
    ("peers", "id"),
    ("dialogs", "peer"),
    ("messages", "peer, id"),
    ("media_index", "peer, kind, id"),
    ("update_log", "pts"),
    ("channel_log", "channel, pts"),
    ("qts_log", "qts"),
    ("sent_messages", "random_id"),
    ("links", "peer, id"),
    ("devices", "device"),
    ("sticker_sets", "id"),
    ("sticker_documents", "id"),
    ("contacts", "peer"),
)


def open_database(path: str | Path) -> apsw.Connection:
    """The server database at ``path`` in WAL mode, with every table and column of this
    schema (an older file gains the columns added since, and its contacts list). A new
    file is readable by its owner only. Another application's SQLite file
    (``NotAServerDatabaseError``) and a file of a newer schema version
    (``NewerServerDatabaseError``) are refused before anything in them changes; apsw's
    other errors pass through."""
    if str(path) != ":memory:":
        _create_private(Path(path))
    db = apsw.Connection(str(path))
    try:
        db.setbusytimeout(2_000)
        claim = _check_owner(db, path)
        version = _check_version(db, path)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        with db:
            for statement in SCHEMA:
                db.execute(statement)
            for table, column, kind in ADDED_COLUMNS:
                present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            if version < 2:  # the contacts an older file's account had by the old rule
                db.execute(CONTACTS_FROM_HISTORY)
            if claim:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            if version != SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.close()
        raise
    return db


def _check_owner(db: apsw.Connection, path: str | Path) -> bool:
    """Whether the file is to be marked as ours: it is new, or a server database from
    before the mark. Anything else is refused."""
    ((application_id,),) = db.execute("PRAGMA application_id").fetchall()
    if application_id == APPLICATION_ID:
        return False
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_schema")}
    if application_id == 0 and (not tables or tables >= _OUR_TABLES):
        return True
    raise NotAServerDatabaseError(
        f"{path} is a SQLite database but not a postbox-server database; it was left "
        "unchanged: pass another --db"
    )


def _check_version(db: apsw.Connection, path: str | Path) -> int:
    """The file's schema version, if this server can use it (it is not newer)."""
    ((version,),) = db.execute("PRAGMA user_version").fetchall()
    assert isinstance(version, int)  # SQLite gives this pragma as an integer
    if version > SCHEMA_VERSION:
        raise NewerServerDatabaseError(
            f"{path} is a postbox-server database of schema version {version}, newer than"
            f" this server's {SCHEMA_VERSION}; it was left unchanged: use a newer"
            " postbox-server or pass another --db"
        )
    return version


def _create_private(path: Path) -> None:
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def database_digest(db: apsw.Connection) -> str:
    """A hash of every row of every table: equal digests, equal truth."""
    hasher = hashlib.sha256()
    for table, order in _TABLE_ORDER:
        for row in db.execute(f"SELECT * FROM {table} ORDER BY {order}"):  # noqa: S608
            hasher.update(repr(row).encode())
    return hasher.hexdigest()


def pack(value: Any) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


def _media_map(item: Media) -> dict[str, Any]:
    """A media item as stored: its wire map, without the glyph of one that has none (as
    a dataset's rows store it)."""
    stored = item.to_wire()
    if stored["glyph"] is None:
        del stored["glyph"]
    return stored


def media_to_db(media: Sequence[Media]) -> bytes | None:
    return pack([_media_map(item) for item in media]) if media else None


def media_from_db(data: bytes | None) -> tuple[Media, ...]:
    """Media the server stored itself: trusted, so built without the wire checks."""
    if not data:
        return ()
    return tuple(
        Media(
            MediaKind(item["kind"]),
            item["id"],
            item["size"],
            item["url"],
            item["title"],
            _glyph_from_db(item.get("glyph")),
        )
        for item in unpack(data)
    )


def _glyph_from_db(stored: dict[str, Any] | None) -> Glyph | None:
    if stored is None:
        return None
    return Glyph(stored["emoji"], GlyphShape(stored["shape"]), stored["colour"], stored["set_id"])


def forward_to_db(header: ForwardHeader | None) -> bytes | None:
    if header is None:
        return None
    return pack((header.author, header.date, header.channel, header.channel_post))


def forward_from_db(data: bytes | None) -> ForwardHeader | None:
    return None if data is None else ForwardHeader(*unpack(data))


def message_from_row(row: Sequence[Any]) -> Message:
    peer, id_, date, out, author, text, media, reply_to, edit_date, forward = row
    return Message(
        peer,
        id_,
        date,
        bool(out),
        text,
        author,
        media_from_db(media),
        reply_to,
        edit_date,
        forward_from_db(forward),
    )
