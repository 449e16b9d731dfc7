"""Bad input to the three command lines: one readable line, an exit status that tells
the truth (2 a wrong command line, 1 a file or environment that cannot serve), and the
files given left byte for byte as they were, with nothing created beside them."""

from __future__ import annotations

import json
import random
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest

from client.cli import main as chat_main
from dataset import read_manifest
from postbox import Postbox
from spark_tools.cli import main as seed_main
from sync.server.cli import main as server_main
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

#: The files every case runs beside (``place``); a case names them in its argv.
FOLDER, EMPTY, FOREIGN, NOISE, NOTES = "folder", "empty.db", "foreign.db", "noise.db", "notes.txt"
#: A name longer than any file system takes.
LONG = "n" * 300
#: No server listens on port 1 of the loopback.
NOWHERE = "127.0.0.1:1"


@dataclass(frozen=True)
class Case:
    """``argv`` to one command, the exit status and a piece of its last stderr line."""

    command: str
    argv: tuple[str, ...]
    status: int
    says: str
    #: Words the line must not hold (a misleading hint).
    never: tuple[str, ...] = ()

    def __str__(self) -> str:
        shown = ("LONG" if arg == LONG else arg for arg in self.argv)
        return f"{self.command} {' '.join(shown)}"


MAINS: dict[str, Callable[[list[str]], int]] = {
    "postbox-chat": chat_main,
    "postbox-server": server_main,
    "postbox-seed": seed_main,
}


def chat(*argv: str, status: int, says: str, never: tuple[str, ...] = ()) -> Case:
    return Case("postbox-chat", argv, status, says, never)


def server(*argv: str, status: int, says: str) -> Case:
    return Case("postbox-server", argv, status, says)


def seed(*argv: str, status: int, says: str) -> Case:
    return Case("postbox-seed", argv, status, says)


SYNC = ("sync", "--server", NOWHERE, "--token", "t", "--quiet", "--connect-timeout", "5")
VERIFY = ("verify", "--server", NOWHERE, "--token", "t")
RUN = ("run", "--server", NOWHERE, "--token", "t")
SEND = ("send", "--to", "1")
SEED = ("--out", "ds", "--local", "--quiet", "--messages", "10")
EMPTY_FILE = "is an empty file, not a postbox database (left as it was"
NOT_SQLITE = "is not a SQLite file, so not a postbox database (left as it was)"
FOREIGN_FILE = f"{FOREIGN} is a SQLite database but not a postbox database"
DIRECTORY = f"{FOLDER} is a directory, not a database file"
NO_MANIFEST = f"{FOLDER} is a directory without manifest.json, not a dataset"
TOO_LONG = "File name too long"
NO_CHATS = "argument --chats: the number of chats must be within 1..100,000, not 0"

CASES = [
    # send: the database must exist and be a postbox database
    chat(*SEND, "hi", "--db", FOLDER, status=2, says=DIRECTORY, never=("does not exist",)),
    chat(*SEND, "hi", "--db", EMPTY, status=1, says=f"{EMPTY} {EMPTY_FILE})"),
    chat(*SEND, "hi", "--db", FOREIGN, status=1, says=FOREIGN_FILE),
    chat(*SEND, "hi", "--db", NOISE, status=1, says=f"{NOISE} {NOT_SQLITE}"),
    chat(*SEND, "hi", "--db", "missing.db", status=2, says="missing.db does not exist"),
    chat(*SEND, "hi", "--db", LONG, status=2, says=f"cannot be used ({TOO_LONG})"),
    chat(*SEND, "  ", "--db", EMPTY, status=2, says="a message needs some text"),
    chat("send", "--db", EMPTY, "--to", "1", status=2, says="required: TEXT"),
    # verify: 2 whenever it cannot compare, the path named once
    chat(*VERIFY, "--db", FOLDER, status=2, says=DIRECTORY, never=("does not exist",)),
    chat(*VERIFY, "--db", EMPTY, status=2, says=f"{EMPTY} {EMPTY_FILE})"),
    chat(*VERIFY, "--db", FOREIGN, status=2, says=f"error: {FOREIGN_FILE}"),
    chat(*VERIFY, "--db", NOISE, status=2, says=f"error: {NOISE} {NOT_SQLITE}"),
    chat(*VERIFY, "--db", "missing.db", status=2, says="missing.db does not exist"),
    # sync: creates a database where there is none, never in an empty or foreign file
    chat(*SYNC, "--db", FOLDER, status=2, says=DIRECTORY, never=("cannot open",)),
    chat(*SYNC, "--db", EMPTY, status=1, says=f"{EMPTY_FILE}; delete it to start a new"),
    chat(*SYNC, "--db", FOREIGN, status=1, says=FOREIGN_FILE),
    chat(*SYNC, "--db", NOISE, status=1, says=NOT_SQLITE),
    chat(*SYNC, "--db", "nowhere/c.db", status=2, says="the folder nowhere does not exist"),
    chat(*SYNC, "--db", f"{NOTES}/c.db", status=2, says="cannot be used (Not a directory)"),
    chat(*SYNC[:-1], "0", "--db", "c.db", status=2, says="must be more than 0 and at most"),
    chat(*SYNC, "--db", "c.db", "--timeout", "-1", status=2, says="--timeout: must be more"),
    chat(*SYNC, "--db", "c.db", "--open", "abc", status=2, says="'abc' is not a peer id"),
    chat("sync", "--server", "here", "--db", "c.db", status=2, says="'here' is not HOST:PORT"),
    chat("sync", "--server", NOWHERE, "--db", "c.db", status=2, says="give the account's token"),
    # run and demo: refused before a server or a window starts
    chat(*RUN, "--db", FOLDER, status=2, says=DIRECTORY),
    chat(*RUN, "--db", EMPTY, status=1, says=EMPTY_FILE),
    chat(*RUN, "--db", FOREIGN, status=1, says=FOREIGN_FILE),
    chat(*RUN, "--db", NOISE, status=1, says=NOT_SQLITE),
    chat("demo", "--db", FOREIGN, status=1, says=FOREIGN_FILE),
    chat("demo", "--db", EMPTY, status=1, says=EMPTY_FILE),
    chat("demo", "--db", FOLDER, status=2, says=DIRECTORY),
    chat("demo", "--chats", "0", status=2, says=NO_CHATS, never=("peers",)),
    chat("demo", "--messages", "x", status=2, says="argument --messages: 'x' is not a whole"),
    chat("demo", "--seed", "-1", status=2, says="argument --seed: the seed must be within 0.."),
    chat("demo", "--dataset", "missing", status=2, says="--dataset: missing does not exist"),
    chat("demo", "--dataset", FOLDER, status=2, says=NO_MANIFEST),
    chat("demo", "--dataset", NOTES, status=2, says=f"{NOTES} is a file, not a dataset"),
    chat("demo", "--dataset", LONG, status=2, says=TOO_LONG),
    chat("demo", "--faults", "reorder=1.5", status=2, says="'1.5' is not a whole number"),
    chat("demo", "--faults", "drop=2", status=2, says="drop must be a probability within 0..1"),
    chat("demo", "--devices", "9", status=2, says="'9' is not a number of windows within 1..4"),
    chat("demo", "--latency", "soon", status=2, says="'soon' is not a time such as 800ms"),
    # storage-demo
    chat("storage-demo", "--db", FOLDER, status=2, says=DIRECTORY, never=("--reuse",)),
    chat("storage-demo", "--db", EMPTY, status=1, says=EMPTY_FILE, never=("--reuse",)),
    chat("storage-demo", "--db", EMPTY, "--reuse", status=1, says=EMPTY_FILE),
    chat("storage-demo", "--db", FOREIGN, "--reuse", status=1, says=FOREIGN_FILE),
    chat("storage-demo", "--db", FOREIGN, status=2, says=f"{FOREIGN} already exists: choose"),
    chat("storage-demo", "--db", "nowhere/x.db", status=2, says="folder nowhere does not exist"),
    chat("storage-demo", "--days", "0", status=2, says="the number of days must be within 1.."),
    chat("storage-demo", "--reuse", status=2, says="--reuse needs --db PATH"),
    chat(status=2, says="the following arguments are required: COMMAND"),
    # postbox-server
    server("--dataset", "missing", status=2, says="argument --dataset: missing does not exist"),
    server("--dataset", FOLDER, status=2, says=NO_MANIFEST),
    server("--dataset", NOTES, status=2, says=f"{NOTES} is a file, not a dataset directory"),
    server("--dataset", LONG, status=2, says=TOO_LONG),
    server("--messages", "-1", status=2, says="argument --messages: -1 is outside 0..10000000"),
    server("--seed", "-1", status=2, says="-1 is outside 0..9223372036854775807"),
    server("--port", "70000", status=2, says="argument --port: 70000 is outside 0..65535"),
    server("--port", "x", status=2, says="argument --port: 'x' is not a whole number"),
    server("--drop", "2", status=2, says="argument --drop: 2 is outside 0..1"),
    server("--db", FOLDER, status=2, says=f"argument --db: {FOLDER} is a directory, not a file"),
    server("--db", "nowhere/s.db", status=2, says="argument --db: the folder nowhere does not"),
    server("--db", LONG, status=2, says=TOO_LONG),
    server("--accounts-file", FOLDER, status=2, says=f"{FOLDER} is a directory, not a file"),
    server("--accounts-file", f"{NOTES}/a.tsv", status=2, says=f"{NOTES} is not a folder"),
    server("--token-file", FOLDER, status=2, says="cannot read it (Is a directory)"),
    server("--token-file", "missing", status=2, says="cannot read it (No such file or directory)"),
    server("--token-file", NOISE, status=2, says=f"--token-file {NOISE}: not a text file"),
    # postbox-seed
    seed(*SEED, "--users", "x", status=2, says="argument --users: 'x' is not a whole number"),
    seed(*SEED, "--users", "0", status=2, says="argument --users: 0 is outside 1..100,000"),
    seed(*SEED[:-1], "-5", status=2, says="argument --messages: -5 is outside 0.."),
    seed(*SEED, "--days", "3", "--offline-days", "3", status=2, says="must be less than --days"),
    seed(*SEED, "--now", "5", status=2, says="argument --now: 5 is outside"),
    seed(*SEED, "--master", "bogus", status=2, says="'bogus' is not a Spark master"),
    seed(*SEED, "--server-db", FOLDER, status=1, says=f"{FOLDER}: is a directory, not a database"),
    seed(*SEED, "--client-db", FOREIGN, status=1, says="exists; refusing to overwrite a database"),
    seed(*SEED, "--client-db", LONG, status=1, says=TOO_LONG),
    seed("--out", NOTES, *SEED[2:], status=1, says="is not a plain directory"),
]


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a folder, an empty file, another application's SQLite
    database, random bytes and a text file: what a user may pass by mistake."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSTBOX_TOKEN", raising=False)
    monkeypatch.delenv("POSTBOX_SERVER_TOKEN", raising=False)
    (tmp_path / FOLDER).mkdir()
    (tmp_path / EMPTY).write_bytes(b"")
    connection = apsw.Connection(str(tmp_path / FOREIGN))
    connection.execute("CREATE TABLE notes (text)")
    connection.execute("INSERT INTO notes VALUES ('mine')")
    connection.close()
    (tmp_path / NOISE).write_bytes(random.Random(25).randbytes(5_000))
    (tmp_path / NOTES).write_text("shopping: milk\n", encoding="utf-8")
    return tmp_path


def contents(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (``None`` for a directory)."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_bad_input_is_one_true_line_and_leaves_the_files_as_they_were(
    case: Case, place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = contents(place)

    status = MAINS[case.command](list(case.argv))

    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines, "no message"
    line = lines[-1]
    assert status == case.status, err
    assert case.says in line, err
    assert line.startswith(f"{case.command}") and "error: " in line
    if "usage:" not in err:  # argparse prints its usage first; anything else one line
        assert len(lines) == 1, err
    for word in case.never:
        assert word not in line
    flags = re.findall(r"--[a-z][a-z-]*", line)
    assert len(flags) == len(set(flags)), f"a flag named twice: {line}"
    for name in (FOLDER, EMPTY, FOREIGN, NOISE, NOTES):
        assert line.count(name) <= 1, f"{name} named twice: {line}"
    assert contents(place) == before


# -- sync never connected --------------------------------------------------------------


def test_a_sync_that_never_connected_leaves_no_database_behind(place, capsys) -> None:
    before = contents(place)
    argv = ["sync", "--server", NOWHERE, "--token", "t", "--db", "s1.db", "--quiet"]
    status = chat_main([*argv, "--connect-timeout", "0.5"])
    captured = capsys.readouterr()
    assert status == 1
    assert "could not connect to 127.0.0.1:1" in captured.err
    assert json.loads(captured.out)["counters"]["connections"] == 0
    assert contents(place) == before  # neither s1.db nor s1.db.master


def test_a_sync_refused_by_the_server_leaves_no_database_behind(place, capsys) -> None:
    before = contents(place)
    with EmbeddedServer(ServerConfig(token="right", peers=2, messages=10)) as running:
        argv = ["sync", "--server", f"127.0.0.1:{running.port}", "--token", "wrong"]
        status = chat_main([*argv, "--db", "s1.db", "--quiet", "--until-idle"])
    assert status == 1
    assert "refused the token" in capsys.readouterr().err
    assert contents(place) == before


def test_a_database_that_was_there_stays_when_sync_cannot_connect(place, capsys) -> None:
    db = place / "kept.db"
    Postbox(db).close()
    argv = ["sync", "--server", NOWHERE, "--token", "t", "--db", str(db), "--quiet"]
    assert chat_main([*argv, "--connect-timeout", "0.5"]) == 1
    capsys.readouterr()
    assert db.is_file()
    Postbox(db).close()  # still a postbox database


# -- what is not a bad input but read like one -------------------------------------------


def test_the_seed_says_why_it_wrote_fewer_messages_than_asked(place, capsys) -> None:
    assert seed_main(["--out", "ds", "--local", "--quiet", "--messages", "100"]) == 0
    line = capsys.readouterr().err.strip()
    written = sum(part.rows for part in read_manifest(place / "ds").files["messages"])
    assert line.startswith(f"postbox-seed: wrote {written} messages in ")
    assert written < 100  # a few of the messages sent were deleted since
    assert line.endswith(f"(100 sent, {100 - written} of them deleted since)")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of"),
        (["--port", "{busy}"], "cannot listen on 127.0.0.1:{busy}: the port is in use"),
    ],
)
def test_the_server_says_why_it_cannot_listen(place, capsys, argv, says) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        argv = [arg.replace("{busy}", port) for arg in argv]
        status = server_main([*argv, "--token", "t", "--peers", "1", "--messages", "0"])
    err = capsys.readouterr().err
    assert status == 1
    assert says.replace("{busy}", port) in err.strip().splitlines()[-1]
    assert "Errno" not in err
