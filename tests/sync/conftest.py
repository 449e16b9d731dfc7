"""Fixtures for the mock server's robustness tests (``test_server_*.py``).

``server`` is one running server per test module, shared by the tests that change no
data; ``account`` describes the account it generated.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sync.server.server import EmbeddedServer
from tests.sync.server_robustness_helpers import Account, _account_of, _config, _digest


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    """One server for every test that changes no data; its data is checked at the end."""
    with EmbeddedServer(_config()) as running:
        digest = _digest(running)
        yield running
        assert _digest(running) == digest, "a test on the shared server changed its data"


@pytest.fixture(scope="module")
def account(server: EmbeddedServer) -> Account:
    found = _account_of(server)
    assert found.channels, "the generated account should have channels"
    return found
