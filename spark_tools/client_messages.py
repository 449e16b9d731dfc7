"""The messages of a seeded client file, written straight into Postbox's tables.

``client_message`` turns a dataset row into everything Postbox stores for the message,
with Postbox's own key and value functions: its history key and value, its id-index
key and value (less the full-text rowid), its tag-index keys and its text to index.
It is a pure function, so Spark tasks compute it and Spark sorts the results by the
history key (``sorted_client_messages``); ``write_client_messages`` then inserts them
in that order with plain ``executemany`` calls, the journal off, numbering the
full-text rows as Postbox would have (in key order, from 1).

``write_client_holes`` writes each chat's history holes as they end up once the chat's
stored messages are known (everything below the lowest of them missing, in every hole
space) and marks the chat's holes initialized, so Postbox adds none of its own. What
``Transaction.add_messages`` does per chat besides (its read state, its place in the
chat list) is left to a Postbox transaction that adds each chat's newest message
(``client_db``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apsw

from dataset import MessageRow, build_message
from postbox import (
    DEFAULT_SEED_CONFIGURATION,
    MAX_MESSAGE_ID,
    MessageId,
    MessageIndex,
    MessageNamespace,
    MessageTags,
    PeerId,
)
from postbox.keys import INT32, MESSAGE_ID, O32, O64, message_index_key
from postbox.tables.message_history_tags_table import MessageHistoryTagsTable
from postbox.value_box import FullTextTable

__all__ = [
    "CLIENT_MESSAGE_SCHEMA",
    "ClientMessage",
    "client_message",
    "sorted_client_messages",
    "write_client_holes",
    "write_client_messages",
]

#: One message as the client file stores it: history key, history value, id-index key,
#: peer id, id-index value without its text rowid (timestamp, flags), tag-index keys,
#: text for the full-text index ("" for none).
ClientMessage = tuple[bytes, bytes, bytes, int, bytes, tuple[bytes, ...], str]
#: The columns of a ``ClientMessage`` as a Spark DataFrame schema (DDL).
CLIENT_MESSAGE_SCHEMA = (
    "key BINARY, value BINARY, id_key BINARY, peer BIGINT, stamp BINARY, "
    "tags ARRAY<BINARY>, text STRING"
)

#: The id index's value: timestamp(4, unsigned) flags(1), then the text rowid(8).
_STAMP = struct.Struct(">IB")
_ROWID = struct.Struct(">q")
_TEXT_INDEXED = DEFAULT_SEED_CONFIGURATION.text_indexed_peer_namespaces
_FULL_TEXT = FullTextTable("message_text").sql_name
_BATCH = 50_000


def client_message(row: MessageRow) -> ClientMessage:
    """Everything the client file stores for the message of dataset row ``row``."""
    message = build_message(row)
    peer_id, namespace, id_, timestamp = (
        message.peer_id,
        message.namespace,
        message.id or 0,
        message.timestamp,
    )
    index = MessageIndex(MessageId(peer_id, namespace, id_), timestamp)
    tags = tuple(MessageHistoryTagsTable.key(tag, index) for tag in MessageTags.split(message.tags))
    return (
        message_index_key(index),
        message.encode(),
        MESSAGE_ID.pack(peer_id + O64, namespace + O32, id_ + O32),
        int(peer_id),
        _STAMP.pack(timestamp, message.flags & 0xFF),
        tags,
        message.text if peer_id.namespace in _TEXT_INDEXED else "",
    )


def sorted_client_messages(spark: Any, rdd: Any, partitions: int) -> Iterator[ClientMessage]:
    """The ``ClientMessage``s of an RDD of them, sorted by history key by Spark (a
    DataFrame sort: Spark compares binary keys as unsigned bytes, as SQLite does)."""
    frame = spark.createDataFrame(rdd, CLIENT_MESSAGE_SCHEMA)
    if partitions > 1:
        ordered = frame.repartitionByRange(partitions, "key").sortWithinPartitions("key")
    else:  # one sorted task: no sampling job, no shuffle
        ordered = frame.coalesce(1).sortWithinPartitions("key")
    for key, value, id_key, peer, stamp, tags, text in ordered.toLocalIterator():
        yield (
            bytes(key),
            bytes(value),
            bytes(id_key),
            peer,
            bytes(stamp),
            tuple(map(bytes, tags)),
            text,
        )


def write_client_messages(db: apsw.Connection, messages: Iterable[ClientMessage]) -> int:
    """Insert ``messages`` (in history-key order) into the client file's history, id
    index, tag index and full-text index; returns how many. A message already stored
    (a chat's newest, added by a transaction) is replaced by its full row."""
    ((top,),) = db.execute(f"SELECT coalesce(max(rowid), 0) FROM {_FULL_TEXT}").fetchall()
    rowid = int(top)  # type: ignore[arg-type]
    count = 0
    tag_rows: list[bytes] = []
    source = iter(messages)
    while True:
        batch = _take(source)
        if not batch:
            break
        history, index, texts = [], [], []
        for key, value, id_key, peer, stamp, tags, text in batch:
            history.append((key, value))
            if text:
                rowid += 1
                texts.append((rowid, peer, id_key, text))
                index.append((id_key, stamp + _ROWID.pack(rowid)))
            else:
                index.append((id_key, stamp + _NO_ROWID))
            tag_rows.extend(tags)
        db.executemany("INSERT OR REPLACE INTO t_message_history VALUES (?, ?)", history)
        db.executemany("INSERT OR REPLACE INTO t_message_history_index VALUES (?, ?)", index)
        db.executemany(
            f"INSERT INTO {_FULL_TEXT} (rowid, collection, item, contents) VALUES (?, ?, ?, ?)",
            texts,
        )
        count += len(batch)
    tag_rows.sort()
    db.executemany(
        "INSERT OR IGNORE INTO t_message_history_tags VALUES (?, x'')", ((key,) for key in tag_rows)
    )
    return count


_NO_ROWID = _ROWID.pack(0)
#: The hole index's key, peer(8) namespace(4) space(4) upper(4), and the history
#: metadata's "holes initialized" key, kind(1) peer(8), as Postbox writes them.
_HOLE_KEY = struct.Struct(">QIII")
_INITIALIZED_KEY = struct.Struct(">BQ")
_INITIALIZED = 1
_EVERYWHERE_TAG = 0


def write_client_holes(db: apsw.Connection, lowest: Iterable[tuple[PeerId, int]]) -> None:
    """Write the holes of each chat whose lowest stored cloud message id is ``lowest``
    (all of its history below that is missing), as Postbox keeps them after its initial
    holes and a removal of ``lowest..MAX_MESSAGE_ID``; mark the chats' holes initialized."""
    seed = DEFAULT_SEED_CONFIGURATION
    holes: list[tuple[bytes, bytes]] = []
    flags: list[tuple[bytes, bytes]] = []
    for peer_id, lowest_id in lowest:
        flags.append((_INITIALIZED_KEY.pack(_INITIALIZED, peer_id + O64), b"\x01"))
        for namespace in seed.hole_namespaces(peer_id.namespace):
            upper = MAX_MESSAGE_ID
            if namespace == MessageNamespace.CLOUD:
                upper = lowest_id - 1
            if upper < 1:
                continue
            tags = (_EVERYWHERE_TAG, *sorted(seed.hole_tags(peer_id.namespace, namespace)))
            for tag in tags:
                key = _HOLE_KEY.pack(peer_id + O64, namespace + O32, tag, upper + O32)
                holes.append((key, INT32.pack(1 + O32)))
    db.executemany("INSERT INTO t_message_history_metadata VALUES (?, ?)", sorted(flags))
    db.executemany("INSERT INTO t_message_history_holes VALUES (?, ?)", sorted(holes))


def _take(source: Iterator[ClientMessage]) -> Sequence[ClientMessage]:
    batch = []
    for message in source:
        batch.append(message)
        if len(batch) >= _BATCH:
            break
    return batch
