"""What the window says and offers about messages that failed to send, and where the
compose box gives way to a mute button. Pure Python, beside ``rows``.

The server's refusal comes as a code (``CHAT_WRITE_FORBIDDEN``); a bubble says it as a
sentence a person understands ("You can't post in this channel") and offers to send it
again or delete it, and to send them all again when several failed in the chat. The
chat list marks a chat holding a failed message with a red "!" where the unread count
goes, and a failed top message is not shown as sent. In a broadcast channel the account
only reads there is no compose box, only Mute or Unmute, as Telegram does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from postbox import MessageFailure, Peer, PeerNotificationSettings

__all__ = [
    "FAILED_PREFIX",
    "ComposeState",
    "FailureAction",
    "compose_state",
    "failure_actions",
    "failure_sentence",
    "preview_prefix",
]

#: What a chat's preview starts with when its top message failed to send.
FAILED_PREFIX = "Not sent: "
_SENT_PREFIX = "You: "

#: Each refusal in words, by the server's code; ``{where}`` is "channel" or "chat".
_SENTENCES = {
    "CHAT_WRITE_FORBIDDEN": "You can't write in this chat",
    "PEER_ID_INVALID": "This {where} is not available",
    "CHANNEL_INVALID": "This channel is not available",
    "CHANNEL_PRIVATE": "You are no longer a member of this channel",
    "MESSAGE_TOO_LONG": "The message is too long",
    "FRAME_TOO_LARGE": "The message is too large to send",
    "MESSAGE_EMPTY": "The message is empty",
    "MESSAGE_ID_INVALID": "The message it answers or forwards is gone",
    "MEDIA_INVALID": "This sticker or GIF can't be sent",
    "STICKERSET_INVALID": "This sticker can't be sent",
    "INVALID_PARAMS": "The server did not accept this message",
}
_UNKNOWN = "The message was not sent"


def failure_sentence(failure: MessageFailure | None, *, channel: bool = False) -> str:
    """Why a message was not sent, in words (``channel``: it was meant for a channel)."""
    if failure is None:
        return _UNKNOWN
    if failure.code == "CHAT_WRITE_FORBIDDEN" and channel:
        return "You can't post in this channel"
    sentence = _SENTENCES.get(failure.code, _UNKNOWN)
    return sentence.format(where="channel" if channel else "chat")


class FailureAction(enum.Enum):
    RETRY = "retry"
    DELETE = "delete"
    RETRY_ALL = "retry_all"


def failure_actions(failed_in_chat: int) -> tuple[tuple[FailureAction, str], ...]:
    """What a failed message's menu offers, with each entry's label: send it again,
    delete it, and send every failed message of the chat again when there are several."""
    actions = [(FailureAction.RETRY, "Retry"), (FailureAction.DELETE, "Delete")]
    if failed_in_chat > 1:
        actions.append((FailureAction.RETRY_ALL, f"Retry all {failed_in_chat}"))
    return tuple(actions)


def preview_prefix(*, outgoing: bool, failed: bool) -> str:
    """What a chat's preview starts with: "You: " for a message sent from here, "Not
    sent: " for one that failed to send, nothing for one received."""
    if failed:
        return FAILED_PREFIX
    return _SENT_PREFIX if outgoing else ""


@dataclass(frozen=True, slots=True)
class ComposeState:
    """The bottom of a chat: the compose box, or (``can_post`` false) a button that
    mutes or unmutes the chat, labelled ``mute_label``."""

    can_post: bool
    muted: bool = False

    @property
    def mute_label(self) -> str:
        return "Unmute" if self.muted else "Mute"


def compose_state(
    peer: Peer | None, settings: PeerNotificationSettings | None, now: int
) -> ComposeState:
    """The compose box where the account may write (a chat not known yet included, the
    server refusing what it must); a mute button in a channel it only reads."""
    if peer is None or peer.can_post:
        return ComposeState(can_post=True)
    return ComposeState(can_post=False, muted=settings is not None and settings.is_muted(now))
