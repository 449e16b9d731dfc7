"""A chat's interface state as the screen uses it, without Qt: what is restored, when a
draft from another device may replace the compose box, and long texts split."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from client import MAX_MESSAGE_LENGTH
from postbox import ChatInterfaceState, ScrollPosition, SynchronizeableDraft
from ui.chat_interface import (
    ComposeDraft,
    Restore,
    length_hint,
    remote_draft_applies,
    restore_of,
    split_message,
)


def test_a_chat_comes_back_with_its_draft_scroll_and_selection() -> None:
    state = ChatInterfaceState(
        SynchronizeableDraft("half a thought", 7, 100), ScrollPosition(40, -12), (38, 40)
    )
    assert restore_of(state, unread=0) == Restore(
        ComposeDraft("half a thought", 7), ScrollPosition(40, -12), (38, 40)
    )
    assert restore_of(None, unread=3) == Restore(ComposeDraft(), None)


def test_unread_messages_open_the_chat_at_them_not_where_it_was_left() -> None:
    state = ChatInterfaceState(SynchronizeableDraft("kept", None, 1), ScrollPosition(40, 0))
    restored = restore_of(state, unread=2)
    assert restored.scroll is None and restored.draft == ComposeDraft("kept")


def test_a_draft_from_another_device_never_overwrites_typing() -> None:
    known = ComposeDraft("see you")
    assert remote_draft_applies(ComposeDraft("see you"), known)
    assert not remote_draft_applies(ComposeDraft("see you at 5"), known)
    assert not remote_draft_applies(ComposeDraft("see you", reply_to_id=3), known)


def test_the_counter_shows_near_the_limit_and_says_how_many_messages_past_it() -> None:
    assert length_hint("x" * 100) is None
    assert length_hint("x" * (MAX_MESSAGE_LENGTH - 10)) == ("4,086 / 4,096", False)
    assert length_hint("word " * 1000) == ("4,999 / 4,096 · sends as 2 messages", True)


def test_a_long_text_is_cut_at_a_paragraph_then_a_word() -> None:
    paragraphs = "a" * 60 + "\n\n" + "b" * 30
    assert split_message(paragraphs, limit=80) == ["a" * 60, "b" * 30]
    words = "word " * 30
    parts = split_message(words, limit=42)
    assert all(len(p) <= 42 and not p.startswith(" ") and p.endswith("word") for p in parts)
    assert split_message("x" * 100, limit=40) == ["x" * 40, "x" * 40, "x" * 20]
    assert split_message("the first one. then two three", limit=20) == [
        "the first one.",
        "then two three",
    ]
    assert split_message("  ", limit=10) == []


@given(st.text(st.sampled_from("ab .\n"), max_size=400), st.integers(5, 60))
def test_split_parts_fit_and_lose_nothing_but_edge_spaces(text: str, limit: int) -> None:
    parts = split_message(text, limit)
    assert all(0 < len(part) <= limit and part == part.strip() for part in parts)
    assert "".join(parts).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )
