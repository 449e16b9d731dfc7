"""Corrupt stored values: reading them gives ``CorruptValueError``, never anything else.

A file is filled through ordinary transactions, so every table holds rows; then one
stored value at a time is damaged in place (random bytes, cut short, one byte changed,
a well-formed msgpack value of the wrong shape) and everything is read back through the
transaction API and the live views. Each read either succeeds (the damage still decodes
to something valid) or fails with a typed ``PostboxError``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import msgpack
import pytest

from postbox import (
    MAX_MESSAGE_ID,
    AnyViewKey,
    CachedPeerData,
    ChannelState,
    ChatListInclusion,
    ChatListViewKey,
    CorruptValueError,
    ForwardInfo,
    Glyph,
    GlyphShape,
    HistoryAnchor,
    ItemCollectionId,
    ItemCollectionInfo,
    ItemCollectionInfosViewKey,
    ItemCollectionItem,
    Media,
    MediaKind,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    MessageId,
    MessageTags,
    NotADatabaseError,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerReadState,
    Postbox,
    PostboxError,
    PresenceStatus,
    StateCursor,
    StoreMessage,
    Transaction,
)

CLOUD = 0
EVERYWHERE = MessageHistoryHoleSpace.everywhere()
USERS = [PeerId.make(PeerNamespace.USER, i) for i in (1, 2, 3)]
GROUP = PeerId.make(PeerNamespace.GROUP, 4)
CHANNEL = PeerId.make(PeerNamespace.CHANNEL, 5)
PEERS = [*USERS, GROUP, CHANNEL]
PACK = ItemCollectionId(0, 1)
#: How many damaged files are read.
CASES = 400


def _fill(tx: Transaction) -> None:
    tx.update_peers([Peer(p, f"peer {int(p) & 0xFF}") for p in PEERS])
    tx.update_peer_presences({u: PeerPresence(PresenceStatus.ONLINE, 1_700_000_000) for u in USERS})
    tx.replace_contact_peer_ids(USERS[:2])
    for peer in PEERS:
        tx.update_chat_list_inclusion(peer, ChatListInclusion(PeerGroupId.ROOT))
        tx.update_notification_settings(peer, PeerNotificationSettings(muted_until=5))
        tx.update_cached_peer_data(peer, CachedPeerData(about="about", participant_count=3))
        tx.remove_hole(peer, CLOUD, EVERYWHERE, 50, MAX_MESSAGE_ID)
        tx.add_messages(
            StoreMessage(
                peer, CLOUD, i, 1_700_000_000 + i, flags=int(MessageFlags.INCOMING) * (i % 2),
                tags=int(MessageTags.PHOTO) if i % 5 == 0 else 0, author_id=USERS[0],
                text=f"message {i} about chess",
                media=(Media(MediaKind.PHOTO, i, 100),) if i % 5 == 0 else (),
                reply_to_id=i - 1 if i % 7 == 0 else None,
                forward_info=ForwardInfo(USERS[1], 1_600_000_000) if i % 11 == 0 else None,
            )
            for i in range(50, 80)
        )  # fmt: skip
        tx.reset_read_state(peer, CLOUD, PeerReadState(60, 55, 79, 9))
        tx.replace_tag_summary(peer, int(MessageTags.PHOTO), CLOUD, 6, 75)
    tx.set_pinned_peer_ids(PeerGroupId.ROOT, [USERS[0]])
    tx.set_peer_chat_state(CHANNEL, ChannelState(42))
    tx.set_state(StateCursor(pts=10, qts=2, seq=3, date=1_700_000_000))
    tx.add_operation_log_entry(USERS[0], 1, {"random_id": 1, "local_id": 1, "text": "hi"})
    tx.add_operation_log_entry(USERS[1], 2, {"max_id": 70})
    tx.set_preference("theme", {"name": "dark"})
    tx.replace_item_collection_infos(0, [(PACK, ItemCollectionInfo("Pack", 2, 5, "pack", 9))])
    tx.replace_item_collection_items(
        PACK,
        [
            ItemCollectionItem(i, Media(MediaKind.STICKER, i, glyph=Glyph("🐱", shape, 0xFF00, 1)))
            for i, shape in enumerate(GlyphShape)
        ],
    )


def _read_everything(postbox: Postbox) -> None:
    def read(tx: Transaction) -> None:
        tx.get_state()
        tx.get_contact_peer_ids()
        tx.get_all_read_states()
        tx.get_tag_summaries()
        tx.get_unsent_message_ids()
        tx.get_preference("theme")
        tx.get_pinned_peer_ids()
        for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
            tx.get_chat_list(group)
            tx.get_chat_list_holes(group)
        for tag in (1, 2):
            tx.get_merged_operation_log_entries(tag)
        tx.search_messages("chess")
        tx.get_item_collection_infos(PACK.namespace)
        tx.get_item_collection_items(PACK)
        for peer in PEERS:
            tx.get_peer(peer)
            tx.get_peer_presence(peer)
            tx.get_cached_peer_data(peer)
            tx.get_notification_settings(peer)
            tx.get_peer_chat_state(peer)
            tx.is_contact(peer)
            tx.get_read_state(peer)
            tx.get_chat_list_inclusion(peer)
            tx.get_chat_list_position(peer)
            tx.get_top_message_index(peer)
            tx.get_messages(peer, CLOUD)
            tx.get_message(MessageId(peer, CLOUD, 60))
            tx.count_messages_in_id_range(peer, CLOUD, 1, MAX_MESSAGE_ID)
            tx.get_holes(peer, CLOUD)
            tx.get_tagged_message_indices(peer, int(MessageTags.PHOTO), CLOUD)
            for tag in (1, 2):
                tx.get_operation_log_entries(peer, tag)

    postbox.run(read)
    keys: list[AnyViewKey] = [
        ChatListViewKey(PeerGroupId.ROOT, count=50),
        ItemCollectionInfosViewKey((PACK.namespace,)),
    ]
    keys += [MessageHistoryViewKey(p, HistoryAnchor.upper_bound(), 20) for p in PEERS]
    postbox.combined_view(keys, lambda _snapshot: None).ready.result(timeout=30)


def _damage(rng: random.Random, value: bytes) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 24))
    if kind == 1 and value:
        return value[: rng.randrange(len(value))]
    if kind == 2 and value:
        at = rng.randrange(len(value))
        return value[:at] + bytes([rng.randrange(256)]) + value[at + 1 :]
    shapes: list[object] = [
        None, 66, -1, 2**64 - 1, "x", b"\x00", [], {}, [1, 2], [66, "x", None, 3.5],
        {"a": 1}, [[1, 2, 3]], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    ]  # fmt: skip
    packed: bytes = msgpack.packb(rng.choice(shapes), use_bin_type=True)
    return packed


def _stored_values(path: Path) -> list[tuple[str, bytes | int, bytes]]:
    db = apsw.Connection(str(path))
    try:
        listed = db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        tables = [name for (name,) in listed if name.startswith("t_")]
        return [
            (table, key, value)
            for table in tables
            for key, value in db.execute(f"SELECT key, value FROM {table}")  # noqa: S608
            if value is not None
        ]
    finally:
        db.close()


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corruption") / "filled.db"
    postbox = Postbox(path)
    try:
        postbox.run(_fill)
    finally:
        postbox.close()
    return path


def test_every_table_is_filled(filled: Path) -> None:
    tables = {table for table, _key, _value in _stored_values(filled)}
    assert len(tables) >= 15, sorted(tables)


def test_damaged_stored_values_give_only_typed_errors(filled: Path, tmp_path: Path) -> None:
    rng = random.Random(20261124)
    rows = _stored_values(filled)
    outcomes: dict[str, int] = {"read": 0, "refused": 0}
    escaped: list[str] = []
    for case in range(CASES):
        table, key, value = rng.choice(rows)
        damaged = _damage(rng, value)
        path = tmp_path / f"case{case}.db"
        shutil.copyfile(filled, path)
        db = apsw.Connection(str(path))
        db.execute(f"UPDATE {table} SET value = ? WHERE key = ?", (damaged, key))  # noqa: S608
        db.close()
        try:
            _open_and_read(path)
            outcomes["read"] += 1
        except PostboxError:
            outcomes["refused"] += 1
        except Exception as error:  # noqa: BLE001 - what the test looks for
            escaped.append(f"{table} {key!r} {damaged!r}: {type(error).__name__}: {error}")
        path.unlink()
    assert escaped == [], "\n".join(escaped[:20])
    assert outcomes["refused"] >= CASES // 4, outcomes


#: How many files with one damaged key are read.
KEY_CASES = 200


def _damage_key(rng: random.Random, key: bytes) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return key[: rng.randrange(len(key))]  # cut short
    if kind == 1:
        at = rng.randrange(len(key))  # one bit flipped
        return key[:at] + bytes([key[at] ^ (1 << rng.randrange(8))]) + key[at + 1 :]
    if kind == 2:
        return key + rng.randbytes(rng.randrange(1, 6))  # grown
    return rng.randbytes(rng.randrange(0, 24))


def test_damaged_stored_keys_give_only_typed_errors(filled: Path, tmp_path: Path) -> None:
    """A key of the wrong length or with a bit flipped, in any binary-keyed table, is read
    as some other row or refused as a ``CorruptValueError``; nothing else escapes."""
    rng = random.Random(20261128)
    rows = [row for row in _stored_values(filled) if isinstance(row[1], bytes)]
    outcomes: dict[str, int] = {"read": 0, "refused": 0}
    escaped: list[str] = []
    for case in range(KEY_CASES):
        table, key, _value = rng.choice(rows)
        assert isinstance(key, bytes)
        damaged = _damage_key(rng, key)
        path = tmp_path / f"case{case}.db"
        shutil.copyfile(filled, path)
        db = apsw.Connection(str(path))
        try:
            db.execute(f"UPDATE {table} SET key = ? WHERE key = ?", (damaged, key))  # noqa: S608
        except apsw.ConstraintError:  # the damaged key is another row's
            continue
        finally:
            db.close()
        try:
            _open_and_read(path)
            outcomes["read"] += 1
        except CorruptValueError:
            outcomes["refused"] += 1
        except Exception as error:  # noqa: BLE001 - what the test looks for
            escaped.append(f"{table} {key!r} {damaged!r}: {type(error).__name__}: {error}")
        path.unlink()
    assert escaped == [], "\n".join(escaped[:20])
    assert outcomes["refused"] >= KEY_CASES // 20, outcomes


def _open_and_read(path: Path) -> None:
    postbox = Postbox(path)
    try:
        _read_everything(postbox)
    finally:
        postbox.close()


def _crash_after_writing(path: Path) -> None:
    """Another process opens the file, commits, and dies without closing it."""
    script = (
        "import os, sys\n"
        "from postbox import Postbox\n"
        "box = Postbox(sys.argv[1])\n"
        "box.run(lambda tx: tx.set_preference('crashed', True))\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)


def _damage_page_of(path: Path, table: str) -> None:
    """Overwrite the root page of ``table`` in the main file with garbage."""
    db = apsw.Connection(
        f"file:{path}?mode=ro&immutable=1",
        flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY,
    )
    try:
        ((root,),) = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (table,))
        ((page_size,),) = db.execute("PRAGMA page_size")
    finally:
        db.close()
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xa5" * page_size)


def test_after_a_crash_a_damaged_page_is_found_before_anything_is_written(
    filled: Path, tmp_path: Path
) -> None:
    path = tmp_path / "crashed.db"
    shutil.copyfile(filled, path)
    _crash_after_writing(path)
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0  # the unclean close left its log
    _damage_page_of(path, "t_cached_peer_data")  # a table nothing reads at start
    before = (path.read_bytes(), wal.read_bytes())
    with pytest.raises(NotADatabaseError, match="is damaged"):
        Postbox(path)
    assert (path.read_bytes(), wal.read_bytes()) == before


def test_after_a_crash_an_intact_file_opens_with_what_was_committed(
    filled: Path, tmp_path: Path
) -> None:
    path = tmp_path / "crashed.db"
    shutil.copyfile(filled, path)
    _crash_after_writing(path)
    postbox = Postbox(path)
    try:
        assert postbox.run(lambda tx: tx.get_preference("crashed")) is True
    finally:
        postbox.close()
    assert not Path(f"{path}-wal").exists()  # a clean close folds the log back


def test_asked_to_check_a_cleanly_closed_file_a_damaged_page_is_refused(
    filled: Path, tmp_path: Path
) -> None:
    path = tmp_path / "closed.db"
    shutil.copyfile(filled, path)
    assert not Path(f"{path}-wal").exists()  # closed cleanly: nothing says it may be damaged
    _damage_page_of(path, "t_cached_peer_data")
    before = path.read_bytes()
    with pytest.raises(NotADatabaseError, match="is damaged"):
        Postbox(path, check_pages=True)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() or not Path(f"{path}-wal").read_bytes()


@pytest.mark.parametrize("item", ["text", 10**9, None, 3.5])
def test_a_search_hit_of_the_wrong_type_is_a_corrupt_value(
    filled: Path, tmp_path: Path, item: object
) -> None:
    path = tmp_path / "search.db"
    shutil.copyfile(filled, path)
    db = apsw.Connection(str(path))
    db.execute("UPDATE ft_message_text SET item = ?", (item,))
    db.close()
    with Postbox(path) as postbox, pytest.raises(CorruptValueError, match="full-text entry"):
        postbox.run(lambda tx: tx.search_messages("chess"))
