"""An account's devices: each client database logs in with a device id of its own.

Every box keeps its account's devices (table ``devices``): the name each gave, when it
was last active, and whether its session was terminated. A terminated device is refused
at its next login (``SESSION_REVOKED``) and its open connections are closed, as
Telegram's ``auth.resetAuthorization`` does to another device's session.
"""

from __future__ import annotations

from collections.abc import Collection

from sync.protocol import Authorizations, DeviceSession, ErrorCode, ProtocolError
from sync.server.store import ServerStore, StoreError

__all__ = ["check_in", "revoke", "sessions"]


def check_in(box: ServerStore, device: int, name: str) -> None:
    """A device logs in: refused if its session was terminated, else remembered."""
    if not device:
        return
    row = box.database.one("SELECT revoked FROM devices WHERE device = ?", (device,))
    if row is not None and row[0]:
        raise ProtocolError(
            "this session was terminated from another device", ErrorCode.SESSION_REVOKED
        )
    box.database.execute(
        "INSERT INTO devices (device, name, last_active) VALUES (?, ?, ?)"
        " ON CONFLICT (device) DO UPDATE SET name = excluded.name,"
        " last_active = excluded.last_active",
        (device, name or "unnamed device", box.now()),
    )


def sessions(box: ServerStore, current: int, online: Collection[int]) -> Authorizations:
    """The devices whose sessions stand, the asking one (``current``) first, then the
    most recently active."""
    rows = box.database.execute(
        "SELECT device, name, last_active FROM devices WHERE revoked = 0"
        " ORDER BY device = ? DESC, last_active DESC, device",
        (current,),
    )
    return Authorizations(
        tuple(
            DeviceSession(int(device), str(name), device == current, device in online, int(last))
            for device, name, last in rows
        )
    )


def revoke(box: ServerStore, device: int, *, asking: int) -> None:
    """Terminate ``device``'s session (not the asking device's own: that is logging out)."""
    if device == asking:
        raise StoreError(
            "a device cannot terminate its own session; log out instead", ErrorCode.DEVICE_INVALID
        )
    row = box.database.one("SELECT revoked FROM devices WHERE device = ?", (device,))
    if row is None or row[0]:
        raise StoreError(f"no device {device} with a session", ErrorCode.DEVICE_INVALID)
    box.database.execute("UPDATE devices SET revoked = 1 WHERE device = ?", (device,))
