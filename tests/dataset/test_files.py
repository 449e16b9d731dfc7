"""The dataset directory format: round trips, streaming, refusals and corruption."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import msgpack
import pytest

from dataset import (
    COLUMNS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_NAME,
    DatasetError,
    DatasetExistsError,
    DemoDataset,
    generate_dataset,
    iter_message_rows,
    message_from_row,
    message_to_row,
    read_dataset,
    read_manifest,
    write_dataset,
)
from dataset import writing as dataset_writing
from postbox import Media, MediaKind, MessageFlags, MessageTags, PeerId, PeerNamespace, StoreMessage

PART_0 = "messages/part-00000.msgpack"
PART_1 = "messages/part-00001.msgpack"


@pytest.fixture(scope="module")
def dataset() -> DemoDataset:
    return generate_dataset(11, peers=40, messages=2000, days=30)


@pytest.fixture
def written(tmp_path: Path, dataset: DemoDataset) -> Path:
    """The dataset written with parts of 500 messages (four parts)."""
    directory = tmp_path / "dataset"
    write_dataset(dataset, directory, rows_per_part=500)
    return directory


def _key(row: tuple[Any, ...]) -> tuple[int, int, int, int]:
    return (row[0], row[1], row[3], row[2])


def _load_manifest(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / MANIFEST_NAME).read_text())
    return data


def _save_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest))


def _read_stream(path: Path) -> list[Any]:
    with open(path, "rb") as stream:
        return list(msgpack.Unpacker(stream, raw=False, use_list=False))


def _rewrite(directory: Path, relative: str, rows: list[Any], *, raw: bytes = b"") -> None:
    """Replace a row file and update the manifest to match it, so only the rows are wrong."""
    data = b"".join(msgpack.packb(row, use_bin_type=True) for row in rows) + raw
    (directory / relative).write_bytes(data)
    manifest = _load_manifest(directory)
    for table, files in manifest["files"].items():
        for entry in files:
            if entry["path"] == relative:
                manifest["counts"][table] += len(rows) + bool(raw) - entry["rows"]
                entry["rows"] = len(rows) + bool(raw)
                entry["bytes"] = len(data)
    _save_manifest(directory, manifest)


def _dataset_error(directory: Path, *names: str) -> str:
    """The message of the ``DatasetError`` that reading ``directory`` raises; checks names."""
    with pytest.raises(DatasetError) as info:
        read_dataset(directory)
    message = str(info.value)
    for name in names:
        assert name in message
    return message


# -- round trips ----------------------------------------------------------------


def test_round_trip_gives_an_equal_dataset(tmp_path: Path, dataset: DemoDataset) -> None:
    directory = tmp_path / "dataset"
    write_dataset(dataset, directory)
    assert read_dataset(directory) == dataset
    assert sorted(os.listdir(directory / "messages")) == ["part-00000.msgpack"]
    assert os.listdir(tmp_path) == ["dataset"]  # no staging directory left behind


def test_manifest_describes_the_files(written: Path, dataset: DemoDataset) -> None:
    manifest = _load_manifest(written)
    assert manifest["format"] == FORMAT_NAME
    assert manifest["format_version"] == FORMAT_VERSION
    assert (manifest["seed"], manifest["days"], manifest["now"]) == (11, 30, dataset.now)
    assert manifest["self_peer_id"] == int(dataset.self_peer.id)
    assert manifest["columns"] == {name: list(names) for name, names in COLUMNS.items()}
    assert manifest["counts"]["messages"] == 2000
    assert manifest["counts"]["peers"] == len(dataset.peers) + 1
    assert manifest["counts"]["presences"] == len(dataset.presences)
    for files in manifest["files"].values():
        for entry in files:
            path = written / entry["path"]
            assert path.stat().st_size == entry["bytes"]
            assert len(_read_stream(path)) == entry["rows"]
    peers = _read_stream(written / "peers.msgpack")
    assert peers[0][0] == int(dataset.self_peer.id)
    assert len(peers[0]) == len(COLUMNS["peers"])
    parsed = read_manifest(written)
    assert parsed.message_count == 2000
    assert [f.rows for f in parsed.files["messages"]] == [500, 500, 500, 500]


def test_multi_part_round_trip(tmp_path: Path, dataset: DemoDataset) -> None:
    directory = tmp_path / "dataset"
    write_dataset(dataset, directory, rows_per_part=300)
    parts = sorted(os.listdir(directory / "messages"))
    assert parts == [f"part-{n:05d}.msgpack" for n in range(7)]
    sizes = [len(_read_stream(directory / "messages" / part)) for part in parts]
    assert sizes == [300] * 6 + [200]
    assert read_dataset(directory) == dataset


def test_empty_history_round_trip(tmp_path: Path) -> None:
    dataset = generate_dataset(3, peers=5, messages=0, days=1)
    directory = tmp_path / "dataset"
    write_dataset(dataset, directory)
    assert _load_manifest(directory)["files"]["messages"] == []
    assert list(iter_message_rows(directory)) == []
    assert read_dataset(directory) == dataset


def test_streaming_reader_yields_the_sorted_messages(written: Path, dataset: DemoDataset) -> None:
    rows = list(iter_message_rows(written))
    assert rows == [message_to_row(message) for message in dataset.messages]
    assert [_key(row) for row in rows] == sorted(_key(row) for row in rows)
    assert tuple(message_from_row(row) for row in rows) == dataset.messages
    peers_only = read_dataset(written, with_messages=False)
    assert peers_only.messages == ()
    assert peers_only.peers == dataset.peers


def test_message_rows_are_plain_msgpack_values() -> None:
    peer = PeerId.make(PeerNamespace.GROUP, 77)
    message = StoreMessage(
        peer,
        0,
        42,
        1_700_000_000,
        flags=int(MessageFlags.INCOMING),
        tags=int(MessageTags.PHOTO | MessageTags.LINK),
        author_id=PeerId.make(PeerNamespace.USER, 5),
        text="hello ☕",
        media=(
            Media(MediaKind.PHOTO, 9, size=1234),
            Media(MediaKind.LINK, 10, url="https://example.com", title="Example"),
        ),
        reply_to_id=41,
        edit_timestamp=1_700_000_100,
        globally_unique_id=-(2**63),
        thread_id=40,
    )
    row = message_to_row(message)
    assert type(row[0]) is int and type(row[6]) is int
    packed = msgpack.packb(row, use_bin_type=True)
    assert msgpack.unpackb(packed, raw=False, use_list=False) == row
    assert message_from_row(row) == message
    assert message_from_row(list(row)) == message  # a Spark job may hand over lists
    with pytest.raises(DatasetError, match="text must be a string"):
        message_from_row((*row[:7], None, *row[8:]))
    with pytest.raises(DatasetError, match="13"):
        message_from_row(row[:12])
    with pytest.raises(DatasetError, match="media kind 9"):
        message_from_row((*row[:8], ((9, 1, 0, None, None),), *row[9:]))


# -- refusing to overwrite ------------------------------------------------------


def test_refuses_to_overwrite_a_non_empty_directory(tmp_path: Path, dataset: DemoDataset) -> None:
    directory = tmp_path / "dataset"
    directory.mkdir()
    (directory / "notes.txt").write_text("keep me")
    with pytest.raises(DatasetExistsError, match="not empty") as info:
        write_dataset(dataset, directory)
    assert isinstance(info.value, DatasetError)
    assert isinstance(info.value, FileExistsError)
    assert os.listdir(directory) == ["notes.txt"]
    assert os.listdir(tmp_path) == ["dataset"]


def test_refuses_to_overwrite_a_dataset_or_a_file(written: Path, dataset: DemoDataset) -> None:
    with pytest.raises(DatasetExistsError):
        write_dataset(dataset, written)
    assert read_dataset(written) == dataset
    plain = written.parent / "plain"
    plain.write_text("x")
    with pytest.raises(DatasetExistsError, match="not a plain directory"):
        write_dataset(dataset, plain)


def test_writes_into_an_empty_existing_directory(tmp_path: Path, dataset: DemoDataset) -> None:
    directory = tmp_path / "nested" / "dataset"
    directory.mkdir(parents=True)
    write_dataset(dataset, directory)
    assert read_dataset(directory) == dataset


# -- corruption -----------------------------------------------------------------


def test_directory_without_manifest(tmp_path: Path) -> None:
    (tmp_path / "peers.msgpack").write_bytes(b"")
    _dataset_error(tmp_path, MANIFEST_NAME, "not found")
    with pytest.raises(DatasetError, match=MANIFEST_NAME):
        iter_message_rows(tmp_path)  # raises at once, before any row is asked for
    _dataset_error(tmp_path / "absent", MANIFEST_NAME)


def test_manifest_that_is_not_json(written: Path) -> None:
    (written / MANIFEST_NAME).write_text('{"format": ')
    _dataset_error(written, MANIFEST_NAME, "not valid JSON")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"format": "something-else"}, "something-else"),
        ({"format_version": 3}, "format_version 3 is not supported"),
        ({"format_version": True}, "format_version True"),
        ({"seed": "7"}, "seed"),
        ({"self_peer_id": -1}, "self_peer_id"),
    ],
)
def test_manifest_with_unknown_format_or_bad_fields(
    written: Path, change: dict[str, Any], expected: str
) -> None:
    manifest = _load_manifest(written)
    manifest.update(change)
    _save_manifest(written, manifest)
    _dataset_error(written, MANIFEST_NAME, expected)


def test_manifest_with_other_columns(written: Path) -> None:
    manifest = _load_manifest(written)
    manifest["columns"]["messages"][2:4] = ["timestamp", "id"]
    _save_manifest(written, manifest)
    _dataset_error(written, MANIFEST_NAME, "columns of messages")


def test_manifest_counts_must_match_its_files(written: Path) -> None:
    manifest = _load_manifest(written)
    manifest["counts"]["messages"] += 1
    _save_manifest(written, manifest)
    _dataset_error(written, MANIFEST_NAME, "counts.messages is 2001")


def test_manifest_paths_stay_inside_the_dataset(written: Path) -> None:
    manifest = _load_manifest(written)
    manifest["files"]["pinned"][0]["path"] = "../pinned.msgpack"
    _save_manifest(written, manifest)
    _dataset_error(written, MANIFEST_NAME, "../pinned.msgpack")


def test_missing_part_file(written: Path) -> None:
    (written / PART_1).unlink()
    _dataset_error(written, "part-00001.msgpack", "missing")
    rows = iter_message_rows(written)
    with pytest.raises(DatasetError, match="part-00001.msgpack"):
        for _ in rows:
            pass


def test_missing_small_file(written: Path) -> None:
    (written / "presences.msgpack").unlink()
    _dataset_error(written, "presences.msgpack", "missing")


def test_truncated_part_file(written: Path) -> None:
    path = written / PART_1
    path.write_bytes(path.read_bytes()[:-5])
    _dataset_error(written, "part-00001.msgpack", "truncated")


def test_truncated_part_file_with_a_matching_size(written: Path) -> None:
    # A writer that recorded the size of a file it cut short: the last row is incomplete.
    path = written / PART_1
    data = path.read_bytes()[:-5]
    path.write_bytes(data)
    manifest = _load_manifest(written)
    manifest["files"]["messages"][1]["bytes"] = len(data)
    _save_manifest(written, manifest)
    message = _dataset_error(written, "part-00001.msgpack")
    assert "ends after 499 complete rows" in message


def test_more_rows_than_listed(written: Path) -> None:
    manifest = _load_manifest(written)
    manifest["files"]["messages"][0]["rows"] -= 1
    manifest["files"]["messages"][1]["rows"] += 1
    _save_manifest(written, manifest)
    _dataset_error(written, "part-00000.msgpack", "more data after the 499 rows")


def test_fewer_rows_than_listed(written: Path) -> None:
    manifest = _load_manifest(written)
    manifest["files"]["messages"][0]["rows"] += 1
    manifest["files"]["messages"][1]["rows"] -= 1
    _save_manifest(written, manifest)
    _dataset_error(written, "part-00000.msgpack", "ends after 500 complete rows")


def _bad_message_rows(rows: list[Any]) -> dict[str, tuple[list[Any], bytes, str]]:
    """Ways to spoil row 3 of a part: (rows, raw bytes to append, expected message)."""
    row = list(rows[3])
    cases: dict[str, tuple[list[Any], bytes, str]] = {}

    def spoil(name: str, value: Any, expected: str) -> None:
        cases[name] = ([*rows[:3], value, *rows[4:]], b"", expected)

    spoil("short", row[:12], "12 columns, not 13")
    spoil("map", {"peer_id": row[0]}, "must be an array")
    spoil("text", [*row[:7], 5, *row[8:]], "text must be a string, not int")
    spoil("bool", [row[0], row[1], True, *row[3:]], "id must be an integer, not bool")
    spoil("float", [*row[:3], 1.5, *row[4:]], "timestamp must be an integer, not float")
    spoil("range", [row[0], row[1], 2**40, *row[3:]], "outside")
    spoil("peer", [-1, *row[1:]], "peer_id -1 is outside")
    spoil("bytes", [*row[:7], b"hi", *row[8:]], "text must be a string, not bytes")
    spoil("ext", [*row[:7], msgpack.ExtType(5, b"x"), *row[8:]], "extension type 5")
    spoil("timestamp", [*row[:7], msgpack.Timestamp(1, 0), *row[8:]], "not Timestamp")
    spoil("media", [*row[:8], [[0, 1]], *row[9:]], "media item has 2 columns")
    spoil("order", list(rows[1]), "must be sorted and unique")
    cases["garbage"] = (rows[:3], b"\xc1", "not valid msgpack")
    return cases


_SPOILERS = sorted(_bad_message_rows([[0] * 13] * 5))


@pytest.mark.parametrize("case", _SPOILERS)
def test_malformed_message_row(written: Path, case: str) -> None:
    rows = _read_stream(written / PART_1)
    spoiled, raw, expected = _bad_message_rows(rows)[case]
    _rewrite(written, PART_1, spoiled, raw=raw)
    message = _dataset_error(written, "part-00001.msgpack", expected)
    assert "row 3" in message
    with pytest.raises(DatasetError, match="part-00001.msgpack"):
        list(iter_message_rows(written))


def test_messages_out_of_order_across_parts(written: Path) -> None:
    first = _read_stream(written / PART_0)
    second = _read_stream(written / PART_1)
    _rewrite(written, PART_1, [first[-1], *second[1:]])
    _dataset_error(written, "part-00001.msgpack", "row 0", "sorted")


def test_malformed_small_table_rows(written: Path) -> None:
    presences = _read_stream(written / "presences.msgpack")
    _rewrite(written, "presences.msgpack", [*presences[:2], (presences[2][0], 9, 0)])
    _dataset_error(written, "presences.msgpack", "row 2", "status 9 is unknown")


def test_unknown_peer_reference(written: Path) -> None:
    _rewrite(written, "pinned.msgpack", [(int(PeerId.make(PeerNamespace.USER, 1)),)])
    _dataset_error(written, "pinned.msgpack", "names no row of peers")


def test_peers_without_the_own_user(written: Path, dataset: DemoDataset) -> None:
    peers = _read_stream(written / "peers.msgpack")
    _rewrite(written, "peers.msgpack", peers[1:])
    _dataset_error(written, "peers.msgpack", "own user")


def test_duplicate_peer(written: Path) -> None:
    peers = _read_stream(written / "peers.msgpack")
    _rewrite(written, "peers.msgpack", [*peers, peers[1]])
    _dataset_error(written, "peers.msgpack", "appears twice")


# -- interrupted and refused writes ---------------------------------------------


def _fail_after(calls: int) -> Any:
    count = 0

    def failing(message: StoreMessage) -> tuple[Any, ...]:
        nonlocal count
        count += 1
        if count > calls:
            raise RuntimeError("disk on fire")
        return message_to_row(message)

    return failing


def test_interrupted_write_leaves_nothing(
    tmp_path: Path, dataset: DemoDataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset_writing, "message_to_row", _fail_after(1200))
    directory = tmp_path / "dataset"
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_dataset(dataset, directory, rows_per_part=500)
    assert os.listdir(tmp_path) == []
    _dataset_error(directory, MANIFEST_NAME)


def test_killed_write_leaves_no_readable_dataset(
    tmp_path: Path, dataset: DemoDataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process killed mid-write cleans nothing up: the staging directory stays.
    monkeypatch.setattr(dataset_writing, "message_to_row", _fail_after(1200))
    monkeypatch.setattr(dataset_writing, "_remove_tree", lambda path: None)
    directory = tmp_path / "dataset"
    with pytest.raises(RuntimeError):
        write_dataset(dataset, directory, rows_per_part=500)
    assert not directory.exists()
    (staging,) = tmp_path.iterdir()
    assert staging.name.startswith(".dataset.")
    assert (staging / PART_1).exists()
    _dataset_error(staging, MANIFEST_NAME)
    _dataset_error(directory, MANIFEST_NAME)
    monkeypatch.undo()
    write_dataset(dataset, directory)  # the leftover does not block a new write
    assert read_dataset(directory) == dataset


def test_unsorted_dataset_is_refused(tmp_path: Path, dataset: DemoDataset) -> None:
    messages = list(dataset.messages)
    messages[10], messages[11] = messages[11], messages[10]
    unsorted = dataclasses.replace(dataset, messages=tuple(messages))
    directory = tmp_path / "dataset"
    with pytest.raises(DatasetError, match="part-00000.msgpack: row 11"):
        write_dataset(unsorted, directory)
    assert os.listdir(tmp_path) == []


def test_rows_per_part_must_be_positive(tmp_path: Path, dataset: DemoDataset) -> None:
    with pytest.raises(ValueError, match="rows_per_part"):
        write_dataset(dataset, tmp_path / "dataset", rows_per_part=0)
    assert os.listdir(tmp_path) == []


def test_a_version_1_dataset_reads_without_deletions_or_log(written, dataset):
    manifest = _load_manifest(written)
    manifest["format_version"] = 1
    for key in ("log_from", "keep_dates"):
        del manifest[key]
    for section in ("counts", "files", "columns"):
        del manifest[section]["deletions"]
    _save_manifest(written, manifest)
    (written / "deletions.msgpack").unlink()
    loaded = read_dataset(written)
    assert loaded == dataset
    assert (loaded.deletions, loaded.log_from, loaded.keep_dates) == ((), None, False)


def test_deletions_and_the_log_keys_round_trip(tmp_path, dataset):
    peer = dataset.peers[0].id
    logged = dataclasses.replace(
        dataset, log_from=dataset.now - 86_400, keep_dates=True, deletions=((peer, 7, 123),)
    )
    write_dataset(logged, tmp_path / "logged")
    assert read_dataset(tmp_path / "logged") == logged
    manifest = _load_manifest(tmp_path / "logged")
    manifest["keep_dates"] = "yes"
    _save_manifest(tmp_path / "logged", manifest)
    with pytest.raises(DatasetError, match="keep_dates must be true or false"):
        read_manifest(tmp_path / "logged")
