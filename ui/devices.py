"""The account's devices, as Telegram's Settings > Devices: this one, then the others, each
of which can be terminated.

``DevicesDialog`` asks the account for its devices when shown and after each
termination; a terminated device stops syncing at once and offers to log out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from client import Device
from ui.account_port import AccountLike
from ui.futures import FutureRelay

__all__ = ["DevicesDialog", "last_seen"]


def last_seen(device: Device, now: float) -> str:
    """How a device's activity reads: "this device", "online", or how long ago."""
    if device.current:
        return "this device"
    if device.online:
        return "online"
    ago = max(0, int(now) - device.last_active)
    if ago < 60:
        return "active just now"
    if ago < 3600:
        return f"active {ago // 60} min ago"
    if ago < 86_400:
        return f"active {ago // 3600} h ago"
    return f"active {ago // 86_400} days ago"


class DevicesDialog(QDialog):
    """The devices of the account; ``terminated`` carries a device id once it is gone."""

    terminated = Signal(object)

    def __init__(
        self,
        account: AccountLike,
        relay: FutureRelay,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Devices")
        self.setMinimumWidth(380)
        self._account = account
        self._relay = relay
        self._clock = clock
        self.devices: list[Device] = []
        self.problem = QLabel("")
        self.problem.setObjectName("warning")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self._rows = QVBoxLayout()
        self._rows.setSpacing(8)
        heading = QLabel("Sessions of this account")
        heading.setObjectName("subtitle")
        column = QVBoxLayout(self)
        column.addWidget(heading)
        column.addLayout(self._rows)
        column.addWidget(self.problem)
        column.addStretch(1)
        # Close (and Escape, as in any dialog) hides it; the window opens it again.
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)
        column.addWidget(self.buttons)
        self.terminate_buttons: dict[int, QPushButton] = {}

    def refresh(self) -> None:
        """Ask the server for the devices again."""
        self._relay.watch(self._account.devices(), self.show_devices, self._failed)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt
        self.refresh()
        super().showEvent(event)

    def show_devices(self, devices: Sequence[Device]) -> None:
        self.devices = list(devices)
        self.problem.hide()
        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.terminate_buttons = {}
        for device in self.devices:
            self._rows.addWidget(self._row(device))

    def _row(self, device: Device) -> QWidget:
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        name = QLabel(device.name)
        name.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        seen = QLabel(last_seen(device, self._clock()))
        seen.setObjectName("caption")
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(name)
        text.addWidget(seen)
        line.addLayout(text, 1)
        if not device.current:
            button = QPushButton("Terminate")
            button.setObjectName("flat")
            button.setToolTip("End this device's session: it stops syncing and logs out")
            button.clicked.connect(lambda: self.terminate(device.device))
            self.terminate_buttons[device.device] = button
            line.addWidget(button)
        return row

    def terminate(self, device: int) -> None:
        button = self.terminate_buttons.get(device)
        if button is not None:
            button.setEnabled(False)

        def done(left: Sequence[Device]) -> None:
            self.show_devices(left)
            self.terminated.emit(device)

        self._relay.watch(self._account.terminate_device(device), done, self._failed)

    def _failed(self, error: BaseException) -> None:
        self.problem.setText(f"Could not reach the server: {error}")
        self.problem.show()
        for button in self.terminate_buttons.values():
            button.setEnabled(True)
