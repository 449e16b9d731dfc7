"""The ``postbox-chat`` command line and the demo dataset behind ``postbox-chat storage-demo``."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from client.cli import DEFAULT_DAYS, DEFAULT_SEED, main
from dataset import DEMO_NOW, SEARCH_WORD, generate_dataset, live_message
from postbox import (
    MediaKind,
    MessageFlags,
    MessageNamespace,
    MessageTags,
    PeerGroupId,
    PeerNamespace,
    Postbox,
    StoreMessage,
)

CLOUD = int(MessageNamespace.CLOUD)
SMALL = ["--chats", "20", "--messages", "2000"]


def stored_id(message: StoreMessage) -> int:
    """The id of a generated message: the dataset numbers every message it makes."""
    assert message.id is not None
    return message.id


def run_demo(tmp_path: Path, name: str = "x.db", *extra: str) -> tuple[int, Path]:
    db = tmp_path / name
    return main(["storage-demo", "--db", str(db), *SMALL, *extra]), db


# -- the demo command -----------------------------------------------------------


def test_demo_prints_every_section(tmp_path, capsys):
    status, _ = run_demo(tmp_path)

    captured = capsys.readouterr()
    assert status == 0
    assert captured.err == ""
    out = captured.out
    assert out.startswith(
        "postbox-chat storage-demo: seed 1, 20 chats, 2,000 messages over 30 days"
    )
    sections = [
        "Figures",
        "  written         2,000 messages in ",
        "messages/s",
        "database size",
        "Chat list: top 15 of ",
        "Last 10 of ",
        f'Full-text search for "{SEARCH_WORD}": ',
        "Shared media in ",
        "the tag index holds the same numbers of messages",
        "Live change",
        "message operations",
        "chat list (root)    remove_entry, insert_entry",
        "is now #",
    ]
    positions = [out.find(section) for section in sections]
    assert -1 not in positions, [s for s, p in zip(sections, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    chat_list = out[out.index("Chat list:") : out.index("Last 10 of")].strip().splitlines()
    assert len(chat_list) == 1 + 1 + 15 + 1  # title, header, rows, the archived chat
    assert sum("📌" in row for row in chat_list[2:17]) == 3
    history = out[out.index("Last 10 of") : out.index("Full-text search")].strip().splitlines()
    assert len(history) == 11
    assert all(("→" in line) != ("←" in line) for line in history[1:])
    assert "the top below the 3 pinned chats" in out


def test_demo_database_reopens_with_the_generated_data(tmp_path, capsys):
    status, db = run_demo(tmp_path)
    assert status == 0
    capsys.readouterr()
    dataset = generate_dataset(DEFAULT_SEED, 20, 2000, DEFAULT_DAYS)
    expected = dataset.message_counts()

    with Postbox(db) as postbox:

        def read(tx):
            counts = {peer.id: tx.message_count(peer.id, CLOUD) for peer in dataset.peers}
            holes = {peer.id: tx.get_holes(peer.id, CLOUD) for peer in dataset.peers}
            archive = [entry.peer_id for entry in tx.get_chat_list(PeerGroupId.ARCHIVE)]
            return counts, holes, tx.get_pinned_peer_ids(), archive

        counts, holes, pinned, archive = postbox.run(read)

    # Every generated message, plus the one the live change added to one chat.
    assert sum(counts.values()) == len(dataset.messages) + 1 == 2001
    changed = [peer_id for peer_id in counts if counts[peer_id] != expected[peer_id]]
    assert len(changed) == 1
    assert counts[changed[0]] == expected[changed[0]] + 1
    assert all(ranges == [] for ranges in holes.values())
    assert pinned == list(dataset.pinned)
    assert archive == list(dataset.archived)


def test_demo_output_is_deterministic_except_timings(tmp_path, capsys):
    outputs = []
    for name in ("a.db", "b.db"):
        status, _ = run_demo(tmp_path, name)
        assert status == 0
        outputs.append(_without_measurements(capsys.readouterr().out))
    assert outputs[0] == outputs[1]


def _without_measurements(out: str) -> str:
    lines = []
    for line in out.splitlines():
        if line.startswith(("database:", "  generated", "  written", "  database size")):
            continue
        lines.append(re.sub(r"\(\d+\.\d ms\)", "(… ms)", line))
    return "\n".join(lines)


def test_demo_refuses_an_existing_database(tmp_path, capsys):
    db = tmp_path / "x.db"
    Postbox(db).close()
    precious = db.read_bytes()

    assert main(["storage-demo", "--db", str(db), *SMALL]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    assert "already exists" in captured.err
    assert "--reuse" in captured.err
    assert db.read_bytes() == precious


def test_demo_reuse_writes_into_an_existing_database(tmp_path, capsys):
    status, db = run_demo(tmp_path)
    assert status == 0
    capsys.readouterr()

    status, _ = run_demo(tmp_path, "x.db", "--reuse")

    assert status == 0
    assert "2,000 were stored already" in capsys.readouterr().out


def test_demo_reports_postbox_errors(tmp_path, capsys):
    db = tmp_path / "x.db"
    db.write_bytes(b"not a database at all, just some text" * 100)

    assert main(["storage-demo", "--db", str(db), "--reuse", *SMALL]) == 1

    err = capsys.readouterr().err
    assert err.startswith("postbox-chat: error: ")
    assert "not a postbox database" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["storage-demo", "--chats", "0"], "argument --chats: the number of chats must be within"),
        (
            ["storage-demo", "--messages", "many"],
            "argument --messages: 'many' is not a whole number",
        ),
        (["storage-demo", "--bogus"], "unrecognized arguments: --bogus"),
        (["storage-demo", "--reuse"], "--reuse needs --db"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required"),
    ],
)
def test_bad_arguments_exit_2(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_help_exits_0(capsys):
    assert main(["storage-demo", "--help"]) == 0
    assert "--messages N" in capsys.readouterr().out


# -- the dataset ----------------------------------------------------------------


def test_dataset_is_deterministic():
    first = generate_dataset(7, 30, 3000, 10)
    assert first == generate_dataset(7, 30, 3000, 10)
    other = generate_dataset(8, 30, 3000, 10)
    assert other != first
    assert other.messages != first.messages
    assert [p.name for p in other.peers] != [p.name for p in first.peers]


def test_dataset_sizes_and_order():
    dataset = generate_dataset(3, 50, 5000, 7)
    assert len(dataset.peers) == 50
    assert len({peer.id for peer in dataset.peers}) == 50
    assert len(dataset.messages) == 5000
    keys = [(m.peer_id, m.namespace, m.timestamp, m.id) for m in dataset.messages]
    assert keys == sorted(keys)
    assert all(DEMO_NOW - 7 * 86_400 <= m.timestamp < DEMO_NOW for m in dataset.messages)
    kinds = {peer.id.namespace for peer in dataset.peers}
    assert kinds == {PeerNamespace.USER, PeerNamespace.GROUP, PeerNamespace.CHANNEL}


def test_dataset_message_ids():
    dataset = generate_dataset(5, 60, 6000, 14)
    by_chat = defaultdict(list)
    for message in dataset.messages:
        by_chat[message.peer_id].append(message)
    shared_ids = []
    for peer_id, messages in by_chat.items():
        ids = [stored_id(m) for m in messages]  # in time order, as the dataset is sorted
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        if peer_id.namespace != PeerNamespace.CHANNEL:
            shared_ids.extend(ids)
    # Private chats and groups draw from one counter: no id is used twice.
    assert len(set(shared_ids)) == len(shared_ids)
    # ... and in time order across chats, day by day (each message is generated on its
    # own, so the counter advances per day, not per message).
    shared = sorted(
        ((m.timestamp - DEMO_NOW) // 86_400, stored_id(m))
        for m in dataset.messages
        if m.peer_id.namespace != PeerNamespace.CHANNEL
    )
    assert [id_ for _, id_ in shared] == sorted(id_ for _, id_ in shared)


def test_dataset_has_a_heavy_tail():
    for seed in range(1, 6):
        counts = sorted(generate_dataset(seed, 100, 10_000, 30).message_counts().values())
        top = sum(counts[-10:])
        assert top > 0.3 * 10_000, (seed, counts)  # the top 10% of chats: far beyond 10%
        assert counts[0] <= 10, (seed, counts)  # and a long tail of quiet chats


def test_dataset_contents_are_plausible():
    dataset = generate_dataset(11, 200, 20_000, 30)
    private = [m for m in dataset.messages if m.peer_id.namespace == PeerNamespace.USER]
    incoming = sum(bool(m.flags & MessageFlags.INCOMING) for m in private) / len(private)
    assert 0.35 < incoming < 0.45
    channel = [m for m in dataset.messages if m.peer_id.namespace == PeerNamespace.CHANNEL]
    assert all(m.flags & MessageFlags.INCOMING for m in channel)

    tags = {
        MediaKind.PHOTO: MessageTags.PHOTO,
        MediaKind.VIDEO: MessageTags.VIDEO,
        MediaKind.FILE: MessageTags.FILE,
        MediaKind.VOICE: MessageTags.VOICE,
        MediaKind.LINK: MessageTags.LINK,
    }
    seen = set()
    for message in dataset.messages:
        if message.media:
            (media,) = message.media
            assert message.tags == tags[media.kind]
            seen.add(media.kind)
        else:
            assert message.tags == 0 and message.text
    assert seen == set(tags)
    assert any("https://" in m.text for m in dataset.messages)
    assert sum(SEARCH_WORD in m.text.lower() for m in dataset.messages) > 100

    assert len(dataset.pinned) == 3 and len(dataset.archived) == 1
    assert not set(dataset.pinned) & set(dataset.archived)
    assert dataset.notification_settings
    users = {p.id for p in dataset.peers if p.id.namespace == PeerNamespace.USER}
    assert dataset.presences and {peer_id for peer_id, _ in dataset.presences} <= users


def test_dataset_read_states_match_the_history():
    dataset = generate_dataset(2, 80, 8000, 30)
    by_chat = defaultdict(list)
    for message in dataset.messages:
        by_chat[message.peer_id].append(message)
    unread_chats = 0
    for peer_id, state in dataset.read_states:
        messages = by_chat[peer_id]
        read_up_to = state.max_incoming_read_id
        unread = [
            m for m in messages if m.flags & MessageFlags.INCOMING and stored_id(m) > read_up_to
        ]
        assert state.count == len(unread)
        assert state.max_known_id == messages[-1].id
        unread_chats += state.count > 0
    assert 0 < unread_chats < len(dataset.read_states)


def test_live_message_is_incoming_and_deterministic():
    dataset = generate_dataset(1, 20, 2000, 30)
    peer_id = dataset.peers[0].id
    message = live_message(dataset, peer_id, 999_999, DEMO_NOW)
    assert message == live_message(dataset, peer_id, 999_999, DEMO_NOW)
    assert message.flags & MessageFlags.INCOMING
    assert (message.peer_id, message.id, message.timestamp) == (peer_id, 999_999, DEMO_NOW)


@pytest.mark.parametrize(("peers", "messages", "days"), [(0, 10, 1), (5, -1, 1), (5, 10, 0)])
def test_dataset_rejects_bad_sizes(peers, messages, days):
    with pytest.raises(ValueError, match="must be within"):
        generate_dataset(1, peers, messages, days)


def test_tiny_datasets():
    assert generate_dataset(1, 1, 0, 1).messages == ()
    dataset = generate_dataset(1, 3, 2, 1)
    assert len(dataset.messages) == 2
    assert dataset.pinned == ()
