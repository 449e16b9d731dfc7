"""Messages as a pure function of (account plan, chat, message index).

``ChatRows(plan, chat).fate(index)`` gives a message's whole life: its dataset row as
the server holds it at the plan's "now" (edited text and edit date included), the
text it was sent with, and when it was sent, edited and deleted (``None`` if never).
A chat's messages come in conversations: the messages of one burst (a few minutes of
one day) are one conversation of ``dataset.conversation``, generated together from
draws keyed by the chat, the day and the burst, so a Spark task and a plain loop that
generate the same (chat, index) get the same message, whichever messages they generate
besides. Within a chat, timestamps never go down and ids go up with the index, so a
chat's rows come out in history-key order.

Photos, videos, files, voice messages and links come in plausible shares per chat
kind, each with its media item and shared-media tag; channels post headlines.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple

from dataset.account_plan import DAY, AccountPlan, ChatPlan, warp
from dataset.conversation import GENERAL_TOPICS, Line, TalkChat, converse, post
from dataset.counter_hash import hash64, mix
from dataset.name_tables import BOT_KINDS, CHANNEL_TOPICS, GROUP_THEMES, SELF_NAME
from dataset.talk_scripts import BOT_SCRIPTS
from dataset.text_edits import draft_of
from postbox import Media, MediaKind, MessageNamespace, MessageTags, PeerFlags, PeerNamespace

__all__ = [
    "OWN_TOPICS",
    "ChatRows",
    "Deletion",
    "MessageFate",
    "Piece",
    "content",
    "generate_slice",
    "iter_slice",
    "media_item",
    "media_kind",
    "media_shares",
    "plan_slices",
]

_CLOUD = int(MessageNamespace.CLOUD)
_USER = int(PeerNamespace.USER)
_GROUP = int(PeerNamespace.GROUP)
_CHANNEL = int(PeerNamespace.CHANNEL)
_TALK = 0x7A1C_0000_0000_0000  # sets the conversation draw of a burst apart from its time

#: Shares of the media kinds per chat kind; the rest are plain text messages.
_MEDIA_SHARES: dict[int, tuple[tuple[MediaKind, float], ...]] = {
    _USER: (
        (MediaKind.PHOTO, 0.09),
        (MediaKind.VIDEO, 0.03),
        (MediaKind.FILE, 0.02),
        (MediaKind.VOICE, 0.05),
        (MediaKind.LINK, 0.04),
    ),
    _GROUP: (
        (MediaKind.PHOTO, 0.12),
        (MediaKind.VIDEO, 0.04),
        (MediaKind.FILE, 0.03),
        (MediaKind.VOICE, 0.03),
        (MediaKind.LINK, 0.06),
    ),
    _CHANNEL: (
        (MediaKind.PHOTO, 0.30),
        (MediaKind.VIDEO, 0.08),
        (MediaKind.FILE, 0.03),
        (MediaKind.LINK, 0.15),
    ),
}
_TAGS = {
    MediaKind.PHOTO: int(MessageTags.PHOTO),
    MediaKind.VIDEO: int(MessageTags.VIDEO),
    MediaKind.FILE: int(MessageTags.FILE),
    MediaKind.VOICE: int(MessageTags.VOICE),
    MediaKind.LINK: int(MessageTags.LINK),
}
#: Media sizes in bytes: (smallest, largest) per kind.
_SIZES = {
    MediaKind.PHOTO: (80_000, 3_000_000),
    MediaKind.VIDEO: (1_000_000, 80_000_000),
    MediaKind.VOICE: (5_000, 300_000),
    MediaKind.FILE: (10_000, 20_000_000),
    MediaKind.LINK: (0, 0),
}
#: Of 256: a private chat's conversation opened by the account (so about 40% of its
#: messages are incoming), a group's, and a group member who answers being the account.
_SELF_OPENS = {"private": 240, "group": 40, "bot": 256}
_SELF_ANSWERS = 40
#: Of 256: a private chat of at most ``_ONE_SIDED_COUNT`` messages that the account
#: never answered.
_ONE_SIDED = 100
_ONE_SIDED_COUNT = 12
#: Of 256: conversations on one of a chat's own topics rather than a general one.
OWN_TOPICS = {"private": 110, "group": 150}


def media_shares(namespace: int) -> tuple[tuple[MediaKind, float], ...]:
    """The shares of each media kind in chats of peer ``namespace``."""
    return _MEDIA_SHARES[namespace]


def _kind_table(
    shares: tuple[tuple[MediaKind, float], ...],
) -> tuple[tuple[int, ...], tuple[MediaKind | None, ...]]:
    """The upper bound of each kind's share of 24-bit draws, and the kinds (text last)."""
    bounds = itertools.accumulate(round(share * (1 << 24)) for _, share in shares)
    return tuple(bounds), (*(kind for kind, _ in shares), None)


_KIND_TABLES = {namespace: _kind_table(shares) for namespace, shares in _MEDIA_SHARES.items()}


def media_kind(namespace: int, h: int) -> MediaKind | None:
    """The media kind (``None``: text) of a message in a chat of peer ``namespace``,
    drawn from the low 24 bits of ``h`` in the dataset's shares."""
    bounds, kinds = _KIND_TABLES[namespace]
    return kinds[bisect.bisect_right(bounds, h & 0xFFFFFF)]


#: A media item as a dataset row holds it: kind, id, size, url, title.
MediaRow = tuple[int, int, int, str | None, str | None]


def _media(kind: MediaKind, media_id: int, h: int, line: Line) -> tuple[MediaRow, ...]:
    low, high = _SIZES[kind]
    size = low + int((h >> 40) / 16777216.0 * (high - low))
    return ((kind.value, media_id, size, line.url, line.title),)


def media_item(kind: MediaKind, media_id: int, h: int, line: Line) -> Media:
    """The media item of a message of ``line`` (its size drawn from ``h``)."""
    size = _media(kind, media_id, h, line)[0][2]
    return Media(kind, media_id, size, line.url, line.title)


def talk_chat(plan: AccountPlan, chat: ChatPlan) -> TalkChat:
    """What the conversations of a private chat, group or bot chat depend on."""
    seed, position = plan.spec.seed, chat.position
    if chat.peer.flags & PeerFlags.BOT:
        kind = BOT_KINDS[chat.theme].lower()
        script = kind if kind in BOT_SCRIPTS else "generic"
        return TalkChat("bot", (f"bot:{script}",), 256, (("bot", chat.peer.name),))
    favourites = tuple(
        GENERAL_TOPICS[hash64(seed, 300, position, k) % len(GENERAL_TOPICS)] for k in range(3)
    )
    if chat.namespace == _GROUP:
        theme = GROUP_THEMES[chat.theme][1]
        return TalkChat("group", (theme, theme, "group", favourites[0]), OWN_TOPICS["group"])
    first_name = chat.peer.name.split(" ")[0]
    return TalkChat("private", favourites, OWN_TOPICS["private"], (("name", first_name),))


def content(h: int, namespace: int, media_id: int) -> tuple[str, tuple[Media, ...]]:
    """Text and media of a message that opens a conversation in a chat of peer
    ``namespace`` (a channel post in a channel), from the 64-bit draw ``h``, in the
    dataset's shares (``media_id`` names the media item, if any)."""
    kind = media_kind(namespace, h)
    h2 = mix(h)
    if namespace == _CHANNEL:
        beat = CHANNEL_TOPICS[h2 % len(CHANNEL_TOPICS)][1]
        line = post(beat, h2, kind, h2 >> 40)
    else:
        chat = TalkChat("group" if namespace == _GROUP else "private", ("smalltalk",), 0)
        (line,) = converse(chat, h2, (kind,))
    if kind is None:
        return line.text, ()
    return line.text, (media_item(kind, media_id, h2, line),)


class _Burst(NamedTuple):
    """One conversation of a chat, generated at once: the second of the day its first
    message was sent, seconds between messages, the latest second it may reach, and per
    message its second draw, media kind, line and author."""

    day: int
    burst: int
    start: int
    gap: int
    bound: int
    draws: list[int]
    kinds: list[MediaKind | None]
    lines: list[Line]
    authors: list[int | None]


_NO_BURST = _Burst(-1, -1, 0, 0, 0, [], [], [], [])


class MessageFate(NamedTuple):
    """A generated message's life. ``row`` is its dataset row at "now" (edited text and
    date included; the server no longer has it if ``deleted_at`` is set), ``sent_text``
    the text it was sent with."""

    row: tuple[Any, ...]
    id: int
    sent_at: int
    sent_text: str
    edited_at: int | None
    deleted_at: int | None


class ChatRows:
    """Generates any message of one chat; holds the chat's constants."""

    def __init__(self, plan: AccountPlan, chat: ChatPlan) -> None:
        spec = plan.spec
        self.chat = chat
        self.seed = spec.seed
        self.now = spec.now
        self.first_day_start = spec.now - spec.days * DAY
        self.namespace = chat.namespace
        self.peer_id = int(chat.peer.id)
        self.self_id = int(plan.self_peer.id)
        self.members = tuple(int(member) for member in chat.members)
        self.shares = _MEDIA_SHARES[self.namespace]
        self.edit_share = spec.edit_share
        self.delete_share = spec.delete_share
        self.talk = None if self.namespace == _CHANNEL else talk_chat(plan, chat)
        self.bot = bool(chat.peer.flags & PeerFlags.BOT)
        #: A quiet private chat the account never answered: the other side writes alone.
        self.one_sided = (
            self.talk is not None
            and self.talk.kind == "private"
            and chat.count <= _ONE_SIDED_COUNT
            and hash64(spec.seed, 301, chat.position) >> 56 < _ONE_SIDED
        )
        self.beat = CHANNEL_TOPICS[chat.theme][1] if self.namespace == _CHANNEL else ""
        self._salt = hash64(spec.seed, 100, chat.position)
        # Caches for sequential access; results never depend on them.
        self._located = (0, 0, 0, 0, 0)  # first index, next day's first, day, count, id
        self._day: int | None = None
        self._day_draw = self._bursts = 0
        self._burst: _Burst | None = None
        #: The indexes, first id and conversation of the last message's burst.
        self._span: tuple[int, int, int, _Burst] = (0, 0, 0, _NO_BURST)

    def _draw(self, *keys: int) -> int:
        z = self._salt
        for key in keys:
            z = mix(z ^ key)
        return z

    def _locate(self, index: int) -> tuple[int, int, int, int]:
        first, following, day, count, id_ = self._located
        if not first <= index < following:
            day, within, count, id_ = self.chat.locate(index)
            first = index - within
            id_ -= within
            self._located = (first, first + count, day, count, id_)
        return day, index - first, count, id_ + index - first

    def line(self, index: int) -> Line:
        """What message ``index`` says, as its conversation has it (``back``: how many
        messages earlier the message it answers is)."""
        day, within, day_count, _ = self._locate(index)
        burst, step = self._burst_of(day, within, day_count, index)
        return burst.lines[step]

    def fate(self, index: int) -> MessageFate:
        first, end, first_id, burst = self._span
        if first <= index < end:  # in the conversation of the message before
            step = index - first
            id_ = first_id + step
            day = burst.day
        else:
            day, within, day_count, id_ = self._locate(index)
            burst, step = self._burst_of(day, within, day_count, index)
            self._span = (index - step, index - step + len(burst.lines), id_ - step, burst)
        sent_at = (
            self.first_day_start + day * DAY + min(burst.start + step * burst.gap, burst.bound)
        )
        author = burst.authors[step]
        incoming = author != self.self_id
        h2 = burst.draws[step]
        kind = burst.kinds[step]
        line = burst.lines[step]
        text = line.text
        media = () if kind is None else _media(kind, (h2 >> 2) | 1, h2, line)
        reply_to = None
        if line.quote:
            reply_to = id_ - line.back
        h3 = mix(h2)
        edited_at = deleted_at = None
        final_text = text
        if kind is None and (h3 & 0xFFFF) / 65536.0 < self.edit_share:
            edit_time = sent_at + 30 + (h3 >> 16) % (4 * 3600)
            draft = draft_of(text, mix(h3)) if edit_time < self.now else None
            if draft is not None:
                edited_at = edit_time
                text = draft
        if ((h3 >> 32) & 0xFFFF) / 65536.0 < self.delete_share:
            delete_time = sent_at + 60 + (h3 >> 48) % (2 * DAY)
            if delete_time < self.now:
                deleted_at = delete_time
        row = (
            self.peer_id,
            _CLOUD,
            id_,
            sent_at,
            1 if incoming else 0,
            _TAGS[kind] if kind is not None else 0,
            author,
            final_text,
            media,
            reply_to,
            edited_at,
            None,
            None,
        )
        return MessageFate(row, id_, sent_at, text, edited_at, deleted_at)

    def _burst_of(self, day: int, within: int, day_count: int, index: int) -> tuple[_Burst, int]:
        """The conversation message ``index`` belongs to, and its place in it.

        A day's messages come in bursts of two to eleven messages (the day's size, two to
        six, or up to twice that to leave no burst shorter) a short gap apart, spread
        over the day by the hour-of-day activity, in index order."""
        if day != self._day:
            self._day = day
            self._day_draw = self._draw(1 << 40, day)
            self._bursts = max(1, day_count // (2 + self._day_draw % 5))
        day_draw, bursts = self._day_draw, self._bursts
        number = ((within + 1) * bursts - 1) // day_count
        first = number * day_count // bursts
        step = within - first
        burst = self._burst
        if burst is None or burst.day != day or burst.burst != number:
            jitter = (mix(day_draw ^ number) >> 11) / float(1 << 53)
            start = warp(self.now, (number + 0.9 * jitter) / bursts)
            bound = warp(self.now, (number + 1) / bursts)
            gap = 15 + (day_draw >> 8) % 90
            burst = self._conversation(
                mix(day_draw ^ number ^ _TALK),
                index - step,
                (number + 1) * day_count // bursts - first,
                (day, number, start, gap, bound),
            )
            self._burst = burst
        return burst, step

    def _conversation(
        self, draw: int, first: int, count: int, when: tuple[int, int, int, int, int]
    ) -> _Burst:
        salt = self._salt
        draws = [mix(salt ^ index) for index in range(first, first + count)]
        if self.bot:
            kinds: list[MediaKind | None] = [None] * count
        else:
            bounds, table = _KIND_TABLES[self.namespace]
            kinds = [table[bisect.bisect_right(bounds, h2 & 0xFFFFFF)] for h2 in draws]
        talk = self.talk
        if talk is None:  # a channel: posts, each on its own
            lines = [  # one headline after another: a burst never posts one twice
                post(self.beat, h2, kind, draw + step)
                for step, (h2, kind) in enumerate(zip(draws, kinds, strict=True))
            ]
            return _Burst(*when, draws, kinds, lines, [self.peer_id] * count)
        if self.one_sided:  # lines of their own, none of them answered
            lines = [converse(talk, mix(draw ^ j), (kind,))[0] for j, kind in enumerate(kinds)]
            return _Burst(*when, draws, kinds, lines, [self.peer_id] * count)
        self_opens = (draw >> 56) < _SELF_OPENS[talk.kind]
        if talk.kind == "private" and not self_opens:
            lines = converse(talk, draw, kinds, SELF_NAME.split(" ")[0])
        else:
            lines = converse(talk, draw, kinds)
        if talk.kind == "group":
            voices = self._voices(draw, self_opens, max(line.voice for line in lines))
        else:
            voices = [self.self_id, self.peer_id] if self_opens else [self.peer_id, self.self_id]
        return _Burst(*when, draws, kinds, lines, [voices[line.voice] for line in lines])

    def _voices(self, draw: int, self_opens: bool, last: int) -> list[int | None]:
        """Who speaks for each voice of a conversation: the opener, then who answers."""
        me, other = self.self_id, self.peer_id
        if self.namespace != _GROUP:
            return [me, other] if self_opens else [other, me]
        members = self.members
        if not members:
            return [me] * (last + 1) if self_opens else [None] * (last + 1)
        voices: list[int | None] = [me if self_opens else members[(draw >> 8) % len(members)]]
        for voice in range(1, last + 1):
            z = mix(draw ^ voice)
            if voices[0] != me and (z & 0xFF) < _SELF_ANSWERS:
                voices.append(me)
                continue
            at = (z >> 8) % len(members)
            for _ in range(min(2, len(members) - 1)):  # not the opener, nor who spoke last
                if members[at] not in (voices[0], voices[-1]):
                    break
                at = (at + 1) % len(members)
            voices.append(members[at])
        return voices

    def rows(self, lower: int, upper: int) -> list[tuple[Any, ...]]:
        """The dataset rows of messages ``lower..upper-1`` that exist at "now", in order."""
        result = []
        for index in range(lower, upper):
            fate = self.fate(index)
            if fate.deleted_at is None:
                result.append(fate.row)
        return result


#: One piece of a slice: messages ``lower..upper-1`` of the chat at ``position``.
Piece = tuple[int, int, int]
#: A deletion the update log replays: (peer id, message id, when).
Deletion = tuple[int, int, int]


def plan_slices(plan: AccountPlan, rows_per_slice: int) -> list[list[Piece]]:
    """Cut the account's messages, in history-key order (chats by peer id, then by
    index), into slices of at most ``rows_per_slice`` generated messages."""
    slices: list[list[Piece]] = []
    current: list[Piece] = []
    room = rows_per_slice
    for chat in sorted(plan.chats, key=lambda chat: int(chat.peer.id)):
        lower = 0
        while lower < chat.count:
            upper = min(chat.count, lower + room)
            current.append((chat.position, lower, upper))
            room -= upper - lower
            lower = upper
            if room == 0:
                slices.append(current)
                current, room = [], rows_per_slice
    if current:
        slices.append(current)
    return slices


def generate_slice(
    plan: AccountPlan, pieces: list[Piece]
) -> tuple[list[tuple[Any, ...]], list[Deletion]]:
    """The dataset rows of a slice, in order, and the deletions the update log holds
    for it (messages sent before the log starts and deleted after)."""
    deletions: list[Deletion] = []
    rows = list(iter_slice(plan, pieces, deletions))
    return rows, deletions


def iter_slice(
    plan: AccountPlan, pieces: list[Piece], deletions: list[Deletion]
) -> Iterator[tuple[Any, ...]]:
    """``generate_slice`` as a stream of rows; the deletions are appended to ``deletions``."""
    log_from = plan.spec.log_from
    for position, lower, upper in pieces:
        chat_rows = ChatRows(plan, plan.chats[position])
        for index in range(lower, upper):
            fate = chat_rows.fate(index)
            if fate.deleted_at is None:
                yield fate.row
            elif log_from is not None and fate.sent_at < log_from <= fate.deleted_at:
                deletions.append((chat_rows.peer_id, fate.id, fate.deleted_at))
