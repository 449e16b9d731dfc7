"""Files written by older versions open with every row they held, and gain what the
newer schema adds. ``fixtures/schema-1.db`` was written by the code of schema 1 (a
synced account with a message queued offline, see ``fixtures/make_schema_1.py``); every
later version keeps opening it."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw

from postbox import ChatInterfaceState, Postbox, SynchronizeableDraft
from postbox.schema import SCHEMA_VERSION

FIXTURES = Path(__file__).parent / "fixtures"


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
            assert after[table] == table_rows, table
    with Postbox(path) as postbox:
        assert postbox.run(lambda tx: tx.get_chat_interface_state(peer)) == state
