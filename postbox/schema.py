"""The schema version of a postbox file, and the migrations between versions.

``SCHEMA_VERSION`` is stored in SQLite's ``user_version``. Opening a file with an
older version runs ``MIGRATIONS[v]`` for each version ``v`` up to the current
one, in the same transaction; a newer version is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from postbox.errors import SchemaVersionError
from postbox.tables.message_history_failed_table import record_flagged_failures
from postbox.value_box import KeyType, ValueBox, ValueBoxTable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate"]

SCHEMA_VERSION: Final = 3

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


#: ``MIGRATIONS[v]`` upgrades a file from version ``v`` to ``v + 1``.
MIGRATIONS: dict[int, Migration] = {1: _to_version_2, 2: _to_version_3}


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
