"""``postbox-chat sync`` and ``postbox-chat verify`` from the command line."""

from __future__ import annotations

import json

import pytest

from client.cli import main
from postbox import Postbox
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

TOKEN = "cli-token"


@pytest.fixture
def server():
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=8)) as running:
        yield running


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_sync_until_idle_then_verify_agrees(server, tmp_path, capsys) -> None:
    db = str(tmp_path / "client.db")
    address = f"127.0.0.1:{server.port}"
    busiest = server.call(lambda s: max((n, p) for p, n in s.store.chat_sizes())[1])
    status, out, _err = run(
        capsys, "sync", "--server", address, "--token", TOKEN, "--db", db,
        "--until-idle", "--quiet", "--open", str(busiest),
    )  # fmt: skip
    assert status == 0
    summary = json.loads(out)
    assert summary["cursor"]["pts"] == server.call(lambda s: s.store.state().pts)
    assert summary["counters"]["dialogs_filled"] == 12
    assert summary["pending_outgoing"] == 0
    assert summary["converged_and_idle"] is True and summary["problem"] is None
    # As the run ended: the only process syncing the file was its master.
    assert summary["role"] == "master" and summary["connection"] == "connected"
    status, out, _err = run(capsys, "verify", "--server", address, "--token", TOKEN, "--db", db)
    assert status == 0, out
    assert json.loads(out)["ok"] is True


def test_verify_reports_each_divergence_and_exits_1(server, tmp_path, capsys) -> None:
    db = str(tmp_path / "client.db")
    address = f"127.0.0.1:{server.port}"
    run(
        capsys, "sync", "--server", address, "--token", TOKEN, "--db", db, "--until-idle", "--quiet"
    )
    server.call(lambda s: s.service.generate(30))  # the client is not running now
    status, out, _err = run(capsys, "verify", "--server", address, "--token", TOKEN, "--db", db)
    assert status == 1
    lines = out.splitlines()
    assert any(line.startswith("cursor account: pts/qts/seq") for line in lines)
    summary = json.loads(out[out.index("{") :])
    assert summary["ok"] is False and summary["divergences"] >= 1


def test_a_refused_token_is_a_clear_error(server, tmp_path, capsys) -> None:
    status, _out, err = run(
        capsys, "sync", "--server", f"127.0.0.1:{server.port}", "--token", "wrong",
        "--db", str(tmp_path / "c.db"), "--until-idle", "--quiet",
    )  # fmt: skip
    assert status == 1
    assert "refused the token" in err
    assert err.count("\n") == 1, err  # one line


@pytest.mark.parametrize("until_idle", [True, False])
def test_an_unreachable_server_ends_sync_with_its_cause(tmp_path, capsys, until_idle) -> None:
    argv = ["sync", "--server", "127.0.0.1:1", "--token", "t", "--db", str(tmp_path / "c.db")]
    argv += ["--quiet", "--connect-timeout", "0.5"] + (["--until-idle"] if until_idle else [])
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert err.startswith("postbox-chat: error: could not connect to 127.0.0.1:1 in 0.5 s")
    assert "cannot reach the server" in err and err.count("\n") == 1
    summary = json.loads(out)
    assert summary["converged_and_idle"] is False
    assert summary["counters"]["connections"] == 0
    assert summary["counters"]["connection_attempts"] >= 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sync", "--server", "localhost", "--token", "t", "--db", "x"], "is not HOST:PORT"),
        (["sync", "--server", "h:99999", "--token", "t", "--db", "x"], "is not HOST:PORT"),
        (["sync", "--server", "h:1", "--db", "x"], "--token"),
        (["sync", "--server", "h:1", "--token", "t", "--db", "x", "--open", "abc"], "peer id"),
        (["sync", "--server", "h:1", "--token", "t", "--db", "x", "--timeout", "-1"], "seconds"),
    ],
)
def test_bad_arguments_are_refused(argv, message, capsys) -> None:
    status, _out, err = run(capsys, *argv)
    assert status == 2
    assert message in err


def test_verify_needs_an_existing_database(tmp_path, capsys) -> None:
    status, _out, err = run(
        capsys, "verify", "--server", "127.0.0.1:1", "--token", "t",
        "--db", str(tmp_path / "missing.db"),
    )  # fmt: skip
    assert status == 2
    assert "does not exist" in err


def test_verify_reports_an_unreachable_server(tmp_path, capsys) -> None:
    db = tmp_path / "client.db"
    Postbox(db).close()
    status, _out, err = run(
        capsys, "verify", "--server", "127.0.0.1:1", "--token", "t", "--db", str(db)
    )
    assert status == 2
    assert "cannot reach" in err


def test_the_token_can_come_from_the_environment(server, tmp_path, capsys, monkeypatch) -> None:
    """POSTBOX_TOKEN keeps the token out of the process list; without it and without
    --token the command says what is missing."""
    db = str(tmp_path / "client.db")
    address = f"127.0.0.1:{server.port}"
    monkeypatch.delenv("POSTBOX_TOKEN", raising=False)
    status, _out, err = run(capsys, "sync", "--server", address, "--db", db, "--until-idle")
    assert status == 2 and "POSTBOX_TOKEN" in err
    monkeypatch.setenv("POSTBOX_TOKEN", TOKEN)
    status, out, _err = run(
        capsys, "sync", "--server", address, "--db", db, "--until-idle", "--quiet"
    )
    assert status == 0, out
    status, out, _err = run(capsys, "verify", "--server", address, "--db", db)
    assert status == 0 and json.loads(out)["ok"] is True
