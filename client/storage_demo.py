"""The storage demo behind ``postbox-chat storage-demo``.

``run_demo`` generates a dataset (``dataset.generate_dataset``), writes it into a Postbox
database through ordinary transactions (``write_dataset``), and prints the chat list, a
history window, a full-text search, a shared-media summary and one live change, with
the figures it measured. Each section has a reader that runs in one transaction and a
printer that lays out what it read (``client.text_layout``).
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from client.text_layout import figures, fit, long_time, mib, n, short_time, snippet, table
from dataset import (
    SEARCH_WORD,
    DemoDataset,
    describe_media,
    generate_dataset,
    live_message,
)
from postbox import (
    MAX_MESSAGE_ID,
    ChangeRecord,
    ChatListEntryType,
    ChatListInclusion,
    InsertMessage,
    Message,
    MessageHistoryHoleSpace,
    MessageHistoryOperation,
    MessageNamespace,
    MessageTags,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    RemoveMessage,
    StoreMessage,
    Transaction,
    UpdateMessage,
)

__all__ = ["CHUNK_SIZE", "run_demo", "write_dataset"]

#: Messages per write transaction.
CHUNK_SIZE = 5_000

_CLOUD = int(MessageNamespace.CLOUD)
_ROOT = int(PeerGroupId.ROOT)
_ARCHIVE = int(PeerGroupId.ARCHIVE)
_CHAT_ROWS = 15
_HISTORY_ROWS = 10
_SEARCH_HITS = 3


# -- writing --------------------------------------------------------------------


class _ChangeCounter:
    """A commit listener that counts what the change records report.

    It runs on the postbox thread before ``Postbox.run`` returns, so the caller reads
    the counts after each ``run``.
    """

    def __init__(self) -> None:
        self.records = 0
        self.inserted = 0
        self.chat_list_operations = 0
        self.last: ChangeRecord | None = None

    def __call__(self, record: ChangeRecord) -> None:
        self.records += 1
        self.inserted += sum(
            isinstance(operation, InsertMessage)
            for operations in record.message_operations.values()
            for operation in operations
        )
        self.chat_list_operations += sum(map(len, record.chat_list_operations.values()))
        self.last = record


def write_dataset(postbox: Postbox, dataset: DemoDataset, chunk_size: int = CHUNK_SIZE) -> int:
    """Write ``dataset`` through Postbox transactions; returns how many ran.

    Peers and their per-peer records, chat list inclusions and pins go first, then
    the messages in chunks, then the read states (last, since every stored incoming
    message counts as unread until its chat's read state is set).
    """

    def setup(tx: Transaction) -> None:
        tx.update_peers([dataset.self_peer, *dataset.peers])
        tx.update_peer_presences(dict(dataset.presences))
        for peer_id, settings in dataset.notification_settings:
            tx.update_notification_settings(peer_id, settings)
        archived = set(dataset.archived)
        for peer in dataset.peers:
            group = _ARCHIVE if peer.id in archived else _ROOT
            tx.update_chat_list_inclusion(peer.id, ChatListInclusion(group))
        tx.set_pinned_peer_ids(_ROOT, dataset.pinned)
        # The generated history is the whole history, as if fetched from the server:
        # no id range is left missing, and no part of the chat lists either.
        # So the shared-media counts are known too: they start at nothing and count
        # every message as it is added.
        everywhere = MessageHistoryHoleSpace.everywhere()
        for peer in dataset.peers:
            tx.remove_hole(peer.id, _CLOUD, everywhere, 1, MAX_MESSAGE_ID)
            for tag in MessageTags:
                tx.replace_tag_summary(peer.id, int(tag), _CLOUD, 0, 0)
        for group in (_ROOT, _ARCHIVE):
            for hole in tx.get_chat_list_holes(group):
                tx.remove_chat_list_hole(group, hole)

    postbox.run(setup)
    transactions = 1
    # The dataset is sorted by history key (peer, namespace, timestamp, id), so each
    # chunk appends to a contiguous key range: SQLite inserts sorted keys much faster
    # than scattered ones (fewer B-tree pages touched and split).
    messages = dataset.messages
    for start in range(0, len(messages), chunk_size):
        postbox.run(functools.partial(_add_messages, messages[start : start + chunk_size]))
        transactions += 1

    def read_states(tx: Transaction) -> None:
        for peer_id, state in dataset.read_states:
            tx.reset_read_state(peer_id, _CLOUD, state)

    postbox.run(read_states)
    return transactions + 1


def _add_messages(messages: Sequence[StoreMessage], tx: Transaction) -> None:
    tx.add_messages(messages)


# -- the demo -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ChatRow:
    rank: int
    pinned: bool
    name: str
    preview: str
    timestamp: int | None
    unread: int
    marked_unread: bool
    muted: bool


@dataclass(frozen=True, slots=True)
class _ChatList:
    rows: tuple[_ChatRow, ...]
    total: int
    pinned: int
    archived: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _HistoryLine:
    timestamp: int
    incoming: bool
    text: str


@dataclass(frozen=True, slots=True)
class _LiveChange:
    peer_id: PeerId
    name: str
    rank_before: int
    unread_before: int


def run_demo(
    path: Path,
    *,
    seed: int,
    chats: int,
    messages: int,
    days: int,
    out: TextIO,
    prog: str,
    temporary: bool = False,
) -> int:
    """Generate the dataset, write it into the Postbox at ``path`` and print the demo to
    ``out``, headed with the program name ``prog``; returns the exit status. Postbox
    failures raise ``PostboxError``."""
    started = time.perf_counter()
    dataset = generate_dataset(seed, chats, messages, days)
    generated = time.perf_counter() - started

    def emit(line: str = "") -> None:
        print(line, file=out)

    counter = _ChangeCounter()
    with Postbox(path) as postbox:
        postbox.add_commit_listener(counter)
        emit(
            f"{prog} storage-demo: seed {seed}, {n(chats, 'chat')}, {n(messages, 'message')} over "
            f"{n(days, 'day')} (until {long_time(dataset.now)} UTC)"
        )
        where = " (temporary, removed on exit; pass --db PATH to keep it)" if temporary else ""
        emit(f"database: {path}{where}")
        emit()

        started = time.perf_counter()
        transactions = write_dataset(postbox, dataset)
        written = time.perf_counter() - started
        size, wal = _file_size(path), _file_size(Path(f"{path}-wal"))
        rate = counter.inserted / written if written > 0 else 0.0
        skipped = len(dataset.messages) - counter.inserted
        already = f"; {skipped:,} were stored already" if skipped else ""
        emit("Figures")
        emit(
            figures(
                [
                    (
                        "generated",
                        f"{n(len(dataset.messages), 'message')} for {n(chats, 'chat')} "
                        f"in {generated:.2f} s",
                    ),
                    (
                        "written",
                        f"{n(counter.inserted, 'message')} in {transactions} transactions, "
                        f"{written:.2f} s ({rate:,.0f} messages/s{already})",
                    ),
                    (
                        "change records",
                        f"{counter.records} ({counter.inserted:,} message inserts, "
                        f"{counter.chat_list_operations:,} chat list operations)",
                    ),
                    (
                        "database size",
                        f"{mib(size + wal)} (main file {mib(size)} + WAL {mib(wal)})",
                    ),
                ]
            )
        )
        emit()

        chat_list = postbox.run(lambda tx: _read_chat_list(tx, dataset.now))
        _print_chat_list(emit, chat_list, dataset.now)
        emit()

        if dataset.messages:
            busiest = dataset.busiest_peer_id()
            _print_history(emit, postbox, dataset, busiest)
            emit()
            _print_search(emit, postbox)
            emit()
            _print_tags(emit, postbox, busiest)
            emit()

        _print_live_change(emit, postbox, dataset, counter)
    return 0


def _read_chat_list(tx: Transaction, now: int) -> _ChatList:
    entries = [e for e in tx.get_chat_list(_ROOT) if e.type is ChatListEntryType.MESSAGE]
    rows = []
    for rank, entry in enumerate(entries[:_CHAT_ROWS], start=1):
        peer_id = entry.peer_id
        peer = tx.get_peer(peer_id)
        message = tx.get_message(entry.index.message_index.id)
        read_state = tx.get_read_state(peer_id)
        settings = tx.get_notification_settings(peer_id)
        rows.append(
            _ChatRow(
                rank=rank,
                pinned=entry.index.pinning_index is not None,
                name=peer.name if peer is not None else repr(peer_id),
                preview="" if message is None else _preview(tx, message),
                timestamp=None if message is None else message.timestamp,
                unread=0 if read_state is None else read_state.count,
                marked_unread=read_state is not None and read_state.marked_unread,
                muted=settings is not None and settings.is_muted(now),
            )
        )
    archived = []
    for entry in tx.get_chat_list(_ARCHIVE):
        peer = tx.get_peer(entry.peer_id) if entry.type is ChatListEntryType.MESSAGE else None
        if peer is not None:
            archived.append(peer.name)
    pinned = sum(1 for entry in entries if entry.index.pinning_index is not None)
    return _ChatList(tuple(rows), len(entries), pinned, tuple(archived))


def _print_chat_list(emit: Callable[[str], None], chat_list: _ChatList, now: int) -> None:
    emit(
        f"Chat list: top {len(chat_list.rows)} of {n(chat_list.total, 'chat')} "
        f"({chat_list.pinned} pinned; 📌 pinned, 🔕 muted, (n) unread)"
    )
    rows = []
    for row in chat_list.rows:
        badge = f"({row.unread:,})" if row.unread else ("(•)" if row.marked_unread else "")
        rows.append(
            (
                str(row.rank),
                "📌" if row.pinned else "",
                row.name,
                row.preview,
                "" if row.timestamp is None else short_time(row.timestamp, now),
                badge,
                "🔕" if row.muted else "",
            )
        )
    emit(
        table(
            ("#", "", "Chat", "Last message", "Time", "Unread", ""),
            rows,
            widths=(None, None, 22, 44, None, None, None),
            right=(0, 4, 5),
        )
    )
    if chat_list.archived:
        emit(f"Archived: {', '.join(chat_list.archived)}")


def _print_history(
    emit: Callable[[str], None], postbox: Postbox, dataset: DemoDataset, peer_id: PeerId
) -> None:
    def read(tx: Transaction) -> tuple[int, list[_HistoryLine]]:
        messages = tx.get_messages(peer_id, _CLOUD, limit=_HISTORY_ROWS, newest_first=True)
        lines = [
            _HistoryLine(message.timestamp, message.incoming, _preview(tx, message, you=False))
            for message in reversed(messages)
        ]
        return tx.message_count(peer_id, _CLOUD), lines

    total, lines = postbox.run(read)
    peer = dataset.peer(peer_id)
    name = peer.name if peer is not None else repr(peer_id)
    kind = _kind(peer_id)
    if peer_id.namespace == PeerNamespace.GROUP:
        kind += f", {len(dataset.members(peer_id))} members"
    emit(f'Last {len(lines)} of {n(total, "message")} in "{name}" ({kind}; → sent, ← received)')
    for line in lines:
        arrow = "←" if line.incoming else "→"
        emit(f"  {long_time(line.timestamp)}  {arrow}  {fit(line.text, 72).rstrip()}")


def _print_search(emit: Callable[[str], None], postbox: Postbox) -> None:
    def search(tx: Transaction) -> tuple[int, list[tuple[int, str, str]], float]:
        started = time.perf_counter()
        hits = tx.search_messages(SEARCH_WORD, limit=-1)
        elapsed = time.perf_counter() - started
        first = []
        for index in hits[:_SEARCH_HITS]:
            message = tx.get_message(index.id)
            peer = tx.get_peer(index.id.peer_id)
            text = "" if message is None else message.text
            first.append((index.timestamp, "?" if peer is None else peer.name, text))
        return len(hits), first, elapsed

    count, first, elapsed = postbox.run(search)
    emit(
        f'Full-text search for "{SEARCH_WORD}": {n(count, "message")} ({elapsed * 1e3:.1f} ms)'
        + (f"; the first {len(first)}, most recently indexed first:" if first else "")
    )
    for timestamp, name, text in first:
        emit(f"  {long_time(timestamp)}  {fit(name, 20)}  {snippet(text, SEARCH_WORD, 50)}")


def _print_tags(emit: Callable[[str], None], postbox: Postbox, peer_id: PeerId) -> None:
    labels = (
        (MessageTags.PHOTO, "photo"),
        (MessageTags.VIDEO, "video"),
        (MessageTags.FILE, "file"),
        (MessageTags.VOICE, "voice message"),
        (MessageTags.LINK, "link"),
    )

    def read(tx: Transaction) -> tuple[str, list[tuple[str, int, int]]]:
        peer = tx.get_peer(peer_id)
        result = []
        for tag, label in labels:
            summary = tx.get_tag_summary(peer_id, int(tag), _CLOUD)
            indexed = len(tx.get_tagged_message_indices(peer_id, int(tag), _CLOUD))
            result.append((label, 0 if summary is None else summary.count, indexed))
        return ("?" if peer is None else peer.name), result

    name, counts = postbox.run(read)
    parts = [n(count, label) for label, count, _ in counts]
    emit(f'Shared media in "{name}" (tag summaries): {", ".join(parts)}')
    if all(count == indexed for _, count, indexed in counts):
        emit("  the tag index holds the same numbers of messages")
    else:
        listed = ", ".join(n(indexed, label) for label, _, indexed in counts)
        emit(f"  but the tag index lists {listed}")


def _print_live_change(
    emit: Callable[[str], None], postbox: Postbox, dataset: DemoDataset, counter: _ChangeCounter
) -> None:
    def add(tx: Transaction) -> _LiveChange | None:
        entries = [
            e
            for e in tx.get_chat_list(_ROOT)
            if e.type is ChatListEntryType.MESSAGE and e.index.pinning_index is None
        ]
        if not entries:
            return None
        ranked = [e.peer_id for e in tx.get_chat_list(_ROOT)]
        target = entries[-1].peer_id
        shared_top, newest = 0, dataset.now
        for peer in dataset.peers:
            top = tx.get_top_message_index(peer.id)
            if top is None:
                continue
            newest = max(newest, top.timestamp + 1)
            if peer.id.namespace != PeerNamespace.CHANNEL:
                shared_top = max(shared_top, top.id.id)
        if target.namespace == PeerNamespace.CHANNEL:
            top = tx.get_top_message_index(target)
            next_id = 1 if top is None else top.id.id + 1
        else:
            next_id = shared_top + 1
        target_peer = tx.get_peer(target)
        read_state = tx.get_read_state(target)
        tx.add_messages([live_message(dataset, target, next_id, newest)])
        return _LiveChange(
            target,
            "?" if target_peer is None else target_peer.name,
            ranked.index(target) + 1,
            0 if read_state is None else read_state.count,
        )

    emit("Live change")
    counter.last = None
    change = postbox.run(add)
    record = counter.last
    if change is None or record is None:
        emit("  (no chat to change)")
        return
    emit(
        f'  a new incoming message arrives in "{change.name}", '
        f"#{change.rank_before:,} in the chat list"
    )
    names = postbox.run(lambda tx: _names(tx, record))
    emit(f"  change record {record.transaction_state_version}:")
    for peer_id, operations in record.message_operations.items():
        emit(f"    message operations  {names[peer_id]}: {_operation_summary(operations)}")
    for group, chat_operations in record.chat_list_operations.items():
        kinds = ", ".join(operation.kind.value for operation in chat_operations)
        emit(f"    chat list ({_group_name(group)})    {kinds}")
    for peer_id, state in record.updated_read_states.items():
        unread = 0 if state is None else state.count
        emit(f"    read states         {names[peer_id]}: unread {change.unread_before} → {unread}")

    def position(tx: Transaction) -> tuple[int, int]:
        ranked = [e.peer_id for e in tx.get_chat_list(_ROOT) if e.type is ChatListEntryType.MESSAGE]
        return ranked.index(change.peer_id) + 1, len(tx.get_pinned_peer_ids(_ROOT))

    rank, pinned = postbox.run(position)
    top = "the top" if pinned == 0 else f"the top below the {n(pinned, 'pinned chat')}"
    where = top if rank == pinned + 1 else "not at the top"
    emit(f'  "{change.name}" is now #{rank:,} in the chat list: {where}')


def _names(tx: Transaction, record: ChangeRecord) -> dict[PeerId, str]:
    result = {}
    for peer_id in {*record.message_operations, *record.updated_read_states}:
        peer = tx.get_peer(peer_id)
        result[peer_id] = repr(peer_id) if peer is None else peer.name
    return result


_OPERATION_NAMES = {InsertMessage: "insert", RemoveMessage: "remove", UpdateMessage: "update"}


def _operation_summary(operations: Sequence[MessageHistoryOperation]) -> str:
    kinds = Counter(_OPERATION_NAMES[type(operation)] for operation in operations)
    return ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))


def _group_name(group: int) -> str:
    try:
        return PeerGroupId(group).name.lower()
    except ValueError:
        return f"group {group}"


# -- one-line descriptions ------------------------------------------------------


def _preview(tx: Transaction, message: Message, *, you: bool = True) -> str:
    """A message as one line: media label, text, and its author in groups."""
    body = " ".join(part for part in (describe_media(message.media), message.text) if part)
    body = " ".join(body.split())
    if message.peer_id.namespace != PeerNamespace.GROUP:
        return body
    if not message.incoming:
        return f"You: {body}" if you else body
    if message.author_id is None:
        return body
    author = tx.get_peer(PeerId(message.author_id))
    return f"{author.name if author is not None else '?'}: {body}"


def _kind(peer_id: PeerId) -> str:
    if peer_id.namespace == PeerNamespace.GROUP:
        return "group"
    if peer_id.namespace == PeerNamespace.CHANNEL:
        return "channel"
    return "private chat"


def _file_size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
