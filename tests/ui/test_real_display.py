"""The real app on a real X server (Xvfb), not the offscreen platform: it opens its window,
stops on SIGTERM without a traceback, and its shortcuts work with X11's key bindings."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.gui,
    pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed"),
]


def wait_until_open(process: subprocess.Popen[str]) -> None:
    """Read the app's output until it says its window is open on the display."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.endswith("window open\n"):
            return
    raise AssertionError(f"the app ended before its window opened: {process.communicate()[1]}")


def app_pid(marker: str) -> int | None:
    """The app's process (xvfb-run's child), found by its database path."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # The app itself, not the xvfb-run script that started it with the same words.
        if command[:3] == [sys.executable.encode(), b"-m", b"client.cli"] and (
            marker.encode() in command
        ):
            return int(entry.name)
    return None


def test_the_app_runs_on_a_real_x_server_and_stops_cleanly(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    db = tmp_path / "real-display.db"
    app = [sys.executable, "-m", "client.cli", "demo", "--chats", "30", "--messages", "1500"]
    command = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", *app, "--db", str(db)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        wait_until_open(process)
        pid = app_pid(str(db))
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err, err


def test_a_display_that_goes_away_stops_the_app_without_a_traceback(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    db = tmp_path / "gone.db"
    app = [sys.executable, "-m", "client.cli", "demo", "--chats", "10", "--messages", "300"]
    process = subprocess.Popen(
        ["xvfb-run", "-a", *app, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        wait_until_open(process)
        server = next(
            int(entry.name)
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit()
            and (entry / "cmdline").exists()
            and (entry / "cmdline").read_bytes().split(b"\0")[0].endswith(b"Xvfb")
            and f"PPid:\t{process.pid}\n" in (entry / "status").read_text()
        )
        os.kill(server, signal.SIGTERM)  # the X server goes away under the app
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    # Either Qt's loop ends and the app says so, or Xlib ends the process in the middle
    # of a call with its own line: no Python traceback either way, and not success.
    assert process.returncode != 0
    assert "Traceback" not in err, err
    assert "the display went away; the app stopped" in err or "X11 connection broke" in err


def test_every_window_shortcut_has_its_own_keys_on_x11(tmp_path) -> None:
    """With X11's standard key bindings (the offscreen platform has none), no two of the
    window's shortcuts answer to the same keys: Qt fires neither of two that do. Ctrl+Q,
    pressed through Qt's shortcut map, closes the window."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    probe = [sys.executable, "-m", "tests.ui.shortcut_probe", str(tmp_path / "probe.db")]
    done = subprocess.run(
        ["xvfb-run", "-a", *probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["platform"] == "xcb"
    assert "Ctrl+Q" in report["quit_bindings"]  # what StandardKey.Quit would add there
    owners: dict[str, list[str]] = {}
    for keys, owner in report["shortcuts"]:
        owners.setdefault(keys, []).append(owner)
    assert {keys: who for keys, who in owners.items() if len(who) > 1} == {}
    assert "Ctrl+Q" in owners
    assert report["active"]
    assert report["closed_by_ctrl_q"]
