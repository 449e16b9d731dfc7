"""A process killed in the middle of a large transaction leaves the database as it was."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import apsw

from postbox import MessageId, PeerId, PeerNamespace, Postbox, StoreMessage

ROOT = Path(__file__).resolve().parents[2]

# The child writes a large transaction and, once SQLite is busy flushing it (and,
# with a tiny page cache, spilling uncommitted pages into the WAL), reports and
# stops in the middle, waiting to be killed.
CHILD = r"""
import os, sys
from postbox import PeerId, PeerNamespace, Postbox, StoreMessage

path = sys.argv[1]
postbox = Postbox(path)
box = postbox._box
box._db.execute("PRAGMA cache_size = 20").fetchall()
peer = PeerId.make(PeerNamespace.USER, 7)
calls = 0

def progress():
    global calls
    calls += 1
    if calls == 2000:
        os.write(1, b"mid-commit\n")
        os.read(0, 1)  # blocks: the parent kills us here
    return False

def big(tx):
    tx.add_messages([
        StoreMessage(peer, 0, i, 1_000_000 + i, flags=1, tags=1, text=f"message {i} " + "x" * 60)
        for i in range(1000, 41000)
    ])
    box._db.set_progress_handler(progress, 100)

postbox.run(big)
os.write(1, b"committed\n")
"""


def dump(path: Path) -> str:
    """A digest of every row of every table."""
    connection = apsw.Connection(str(path))
    try:
        digest = hashlib.sha256()
        names = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
            )
        ]
        for name in names:
            if name.startswith("ft_message_text_"):
                continue  # FTS5 shadow tables are covered by the FTS table itself
            for row in connection.execute(f'SELECT * FROM "{name}" ORDER BY 1'):
                digest.update(repr((name, row)).encode())
        return digest.hexdigest()
    finally:
        connection.close()


def test_sigkill_mid_transaction_loses_nothing_and_applies_nothing(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    peer = PeerId.make(PeerNamespace.USER, 7)
    with Postbox(path) as postbox:
        postbox.run(
            lambda tx: tx.add_messages(
                [
                    StoreMessage(peer, 0, i, 1000 + i, flags=1, text=f"before {i}")
                    for i in range(1, 500)
                ]
            )
        )
    before = dump(path)

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line == b"mid-commit\n", child.stderr.read() if child.stderr else line
        # The transaction has written uncommitted pages by now.
        assert os.path.getsize(f"{path}-wal") > 256 * 1024
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL

    with Postbox(path) as postbox:
        assert postbox.run(lambda tx: tx.message_count(peer, 0)) == 499
        assert postbox.run(lambda tx: tx.get_message(MessageId(peer, 0, 1000))) is None
        state = postbox.run(lambda tx: tx.get_read_state(peer))
        assert state is not None and state.count == 499
    assert dump(path) == before
