"""Messages as a pure function of (account plan, chat, message index).

``ChatRows(plan, chat).fate(index)`` gives a message's whole life: its dataset row as
the server holds it at the plan's "now" (edited text and edit date included), the
text it was sent with, and when it was sent, edited and deleted (``None`` if never).
Nothing depends on any other message's draws, so a Spark task and a plain loop that
generate the same (chat, index) get the same message. Within a chat, timestamps never
go down and ids go up with the index, so a chat's rows come out in history-key order.

Texts come from a pool of sentences drawn once from the vocabulary (Zipf-weighted
words, some emoji); photos, videos, files, voice messages and links come in plausible
shares per chat kind, each with its media item and shared-media tag.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterator
from typing import Any, NamedTuple

from dataset.account_plan import DAY, AccountPlan, ChatPlan, warp
from dataset.counter_hash import MASK64, hash64, unit
from dataset.vocabulary import (
    EMOJI,
    FILE_EXTENSIONS,
    LINK_DOMAINS,
    LINK_INTROS,
    SHORT_REPLIES,
    VOCABULARY,
    VOCABULARY_CUMULATIVE,
)
from postbox import Media, MediaKind, MessageNamespace, MessageTags, PeerNamespace

__all__ = [
    "ChatRows",
    "Deletion",
    "MessageFate",
    "Piece",
    "content",
    "generate_slice",
    "iter_slice",
    "media_shares",
    "plain_text",
    "plan_slices",
]

_CLOUD = int(MessageNamespace.CLOUD)
_USER = int(PeerNamespace.USER)
_GROUP = int(PeerNamespace.GROUP)
_CHANNEL = int(PeerNamespace.CHANNEL)
_GOLDEN = 0x9E37_79B9_7F4A_7C15
_POOL_SIZE = 1 << 14
_TO_UNIT = 1.0 / float(1 << 64)

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
#: Share of incoming messages: private chats ~40%, groups mostly others', channels all.
_INCOMING_SHARE = {_USER: 0.40, _GROUP: 0.80, _CHANNEL: 1.0}
_REPLY_SHARE = 0.06


def media_shares(namespace: int) -> tuple[tuple[MediaKind, float], ...]:
    """The shares of each media kind in chats of peer ``namespace``."""
    return _MEDIA_SHARES[namespace]


def _mix(z: int) -> int:
    z = (z + _GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & MASK64
    return z ^ (z >> 31)


def _word(draw: float) -> str:
    index = bisect.bisect(VOCABULARY_CUMULATIVE, draw * VOCABULARY_CUMULATIVE[-1])
    return VOCABULARY[min(index, len(VOCABULARY) - 1)]


@functools.lru_cache(maxsize=1)
def _sentences() -> tuple[str, ...]:
    """The sentence pool: 1 to 16 Zipf-weighted words, capitalized, punctuated."""
    pool = []
    for i in range(_POOL_SIZE):
        length = 1 + min(15, int(-6.0 * math.log1p(-unit(0, 1, i))))
        words = [_word(unit(0, 2, i, w)) for w in range(length)]
        words[0] = words[0][:1].upper() + words[0][1:]
        pool.append(" ".join(words) + (".", ".", "!", "?", "")[i % 5])
    return tuple(pool)


def _sentence(draw: int) -> str:
    return _sentences()[draw & (_POOL_SIZE - 1)]


def _text(h: int) -> str:
    roll = (h & 0xFFFF) / 65536.0
    if roll < 0.15:
        text = SHORT_REPLIES[(h >> 16) % len(SHORT_REPLIES)]
    elif roll < 0.85:
        text = _sentence(h >> 20)
    else:
        text = f"{_sentence(h >> 20)} {_sentence(h >> 36)}"
    if ((h >> 50) & 0xFF) < 31:  # about 12%
        text = f"{text} {EMOJI[(h >> 58) % len(EMOJI)]}"
    return text


def plain_text(h: int) -> str:
    """A text message's text from the 64-bit draw ``h``."""
    return _text(_mix(h))


def _pick_kind(shares: tuple[tuple[MediaKind, float], ...], roll: float) -> MediaKind | None:
    for kind, share in shares:
        if roll < share:
            return kind
        roll -= share
    return None


def content(h: int, namespace: int, media_id: int) -> tuple[str, tuple[Media, ...]]:
    """Text and media of a message in a chat of peer ``namespace``, from the 64-bit draw
    ``h``, in the dataset's shares (``media_id`` names the media item, if any)."""
    kind = _pick_kind(_MEDIA_SHARES[namespace], (h & 0xFFFFFF) / 16777216.0)
    text, media = _content(_mix(h), kind, media_id)
    return text, tuple(Media(MediaKind(k), i, n, u, t) for k, i, n, u, t in media)


#: A media item as a dataset row holds it: kind, id, size, url, title.
MediaRow = tuple[int, int, int, str | None, str | None]


def _content(h: int, kind: MediaKind | None, media_id: int) -> tuple[str, tuple[MediaRow, ...]]:
    if kind is None:
        return _text(h), ()
    size_draw = (h >> 32) / 4294967296.0
    if kind is MediaKind.PHOTO or kind is MediaKind.VIDEO:
        caption = _sentence(h >> 8) if (h & 0xFF) < 77 else ""  # about 30%
        low, high = (80_000, 3_000_000) if kind is MediaKind.PHOTO else (1_000_000, 80_000_000)
        return caption, ((kind.value, media_id, low + int(size_draw * (high - low)), None, None),)
    if kind is MediaKind.VOICE:
        return "", ((kind.value, media_id, 5_000 + int(size_draw * 295_000), None, None),)
    if kind is MediaKind.FILE:
        first, second = _word((h & 0xFFFF) / 65536.0), _word(((h >> 16) & 0xFFFF) / 65536.0)
        title = f"{first}_{second}.{FILE_EXTENSIONS[h % len(FILE_EXTENSIONS)]}"
        return "", ((kind.value, media_id, 10_000 + int(size_draw * 19_990_000), None, title),)
    count = 2 + h % 3
    words = [_word(((h >> (8 + 12 * i)) & 0xFFF) / 4096.0) for i in range(count)]
    url = f"https://{LINK_DOMAINS[(h >> 56) % len(LINK_DOMAINS)]}/{'-'.join(words).lower()}"
    intro = LINK_INTROS[(h >> 60) % len(LINK_INTROS)]
    return f"{intro} {url}", ((kind.value, media_id, 0, url, " ".join(words).capitalize()),)


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
        self.incoming_share = _INCOMING_SHARE[self.namespace]
        self.shares = _MEDIA_SHARES[self.namespace]
        self.edit_share = spec.edit_share
        self.delete_share = spec.delete_share
        self._salt = hash64(spec.seed, 100, chat.position)
        # Caches for sequential access; results never depend on them.
        self._located = (0, 0, 0, 0, 0)  # first index, next day's first, day, count, id
        self._day: int | None = None
        self._day_draw = self._size = self._bursts = 0
        self._burst: tuple[int, int, int, int] = (-1, -1, 0, 0)  # day, burst, start, bound

    def _draw(self, *keys: int) -> int:
        z = self._salt
        for key in keys:
            z = _mix(z ^ key)
        return z

    def _locate(self, index: int) -> tuple[int, int, int, int]:
        first, following, day, count, id_ = self._located
        if not first <= index < following:
            day, within, count, id_ = self.chat.locate(index)
            first = index - within
            id_ -= within
            self._located = (first, first + count, day, count, id_)
        return day, index - first, count, id_ + index - first

    def fate(self, index: int) -> MessageFate:
        day, within, day_count, id_ = self._locate(index)
        h = _mix(self._salt ^ index)
        sent_at = self.first_day_start + day * DAY + self._time_of_day(day, within, day_count)
        roll = h * _TO_UNIT
        incoming = roll < self.incoming_share
        namespace = self.namespace
        if not incoming:
            author: int | None = self.self_id
        elif namespace == _GROUP:
            author = self.members[(h >> 20) % len(self.members)] if self.members else None
        else:
            author = self.peer_id
        h2 = _mix(h)
        kind = _pick_kind(self.shares, (h2 & 0xFFFFFF) / 16777216.0)
        text, media = _content(_mix(h2), kind, (h2 >> 2) | 1)
        reply_to = None
        if namespace != _CHANNEL and index and ((h2 >> 24) & 0xFFFF) / 65536.0 < _REPLY_SHARE:
            back = 1 + (h2 >> 40) % min(index, 20)
            reply_to = self.chat.locate(index - back)[3]
        h3 = _mix(h2)
        edited_at = deleted_at = None
        final_text = text
        if kind is None and (h3 & 0xFFFF) / 65536.0 < self.edit_share:
            edit_time = sent_at + 30 + (h3 >> 16) % (4 * 3600)
            if edit_time < self.now:
                edited_at = edit_time
                final_text = _text(_mix(h3))
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

    def _time_of_day(self, day: int, within: int, day_count: int) -> int:
        """Seconds into the day window: conversations (bursts of a few messages a short
        gap apart) spread over the day by the hour-of-day activity, in index order."""
        if day != self._day:
            self._day = day
            self._day_draw = self._draw(1 << 40, day)
            self._size = 1 + self._day_draw % 6
            self._bursts = (day_count + self._size - 1) // self._size
        burst_draw, size, bursts = self._day_draw, self._size, self._bursts
        burst, step = divmod(within, size)
        cached_day, cached_burst, start, bound = self._burst
        if (cached_day, cached_burst) != (day, burst):
            jitter = (_mix(burst_draw ^ burst) >> 11) / float(1 << 53)
            start = warp(self.now, (burst + 0.9 * jitter) / bursts)
            bound = warp(self.now, (burst + 1) / bursts)
            self._burst = (day, burst, start, bound)
        gap = 15 + (burst_draw >> 8) % 90
        return min(start + step * gap, bound)

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
