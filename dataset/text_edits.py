"""Edits that read like edits: a typo fixed, a time changed, a word added.

``draft_of(text, h)`` is the text a message was first sent with before an edit made
it ``text`` (the dataset knows the final text and makes up the draft);
``edited(text, h)`` is what someone edits ``text`` into (live traffic knows only the
text as it is). ``with_typo`` puts one common typo into a text, for an edit to fix
later. Each is a pure function of its arguments.
"""

from __future__ import annotations

import re

from dataset.talk_lines import (
    EXPANSIONS,
    FILE_CAPTIONS,
    PHOTO_CAPTIONS,
    POST_UPDATES,
    TYPOS,
    VIDEO_CAPTIONS,
    VOICE_CAPTIONS,
)

__all__ = ["added_caption", "draft_of", "edited", "has_typo", "with_typo"]

#: Captions someone adds to media sent without one, by media kind.
_CAPTIONS = {
    "photo": PHOTO_CAPTIONS[""],
    "video": VIDEO_CAPTIONS[""],
    "gif": VIDEO_CAPTIONS[""],
    "voice": VOICE_CAPTIONS,
    "file": FILE_CAPTIONS,
}

_MEANT = {typo: word for word, typo in TYPOS.items()}


def _words(words: list[str]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b({alternation})\b", re.IGNORECASE)


_WORD_RE = _words(list(TYPOS))
_TYPO_RE = _words(list(_MEANT))
_TIME_RE = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_LONG_RE = {long: re.compile(rf"\b{re.escape(long)}\b") for _, long in EXPANSIONS}
_SHORT_RE = {short: re.compile(rf"\b{re.escape(short)}\b") for short, _ in EXPANSIONS}
_PLAIN_WORD_RE = re.compile(r"\b[a-z]{5,}\b")


def _same_case(model: str, word: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _replace(text: str, match: re.Match[str], word: str) -> str:
    return text[: match.start()] + _same_case(match.group(0), word) + text[match.end() :]


def _typo(text: str, h: int) -> str | None:
    """``text`` with one word mistyped: a common typo, else two letters swapped."""
    typed = with_typo(text, h)
    if typed != text:
        return typed
    plain = list(_PLAIN_WORD_RE.finditer(text))
    if not plain:
        return None
    match = plain[h % len(plain)]
    word = match.group(0)
    at = 1 + (h >> 8) % (len(word) - 3)
    swapped = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return None if swapped == word else _replace(text, match, swapped)


def _shift_time(text: str, h: int) -> str | None:
    """``text`` with its first time of day half an hour or an hour off."""
    match = _TIME_RE.search(text)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    delta = (30, 60, -30, -60)[h % 4]
    total = (hour * 60 + minute + delta) % (24 * 60)
    new_hour, new_minute = divmod(total, 60)
    if hour <= 12:  # a twelve-hour clock stays one
        new_hour = (new_hour - 1) % 12 + 1
    return f"{text[: match.start()]}{new_hour}:{new_minute:02d}{text[match.end() :]}"


def _shorter(text: str, h: int) -> str | None:
    """``text`` without a word it has that people add on a second look."""
    found = [
        (short, pattern) for short, long in EXPANSIONS if (pattern := _LONG_RE[long]).search(text)
    ]
    if not found:
        return None
    short, pattern = found[h % len(found)]
    return pattern.sub(short, text, count=1)


def _longer(text: str, h: int) -> str | None:
    """``text`` with a word added where one fits."""
    found = [
        (long, pattern)
        for short, long in EXPANSIONS
        if long not in text and (pattern := _SHORT_RE[short]).search(text)
    ]
    if not found:
        return None
    long, pattern = found[h % len(found)]
    return pattern.sub(long, text, count=1)


def draft_of(text: str, h: int) -> str | None:
    """What ``text`` read like before an edit: a typo in it, another time, a word
    missing. ``None`` if nothing plausible (an emoji, "ok")."""
    order = (_typo, _typo, _shift_time, _shorter)
    first = h % len(order)
    for turn in range(len(order)):
        draft = order[(first + turn) % len(order)](text, h >> 4)
        if draft is not None and draft != text:
            return draft
    return None


def edited(text: str, h: int, *, post: bool = False) -> str | None:
    """What ``text`` reads like after its author edits it: its typo fixed, else its
    time changed or a word added, else an emoji added (a channel ``post`` gets an
    update line instead); ``None`` for an empty text, or a link with nothing to fix."""
    if not text:
        return None
    typos = list(_TYPO_RE.finditer(text))
    if typos:
        match = typos[h % len(typos)]
        return _replace(text, match, _MEANT[match.group(0).lower()])
    for change in (_shift_time, _longer) if h & 1 else (_longer, _shift_time):
        new = change(text, h >> 1)
        if new is not None and new != text:
            return new
    if post:
        return f"{text}\n\nUpdate: {POST_UPDATES[h % len(POST_UPDATES)]}"
    if "https://" in text or ord(text[-1]) > 0x2000:
        return None
    return f"{text} 🙂"


def has_typo(text: str) -> bool:
    """Whether ``text`` holds a common typo an edit would fix."""
    return _TYPO_RE.search(text) is not None


def added_caption(kind: str, h: int) -> str | None:
    """A caption for media of ``kind`` ("photo", "video", "gif", "voice", "file") sent
    without one; ``None`` for other kinds."""
    captions = _CAPTIONS.get(kind)
    return None if captions is None else captions[h % len(captions)]


def with_typo(text: str, h: int) -> str:
    """``text`` with one common typo in it, if it has a word people often mistype."""
    matches = list(_WORD_RE.finditer(text))
    if not matches:
        return text
    match = matches[h % len(matches)]
    return _replace(text, match, TYPOS[match.group(0).lower()])
