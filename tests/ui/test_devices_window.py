"""Devices in the window, against the real server: the devices dialog lists this device
and another one of the account, terminates the other, and the other's window says its
session was terminated and logs out, deleting its database."""

from __future__ import annotations

import pytest

from client import Device
from client.account import Account
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.devices import last_seen
from ui.main_window import MainWindow

pytestmark = pytest.mark.gui

TOKEN = "devices-ui"


def test_terminating_another_device_logs_it_out(qtbot, tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=4, peers=8, messages=100)) as server:
        windows = []
        accounts = []
        try:
            for name in ("desk", "phone"):
                account = Account(
                    tmp_path / f"{name}.db",
                    "127.0.0.1",
                    server.port,
                    TOKEN,
                    timeouts=FAST,
                    device_name=f"the {name}",
                ).start()
                accounts.append(account)
                window = MainWindow(account)
                qtbot.addWidget(window)
                window.show()
                windows.append(window)
            desk, phone = windows
            server.wait_for(lambda s: len(s.service.accounts.primary.database.execute(
                "SELECT device FROM devices")) == 2)  # fmt: skip
            desk.open_devices()
            dialog = desk.devices_dialog
            assert dialog is not None
            qtbot.waitUntil(lambda: len(dialog.devices) == 2, timeout=20_000)
            assert [d.name for d in dialog.devices] == ["the desk", "the phone"]
            other = dialog.devices[1].device
            assert list(dialog.terminate_buttons) == [other]
            with qtbot.waitSignal(dialog.terminated, timeout=20_000):
                dialog.terminate_buttons[other].click()
            assert [d.name for d in dialog.devices] == ["the desk"]
            # The phone's window says so and offers to log out.
            qtbot.waitUntil(lambda: phone.log_out_button.isVisible(), timeout=20_000)
            assert "terminated" in phone.connection_label.text()
            phone.log_out_button.click()
            assert not phone.isVisible()
            assert accounts[1].logged_out
            assert not list(tmp_path.glob("phone.db*"))
            assert (tmp_path / "desk.db").exists()
            assert not desk.log_out_button.isVisible()
        finally:
            for window in windows:
                window.close_feeds()
            for account in accounts:
                account.close()


def test_last_seen_reads_like_a_devices_list() -> None:
    now = 1_000_000
    assert last_seen(Device(1, "a", True, True, now), now) == "this device"
    assert last_seen(Device(2, "b", False, True, now - 500), now) == "online"
    assert last_seen(Device(3, "c", False, False, now - 30), now) == "active just now"
    assert last_seen(Device(4, "d", False, False, now - 600), now) == "active 10 min ago"
    assert last_seen(Device(5, "e", False, False, now - 7200), now) == "active 2 h ago"
    assert last_seen(Device(6, "f", False, False, now - 3 * 86_400), now) == "active 3 days ago"
