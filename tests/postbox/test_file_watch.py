"""The file watch: another process's writes wake the postbox, not its idle checks."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postbox import BasicPeerViewKey, CombinedView, Peer, PeerId, Postbox
from postbox.file_watch import watch_writes

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="inotify is Linux's; elsewhere idle checks"
)

WAIT = 10.0


class Watched:
    """A watched file: how many times its callback ran, and an event per call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls = 0
        self.called = threading.Event()
        stop = watch_writes(str(path), self._on_write)
        assert stop is not None
        self.stop: Callable[[], None] = stop

    def _on_write(self) -> None:
        self.calls += 1
        self.called.set()

    def write(self, data: bytes = b"x") -> None:
        with open(self.path, "ab") as file:
            file.write(data)


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Callable[[str], Watched]]:
    made: list[Watched] = []

    def make(name: str) -> Watched:
        watch = Watched(tmp_path / name)
        made.append(watch)
        return watch

    yield make
    for watch in made:
        watch.stop()


def test_a_write_calls_back_that_file_only(watched) -> None:
    wal, other, fence = watched("db-wal"), watched("other"), watched("fence")
    wal.write()
    assert wal.called.wait(WAIT)
    fence.write()  # events arrive in order: once the fence's came, the wal's were all seen
    assert fence.called.wait(WAIT)
    assert other.calls == 0


def test_a_file_created_after_the_watch_is_followed(tmp_path: Path, watched) -> None:
    wal = watched("late-wal")
    assert not wal.path.exists()
    wal.write()
    assert wal.called.wait(WAIT)


def test_a_stopped_watch_is_not_called(watched) -> None:
    stopped, fence = watched("stopped"), watched("fence")
    stopped.stop()
    stopped.write()
    fence.write()
    assert fence.called.wait(WAIT)
    assert stopped.calls == 0


def test_two_watches_of_one_file_are_both_called(watched) -> None:
    first, second = watched("shared"), watched("shared")
    first.write()
    assert first.called.wait(WAIT) and second.called.wait(WAIT)


WRITER = """
import sys
from postbox import Peer, PeerId, Postbox
with Postbox(sys.argv[1], watch_file=False) as postbox:
    postbox.run(lambda tx: tx.update_peers([Peer(PeerId(int(sys.argv[2])), "written elsewhere")]))
"""


def test_another_process_commit_reaches_views_without_waiting_for_idle_checks(
    db_path: Path, alice: PeerId
) -> None:
    arrived = threading.Event()
    names: list[str] = []

    def on_snapshot(snapshot: CombinedView) -> None:
        peer = snapshot[BasicPeerViewKey(alice)].peer
        if peer is not None:
            names.append(peer.name)
            arrived.set()

    # An idle check an hour away: only the file watch can bring the commit in time.
    with Postbox(db_path, external_check_interval=3600) as watcher:
        watcher.combined_view([BasicPeerViewKey(alice)], callback=on_snapshot).ready.result()
        subprocess.run(
            [sys.executable, "-c", WRITER, str(db_path), str(int(alice))],
            check=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert arrived.wait(timeout=WAIT)
    assert names == ["written elsewhere"]


def test_a_postbox_without_the_watch_still_sees_it_at_its_idle_check(
    db_path: Path, alice: PeerId
) -> None:
    arrived = threading.Event()
    with Postbox(db_path, external_check_interval=0.01, watch_file=False) as watcher:
        watcher.combined_view(
            [BasicPeerViewKey(alice)], callback=lambda _s: arrived.set()
        ).ready.result()
        arrived.clear()  # the first snapshot
        with Postbox(db_path, watch_file=False) as writer:
            writer.run(lambda tx: tx.update_peers([Peer(alice, "from the other connection")]))
        assert arrived.wait(timeout=WAIT)
