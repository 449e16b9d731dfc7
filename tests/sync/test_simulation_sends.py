"""The invariant beyond verify: every committed send reached the server exactly once or
is failed in its client. Checked on its own, and shown to fail when a client drops a
send or a server stores one twice, which verify alone does not see."""

from __future__ import annotations

from typing import Any

import pytest

from postbox import MessageId, MessageNamespace, PeerId, PeerNamespace, Transaction
from sync.engine.log_tags import SEND_TAG
from sync.engine.outbound import Outbound
from sync.server.store import ServerStore
from sync.simulation.harness import simulate
from sync.simulation.schedule import BAD_PAYLOAD, Schedule
from sync.simulation.sends import LocalFate, SendLedger, check_sends

ALICE = PeerId.make(PeerNamespace.USER, 1001)
LOCAL = int(MessageNamespace.LOCAL)
#: Client 0 is of account 1.
ACCOUNTS = {0: 1}
#: A single-client schedule whose user sends about ten messages that all arrive.
SENDING_SEED = 2


def ledger_of(*sends: tuple[int, int | None]) -> SendLedger:
    """Sends of client 0 (account 1) to Alice: (local id, random id)."""
    ledger = SendLedger()
    for local_id, random_id in sends:
        ledger.committed(0, ALICE, {"local_id": local_id, "random_id": random_id})
    return ledger


def test_each_send_once_on_the_server_or_failed_is_no_divergence() -> None:
    ledger = ledger_of((1, 11), (2, 12), (3, None))
    fates = {0: {(ALICE, 1): LocalFate.GONE, (ALICE, 2): LocalFate.GONE,
                 (ALICE, 3): LocalFate.FAILED}}  # fmt: skip
    assert check_sends(ledger, ACCOUNTS, {1: [11, 12]}, fates) == []


def test_a_send_stored_twice_is_found() -> None:
    ledger = ledger_of((1, 11))
    fates = {0: {(ALICE, 1): LocalFate.GONE}}
    assert check_sends(ledger, ACCOUNTS, {1: [11, 11]}, fates) == [
        f"sends: client 0 peer {int(ALICE)} local 1 stored 2 times (random id 11)"
    ]


@pytest.mark.parametrize("fate", [LocalFate.GONE, LocalFate.PENDING])
def test_a_send_neither_stored_nor_failed_is_found(fate: str) -> None:
    ledger = ledger_of((1, 11))
    assert check_sends(ledger, ACCOUNTS, {1: []}, {0: {(ALICE, 1): fate}}) == [
        f"sends: client 0 peer {int(ALICE)} local 1 committed, neither on the server nor "
        f"failed ({fate} here)"
    ]


def test_a_send_into_or_out_of_a_channel_the_account_left_goes_with_it() -> None:
    channel = PeerId.make(PeerNamespace.CHANNEL, 77)
    ledger = ledger_of()
    ledger.committed(0, channel, {"local_id": 1, "random_id": 11})
    ledger.committed(0, ALICE, {"local_id": 2, "random_id": 12, "forward": [int(channel), 5]})
    fates = {0: {(channel, 1): LocalFate.GONE, (ALICE, 2): LocalFate.GONE}}
    assert check_sends(ledger, ACCOUNTS, {1: []}, fates, left_chats={1: {int(channel)}}) == []
    assert len(check_sends(ledger, ACCOUNTS, {1: []}, fates)) == 2


def test_a_send_nobody_committed_is_found() -> None:
    assert check_sends(ledger_of(), ACCOUNTS, {1: [99]}, {}) == [
        "sends: account 1 stored a send no client committed (random id 99)"
    ]


def test_a_send_the_user_deleted_first_may_be_absent_and_a_lost_forward_too() -> None:
    ledger = ledger_of((1, 11))
    ledger.withdraw(0, MessageId(ALICE, LOCAL, 1))
    ledger.committed(0, ALICE, {"local_id": 2, "random_id": 12, "forward": [5, 40]})
    fates = {0: {(ALICE, 1): LocalFate.GONE, (ALICE, 2): LocalFate.GONE}}
    assert check_sends(ledger, ACCOUNTS, {1: []}, fates, {1: {(5, 40)}}) == []
    assert len(check_sends(ledger, ACCOUNTS, {1: []}, fates)) == 1  # the forward's source is there


def test_the_schedule_sends_cleanly_as_it_is() -> None:
    outcome = simulate(SENDING_SEED)
    assert outcome.ok, outcome.divergences
    assert BAD_PAYLOAD not in outcome.mix


def test_a_client_that_drops_a_send_is_caught_where_verify_sees_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempt = Outbound._attempt
    dropped: list[int] = []

    async def drop_the_first_send(self: Outbound, entry: Any) -> None:
        if entry.tag != SEND_TAG or dropped:
            await attempt(self, entry)
            return
        dropped.append(entry.contents["local_id"])

        def vanish(tx: Transaction) -> None:
            tx.remove_operation_log_entry(entry.peer_id, SEND_TAG, entry.tag_local_index)
            tx.delete_messages([MessageId(entry.peer_id, LOCAL, entry.contents["local_id"])])

        await self._read(vanish)

    monkeypatch.setattr(Outbound, "_attempt", drop_the_first_send)
    outcome = simulate(SENDING_SEED)
    assert dropped
    assert [line.split(" peer ")[0] for line in outcome.divergences] == ["sends: client 0"]
    assert outcome.divergences[0].endswith(
        f"local {dropped[0]} committed, neither on the server nor failed (gone here)"
    )


def test_a_server_that_stores_a_send_twice_is_caught_where_verify_sees_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    add_message = ServerStore.add_message

    def twice(self: ServerStore, peer_id: int, **fields: Any) -> Any:
        update = add_message(self, peer_id, **fields)
        if fields.get("random_id") is not None:
            add_message(self, peer_id, **{**fields, "random_id": fields["random_id"] ^ 1 << 62})
        return update

    monkeypatch.setattr(ServerStore, "add_message", twice)
    outcome = simulate(SENDING_SEED)
    assert outcome.divergences
    assert all(
        line.startswith("sends: account ") and "stored a send no client committed" in line
        for line in outcome.divergences
    ), outcome.divergences


def test_the_ci_batch_draws_bad_payloads() -> None:
    drawn = [seed for seed in range(500) if BAD_PAYLOAD in Schedule.from_seed(seed).mix]
    assert len(drawn) >= 50


#: A schedule with bad payloads: refused through enqueue, and one written past it.
PAYLOAD_SEED = 0


def test_bad_payloads_are_refused_or_failed_and_hold_nothing_up() -> None:
    outcome = simulate(PAYLOAD_SEED)
    assert BAD_PAYLOAD in outcome.mix
    assert outcome.ok, outcome.divergences
    assert any("bad payload refused: MESSAGE_TOO_LONG" in line for line in outcome.trace)
    assert any("user unchecked payload" in line for line in outcome.trace)
    assert outcome.failed_messages >= 1


def test_an_enqueue_that_takes_a_bad_payload_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sync.engine.enqueue.check_text", lambda text, *_args: text)
    monkeypatch.setattr("sync.engine.enqueue.send_request", lambda *_args: None)
    outcome = simulate(PAYLOAD_SEED)
    assert any("payloads: enqueue took" in line for line in outcome.divergences)


def test_a_retry_is_the_same_send_and_a_send_queued_elsewhere_is_committed() -> None:
    ledger = ledger_of((1, 11), (1, 11))
    assert len(ledger.sends) == 1
    fates = {0: {(ALICE, 1): LocalFate.GONE}}
    assert check_sends(ledger, ACCOUNTS, {1: [11, 12]}, fates, queued_elsewhere={1: {12}}) == []
