"""The engine's election, without sockets: processes are Postboxes on one file, each
with its own connection and its own lock, as two processes would have."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from postbox import MasterClientLock, MasterRole, Postbox
from sync.engine.master import MasterElection

WAIT = 10.0
#: Long enough that only a wake from another process's commit can be why it moved.
NEVER = 3600.0


@contextlib.contextmanager
def process(db: Path, client_id: int, interval: float = NEVER) -> Iterator[MasterElection]:
    """An election over its own Postbox, told of other processes' commits as the engine
    tells it."""
    postbox = Postbox(db)
    election = MasterElection(postbox, MasterClientLock(db), interval=interval, client_id=client_id)
    remove = postbox.add_external_change_listener(lambda _version: election.external_change())
    try:
        yield election
    finally:
        remove()
        election.lock.release()
        postbox.close()


async def notice_commits(election: MasterElection) -> None:
    """Have its Postbox notice what other connections committed so far (every
    transaction looks first, and tells the election)."""
    await asyncio.wrap_future(election.postbox.transaction(lambda _tx: None))


def recorded(db: Path) -> int | None:
    with Postbox(db) as postbox:
        return postbox.run(lambda tx: tx.get_master_client_id())


def test_the_first_to_look_is_the_master_and_the_other_knows_it(db_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, process(db_path, 2) as second:
            assert await first.step() is MasterRole.MASTER
            assert await second.step() is MasterRole.STANDBY
            assert first.master_client_id == second.master_client_id == 1
            assert await first.step() is MasterRole.MASTER  # and stays so

    asyncio.run(scenario())
    assert recorded(db_path) == 1


def test_a_master_that_resigns_wakes_the_standby_which_takes_over(db_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, process(db_path, 2) as second:
            await first.step()
            await notice_commits(second)
            await second.step()
            waiting = asyncio.create_task(second.wait_until_master())
            await asyncio.sleep(0)  # it looked (the lock only: nothing new to read), and waits
            assert not waiting.done()
            await first.resign()
            # Its next look is an hour away: the resignation's commit woke it.
            await asyncio.wait_for(waiting, WAIT)
            assert second.role is MasterRole.MASTER
            assert first.role is MasterRole.STANDBY
            assert await first.step() is MasterRole.STANDBY

    asyncio.run(scenario())
    assert recorded(db_path) == 2


def test_a_killed_master_is_replaced_at_the_next_look(db_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, process(db_path, 2, interval=0.01) as second:
            await first.step()
            await second.step()
            first.lock.release()  # what the operating system does for a killed process
            await asyncio.wait_for(second.wait_until_master(), WAIT)
            assert second.master_client_id == 2

    asyncio.run(scenario())
    assert recorded(db_path) == 2  # the dead master's record is overwritten


def test_a_replaced_sidecar_leaves_one_master(db_path: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, process(db_path, 2) as second:
            await first.step()
            await second.step()
            replacement = tmp_path / "replacement"
            replacement.write_bytes(b"")
            replacement.replace(Path(f"{db_path}.master"))
            assert await second.step() is MasterRole.MASTER  # the new file was free
            assert await first.step() is MasterRole.STANDBY
            assert second.master_client_id == first.master_client_id == 2

    asyncio.run(scenario())
    assert recorded(db_path) == 2


def test_a_master_corrects_a_record_another_process_wrote(db_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, Postbox(db_path) as other:
            await first.step()
            other.run(lambda tx: tx.set_master_client_id(99))
            await notice_commits(first)
            # Told of the commit, its next look reads the record and writes its own.
            assert await first.step() is MasterRole.MASTER
            assert first.master_client_id == 1

    asyncio.run(scenario())
    assert recorded(db_path) == 1


def test_a_resigned_master_leaves_a_newer_record_alone(db_path: Path) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, Postbox(db_path) as other:
            await first.step()
            other.run(lambda tx: tx.set_master_client_id(2))
            await first.resign()

    asyncio.run(scenario())
    assert recorded(db_path) == 2


def test_a_sidecar_that_cannot_be_locked_keeps_it_a_standby_and_says_why(
    db_path: Path, tmp_path: Path
) -> None:
    async def scenario() -> MasterElection:
        with Postbox(db_path) as postbox:
            lock = MasterClientLock(tmp_path / "missing" / "client.db")
            election = MasterElection(postbox, lock, interval=NEVER, client_id=1)
            assert await election.step() is MasterRole.STANDBY
            return election

    election = asyncio.run(scenario())
    assert election.problem is not None
    assert election.problem.startswith("cannot take part in choosing the syncing process")


@pytest.mark.parametrize("resigns", [True, False])
def test_a_standby_never_writes_the_record(db_path: Path, resigns: bool) -> None:
    async def scenario() -> None:
        with process(db_path, 1) as first, process(db_path, 2) as second:
            await first.step()
            await second.step()
            if resigns:
                await second.resign()
            assert await second.step() is MasterRole.STANDBY

    asyncio.run(scenario())
    assert recorded(db_path) == 1
