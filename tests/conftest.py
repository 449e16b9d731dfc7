"""Shared fixtures: a file-backed postbox on ``tmp_path``, peer ids, and settings
kept away from the user's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from postbox import PeerId, PeerNamespace, Postbox

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("default")


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
