"""A client file with a damaged page is refused before anything is written into it.

A clean close leaves no sign of damage done afterwards (by the disk, a copy cut short,
another program), so every command that opens a file looks over its pages first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from client.cli import main
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.test_damaged_values import damage_state_cursor, stored_cursor_bytes

TOKEN = "damage-token"


@pytest.fixture(scope="module")
def server():
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=8)) as running:
        yield running


@pytest.fixture(scope="module")
def synced(server, tmp_path_factory) -> Path:
    """A file synced to the server and closed cleanly; the server has news for it since."""
    db = tmp_path_factory.mktemp("synced") / "client.db"
    assert main([*_sync(server, db)]) == 0
    server.call(lambda s: s.service.generate(30))
    return Path(db)


def _sync(server: EmbeddedServer, db: Path) -> list[str]:
    argv = ["sync", "--server", f"127.0.0.1:{server.port}", "--token", TOKEN, "--db", str(db)]
    return [*argv, "--until-idle", "--quiet", "--timeout", "20"]


def _files(db: Path) -> dict[str, bytes]:
    """The database and its SQLite companions, as they are on disk."""
    found = {}
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        if path.exists():
            found[path.name] = path.read_bytes()
    return found


def damage_middle_page(db: Path) -> int:
    """Overwrite the page in the middle of the file with garbage; returns its number."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        ((page_size,),) = connection.execute("PRAGMA page_size")
        ((pages,),) = connection.execute("PRAGMA page_count")
    finally:
        connection.close()
    page = int(pages) // 2
    with db.open("r+b") as file:
        file.seek((page - 1) * page_size)
        file.write(b"\xa5" * page_size)
    return page


@pytest.mark.parametrize(
    ("command", "status"),
    [("sync", 1), ("verify", 2), ("send", 1), ("run", 1)],
)
def test_a_damaged_page_is_refused_in_one_line_and_the_file_left_as_it_was(
    server, synced, tmp_path, capsys, command, status
) -> None:
    db = tmp_path / "client.db"
    shutil.copyfile(synced, db)
    page = damage_middle_page(db)
    before = _files(db)
    address = ("--server", f"127.0.0.1:{server.port}", "--token", TOKEN)
    argv = {
        "sync": _sync(server, db),
        "verify": ["verify", *address, "--db", str(db)],
        "send": ["send", "--db", str(db), "--to", "1", "hello"],
        "run": ["run", *address, "--db", str(db)],
    }[command]
    capsys.readouterr()
    assert main(argv) == status
    captured = capsys.readouterr()
    assert captured.err.startswith(f"postbox-chat: error: {db} is damaged"), captured.err
    assert captured.err.count("\n") == 1, captured.err
    assert captured.out == ""
    assert _files(db) == before, f"page {page} was damaged and the file changed"


def test_the_same_file_undamaged_syncs(server, synced, tmp_path) -> None:
    db = tmp_path / "client.db"
    shutil.copyfile(synced, db)
    assert main(_sync(server, db)) == 0


def test_a_damaged_value_ends_sync_with_one_line_and_is_not_written_over(
    server, synced, tmp_path, capsys
) -> None:
    """``quick_check`` passes (the pages are sound), the stored cursor does not decode:
    ``sync`` stops at once with exit 1 and the way out, without waiting for --timeout."""
    db = tmp_path / "client.db"
    shutil.copyfile(synced, db)
    garbage = damage_state_cursor(db)
    tables = _rows_outside_metadata(db)
    capsys.readouterr()
    assert main(_sync(server, db)) == 1
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line]
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"postbox-chat: error: {db} is damaged"), lines[0]
    assert "restore it from a copy" in lines[0] and "sync --start-over" in lines[0]
    assert '"connection": "database damaged"' in captured.out
    assert stored_cursor_bytes(db) == garbage
    assert _rows_outside_metadata(db) == tables


def _rows_outside_metadata(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but the metadata (where the master election writes)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 't\\_%'"
                " ESCAPE '\\' AND name != 't_metadata'"
            )
        ]
        return {name: list(connection.execute(f"SELECT * FROM {name}")) for name in names}
    finally:
        connection.close()
