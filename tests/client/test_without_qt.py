"""The core works without Qt: storage, the sync engine and the headless commands import
none of it, and the window commands say in one line what to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer

TOKEN = "no-qt"
#: Runs ``postbox-chat`` in a fresh interpreter in which Qt and qasync cannot be imported.
WITHOUT_QT = (
    "import sys\n"
    "sys.modules['PySide6'] = None\n"
    "sys.modules['qasync'] = None\n"
    "from client.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def postbox_chat(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_QT, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_sync_and_verify_run_without_qt(tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=8, messages=200, seed=4)) as server:
        address = f"127.0.0.1:{server.port}"
        db = str(tmp_path / "client.db")
        synced = postbox_chat(
            "sync", "--server", address, "--token", TOKEN, "--db", db, "--until-idle", "--quiet"
        )
        assert synced.returncode == 0, synced.stderr
        assert json.loads(synced.stdout)["converged_and_idle"] is True
        verified = postbox_chat("verify", "--server", address, "--token", TOKEN, "--db", db)
        assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_window_commands_say_what_to_install() -> None:
    run = ["run", "--server", "127.0.0.1:1", "--token", "t", "--db", "c.db"]
    for command in (["demo"], run):
        result = postbox_chat(*command)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            "postbox-chat: the window needs PySide6 and qasync, which this installation lacks: "
            "install the desktop extra (pip install 'postbox-chat[desktop]')"
        ]
