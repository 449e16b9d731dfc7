"""The account's devices as a devices screen lists them (the server's sessions)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Device"]


@dataclass(frozen=True, slots=True)
class Device:
    """One device (session) of the account: ``current`` is this one, ``online`` has a
    connection open now."""

    device: int
    name: str
    current: bool
    online: bool
    #: Unix seconds of its last login or request.
    last_active: int
