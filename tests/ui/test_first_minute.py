"""A newcomer's first minute with the real ``postbox-chat demo`` on a real X server
(Xvfb, not the offscreen platform, whose empty key bindings hide what X11 does): live
traffic with the welcome card open, a draft that stays in its chat across Ctrl+Tab, a
channel the account only reads without a compose box, a refused post offering Retry, and
Ctrl+Q quitting with exit code 0. ``first_minute_walk.py`` drives the window; this test
starts the X server, reads what the walk found and presses Ctrl+Q as X key events."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.gui,
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed"),
]

WALK = Path(__file__).with_name("first_minute_walk.py")
ROOT = Path(__file__).parents[2]


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh X server of our own; it says its display number once it listens."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten",
         "tcp"],
        pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write_end)
    try:
        with os.fdopen(read_end) as announced:
            number = announced.readline().strip()
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def press_ctrl_q(display: str, pid: int) -> None:
    """Ctrl+Q as the X server delivers a keyboard's: to the app's focused window."""
    env = {**os.environ, "DISPLAY": display}
    found = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--pid", str(pid)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    windows = found.stdout.split()
    assert windows, f"no window of the app on the display: {found.stderr}"
    subprocess.run(["xdotool", "windowfocus", "--sync", windows[0]], env=env, check=True)
    subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+q"], env=env, check=True)


def test_the_first_minute_of_the_demo(display: str, tmp_path: Path) -> None:
    xdotool = shutil.which("xdotool") is not None
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(DISPLAY=display, XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(ROOT))
    command = [sys.executable, str(WALK), str(tmp_path / "demo.db")]
    if not xdotool:
        command.append("--quit-here")
    app = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    checks: dict[str, tuple[bool, str]] = {}
    try:
        assert app.stdout is not None
        for line in app.stdout:
            if line.startswith("check "):
                found = json.loads(line.removeprefix("check "))
                checks[found["check"]] = (found["ok"], found["detail"])
            elif line.startswith("walk done"):
                if xdotool:
                    press_ctrl_q(display, app.pid)
                break
        try:
            _out, err = app.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            app.kill()
            _out, err = app.communicate()
            pytest.fail(f"the app did not quit on Ctrl+Q; the walk found {checks}")
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    failed = {name: detail for name, (ok, detail) in checks.items() if not ok}
    assert not failed, failed
    assert set(checks) >= {
        "the welcome card is open",
        "traffic arrives with the welcome card open",
        "the next chat's compose box is empty",
        "the chat list shows the draft",
        "the draft is back in its chat",
        "a channel without rights shows no compose box",
        "a failed send offers Retry",
    }, checks
    assert app.returncode == 0, err  # Ctrl+Q quit, and the app says all went well
    assert "Traceback" not in err, err
