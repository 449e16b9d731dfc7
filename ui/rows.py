"""What each row of a screen shows, computed from a Postbox snapshot. Pure Python.

``chat_list_rows`` turns a chat-list snapshot into rows (avatar initials and colour,
name, preview, time, unread badge, pinned, muted, online); ``history_rows`` turns a
history snapshot into rows (a loading row where the view has a hole, a date row at
each new day, message bubbles with their delivery state). Rows compare by value and
carry a ``key``, so a model can diff two snapshots row by row.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress

from postbox import (
    ChatInterfaceState,
    ChatListEntry,
    ChatListHoleEntry,
    ChatListMessageEntry,
    ChatListView,
    Glyph,
    ItemCollectionId,
    ItemCollectionInfosView,
    ItemCollectionItem,
    Media,
    MediaKind,
    Message,
    MessageFailure,
    MessageFlags,
    MessageHistoryView,
    MessageId,
    MessageNamespace,
    PeerFlags,
    PeerNamespace,
    PeerPresence,
    PeerView,
    PresenceStatus,
)
from ui.failed_messages import failure_sentence

__all__ = [
    "AVATAR_COLORS",
    "ChatRow",
    "ChatRowCache",
    "DateRow",
    "UnreadRow",
    "DeliveryState",
    "HistoryRow",
    "HistoryRowCache",
    "LoadingRow",
    "MessageRow",
    "ReplyPreview",
    "PackTab",
    "StickerCell",
    "StickerFace",
    "avatar_color",
    "chat_list_rows",
    "format_list_time",
    "history_rows",
    "initials",
    "peer_kind",
    "peer_subtitle",
    "presence_text",
    "draft_line",
    "preview_text",
    "pack_tabs",
    "sticker_cells",
    "sticker_face",
]

#: Avatar backgrounds, picked by peer id so a chat keeps its colour.
AVATAR_COLORS = (
    "#e17076", "#7bc862", "#65aadd", "#a695e7", "#ee7aae", "#6ec9cb", "#faa774", "#5d9fd6",
)  # fmt: skip
_MEDIA_LABELS = {
    MediaKind.PHOTO: "Photo",
    MediaKind.VIDEO: "Video",
    MediaKind.FILE: "File",
    MediaKind.VOICE: "Voice message",
    MediaKind.LINK: "Link",
    MediaKind.STICKER: "Sticker",
    MediaKind.GIF: "GIF",
}


def avatar_color(peer_id: int) -> str:
    return AVATAR_COLORS[int(peer_id) % len(AVATAR_COLORS)]


@functools.lru_cache(maxsize=8192)
def initials(name: str) -> str:
    """Up to two letters for an avatar, as Telegram takes them: the first letters of the
    first two words ("Alice Baker" -> "AB"). Words without a letter (a separator, a
    year, an emoji) do not count, so a rename's suffix changes nothing ("Travel Notes ·
    Autumn 2026" -> "TN"); a name of such words alone gives its first digit."""
    firsts = [_first_alnum(word) for word in name.split() if any(c.isalpha() for c in word)]
    if not firsts:
        firsts = [first for first in map(_first_alnum, name.split()) if first][:1]
    return "".join(firsts[:2]).upper() or "?"


def unnamed_peer(peer_id: int) -> str:
    """What stands for a peer whose name has not arrived yet (a min peer being fetched):
    its kind, until the name replaces it."""
    return f"Loading {peer_kind(peer_id)}…"


def _first_alnum(word: str) -> str:
    return next((c for c in word if c.isalnum()), "")


def preview_text(message: Message | None) -> str:
    """One line for the chat list: the text, or what the media is."""
    if message is None:
        return ""
    text = " ".join(message.text.split())
    if not message.media:
        return text
    kind = message.media[0].kind
    label = _MEDIA_LABELS.get(kind, "Media")
    glyph = message.media[0].glyph
    if kind is MediaKind.STICKER and glyph is not None:
        label = f"{glyph.emoji} Sticker"
    if kind is MediaKind.LINK or not text:
        return text or label
    return f"{label}, {text}"


def format_list_time(timestamp: int, now: int, tz: dt.tzinfo = dt.UTC) -> str:
    """ "14:05" today, "Tue" within the week, "03.02.24" before."""
    return _list_time(timestamp, dt.datetime.fromtimestamp(now, tz).date(), tz)


@functools.lru_cache(maxsize=8192)
def _list_time(timestamp: int, today: dt.date, tz: dt.tzinfo) -> str:
    moment = dt.datetime.fromtimestamp(timestamp, tz)
    if moment.date() == today:
        return moment.strftime("%H:%M")
    if 0 < (today - moment.date()).days < 7:
        return moment.strftime("%a")
    return moment.strftime("%d.%m.%y")


@dataclass(frozen=True, slots=True)
class ChatRow:
    """A chat in the list, or (``is_hole``) the "loading more" row at a hole."""

    key: Hashable
    peer_id: int
    title: str
    initials: str
    color: str
    preview: str
    time: str
    unread: int
    pinned: bool
    muted: bool
    online: bool
    outgoing: bool
    is_hole: bool = False
    #: A secret chat: drawn with a lock, its name in green, as Telegram does.
    secret: bool = False
    #: What the reader left typed in the chat: shown as "Draft: ..." over the preview.
    draft: str = ""
    #: The chat holds a message that failed to send: a red "!" where the unread count goes.
    failed: bool = False
    #: The preview is a message that failed to send (not shown as sent).
    top_failed: bool = False


class ChatRowCache:
    """The rows of the last chat-list snapshot by entry: a snapshot shares the entries
    that did not change with the one before, and their rows need not be built again
    (within the same minute, since times, mutes and online dots follow the clock)."""

    def __init__(self) -> None:
        #: The entries of the last snapshot (kept alive, so their ids stay theirs).
        self._entries: tuple[ChatListEntry, ...] = ()
        self._by_entry: dict[int, ChatRow] = {}
        self._minute: int | None = None
        #: The rows the last call built anew (the others are the previous call's).
        self.built: list[ChatRow] = []

    def rows(self, view: ChatListView, now: int, tz: dt.tzinfo = dt.UTC) -> list[ChatRow]:
        """The rows of ``view``; entries the last snapshot had keep their row objects.

        Whole-list work runs in C (ids, set differences, look-ups); Python builds rows
        only for entries that are new (and for all of them when the minute changes)."""
        minute = now // 60
        entries = view.entries
        ids = list(map(id, entries))
        by_entry = self._by_entry if minute == self._minute else {}
        new_ids = set(ids)
        for gone in set(by_entry).difference(new_ids):
            del by_entry[gone]
        missing = new_ids.difference(by_entry)
        built = []
        if missing:
            fresh = list(compress(entries, map(missing.__contains__, ids)))
            built = chat_list_rows_of(fresh, now, tz)
            by_entry.update(zip(map(id, fresh), built, strict=True))
        self._entries, self._by_entry, self._minute = entries, by_entry, minute
        self.built = built
        return list(map(by_entry.__getitem__, ids))


def chat_list_rows(view: ChatListView, now: int, tz: dt.tzinfo = dt.UTC) -> list[ChatRow]:
    return chat_list_rows_of(view.entries, now, tz)


def chat_list_rows_of(
    entries: Iterable[ChatListEntry], now: int, tz: dt.tzinfo = dt.UTC
) -> list[ChatRow]:
    today = dt.datetime.fromtimestamp(now, tz).date()
    rows: list[ChatRow] = []
    for entry in entries:
        if isinstance(entry, ChatListHoleEntry):
            index = entry.hole.index
            key = ("hole", index.timestamp, int(index.id.peer_id), index.id.id)
            rows.append(ChatRow(key, 0, "", "", "", "", "", 0, False, False, False, False, True))
            continue
        assert isinstance(entry, ChatListMessageEntry)
        peer_id = entry.peer_id
        name = entry.peer.name if entry.peer is not None else unnamed_peer(int(peer_id))
        message = entry.message
        settings = entry.notification_settings
        presence = entry.presence
        rows.append(
            ChatRow(
                key=int(peer_id),
                peer_id=int(peer_id),
                title=name,
                initials=initials(name) if entry.peer is not None else "…",
                color=avatar_color(peer_id),
                preview=preview_text(message),
                time=_list_time(message.timestamp, today, tz) if message else "",
                unread=entry.read_state.count if entry.read_state else 0,
                pinned=entry.index.pinning_index is not None,
                muted=settings is not None and settings.is_muted(now),
                online=presence is not None
                and presence.status is PresenceStatus.ONLINE
                and presence.timestamp > now,
                outgoing=message is not None and not message.incoming,
                secret=peer_id.namespace == PeerNamespace.SECRET_CHAT,
                draft=draft_line(entry.interface_state),
                failed=entry.has_failed,
                top_failed=message is not None and bool(message.flags & MessageFlags.FAILED),
            )
        )
    return rows


def draft_line(state: ChatInterfaceState | None) -> str:
    """A chat's draft on one line, as the chat list shows it ("" for none)."""
    if state is None or state.draft is None:
        return ""
    return " ".join(state.draft.text.split()) or ("Reply" if state.draft.reply_to_id else "")


class DeliveryState:
    """What the ticks of an outgoing message say."""

    PENDING = "pending"
    FAILED = "failed"
    SENT = "sent"
    READ = "read"


@dataclass(frozen=True, slots=True)
class LoadingRow:
    """Where the view reaches a hole: messages are being fetched."""

    key: Hashable


@dataclass(frozen=True, slots=True)
class DateRow:
    key: Hashable
    text: str


@dataclass(frozen=True, slots=True)
class UnreadRow:
    """The bar above the first message that was unread when the chat was opened."""

    key: Hashable = ("unread",)
    text: str = "Unread messages"


@dataclass(frozen=True, slots=True)
class ReplyPreview:
    """What a reply shows of the message it answers: who wrote it and how it starts."""

    id: int
    author: str
    text: str
    #: The message answered is not stored here (yet): the text says it is loading.
    missing: bool = False


@dataclass(frozen=True, slots=True)
class MessageRow:
    key: Hashable
    peer_id: int
    namespace: int
    id: int
    timestamp: int
    text: str
    media: str
    outgoing: bool
    time: str
    delivery: str | None
    edited: bool
    #: The sender's name, on the first of a run of incoming group messages by one author.
    author: str = ""
    author_color: str = ""
    #: The message this one answers, if it is a reply.
    reply: ReplyPreview | None = None
    #: The kind of its (first) media item ("photo", "file", ...) and its size in bytes.
    media_kind: str = ""
    media_size: int = 0
    #: A forwarded message's "Forwarded from" name ("" while it is not known yet).
    forwarded_from: str | None = None
    #: A sticker (or a GIF without a caption), drawn large with no bubble.
    sticker: StickerFace | None = None
    #: Why a message that failed to send was not sent, in words ("" for any other).
    failure: str = ""


HistoryRow = LoadingRow | DateRow | UnreadRow | MessageRow


@dataclass(frozen=True, slots=True)
class StickerFace:
    """How a sticker or GIF is drawn: its emoji on a soft shape ("circle", "star", ...)
    of a colour ("#rrggbb"); a GIF is marked as one."""

    emoji: str
    shape: str
    colour: str
    gif: bool = False


def sticker_face(media: Media) -> StickerFace | None:
    """The face of a sticker or GIF, ``None`` for other media (or one with no glyph)."""
    glyph: Glyph | None = media.glyph
    if glyph is None or media.kind not in (MediaKind.STICKER, MediaKind.GIF):
        return None
    return StickerFace(
        glyph.emoji, glyph.shape.name.lower(), f"#{glyph.colour & 0xFFFFFF:06x}",
        media.kind is MediaKind.GIF,
    )  # fmt: skip


def _delivery(message: Message, max_outgoing_read: int) -> str | None:
    if message.incoming:
        return None
    if message.flags & MessageFlags.FAILED:
        return DeliveryState.FAILED
    if message.flags & MessageFlags.UNSENT or message.id.namespace == MessageNamespace.LOCAL:
        return DeliveryState.PENDING
    if message.id.id <= max_outgoing_read:
        return DeliveryState.READ
    return DeliveryState.SENT


def _day_label(timestamp: int, now: int, tz: dt.tzinfo) -> str:
    day = dt.datetime.fromtimestamp(timestamp, tz).date()
    today = dt.datetime.fromtimestamp(now, tz).date()
    if day == today:
        return "Today"
    if (today - day).days == 1:
        return "Yesterday"
    if day.year == today.year:
        return day.strftime("%-d %B")
    return day.strftime("%-d %B %Y")


def history_rows(
    view: MessageHistoryView,
    now: int,
    tz: dt.tzinfo = dt.UTC,
    *,
    pending: MessageHistoryView | None = None,
    authors: Mapping[int, str] | None = None,
    unread_after: int | None = None,
    replied: Mapping[int, Message] | None = None,
    chat_name: str = "",
    peer_names: Mapping[int, str] | None = None,
    cache: HistoryRowCache | None = None,
    failures: Mapping[MessageId, MessageFailure] | None = None,
) -> list[HistoryRow]:
    """Rows oldest first: a loading row at each hole the window touches, a date row at
    the start of each day, then the messages. ``pending`` is the view of the chat's
    local namespace (messages not sent yet), merged in by time. With ``authors`` (peer
    id to name, for groups) an incoming message that starts a run by its sender shows
    the sender's name. ``unread_after``: the read mark when the chat was opened; the
    unread bar goes above the first incoming message after it. A reply shows the message
    it answers if the window or ``replied`` (messages fetched apart, by id) has it, named
    by ``authors``, "You", or ``chat_name`` (the other side of a private chat). A
    forwarded message names where it first appeared from ``peer_names``. With a
    ``cache``, a message equal to one of the last call, and showing the same there,
    keeps its row object (and what does not change with context is computed once
    per message). A failed message says why, from ``failures`` (the chat's, by id)."""
    unread_bar = unread_after is not None
    known = {m.id.id: m for m in view.entries}
    if replied:
        known = {**replied, **known}
    max_read = 0
    if view.read_state is not None:
        for _namespace, state in view.read_state.states:
            max_read = max(max_read, state.max_outgoing_read_id)
    rows: list[HistoryRow] = []
    if view.hole_earlier or (view.is_loading and not view.entries):
        rows.append(LoadingRow(("loading", "earlier")))
    last_day: dt.date | None = None
    messages = list(view.entries)
    if pending is not None and pending.entries:
        messages = sorted([*messages, *pending.entries], key=lambda m: m.index.sort_key)
    last_author: int | None = None
    for message in messages:
        known_message = cache.static(message, tz) if cache is not None else _static(message, tz)
        day = known_message.day
        if day != last_day:
            rows.append(DateRow(("day", day.toordinal()), _day_label(message.timestamp, now, tz)))
            last_day = day
            last_author = None
        author = author_color = ""
        author_id = known_message.author_id
        incoming = known_message.delivery is None
        starts_run = author_id is not None and author_id != last_author
        if authors is not None and incoming and starts_run:
            assert author_id is not None
            author = authors.get(author_id) or unnamed_peer(author_id)
            author_color = avatar_color(author_id)
        last_author = author_id if incoming else None
        if (
            unread_bar
            and incoming
            and message.id.namespace == MessageNamespace.CLOUD
            and unread_after is not None
            and message.id.id > unread_after
        ):
            rows.append(UnreadRow())
            unread_bar = False
        delivery = known_message.delivery
        if delivery == DeliveryState.SENT and message.id.id <= max_read:
            delivery = DeliveryState.READ
        reply = _reply_preview(message, known, authors, chat_name)
        forwarded_from = _forwarded_from(message, peer_names)
        failure = ""
        if delivery == DeliveryState.FAILED:
            channel = message.peer_id.namespace == PeerNamespace.CHANNEL
            failure = failure_sentence((failures or {}).get(message.id), channel=channel)
        row = known_message.row
        if row is None or (
            row.author != author
            or row.delivery != delivery
            or row.reply != reply
            or row.forwarded_from != forwarded_from
            or row.failure != failure
        ):
            row = known_message.row = dataclasses.replace(
                known_message.base,
                author=author,
                author_color=author_color,
                delivery=delivery,
                reply=reply,
                forwarded_from=forwarded_from,
                failure=failure,
            )
        rows.append(row)
    if view.hole_later and not (rows and isinstance(rows[-1], LoadingRow)):
        rows.append(LoadingRow(("loading", "later")))  # one loading row for an empty window
    if cache is not None:
        cache.finish()
    return rows


@dataclass(slots=True)
class _KnownMessage:
    """What a message's row shows that depends on the message alone, and its last row."""

    message: Message
    day: dt.date
    author_id: int | None
    #: ``None`` for an incoming message; else as sent, before the read mark says "read".
    delivery: str | None
    base: MessageRow
    row: MessageRow | None = None


def _static(message: Message, tz: dt.tzinfo) -> _KnownMessage:
    moment = dt.datetime.fromtimestamp(message.timestamp, tz)
    media = media_kind = ""
    media_size = 0
    sticker = None
    if message.media:
        item = message.media[0]
        media = item.title or _MEDIA_LABELS.get(item.kind, "Media")
        media_kind, media_size = item.kind.name.lower(), item.size
        face = sticker_face(item)
        if face is not None:
            media = f"{face.emoji} {media}"
        # Drawn bare only when nothing else goes with it (a caption, a reply, a forward
        # header): otherwise it is a card in a bubble, like other media.
        plain = not (message.text or message.reply_to_id or message.forward_info)
        sticker = face if plain else None
    incoming = message.incoming
    base = MessageRow(
        key=("message", message.id.namespace, message.id.id),
        peer_id=int(message.peer_id),
        namespace=message.id.namespace,
        id=message.id.id,
        timestamp=message.timestamp,
        text=message.text,
        media=media,
        outgoing=not incoming,
        time=moment.strftime("%H:%M"),
        delivery=None,
        edited=message.edit_timestamp is not None,
        media_kind=media_kind,
        media_size=media_size,
        sticker=sticker,
    )
    return _KnownMessage(
        message,
        moment.date(),
        int(message.author_id) if message.author_id is not None else None,
        _delivery(message, max_outgoing_read=0),
        base,
    )


class HistoryRowCache:
    """The rows of the last history snapshot by message id: messages a snapshot shares
    with the one before (equal, if not the same objects) keep their row objects while
    they show the same, so the model's diff skips them and the delegate's measurements
    of them stay valid."""

    def __init__(self) -> None:
        self._known: dict[MessageId, _KnownMessage] = {}
        self._seen: dict[MessageId, _KnownMessage] = {}
        self._tz: dt.tzinfo | None = None

    def static(self, message: Message, tz: dt.tzinfo) -> _KnownMessage:
        if tz is not self._tz:
            self._known, self._seen, self._tz = {}, {}, tz
        known = self._known.get(message.id)
        if known is None or (known.message is not message and known.message != message):
            known = _static(message, tz)
        self._seen[message.id] = known
        return known

    def finish(self) -> None:
        """Forget the messages the last call did not show."""
        self._known, self._seen = self._seen, {}


def _forwarded_from(message: Message, names: Mapping[int, str] | None) -> str | None:
    forward = message.forward_info
    if forward is None:
        return None
    if names is None:
        return ""
    author = int(forward.author_id)
    return names.get(author) or unnamed_peer(author)


def _reply_preview(
    message: Message,
    known: Mapping[int, Message],
    authors: Mapping[int, str] | None,
    chat_name: str,
) -> ReplyPreview | None:
    if message.reply_to_id is None:
        return None
    target = known.get(message.reply_to_id)
    if target is None:
        return ReplyPreview(message.reply_to_id, "", "Loading…", missing=True)
    if not target.incoming:
        author = "You"
    elif authors is not None and target.author_id is not None:
        author = authors.get(int(target.author_id), chat_name)
    else:
        author = chat_name
    return ReplyPreview(target.id.id, author, preview_text(target) or "Message")


@dataclass(frozen=True, slots=True)
class PackTab:
    """A sticker set (or the saved GIFs) in the picker's strip: shown by its first item."""

    key: ItemCollectionId
    title: str
    count: int
    face: StickerFace | None
    gifs: bool = False


@dataclass(frozen=True, slots=True)
class StickerCell:
    """A sticker or GIF in the picker's grid, and the media sent when it is chosen."""

    key: int
    face: StickerFace
    media: Media
    title: str


def pack_tabs(view: ItemCollectionInfosView, gifs_namespace: int) -> list[PackTab]:
    """The picker's tabs: every collection of the view in its order; the collections of
    ``gifs_namespace`` are the saved GIFs' tab."""
    tabs = []
    for entry in view.entries():
        first = entry.first_items[0].media if entry.first_items else None
        tabs.append(
            PackTab(
                entry.id,
                entry.info.title,
                entry.info.count,
                None if first is None else sticker_face(first),
                entry.id.namespace == gifs_namespace,
            )
        )
    return tabs


def sticker_cells(items: Iterable[ItemCollectionItem], title: str = "") -> list[StickerCell]:
    """The grid of one collection: each item that has a face, in order."""
    cells = []
    for item in items:
        face = sticker_face(item.media)
        if face is not None:
            label = f"{face.emoji}  {title}".strip()
            cells.append(StickerCell(item.media.id, face, item.media, label))
    return cells


def presence_text(presence: PeerPresence | None, now: int, tz: dt.tzinfo = dt.UTC) -> str:
    """ "online", "last seen 14:05", "last seen yesterday at 9:30", "last seen recently"."""
    if presence is None:
        return "last seen a long time ago"
    if presence.status is PresenceStatus.ONLINE and presence.timestamp > now:
        return "online"
    if presence.status is PresenceStatus.RECENTLY:
        return "last seen recently"
    if presence.status is PresenceStatus.LONG_AGO or presence.timestamp <= 0:
        return "last seen a long time ago"
    seen = dt.datetime.fromtimestamp(min(presence.timestamp, now), tz)
    today = dt.datetime.fromtimestamp(now, tz).date()
    if now - presence.timestamp < 60:
        return "last seen just now"
    if now - presence.timestamp < 3600:
        minutes = (now - presence.timestamp) // 60
        return f"last seen {minutes} minute{'s' if minutes != 1 else ''} ago"
    if seen.date() == today:
        return f"last seen today at {seen:%H:%M}"
    if (today - seen.date()).days == 1:
        return f"last seen yesterday at {seen:%H:%M}"
    return f"last seen {seen:%d.%m.%y}"


def peer_kind(peer_id: int) -> str:
    return {0: "user", 1: "group", 2: "channel", 3: "secret chat"}.get(peer_id >> 56, "chat")


def peer_subtitle(view: PeerView, now: int) -> str:
    """What the chat header says under the name: presence, or the member count."""
    if view.peer is None:
        return ""
    kind = peer_kind(int(view.peer.id))
    if kind == "secret chat":
        return "secret chat"
    if kind == "user":
        if view.peer.flags & PeerFlags.BOT:
            return "bot"
        return presence_text(view.presence, now)
    count = view.cached_data.participant_count if view.cached_data else None
    noun = "subscriber" if kind == "channel" else "member"
    if count is None:
        return kind
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
