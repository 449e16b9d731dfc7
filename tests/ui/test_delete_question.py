"""The question before a delete, worded as Telegram Desktop words it; without Qt."""

from __future__ import annotations

import pytest

from ui.delete_question import delete_question


def test_a_private_chat_offers_to_delete_for_the_other_person_by_first_name() -> None:
    question = delete_question(1, "user", "Bob Stone", all_ours=False)
    assert question.title == "Delete message?"
    assert question.note == "Are you sure you want to delete this message?"
    assert question.revoke_label == "Also delete for Bob"


def test_several_messages_are_counted() -> None:
    question = delete_question(3, "user", "Alice", all_ours=True)
    assert question.title == "Delete 3 messages?"
    assert question.note == "Are you sure you want to delete these messages?"


def test_a_group_offers_delete_for_everyone_for_the_accounts_own_messages_only() -> None:
    assert delete_question(2, "group", "Chess Club", all_ours=True).revoke_label == (
        "Delete for everyone"
    )
    mixed = delete_question(2, "group", "Chess Club", all_ours=False)
    assert mixed.revoke_label is None
    assert mixed.note.endswith("They will be deleted for you only.")


def test_other_chats_delete_for_this_account_only() -> None:
    question = delete_question(1, "channel", "News", all_ours=False)
    assert question.revoke_label is None
    assert question.note.endswith("It will be deleted for you only.")


def test_nothing_to_delete_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing to delete"):
        delete_question(0, "user", "Bob", all_ours=True)
