"""``postbox-server``: flags, errors, a real process, and serving a dataset directory."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dataset import generate_dataset, write_dataset
from sync.connection import ServerConnection
from sync.protocol import Auth, GetDialogs, GetHistory, GetState, PeerKind, RpcError, peer_kind
from sync.server.cli import TOKEN_ENVIRONMENT, TokenSource, parse_args, parse_config
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer


def test_flags_become_a_config(tmp_path) -> None:
    config, verbose = parse_config(
        ["--port", "7001", "--token", "s3", "--db", str(tmp_path / "s.db"), "--seed", "5"]
        + ["--rate", "2.5", "--drop", "0.1", "--dup", "0.2", "--reorder", "4", "--delay", "0.3"]
        + ["--disconnect-every", "50", "--too-long", "0.01", "--channel-too-long", "0.02", "-v"]
    )
    assert verbose
    assert (config.port, config.token, config.seed, config.rate) == (7001, "s3", 5, 2.5)
    assert config.db == tmp_path / "s.db"
    assert config.faults == FaultConfig(0.1, 0.2, 4, 0.3, 50, 0.01, 0.02)


def test_answer_fault_flags_become_a_config() -> None:
    config, _verbose = parse_config(
        ["--drop-response", "0.1", "--delay-response", "0.5", "--cut-response", "0.02"]
    )
    assert config.faults == FaultConfig(drop_response=0.1, delay_response=0.5, cut_response=0.02)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--drop", "1.5"], "--drop: 1.5 is outside 0..1"),
        (["--drop-response", "2"], "--drop-response: 2 is outside 0..1"),
        (["--delay-response", "soon"], "--delay-response: 'soon' is not a number"),
        (["--cut-response", "-1"], "--cut-response: -1 is outside 0..1"),
        (["--port", "http"], "--port: 'http' is not a whole number"),
        (["--port", "70000"], "--port: 70000 is outside 0..65535"),
        (["--reorder", "-1"], "--reorder: -1 is outside"),
        (["--peers", "0"], "--peers: 0 is outside"),
        (["--token", ""], "the token must not be empty"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_flags_are_refused_with_a_clear_message(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_config(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_directory_without_a_manifest_is_refused(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        parse_config(["--dataset", str(tmp_path)])
    assert "is a directory without manifest.json, not a dataset" in capsys.readouterr().err


def test_help_describes_every_flag(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_config(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--port", "--token", "--db", "--dataset", "--seed", "--rate", "--drop"):
        assert flag in out
    for flag in ("--dup", "--reorder", "--delay", "--disconnect-every", "--too-long"):
        assert flag in out


async def _history_of(port: int, token: str) -> tuple[int, list[int]]:
    connection = await ServerConnection.open("127.0.0.1", port)
    try:
        await connection.call(Auth(token))
        dialogs = await connection.call(GetDialogs(limit=100))
        peer = dialogs.dialogs[0].peer
        page = await connection.call(GetHistory(peer, limit=50))
        return peer, [m.id for m in page.messages]
    finally:
        await connection.close()


async def _logged_in_as(port: int, token: str) -> int:
    connection = await ServerConnection.open("127.0.0.1", port)
    try:
        authorization = await connection.call(Auth(token))
        return int(authorization.user.id)
    finally:
        await connection.close()


def _start(*argv: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """A ``postbox-server`` process (with -v: every log line) and its first line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sync.server.cli", "--peers", "20", "--messages", "400", "-v"]
        + list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "listening on 127.0.0.1:" in line, line
    return process, line


def _port(line: str) -> int:
    return int(line.split("127.0.0.1:")[1].split()[0])


def _stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "stopped" in err
    return out, err


def test_a_real_server_process_serves_and_stops_on_sigterm(tmp_path) -> None:
    token = "a-flag-token-5c1e"
    process, line = _start("--token", token, "--db", str(tmp_path / "server.db"))
    try:
        assert line.rstrip().endswith("(token from --token)"), line
        peer, ids = asyncio.run(_history_of(_port(line), token))
        assert ids
    finally:
        out, err = _stop(process)
    assert token not in line + out + err


def test_without_a_token_the_server_makes_one_and_prints_only_its_file() -> None:
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_ENVIRONMENT}
    process, line = _start(env=environment)
    try:
        path = Path(line.split("the token is in ")[1].rstrip().rstrip(")"))
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.parent.stat().st_mode & 0o777 == 0o700
        token = path.read_text(encoding="utf-8").strip()
        assert len(token) >= 32
        _peer, ids = asyncio.run(_history_of(_port(line), token))
        assert ids
    finally:
        out, err = _stop(process)
    assert token not in line + out + err
    assert not path.exists()  # removed when the server stopped
    assert not path.parent.exists()


def test_a_token_file_and_the_environment_keep_the_token_off_every_output(tmp_path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("file-token-77b2\nsecond line ignored\n", encoding="utf-8")
    token_file.chmod(0o600)
    environment = {**os.environ, TOKEN_ENVIRONMENT: "env-token-91d0"}
    for argv, token, source in (
        (("--token-file", str(token_file)), "file-token-77b2", "--token-file"),
        ((), "env-token-91d0", TOKEN_ENVIRONMENT),
    ):
        process, line = _start(*argv, env=environment)
        try:
            assert line.rstrip().endswith(f"(token from {source})"), line
            assert asyncio.run(_history_of(_port(line), token))[1]
        finally:
            out, err = _stop(process)
        assert token not in line + out + err
        assert "warning" not in err


def test_a_token_file_is_read_from_its_first_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(TOKEN_ENVIRONMENT, "from-the-environment")
    token_file = tmp_path / "token"
    token_file.write_text("  s3cret  \r\nmore\n", encoding="utf-8")
    token_file.chmod(0o600)
    command = parse_args(["--token-file", str(token_file)])
    assert (command.config.token, command.token_source) == ("s3cret", TokenSource.FILE)
    assert command.warnings == ()
    # An explicit flag wins over the environment, which wins over making one.
    assert parse_args(["--token", "flag"]).config.token == "flag"
    command = parse_args([])
    assert (command.config.token, command.token_source) == (
        "from-the-environment",
        TokenSource.ENVIRONMENT,
    )
    monkeypatch.delenv(TOKEN_ENVIRONMENT)
    made, again = parse_args([]), parse_args([])
    assert made.token_source is TokenSource.GENERATED
    assert made.config.token != again.config.token


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o666])
def test_a_token_file_others_can_read_gets_a_warning(tmp_path, mode) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n", encoding="utf-8")
    token_file.chmod(mode)
    (warning,) = parse_args(["--token-file", str(token_file)]).warnings
    assert warning == (
        f"{token_file} can be read by other users (mode {mode:04o}); make it private:"
        f" chmod 600 {token_file}"
    )
    assert "s3cret" not in warning


def test_the_warning_about_a_readable_token_file_is_printed(tmp_path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("readable-token-3a3f\n", encoding="utf-8")
    token_file.chmod(0o644)
    process, _line = _start("--token-file", str(token_file))
    _out, err = _stop(process)
    assert f"postbox-server: warning: {token_file} can be read by other users" in err
    assert "readable-token-3a3f" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it (No such file or directory)"),
        ("", "its first line holds no token"),
        ("   \nsecond\n", "its first line holds no token"),
        ("x" * 300 + "\n", "the token must be at most 256 characters"),
    ],
)
def test_a_token_file_that_cannot_serve_is_refused_in_one_line(
    tmp_path, capsys, content, message
) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        token_file.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        parse_args(["--token-file", str(token_file)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err.splitlines()[-1]


def test_a_token_file_and_a_token_flag_together_are_refused(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--token", "a", "--token-file", str(tmp_path / "token")])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_empty_token_in_the_environment_is_refused(monkeypatch, capsys) -> None:
    monkeypatch.setenv(TOKEN_ENVIRONMENT, "  ")
    with pytest.raises(SystemExit) as exited:
        parse_args([])
    assert exited.value.code == 2
    assert f"{TOKEN_ENVIRONMENT} is set but empty" in capsys.readouterr().err


def test_a_dataset_directory_is_served_as_generated(tmp_path) -> None:
    dataset = generate_dataset(21, 25, 1_500, 20)
    write_dataset(dataset, tmp_path / "data", rows_per_part=300)
    now = dataset.now
    with EmbeddedServer(
        ServerConfig(token="t", dataset=tmp_path / "data", clock=lambda: now)
    ) as server:

        async def check() -> None:
            connection = await ServerConnection.open("127.0.0.1", server.port)
            try:
                await connection.call(Auth("t"))
                for peer in dataset.peers:
                    expected = sorted(
                        (m for m in dataset.messages if m.peer_id == peer.id),
                        key=lambda m: -(m.id or 0),
                    )[:100]
                    page = await connection.call(GetHistory(int(peer.id), limit=100))
                    got = [(m.id, m.date, m.text, m.out) for m in page.messages]
                    assert got == [(m.id, m.timestamp, m.text, not m.flags & 1) for m in expected]
                state = await connection.call(GetState())
                assert state.pts == 1
                with pytest.raises(RpcError):
                    await connection.call(GetHistory((PeerKind.USER << 56) | 1))
            finally:
                await connection.close()

        asyncio.run(check())
    assert any(peer_kind(int(p.id)) is PeerKind.CHANNEL for p in dataset.peers)


def _server(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sync.server.cli", "--token", "t", "--peers", "8",
         "--messages", "100", *argv],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_another_applications_database_is_refused_and_left_unchanged(tmp_path) -> None:
    import apsw

    notes = tmp_path / "notes.db"
    db = apsw.Connection(str(notes))
    db.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a table name we use too
    db.execute("INSERT INTO meta VALUES ('owner', 'someone else')")
    db.close()
    before = notes.read_bytes()
    result = _server("--db", str(notes))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"postbox-server: error: {notes} is a SQLite database but not a postbox-server "
        "database; it was left unchanged: pass another --db"
    ]
    assert notes.read_bytes() == before
    assert not (tmp_path / "notes.db-wal").exists()


def test_a_file_that_is_not_a_database_is_refused_in_one_line(tmp_path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not SQLite at all " * 100)
    before = garbage.read_bytes()
    result = _server("--db", str(garbage))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"postbox-server: error: {garbage} is not a database or is damaged")
    assert garbage.read_bytes() == before


def test_a_new_server_database_is_private_and_marked_as_ours(tmp_path) -> None:
    import apsw

    from sync.server.schema import APPLICATION_ID
    from sync.server.store import ServerStore

    path = tmp_path / "server.db"
    ServerStore(path, clock=lambda: 1_700_000_000).close()
    assert path.stat().st_mode & 0o777 == 0o600
    db = apsw.Connection(str(path))
    assert db.execute("PRAGMA application_id").fetchall() == [(APPLICATION_ID,)]
    db.close()
    ServerStore(path, clock=lambda: 1_700_000_000).close()  # and opens again


def test_the_accounts_file_lists_tokens_that_log_in_and_never_shows_them(tmp_path) -> None:
    accounts = tmp_path / "accounts.tsv"
    environment = {**os.environ, TOKEN_ENVIRONMENT: "owner-token-5a1e"}
    process, line = _start("--accounts-file", str(accounts), env=environment)
    try:
        rows = [row.split("\t") for row in accounts.read_text(encoding="utf-8").splitlines()]
        assert accounts.stat().st_mode & 0o077 == 0
        assert rows[0][1] == "owner-token-5a1e" and len(rows) > 5
        user, token, _name = rows[3]
        assert asyncio.run(_logged_in_as(_port(line), token)) == int(user)
    finally:
        out, err = _stop(process)
    for _user, token, _name in rows:
        assert token not in line + out + err


def test_an_accounts_file_in_a_missing_folder_is_one_line_and_exit_2(tmp_path) -> None:
    """Refused with the flags, before the dataset loads (writing it later could still
    fail, with exit 1)."""
    environment = {**os.environ, TOKEN_ENVIRONMENT: "owner-token-5a1e"}
    target = tmp_path / "missing" / "accounts.tsv"
    process = subprocess.run(
        [sys.executable, "-m", "sync.server.cli", "--peers", "10", "--messages", "50"]
        + ["--accounts-file", str(target)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert process.returncode == 2
    assert process.stderr.strip().splitlines()[-1] == (
        f"postbox-server: error: argument --accounts-file: the folder {target.parent} does not"
        " exist"
    )
    assert "Traceback" not in process.stderr
