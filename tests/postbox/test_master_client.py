"""The master client: the pure decision, a model of many processes, and the real lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from postbox import (
    MasterClientLock,
    MasterLockError,
    MasterRole,
    MasterStep,
    Postbox,
    new_client_id,
    next_master_step,
)

MASTER, STANDBY = MasterRole.MASTER, MasterRole.STANDBY

# -- the decision -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "holds_lock", "recorded", "expected"),
    [
        # A standby that takes the free lock records itself, over a killed master's record.
        (STANDBY, True, None, MasterStep(MASTER, record=True)),
        (STANDBY, True, 99, MasterStep(MASTER, record=True)),
        (STANDBY, True, 7, MasterStep(MASTER)),
        # One that cannot stays a standby, whatever the record says.
        (STANDBY, False, 99, MasterStep(STANDBY)),
        (STANDBY, False, 7, MasterStep(STANDBY)),
        # A master that still holds it stays; a record another process wrote is corrected.
        (MASTER, True, 7, MasterStep(MASTER)),
        (MASTER, True, 99, MasterStep(MASTER, record=True)),
        (MASTER, True, None, MasterStep(MASTER, record=True)),
        # A master whose sidecar was replaced lets its lock go.
        (MASTER, False, 7, MasterStep(STANDBY, release=True)),
    ],
)
def test_next_master_step(role, holds_lock, recorded, expected) -> None:
    step = next_master_step(role, holds_lock=holds_lock, recorded=recorded, client_id=7)
    assert step == expected


def test_client_ids_are_positive_int64() -> None:
    ids = {new_client_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(0 < i < 2**63 for i in ids)


# -- many processes, modelled --------------------------------------------------------


class Sidecar:
    """The file at the sidecar's path (a number: replacing it makes a new one) and which
    lock holds each file, as the operating system keeps them."""

    def __init__(self) -> None:
        self.current = 0
        self.holders: dict[int, ModelLock] = {}


class ModelLock:
    """``MasterClientLock``'s behaviour over the model sidecar."""

    def __init__(self, sidecar: Sidecar) -> None:
        self.sidecar = sidecar
        self.file: int | None = None

    def try_acquire(self) -> bool:
        if self.file is not None:
            if self.file == self.sidecar.current:
                return True
            self.release()
        if self.sidecar.current in self.sidecar.holders:
            return False
        self.file = self.sidecar.current
        self.sidecar.holders[self.file] = self
        return True

    def release(self) -> None:
        if self.file is not None:
            del self.sidecar.holders[self.file]
            self.file = None


class Process:
    def __init__(self, client_id: int, lock: ModelLock) -> None:
        self.client_id = client_id
        self.lock = lock
        self.role = STANDBY


class ManyProcesses(RuleBasedStateMachine):
    """Processes start, look, exit, are killed, and the sidecar is replaced under them:
    after every live process looked once, exactly one is the master and the record
    names it; and, unless the sidecar was replaced since some process last looked,
    never two masters at once."""

    @initialize()
    def setup(self) -> None:
        self.sidecar = Sidecar()
        self.processes: list[Process] = []
        self.recorded: int | None = None
        self.next_id = 1
        #: Processes that have not looked since the sidecar was last replaced.
        self.unaware: set[int] = set()

    @rule()
    def start(self) -> None:
        if len(self.processes) < 5:
            self.processes.append(Process(self.next_id, ModelLock(self.sidecar)))
            self.next_id += 1

    def _step(self, process: Process) -> None:
        holds = process.lock.try_acquire()
        step = next_master_step(
            process.role, holds_lock=holds, recorded=self.recorded, client_id=process.client_id
        )
        if step.release:
            process.lock.release()
        if step.record:
            self.recorded = process.client_id
        process.role = step.role
        self.unaware.discard(process.client_id)

    @precondition(lambda self: self.processes)
    @rule(data=st.data())
    def look(self, data: st.DataObject) -> None:
        self._step(data.draw(st.sampled_from(self.processes)))

    @precondition(lambda self: self.processes)
    @rule(data=st.data(), killed=st.booleans())
    def exit(self, data: st.DataObject, killed: bool) -> None:
        process = data.draw(st.sampled_from(self.processes))
        self.processes.remove(process)
        self.unaware.discard(process.client_id)
        process.lock.release()  # the operating system does it for a killed one too
        if not killed and process.role is MASTER and self.recorded == process.client_id:
            self.recorded = None  # resigning clears its own record

    @rule()
    def replace_sidecar(self) -> None:
        self.sidecar.current += 1
        self.unaware = {p.client_id for p in self.processes}

    @precondition(lambda self: self.processes)
    @rule(data=st.data())
    def everyone_looks(self, data: st.DataObject) -> None:
        for process in data.draw(st.permutations(self.processes)):
            self._step(process)
        masters = [p for p in self.processes if p.role is MASTER]
        assert len(masters) == 1
        assert self.recorded == masters[0].client_id

    @invariant()
    def never_two_masters_that_know(self) -> None:
        if not self.unaware:
            assert sum(p.role is MASTER for p in self.processes) <= 1


TestManyProcesses = ManyProcesses.TestCase


# -- the real lock -------------------------------------------------------------------


def test_one_holder_at_a_time(db_path: Path) -> None:
    first, second = MasterClientLock(db_path), MasterClientLock(db_path)
    assert first.path == Path(f"{db_path}.master")
    assert first.try_acquire()
    assert not second.try_acquire()
    assert first.try_acquire()  # still held
    first.release()
    assert second.try_acquire()
    assert not first.try_acquire()
    second.release()
    second.release()  # idempotent


def test_the_sidecar_is_private(db_path: Path) -> None:
    lock = MasterClientLock(db_path)
    assert lock.try_acquire()
    assert stat.S_IMODE(os.stat(lock.path).st_mode) == 0o600
    lock.release()


def test_a_replaced_sidecar_ends_the_old_claim(db_path: Path, tmp_path: Path) -> None:
    old, new = MasterClientLock(db_path), MasterClientLock(db_path)
    assert old.try_acquire()
    replacement = tmp_path / "replacement"
    replacement.write_bytes(b"")
    os.replace(replacement, old.path)
    assert new.try_acquire()
    assert not old.try_acquire()
    assert not old.held


def test_a_deleted_sidecar_is_made_again_by_its_holder(db_path: Path) -> None:
    lock, other = MasterClientLock(db_path), MasterClientLock(db_path)
    assert lock.try_acquire()
    lock.path.unlink()
    assert lock.try_acquire()
    assert lock.path.exists()
    assert not other.try_acquire()
    lock.release()


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_killed_holder_leaves_the_lock_free(db_path: Path) -> None:
    lock = MasterClientLock(db_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert not lock.try_acquire()
    finally:
        holder.kill()  # SIGKILL: no cleanup
        holder.communicate(timeout=30)
    assert lock.try_acquire()
    lock.release()


def test_a_sidecar_that_cannot_be_made_is_a_typed_error(tmp_path: Path) -> None:
    lock = MasterClientLock(tmp_path / "missing" / "client.db")
    with pytest.raises(MasterLockError, match="cannot open .*client.db.master"):
        lock.try_acquire()
    assert not lock.held


# -- the record ----------------------------------------------------------------------


def test_the_record_is_shared_by_every_connection(db_path: Path) -> None:
    with Postbox(db_path) as one, Postbox(db_path) as other:
        assert one.run(lambda tx: tx.get_master_client_id()) is None
        one.run(lambda tx: tx.set_master_client_id(2**63 - 1))
        assert other.run(lambda tx: tx.get_master_client_id()) == 2**63 - 1
        other.run(lambda tx: tx.set_master_client_id(None))
        assert one.run(lambda tx: tx.get_master_client_id()) is None


@pytest.mark.parametrize("client_id", [0, -1, 2**63])
def test_a_client_id_out_of_range_is_refused(postbox: Postbox, client_id: int) -> None:
    with pytest.raises(ValueError, match="outside"):
        postbox.run(lambda tx: tx.set_master_client_id(client_id))
