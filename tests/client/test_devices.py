"""Devices of one account: listing them, and terminating one from another.

A terminated device's connections close, its next login is refused with
``SESSION_REVOKED``, its engine stops for good and its status line offers to log out,
which deletes its database. The other devices go on syncing.
"""

from __future__ import annotations

import asyncio

import pytest

from client import status_line
from client.account import Account
from sync.connection import ServerConnection
from sync.engine import DEVICE_PREFERENCE, SessionTerminatedError
from sync.protocol import Auth, ErrorCode, RpcError
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.client.account_helpers import synced_as as synced
from tests.sync.engine_helpers import FAST

TOKEN = "devices"


@pytest.fixture
def server():
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=10, messages=200, seed=3)) as running:
        yield running


def test_a_device_lists_the_others_and_terminates_one(server, tmp_path) -> None:
    with (
        synced(server, tmp_path / "phone.db", TOKEN) as phone,
        synced(server, tmp_path / "laptop.db", TOKEN) as laptop,
    ):
        devices = phone.devices().result(timeout=30)
        assert [d.current for d in devices] == [True, False]
        assert all(d.online for d in devices)
        laptop_id = laptop.postbox.run(lambda tx: tx.get_preference(DEVICE_PREFERENCE))
        assert devices[1].device == laptop_id
        left = phone.terminate_device(laptop_id).result(timeout=30)
        assert [d.device for d in left] == [devices[0].device]
        assert laptop.worker.join(30)
        assert isinstance(laptop.worker.error, SessionTerminatedError)
        line = status_line(laptop.status_later().result())
        assert line.final and line.can_log_out
        assert "terminated" in line.text
        # The phone goes on: it still sends.
        me = phone.postbox.run(lambda tx: tx.get_preference("account.peer_id"))
        assert me
        assert phone.worker.call(lambda engine: engine.wait_idle(timeout=30))
        laptop.log_out()
        assert laptop.logged_out
        assert not list(tmp_path.glob("laptop.db*"))
        assert (tmp_path / "phone.db").exists()


def test_a_terminated_device_cannot_log_in_again(server, tmp_path) -> None:
    with synced(server, tmp_path / "old.db", TOKEN) as old:
        device = old.postbox.run(lambda tx: tx.get_preference(DEVICE_PREFERENCE))
    server.call(lambda s: s.service.revoke(s.service.accounts.primary_id, device))
    with Account(tmp_path / "old.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST) as again:
        assert again.worker.join(30)
        assert isinstance(again.worker.error, SessionTerminatedError)

    # The error a client sees, in the protocol's words.
    async def login() -> None:
        connection = await ServerConnection.open("127.0.0.1", server.port)
        try:
            with pytest.raises(RpcError) as refused:
                await connection.call(Auth(TOKEN, device))
            assert refused.value.code is ErrorCode.SESSION_REVOKED
        finally:
            await connection.close()

    asyncio.run(login())


def test_a_device_cannot_terminate_itself_or_an_unknown_one(server, tmp_path) -> None:
    with synced(server, tmp_path / "one.db", TOKEN) as one:
        mine = one.postbox.run(lambda tx: tx.get_preference(DEVICE_PREFERENCE))
        for device in (mine, 12345):
            with pytest.raises(RpcError) as refused:
                one.terminate_device(device).result(timeout=30)
            assert refused.value.code is ErrorCode.DEVICE_INVALID
