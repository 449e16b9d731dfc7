"""The dataset directory: a ``DemoDataset`` on disk, for the mock server to load.

``dataset.writing.write_dataset`` stores a dataset in a directory and ``read_dataset``
loads it back (equal to the original). ``iter_message_rows`` streams the messages part by part, so
a server can import ten million of them without holding them all; ``message_from_row``
and ``message_to_row`` convert between a row and a ``StoreMessage``. A Spark job can
write the same directory itself by following the format below.

Layout (format "postbox-chat-dataset", version 1)
-------------------------------------------------

::

    DIR/
      manifest.json                  metadata; written last, it marks the dataset complete
      peers.msgpack                  the account's own user and every chat
      group_members.msgpack
      read_states.msgpack
      pinned.msgpack
      archived.msgpack
      notification_settings.msgpack
      presences.msgpack
      deletions.msgpack              (format version 2)
      messages/part-00000.msgpack    messages, in parts of at most ``rows_per_part`` rows
      messages/part-00001.msgpack
      ...

Row files
~~~~~~~~~

Every ``*.msgpack`` file is a plain concatenation of msgpack arrays, one array per
row, with the columns below in this order: no header, no length prefix, no maps.
An empty table is an empty file. Values are only nil, booleans, integers, strings
(msgpack str, UTF-8) and arrays; floats, bin, maps and extension types (the timestamp
extension included) are refused.

Column types, with the Spark type that holds them:

* ``int32``: -2^31..2^31-1 (``IntegerType``); ``uint31``: 0..2^31-1 (``IntegerType``);
* ``int64``: -2^63..2^63-1 (``LongType``);
* ``peer``: a postbox ``PeerId`` value, ``namespace << 56 | id``, 0..2^63-1
  (``LongType``); namespaces are 0 user, 1 group, 2 channel, 3 secret chat;
* ``time``: unix seconds, UTC, as ``int64`` (``LongType``), so past 2038; a message's own
  ``timestamp`` is 0..2^32-1 (through 2106), what the client's history keys hold;
* ``str``, ``bool`` (``StringType``, ``BooleanType``); ``X?`` means X or nil (null).

Tables, their columns and row order:

``peers`` (``peers.msgpack``): the account's own user, whose id is the manifest's
``self_peer_id`` (written first; the reader finds it wherever it is), then the chats
in chat order. Peer ids are unique.
    id ``peer``, name ``str``, username ``str?``, access_hash ``int64``,
    flags ``uint31`` (1 verified, 2 bot, 4 broadcast, 8 self),
    associated_peer_id ``peer?``

``messages`` (``messages/part-NNNNN.msgpack``): sorted strictly ascending by
(peer_id, namespace, timestamp, id) over all parts taken in manifest order, so each
part continues where the previous one ended (in Spark: a global ``orderBy`` of those
columns, one part per partition, listed in partition order). (peer_id, namespace, id)
is unique.
    peer_id ``peer``, namespace ``int32`` (0 cloud, 1 local), id ``int32``,
    timestamp ``time``, flags ``uint31`` (1 incoming, 2 unsent, 4 failed),
    tags ``uint31`` (1 photo, 2 video, 4 file, 8 link, 16 voice), author_id ``peer?``,
    text ``str``, media (an array, often empty, of media arrays, below),
    reply_to_id ``int32?``, edit_timestamp ``time?``, globally_unique_id ``int64?``,
    thread_id ``int64?``

    A media array (``messages.media``): kind ``uint31`` (0 photo, 1 video, 2 file,
    3 voice, 4 link), id ``int64``, size ``int64`` (bytes, >= 0), url ``str?``,
    title ``str?``

``group_members``: one row per group: group_id ``peer``, member_ids (array of ``peer``)

``read_states``: the read state of a chat in the cloud namespace: peer_id ``peer``,
max_incoming_read_id ``int32``, max_outgoing_read_id ``int32``, max_known_id ``int32``,
count ``uint31`` (unread incoming messages), marked_unread ``bool``

``pinned``: peer_id ``peer``, in pinning order. ``archived``: peer_id ``peer``.

``notification_settings``: peer_id ``peer``, muted_until ``time`` (0 not muted,
2^31-1 muted for ever), sound ``str?``, show_previews ``bool``

``presences``: peer_id ``peer``, status ``uint31`` (0 offline, 1 online, 2 recently,
3 long ago), timestamp ``time`` (online until, or last seen; 0 if unknown)

``deletions`` (version 2): messages that were sent before ``log_from`` and deleted at or
after it, in deletion order: peer_id ``peer``, id ``int32``, timestamp ``time`` (when
the message was deleted). The messages themselves are no longer in ``messages``.

Every table other than ``peers`` keeps the dataset's order, and every peer id in them
(and a message's peer_id and author_id) names a row of ``peers``.

manifest.json
~~~~~~~~~~~~~

A JSON object; readers ignore keys they do not know::

    {
      "format": "postbox-chat-dataset",
      "format_version": 1,
      "seed": 7, "days": 30, "now": 1717266600, "self_peer_id": 100123,
      "counts": {"peers": 41, "messages": 2000, "group_members": 6, ...},
      "columns": {"peers": ["id", "name", ...], "messages": [...],
                  "messages.media": ["kind", "id", "size", "url", "title"], ...},
      "files": {
        "peers": [{"path": "peers.msgpack", "rows": 41, "bytes": 2210}],
        "messages": [{"path": "messages/part-00000.msgpack", "rows": 1000, "bytes": 81234},
                     ...],
        ...
      }
    }

Version 2 adds the ``deletions`` table and two optional keys: ``log_from`` (``time``
or null), the first second of the server's update log: every message sent, edited
(``edit_timestamp``) or deleted (``deletions``) from then on is replayed by the server
as an update with its own pts, so a client that synced up to then catches up by
getDifference; and ``keep_dates`` (bool), which asks the server to serve the dates as
they are rather than moving ``now`` to its today (a pre-filled client database
carries the same dates). Version 1 datasets are read as version 2 without deletions,
without a log and with moved dates.

``counts`` holds the rows of every table (``peers`` includes the account's own user);
``columns`` must be exactly ``COLUMNS``; ``files`` lists every table's files in row
order (a table may span several files; an empty message table may have none) with
each file's row count and size in bytes. Paths are relative, with ``/`` separators.

Writing and reading
~~~~~~~~~~~~~~~~~~~

A writer fills a sibling staging directory (``write_dataset`` names it
``.NAME.<random hex>.partial``; one left by a killed writer can be deleted), writes
``manifest.json`` last, then renames the staging directory to ``DIR``; a directory
without ``manifest.json`` is never a dataset. The reader checks everything above
(format and version, columns, each file's size and row count, every row's shape, types
and ranges, the message order and the peer references) and raises ``DatasetError``,
naming the file, for anything else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import msgpack

from dataset.generator import DemoDataset
from dataset.rows import (
    COLUMNS,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    PRESENCE_STATUSES,
    DatasetError,
    DatasetExistsError,
    MessageRow,
    RowError,
    TableCheck,
    build_message,
    check_deletion,
    check_group_members,
    check_notification_settings,
    check_peer_list,
    check_presence,
    check_read_state,
    message_checker,
    message_from_row,
    message_to_row,
    peer_checker,
    peer_from_row,
)
from postbox import (
    Peer,
    PeerId,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    StoreMessage,
)

__all__ = [
    "COLUMNS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "DataFile",
    "DatasetError",
    "DatasetExistsError",
    "Manifest",
    "MessageRow",
    "dataset_directory_problem",
    "iter_message_rows",
    "message_from_row",
    "message_to_row",
    "read_dataset",
    "read_manifest",
]

FORMAT_NAME = "postbox-chat-dataset"
FORMAT_VERSION = 2
#: Versions this reader knows: 1 lacks the deletions table and the log keys.
_READABLE_VERSIONS = (1, 2)
MANIFEST_NAME = "manifest.json"

#: The tables, each stored in its own file(s); the order the writer writes them in.
_TABLES = (
    "peers",
    "group_members",
    "read_states",
    "pinned",
    "archived",
    "notification_settings",
    "presences",
    "deletions",
    "messages",
)
_TABLES_V1 = tuple(table for table in _TABLES if table != "deletions")
_MESSAGES_DIR = "messages"

_READ_SIZE = 1 << 20
_WRITE_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class DataFile:
    """One row file as the manifest lists it: path relative to the dataset directory."""

    path: str
    rows: int
    size: int


@dataclass(frozen=True, slots=True)
class Manifest:
    """The checked contents of ``manifest.json``."""

    seed: int
    days: int
    now: int
    self_peer_id: PeerId
    counts: Mapping[str, int]
    files: Mapping[str, tuple[DataFile, ...]]
    log_from: int | None = None
    keep_dates: bool = False

    @property
    def message_count(self) -> int:
        return self.counts["messages"]


# -- reading --------------------------------------------------------------------


def _refuse_extension(code: int, data: bytes) -> Any:
    raise RowError(f"msgpack extension type {code} is not allowed")


def _manifest_error(directory: Path, problem: str) -> DatasetError:
    return DatasetError(f"{directory / MANIFEST_NAME}: {problem}")


def _manifest_int(
    directory: Path, value: Any, what: str, low: int = INT64_MIN, high: int = INT64_MAX
) -> int:
    if type(value) is not int or not low <= value <= high:
        raise _manifest_error(directory, f"{what} must be an integer in {low}..{high}")
    return value


def _manifest_files(directory: Path, table: str, value: Any) -> tuple[DataFile, ...]:
    if not isinstance(value, list):
        raise _manifest_error(directory, f"files.{table} must be a list")
    result: list[DataFile] = []
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise _manifest_error(directory, f"files.{table} holds an entry without a path")
        path = entry["path"]
        parts = PurePosixPath(path).parts
        if not parts or path.startswith("/") or "\\" in path or ".." in parts:
            raise _manifest_error(directory, f"file path {path!r} must stay inside the dataset")
        rows = _manifest_int(directory, entry.get("rows"), f"rows of {path}", 0)
        size = _manifest_int(directory, entry.get("bytes"), f"bytes of {path}", 0)
        result.append(DataFile(path, rows, size))
    return tuple(result)


def dataset_directory_problem(directory: Path) -> str | None:
    """Why ``directory`` is not a dataset directory at first sight (missing, a file, no
    manifest), in one line; ``None`` if it has a manifest (read it to know more)."""
    try:
        if not directory.exists():
            return f"{directory} does not exist"
        if not directory.is_dir():
            return f"{directory} is a file, not a dataset directory"
        if not (directory / MANIFEST_NAME).is_file():
            return (
                f"{directory} is a directory without {MANIFEST_NAME}, not a dataset"
                " (postbox-seed --out writes one)"
            )
    except OSError as error:  # a name too long, say
        return f"{directory}: {error.strerror}"
    return None


def read_manifest(directory: Path) -> Manifest:
    """The checked manifest of the dataset in ``directory``; ``DatasetError`` if unusable."""
    directory = Path(directory)
    path = directory / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(
            f"{path}: not found; {directory} is not a complete dataset directory"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot be read: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise _manifest_error(directory, "must hold a JSON object")
    if data.get("format") != FORMAT_NAME:
        raise _manifest_error(directory, f"format {data.get('format')!r} is not {FORMAT_NAME!r}")
    version = data.get("format_version")
    if version not in _READABLE_VERSIONS or type(version) is not int:
        raise _manifest_error(
            directory,
            f"format_version {version!r} is not supported (this reader knows "
            f"{', '.join(map(str, _READABLE_VERSIONS))})",
        )
    tables = _TABLES if version >= 2 else _TABLES_V1
    seed = _manifest_int(directory, data.get("seed"), "seed")
    days = _manifest_int(directory, data.get("days"), "days", 0)
    now = _manifest_int(directory, data.get("now"), "now", INT32_MIN, INT64_MAX)
    self_peer_id = _manifest_int(directory, data.get("self_peer_id"), "self_peer_id", 0)
    log_from = data.get("log_from")
    if log_from is not None:
        log_from = _manifest_int(directory, log_from, "log_from", INT32_MIN, INT64_MAX)
    keep_dates = data.get("keep_dates", False)
    if type(keep_dates) is not bool:
        raise _manifest_error(directory, "keep_dates must be true or false")
    columns = data.get("columns")
    expected_columns = {
        name: list(names) for name, names in COLUMNS.items() if name.split(".")[0] in tables
    }
    if columns != expected_columns:
        if not isinstance(columns, dict):
            raise _manifest_error(directory, "columns must be an object")
        for name, names in expected_columns.items():
            if columns.get(name) != names:
                raise _manifest_error(
                    directory,
                    f"columns of {name} are {columns.get(name)!r}, format version "
                    f"{version} has {names!r}",
                )
        raise _manifest_error(directory, f"columns name unknown tables: {sorted(columns)}")
    counts_data = data.get("counts")
    files_data = data.get("files")
    if not isinstance(counts_data, dict) or not isinstance(files_data, dict):
        raise _manifest_error(directory, "counts and files must be objects")
    if set(counts_data) != set(tables) or set(files_data) != set(tables):
        raise _manifest_error(
            directory, f"counts and files must list exactly the tables {sorted(tables)}"
        )
    counts: dict[str, int] = {"deletions": 0}
    files: dict[str, tuple[DataFile, ...]] = {"deletions": ()}
    for table in tables:
        counts[table] = _manifest_int(directory, counts_data[table], f"counts.{table}", 0)
        files[table] = _manifest_files(directory, table, files_data[table])
        listed = sum(file.rows for file in files[table])
        if listed != counts[table]:
            raise _manifest_error(
                directory,
                f"counts.{table} is {counts[table]}, but its files hold {listed} rows",
            )
    return Manifest(seed, days, now, PeerId(self_peer_id), counts, files, log_from, keep_dates)


def _read_rows(
    directory: Path, file: DataFile, check: Callable[[Any], None]
) -> Iterator[tuple[Any, ...]]:
    """The rows of one file, each passed to ``check``; ``DatasetError`` names the file."""
    path = directory / file.path
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise DatasetError(f"{path}: missing (the manifest lists it)") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read: {error.strerror}") from None
    if size != file.size:
        hint = " (truncated?)" if size < file.size else ""
        raise DatasetError(f"{path}: has {size} bytes, the manifest says {file.size}{hint}")
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below, also when abandoned
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read: {error.strerror}") from None
    with stream:
        unpacker = msgpack.Unpacker(
            stream,
            read_size=_READ_SIZE,
            use_list=False,
            raw=False,
            strict_map_key=True,
            ext_hook=_refuse_extension,
        )
        for number in range(file.rows):
            try:
                row = unpacker.unpack()
            except msgpack.OutOfData:
                raise DatasetError(
                    f"{path}: ends after {number} complete rows, the manifest lists "
                    f"{file.rows} (truncated file or wrong row count)"
                ) from None
            except RowError as error:  # from the extension hook
                raise DatasetError(f"{path}: row {number}: {error}") from None
            except OSError as error:
                raise DatasetError(f"{path}: cannot be read: {error.strerror}") from None
            except Exception as error:  # noqa: BLE001 - msgpack raises several types
                raise DatasetError(
                    f"{path}: row {number} is not valid msgpack: {error!r}"
                ) from None
            try:
                check(row)
            except RowError as error:
                raise DatasetError(f"{path}: row {number}: {error}") from None
            yield row
        if unpacker.tell() != size:
            raise DatasetError(
                f"{path}: holds more data after the {file.rows} rows the manifest lists"
            )


def _read_table(
    directory: Path, manifest: Manifest, table: str, check: Callable[[Any], None]
) -> Iterator[tuple[Any, ...]]:
    for file in manifest.files[table]:
        yield from _read_rows(directory, file, check)


def iter_message_rows(directory: Path) -> Iterator[MessageRow]:
    """The message rows of the dataset in ``directory``, part by part, in sorted order.

    Rows are tuples of plain values (nested arrays are tuples too), as
    ``message_to_row`` makes them. The manifest is checked at once; each row is checked
    (shape, types, ranges, order) as it is read, so a bad part raises ``DatasetError``
    when the reader reaches it. Peer references are not checked here (``read_dataset``
    checks them).
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    return _read_table(directory, manifest, "messages", message_checker(None))


def read_dataset(directory: Path, *, with_messages: bool = True) -> DemoDataset:
    """The dataset stored in ``directory``; ``DatasetError`` if it is incomplete or broken.

    ``with_messages=False`` loads everything but the messages (``messages`` is then
    empty), for a caller that streams them with ``iter_message_rows``.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    self_id = int(manifest.self_peer_id)
    peers_by_id: dict[int, Peer] = {}
    self_peer: Peer | None = None
    for row in _read_table(directory, manifest, "peers", peer_checker(self_id)):
        peer = peer_from_row(row)
        peers_by_id[row[0]] = peer
        if row[0] == self_id:
            self_peer = peer
    if self_peer is None:
        names = ", ".join(str(directory / f.path) for f in manifest.files["peers"])
        raise DatasetError(f"{names}: no row for the account's own user {self_id}")
    chats = tuple(peer for peer in peers_by_id.values() if peer is not self_peer)

    def table(name: str, check: TableCheck) -> list[Any]:
        return list(_read_table(directory, manifest, name, lambda row: check(row, peers_by_id)))

    group_members = tuple(
        (PeerId(group_id), tuple(PeerId(member) for member in members))
        for group_id, members in table("group_members", check_group_members)
    )
    read_states = tuple(
        (PeerId(row[0]), PeerReadState(*row[1:])) for row in table("read_states", check_read_state)
    )
    pinned = tuple(PeerId(row[0]) for row in table("pinned", check_peer_list))
    archived = tuple(PeerId(row[0]) for row in table("archived", check_peer_list))
    notification_settings = tuple(
        (PeerId(row[0]), PeerNotificationSettings(*row[1:]))
        for row in table("notification_settings", check_notification_settings)
    )
    presences = tuple(
        (PeerId(peer_id), PeerPresence(PRESENCE_STATUSES[status], timestamp))
        for peer_id, status, timestamp in table("presences", check_presence)
    )
    deletions = tuple(
        (PeerId(peer_id), id_, timestamp)
        for peer_id, id_, timestamp in table("deletions", check_deletion)
    )
    messages: tuple[StoreMessage, ...] = ()
    if with_messages:
        rows = _read_table(directory, manifest, "messages", message_checker(peers_by_id))
        messages = tuple(map(build_message, rows))
    return DemoDataset(
        seed=manifest.seed,
        days=manifest.days,
        now=manifest.now,
        self_peer=self_peer,
        peers=chats,
        messages=messages,
        group_members=group_members,
        read_states=read_states,
        pinned=pinned,
        archived=archived,
        notification_settings=notification_settings,
        presences=presences,
        log_from=manifest.log_from,
        keep_dates=manifest.keep_dates,
        deletions=deletions,
    )
