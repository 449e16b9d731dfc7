"""What the confirmation before a delete asks, as Telegram Desktop asks it.

``delete_question`` words the dialog for ``count`` messages of a chat and says whether
the messages may go for the other side too: in a private chat any message may
("Also delete for Bob"), in a group only the account's own ("Delete for everyone");
elsewhere they go for this account only. Pure Python: tested without Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DeleteQuestion", "delete_question"]


@dataclass(frozen=True, slots=True)
class DeleteQuestion:
    """The dialog's heading and note, and the checkbox that deletes for the other side
    too (``revoke_label``; ``None``: not offered), ticked at first."""

    title: str
    note: str
    revoke_label: str | None


def delete_question(count: int, kind: str, chat_name: str, *, all_ours: bool) -> DeleteQuestion:
    """The question before deleting ``count`` messages in a chat of ``kind`` (as
    ``peer_kind`` names it) called ``chat_name``; ``all_ours``: the account sent them."""
    if count < 1:
        raise ValueError(f"nothing to delete: {count} messages")
    what = "message" if count == 1 else f"{count} messages"
    these = "this message" if count == 1 else "these messages"
    revoke: str | None = None
    if kind == "user":
        first_name = chat_name.split()[0] if chat_name.split() else "them"
        revoke = f"Also delete for {first_name}"
    elif kind == "group" and all_ours:
        revoke = "Delete for everyone"
    note = f"Are you sure you want to delete {these}?"
    if revoke is None:
        note += f" {'They' if count > 1 else 'It'} will be deleted for you only."
    return DeleteQuestion(f"Delete {what}?", note, revoke)
