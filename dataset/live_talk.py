"""Conversations that go on while a server runs: live messages that follow each other.

``LiveTalk.say(...)`` writes the next message of a chat from one 64-bit draw. If the
chat's newest message is the one this talk wrote last and someone else writes now, the
new message answers it: the next turn of the same script, a reaction to a photo, a
closing once the script has run out. The same person writing again nudges ("?") or
starts another topic; a message typed in the app (which the talk cannot read) gets a
reply that fits anything ("Makes sense"). Channels post headlines of their beat, bots
answer commands. What the talk remembers is only which chat is in which turn; a
server restarted from its file simply starts new conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

from dataset.conversation import (
    GENERAL_TOPICS,
    Line,
    ScriptNode,
    Slots,
    TalkChat,
    caption,
    post,
    render,
    scripts,
    slots,
)
from dataset.counter_hash import hash64
from dataset.message_rows import OWN_TOPICS, media_item, media_kind
from dataset.name_tables import BOT_KINDS, CHANNEL_TOPICS, GROUP_THEMES
from dataset.talk_lines import CLOSERS, NEUTRAL_REPLIES, NUDGES, REACTIONS
from dataset.talk_scripts import BOT_SCRIPTS
from dataset.text_edits import with_typo
from postbox import Media, MediaKind, PeerFlags, PeerNamespace

__all__ = ["LastMessage", "LiveTalk"]

_GROUP = int(PeerNamespace.GROUP)
_CHANNEL = int(PeerNamespace.CHANNEL)
#: Of 256: a live text line typed with a typo (for an edit to fix); a person writing
#: again after an unanswered question nudges rather than changing the subject.
_TYPO = 40
_NUDGE = 128


@dataclass(frozen=True, slots=True)
class LastMessage:
    """The newest message of a chat, as much as the talk needs of it."""

    id: int
    out: bool
    author: int | None


@dataclass(frozen=True, slots=True)
class _Turn:
    """Where a chat's live conversation stands after the talk's last message there."""

    message_id: int
    author: int
    topic: str
    slots: Slots
    node: ScriptNode | None
    alt: int
    media: MediaKind | None


def _theme(name: str, table: tuple[tuple[str, str], ...], default: str) -> str:
    """The second of the entry of ``table`` whose first appears in ``name`` (longest)."""
    found = [(len(key), value) for key, value in table if key in name]
    return max(found)[1] if found else default


class LiveTalk:
    """The live conversations of one server's chats."""

    def __init__(self) -> None:
        self._turns: dict[int, _Turn] = {}
        self._said: tuple[int, _Turn] | None = None

    def say(
        self,
        peer_id: int,
        namespace: int,
        name: str,
        flags: int,
        author: int,
        last: LastMessage | None,
        h: int,
        media_id: int,
    ) -> tuple[str, tuple[Media, ...]]:
        """The next message ``author`` writes in chat ``peer_id`` (of peer ``namespace``,
        named ``name``), after ``last``, from the draw ``h``. Call ``sent`` with the
        id it is stored under."""
        kind = media_kind(namespace, h)
        h2 = hash64(h, 1)
        if namespace == _CHANNEL:
            line = post(_theme(name, CHANNEL_TOPICS, "city"), h2, kind, h2 >> 40)
            return line.text, self._media(kind, media_id, h2, line)
        if flags & PeerFlags.BOT:
            return self._bot(name, h2), ()
        turn = self._turns.get(peer_id)
        going_on = turn is not None and last is not None and last.id == turn.message_id
        if last is not None and last.out and not going_on:
            self._turns.pop(peer_id, None)
            return NEUTRAL_REPLIES[h2 % len(NEUTRAL_REPLIES)], ()
        chat = self._chat(peer_id, namespace, name)
        if kind is not None:  # a photo (or the like) between the turns of the script
            if not going_on or turn is None:
                turn = _Turn(0, author, chat.topic(h2), slots(hash64(h2, 2), {}), None, 0, None)
            line = caption(kind, turn.topic, h2 >> 3, turn.slots)
            turn = _Turn(0, author, turn.topic, turn.slots, turn.node, turn.alt, kind)
        elif not going_on or turn is None:
            line, turn = self._open(chat, author, h2)
        else:
            line, turn = self._next(chat, turn, author, h2)
        if kind is None and (h2 >> 56) < _TYPO:
            line = line._replace(text=with_typo(line.text, h2 >> 8))
        self._said = (peer_id, turn)
        return line.text, self._media(kind, media_id, h2, line)

    def sent(self, peer_id: int, message_id: int) -> None:
        """The message ``say`` wrote last for ``peer_id`` is stored as ``message_id``."""
        if self._said is not None and self._said[0] == peer_id:
            turn = self._said[1]
            self._turns[peer_id] = _Turn(
                message_id, turn.author, turn.topic, turn.slots, turn.node, turn.alt, turn.media
            )
        self._said = None

    @staticmethod
    def _media(kind: MediaKind | None, media_id: int, h: int, line: Line) -> tuple[Media, ...]:
        return () if kind is None else (media_item(kind, media_id, h, line),)

    @staticmethod
    def _chat(peer_id: int, namespace: int, name: str) -> TalkChat:
        if namespace == _GROUP:
            theme = _theme(name, GROUP_THEMES, "plans")
            return TalkChat("group", (theme, theme, "group"), OWN_TOPICS["group"])
        favourites = tuple(
            GENERAL_TOPICS[hash64(peer_id, k) % len(GENERAL_TOPICS)] for k in range(3)
        )
        return TalkChat("private", favourites, OWN_TOPICS["private"])

    @staticmethod
    def _bot(name: str, h: int) -> str:
        """A bot's answer to one of its commands, as if the account had sent one."""
        kind = next((k.lower() for k in BOT_KINDS if k in name), "generic")
        openers = scripts()[f"bot:{kind if kind in BOT_SCRIPTS else 'generic'}"][0]
        opener = openers[h % len(openers)]
        answer = opener.kids[0]
        return render(answer.alts[(h >> 8) % len(answer.alts)], slots(h, {"bot": name}))

    @staticmethod
    def _open(chat: TalkChat, author: int, h: int) -> tuple[Line, _Turn]:
        """A conversation's first message, and where it stands after it."""
        topic = chat.topic(h)
        values = slots(hash64(h, 2), {})
        openers = scripts()[topic][0]
        node = openers[(h >> 8) % len(openers)]
        alt = (h >> 16) % len(node.alts)
        text = render(node.alts[alt], values)
        return Line(text, node.act, 0), _Turn(0, author, topic, values, node, alt, None)

    def _next(self, chat: TalkChat, turn: _Turn, author: int, h: int) -> tuple[Line, _Turn]:
        """The message after the talk's last one in a chat, by ``author``."""
        if author == turn.author:  # nobody answered
            if turn.node is not None and turn.node.act == "question" and (h >> 56) < _NUDGE:
                nudge = Line(NUDGES[h % len(NUDGES)], "statement", 0)
                return nudge, _Turn(0, author, turn.topic, turn.slots, None, 0, None)
            return self._open(chat, author, h)
        if turn.media is not None:
            reactions = REACTIONS[turn.media.name.lower()]
            line = Line(reactions[h % len(reactions)], "reaction", 0)
            return line, _Turn(0, author, turn.topic, turn.slots, turn.node, turn.alt, None)
        node = turn.node
        if node is None:  # after a closing or a nudge: something new
            return self._open(chat, author, h)
        if not node.kids:
            closer = Line(CLOSERS[h % len(CLOSERS)], "closing", 0)
            return closer, _Turn(0, author, turn.topic, turn.slots, None, 0, None)
        kid = node.kids[(h >> 8) % len(node.kids)]
        alt = turn.alt % len(kid.alts) if kid.aligned else (h >> 16) % len(kid.alts)
        text = render(kid.alts[alt], turn.slots)
        return Line(text, kid.act, 0), _Turn(0, author, turn.topic, turn.slots, kid, alt, None)
