"""postbox-seed end to end on a tiny account: Spark and local paths agree, the server
serves the result, and a seeded client database syncs and verifies."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from client.cli import main as chat_main
from dataset import AccountSpec, build_dataset, iter_message_rows, read_dataset, read_manifest
from postbox import (
    ChatListViewKey,
    HistoryAnchor,
    MessageHistoryHoleSpace,
    MessageHistoryViewKey,
    PeerGroupId,
    Postbox,
)
from spark_tools.cli import main as seed_main
from spark_tools.cli import seed
from spark_tools.client_db import ClientSpec
from spark_tools.progress import Progress
from sync.protocol import (
    AnyUpdate,
    GetDifference,
    GetHistory,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateEditChannelMessage,
    UpdateEditMessage,
)
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from sync.server.store import ServerStore
from sync.server.update_logs import UpdateLogs

pytestmark = pytest.mark.spark

SPEC = AccountSpec(
    seed=4, users=14, groups=4, channels=3, messages=4_000, days=12, log_days=2,
    edit_share=0.05, delete_share=0.08,
)  # fmt: skip
DIALOGS = 10
CLIENT = ClientSpec(dialogs=DIALOGS, active_chats=4, window=50)
TOKEN = "seed-token"


def files_of(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def seeded(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("seeded")
    quiet = Progress(quiet=True)
    seed(
        spark, SPEC, root / "spark3", 3, quiet, root / "client.db", CLIENT, server_db=root / "s3.db"
    )
    seed(spark, SPEC, root / "spark5", 5, quiet, root / "c5.db", CLIENT, server_db=root / "s5.db")
    seed(None, SPEC, root / "local3", 3, quiet, root / "client-local.db", CLIENT)
    seed(None, SPEC, root / "local5", 5, quiet, root / "cl5.db", CLIENT, server_db=root / "sl5.db")
    return root


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_both_paths_and_any_partition_count_write_byte_identical_databases(seeded):
    clients = {
        sha256(seeded / name) for name in ("client.db", "c5.db", "client-local.db", "cl5.db")
    }
    servers = {sha256(seeded / name) for name in ("s3.db", "s5.db", "sl5.db")}
    assert len(clients) == 1 and len(servers) == 1
    assert [p.name for p in seeded.iterdir() if p.name.startswith(".")] == []


def test_the_seeded_server_database_holds_what_an_import_of_the_dataset_writes(seeded, tmp_path):
    imported = ServerStore(tmp_path / "imported.db", clock=lambda: SPEC.now)
    directory = seeded / "local3"
    imported.import_dataset(
        read_dataset(directory, with_messages=False), rows=iter_message_rows(directory)
    )
    copy = tmp_path / "seeded.db"
    copy.write_bytes((seeded / "s3.db").read_bytes())
    seeded_store = ServerStore(copy, clock=lambda: SPEC.now)
    try:
        assert seeded_store.digest() == imported.digest()
        assert seeded_store.self_id == imported.self_id
        assert seeded_store.state() == imported.state()
    finally:
        seeded_store.close()
        imported.close()


def test_spark_and_local_paths_write_the_same_dataset(seeded):
    assert files_of(seeded / "spark3") == files_of(seeded / "local3")
    rows = list(iter_message_rows(seeded / "spark3"))
    assert rows == list(iter_message_rows(seeded / "spark5"))
    assert len(read_manifest(seeded / "spark5").files["messages"]) == 5
    dataset = read_dataset(seeded / "spark3")
    expected = build_dataset(SPEC, keep_dates=True)
    assert dataset == expected


def test_spark_and_local_client_files_hold_the_same_data(seeded):
    def contents(path: Path):
        with Postbox(path) as postbox:
            return postbox.run(
                lambda tx: (
                    tx.get_state(),
                    [(e.peer_id, e.index) for e in tx.get_chat_list(PeerGroupId.ROOT)],
                    {
                        p: (
                            tx.get_messages(p, 0),
                            tx.get_holes(p, 0, MessageHistoryHoleSpace.everywhere()),
                        )
                        for p in tx.get_all_read_states()
                    },
                )
            )

    assert contents(seeded / "client.db") == contents(seeded / "client-local.db")


@pytest.fixture
def server(seeded):
    dataset = read_dataset(seeded / "spark3")
    with EmbeddedServer(ServerConfig(token=TOKEN), dataset) as running:
        yield running


def test_the_server_serves_the_generated_rows(server, seeded):
    dataset = read_dataset(seeded / "spark3")
    busiest = dataset.busiest_peer_id()
    generated = [m for m in dataset.messages if m.peer_id == busiest]
    page = server.call(lambda s: s.service.store.history(GetHistory(int(busiest), limit=100)))
    assert [m.id for m in page.messages] == [m.id for m in reversed(generated)][:100]
    assert [m.date for m in page.messages][:5] == [m.timestamp for m in reversed(generated)][:5]
    assert page.count == len(generated)
    difference = server.call(
        lambda s: s.service.store.difference(GetDifference(1, 0, 0, pts_total_limit=100_000))
    )
    log_from = SPEC.log_from
    assert log_from is not None
    recent = {
        (int(m.peer_id), m.id)
        for m in dataset.messages
        if m.timestamp >= log_from and m.peer_id.namespace != 2
    }
    assert {(m.peer, m.id) for m in difference.new_messages} == recent
    updates = server.call(lambda s: logged_updates(s.service.store.logs))
    deletes = (UpdateDeleteMessages, UpdateDeleteChannelMessages)
    assert sum(isinstance(u, deletes) for u in updates) == len(dataset.deletions) > 0
    edited = sum(1 for m in dataset.messages if (m.edit_timestamp or 0) >= log_from)
    edits = sum(isinstance(u, UpdateEditMessage | UpdateEditChannelMessage) for u in updates)
    assert edits == edited > 0


def logged_updates(logs: UpdateLogs) -> list[AnyUpdate]:
    """Every update the account's log and the channels' logs hold."""
    everything = 1 << 30
    updates = [entry.update for entry in logs.entries(0, everything)]
    for channel in logs.channels_changed_since(0):
        updates += [entry.update for entry in logs.channel_entries(channel.channel, 0, everything)]
    return updates


def test_the_client_file_opens_with_holes_where_the_app_expects_them(seeded, tmp_path):
    path = tmp_path / "copy.db"
    path.write_bytes((seeded / "client.db").read_bytes())
    log_from = SPEC.log_from
    assert log_from is not None
    with Postbox(path) as postbox:
        entries = postbox.run(lambda tx: tx.get_chat_list(PeerGroupId.ROOT))
        assert len(entries) >= DIALOGS
        chat_list_key = ChatListViewKey(PeerGroupId.ROOT, count=5)
        subscription = postbox.combined_view([chat_list_key])
        chat_list = subscription.ready.result(timeout=10)[chat_list_key]
        subscription.dispose()
        assert len(chat_list.entries) >= 5 and chat_list.has_earlier
        state = postbox.run(lambda tx: tx.get_state())
        assert state is not None and (state.pts, state.date) == (1, log_from)
        holes = postbox.run(lambda tx: tx.get_chat_list_holes(PeerGroupId.ROOT))
        assert holes and holes[0].index.timestamp < log_from

        def histories(tx):
            result = {}
            for peer_id in tx.get_all_read_states():
                messages = tx.get_messages(peer_id, 0)
                result[peer_id] = (
                    messages,
                    tx.get_holes(peer_id, 0, MessageHistoryHoleSpace.everywhere()),
                )
            return result

        stored = postbox.run(histories)
        windows = 0
        for messages, holes in stored.values():
            assert messages and all(m.timestamp < log_from for m in messages)
            lowest = min(m.id.id for m in messages)
            # One hole below the stored messages (up to the window's first id, which may
            # have been deleted before the offline point), none above.
            assert len(holes) <= 1
            assert all(h.lower == 1 and h.upper < lowest for h in holes)
            windows += len(messages) > 1
        busiest = max(stored, key=lambda peer_id: len(stored[peer_id][0]))
        history_key = MessageHistoryViewKey(busiest, HistoryAnchor.upper_bound(), 10)
        subscription = postbox.combined_view([history_key])
        history = subscription.ready.result(timeout=10)[history_key]
        subscription.dispose()
        newest = stored[busiest][0][-10:]
        assert [m.id for m in history.entries][-10:] == [m.id for m in newest]
        assert not history.hole_later
        assert windows == CLIENT.active_chats


def test_sync_then_verify_converges_with_the_seeded_server_database(seeded, tmp_path, capsys):
    served = tmp_path / "server.db"
    served.write_bytes((seeded / "s3.db").read_bytes())
    with EmbeddedServer(ServerConfig(token=TOKEN, db=served)) as running:
        test_sync_then_verify_converges(running, seeded, tmp_path, capsys)


def test_sync_then_verify_converges(server, seeded, tmp_path, capsys):
    db = tmp_path / "client.db"
    db.write_bytes((seeded / "client.db").read_bytes())
    address = f"127.0.0.1:{server.port}"
    common = ["--server", address, "--token", TOKEN, "--db", str(db)]
    assert chat_main(["sync", *common, "--until-idle", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["counters"]["too_long"] == 0
    assert summary["cursor"]["pts"] == server.call(lambda s: s.service.store.state().pts) > 1
    assert chat_main(["verify", *common]) == 0, capsys.readouterr().out
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_bad_arguments_and_outputs_are_clear_errors(tmp_path, capsys):
    assert seed_main(["--out", str(tmp_path / "x"), "--users", "0", "--local"]) == 2
    assert "argument --users: 0 is outside 1..100,000" in capsys.readouterr().err
    assert seed_main(["--out", str(tmp_path / "x"), "--days", "3", "--offline-days", "3"]) == 2
    assert "--offline-days must be less than --days" in capsys.readouterr().err
    blocked = tmp_path / "file"
    blocked.write_text("x")
    argv = ["--out", str(blocked / "ds"), "--local", "--quiet", "--messages", "100"]
    assert seed_main(argv) == 1
    assert "error:" in capsys.readouterr().err
    assert not (blocked / "ds").exists()
    argv = ["--out", str(tmp_path / "ok"), "--local", "--client-db", str(blocked / "c.db")]
    assert seed_main(argv) == 1
    assert "not a writable directory" in capsys.readouterr().err
    assert not (tmp_path / "ok").exists()
    argv = ["--out", str(tmp_path / "ok"), "--local", "--quiet", "--server-db", str(blocked)]
    assert seed_main(argv) == 1
    assert "exists; refusing to overwrite" in capsys.readouterr().err
    assert not (tmp_path / "ok").exists() and blocked.read_text() == "x"
    assert seed_main(["--out", str(tmp_path / "y"), "--master", "foo://bar"]) == 2
    assert "is not a Spark master" in capsys.readouterr().err
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep").write_text("x")
    assert seed_main(["--out", str(full), "--local", "--quiet", "--messages", "100"]) == 1
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_missing_java_is_one_clear_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    assert seed_main(["--out", str(tmp_path / "ds"), "--messages", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Java" in err[0]
    assert not (tmp_path / "ds").exists()
