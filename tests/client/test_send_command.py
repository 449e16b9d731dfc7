"""``postbox-chat send``: finding the chat, queueing the message, and refusing bad input
in one line with the file as it was. No server: the command uses no network."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from client import MAX_MESSAGE_LENGTH
from client.cli import main
from client.send_command import PeerLookupError, resolve_peer
from postbox import (
    MessageFlags,
    MessageId,
    MessageNamespace,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
)
from sync.engine.log_tags import SEND_TAG

ALICE = PeerId.make(PeerNamespace.USER, 1001)
BOB = PeerId.make(PeerNamespace.USER, 1002)
OTHER_BOB = PeerId.make(PeerNamespace.USER, 1003)
GROUP = PeerId.make(PeerNamespace.GROUP, 2001)
LOCAL = int(MessageNamespace.LOCAL)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "client.db"
    with Postbox(path) as postbox:
        postbox.run(
            lambda tx: tx.update_peers(
                [
                    Peer(ALICE, "Alice Liddell", username="alice"),
                    Peer(BOB, "Bob"),
                    Peer(OTHER_BOB, "Bob", username="bob2"),
                    Peer(GROUP, "Tea party"),
                ]
            )
        )
    return path


def queued(db: Path) -> dict[PeerId, list[str]]:
    """The texts waiting in the outbound queue, by chat."""
    with Postbox(db) as postbox:
        return postbox.run(
            lambda tx: {
                peer: [e.contents["text"] for e in tx.get_operation_log_entries(peer, SEND_TAG)]
                for peer in (ALICE, BOB, OTHER_BOB, GROUP)
                if tx.get_operation_log_entries(peer, SEND_TAG)
            }
        )


def send(db: Path, *argv: str) -> int:
    return main(["send", "--db", str(db), *argv])


@pytest.mark.parametrize(
    ("to", "peer"),
    [
        (str(int(GROUP)), GROUP),
        ("@alice", ALICE),
        ("@ALICE", ALICE),
        ("@bob2", OTHER_BOB),
        ("Alice Liddell", ALICE),
        ("Tea party", GROUP),
    ],
)
def test_the_chat_is_found_by_id_username_or_title(db, capsys, to, peer) -> None:
    assert send(db, "--to", to, "hello") == 0
    out, err = capsys.readouterr()
    assert err == ""
    local_id = int(out)
    assert queued(db) == {peer: ["hello"]}
    with Postbox(db) as postbox:
        message = postbox.run(lambda tx: tx.get_message(MessageId(peer, LOCAL, local_id)))
        assert message is not None and message.text == "hello"
        assert message.flags & MessageFlags.UNSENT
        # Listed in the chat list, as a send from the window would.
        assert postbox.run(lambda tx: tx.get_chat_list_position(peer)) is not None


def test_the_words_are_joined_into_one_message(db, capsys) -> None:
    assert send(db, "--to", "@alice", "down", "the", "rabbit", "hole") == 0
    assert queued(db) == {ALICE: ["down the rabbit hole"]}


def test_each_send_queues_one_more_in_order(db, capsys) -> None:
    assert send(db, "--to", "@alice", "one") == 0
    assert send(db, "--to", "@alice", "two") == 0
    first, second = map(int, capsys.readouterr().out.split())
    assert second > first
    assert queued(db) == {ALICE: ["one", "two"]}


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("postbox-chat: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("to", "says"),
    [
        ("@nobody", "no peer with the username @nobody in this database"),
        ("Carol", "no peer with the chat title 'Carol' in this database"),
        ("alice", "no peer with the chat title 'alice' in this database"),
        ("4242", "no peer 4242 in this database"),
        (str(2**64), f"no peer {2**64} in this database"),
        ("Bob", f"2 peers have the chat title 'Bob' ({int(BOB)}, {int(OTHER_BOB)})"),
        ("  ", "no peer given"),
    ],
)
def test_a_peer_unknown_or_ambiguous_is_refused_and_nothing_queued(db, capsys, to, says) -> None:
    assert send(db, "--to", to, "hello") == 2
    assert says in one_error_line(capsys)
    assert queued(db) == {}


def test_a_text_longer_than_a_message_is_refused_and_nothing_queued(db, capsys) -> None:
    assert send(db, "--to", "@alice", "x" * (MAX_MESSAGE_LENGTH + 1)) == 2
    line = one_error_line(capsys)
    assert line.endswith("a message holds at most 4,096 characters, not 4,097")
    assert queued(db) == {}
    assert send(db, "--to", "@alice", "x" * MAX_MESSAGE_LENGTH) == 0


def test_no_text_is_refused(db, capsys) -> None:
    assert send(db, "--to", "@alice", "   ") == 2
    assert "a message needs some text" in one_error_line(capsys)
    assert queued(db) == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "--to", "@alice", "hi"],  # no --db
        ["send", "--db", "x.db", "hi"],  # no --to
        ["send", "--db", "x.db", "--to", "@alice"],  # no text
    ],
)
def test_a_missing_argument_is_a_usage_error(tmp_path, capsys, monkeypatch, argv) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "usage: postbox-chat send" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_missing_database_is_not_created(tmp_path, capsys) -> None:
    missing = tmp_path / "missing.db"
    assert send(missing, "--to", "@alice", "hi") == 2
    assert f"{missing} does not exist" in one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_a_foreign_file_is_refused_and_left_as_it_was(tmp_path, capsys) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"not a database at all\n" * 100)
    foreign = tmp_path / "other.sqlite"
    connection = apsw.Connection(str(foreign))
    connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
    connection.close()
    before = {path: path.read_bytes() for path in (notes, foreign)}
    for path in before:
        assert send(path, "--to", "@alice", "hi") == 1
        assert "not a postbox database" in one_error_line(capsys)
    assert {path: path.read_bytes() for path in before} == before
    assert sorted(tmp_path.iterdir()) == sorted(before)


def test_resolve_peer_says_why_in_one_line(db) -> None:
    with Postbox(db) as postbox:
        assert postbox.run(lambda tx: resolve_peer(tx, " @Alice ")) == ALICE
        with pytest.raises(PeerLookupError, match="give the peer id"):
            postbox.run(lambda tx: resolve_peer(tx, "Bob"))
        with pytest.raises(PeerLookupError, match="chat title '²'"):  # not a number
            postbox.run(lambda tx: resolve_peer(tx, "²"))
