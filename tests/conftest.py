"""Shared fixtures: a file-backed postbox on ``tmp_path`` and peer ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from postbox import PeerId, PeerNamespace, Postbox

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("default")


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
