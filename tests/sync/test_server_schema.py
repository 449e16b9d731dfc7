"""The server database's schema version: new files carry it, older ones are brought up
to it, newer ones are refused in one line and left exactly as they were."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from sync.errors import NewerServerDatabaseError, ServerDatabaseError
from sync.server.schema import APPLICATION_ID, SCHEMA_VERSION, open_database
from sync.server.store import ServerStore

NOW = 1_700_000_000


def _pragma(path: Path, name: str) -> int:
    db = apsw.Connection(str(path))
    try:
        ((value,),) = db.execute(f"PRAGMA {name}").fetchall()
        assert isinstance(value, int)
        return value
    finally:
        db.close()


def _set_pragma(path: Path, name: str, value: int) -> None:
    db = apsw.Connection(str(path))
    try:
        db.execute(f"PRAGMA {name} = {value}")
    finally:
        db.close()


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_a_new_database_carries_the_schema_version(tmp_path) -> None:
    path = tmp_path / "server.db"
    ServerStore(path, clock=lambda: NOW).close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION
    assert _pragma(path, "application_id") == APPLICATION_ID


def test_a_database_of_a_newer_schema_is_refused_and_left_unchanged(tmp_path) -> None:
    path = tmp_path / "server.db"
    ServerStore(path, clock=lambda: NOW).close()
    _set_pragma(path, "user_version", SCHEMA_VERSION + 1)
    before = _files(tmp_path)
    with pytest.raises(NewerServerDatabaseError) as info:
        ServerStore(path, clock=lambda: NOW)
    assert isinstance(info.value, ServerDatabaseError)
    assert str(info.value) == (
        f"{path} is a postbox-server database of schema version {SCHEMA_VERSION + 1}, newer"
        f" than this server's {SCHEMA_VERSION}; it was left unchanged: use a newer"
        " postbox-server or pass another --db"
    )
    assert _files(tmp_path) == before


def test_postbox_server_refuses_a_newer_database_in_one_line(tmp_path) -> None:
    path = tmp_path / "server.db"
    ServerStore(path, clock=lambda: NOW).close()
    _set_pragma(path, "user_version", SCHEMA_VERSION + 7)
    before = _files(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "sync.server.cli", "--token", "t", "--peers", "8"]
        + ["--messages", "100", "--db", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"postbox-server: error: {path} is a postbox-server database of schema version"
        f" {SCHEMA_VERSION + 7}, newer than this server's {SCHEMA_VERSION}"
    )
    assert _files(tmp_path) == before


def _older_file(path: Path) -> None:
    """A server database as the first schema wrote it: no ``forward`` column, no
    schema version and no application mark, one message in it."""
    db = open_database(path)
    db.execute("ALTER TABLE messages DROP COLUMN forward")
    db.execute(
        "INSERT INTO messages (peer, id, date, out, author, text) VALUES (5, 1, 10, 0, 5, 'hi')"
    )
    db.execute("PRAGMA user_version = 0")
    db.execute("PRAGMA application_id = 0")
    db.close()


def test_a_database_of_an_older_schema_is_brought_up_to_this_one(tmp_path) -> None:
    path = tmp_path / "server.db"
    _older_file(path)
    db = open_database(path)
    try:
        columns = {row[1] for row in db.execute("PRAGMA table_info(messages)")}
        assert "forward" in columns
        assert db.execute("SELECT peer, id, text, forward FROM messages").fetchall() == [
            (5, 1, "hi", None)
        ]
    finally:
        db.close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION
    assert _pragma(path, "application_id") == APPLICATION_ID
    # And it opens again as it is.
    open_database(path).close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION


def test_a_file_from_before_the_contacts_list_keeps_its_contacts(tmp_path) -> None:
    """Version 1 counted as contacts the people the account had written to in private;
    such a file gets that list once, and from then on the list is its own."""
    path = tmp_path / "server.db"
    db = open_database(path)
    db.execute("DROP TABLE contacts")
    peers = ((5, 0), (6, 0), (7, 2), (8, 8))  # (id, flags): two people, a bot, the account
    for peer_id, flags in peers:
        db.execute(
            "INSERT INTO peers VALUES (?, 'p', NULL, 1, ?, '', NULL, NULL, 0, NULL, 0, 0)",
            (peer_id, flags),
        )
    for peer_id, out in ((5, 1), (6, 0), (7, 1), (8, 1)):
        db.execute(
            "INSERT INTO messages (peer, id, date, out, text) VALUES (?, ?, 10, ?, 'hi')",
            (peer_id, peer_id, out),
        )
    db.execute("PRAGMA user_version = 1")
    db.close()
    db = open_database(path)
    try:
        assert db.execute("SELECT peer FROM contacts").fetchall() == [(5,)]
        db.execute("DELETE FROM contacts")
    finally:
        db.close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION == 2
    db = open_database(path)
    try:
        assert db.execute("SELECT peer FROM contacts").fetchall() == []
    finally:
        db.close()
