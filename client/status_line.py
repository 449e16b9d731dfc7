"""The sync engine's state as a person reads it: one sentence, and what they can do.

``status_line(status)`` turns an ``EngineStatus`` into the line the window shows above
the chat list, Telegram's "Connecting…" / "Updating…" and more: why it cannot connect
and when it tries again (with a retry button), a refused token (no retry: it will not
help), a database that belongs to another account (logging out empties it), a damaged
database (restore it from a copy, or log out to empty it), a failure
that keeps coming back (the database full), that another process syncs the database
(a standby: this window shows what that one receives), or that the server asked to
slow down (``FLOOD_WAIT``) and for how long. Nothing is shown while all is well. Pure:
tested without Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sync.engine import EngineStatus

__all__ = ["StatusLine", "status_line"]

_PROBLEM_LIMIT = 90
#: What waits, by the kind of request the server asked to wait.
_FLOOD_WAITING = {
    "send": "sending",
    "difference": "updating",
    "channelDifference": "updating channels",
    "history": "loading history",
}


@dataclass(frozen=True, slots=True)
class StatusLine:
    text: str
    #: A retry button makes sense (waiting before the next attempt to connect).
    can_retry: bool = False
    #: The engine has stopped for good: nothing will change without the user.
    final: bool = False
    #: Something is wrong (drawn as a warning), not just in progress.
    warning: bool = False
    #: Logging out (deleting this device's database) is what is left to do.
    can_log_out: bool = False


def status_line(status: EngineStatus | None) -> StatusLine:
    if status is None:  # no sync engine runs
        return StatusLine("Offline")
    connection = status.connection
    if connection == "session terminated":
        return StatusLine(
            "This session was terminated from another device.",
            final=True,
            warning=True,
            can_log_out=True,
        )
    if connection == "token refused":
        return StatusLine(
            "The server refused this token. Start the app again with the right one.",
            final=True,
            warning=True,
        )
    if connection == "another account's database":
        return StatusLine(
            "This database belongs to another account: start the app with that account's"
            " token, or log out to empty it.",
            final=True,
            warning=True,
            can_log_out=True,
        )
    if connection == "database damaged":
        return StatusLine(
            "This database is damaged and sync has stopped: restore it from a copy, or"
            " log out to empty it and fetch everything again.",
            final=True,
            warning=True,
            can_log_out=True,
        )
    if status.role == "standby":
        if status.problem:
            return StatusLine(_sentence(status.problem), warning=True)
        return StatusLine("Standby: another process syncs this account; its updates show here.")
    if connection.startswith("waiting to reconnect"):
        cause = _cause(status.problem, "cannot reach the server")
        return StatusLine(
            f"Waiting for network: {cause}. {_retrying(status.retry_in)}",
            can_retry=True,
            warning=True,
        )
    if connection.startswith("reconnecting"):
        if status.retry_in is not None and status.retry_in >= 1:
            return StatusLine(
                f"Connection lost. {_retrying(status.retry_in)}", can_retry=True, warning=True
            )
        return StatusLine("Connection lost. Reconnecting…")
    if connection != "connected":
        if status.problem:
            return StatusLine(
                f"Connecting… ({_cause(status.problem, '')}). {_retrying(status.retry_in)}",
                can_retry=status.retry_in is not None,
                warning=True,
            )
        return StatusLine("Connecting…")
    if status.problem:
        return StatusLine(_sentence(status.problem), warning=True)
    if status.flood_waits:
        kind, seconds = max(status.flood_waits, key=lambda wait: wait[1])
        what = _FLOOD_WAITING.get(kind, kind)
        return StatusLine(f"The server asked to slow down: {what} waits {math.ceil(seconds)} s.")
    if status.operation.startswith("pollDifference"):
        return StatusLine("Updating…")
    return StatusLine("")


def _retrying(seconds: float | None) -> str:
    if seconds is None or seconds < 1:
        return "Retrying now…"
    return f"Retrying in {math.ceil(seconds)} s."


def _cause(problem: str | None, prefix: str) -> str:
    """The reason inside an engine problem ("cannot reach the server: Connection
    refused" gives "connection refused"), short enough for one line."""
    text = problem or "no connection"
    if prefix and text.startswith(prefix + ": "):
        text = text[len(prefix) + 2 :]
    text = text[:1].lower() + text[1:]
    return _clip(text)


def _sentence(problem: str) -> str:
    text = _clip(problem)
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "…")) else ".")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PROBLEM_LIMIT else text[: _PROBLEM_LIMIT - 1] + "…"
