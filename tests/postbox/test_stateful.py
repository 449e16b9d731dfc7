"""Random transactions against a real Postbox and a small reference model.

A hypothesis state machine runs transactions (single writes, mixed batches, writes
undone within one transaction, transactions that raise midway, reopening the file)
on a file-backed ``Postbox`` and on ``Model``: the ``Transaction`` write API over
plain dicts, restating what the postbox docstrings promise. After every step every
table is read back and compared with the model, and the step's change record is
checked against what the model says changed.

The model lives in ``stateful_model``, the checks in ``stateful_checks``, and the
steps of a transaction and the strategies that draw them in ``stateful_steps``.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from postbox import (
    ChangeRecord,
    ChatListInclusion,
    InvalidArgumentError,
    MessageId,
    PeerId,
    Postbox,
    Transaction,
)
from tests.postbox.stateful_checks import check_record, check_tables
from tests.postbox.stateful_model import CLOUD, MAX_ID, BoomError, Journal, Model
from tests.postbox.stateful_steps import (
    Call,
    Fail,
    ReadBack,
    Step,
    Writes,
    call,
    hole_calls,
    inclusions,
    peer_ids,
    store_message,
)

# -- the machine ----------------------------------------------------------------------


class PostboxMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = tempfile.TemporaryDirectory(prefix="postbox-stateful-")
        self.path = Path(self.directory.name) / "postbox.db"
        self.model = Model()
        self.records: list[ChangeRecord] = []
        self.postbox = self.open()
        self.version = self.postbox.transaction_state_version

    def open(self) -> Postbox:
        postbox = Postbox(self.path)
        postbox.add_commit_listener(self.records.append)
        return postbox

    def teardown(self) -> None:
        self.postbox.close()
        self.directory.cleanup()

    def writes(self) -> Writes:
        return Writes(self.model)

    def commit(self, steps: Sequence[Step]) -> None:
        """Run ``steps`` as one transaction; check its record against the model's diff."""
        new = copy.deepcopy(self.model)
        new.journal = Journal()
        seen = len(self.records)

        def body(tx: Transaction) -> None:
            for step in steps:
                step.run(tx, new)

        self.postbox.run(body)
        records = self.records[seen:]
        # Writes that cancel out commit nothing. State the model leaves out (such as a
        # local id counter moved by a message added and deleted again) may still make a
        # record; it must then describe no net change of what the model holds.
        if new != self.model:
            assert records, "a transaction that changed something sent no record"
        assert len(records) <= 1
        if records:
            self.version += 1
            assert records[0].transaction_state_version == self.version
            check_record(records[0], self.model, new)
        assert self.postbox.transaction_state_version == self.version
        self.model = new

    @invariant()
    def tables_match_the_model(self) -> None:
        seen = len(self.records)
        self.postbox.run(lambda tx: check_tables(tx, self.model, committed=True))
        assert len(self.records) == seen, "a transaction that only read sent a record"

    @initialize(data=st.data())
    def seed_history(self, data: st.DataObject) -> None:
        """Most runs start with some history, so deletes, edits and reads find messages."""
        if data.draw(st.integers(0, 4)):
            self.commit([data.draw(self.writes().add(max_size=40))])

    # One write per transaction; the kinds that touch the most tables get rules of
    # their own, so they run more often.

    @rule(data=st.data())
    def add_messages(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().add())])

    @rule(data=st.data())
    def delete_messages(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().delete())])

    @rule(data=st.data())
    def update_message(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().update())])

    @rule(data=st.data())
    def mark_message_failed(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().fail())])

    @rule(write=hole_calls())
    def change_hole(self, write: Call) -> None:
        self.commit([write])

    @rule(data=st.data())
    def apply_read(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().read())])

    @rule(data=st.data())
    def any_write(self, data: st.DataObject) -> None:
        self.commit([data.draw(self.writes().any())])

    @rule(data=st.data())
    def mixed_transaction(self, data: st.DataObject) -> None:
        """Several writes in one transaction, maybe reading everything in between."""
        self.commit(data.draw(st.lists(self.writes().steps(), min_size=2, max_size=8)))

    @rule(data=st.data(), peer_id=peer_ids, inclusion=inclusions)
    def change_read_and_undo(
        self, data: st.DataObject, peer_id: PeerId, inclusion: ChatListInclusion | None
    ) -> None:
        """Writes undone later in the same transaction, everything read in between
        (which brings the chat list up to date mid-transaction)."""
        steps: list[Step] = [call("update_chat_list_inclusion", peer_id, inclusion), ReadBack()]
        undo = [call("update_chat_list_inclusion", peer_id, self.model.inclusions.get(peer_id))]
        free = [i for i in range(1, MAX_ID + 1) if (peer_id, CLOUD, i) not in self.model.messages]
        if bool(free) and data.draw(st.booleans()):
            message = data.draw(store_message(peer_id, CLOUD, data.draw(st.sampled_from(free))))
            steps.insert(1, call("add_messages", (message,)))
            undo.append(call("delete_messages", (MessageId(peer_id, CLOUD, message.id),)))
        self.commit([*steps, *data.draw(st.permutations(undo))])

    @rule(data=st.data(), how=st.sampled_from(("boom", "hole", "pin", "message")))
    def failing_transaction(self, data: st.DataObject, how: str) -> None:
        """Writes, then an exception: nothing changes and no record is sent."""
        steps = data.draw(st.lists(self.writes().steps(), min_size=1, max_size=6))
        failure = Fail(how, data.draw(peer_ids))
        scratch = copy.deepcopy(self.model)
        seen = len(self.records)
        reached = []

        def body(tx: Transaction) -> None:
            for step in steps:
                step.run(tx, scratch)
            reached.append(True)
            failure.run(tx, scratch)

        with pytest.raises((BoomError, InvalidArgumentError)):
            self.postbox.run(body)
        assert reached, "a write before the failure raised"
        assert len(self.records) == seen
        assert self.postbox.transaction_state_version == self.version

    @rule()
    def reopen(self) -> None:
        """What was committed is what a new Postbox on the same file reads."""
        self.postbox.close()
        self.postbox = self.open()
        assert self.postbox.transaction_state_version == self.version


settings.register_profile(
    "postbox-stateful",
    max_examples=60,
    stateful_step_count=50,
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# CI: the same budget and no example database, so a run depends on its seed alone
# (printed when it fails; rerun with ``--hypothesis-seed``).
settings.register_profile(
    "postbox-stateful-ci", settings.get_profile("postbox-stateful"), database=None
)

TestPostboxStateMachine = PostboxMachine.TestCase
TestPostboxStateMachine.settings = settings.get_profile(
    "postbox-stateful-ci" if os.environ.get("CI") else "postbox-stateful"
)
