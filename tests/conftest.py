"""Shared fixtures: a file-backed postbox on ``tmp_path``, peer ids, and settings
kept away from the user's."""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from postbox import PeerId, PeerNamespace, Postbox

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("default")

#: After pytest-timeout's limit has passed with no failure, the test is stuck where no
#: Python code runs (a deadlock that holds the interpreter's lock): this much later
#: every thread's stack is printed and the run ends, instead of stalling.
HARD_LIMIT_GRACE_SECONDS = 120
_real_stderr: int | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _real_stderr
    if sys.__stderr__ is not None:
        _real_stderr = os.dup(sys.__stderr__.fileno())  # before a test captures it


def pytest_unconfigure(config: pytest.Config) -> None:
    global _real_stderr
    if _real_stderr is not None:
        os.close(_real_stderr)
        _real_stderr = None


def _time_limit(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getini("timeout") or 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    limit = _time_limit(item)
    if limit <= 0 or _real_stderr is None:
        yield
        return
    faulthandler.dump_traceback_later(
        limit + HARD_LIMIT_GRACE_SECONDS, exit=True, file=_real_stderr
    )
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True, scope="session")
def settings_of_their_own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The app's settings (theme, the tour offered) in a folder of the tests' own, for
    the tests and the demos they start, never the user's."""
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    yield
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "postbox.db"


@pytest.fixture
def postbox(db_path: Path) -> Iterator[Postbox]:
    box = Postbox(db_path)
    yield box
    box.close()


@pytest.fixture
def alice() -> PeerId:
    return PeerId.make(PeerNamespace.USER, 1001)


@pytest.fixture
def bob() -> PeerId:
    return PeerId.make(PeerNamespace.USER, 1002)


@pytest.fixture
def group() -> PeerId:
    return PeerId.make(PeerNamespace.GROUP, 2001)


@pytest.fixture
def channel() -> PeerId:
    return PeerId.make(PeerNamespace.CHANNEL, 3001)
