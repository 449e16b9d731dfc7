"""Binary keys: byte order equals numeric order, negative numbers included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from postbox import MessageId, MessageIndex, PeerId
from postbox.chat_list import (
    ChatListEntryType,
    ChatListIndex,
    chat_list_key,
    decode_chat_list_key,
)
from postbox.ids import MAX_TIMESTAMP, MIN_TIMESTAMP
from postbox.keys import (
    decode_int32,
    decode_int64,
    decode_message_id_key,
    decode_message_index_key,
    encode_int32,
    encode_int64,
    message_id_key,
    message_index_key,
    successor,
)

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
#: Message timestamps: unsigned 32-bit, so past 2038 (through 2106).
timestamps = st.integers(MIN_TIMESTAMP, MAX_TIMESTAMP)
peer_ids = st.integers(0, 2**62).map(PeerId)
message_indices = st.builds(
    lambda peer, namespace, id_, timestamp: MessageIndex(
        MessageId(peer, namespace, id_), timestamp
    ),
    peer_ids,
    st.integers(0, 3),
    int32,
    timestamps,
)


@given(int32, int32)
def test_int32_byte_order_is_numeric_order(a: int, b: int) -> None:
    assert (encode_int32(a) < encode_int32(b)) == (a < b)
    assert decode_int32(encode_int32(a)) == a


@given(int64, int64)
def test_int64_byte_order_is_numeric_order(a: int, b: int) -> None:
    assert (encode_int64(a) < encode_int64(b)) == (a < b)
    assert decode_int64(encode_int64(a)) == a


def test_negative_numbers_sort_before_positive() -> None:
    values = [-(2**31), -70000, -1, 0, 1, 255, 256, 2**31 - 1]
    assert sorted(values, key=encode_int32) == values
    assert sorted(reversed(values), key=encode_int32) == values


@given(message_indices, message_indices)
def test_message_key_orders_by_peer_namespace_timestamp_id(
    a: MessageIndex, b: MessageIndex
) -> None:
    expected = (a.id.peer_id, a.id.namespace, a.timestamp, a.id.id) < (
        b.id.peer_id,
        b.id.namespace,
        b.timestamp,
        b.id.id,
    )
    assert (message_index_key(a) < message_index_key(b)) == expected
    assert len(message_index_key(a)) == 20
    assert decode_message_index_key(message_index_key(a)) == a


@given(message_indices)
def test_message_id_key_round_trips(index: MessageIndex) -> None:
    key = message_id_key(index.id)
    assert len(key) == 16
    assert decode_message_id_key(key) == index.id


@given(st.binary(min_size=1, max_size=6).filter(lambda b: b != b"\xff" * len(b)), st.binary())
def test_successor_bounds_every_key_with_the_prefix(prefix: bytes, rest: bytes) -> None:
    assert prefix + rest < successor(prefix)
    assert prefix < successor(prefix)


def test_message_index_orders_by_time_then_namespace_id_peer() -> None:
    peer_a, peer_b = PeerId(1), PeerId(2)
    older = MessageIndex(MessageId(peer_b, 0, 50), 100)
    newer = MessageIndex(MessageId(peer_a, 0, 10), 200)
    assert older < newer
    same_time = MessageIndex(MessageId(peer_a, 0, 60), 100)
    assert older < same_time
    assert sorted([newer, same_time, older]) == [older, same_time, newer]


chat_list_indices = st.builds(
    ChatListIndex,
    st.none() | st.integers(0, 100),
    message_indices.filter(lambda i: i.id.peer_id < 2**63),
)


@given(chat_list_indices, chat_list_indices)
def test_chat_list_key_order_matches_index_order(a: ChatListIndex, b: ChatListIndex) -> None:
    key_a = chat_list_key(0, a, ChatListEntryType.MESSAGE)
    key_b = chat_list_key(0, b, ChatListEntryType.MESSAGE)
    assert (key_a < key_b) == (a.order < b.order)
    assert decode_chat_list_key(key_a) == (0, a, ChatListEntryType.MESSAGE)


def test_pinned_chats_sort_above_unpinned_lowest_pinning_index_first() -> None:
    peer = PeerId(5)
    recent = ChatListIndex(None, MessageIndex(MessageId(peer, 0, 9), 2_000_000_000))
    pinned_first = ChatListIndex(0, MessageIndex(MessageId(peer, 0, 1), 10))
    pinned_second = ChatListIndex(1, MessageIndex(MessageId(peer, 0, 1), 1_000_000_000))
    keys = {
        name: chat_list_key(0, index, ChatListEntryType.MESSAGE)
        for name, index in [("recent", recent), ("p0", pinned_first), ("p1", pinned_second)]
    }
    top_down = sorted(keys, key=keys.__getitem__, reverse=True)
    assert top_down == ["p0", "p1", "recent"]
