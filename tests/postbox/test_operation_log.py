"""The operation log: per-peer order, merged order across peers, and both across reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from postbox import ChangeRecord, InvalidArgumentError, PeerId, Postbox, Transaction

SEND = 1
READ = 2


def test_entries_keep_their_order_per_peer_and_merged(
    postbox: Postbox, alice: PeerId, bob: PeerId
) -> None:
    def fill(tx: Transaction) -> None:
        tx.add_operation_log_entry(alice, SEND, {"text": "a1"})
        tx.add_operation_log_entry(bob, SEND, {"text": "b1"})
        tx.add_operation_log_entry(alice, SEND, {"text": "a2"})
        tx.add_operation_log_entry(alice, READ, {"max_id": 5}, merged=False)

    postbox.run(fill)
    alice_sends = postbox.run(lambda tx: tx.get_operation_log_entries(alice, SEND))
    assert [(e.tag_local_index, e.contents["text"]) for e in alice_sends] == [(1, "a1"), (2, "a2")]
    merged = postbox.run(lambda tx: tx.get_merged_operation_log_entries(SEND))
    assert [e.contents["text"] for e in merged] == ["a1", "b1", "a2"]
    assert [e.merged_index for e in merged] == [1, 2, 3]
    assert postbox.run(lambda tx: tx.get_merged_operation_log_entries(READ)) == []
    later = postbox.run(lambda tx: tx.get_merged_operation_log_entries(SEND, from_index=2, limit=1))
    assert [e.contents["text"] for e in later] == ["b1"]


def test_order_and_indices_survive_reopen(db_path: Path, alice: PeerId, bob: PeerId) -> None:
    with Postbox(db_path) as postbox:
        postbox.run(
            lambda tx: [
                tx.add_operation_log_entry(p, SEND, n) for n, p in enumerate([alice, bob, alice])
            ]
        )
        postbox.run(lambda tx: tx.remove_operation_log_entry(alice, SEND, 2))
    with Postbox(db_path) as postbox:
        merged = postbox.run(lambda tx: tx.get_merged_operation_log_entries(SEND))
        assert [(e.peer_id, e.contents) for e in merged] == [(alice, 0), (bob, 1)]
        # Indices are never reused, even for the removed newest entry.
        entry = postbox.run(lambda tx: tx.add_operation_log_entry(alice, SEND, 3))
        assert (entry.tag_local_index, entry.merged_index) == (3, 4)
        merged = postbox.run(lambda tx: tx.get_merged_operation_log_entries(SEND))
        assert [e.contents for e in merged] == [0, 1, 3]


def test_update_and_remove_are_recorded(postbox: Postbox, alice: PeerId) -> None:
    entry = postbox.run(lambda tx: tx.add_operation_log_entry(alice, SEND, "draft"))
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)
    assert postbox.run(
        lambda tx: tx.update_operation_log_entry(alice, SEND, entry.tag_local_index, "final")
    )
    assert postbox.run(lambda tx: tx.remove_operation_log_entry(alice, SEND, entry.tag_local_index))
    assert not postbox.run(
        lambda tx: tx.remove_operation_log_entry(alice, SEND, entry.tag_local_index)
    )
    actions = [[op.action for op in r.operation_log_operations[(alice, SEND)]] for r in records]
    assert actions == [["update"], ["remove"]]
    assert records[0].operation_log_operations[(alice, SEND)][0].entry.contents == "final"


def test_tags_are_one_byte(postbox: Postbox, alice: PeerId) -> None:
    with pytest.raises(InvalidArgumentError, match="0..255"):
        postbox.run(lambda tx: tx.add_operation_log_entry(alice, 256, None))
