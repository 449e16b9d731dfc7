"""``postbox-chat verify``: one line per divergence, the JSON summary, and exit status 0
(converged), 1 (diverged) or 2 (could not compare, with one line on stderr)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.cli import main
from postbox import Peer, PeerId, Postbox
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.verify_helpers import mirror

TOKEN = "verify-cli-token"
LINE = re.compile(r"^[a-z_]+ (account|peer \d+): .+$")


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=6, messages=80, seed=3)) as running:
        yield running


@pytest.fixture(scope="module")
def template(server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("verify-cli") / "mirror.db"
    mirror(server, TOKEN, db)
    return db


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "client.db"
    shutil.copyfile(template, copy)
    return copy


def verify_cli(
    capsys: pytest.CaptureFixture[str], port: int, db: Path, token: str = TOKEN
) -> tuple[int, str, str]:
    status = main(["verify", "--server", f"127.0.0.1:{port}", "--token", token, "--db", str(db)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_converged_database_exits_0(server, db, capsys) -> None:
    status, out, err = verify_cli(capsys, server.port, db)
    assert (status, err) == (0, "")
    summary = json.loads(out)
    assert summary["ok"] is True and summary["divergences"] == 0


def test_divergences_are_one_line_each_then_the_summary_and_exit_1(server, db, capsys) -> None:
    peer = server.call(lambda s: s.store.chat_sizes()[0][0])
    postbox = Postbox(db)
    try:
        postbox.run(lambda tx: tx.update_peers([Peer(PeerId(peer), "Renamed", "renamed")]))
    finally:
        postbox.close()
    status, out, err = verify_cli(capsys, server.port, db)
    assert (status, err) == (1, "")
    head, _, tail = out.partition("{")
    lines = head.splitlines()
    record = server.call(lambda s: s.store.peer(peer))
    assert lines == [
        f"peers peer {peer}: name 'Renamed' != server {record.name!r}",
        f"peers peer {peer}: username 'renamed' != server {record.username!r}",
    ]
    assert all(LINE.match(line) for line in lines)
    summary = json.loads("{" + tail)
    assert summary["ok"] is False
    assert summary["by_category"]["peers"] == 2 == summary["divergences"]


def _cannot_compare(status: int, out: str, err: str, message: str) -> None:
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("postbox-chat: error: ")
    assert message in err


def test_a_missing_database_exits_2(server, tmp_path, capsys) -> None:
    _cannot_compare(*verify_cli(capsys, server.port, tmp_path / "nope.db"), "does not exist")
    assert not (tmp_path / "nope.db").exists()


def test_a_corrupt_database_exits_2(server, tmp_path, capsys) -> None:
    db = tmp_path / "garbage.db"
    db.write_bytes(b"this is not a database, " * 400)
    _cannot_compare(*verify_cli(capsys, server.port, db), str(db))


def test_an_unreachable_server_exits_2(server, db, capsys) -> None:
    port = server.port
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=1, messages=0)) as other:
        closed = other.port
    assert closed != port
    _cannot_compare(*verify_cli(capsys, closed, db), "cannot reach")


def test_a_refused_token_exits_2(server, db, capsys) -> None:
    _cannot_compare(*verify_cli(capsys, server.port, db, token="wrong"), "refused the token")
