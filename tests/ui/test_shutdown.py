"""The app stops cleanly on SIGINT (Ctrl+C in the terminal) and SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


@pytest.mark.parametrize(
    ("number", "devices"), [(signal.SIGINT, 1), (signal.SIGTERM, 1), (signal.SIGTERM, 2)]
)
def test_a_signal_closes_the_app_and_removes_its_temporary_folder(
    number: int, devices: int
) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    command = [sys.executable, "-m", "client.cli", "demo", "--chats", "8", "--messages", "200"]
    command += ["--devices", str(devices)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "database" in line, line
        database = Path(line.rsplit("database ", 1)[1].strip())
        folder = database.parent
        assert folder.is_dir()
        opened = "window open\n" if devices == 1 else f"{devices} windows open\n"
        assert process.stdout.readline().endswith(opened)  # the app is up
        process.send_signal(number)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert not folder.exists()
