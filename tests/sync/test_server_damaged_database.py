"""A damaged server database: refused in one line at start, or one request failed while
serving.

As a server whose storage fails, ``postbox-server`` answers the request that hit a
damaged page with an ``INTERNAL`` error and one log line and goes on serving the others
(the client tries again later); damage met while starting ends it with one line and
exit status 1, the file left as it was.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from sync.connection import ServerConnection
from sync.protocol import Auth, ErrorCode, GetDialogs, GetHistory, GetState, MediaKind, RpcError
from sync.server.cli import main
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

TOKEN = "damage-token"


def _config(db: Path) -> ServerConfig:
    return ServerConfig(token=TOKEN, peers=30, messages=3000, seed=3, db=db)


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A server database written and closed by the server."""
    db = tmp_path_factory.mktemp("server") / "server.db"
    with EmbeddedServer(_config(db)):
        pass
    return db


def _pages(db: Path, table: str) -> list[int]:
    """The leaf pages of ``table``, in file order."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = connection.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (table,),
        ).fetchall()
    finally:
        connection.close()
    return [page for (page,) in rows if isinstance(page, int)]


def _damage_page(db: Path, page: int) -> None:
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        ((page_size,),) = connection.execute("PRAGMA page_size")
    finally:
        connection.close()
    with db.open("r+b") as file:
        file.seek((page - 1) * page_size)
        file.write(b"\xa5" * page_size)


def _copy(source: Path, target: Path) -> Path:
    target.write_bytes(source.read_bytes())
    return target


def test_a_damaged_page_read_at_start_ends_the_server_in_one_line(
    intact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    db = _copy(intact, tmp_path / "server.db")
    messages = _pages(db, "messages")
    _damage_page(db, messages[len(messages) // 2])  # every chat's size is counted at start
    before = db.read_bytes()
    monkeypatch.setenv("POSTBOX_SERVER_TOKEN", TOKEN)
    status = main(["--db", str(db), "--port", "0"])
    err = capsys.readouterr().err
    assert status == 1
    assert err == (
        f"postbox-server: error: {db} is not a database or is damaged "
        "(database disk image is malformed); it was left unchanged\n"
    )
    assert db.read_bytes() == before


def test_a_request_that_meets_a_damaged_page_fails_alone(
    intact: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = _copy(intact, tmp_path / "server.db")
    media = _pages(db, "media_index")  # read only by a shared-media page
    _damage_page(db, media[len(media) // 2])
    caplog.set_level(logging.INFO, logger="postbox.server")
    with EmbeddedServer(_config(db)) as server:
        refused, answered = asyncio.run(_ask_every_chat(server.port))
    assert refused, "no shared-media page met the damaged page"
    assert answered  # the other chats, and every plain request, were still served
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == len(refused)
    for record in failures:
        assert record.exc_info is None  # one line, no traceback
        assert "getHistory failed" in record.getMessage()
        assert "is damaged" in record.getMessage()


def _crash_after_writing(db: Path) -> None:
    """Another process writes to the file and dies without closing it: its log stays."""
    script = (
        "import os, sys, apsw\n"
        "db = apsw.Connection(sys.argv[1])\n"
        "db.execute(\"INSERT OR REPLACE INTO meta (key, value) VALUES ('crashed', 1)\")\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, timeout=60)


def test_after_a_crash_damage_anywhere_is_found_before_serving(
    intact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    db = _copy(intact, tmp_path / "server.db")
    _crash_after_writing(db)
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 0
    media = _pages(db, "media_index")  # not read at start: found by the check alone
    _damage_page(db, media[len(media) // 2])
    before = (db.read_bytes(), wal.read_bytes())
    monkeypatch.setenv("POSTBOX_SERVER_TOKEN", TOKEN)
    status = main(["--db", str(db), "--port", "0"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"postbox-server: error: {db} is damaged ("), err
    assert err.count("\n") == 1
    assert (db.read_bytes(), wal.read_bytes()) == before


async def _ask_every_chat(port: int) -> tuple[list[int], list[int]]:
    """Each chat's photos: the chats refused with ``INTERNAL``, and those answered."""
    connection = await ServerConnection.open("127.0.0.1", port)
    refused, answered = [], []
    try:
        await connection.call(Auth(TOKEN))
        dialogs = await connection.call(GetDialogs(limit=100))
        for dialog in dialogs.dialogs:
            try:
                await connection.call(GetHistory(dialog.peer, filter=MediaKind.PHOTO))
            except RpcError as error:
                assert error.code is ErrorCode.INTERNAL
                refused.append(dialog.peer)
            else:
                answered.append(dialog.peer)
            await connection.call(GetState())  # the connection still serves
    finally:
        await connection.close()
    return refused, answered
