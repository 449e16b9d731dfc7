"""While the pointer rests over the chat list its rows keep their places, and what
waits is counted; the order itself, without Qt."""

from __future__ import annotations

from ui.chat_order import changed_text, held_order
from ui.rows import ChatRow


def chat(peer: int, preview: str = "", *, hole: bool = False) -> ChatRow:
    return ChatRow(
        key=("hole", peer) if hole else peer,
        peer_id=peer,
        title=f"Chat {peer}",
        initials="C",
        color="#888888",
        preview=preview,
        time="12:00",
        unread=0,
        pinned=False,
        muted=False,
        online=False,
        outgoing=False,
        is_hole=hole,
    )


def keys(rows) -> list[object]:
    return [row.key for row in rows]


def test_every_shown_row_keeps_its_place_with_its_newest_content() -> None:
    shown = [chat(1), chat(2), chat(3), chat(4), chat(5)]
    newest = [chat(4, "new"), chat(1), chat(2), chat(3), chat(5)]
    held = held_order(shown, newest)
    assert keys(held.rows) == [1, 2, 3, 4, 5]
    assert held.rows[3].preview == "new"
    assert held.changed == 1


def test_rows_far_below_stay_too() -> None:
    # Before, only the rows down to the last in view were held; those below followed
    # the newest order, and scrolling down met them moved.
    shown = [chat(n) for n in range(1, 9)]
    newest = [chat(8), chat(1), chat(2), chat(3), chat(4), chat(7), chat(5), chat(6)]
    held = held_order(shown, newest)
    assert keys(held.rows) == list(range(1, 9))
    assert held.changed == 2


def test_a_new_chat_at_the_top_waits_and_is_counted() -> None:
    shown = [chat(1), chat(2), chat(3)]
    newest = [chat(9, "hi"), chat(1), chat(2), chat(3)]
    held = held_order(shown, newest)
    assert keys(held.rows) == [1, 2, 3]
    assert held.changed == 1


def test_a_chat_pushed_past_the_windows_end_stays_and_is_not_counted_again() -> None:
    shown = [chat(1), chat(2), chat(3)]
    newest = [chat(9), chat(1), chat(2)]  # a window of three: 3 fell out below
    held = held_order(shown, newest)
    assert keys(held.rows) == [1, 2, 3]
    assert held.changed == 1


def test_a_chat_gone_from_the_middle_stays_until_the_list_catches_up() -> None:
    shown = [chat(1), chat(2), chat(3)]
    held = held_order(shown, [chat(1), chat(3)])
    assert keys(held.rows) == [1, 2, 3]
    assert held.changed == 1


def test_the_window_growing_at_its_end_comes_in_below() -> None:
    shown = [chat(1), chat(2), chat(0, hole=True)]
    newest = [chat(1), chat(2), chat(3), chat(4), chat(5, hole=True)]
    held = held_order(shown, newest)
    # The loading row at the bottom leaves (nothing moves up into its place).
    assert keys(held.rows) == [1, 2, 3, 4, ("hole", 5)]
    assert held.changed == 0


def test_a_loading_row_above_other_rows_stays_until_the_list_catches_up() -> None:
    shown = [chat(0, hole=True), chat(1), chat(2)]
    newest = [chat(3), chat(4), chat(1), chat(2)]
    held = held_order(shown, newest)
    assert keys(held.rows) == [("hole", 0), 1, 2]
    assert held.changed == 2


def test_only_new_content_changes_nothing() -> None:
    shown = [chat(1), chat(2)]
    held = held_order(shown, [chat(1, "typing"), chat(2, "read")])
    assert [row.preview for row in held.rows] == ["typing", "read"]
    assert held.changed == 0


def test_nothing_shown_yet_gives_the_newest_rows() -> None:
    newest = [chat(2), chat(1)]
    held = held_order([], newest)
    assert list(held.rows) == newest
    assert held.changed == 0


def test_a_list_that_was_only_loading_takes_the_newest_rows() -> None:
    newest = [chat(2), chat(1), chat(7, hole=True)]
    held = held_order([chat(0, hole=True)], newest)
    assert list(held.rows) == newest


def test_the_hint_counts_in_words() -> None:
    assert changed_text(1) == "1 chat changed"
    assert changed_text(3) == "3 chats changed"
