"""Edits and renames that read like people's: small changes, and back again."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from dataset import AccountSpec, added_caption, build_dataset, draft_of, edited, renamed
from dataset.conversation import ScriptNode, scripts
from dataset.renames import season
from dataset.text_edits import has_typo, with_typo
from postbox import PeerNamespace


def _all_lines() -> list[str]:
    texts: list[str] = []
    nodes: list[ScriptNode] = [node for roots, _ in scripts().values() for node in roots]
    while nodes:
        node = nodes.pop()
        texts.extend(alt for alt in node.alts if "{" not in alt)
        nodes.extend(node.kids)
    return sorted(set(texts))


LINES = _all_lines()


def _close(first: str, second: str) -> bool:
    """At most three words differ, or most of their letters agree."""
    words = difflib.SequenceMatcher(None, first.split(), second.split())
    changed = sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in words.get_opcodes() if tag != "equal"
    )
    return changed <= 3 or difflib.SequenceMatcher(None, first, second).ratio() > 0.75


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LINES), st.integers(0, 2**64 - 1))
def test_a_draft_differs_from_its_edit_by_a_small_change(text, h):
    draft = draft_of(text, h)
    if draft is not None:
        assert draft != text and _close(draft, text)
        assert draft == draft_of(text, h)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LINES), st.integers(0, 2**64 - 1))
def test_an_edit_fixes_the_typo_a_line_was_typed_with(text, h):
    typed = with_typo(text, h)
    if typed != text:
        assert has_typo(typed)
        assert edited(typed, h) == text
    after = edited(text, h)
    assert after is None or (after != text and _close(after, text) and "(edited)" not in after)


def test_edits_change_a_time_or_add_a_word():
    assert edited("Coffee at 7:30?", 1) == "Coffee at 8:00?"
    assert edited("Coffee at 7:30?", 3) == "Coffee at 8:30?"
    assert edited("Coffee at 12:30?", 5) == "Coffee at 12:00?"
    assert edited("Coffee at 12:30?", 1) == "Coffee at 1:00?"  # a twelve-hour clock
    assert edited("Dinner at 19:30", 1) == "Dinner at 20:00"
    assert edited("Coffee at 7:30?", 0) == "A coffee at 7:30?"
    assert edited("Can you send me the report?", 0) == "Could you please send me the report?"
    assert draft_of("I'm running a bit late", 3) is not None
    assert edited("", 5) is None
    assert edited("Look: https://example.com/a", 5) is None
    post = edited("Bus line 12 changes its route from Monday", 4, post=True)
    assert post is not None and post.startswith("Bus line 12") and "Update:" in post


def test_media_sent_without_a_caption_gets_one_fitting_its_kind():
    for kind in ("photo", "video", "voice", "file", "gif"):
        assert added_caption(kind, 3)
    assert added_caption("sticker", 3) is None


def test_edited_messages_of_a_dataset_read_as_their_drafts_corrected():
    spec = AccountSpec(4, 20, 5, 3, 5_000, 10, log_days=3, edit_share=0.2)
    edited_messages = [m for m in build_dataset(spec).messages if m.edit_timestamp]
    assert len(edited_messages) > 200
    assert all(m.text and not m.media for m in edited_messages)


def test_renames_add_something_of_their_kind_and_take_it_off_again():
    now = 1_717_266_600  # June 2024
    assert season(now) == "Summer 2024"
    group, channel = int(PeerNamespace.GROUP), int(PeerNamespace.CHANNEL)
    user = int(PeerNamespace.USER)
    for h in range(40):
        for name, namespace in (
            ("Climbing Club", group),
            ("Football Daily", channel),
            ("Katarzyna Nowak", user),
            ("Chen Ito", user),
        ):
            new = renamed(name, namespace, h, now)
            assert new != name and new.startswith(name)
            assert renamed(new, namespace, h + 1, now) == name
            extra = new[len(name) :]
            assert not any(c.isdigit() for c in extra) or namespace == channel
    assert renamed("Climbing Club", group, 0, now).startswith("Climbing Club · ")
    assert renamed("Football Daily", channel, 0, now) == "Football Daily · Summer 2024"
    assert renamed("Katarzyna Nowak", user, 1, now) == "Katarzyna Nowak (Kasia)"
