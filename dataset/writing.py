"""Writing a dataset directory (the format ``dataset.files`` describes and reads):
the tables and the message parts go to a staging directory, the manifest last, and the
staging directory is renamed into place, so a dataset that exists is complete."""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgpack

from dataset.files import (
    _MESSAGES_DIR,
    _TABLES,
    _WRITE_BUFFER,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_NAME,
    DataFile,
)
from dataset.generator import DemoDataset
from dataset.rows import (
    COLUMNS,
    DatasetError,
    DatasetExistsError,
    MessageRow,
    RowError,
    TableCheck,
    check_deletion,
    check_group_members,
    check_notification_settings,
    check_peer_list,
    check_presence,
    check_read_state,
    message_checker,
    message_to_row,
    peer_checker,
    peer_to_row,
)

__all__ = ["write_dataset", "write_dataset_with", "write_message_part"]


# -- writing --------------------------------------------------------------------


def _refuse_existing(directory: Path) -> None:
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise DatasetExistsError(f"{directory}: exists and is not a plain directory")
    if directory.is_dir() and any(directory.iterdir()):
        raise DatasetExistsError(f"{directory}: exists and is not empty; refusing to overwrite")


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _fsync_directory(path: Path) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return  # a platform that cannot open directories (Windows)
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems refuse to sync a directory; the rename still happened
    finally:
        os.close(descriptor)


def _write_rows(
    staging: Path, relative: str, rows: Iterable[tuple[Any, ...]], check: Callable[[Any], None]
) -> DataFile:
    """Write ``rows`` to ``staging/relative`` after ``check``-ing each; flushed to disk."""
    packer = msgpack.Packer(use_bin_type=True)
    count = 0
    with open(staging / relative, "wb", buffering=_WRITE_BUFFER) as stream:
        for row in rows:
            try:
                check(row)
            except RowError as error:
                raise DatasetError(f"cannot write {relative}: row {count}: {error}") from None
            stream.write(packer.pack(row))
            count += 1
        stream.flush()
        os.fsync(stream.fileno())
        size = stream.tell()
    return DataFile(relative, count, size)


def _write_tables(dataset: DemoDataset, staging: Path) -> dict[str, list[DataFile]]:
    """Every table but the messages."""
    self_id = int(dataset.self_peer.id)
    peers = (dataset.self_peer, *dataset.peers)
    files: dict[str, list[DataFile]] = {}
    files["peers"] = [
        _write_rows(staging, "peers.msgpack", map(peer_to_row, peers), peer_checker(self_id))
    ]
    known = {int(peer.id): peer for peer in peers}

    def small(name: str, rows: Iterable[tuple[Any, ...]], check: TableCheck) -> None:
        relative = f"{name}.msgpack"
        files[name] = [_write_rows(staging, relative, rows, lambda row: check(row, known))]

    small(
        "group_members",
        ((int(g), tuple(int(m) for m in members)) for g, members in dataset.group_members),
        check_group_members,
    )
    small(
        "read_states",
        ((int(peer_id), *state.encode()) for peer_id, state in dataset.read_states),
        check_read_state,
    )
    small("pinned", ((int(peer_id),) for peer_id in dataset.pinned), check_peer_list)
    small("archived", ((int(peer_id),) for peer_id in dataset.archived), check_peer_list)
    small(
        "notification_settings",
        (
            (int(peer_id), s.muted_until, s.sound, s.show_previews)
            for peer_id, s in dataset.notification_settings
        ),
        check_notification_settings,
    )
    small(
        "presences",
        ((int(peer_id), int(p.status), p.timestamp) for peer_id, p in dataset.presences),
        check_presence,
    )
    small(
        "deletions",
        ((int(peer_id), id_, when) for peer_id, id_, when in dataset.deletions),
        check_deletion,
    )
    return files


def _write_manifest(staging: Path, dataset: DemoDataset, files: dict[str, list[DataFile]]) -> None:
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "seed": dataset.seed,
        "days": dataset.days,
        "now": dataset.now,
        "self_peer_id": int(dataset.self_peer.id),
        "log_from": dataset.log_from,
        "keep_dates": dataset.keep_dates,
        "counts": {table: sum(f.rows for f in files[table]) for table in _TABLES},
        "columns": {name: list(names) for name, names in COLUMNS.items()},
        "files": {
            table: [{"path": f.path, "rows": f.rows, "bytes": f.size} for f in files[table]]
            for table in _TABLES
        },
    }
    with open(staging / MANIFEST_NAME, "w", encoding="utf-8") as stream:
        json.dump(manifest, stream, indent=2)
        stream.write("\n")
        stream.flush()
        os.fsync(stream.fileno())
    _fsync_directory(staging / _MESSAGES_DIR)
    _fsync_directory(staging)


def write_message_part(staging: Path, number: int, rows: Iterable[MessageRow]) -> DataFile:
    """Write message part ``number`` into a staging directory (as ``write_dataset_with``
    hands out) and return its manifest entry; the rows are checked, order included.
    A Spark task can call this for its own part."""
    relative = f"{_MESSAGES_DIR}/part-{number:05d}.msgpack"
    return _write_rows(Path(staging), relative, rows, message_checker(None))


def write_dataset(dataset: DemoDataset, directory: Path, *, rows_per_part: int = 1_000_000) -> None:
    """Store ``dataset`` in ``directory``, which must not exist or be empty.

    Messages go into parts of at most ``rows_per_part`` rows. The files are written
    into a hidden sibling directory that is renamed to ``directory`` once complete, so
    ``directory`` either holds the whole dataset or is left as it was. Raises
    ``DatasetExistsError`` if ``directory`` holds anything, and ``DatasetError`` for a
    dataset the format cannot hold (nothing is written then).
    """
    if rows_per_part < 1:
        raise ValueError(f"rows_per_part must be at least 1, not {rows_per_part}")
    messages = dataset.messages

    def parts(staging: Path) -> tuple[DemoDataset, list[DataFile]]:
        return dataset, [
            write_message_part(
                staging, number, map(message_to_row, messages[start : start + rows_per_part])
            )
            for number, start in enumerate(range(0, len(messages), rows_per_part))
        ]

    write_dataset_with(directory, parts)


def write_dataset_with(
    directory: Path, write_messages: Callable[[Path], tuple[DemoDataset, list[DataFile]]]
) -> None:
    """``write_dataset`` with the messages written by ``write_messages(staging)``: it
    writes the parts (``write_message_part``) and returns the dataset whose other tables
    go with them (its ``messages`` are ignored) and the parts in row order. Each part
    checks its own order; ``read_dataset`` checks the order across parts and the peer
    references."""
    directory = Path(directory)
    _refuse_existing(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.parent / f".{directory.name}.{secrets.token_hex(6)}.partial"
    staging.mkdir()
    try:
        (staging / _MESSAGES_DIR).mkdir()
        dataset, parts = write_messages(staging)
        files = _write_tables(dataset, staging)
        files["messages"] = parts
        _write_manifest(staging, dataset, files)
        try:
            os.replace(staging, directory)
        except OSError as error:
            if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise DatasetExistsError(
                    f"{directory}: was filled while the dataset was being written; "
                    "refusing to overwrite"
                ) from None
            raise
    except BaseException:
        _remove_tree(staging)
        raise
    _fsync_directory(directory.parent)
