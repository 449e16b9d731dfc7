"""Operation-log tags: each kind of work the engine keeps in the log to survive a restart."""

from __future__ import annotations

__all__ = [
    "DELETE_TAG",
    "DRAFT_TAG",
    "EDIT_TAG",
    "READ_TAG",
    "SEND_TAG",
    "SETTINGS_TAG",
    "VALIDATE_READ_STATE_TAG",
    "VALIDATE_TAG_SUMMARIES_TAG",
]

#: A message to send.
SEND_TAG = 1
#: A read made here, to tell the server.
READ_TAG = 2
#: An edit of a sent message.
EDIT_TAG = 3
#: A chat whose read state waits for the server's word (``read_states``).
VALIDATE_READ_STATE_TAG = 4
#: A chat whose shared-media counts wait for the server's word (``tag_summaries``).
VALIDATE_TAG_SUMMARIES_TAG = 5
#: Messages deleted here, to delete on the server.
DELETE_TAG = 6
#: A chat muted or unmuted here, to tell the server.
SETTINGS_TAG = 7
#: A chat's draft saved here, to share with the account's other devices.
DRAFT_TAG = 8
