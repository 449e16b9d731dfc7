"""Generated conversations: deterministic, replies that answer, no empty messages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dataset import AccountSpec, ChatRows, LastMessage, LiveTalk, build_dataset, plan_account
from dataset.conversation import Line, TalkChat, converse, parse_script, post, scripts
from dataset.counter_hash import hash64
from dataset.talk_scripts import BOT_SCRIPTS, SCRIPTS
from postbox import MediaKind, PeerNamespace

SPEC = AccountSpec(8, 30, 8, 5, 6_000, 20, log_days=2, edit_share=0.05)


def _lines(spec: AccountSpec) -> list[tuple[ChatRows, int, Line]]:
    plan = plan_account(spec)
    out: list[tuple[ChatRows, int, Line]] = []
    for chat in plan.chats:
        rows = ChatRows(plan, chat)
        out.extend((rows, index, rows.line(index)) for index in range(chat.count))
    return out


def test_the_text_of_every_message_is_a_pure_function_of_the_seed():
    first = build_dataset(SPEC)
    assert [m.text for m in first.messages] == [m.text for m in build_dataset(SPEC).messages]
    other = build_dataset(AccountSpec(9, 30, 8, 5, 6_000, 20, log_days=2, edit_share=0.05))
    assert [m.text for m in other.messages] != [m.text for m in first.messages]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**40), st.integers(0, 10_000))
def test_a_message_alone_reads_as_it_does_in_its_conversation(seed, pick):
    spec = AccountSpec(seed, 5, 3, 1, 2_000, 6)
    plan = plan_account(spec)
    chat = plan.chats[pick % len(plan.chats)]
    if not chat.count:
        return
    index = pick % chat.count
    in_order = ChatRows(plan, chat)
    for earlier in range(index + 1):
        fate = in_order.fate(earlier)
    assert ChatRows(plan, chat).fate(index) == fate


def test_replies_answer_the_message_they_reply_to():
    lines = _lines(SPEC)
    by_chat: dict[int, dict[int, Line]] = {}
    for rows, index, line in lines:
        by_chat.setdefault(rows.peer_id, {})[index] = line
    answered = quoted = 0
    for rows, index, line in lines:
        if not line.back:
            continue
        target = by_chat[rows.peer_id][index - line.back]
        assert target.voice != line.voice  # nobody answers themselves
        if target.act == "question":
            assert line.act == "answer", (target.text, line.text)
            answered += 1
        if target.act == "media":
            assert line.act == "reaction", (target.text, line.text)
        fate = rows.fate(index)
        if line.quote:
            quoted += 1
            assert target.act in ("question", "media")
            assert fate.row[9] == fate.id - line.back  # reply_to_id: the answered message
        else:
            assert fate.row[9] is None
    assert answered > 200 and quoted > 50


def test_a_conversation_answers_a_question_with_one_of_its_answers():
    chat = TalkChat("private", ("food",), 256)
    for draw in range(300):
        lines = converse(chat, draw, [None] * 4)
        for step, line in enumerate(lines):
            if line.back:
                assert lines[step - line.back].voice != line.voice
                if lines[step - line.back].act == "question":
                    assert line.act == "answer"


def test_no_message_is_empty_unless_it_carries_media():
    dataset = build_dataset(SPEC)
    assert all(m.text or m.media for m in dataset.messages)
    texts = [m.text for m in dataset.messages if not m.media]
    assert all(text.strip() == text and "{" not in text for text in texts)
    assert "(edited)" not in {m.text for m in dataset.messages}


def test_groups_have_several_authors_and_channels_post_headlines():
    dataset = build_dataset(SPEC)
    for group_id, _members in dataset.group_members:
        authors = {m.author_id for m in dataset.messages if m.peer_id == group_id}
        messages = [m for m in dataset.messages if m.peer_id == group_id]
        if len(messages) > 30:
            assert len(authors) >= 3
    posts = [m for m in dataset.messages if m.peer_id.namespace == PeerNamespace.CHANNEL]
    assert posts and all(m.author_id == m.peer_id for m in posts)
    links = [m for m in posts if m.media and m.media[0].kind is MediaKind.LINK]
    assert links and all(m.media[0].url and m.media[0].url in m.text for m in links)


def test_captions_fit_the_media_kind():
    chat = TalkChat("private", ("travel",), 256)
    for kind in (MediaKind.PHOTO, MediaKind.VIDEO, MediaKind.VOICE, MediaKind.FILE):
        captions = [converse(chat, draw, [kind])[0] for draw in range(200)]
        assert all(line.act == "media" for line in captions)
        if kind is MediaKind.FILE:
            assert all(line.title and "." in line.title for line in captions)
        if kind is MediaKind.VOICE:  # most voice messages say nothing
            assert sum(not line.text for line in captions) > len(captions) // 2
    links = [converse(chat, draw, [MediaKind.LINK])[0] for draw in range(50)]
    assert all(line.url and line.text.endswith(line.url) and line.title for line in links)


def test_every_script_parses_and_every_answer_follows_a_question():
    for text in (*SCRIPTS.values(), *BOT_SCRIPTS.values()):
        assert parse_script(text)
    assert set(scripts()) >= set(SCRIPTS)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("? Coffee?\n  ? Tea?\n", "a question is followed by answers"),
        ("= Yes\n", "opens with"),
        ("? Coffee?\n      = Yes\n", "malformed"),
        ("? Coffee at {hour}?\n", "unknown slot"),
    ],
)
def test_a_malformed_script_is_refused(script, message):
    with pytest.raises(ValueError, match=message):
        parse_script(script)


def test_posts_are_headlines_and_never_repeat_within_a_burst():
    headlines = [post("tech", draw, None, draw).text.split("\n")[0] for draw in range(8)]
    assert len(set(headlines)) == len(headlines)
    assert all(text[0].isupper() for text in headlines)


def test_live_talk_answers_the_message_before_when_someone_else_writes():
    talk = LiveTalk()
    group = int(PeerNamespace.GROUP)
    answered = 0
    for draw in range(200):
        peer = 1000 + draw
        text, media = talk.say(peer, group, "Book Club", 0, 7, None, hash64(draw, 1), 1)
        talk.sent(peer, 50)
        assert text or media
        first = talk._turns[peer]
        last = LastMessage(50, False, 7)
        reply, more = talk.say(peer, group, "Book Club", 0, 8, last, hash64(draw, 2), 2)
        talk.sent(peer, 51)
        assert reply or more
        second = talk._turns[peer]
        if first.node is not None and first.node.kids and not media and not more:
            assert second.node in first.node.kids  # the next turn of the same script
            answered += 1
    assert answered > 50
    # A message typed in the app gets a reply that fits anything; channels post.
    after_out, _ = talk.say(5, int(PeerNamespace.USER), "Ana", 0, 5, LastMessage(9, True, 1), 3, 4)
    assert after_out
    channel = int(PeerNamespace.CHANNEL)
    posts = [talk.say(6, channel, "Football Daily", 4, 6, None, hash64(n, 3), n) for n in range(50)]
    assert all(text or media for text, media in posts)
    assert sum(bool(text) for text, _ in posts) > 40
