"""A second process on one database: exactly one process (the master client) talks to
the server; the others show what it commits, queue what the user does for it to send,
and take over when it exits or is killed. Against the real server on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from client.account import Account
from client.cli import main
from postbox import (
    CombinedView,
    HistoryAnchor,
    MessageFlags,
    MessageHistoryViewKey,
    MessageId,
    MessageNamespace,
    PeerId,
    Postbox,
    PostboxClosedError,
)
from sync.engine import SyncEngine
from sync.protocol import PeerKind
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.client.account_helpers import wait_until
from tests.client.test_message_actions import (
    TOKEN,
    chat_of,
    held,
    synced,
    verify_agrees,
)
from tests.sync.engine_helpers import FAST

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30.0


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=12, messages=300, seed=11)) as running:
        yield running


def count_on_server(server: EmbeddedServer, peer: int, text: str) -> int:
    messages = server.call(lambda s: s.service.store.recent_messages(peer, 10**6))
    return sum(message.text == text for message in messages)


def engine_of(account: Account) -> SyncEngine:
    engine = account.worker.engine
    assert engine is not None
    return engine


def wait_role(account: Account, role: str) -> None:
    """Wait until the account's engine has looked and holds ``role``."""
    engine = engine_of(account)

    def settled() -> bool:
        election = engine.election
        assert election is not None
        standing = engine.connection_state == "standby" or election.is_master
        return standing and election.role.value == role

    account.worker.call(lambda e: e.wait_for(settled, WAIT))


def on_server(server: EmbeddedServer, account: Account, peer: int, text: str) -> None:
    """Wait (on the account's changes, which include other processes' commits) until the
    server stores ``text`` in ``peer``."""
    wait_until(account, lambda: count_on_server(server, peer, text) > 0)


def send_process(db: Path, peer: str, text: str) -> subprocess.CompletedProcess[str]:
    """``postbox-chat send`` as a process of its own."""
    command = [sys.executable, "-m", "client.cli", "send", "--db", str(db), "--to", peer, text]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


def test_a_message_sent_by_another_process_shows_at_once_and_reaches_the_server_once(
    server, tmp_path, capsys
) -> None:
    user = chat_of(server, PeerKind.USER)
    db = tmp_path / "a.db"
    text = "queued by postbox-chat send"
    # The chat on screen, as the window opens it: the cloud history and the pending one.
    keys = [
        MessageHistoryViewKey(PeerId(user), HistoryAnchor.upper_bound(), 50, namespace)
        for namespace in (MessageNamespace.CLOUD, MessageNamespace.LOCAL)
    ]
    shown: list[tuple[MessageId, int]] = []  # the message's id and flags, per snapshot
    pending, sent = threading.Event(), threading.Event()

    def on_snapshot(snapshot: CombinedView) -> None:
        for key in keys:
            for message in snapshot[key].entries:
                if message.text == text:
                    shown.append((message.id, message.flags))
                    local = message.id.namespace == MessageNamespace.LOCAL
                    (pending if local else sent).set()

    with synced(server, db, user) as account:
        screen = account.postbox.combined_view(keys, on_snapshot)
        try:
            screen.ready.result(timeout=WAIT)
            done = send_process(db, str(user), text)
            assert done.returncode == 0, done.stderr
            assert done.stderr == ""
            local_id = int(done.stdout)
            # The other process's commit re-emits the open view, then the engine sends it.
            assert pending.wait(WAIT)
            assert sent.wait(WAIT)
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=WAIT))
        finally:
            screen.dispose()
        first_id, flags = shown[0]
        assert first_id == MessageId(PeerId(user), MessageNamespace.LOCAL, local_id)
        assert flags & MessageFlags.UNSENT
        assert shown[-1][0].namespace == MessageNamespace.CLOUD
        assert engine_of(account).outbound.sent == 1
    assert count_on_server(server, user, text) == 1
    with synced(server, db, user):  # restarted: nothing is sent again
        pass
    assert count_on_server(server, user, text) == 1
    verify_agrees(server, db, capsys)


def test_a_message_queued_while_no_app_runs_is_sent_by_the_next_sync(
    server, tmp_path, capsys
) -> None:
    user = chat_of(server, PeerKind.USER)
    db = tmp_path / "a.db"
    with synced(server, db, user):
        pass
    assert main(["send", "--db", str(db), "--to", str(user), "while", "offline"]) == 0
    assert count_on_server(server, user, "while offline") == 0
    address = f"127.0.0.1:{server.port}"
    status = main(
        ["sync", "--server", address, "--token", TOKEN, "--db", str(db), "--quiet",
         "--until-idle", "--timeout", "60"]
    )  # fmt: skip
    assert status == 0, capsys.readouterr().err
    assert count_on_server(server, user, "while offline") == 1
    capsys.readouterr()
    verify_agrees(server, db, capsys)


def test_two_accounts_on_one_file_one_sends_and_the_other_takes_over(
    server, tmp_path, capsys
) -> None:
    user = chat_of(server, PeerKind.USER)
    db = tmp_path / "a.db"
    with synced(server, db, user) as first:
        assert first.role == "master"
        second = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST).start()
        try:
            wait_role(second, "standby")
            status = second.status()
            assert status is not None and status.connection == "standby"
            assert status.role == "standby"
            assert status.master_client_id == first.client_id != second.client_id
            # What the standby's user sends, the master sends.
            second.send_message(PeerId(user), "written in the standby").result()
            on_server(server, second, user, "written in the standby")
            wait_until(first, lambda: engine_of(first).outbound.sent == 1)
            assert engine_of(second).outbound.sent == 0
            # While the master's request waits on the server, it goes away.
            with held(server):
                second.send_message(PeerId(user), "queued as the master leaves").result()
                first.close()
                wait_role(second, "master")
            on_server(server, second, user, "queued as the master leaves")
            assert second.worker.call(lambda engine: engine.wait_idle(timeout=WAIT))
            taken_over = second.status()
            assert taken_over is not None and taken_over.master_client_id == second.client_id
            assert taken_over.connection == "connected"
        finally:
            second.close()
    with synced(server, db, user):  # a restart sends nothing again
        pass
    for text in ("written in the standby", "queued as the master leaves"):
        assert count_on_server(server, user, text) == 1
    verify_agrees(server, db, capsys)


def test_a_standby_never_connects(server, tmp_path) -> None:
    db = tmp_path / "a.db"
    with synced(server, db) as first:
        second = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST).start()
        try:
            wait_role(second, "standby")
            # A commit of the master's reaches the standby, which looks again, and stays.
            first.set_muted(PeerId(chat_of(server, PeerKind.USER)), True).result()
            wait_role(second, "standby")
            counters = engine_of(second).status().counters
            assert counters["connection_attempts"] == 0 and counters["connections"] == 0
        finally:
            second.close()
        assert first.role == "master"


def wait_for_record(db: Path, test: Callable[[int | None], bool]) -> int | None:
    """Wait, on other processes' commits, until the master record passes ``test``."""
    changed = threading.Event()
    with Postbox(db) as postbox:
        postbox.add_external_change_listener(lambda _version: changed.set())
        while True:
            changed.clear()
            value = postbox.run(lambda tx: tx.get_master_client_id())
            if test(value):
                return value
            assert changed.wait(WAIT), f"the record stayed {value}"


def master_process(port: int, db: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "client.cli", "sync", "--server", f"127.0.0.1:{port}"]
    command += ["--token", TOKEN, "--db", str(db), "--quiet", "--timeout", "600"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def test_a_killed_master_is_taken_over(server, tmp_path, capsys) -> None:
    user = chat_of(server, PeerKind.USER)
    db = tmp_path / "a.db"
    with synced(server, db, user):  # a synced database; its master exits
        pass
    assert wait_for_record(db, lambda value: value is None) is None
    process = master_process(server.port, db)
    try:
        master_id = wait_for_record(db, lambda value: value is not None)
        account = Account(db, "127.0.0.1", server.port, TOKEN, timeouts=FAST).start()
        try:
            wait_role(account, "standby")
            status = account.status()
            assert status is not None and status.master_client_id == master_id
            account.send_message(PeerId(user), "sent by the other process").result()
            on_server(server, account, user, "sent by the other process")
            process.kill()  # SIGKILL: no cleanup, its record stays
            process.communicate(timeout=WAIT)
            wait_role(account, "master")
            account.send_message(PeerId(user), "sent after the takeover").result()
            on_server(server, account, user, "sent after the takeover")
            assert account.worker.call(lambda engine: engine.wait_idle(timeout=WAIT))
            status = account.status()
            assert status is not None and status.master_client_id == account.client_id
            # Its own; and the first again if the master was killed between the server's
            # answer and its commit (the server knows the random id: no second copy).
            assert status.counters["sent"] in (1, 2)
        finally:
            account.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=WAIT)
    assert process.returncode == -9
    for text in ("sent by the other process", "sent after the takeover"):
        assert count_on_server(server, user, text) == 1
    verify_agrees(server, db, capsys)


def test_sync_fails_in_one_line_while_another_process_syncs(server, tmp_path, capsys) -> None:
    db = tmp_path / "a.db"
    with synced(server, db):
        address = f"127.0.0.1:{server.port}"
        status = main(
            ["sync", "--server", address, "--token", TOKEN, "--db", str(db), "--quiet",
             "--until-idle", "--connect-timeout", "0.5"]
        )  # fmt: skip
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("postbox-chat: error: another process (client ")
    assert "syncs this database" in err[0]


def test_an_account_in_memory_is_always_the_master(server) -> None:
    with Account(None, "127.0.0.1", server.port, TOKEN, timeouts=FAST) as account:
        assert account.worker.call(lambda engine: engine.wait_idle(timeout=WAIT))
        assert account.role == "master" and account.client_id is None
        status = account.status()
        assert status is not None and status.role == "master"
    assert account.role is None
    with pytest.raises(PostboxClosedError):
        account.postbox.run(lambda tx: None)
