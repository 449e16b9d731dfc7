"""Devices in the window, against the real server: the devices dialog lists this device
and another one of the account, terminates the other, and the other's window says its
session was terminated and logs out, deleting its database."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from client import Device
from client.account import Account
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.devices import DevicesDialog, last_seen
from ui.futures import FutureRelay
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


class TwoDevices:
    """An account with this device and a phone, which answers at once."""

    def devices(self) -> Future[list[Device]]:
        done: Future[list[Device]] = Future()
        done.set_result([Device(1, "desk", True, True, 0), Device(2, "phone", False, False, 0)])
        return done


def test_the_devices_dialog_closes_with_its_button_and_with_escape(qtbot) -> None:
    relay = FutureRelay()
    dialog = DevicesDialog(TwoDevices(), relay)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: len(dialog.devices) == 2)
    (close,) = [b for b in dialog.findChildren(QPushButton) if b.text() == "Close"]
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
