"""Files written by older versions open with every row they held, and gain what the
newer schema adds. ``fixtures/schema-1.db`` was written by the code of schema 1 (a
synced account with a message queued offline, see ``fixtures/make_schema_1.py``); every
later version keeps opening it."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import apsw

from postbox import (
    ChatInterfaceState,
    MessageFailure,
    MessageFlags,
    Postbox,
    SynchronizeableDraft,
    Transaction,
)
from postbox.ids import INT32_MAX, MAX_TIMESTAMP
from postbox.schema import SCHEMA_VERSION
from sync.engine import enqueue_send, retry_failed_send

FIXTURES = Path(__file__).parent / "fixtures"
#: Tables whose rows hold a message timestamp, signed before schema 3, unsigned since:
#: in the key (True) or the value, at this offset.
TIMESTAMPS = {
    "t_message_history": (True, 12),
    "t_message_history_tags": (True, 16),
    "t_chat_list": (True, 6),
    "t_message_history_index": (False, 0),
}
STAMP = struct.Struct(">I")


def signed_timestamps(table: str, table_rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """The rows of ``table`` with their timestamps written as schema 1 and 2 wrote them."""
    if table not in TIMESTAMPS:
        return table_rows
    in_key, offset = TIMESTAMPS[table]
    result = []
    for key, value in table_rows:
        assert isinstance(key, bytes) and isinstance(value, bytes)
        data = bytearray(key if in_key else value)
        stamp = STAMP.unpack_from(data, offset)[0]
        if table == "t_chat_list" and stamp == MAX_TIMESTAMP:
            stamp = INT32_MAX  # the top hole sat at the old largest timestamp
        STAMP.pack_into(data, offset, stamp + 2**31)
        result.append((bytes(data), value) if in_key else (key, bytes(data)))
    return sorted(result)


def rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, read straight from SQLite."""
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%'"
            )
        ]
        return {name: list(connection.execute(f'SELECT * FROM "{name}"')) for name in names}
    finally:
        connection.close()


def back_to_schema_1(path: Path, statement: str) -> None:
    """Mark the file as schema 1 again, after ``statement`` undid what version 2 adds."""
    back_to_schema(path, 1, statement)


def back_to_schema(path: Path, version: int, statement: str) -> None:
    """Mark the file as schema ``version`` again, after ``statement`` undid what the next
    version adds and the timestamps are signed again, as version 4 found them."""
    current = rows(path)
    connection = apsw.Connection(str(path))
    try:
        with connection:
            connection.execute(f"PRAGMA user_version = {version}")
            connection.execute(statement)
            for table in TIMESTAMPS:
                connection.execute(f'DELETE FROM "{table}"')
                connection.executemany(
                    f'INSERT INTO "{table}" VALUES (?, ?)',
                    signed_timestamps(table, current[table]),
                )
    finally:
        connection.close()


def user_version(path: Path) -> int:
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        (version,) = connection.execute("PRAGMA user_version").fetchall()[0]
        assert isinstance(version, int)
        return version
    finally:
        connection.close()


def test_a_schema_1_file_opens_with_all_its_rows_and_takes_the_new_tables(tmp_path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "schema-1.db", path)
    assert user_version(path) == 1
    before = rows(path)
    assert sum(map(len, before.values())) > 150  # a real account, not an empty file
    with Postbox(path) as postbox:
        unsent = postbox.run(lambda tx: tx.get_unsent_message_ids())
        assert len(unsent) == 1  # the message queued before the upgrade still waits
        peer = unsent[0].peer_id
        state = ChatInterfaceState(SynchronizeableDraft("after the upgrade", None, 1))
        postbox.run(lambda tx: tx.set_chat_interface_state(peer, state))
    assert user_version(path) == SCHEMA_VERSION
    after = rows(path)
    for table, table_rows in before.items():
        if table != "t_metadata":  # the transaction state version moves with the commit
            assert signed_timestamps(table, after[table]) == table_rows, table
    with Postbox(path) as postbox:
        assert postbox.run(lambda tx: tx.get_chat_interface_state(peer)) == state


def test_a_message_a_schema_1_file_holds_as_failed_is_listed_failed(tmp_path) -> None:
    """Schema 1 kept a failed send as a flag on the message alone: after the upgrade it
    is in the failed-messages table, its reason unknown, and can be sent again."""
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "schema-1.db", path)
    with Postbox(path) as postbox:
        unsent = postbox.run(lambda tx: tx.get_unsent_message_ids())[0]
    # What the schema-1 code wrote for a send it gave up on: the flag, no table row.
    back_to_schema_1(path, 'DROP TABLE "t_peer_chat_interface_state"')
    with Postbox(path) as postbox:

        def fail_as_schema_1_did(tx: Transaction) -> None:
            message = tx.get_message(unsent)
            assert message is not None
            flags = int(MessageFlags.FAILED)
            tx.update_message(unsent, message.to_store()._replace(flags=flags))

        postbox.run(fail_as_schema_1_did)
    back_to_schema_1(path, 'DELETE FROM "t_message_history_failed"')
    with Postbox(path) as postbox:
        failed = postbox.run(lambda tx: tx.get_failed_messages(unsent.peer_id))
        assert failed == [(unsent, MessageFailure())]
        assert postbox.run(lambda tx: retry_failed_send(tx, unsent))
        assert postbox.run(lambda tx: tx.get_unsent_message_ids()) == [unsent]


def test_a_schema_2_file_takes_the_channels_to_poll(tmp_path) -> None:
    """Schema 3 stores the channels whose own difference is still to be fetched; a file
    of schema 2 (as the schema-1 fixture becomes) opens with none and can store some."""
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "schema-1.db", path)
    with Postbox(path) as postbox:
        channel = next(iter(postbox.run(lambda tx: tx.get_all_peers())))
    back_to_schema(path, 2, 'DROP TABLE "t_channels_to_poll"')
    with Postbox(path) as postbox:
        assert postbox.run(lambda tx: tx.get_channels_to_poll()) == {}
        postbox.run(lambda tx: tx.add_channel_to_poll(channel, 42))
    assert user_version(path) == SCHEMA_VERSION
    with Postbox(path) as postbox:
        assert postbox.run(lambda tx: tx.get_channels_to_poll()) == {channel: 42}
        postbox.run(lambda tx: tx.remove_channel_to_poll(channel))
        assert postbox.run(lambda tx: tx.get_channels_to_poll()) == {}


def test_a_schema_1_file_keeps_its_messages_dates_and_order_with_unsigned_timestamps(
    tmp_path,
) -> None:
    """Version 4 writes timestamps unsigned (through 2106): the old file's messages keep
    their dates, and a message dated past 2038 sorts after them."""
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "schema-1.db", path)
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        signed = [
            STAMP.unpack_from(key, 12)[0] - 2**31
            for (key,) in connection.execute('SELECT key FROM "t_message_history"')
        ]
    finally:
        connection.close()
    with Postbox(path) as postbox:
        peer = postbox.run(lambda tx: tx.get_unsent_message_ids())[0].peer_id
        dates = postbox.run(lambda tx: [m.timestamp for m in tx.get_messages(peer, 0, limit=1000)])
        assert dates and set(dates) <= set(signed) and min(signed) > 0
        late = postbox.run(lambda tx: enqueue_send(tx, peer, "later", timestamp=2**31 + 60))
        newest = postbox.run(
            lambda tx: tx.get_messages(peer, late.namespace, limit=1, newest_first=True)
        )
        assert newest[0].id == late and newest[0].timestamp == 2**31 + 60
