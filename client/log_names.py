"""What each operation-log tag holds, in words, for the inspector."""

from __future__ import annotations

from sync.engine.log_tags import (
    DELETE_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
    VALIDATE_READ_STATE_TAG,
    VALIDATE_TAG_SUMMARIES_TAG,
)

__all__ = ["operation_log_name"]

_NAMES = {
    SEND_TAG: "messages to send",
    READ_TAG: "reads to tell the server",
    EDIT_TAG: "edits to send",
    VALIDATE_READ_STATE_TAG: "read states to check with the server",
    VALIDATE_TAG_SUMMARIES_TAG: "media counts to check with the server",
    DELETE_TAG: "deletions to send",
    SETTINGS_TAG: "mutes to send",
}


def operation_log_name(tag: int) -> str:
    """ "reads to tell the server (tag 2)"; an unknown tag by its number."""
    name = _NAMES.get(tag)
    return f"{name} (tag {tag})" if name else f"operation log (tag {tag})"
