"""The mock server's SQLite schema, and converting its rows to wire records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgpack

from sync.protocol import (
    Media,
    MediaKind,
    Message,
)

__all__ = [
    "JOINED_COLUMNS",
    "MESSAGE_COLUMNS",
    "SCHEMA",
    "media_from_db",
    "media_to_db",
    "message_from_row",
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
    """CREATE TABLE IF NOT EXISTS messages (
        peer INTEGER NOT NULL, id INTEGER NOT NULL, date INTEGER NOT NULL, out INTEGER NOT NULL,
        author INTEGER, text TEXT NOT NULL, media BLOB, reply_to INTEGER, edit_date INTEGER,
        PRIMARY KEY (peer, id)) WITHOUT ROWID""",
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
)
MESSAGE_COLUMNS = "peer, id, date, out, author, text, media, reply_to, edit_date"
JOINED_COLUMNS = ", ".join(f"m.{column}" for column in MESSAGE_COLUMNS.split(", "))


def pack(value: Any) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


def media_to_db(media: Sequence[Media]) -> bytes | None:
    return pack([item.to_wire() for item in media]) if media else None


def media_from_db(data: bytes | None) -> tuple[Media, ...]:
    """Media the server stored itself: trusted, so built without the wire checks."""
    if not data:
        return ()
    return tuple(
        Media(MediaKind(item["kind"]), item["id"], item["size"], item["url"], item["title"])
        for item in unpack(data)
    )


def message_from_row(row: Sequence[Any]) -> Message:
    peer, id_, date, out, author, text, media, reply_to, edit_date = row
    return Message(
        peer, id_, date, bool(out), text, author, media_from_db(media), reply_to, edit_date
    )
