"""The built wheel: what it holds, and that it works installed in a fresh environment.

The wheel is built from this checkout and installed with its entry points into a new
virtual environment, away from the checkout; its dependencies come from this
environment's site-packages (a path entry, not a site directory, so this checkout's
editable install stays out of sight). From there the CLIs run, and the window starts
offscreen and stops on SIGTERM.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("postbox", "sync", "client", "ui", "spark_tools", "dataset")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the sources (the build leaves its files there)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "--wheel-dir", str(out), str(source)],
        check=True, timeout=300, cwd=out,
    )  # fmt: skip
    (built,) = out.glob("postbox_chat-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed; its ``bin`` folder."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        check=True, timeout=300,
    )  # fmt: skip
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    dependencies = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "dependencies.pth").write_text("\n".join(sorted(dependencies)) + "\n")
    return venv / "bin"


def test_the_wheel_holds_the_product_its_data_and_its_types(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.startswith("postbox_chat-")}
    assert tops == set(PACKAGES)
    for package in PACKAGES:
        assert f"{package}/py.typed" in names
    assert "ui/styles/app.qss" in names
    assert "spark_tools/log4j2.properties" in names


def _run(bin_dir: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


def test_the_installed_commands_run_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    where = _run(
        installed, "python", "-c", "import postbox, ui.theme; print(postbox.__file__)", cwd=tmp_path
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(installed.parent)), where.stdout  # not the checkout
    for command in ("postbox-chat", "postbox-server", "postbox-seed"):
        shown = _run(installed, command, "--help", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith("usage:")
    demo = _run(
        installed, "postbox-chat", "storage-demo", "--chats", "20", "--messages", "500",
        "--db", str(tmp_path / "demo.db"), cwd=tmp_path,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr


@pytest.mark.gui
def test_the_window_starts_from_the_wheel_and_stops_on_sigterm(
    installed: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    process = subprocess.Popen(
        [str(installed / "postbox-chat"), "demo", "--chats", "8", "--messages", "200"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert "database" in process.stdout.readline()
        assert process.stdout.readline().endswith("window open\n")
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err
