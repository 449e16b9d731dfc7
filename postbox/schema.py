"""The schema version of a postbox file, and the migrations between versions.

``SCHEMA_VERSION`` is stored in SQLite's ``user_version``. Opening a file with an
older version runs ``MIGRATIONS[v]`` for each version ``v`` up to the current
one, in the same transaction; a newer version is refused.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Final

from postbox.chat_list import ChatListEntryType
from postbox.errors import SchemaVersionError
from postbox.ids import INT32_MAX, MAX_TIMESTAMP, MIN_TIMESTAMP
from postbox.tables.message_history_failed_table import record_flagged_failures
from postbox.value_box import KeyType, ValueBox, ValueBoxTable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate"]

SCHEMA_VERSION: Final = 4

Migration = Callable[[ValueBox], None]


def _add_chat_interface_states(box: ValueBox) -> None:
    """Version 2: each chat's interface state (draft, scroll position, selection)."""
    box.ensure_table(ValueBoxTable("peer_chat_interface_state", KeyType.BINARY))


def _to_version_2(box: ValueBox) -> None:
    """Version 2: the chats' interface states, and a row in the failed-messages table for
    each message stored failed (its reason unknown: the server's was not kept)."""
    _add_chat_interface_states(box)
    record_flagged_failures(box)


def _to_version_3(box: ValueBox) -> None:
    """Version 3: the channels whose own difference is still to be fetched, stored with
    the cursor instead of kept in memory (an older file starts with none)."""
    box.ensure_table(ValueBoxTable("channels_to_poll", KeyType.INT64))


_STAMP = struct.Struct(">I")
_SIGN = 2**31
#: Where each table keeps a message timestamp: in the key or the value, at this offset.
_TIMESTAMPS = (
    ("message_history", True, 12),  # peer(8) namespace(4) timestamp(4) id(4)
    ("message_history_tags", True, 16),  # peer(8) tag(4) namespace(4) timestamp(4) id(4)
    ("chat_list", True, 6),  # group(4) pinning(2) timestamp(4) ...
    ("message_history_index", False, 0),  # value: timestamp(4) flags(1) text rowid(8)
)
_HOLE = bytes((ChatListEntryType.HOLE,))


def _to_version_4(box: ValueBox) -> None:
    """Version 4: message timestamps in keys and the id index unsigned (through 2106)
    instead of sign-flipped (through 2038). A chat-list hole at the old largest
    timestamp (the top of a list not loaded yet) moves to the new one; a timestamp
    before 1970, which no message has, becomes 0."""
    for name, in_key, offset in _TIMESTAMPS:
        table = ValueBoxTable(name, KeyType.BINARY)
        box.ensure_table(table)
        rows = box.range_list(table, b"", b"\xff" * 64)
        if not rows:
            continue
        moved: list[tuple[bytes, bytes]] = []
        for key, value in rows:
            assert isinstance(key, bytes)
            data = bytearray(key if in_key else value)
            signed = _STAMP.unpack_from(data, offset)[0] - _SIGN
            stamp = max(MIN_TIMESTAMP, signed)
            if name == "chat_list" and signed == INT32_MAX and data.endswith(_HOLE):
                stamp = MAX_TIMESTAMP
            _STAMP.pack_into(data, offset, stamp)
            moved.append((bytes(data), value) if in_key else (key, bytes(data)))
        box.execute_raw(f"DELETE FROM {table.sql_name}")
        box.set_many(table, sorted(moved))


#: ``MIGRATIONS[v]`` upgrades a file from version ``v`` to ``v + 1``.
MIGRATIONS: dict[int, Migration] = {1: _to_version_2, 2: _to_version_3, 3: _to_version_4}


def migrate(
    box: ValueBox,
    *,
    target: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] = MIGRATIONS,
) -> int:
    """Bring ``box`` to ``target``; returns the version the file had. Call inside a write."""
    stored = box.user_version
    if stored > target:
        raise SchemaVersionError(
            f"{box.path or 'the database'} was written by a newer postbox (schema {stored}, "
            f"this one knows {target}); update the app or open another file"
        )
    if stored == 0:
        box.set_user_version(target)
        return stored
    for version in range(stored, target):
        step = migrations.get(version)
        if step is None:
            raise SchemaVersionError(f"no migration from schema {version} to {version + 1}")
        step(box)
        box.set_user_version(version + 1)
    return stored
