"""``postbox-chat sync``: a database stays its account's, ``--timeout`` bounds connecting,
a token the protocol cannot carry is refused at once, and the summary tells the role
the engine had."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterator

import pytest

from client.cli import main
from postbox import MasterClientLock, MessageFlags, PeerId, PeerNamespace, Postbox
from sync.engine import enqueue_send
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

TOKEN = "binding-token"
QUEUED = "queued by the owner"


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=8)) as running:
        yield running


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def contact_of(server: EmbeddedServer) -> tuple[int, int, str]:
    """(the owner, a user with a private chat with it, that user's token)."""

    def find(s) -> tuple[int, int, str]:
        accounts = s.service.accounts
        people = {user for user, _ in accounts.users()[1:]}
        chats = [peer for peer, _ in s.service.store.chat_sizes()]
        contact = next(p for p in chats if p in people and p >> 56 == PeerNamespace.USER)
        return s.service.store.self_id, contact, accounts.token_for(contact)

    return server.call(find)


def sent_texts(server: EmbeddedServer, account: int, peer: int) -> list[str]:
    return server.call(
        lambda s: [m.text for m in s.service.accounts.box(account).recent_messages(peer, 50)]
    )


def test_another_accounts_token_is_refused_in_one_line_and_nothing_is_sent(
    server, tmp_path, capsys
) -> None:
    db = tmp_path / "client.db"
    address = f"127.0.0.1:{server.port}"
    owner, contact, contact_token = contact_of(server)
    sync = ("sync", "--server", address, "--db", str(db), "--until-idle", "--quiet")
    assert run(capsys, *sync, "--token", TOKEN)[0] == 0
    with Postbox(db) as postbox:
        local_id = postbox.run(
            lambda tx: enqueue_send(tx, PeerId(contact), QUEUED, timestamp=int(time.time()))
        )
        cursor = postbox.run(lambda tx: tx.get_state())
    assert cursor is not None

    status, out, err = run(capsys, *sync, "--token", contact_token)
    assert status == 1
    assert err.count("\n") == 1, err
    assert f"belongs to account {owner}" in err and f"as account {contact}" in err
    assert "--start-over" in err and contact_token not in err
    summary = json.loads(out)
    assert summary["converged_and_idle"] is False and summary["counters"]["sent"] == 0
    assert summary["cursor"]["pts"] == cursor.pts
    with Postbox(db) as postbox:
        assert postbox.run(lambda tx: tx.get_preference("account.peer_id")) == owner
        assert postbox.run(lambda tx: tx.get_state()) == cursor
        pending = postbox.run(lambda tx: tx.get_message(local_id))
        assert pending is not None and pending.flags & MessageFlags.UNSENT
    assert QUEUED not in sent_texts(server, contact, owner)
    assert QUEUED not in sent_texts(server, owner, contact)

    # Starting over empties the database: the contact's own chats, nothing of the owner's.
    status, out, err = run(capsys, *sync, "--token", contact_token, "--start-over")
    assert status == 0, err
    with Postbox(db) as postbox:
        assert postbox.run(lambda tx: tx.get_preference("account.peer_id")) == contact
        assert postbox.run(lambda tx: tx.get_message(local_id)) is None
    assert QUEUED not in sent_texts(server, contact, owner)
    assert QUEUED not in sent_texts(server, owner, contact)
    status, out, _err = run(
        capsys, "verify", "--server", address, "--token", contact_token, "--db", str(db)
    )
    assert status == 0, out


def test_start_over_waits_for_no_other_process_and_keeps_a_foreign_file(
    server, tmp_path, capsys
) -> None:
    db = tmp_path / "client.db"
    address = f"127.0.0.1:{server.port}"
    sync = ("sync", "--server", address, "--token", TOKEN, "--db", str(db), "--quiet")
    assert run(capsys, *sync, "--until-idle")[0] == 0
    size = db.stat().st_size
    lock = MasterClientLock(db)
    assert lock.try_acquire()  # a window syncs it
    try:
        status, _out, err = run(capsys, *sync, "--start-over", "--until-idle")
    finally:
        lock.release()
    assert status == 1 and err.count("\n") == 1
    assert "another process syncs" in err
    assert db.stat().st_size == size
    foreign = tmp_path / "foreign.db"  # another application's SQLite file
    connection = sqlite3.connect(foreign)
    connection.execute("create table notes (text)")
    connection.commit()
    connection.close()
    before = foreign.read_bytes()
    status, _out, err = run(
        capsys, "sync", "--server", address, "--token", TOKEN, "--db", str(foreign),
        "--quiet", "--start-over",
    )  # fmt: skip
    assert status == 1 and err.count("\n") == 1
    assert foreign.read_bytes() == before


def test_timeout_bounds_connecting_to_a_server_that_never_answers(tmp_path, capsys) -> None:
    """A port that accepts the connection and never answers: ``--timeout`` ends the wait
    (before, the 30 s connect timeout did, whatever --timeout said)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        status, out, err = run(
            capsys, "sync", "--server", f"127.0.0.1:{port}", "--token", "t",
            "--db", str(tmp_path / "c.db"), "--quiet", "--timeout", "0.5",
        )  # fmt: skip
    assert status == 1 and err.count("\n") == 1
    assert err.startswith(f"postbox-chat: error: could not connect to 127.0.0.1:{port} in 0.5 s")
    assert json.loads(out)["counters"]["connections"] == 0


@pytest.mark.parametrize(
    ("token", "says"),
    [
        ("x" * 300, "the token must be at most 256 characters, not 300"),
        ("abc\ndef", "control characters"),
        ("abc\udcff", "not text"),  # an undecodable byte of the command line
    ],
)
def test_a_malformed_token_is_refused_at_once(tmp_path, capsys, token, says) -> None:
    db = tmp_path / "c.db"
    status, out, err = run(
        capsys, "sync", "--server", "127.0.0.1:1", "--token", token, "--db", str(db), "--quiet"
    )
    assert status == 2 and out == ""
    assert err.startswith("postbox-chat: error: the token") and says in err
    assert err.count("\n") == 1
    assert token not in err
    assert not db.exists()


def test_the_summary_tells_the_role_the_engine_had(server, tmp_path, capsys) -> None:
    """A sync refused by the server was the database's master all the same; one that
    waited for another process all along was its standby."""
    db = tmp_path / "client.db"
    address = f"127.0.0.1:{server.port}"
    status, out, _err = run(
        capsys, "sync", "--server", address, "--token", "wrong", "--db", str(db), "--quiet"
    )
    assert status == 1 and json.loads(out)["role"] == "master"
    Postbox(db).close()
    lock = MasterClientLock(db)
    assert lock.try_acquire()
    try:
        status, out, _err = run(
            capsys, "sync", "--server", address, "--token", TOKEN, "--db", str(db),
            "--quiet", "--connect-timeout", "0.3",
        )  # fmt: skip
    finally:
        lock.release()
    assert status == 1 and json.loads(out)["role"] == "standby"
