"""The row functions without Spark: purity, order and the slices both paths share."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dataset import AccountSpec, ChatRows, build_dataset, generate_slice, plan_account, plan_slices
from dataset.account_plan import warp
from dataset.counter_hash import hash64, unit
from dataset.rows import DatasetError, message_from_row, message_to_row
from postbox import PeerId, StoreMessage

SPEC = AccountSpec(5, 12, 4, 3, 3_000, 12, log_days=2, delete_share=0.1)


def test_hash_is_a_pure_function_of_its_keys():
    assert hash64(1, 2, 3) == hash64(1, 2, 3)
    assert hash64(1, 2, 3) != hash64(1, 3, 2)
    assert len({hash64(9, i) for i in range(10_000)}) == 10_000
    draws = [unit(3, i) for i in range(20_000)]
    assert all(0.0 <= d < 1.0 for d in draws)
    assert 0.48 < sum(draws) / len(draws) < 0.52


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_day_warp_keeps_the_order_of_draws(a, b):
    low, high = sorted((a, b))
    assert 0 <= warp(SPEC.now, low) <= warp(SPEC.now, high) < 86_400


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**40), st.integers(1, 2_999))
def test_any_message_can_be_generated_on_its_own(seed, index):
    spec = AccountSpec(seed, 6, 2, 2, 3_000, 9, log_days=1, delete_share=0.05)
    plan = plan_account(spec)
    chat = max(plan.chats, key=lambda c: c.count)
    index %= chat.count
    fresh = ChatRows(plan_account(spec), chat).fate(index)
    assert ChatRows(plan, chat).fate(index) == fresh
    if index:
        before = ChatRows(plan, chat).fate(index - 1)
        assert (before.sent_at, before.id) < (fresh.sent_at, fresh.id)
    assert fresh.sent_at < spec.now


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 5_000))
def test_slices_cover_the_account_in_key_order_whatever_their_size(rows_per_slice):
    plan = plan_account(SPEC)
    slices = plan_slices(plan, rows_per_slice)
    assert all(sum(u - lo for _, lo, u in pieces) <= rows_per_slice for pieces in slices)
    rows = [row for pieces in slices for row in generate_slice(plan, pieces)[0]]
    whole = generate_slice(plan, [p for pieces in slices for p in pieces])[0]
    assert rows == whole
    keys = [(r[0], r[1], r[3], r[2]) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_the_log_period_has_edits_and_deletions():
    dataset = build_dataset(SPEC)
    log_from = SPEC.log_from
    assert log_from is not None
    assert dataset.deletions
    assert all(when >= log_from for _, _, when in dataset.deletions)
    assert any(m.edit_timestamp for m in dataset.messages)
    assert any(m.reply_to_id for m in dataset.messages)
    assert len(dataset.messages) < SPEC.messages  # deleted ones are gone
    assert dataset == build_dataset(SPEC)


def test_a_message_row_dated_past_2038_is_read_and_one_past_2106_refused() -> None:
    """Dataset dates are 64-bit; a message's own stops where the client's keys do."""
    late = StoreMessage(PeerId(5), 0, 1, 2**31 + 5, edit_timestamp=2**40, text="late")
    assert message_from_row(message_to_row(late)) == late
    too_late = message_to_row(late._replace(timestamp=2**32))
    with pytest.raises(DatasetError, match=r"timestamp 4294967296 is outside 0\.\.4294967295"):
        message_from_row(too_late)
