"""Binary keys whose byte order is numeric order.

Every integer is written big-endian with its sign bit flipped, so SQLite's
memcmp ordering of BLOB keys equals the numeric ordering of the fields,
negative numbers included. Timestamps are the exception: never negative, they are
written unsigned, so their 4 bytes reach 2106 rather than 2038. Each key layout has
one precompiled ``Struct``. A stored key of the wrong length decodes to a
``CorruptValueError``, never ``struct.error``.
"""

from __future__ import annotations

import struct

from postbox.errors import CorruptValueError
from postbox.ids import MessageId, MessageIndex, PeerId

__all__ = [
    "decode_int32",
    "decode_int64",
    "decode_item_collection_info_key",
    "decode_item_collection_item_key",
    "decode_message_id_key",
    "decode_message_index_key",
    "decode_peer_thread_key",
    "encode_int32",
    "encode_int64",
    "item_collection_info_key",
    "item_collection_item_key",
    "item_collection_items_prefix",
    "message_id_key",
    "message_index_key",
    "peer_namespace_prefix",
    "peer_prefix",
    "peer_thread_key",
    "successor",
    "wrong_key",
]

O32 = 0x8000_0000
O64 = 0x8000_0000_0000_0000

INT32 = struct.Struct(">I")
INT64 = struct.Struct(">Q")
#: peer(8) namespace(4)
PEER_NAMESPACE = struct.Struct(">QI")
#: peer(8) namespace(4) id(4)
MESSAGE_ID = struct.Struct(">QII")
#: peer(8) namespace(4) timestamp(4) id(4)
MESSAGE_INDEX = struct.Struct(">QIII")
#: The message key after its peer(8) namespace(4) prefix.
TIMESTAMP_ID = struct.Struct(">II")
#: peer(8) thread(8): a chat's or a forum topic's own record.
PEER_THREAD = struct.Struct(">QQ")
#: namespace(4) index(4): a collection's place in its namespace's ordered list.
ITEM_COLLECTION_INFO = struct.Struct(">II")
#: namespace(4) collection id(8) item index(4)
ITEM_COLLECTION_ITEM = struct.Struct(">IQI")
#: namespace(4) collection id(8): the prefix of a collection's items.
ITEM_COLLECTION = struct.Struct(">IQ")


def wrong_key(what: str, key: bytes, error: Exception) -> CorruptValueError:
    """The error for a stored ``what`` key that its layout cannot decode."""
    shown = bytes(key[:32]).hex() if isinstance(key, bytes | bytearray) else f"{key!r:.40}"
    return CorruptValueError(f"stored {what} key {shown} is malformed: {error}")


def encode_int32(value: int) -> bytes:
    return INT32.pack(value + O32)


def decode_int32(data: bytes, offset: int = 0) -> int:
    try:
        return int(INT32.unpack_from(data, offset)[0]) - O32
    except (struct.error, TypeError) as error:
        raise wrong_key("number", data, error) from error


def encode_int64(value: int) -> bytes:
    return INT64.pack(value + O64)


def decode_int64(data: bytes, offset: int = 0) -> int:
    try:
        return int(INT64.unpack_from(data, offset)[0]) - O64
    except (struct.error, TypeError) as error:
        raise wrong_key("number", data, error) from error


def peer_prefix(peer_id: int) -> bytes:
    return INT64.pack(peer_id + O64)


def peer_namespace_prefix(peer_id: int, namespace: int) -> bytes:
    return PEER_NAMESPACE.pack(peer_id + O64, namespace + O32)


def peer_thread_key(peer_id: int, thread_id: int) -> bytes:
    """peer(8) thread(8); thread 0 is the chat itself."""
    return PEER_THREAD.pack(peer_id + O64, thread_id + O64)


def decode_peer_thread_key(key: bytes) -> tuple[PeerId, int]:
    try:
        peer, thread = PEER_THREAD.unpack(key)
    except (struct.error, TypeError) as error:
        raise wrong_key("chat thread", key, error) from error
    return PeerId(peer - O64), thread - O64


def message_id_key(message_id: MessageId) -> bytes:
    """peer(8) namespace(4) id(4)."""
    peer_id, namespace, id_ = message_id
    return MESSAGE_ID.pack(peer_id + O64, namespace + O32, id_ + O32)


def decode_message_id_key(key: bytes, offset: int = 0) -> MessageId:
    try:
        peer, namespace, id_ = MESSAGE_ID.unpack_from(key, offset)
    except (struct.error, TypeError) as error:
        raise wrong_key("message id", key, error) from error
    return MessageId(PeerId(peer - O64), namespace - O32, id_ - O32)


def message_index_key(index: MessageIndex) -> bytes:
    """peer(8) namespace(4) timestamp(4) id(4): the message history key."""
    (peer_id, namespace, id_), timestamp = index
    return MESSAGE_INDEX.pack(peer_id + O64, namespace + O32, timestamp, id_ + O32)


def decode_message_index_key(key: bytes, offset: int = 0) -> MessageIndex:
    try:
        peer, namespace, timestamp, id_ = MESSAGE_INDEX.unpack_from(key, offset)
    except (struct.error, TypeError) as error:
        raise wrong_key("message", key, error) from error
    return MessageIndex(MessageId(PeerId(peer - O64), namespace - O32, id_ - O32), timestamp)


def item_collection_info_key(namespace: int, index: int) -> bytes:
    """namespace(4) index(4)."""
    return ITEM_COLLECTION_INFO.pack(namespace + O32, index + O32)


def decode_item_collection_info_key(key: bytes) -> tuple[int, int]:
    """(namespace, index) of an info key."""
    try:
        namespace, index = ITEM_COLLECTION_INFO.unpack(key)
    except (struct.error, TypeError) as error:
        raise wrong_key("item collection info", key, error) from error
    return namespace - O32, index - O32


def item_collection_items_prefix(namespace: int, collection_id: int) -> bytes:
    """namespace(4) collection id(8): every item key of the collection starts with it."""
    return ITEM_COLLECTION.pack(namespace + O32, collection_id + O64)


def item_collection_item_key(namespace: int, collection_id: int, index: int) -> bytes:
    """namespace(4) collection id(8) item index(4)."""
    return ITEM_COLLECTION_ITEM.pack(namespace + O32, collection_id + O64, index + O32)


def decode_item_collection_item_key(key: bytes) -> tuple[int, int, int]:
    """(namespace, collection id, item index) of an item key."""
    try:
        namespace, collection_id, index = ITEM_COLLECTION_ITEM.unpack(key)
    except (struct.error, TypeError) as error:
        raise wrong_key("item collection item", key, error) from error
    return namespace - O32, collection_id - O64, index - O32


def successor(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with ``prefix``."""
    data = bytearray(prefix)
    while data:
        if data[-1] != 0xFF:
            data[-1] += 1
            return bytes(data)
        data.pop()
    raise ValueError("a prefix of only 0xFF bytes has no successor")
