"""A client Postbox file as the app would have stored it for a user offline since ``T``.

``T`` is the dataset's ``log_from``: the server's update log starts there, at pts 1
for the account and every channel, so the stored cursor is (pts 1, date ``T``) and
getDifference brings everything after it. What the file holds, as of ``T``:

* the chat list as the server would have given it (pinned chats, then the chats by
  their newest top messages; all of them, or the first ``dialogs``), each with its top
  message, read state, peer and, for channels, its pts; a chat-list hole below the
  last stored chat if there are more;
* the ``window`` newest messages of the ``active_chats`` busiest chats of that page,
  with the history hole below them; every other listed chat has a hole below its top
  message, as after a getDialogs fill;
* messages as they were at ``T``: later edits and deletions are not applied yet.

The chats (peers, read states, holes, the chat list, the cursor) and each chat's newest
message go in through one ordinary Postbox transaction, so everything Postbox keeps per
chat is as the app would have it. The messages, the bulk of the file, are generated
(by Spark or a plain loop) as the rows Postbox stores for them (``client_messages``,
with Postbox's own key and value functions), sorted by history key, and inserted in
that order with the journal off; the file is in WAL mode, as Postbox keeps it, after.
``tests/spark_tools/test_client_db.py`` checks the result equals the same messages
added through ``Transaction.add_messages``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from dataset import (
    AccountPlan,
    AccountTables,
    ChatPlan,
    ChatRows,
    MessageFate,
    account_tables,
    build_message,
)
from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    ChatListHole,
    ChatListInclusion,
    MessageHistoryHoleSpace,
    MessageId,
    MessageIndex,
    MessageNamespace,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerReadState,
    Postbox,
    PostboxError,
    StateCursor,
    Transaction,
)
from postbox.keys import message_index_key
from spark_tools.client_messages import (
    ClientMessage,
    client_message,
    write_client_holes,
    write_client_messages,
)
from spark_tools.errors import OutputError
from spark_tools.progress import Progress

__all__ = [
    "ClientLayout",
    "ClientSpec",
    "client_layout",
    "window_messages",
    "window_rows",
    "write_chats",
    "write_client_db",
]

_CLOUD = int(MessageNamespace.CLOUD)
_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """What the client file holds: ``dialogs`` chats of the chat list (``None``: all of
    them), and the ``window`` newest messages of its ``active_chats`` busiest chats."""

    dialogs: int | None = None
    active_chats: int = 20
    window: int = 200


@dataclass(frozen=True, slots=True)
class StoredChat:
    chat: ChatPlan
    top_index: int
    top: MessageFate
    #: Index of the first message of the stored window (``top_index`` if only the top).
    window_from: int


@dataclass(frozen=True, slots=True)
class ClientLayout:
    offline_at: int
    chats: tuple[StoredChat, ...]
    pinned: tuple[PeerId, ...]
    #: More chats exist below the stored page (a chat-list hole goes there).
    more: bool


def exists_at(fate: MessageFate, moment: int) -> bool:
    return fate.sent_at < moment and (fate.deleted_at is None or fate.deleted_at >= moment)


def row_at(fate: MessageFate, moment: int) -> tuple[Any, ...]:
    """The message's row as it was at ``moment`` (before later edits)."""
    if fate.edited_at is not None and fate.edited_at >= moment:
        row = list(fate.row)
        row[7] = fate.sent_text
        row[10] = None
        return tuple(row)
    return fate.row


def _top_before(rows: ChatRows, moment: int) -> int | None:
    """Index of the newest message sent before ``moment`` that still existed then."""
    low, high = 0, rows.chat.count  # binary search: sent_at never goes down with the index
    while low < high:
        middle = (low + high) // 2
        if rows.fate(middle).sent_at < moment:
            low = middle + 1
        else:
            high = middle
    index = low - 1
    while index >= 0 and not exists_at(rows.fate(index), moment):
        index -= 1
    return index if index >= 0 else None


def client_layout(plan: AccountPlan, tables: AccountTables, client: ClientSpec) -> ClientLayout:
    offline_at = plan.spec.log_from
    if offline_at is None:
        raise ValueError("a client database needs a dataset with an update log (log_days > 0)")
    candidates: list[StoredChat] = []
    for chat in plan.chats:
        rows = ChatRows(plan, chat)
        top_index = _top_before(rows, offline_at)
        if top_index is not None:
            candidates.append(StoredChat(chat, top_index, rows.fate(top_index), top_index))
    pinned_ids = set(tables.pinned)
    pinned = [c for c in candidates if c.chat.peer.id in pinned_ids]
    others = [c for c in candidates if c.chat.peer.id not in pinned_ids]
    others.sort(key=lambda c: (c.top.sent_at, c.top.id, int(c.chat.peer.id)), reverse=True)
    limit = len(others) if client.dialogs is None else client.dialogs
    page = pinned + others[:limit]
    busiest = sorted(page, key=lambda c: (-c.top_index, c.chat.position))[: client.active_chats]
    active = {c.chat.position for c in busiest}
    stored = tuple(
        StoredChat(c.chat, c.top_index, c.top, max(0, c.top_index - client.window + 1))
        if c.chat.position in active
        else c
        for c in page
    )
    stored_pinned = tuple(p for p in tables.pinned if any(c.chat.peer.id == p for c in pinned))
    return ClientLayout(offline_at, stored, stored_pinned, len(others) > limit)


#: A window to generate: (chat position, first index, last index + 1, offline point).
Window = tuple[int, int, int, int]


def windows(layout: ClientLayout) -> list[Window]:
    return [
        (c.chat.position, c.window_from, c.top_index + 1, layout.offline_at) for c in layout.chats
    ]


def window_rows(plan: AccountPlan, window: Window) -> Iterator[tuple[bytes, tuple[Any, ...]]]:
    """(history key, row at the offline point) of each message of a window that existed
    then; the key is postbox's own."""
    position, lower, upper, moment = window
    rows = ChatRows(plan, plan.chats[position])
    peer_id = PeerId(rows.peer_id)
    for index in range(lower, upper):
        fate = rows.fate(index)
        if exists_at(fate, moment):
            key = message_index_key(MessageIndex(MessageId(peer_id, _CLOUD, fate.id), fate.sent_at))
            yield key, row_at(fate, moment)


def window_messages(plan: AccountPlan, window: Window) -> Iterator[ClientMessage]:
    """What the client file stores for each message of a window (``window_rows``)."""
    for _key, row in window_rows(plan, window):
        yield client_message(row)


def read_states_at(
    plan: AccountPlan, layout: ClientLayout, tables: AccountTables
) -> dict[PeerId, PeerReadState]:
    """The read state of each stored chat at the offline point."""
    final = dict(tables.read_states)
    return {
        c.chat.peer.id: _read_state_at(plan, c, final.get(c.chat.peer.id), layout.offline_at)
        for c in layout.chats
    }


def _read_state_at(
    plan: AccountPlan, stored: StoredChat, final: PeerReadState | None, moment: int
) -> PeerReadState:
    """The read state at ``moment``: read up to where it is read now, but not beyond
    the top then; unread are the incoming messages after that."""
    top_id = stored.top.id
    read_in = min(final.max_incoming_read_id if final else top_id, top_id)
    read_out = min(final.max_outgoing_read_id if final else 0, top_id)
    rows = ChatRows(plan, stored.chat)
    unread = 0
    index = stored.top_index
    while index >= 0:
        fate = rows.fate(index)
        index -= 1
        if fate.id <= read_in:
            break
        if exists_at(fate, moment) and fate.row[4] & 1:
            unread += 1
    return PeerReadState(read_in, read_out, top_id, unread, False)


def write_client_db(
    path: Path,
    plan: AccountPlan,
    layout: ClientLayout,
    sorted_messages: Callable[[], Iterable[ClientMessage]],
    progress: Progress,
    tables: AccountTables | None = None,
) -> int:
    """Write the client file at ``path`` (which must not exist) from the windows'
    messages in key order (``sorted_messages()``); returns the messages stored. The
    file is written beside ``path`` and renamed once complete."""
    path = Path(path)
    if path.exists():
        raise OutputError(f"{path}: exists; refusing to overwrite a database")
    tables = tables or account_tables(plan)
    staging = path.parent / f".{path.name}.{secrets.token_hex(6)}.partial"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stored = _write(staging, plan, layout, tables, sorted_messages, progress)
        os.replace(staging, path)
    except (PostboxError, apsw.Error) as error:
        raise OutputError(f"{path}: {error}") from None
    except OSError as error:
        raise OutputError(f"{path}: cannot be written: {error.strerror or error}") from None
    finally:
        for leftover in (staging, *(Path(f"{staging}{s}") for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
    return stored


def _write(
    staging: Path,
    plan: AccountPlan,
    layout: ClientLayout,
    tables: AccountTables,
    sorted_messages: Callable[[], Iterable[ClientMessage]],
    progress: Progress,
) -> int:
    moment = layout.offline_at
    states = read_states_at(plan, layout, tables)
    lowest = [(c.chat.peer.id, _lowest_id(plan, c)) for c in layout.chats]
    progress.stage("client database: chats")
    # Each chat's newest message goes through Postbox for what it keeps per chat; its
    # text is left out here, so the full-text rows are all numbered in key order below.
    newest = [
        build_message(row_at(stored.top, moment))._replace(text="") for stored in layout.chats
    ]

    def chats(tx: Transaction) -> None:
        tx.add_messages(newest)
        write_chats(tx, plan, layout, tables, moment, holes=False, read_states=states)

    with Postbox(staging):
        pass  # the tables
    with _raw(staging) as db:
        write_client_holes(db, lowest)
    with Postbox(staging) as postbox:
        postbox.run(chats)
    progress.stage("client database: sort")
    messages = list(sorted_messages())
    progress.stage("client database: messages", len(messages))
    with _raw(staging) as db:
        stored = write_client_messages(db, messages)
    progress.advance(stored)
    return stored


@contextlib.contextmanager
def _raw(path: Path) -> Iterator[apsw.Connection]:
    """The file for plain inserts: one transaction, the journal off, WAL again after."""
    db = apsw.Connection(str(path))
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        with db:
            yield db
        db.execute("PRAGMA journal_mode = WAL")
    finally:
        db.close()


def _lowest_id(plan: AccountPlan, stored: StoredChat) -> int:
    """The id of the oldest message of the chat's stored window."""
    if stored.window_from < stored.top_index:
        return ChatRows(plan, stored.chat).fate(stored.window_from).id
    return stored.top.id


def write_chats(
    tx: Transaction,
    plan: AccountPlan,
    layout: ClientLayout,
    tables: AccountTables,
    moment: int,
    *,
    holes: bool = True,
    read_states: dict[PeerId, PeerReadState] | None = None,
) -> None:
    """Store the chats of ``layout`` as of ``moment`` (after their messages): peers,
    presences, settings, chat list, read states, channel pts, the cursor and, unless
    ``holes`` is false (they were written already), the history holes. ``read_states``
    are the chats' read states at ``moment`` if already known (``read_states_at``)."""
    final_states = dict(tables.read_states)
    archived = set(tables.archived)
    presences = dict(tables.presences)
    settings = dict(tables.notification_settings)
    peers = {plan.self_peer.id: plan.self_peer}
    by_id = {chat.peer.id: chat.peer for chat in plan.chats}
    for stored in layout.chats:
        chat = stored.chat
        peers[chat.peer.id] = chat.peer
        for member in chat.members:
            peers[member] = by_id[member]
    tx.update_peers(peers.values())
    tx.update_peer_presences({p: presences[p] for p in peers if p in presences})
    for peer_id in peers:
        if peer_id in settings:
            tx.update_notification_settings(peer_id, settings[peer_id])
    for stored in layout.chats:
        peer_id = stored.chat.peer.id
        group = PeerGroupId.ARCHIVE if peer_id in archived else PeerGroupId.ROOT
        tx.update_chat_list_inclusion(peer_id, ChatListInclusion(group))
        if holes:
            lowest = _lowest_id(plan, stored)
            tx.remove_hole(peer_id, _CLOUD, _EVERYWHERE, lowest, MAX_MESSAGE_ID)
        if read_states is not None:
            state = read_states[peer_id]
        else:
            state = _read_state_at(plan, stored, final_states.get(peer_id), moment)
        tx.reset_read_state(peer_id, _CLOUD, state)
        if peer_id.namespace == PeerNamespace.CHANNEL:
            tx.set_peer_chat_state(peer_id, ChannelState(1))
    roots = [p for p in layout.pinned if p not in archived]
    if roots:
        tx.set_pinned_peer_ids(PeerGroupId.ROOT, roots)
    unpinned = [c for c in layout.chats if c.chat.peer.id not in set(layout.pinned)]
    for group_id in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
        tx.remove_chat_list_hole(group_id, ChatListHole.top())
        if layout.more and unpinned:
            last = unpinned[-1]
            below = MessageIndex(
                MessageId(last.chat.peer.id, _CLOUD, last.top.id), last.top.sent_at
            )
            tx.add_chat_list_hole(group_id, ChatListHole(below))
    tx.set_state(StateCursor(pts=1, qts=0, seq=1, date=moment))
