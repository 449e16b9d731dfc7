"""Rows of the dataset directory: their columns, and converting and checking each row.

Every row is a plain msgpack array (ints, strings, ``None``, nested arrays) in the column
order of ``COLUMNS``; ``message_to_row`` and ``message_from_row`` convert messages, the
``check_*`` functions refuse a malformed row with a ``RowError`` that the reader turns
into a ``DatasetError`` naming the file and the row. The format itself is described in
``dataset.files``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from postbox import (
    MAX_TIMESTAMP,
    MIN_TIMESTAMP,
    Media,
    MediaKind,
    Peer,
    PeerId,
    PresenceStatus,
    StoreMessage,
)

__all__ = [
    "DatasetError",
    "DatasetExistsError",
    "COLUMNS",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "MEDIA_KINDS",
    "MessageRow",
    "PRESENCE_STATUSES",
    "RowError",
    "TableCheck",
    "build_message",
    "check_deletion",
    "check_group_members",
    "check_notification_settings",
    "check_peer_list",
    "check_presence",
    "check_read_state",
    "message_checker",
    "message_from_row",
    "message_to_row",
    "peer_checker",
    "peer_from_row",
    "peer_to_row",
]


class DatasetError(Exception):
    """The root of the package's errors: a dataset directory that is missing, incomplete
    or breaks the format.

        DatasetError
        ├── DatasetExistsError   writing over a directory that holds something
        └── RowError             one row breaks the format (the caller names where)
    """


class DatasetExistsError(DatasetError, FileExistsError):
    """``write_dataset`` was asked to write over a directory that holds something."""


#: The columns of every row file, in order; ``messages.media`` is the nested media array.
COLUMNS: Mapping[str, tuple[str, ...]] = {
    "peers": ("id", "name", "username", "access_hash", "flags", "associated_peer_id"),
    "messages": (
        "peer_id",
        "namespace",
        "id",
        "timestamp",
        "flags",
        "tags",
        "author_id",
        "text",
        "media",
        "reply_to_id",
        "edit_timestamp",
        "globally_unique_id",
        "thread_id",
    ),
    "messages.media": ("kind", "id", "size", "url", "title"),
    "group_members": ("group_id", "member_ids"),
    "read_states": (
        "peer_id",
        "max_incoming_read_id",
        "max_outgoing_read_id",
        "max_known_id",
        "count",
        "marked_unread",
    ),
    "pinned": ("peer_id",),
    "archived": ("peer_id",),
    "notification_settings": ("peer_id", "muted_until", "sound", "show_previews"),
    "presences": ("peer_id", "status", "timestamp"),
    "deletions": ("peer_id", "id", "timestamp"),
}

#: A message row: plain msgpack values in ``COLUMNS["messages"]`` order.
MessageRow = tuple[Any, ...]
#: Checks one row of a table against the peers (``None``: no reference check).
TableCheck = Callable[[Any, Mapping[int, Any] | None], None]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

MEDIA_KINDS = {int(kind): kind for kind in MediaKind}
PRESENCE_STATUSES = {int(status): status for status in PresenceStatus}


class RowError(DatasetError):
    """A row that breaks the format; the caller adds the file and the row number."""


# -- rows -----------------------------------------------------------------------


def message_to_row(message: StoreMessage) -> MessageRow:
    """The row of ``message``: plain ints, strings, None and tuples (msgpack arrays)."""
    author_id = message.author_id
    return (
        int(message.peer_id),
        int(message.namespace),
        message.id,
        message.timestamp,
        int(message.flags),
        int(message.tags),
        None if author_id is None else int(author_id),
        message.text,
        tuple((int(m.kind), m.id, m.size, m.url, m.title) for m in message.media),
        message.reply_to_id,
        message.edit_timestamp,
        message.globally_unique_id,
        message.thread_id,
    )


def message_from_row(row: Sequence[Any]) -> StoreMessage:
    """The message of a row (a tuple or list); ``DatasetError`` if the row is malformed."""
    try:
        _check_message(row, None)
    except RowError as error:
        raise DatasetError(f"malformed message row: {error}") from None
    return build_message(row)


def build_message(row: Sequence[Any]) -> StoreMessage:
    """The message of a checked row."""
    (peer_id, namespace, id_, timestamp, flags, tags, author_id, text, media, *rest) = row
    reply_to_id, edit_timestamp, unique_id, thread_id = rest
    return StoreMessage(
        PeerId(peer_id),
        namespace,
        id_,
        timestamp,
        flags,
        tags,
        None if author_id is None else PeerId(author_id),
        text,
        tuple(Media(MEDIA_KINDS[m[0]], m[1], m[2], m[3], m[4]) for m in media),
        reply_to_id,
        edit_timestamp,
        unique_id,
        thread_id,
    )


def _type_name(value: Any) -> str:
    return "nil" if value is None else type(value).__name__


def _shape(value: Any, what: str, width: int) -> None:
    if not isinstance(value, tuple | list):
        raise RowError(f"{what} must be an array, not {_type_name(value)}")
    if len(value) != width:
        raise RowError(f"{what} has {len(value)} columns, not {width}")


def _int(value: Any, column: str, low: int, high: int) -> None:
    # bool is an int subclass, but a different msgpack type.
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        raise RowError(f"{column} must be an integer, not {_type_name(value)}")
    if not low <= value <= high:
        raise RowError(f"{column} {value} is outside {low}..{high}")


def _optional_int(value: Any, column: str, low: int, high: int) -> None:
    if value is not None:
        _int(value, column, low, high)


def _str(value: Any, column: str) -> None:
    if type(value) is not str:
        raise RowError(f"{column} must be a string, not {_type_name(value)}")


def _optional_str(value: Any, column: str) -> None:
    if value is not None and type(value) is not str:
        raise RowError(f"{column} must be a string or nil, not {_type_name(value)}")


def _bool(value: Any, column: str) -> None:
    if type(value) is not bool:
        raise RowError(f"{column} must be a boolean, not {_type_name(value)}")


def _peer(value: Any, column: str, known: Mapping[int, Any] | None) -> None:
    _int(value, column, 0, INT64_MAX)
    if known is not None and value not in known:
        raise RowError(f"{column} {value} names no row of peers")


def _plain_message(row: Any, known: Mapping[int, Any] | None) -> bool:
    """The common case in one expression: every column well-typed and in range. A row
    this refuses goes through the detailed checks, which say what is wrong."""
    if type(row) not in (tuple, list) or len(row) != 13:
        return False
    peer_id, namespace, id_, timestamp, flags, tags, author_id, text, media, *rest = row
    reply_to_id, edit_timestamp, unique_id, thread_id = rest
    if not (
        type(peer_id) is int
        and 0 <= peer_id <= INT64_MAX
        and type(namespace) is int
        and INT32_MIN <= namespace <= INT32_MAX
        and type(id_) is int
        and INT32_MIN <= id_ <= INT32_MAX
        and type(timestamp) is int
        and MIN_TIMESTAMP <= timestamp <= MAX_TIMESTAMP
        and type(flags) is int
        and 0 <= flags <= INT32_MAX
        and type(tags) is int
        and 0 <= tags <= INT32_MAX
        and (author_id is None or (type(author_id) is int and 0 <= author_id <= INT64_MAX))
        and type(text) is str
        and type(media) in (tuple, list)
        and (
            reply_to_id is None
            or (type(reply_to_id) is int and INT32_MIN <= reply_to_id <= INT32_MAX)
        )
        and (
            edit_timestamp is None
            or (type(edit_timestamp) is int and INT32_MIN <= edit_timestamp <= INT64_MAX)
        )
        and unique_id is None
        and thread_id is None
    ):
        return False
    if known is not None and (
        peer_id not in known or (author_id is not None and author_id not in known)
    ):
        return False
    for item in media:
        if type(item) not in (tuple, list) or len(item) != 5:
            return False
        kind, media_id, size, url, title = item
        if not (
            type(kind) is int
            and kind in MEDIA_KINDS
            and type(media_id) is int
            and INT64_MIN <= media_id <= INT64_MAX
            and type(size) is int
            and 0 <= size <= INT64_MAX
            and (url is None or type(url) is str)
            and (title is None or type(title) is str)
        ):
            return False
    return True


def _check_message(row: Any, known: Mapping[int, Any] | None) -> None:
    if _plain_message(row, known):
        return
    _shape(row, "a message row", 13)
    peer_id, namespace, id_, timestamp, flags, tags, author_id, text, media, *rest = row
    reply_to_id, edit_timestamp, unique_id, thread_id = rest
    _peer(peer_id, "peer_id", known)
    _int(namespace, "namespace", INT32_MIN, INT32_MAX)
    _int(id_, "id", INT32_MIN, INT32_MAX)
    _int(timestamp, "timestamp", MIN_TIMESTAMP, MAX_TIMESTAMP)
    _int(flags, "flags", 0, INT32_MAX)
    _int(tags, "tags", 0, INT32_MAX)
    if author_id is not None:
        _peer(author_id, "author_id", known)
    _str(text, "text")
    if not isinstance(media, tuple | list):
        raise RowError(f"media must be an array, not {_type_name(media)}")
    for item in media:
        _shape(item, "a media item", 5)
        kind, media_id, size, url, title = item
        _int(kind, "media kind", 0, INT32_MAX)
        if kind not in MEDIA_KINDS:
            raise RowError(f"media kind {kind} is unknown")
        _int(media_id, "media id", INT64_MIN, INT64_MAX)
        _int(size, "media size", 0, INT64_MAX)
        _optional_str(url, "media url")
        _optional_str(title, "media title")
    _optional_int(reply_to_id, "reply_to_id", INT32_MIN, INT32_MAX)
    _optional_int(edit_timestamp, "edit_timestamp", INT32_MIN, INT64_MAX)
    _optional_int(unique_id, "globally_unique_id", INT64_MIN, INT64_MAX)
    _optional_int(thread_id, "thread_id", INT64_MIN, INT64_MAX)


def message_checker(known: Mapping[int, Any] | None) -> Callable[[Any], None]:
    """Checks message rows one after another, including their order."""
    previous: tuple[int, int, int, int] | None = None

    def check(row: Any) -> None:
        nonlocal previous
        _check_message(row, known)
        key = (row[0], row[1], row[3], row[2])
        if previous is not None and key <= previous:
            raise RowError(
                f"message (peer_id, namespace, timestamp, id) {key} does not come after "
                f"{previous}: messages must be sorted and unique"
            )
        previous = key

    return check


def peer_checker(self_peer_id: int) -> Callable[[Any], None]:
    seen: set[int] = set()

    def check(row: Any) -> None:
        _shape(row, "a peers row", 6)
        peer_id, name, username, access_hash, flags, associated = row
        _peer(peer_id, "id", None)
        if peer_id in seen:
            raise RowError(f"peer id {peer_id} appears twice")
        seen.add(peer_id)
        _str(name, "name")
        _optional_str(username, "username")
        _int(access_hash, "access_hash", INT64_MIN, INT64_MAX)
        _int(flags, "flags", 0, INT32_MAX)
        if associated is not None:
            _peer(associated, "associated_peer_id", None)

    return check


def peer_to_row(peer: Peer) -> tuple[Any, ...]:
    associated = peer.associated_peer_id
    return (
        int(peer.id),
        peer.name,
        peer.username,
        peer.access_hash,
        int(peer.flags),
        None if associated is None else int(associated),
    )


def peer_from_row(row: Sequence[Any]) -> Peer:
    peer_id, name, username, access_hash, flags, associated = row
    return Peer(
        PeerId(peer_id),
        name,
        username,
        access_hash,
        flags,
        None if associated is None else PeerId(associated),
    )


def check_group_members(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a group_members row", 2)
    group_id, members = row
    _peer(group_id, "group_id", known)
    if not isinstance(members, tuple | list):
        raise RowError(f"member_ids must be an array, not {_type_name(members)}")
    for member in members:
        _peer(member, "member id", known)


def check_read_state(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a read_states row", 6)
    peer_id, incoming, outgoing, max_known, count, marked = row
    _peer(peer_id, "peer_id", known)
    _int(incoming, "max_incoming_read_id", INT32_MIN, INT32_MAX)
    _int(outgoing, "max_outgoing_read_id", INT32_MIN, INT32_MAX)
    _int(max_known, "max_known_id", INT32_MIN, INT32_MAX)
    _int(count, "count", 0, INT32_MAX)
    _bool(marked, "marked_unread")


def check_peer_list(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a row", 1)
    _peer(row[0], "peer_id", known)


def check_notification_settings(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a notification_settings row", 4)
    peer_id, muted_until, sound, show_previews = row
    _peer(peer_id, "peer_id", known)
    _int(muted_until, "muted_until", INT32_MIN, INT32_MAX)
    _optional_str(sound, "sound")
    _bool(show_previews, "show_previews")


def check_presence(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a presences row", 3)
    peer_id, status, timestamp = row
    _peer(peer_id, "peer_id", known)
    _int(status, "status", 0, INT32_MAX)
    if status not in PRESENCE_STATUSES:
        raise RowError(f"presence status {status} is unknown")
    _int(timestamp, "timestamp", INT32_MIN, INT64_MAX)


def check_deletion(row: Any, known: Mapping[int, Any] | None) -> None:
    _shape(row, "a deletions row", 3)
    peer_id, id_, timestamp = row
    _peer(peer_id, "peer_id", known)
    _int(id_, "id", INT32_MIN, INT32_MAX)
    _int(timestamp, "timestamp", INT32_MIN, INT64_MAX)
