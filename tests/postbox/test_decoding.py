"""Every decoder of stored keys and values, fed damaged copies of real encodings.

A bit flipped, a value cut short, bytes added or overwritten: each decoder either gives
something back or raises ``CorruptValueError``, never ``struct.error``, ``IndexError``,
``UnicodeDecodeError`` or another foreign exception.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import (
    CachedPeerData,
    ChannelState,
    ChatInterfaceState,
    ChatListInclusion,
    ChatListIndex,
    CorruptValueError,
    ForwardInfo,
    Glyph,
    GlyphShape,
    ItemCollectionInfo,
    ItemCollectionItem,
    Media,
    MediaKind,
    MessageId,
    MessageIndex,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    PresenceStatus,
    ScrollPosition,
    StateCursor,
    StoreMessage,
    SynchronizeableDraft,
)
from postbox.chat_list import ChatListEntryType, chat_list_key, decode_chat_list_key
from postbox.keys import (
    decode_int32,
    decode_int64,
    decode_item_collection_info_key,
    decode_item_collection_item_key,
    decode_message_id_key,
    decode_message_index_key,
    decode_peer_thread_key,
    encode_int32,
    encode_int64,
    item_collection_info_key,
    item_collection_item_key,
    message_id_key,
    message_index_key,
    peer_thread_key,
)
from postbox.message import Message
from postbox.message_failure import MessageFailure
from postbox.read_state import CombinedPeerReadState
from postbox.tables.chat_list_index_table import ChatListPeerState

ALICE = PeerId.make(PeerNamespace.USER, 42)
CHANNEL = PeerId.make(PeerNamespace.CHANNEL, 7)
INDEX = MessageIndex(MessageId(CHANNEL, 0, 1234), 1_700_000_000)

#: (name, a real encoding, the decoder that reads it back).
Case = tuple[str, bytes, Callable[[bytes], object]]

KEYS: list[Case] = [
    ("int32", encode_int32(-5), decode_int32),
    ("int64", encode_int64(int(ALICE)), decode_int64),
    ("message index", message_index_key(INDEX), decode_message_index_key),
    ("message id", message_id_key(INDEX.id), decode_message_id_key),
    ("peer thread", peer_thread_key(ALICE, 3), decode_peer_thread_key),
    ("item collection info", item_collection_info_key(1, 2), decode_item_collection_info_key),
    ("item collection item", item_collection_item_key(1, 99, 2), decode_item_collection_item_key),
    (
        "chat list",
        chat_list_key(0, ChatListIndex(3, INDEX), ChatListEntryType.MESSAGE),
        decode_chat_list_key,
    ),
]

_MESSAGE = StoreMessage(
    CHANNEL, 0, 1234, 1_700_000_000, flags=1, tags=2, author_id=ALICE, text="héllo ✓",
    media=(Media(MediaKind.STICKER, 5, 10, glyph=Glyph("🐱", GlyphShape.CIRCLE, 0xFF00, 1)),),
    reply_to_id=1200, edit_timestamp=1_700_000_100, globally_unique_id=77, thread_id=9,
    forward_info=ForwardInfo(ALICE, 1_600_000_000),
)  # fmt: skip
_PLAIN = StoreMessage(CHANNEL, 0, 1234, 1_700_000_000, text="plain")
_READ = CombinedPeerReadState(((0, PeerReadState(10, 9, 12, 2, True)),))
_INTERFACE = ChatInterfaceState(
    SynchronizeableDraft("draft", 4, 1_700_000_000), ScrollPosition(12, -30), (1, 2)
)
_ITEM = ItemCollectionItem(2, Media(MediaKind.STICKER, 8, glyph=Glyph("🐶", GlyphShape.STAR, 1, 2)))
_CHAT = ChatListPeerState(ALICE, ChatListInclusion(PeerGroupId.ROOT, 2, 5), INDEX)

VALUES: list[Case] = [
    ("message", _MESSAGE.encode(), lambda data: Message.decode(INDEX, data)),
    ("plain message", _PLAIN.encode(), lambda data: Message.decode(INDEX, data)),
    ("read state", _READ.encode(), CombinedPeerReadState.decode),
    ("chat interface state", _INTERFACE.encode(), ChatInterfaceState.decode),
    ("message failure", MessageFailure("E", "why", (1, "x")).encode(), MessageFailure.decode),
    ("state cursor", StateCursor(pts=10, qts=2, seq=3, date=4).encode(), StateCursor.decode),
    ("channel state", ChannelState(42).encode(), ChannelState.decode),
    ("peer", Peer(ALICE, "Alice").encode(), lambda data: Peer.decode(int(ALICE), data)),
    ("presence", PeerPresence(PresenceStatus.ONLINE, 5).encode(), PeerPresence.decode),
    ("cached data", CachedPeerData(about="a", participant_count=3).encode(), CachedPeerData.decode),
    (
        "notification settings",
        PeerNotificationSettings(muted_until=5).encode(),
        PeerNotificationSettings.decode,
    ),
    (
        "item collection info",
        ItemCollectionInfo("Pack", 2, 5, "pack", 9).encode(99),
        ItemCollectionInfo.decode,
    ),
    ("item collection item", _ITEM.encode(), lambda data: ItemCollectionItem.decode(2, data)),
    ("chat list index", _CHAT.encode(), lambda data: ChatListPeerState.decode(int(ALICE), data)),
]

CASES = KEYS + VALUES


@pytest.mark.parametrize(("name", "encoded", "decode"), CASES, ids=[case[0] for case in CASES])
def test_each_encoding_reads_back(name: str, encoded: bytes, decode: Callable[[bytes], object]):
    decode(encoded)


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, bytes, Callable[[bytes], object]]:
    name, encoded, decode = draw(st.sampled_from(CASES))
    data = bytearray(encoded)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "grow", "set", "insert"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:]
        elif kind == "grow":
            data += draw(st.binary(min_size=1, max_size=8))
        elif kind == "set" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
    return name, bytes(data), decode


@settings(max_examples=1500, deadline=None)
@given(damaged())
def test_a_damaged_encoding_decodes_or_is_a_corrupt_value(
    case: tuple[str, bytes, Callable[[bytes], object]],
) -> None:
    _name, data, decode = case
    with contextlib.suppress(CorruptValueError):
        decode(data)


@pytest.mark.parametrize(("name", "encoded", "decode"), KEYS, ids=[case[0] for case in KEYS])
def test_a_key_stored_as_text_is_a_corrupt_value(
    name: str, encoded: bytes, decode: Callable[[bytes], object]
) -> None:
    with pytest.raises(CorruptValueError, match="malformed"):
        decode(encoded.hex())  # type: ignore[arg-type]  # what a damaged row can hold
