"""Holes: interval arithmetic, and the hole index table's merge, split and propagation."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postbox import (
    MAX_MESSAGE_ID,
    ChangeRecord,
    ClosedRange,
    HoleKey,
    HoleOperationKind,
    InvalidArgumentError,
    MessageHistoryHoleSpace,
    MessageTags,
    Peer,
    PeerId,
    PeerNamespace,
    Postbox,
    StoreMessage,
    Transaction,
)
from postbox.holes import add_range, normalize, remove_range

EVERYWHERE = MessageHistoryHoleSpace.everywhere()
PHOTOS = MessageHistoryHoleSpace.tagged(MessageTags.PHOTO)
ALL_TAG_SPACES = [MessageHistoryHoleSpace.tagged(tag) for tag in MessageTags]

ranges = st.tuples(st.integers(1, 60), st.integers(0, 12)).map(
    lambda t: ClosedRange(t[0], t[0] + t[1])
)


def ids_of(holes: list[ClosedRange]) -> set[int]:
    return {i for hole in holes for i in range(hole.lower, hole.upper + 1)}


def apply_ops(ops: list[tuple[bool, ClosedRange]]) -> list[ClosedRange]:
    holes: list[ClosedRange] = []
    for is_add, hole in ops:
        if is_add:
            dropped, merged = add_range(holes, hole)
            if merged is not None:
                holes = sorted([h for h in holes if h not in dropped] + [merged])
        else:
            dropped, kept = remove_range(holes, hole)
            holes = sorted([h for h in holes if h not in dropped] + kept)
    return holes


@given(st.lists(st.tuples(st.booleans(), ranges), max_size=30))
def test_add_and_remove_match_a_set_of_ids(ops: list[tuple[bool, ClosedRange]]) -> None:
    expected: set[int] = set()
    for is_add, hole in ops:
        span = set(range(hole.lower, hole.upper + 1))
        expected = expected | span if is_add else expected - span
    holes = apply_ops(ops)
    assert ids_of(holes) == expected
    # Canonical form: sorted, disjoint and never adjacent (adjacent ranges merge).
    assert holes == normalize(holes)
    for left, right in zip(holes, holes[1:], strict=False):
        assert left.upper + 1 < right.lower


def test_add_merges_adjacent_and_overlapping() -> None:
    dropped, merged = add_range([ClosedRange(1, 4), ClosedRange(10, 12)], ClosedRange(5, 9))
    assert dropped == [ClosedRange(1, 4), ClosedRange(10, 12)]
    assert merged == ClosedRange(1, 12)
    assert add_range([ClosedRange(1, 20)], ClosedRange(5, 9)) == ([], None)


def test_remove_splits_a_hole() -> None:
    dropped, kept = remove_range([ClosedRange(1, 100)], ClosedRange(40, 60))
    assert dropped == [ClosedRange(1, 100)]
    assert kept == [ClosedRange(1, 39), ClosedRange(61, 100)]


def test_hole_ranges_are_checked() -> None:
    with pytest.raises(InvalidArgumentError):
        ClosedRange.checked(5, 4)
    with pytest.raises(InvalidArgumentError):
        ClosedRange.checked(0, 4)
    with pytest.raises(InvalidArgumentError):
        ClosedRange.checked(1, MAX_MESSAGE_ID + 1)
    with pytest.raises(InvalidArgumentError):
        MessageHistoryHoleSpace.tagged(MessageTags.PHOTO | MessageTags.VIDEO)


def test_new_peer_gets_the_whole_range_everywhere_and_in_every_tag_space(
    postbox: Postbox, alice: PeerId
) -> None:
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    holes = postbox.run(
        lambda tx: {space: tx.get_holes(alice, 0, space) for space in [EVERYWHERE, *ALL_TAG_SPACES]}
    )
    assert all(value == [ClosedRange(1, MAX_MESSAGE_ID)] for value in holes.values())
    # The local namespace is not listed by the seed configuration: no holes there.
    assert postbox.run(lambda tx: tx.get_holes(alice, 1)) == []


def test_first_messages_initialize_holes_and_leave_them(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 10, 100)]))
    assert postbox.run(lambda tx: tx.get_holes(alice, 0)) == [ClosedRange(1, MAX_MESSAGE_ID)]


def test_which_chats_start_as_a_hole_is_the_seed_configurations_choice(tmp_path) -> None:
    import dataclasses

    from postbox.seed_configuration import DEFAULT_SEED_CONFIGURATION

    secret = PeerId.make(PeerNamespace.SECRET_CHAT, 1)
    # This client's server keeps secret chats' history: they start as a hole too.
    default = Postbox(tmp_path / "default.db")
    default.run(lambda tx: tx.update_peers([Peer(secret, "Secret")]))
    assert default.run(lambda tx: tx.get_holes(secret, 0)) == [ClosedRange(1, MAX_MESSAGE_ID)]
    default.close()
    # As on Telegram, where a secret chat lives only on its devices: no hole.
    holes = {
        kind: spaces
        for kind, spaces in DEFAULT_SEED_CONFIGURATION.message_holes.items()
        if kind != PeerNamespace.SECRET_CHAT
    }
    telegram = dataclasses.replace(DEFAULT_SEED_CONFIGURATION, message_holes=holes)
    device_only = Postbox(tmp_path / "device.db", seed_configuration=telegram)
    device_only.run(lambda tx: tx.update_peers([Peer(secret, "Secret")]))
    assert device_only.run(lambda tx: tx.get_holes(secret, 0)) == []
    device_only.close()


def test_removing_everywhere_also_fills_every_tag_space(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.remove_hole(alice, 0, EVERYWHERE, 100, 200))
    for space in [EVERYWHERE, *ALL_TAG_SPACES]:
        holes = functools.partial(Transaction.get_holes, peer_id=alice, namespace=0, space=space)
        assert postbox.run(holes) == [
            ClosedRange(1, 99),
            ClosedRange(201, MAX_MESSAGE_ID),
        ]


def test_tag_space_changes_stay_in_their_space(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.remove_hole(alice, 0, PHOTOS, 1, 1000))
    assert postbox.run(lambda tx: tx.get_holes(alice, 0, PHOTOS)) == [
        ClosedRange(1001, MAX_MESSAGE_ID)
    ]
    assert postbox.run(lambda tx: tx.get_holes(alice, 0)) == [ClosedRange(1, MAX_MESSAGE_ID)]


def test_add_merges_in_the_table_and_reports_operations(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.remove_hole(alice, 0, EVERYWHERE, 1, MAX_MESSAGE_ID))
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)

    def add(tx: Transaction) -> None:
        tx.add_hole(alice, 0, EVERYWHERE, 10, 19)
        tx.add_hole(alice, 0, EVERYWHERE, 30, 39)
        tx.add_hole(alice, 0, EVERYWHERE, 20, 29)

    postbox.run(add)
    assert postbox.run(lambda tx: tx.get_holes(alice, 0)) == [ClosedRange(10, 39)]
    assert postbox.run(lambda tx: tx.get_holes(alice, 0, PHOTOS)) == [ClosedRange(10, 39)]
    [record] = records
    operations = record.hole_operations
    assert set(operations) == {(alice, 0, space) for space in [EVERYWHERE, *ALL_TAG_SPACES]}
    everywhere = operations[HoleKey(alice, 0, EVERYWHERE)]
    assert [op.kind for op in everywhere] == [HoleOperationKind.INSERT] * 3


def test_operations_that_change_nothing_are_not_recorded(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.update_peers([Peer(alice, "Alice")]))
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)
    postbox.run(lambda tx: tx.add_hole(alice, 0, EVERYWHERE, 5, 50))  # already a hole
    assert records == []


def test_hole_containing_an_id(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.remove_hole(alice, 0, EVERYWHERE, 100, 200))
    assert postbox.run(lambda tx: tx.get_hole_containing(alice, 0, EVERYWHERE, 150)) is None
    assert postbox.run(lambda tx: tx.get_hole_containing(alice, 0, EVERYWHERE, 99)) == ClosedRange(
        1, 99
    )
    assert postbox.run(lambda tx: tx.get_hole_containing(alice, 0, EVERYWHERE, 201)) == ClosedRange(
        201, MAX_MESSAGE_ID
    )
