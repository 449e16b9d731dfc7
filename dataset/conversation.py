"""Conversations and channel posts as pure functions of a 64-bit draw.

``converse(chat, draw, kinds)`` writes one conversation: a burst of messages in a chat
whose ``kinds`` (media kind or ``None`` for text, one per message) are already drawn. It
picks a topic for the chat, walks one of the topic's scripts (``dataset.talk_scripts``)
turn by turn, the two sides taking turns, and fills the script's slots with values
that hold through the conversation. A photo, video, voice message, file or link comes
with a caption that fits its kind and topic, and the other side reacts to it before
the script goes on. A question is answered by one of its answers; in a group, several
members may answer the same question. Once a script runs out the two sides close
("👍", "See you!"). Each message says who speaks (``voice``: 0 opened the
conversation, 1 and up answered) and which earlier message of the burst it answers.

``post(beat, draw, kind)`` writes one channel post: a headline, maybe a sentence after
it, a link to it, or a photo, video or file with a caption.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from dataset.channel_posts import BEAT_DETAILS, BEAT_FILES, HEADLINES, POST_DETAILS
from dataset.counter_hash import MASK64, mix
from dataset.name_tables import CITIES
from dataset.peer_names import slug
from dataset.talk_lines import (
    BOT_NOTICES,
    CLOSERS,
    EMOJI,
    FILE_CAPTIONS,
    FILE_NAMES,
    GROUP_GREETINGS,
    LINK_DOMAINS,
    LINK_INTROS,
    PHOTO_CAPTIONS,
    PRIVATE_GREETINGS,
    REACTIONS,
    SLOTS,
    TOPIC_BEATS,
    VIDEO_CAPTIONS,
    VOICE_CAPTIONS,
)
from dataset.talk_scripts import BOT_SCRIPTS, SCRIPTS
from postbox import MediaKind

__all__ = [
    "GENERAL_TOPICS",
    "Line",
    "ScriptNode",
    "Slots",
    "slots",
    "TalkChat",
    "converse",
    "parse_script",
    "post",
    "render",
    "scripts",
]


#: Topics of chats with nobody's preference, with their weights.
GENERAL_TOPICS: tuple[str, ...] = (
    ("smalltalk",) * 3 + ("plans",) * 3 + ("coffee",) * 2 + ("food",) * 2 + ("work",) * 2
    + ("travel", "film", "sport", "family", "weather", "music", "books", "home", "pets")
    + ("study", "tech", "health")
)  # fmt: skip
_MARKS = {"?": "question", "=": "answer", ".": "statement", "~": "reaction"}
_KIND_NAMES = {
    MediaKind.PHOTO: "photo",
    MediaKind.VIDEO: "video",
    MediaKind.VOICE: "voice",
    MediaKind.FILE: "file",
    MediaKind.LINK: "link",
}
#: Of 256: a conversation that opens with a greeting; a line that ends with an emoji.
_GREETING = 64
_EMOJI = 24
#: Of 256: in a group, another member answers the question just answered.
_ANOTHER_ANSWER = 90
#: Of 256: an answer or reaction quoting what it answers, in private chats and groups.
_QUOTE = {False: 40, True: 100}


class Line(NamedTuple):
    """One message of a conversation. ``act`` is what it does (greeting, question,
    answer, statement, reaction, closing, media, post); ``back`` how many messages
    earlier the message it answers is (0: none), ``quote`` whether it shows that
    message as the one it replies to; ``title`` and ``url`` go with its media."""

    text: str
    act: str
    voice: int
    back: int = 0
    quote: bool = False
    title: str | None = None
    url: str | None = None


class ScriptNode:
    """One turn of a script: what it does, its alternatives, what can follow it."""

    __slots__ = ("act", "aligned", "alone", "alts", "kids")

    def __init__(self, act: str, aligned: bool, alone: bool, alts: tuple[str, ...]) -> None:
        self.act = act
        self.aligned = aligned
        self.alone = alone
        self.alts = alts
        self.kids: tuple[ScriptNode, ...] = ()


def parse_script(text: str) -> tuple[ScriptNode, ...]:
    """The top-level turns of a script (format in ``dataset.talk_scripts``);
    ``ValueError`` naming the line if it breaks the format."""
    roots: list[ScriptNode] = []
    stack: list[ScriptNode] = []
    children: dict[int, list[ScriptNode]] = {}
    joined: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if joined and joined[-1][1].endswith("|"):  # a turn's alternatives go on
            joined[-1] = (joined[-1][0], f"{joined[-1][1]} {raw.strip()}")
        elif raw.strip():
            joined.append((number, raw.rstrip()))
    for number, raw in joined:
        stripped = raw.lstrip(" ")
        indent = len(raw) - len(stripped)
        depth = indent // 2
        mark, rest = stripped[0], stripped[1:]
        aligned = rest.startswith("^")
        rest = rest[1:] if aligned else rest
        alone = not rest.startswith("*")
        rest = rest if alone else rest[1:]
        if indent % 2 or depth > len(stack) or mark not in _MARKS or not rest.startswith(" "):
            raise ValueError(f"script line {number} is malformed: {raw!r}")
        alts = tuple(a.strip() for a in rest.split(" | "))
        node = ScriptNode(_MARKS[mark], aligned, alone, alts)
        if depth == 0 and node.act not in ("question", "statement"):
            raise ValueError(f"script line {number}: a conversation opens with ? or .")
        del stack[depth:]
        if stack:
            parent = stack[-1]
            if parent.act == "question" and node.act != "answer":
                raise ValueError(f"script line {number}: a question is followed by answers (=)")
            children.setdefault(id(parent), []).append(node)
        else:
            roots.append(node)
        stack.append(node)
        for alt in node.alts:
            alt.format_map(_Checked())
    nodes = list(roots)
    while nodes:
        node = nodes.pop()
        node.kids = tuple(children.get(id(node), ()))
        nodes.extend(node.kids)
    return tuple(roots)


class _Checked(dict[str, str]):
    """Refuses slot names ``SLOTS`` does not know (the chat's own are known)."""

    def __missing__(self, key: str) -> str:
        if key not in SLOTS and key not in ("name", "bot"):
            raise ValueError(f"unknown slot {{{key}}}")
        return key


@functools.cache
def scripts() -> dict[str, tuple[tuple[ScriptNode, ...], tuple[ScriptNode, ...]]]:
    """Every topic's (and bot script's, as ``bot:NAME``) openers, and those of them
    that stand alone (statements, for a conversation of one message)."""
    parsed = {topic: parse_script(text) for topic, text in SCRIPTS.items()}
    parsed |= {f"bot:{name}": parse_script(text) for name, text in BOT_SCRIPTS.items()}
    return {
        topic: (roots, tuple(r for r in roots if r.act == "statement" and r.alone) or roots)
        for topic, roots in parsed.items()
    }


_SLOT_KEYS = {name: 0x51_07 + 7919 * number for number, name in enumerate(SLOTS)}
#: Multiplying by it and keeping the high half of the product mixes every bit of a draw.
_SLOT_MULTIPLIER = 0x9E37_79B9_7F4A_7C15
#: The steps of a conversation's draws (a 64-bit LCG, its output xor-shifted).
_LCG_A = 6364136223846793005
_LCG_C = 1442695040888963407
#: Lines are made with ``tuple.__new__``: the named tuple's constructor costs twice as much.
_new = tuple.__new__
_SCRIPTS = scripts()


class Slots(dict[str, str]):
    """Slot values of one conversation, each drawn the first time it is asked for
    (made by ``slots``)."""

    __slots__ = ("draw",)
    draw: int

    def __missing__(self, key: str) -> str:
        if key == "name":  # a greeting of nobody in particular
            return "there"
        h = ((self.draw ^ _SLOT_KEYS[key]) * _SLOT_MULTIPLIER) >> 64
        if key == "city2":  # never the same as {city}
            first = CITIES.index(self["city"])
            value = CITIES[(first + 1 + h % (len(CITIES) - 1)) % len(CITIES)]
        else:
            table = SLOTS[key]
            value = table[h % len(table)]
        self[key] = value
        return value


def slots(draw: int, fixed: Mapping[str, str]) -> Slots:
    """The slots of a conversation of ``draw``, those in ``fixed`` already filled."""
    values = Slots(fixed)
    values.draw = draw
    return values


def render(text: str, slots: Slots) -> str:
    """``text`` with its slots filled (and a capital letter if it starts with one)."""
    if "{" not in text:
        return text
    filled = text.format_map(slots)
    return filled[:1].upper() + filled[1:] if text[0] == "{" else filled


def _emoji(text: str, h: int) -> str:
    """``text``, sometimes with an emoji at the end (not after one)."""
    if (h & 0xFF) >= _EMOJI or not text or ord(text[-1]) > 0x2000:
        return text
    return f"{text} {EMOJI[(h >> 8) % len(EMOJI)]}"


@dataclass(frozen=True, slots=True)
class TalkChat:
    """What one chat's conversations depend on: its kind ("private", "group" or
    "bot"), its favourite topics, and the names its lines may use."""

    kind: str
    topics: tuple[str, ...]
    #: Of 256: conversations on one of ``topics`` rather than a general one.
    topic_share: int
    fixed_slots: tuple[tuple[str, str], ...] = ()

    def topic(self, h: int) -> str:
        if (h & 0xFF) < self.topic_share:
            return self.topics[(h >> 8) % len(self.topics)]
        return GENERAL_TOPICS[(h >> 8) % len(GENERAL_TOPICS)]


def caption(kind: MediaKind, topic: str, h: int, slots: Slots, voice: int = 0) -> Line:
    """A media message's text (caption), its media title and url, on ``topic``, said
    by ``voice``."""
    if kind is MediaKind.LINK:
        headlines = HEADLINES[TOPIC_BEATS.get(topic, "city")]
        headline = render(headlines[(h >> 8) % len(headlines)], slots)
        url = f"https://{LINK_DOMAINS[(h >> 20) % len(LINK_DOMAINS)]}/{slug(headline, '-')}"
        intro = LINK_INTROS[(h >> 24) % len(LINK_INTROS)]
        return Line(f"{intro} {url}", "media", voice, 0, False, headline, url)
    roll = h & 0xFF
    text = ""
    title: str | None = None
    if kind is MediaKind.PHOTO or kind is MediaKind.VIDEO:
        table = PHOTO_CAPTIONS if kind is MediaKind.PHOTO else VIDEO_CAPTIONS
        if roll < (77 if kind is MediaKind.PHOTO else 100):
            options = table.get(topic) if (h >> 8) & 1 else None
            options = options or table[""]
            text = render(options[(h >> 9) % len(options)], slots)
    elif kind is MediaKind.VOICE:
        if roll < 20:
            text = VOICE_CAPTIONS[(h >> 9) % len(VOICE_CAPTIONS)]
    else:
        names = FILE_NAMES.get(topic) if (h >> 8) & 1 else None
        names = names or FILE_NAMES[""]
        title = names[(h >> 9) % len(names)]
        if roll < 100:
            text = FILE_CAPTIONS[(h >> 16) % len(FILE_CAPTIONS)]
    return Line(text, "media", voice, 0, False, title)


def converse(
    chat: TalkChat, draw: int, kinds: Sequence[MediaKind | None], name: str | None = None
) -> list[Line]:
    """The messages of one conversation of ``len(kinds)`` messages, from ``draw``;
    ``name`` is the first name the opener greets, if not the chat's own."""
    size = len(kinds)
    z = mix(draw)
    topic = chat.topic(z)
    fixed = dict(chat.fixed_slots)
    if name is not None:
        fixed["name"] = name
    values = slots(z ^ 1, fixed)
    openers, standalone = _SCRIPTS[topic]
    group = chat.kind == "group"
    bot = chat.kind == "bot"
    quote_share = _QUOTE[group]
    lines: list[Line] = []
    node: ScriptNode | None = None
    parent: ScriptNode | None = None
    node_step = parent_step = -1
    node_alt = parent_alt = 0
    node_voice = turn = 0  # who said the last script turn; who says the next one
    responder = 1  # who answers the opener now
    pending = -1  # a media message the other side has not reacted to yet
    greet = not bot and size >= 3 and kinds[0] is None and (z >> 16) & 0xFF < _GREETING
    state = z
    for step, kind in enumerate(kinds):
        state = (state * _LCG_A + _LCG_C) & MASK64
        z = state ^ (state >> 28)
        if step == 0 and greet:
            greetings = GROUP_GREETINGS if group else PRIVATE_GREETINGS
            text = render(greetings[(z >> 8) % len(greetings)], values)
            lines.append(_new(Line, (text, "greeting", 0, 0, False, None, None)))
            continue
        if kind is not None:
            sender = turn
            if pending >= 0:  # answering a photo with a photo
                sender = responder if lines[pending].voice == 0 else 0
            lines.append(caption(kind, topic, z, values, sender))
            pending = step
            continue
        if pending >= 0:
            sent = lines[pending]
            voice = responder if sent.voice == 0 else 0
            reactions = REACTIONS[_kind_name(kinds[pending])]
            text = reactions[(z >> 8) % len(reactions)]
            quote = (z >> 32) & 0xFF < quote_share
            lines.append(_new(Line, (text, "reaction", voice, step - pending, quote, None, None)))
            pending = -1
            continue
        back = 0
        if bot and step == size - 1 and (node is None or (node_voice == 1 and not node.kids)):
            # a new command would go unanswered: the bot says something of its own instead
            notice = BOT_NOTICES[(z >> 8) % len(BOT_NOTICES)]
            lines.append(_new(Line, (notice, "statement", 1, 0, False, None, None)))
            continue
        if node is not None and not node.kids and not bot and size - step >= 3:
            # the script ran out early: on to another topic
            openers = _SCRIPTS[chat.topic(z >> 3)][0]
            node = None
        if node is None or (bot and not node.kids):
            choices = standalone if step == size - 1 and not bot else openers
            node, parent = choices[(z >> 8) % len(choices)], None
            node_alt, parent_step = (z >> 40) % len(node.alts), -1
            voice = turn = 0
        elif not node.kids:  # the script ran out: the two sides close
            voice = node_voice = responder if node_voice == 0 else 0
            text = CLOSERS[(z >> 8) % len(CLOSERS)]
            lines.append(_new(Line, (text, "closing", voice, 0, False, None, None)))
            continue
        elif (
            group
            and parent is not None
            and parent.act == "question"
            and node.act == "answer"
            and (z >> 48) & 0xFF < _ANOTHER_ANSWER
        ):  # another member answers the same question
            node = parent.kids[(z >> 8) % len(parent.kids)]
            node_alt = (z >> 40) % len(node.alts)
            responder += 1
            voice = responder
            back = step - parent_step
            node_step = step
        else:
            parent, parent_step, parent_alt = node, node_step, node_alt
            node = node.kids[(z >> 8) % len(node.kids)]
            node_alt = parent_alt % len(node.alts) if node.aligned else (z >> 40) % len(node.alts)
            voice = responder if node_voice == 0 else 0
            back = step - parent_step
        text = node.alts[node_alt]
        if "{" in text:
            text = render(text, values)
        if not bot and (z >> 24) & 0xFF < _EMOJI and node.act != "reaction":
            text = _emoji(text, z >> 24)
        quote = (
            back > 0
            and node.act == "answer"
            and parent is not None
            and parent.act == "question"
            and (z >> 32) & 0xFF < quote_share
        )
        lines.append(_new(Line, (text, node.act, voice, back, quote, None, None)))
        node_step, node_voice = step, voice
        turn = responder if voice == 0 else 0
    return lines


def _kind_name(kind: MediaKind | None) -> str:
    assert kind is not None
    return _KIND_NAMES[kind]


def post(beat: str, draw: int, kind: MediaKind | None, pick: int) -> Line:
    """One channel post of ``beat`` (a key of ``HEADLINES``) from ``draw`` (a well-mixed
    64-bit value): headline ``pick`` (modulo their number), sometimes with a sentence
    after it; a link to it; or media with a caption."""
    headlines = HEADLINES[beat]
    headline = headlines[pick % len(headlines)]
    if "{" in headline:
        headline = render(headline, slots(draw ^ 2, {}))
    roll = (draw >> 32) & 0xFF
    text = headline
    title = url = None
    if kind is None:
        if roll >= 115:
            details = BEAT_DETAILS[beat] if roll & 1 else POST_DETAILS
            text = f"{headline}\n\n{details[(draw >> 40) % len(details)]}"
    elif kind is MediaKind.LINK:
        domain = LINK_DOMAINS[(draw >> 52) % len(LINK_DOMAINS)]
        url = f"https://{domain}/{slug(headline, '-')}"
        text, title = f"{headline}\n{url}", headline
    elif kind is MediaKind.FILE:
        files = BEAT_FILES.get(beat) if roll & 1 else None
        files = files or BEAT_FILES[""]
        title = files[(draw >> 40) % len(files)]
    elif kind is MediaKind.VIDEO:
        text = f"🎥 {headline}" if roll < 128 else f"Watch: {headline}"
    elif roll >= 230:
        text = ""  # a photo without a caption
    return _new(Line, (text, "post", 0, 0, False, title, url))
