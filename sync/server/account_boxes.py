"""One account's box, seen from the others: the copies of a message, and a new box's start.

Every copy of one message, in whichever box, carries the same *link* (the ``links``
table of each box), so an edit, a deletion or a read made in one box finds the copies in
the others. ``derive_box`` fills a new account's box from the primary account's: the
private chat the two share and the groups the new account is a member of, with the same
message ids, each copy linked to its original.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sync.protocol import PeerKind, peer_kind
from sync.server.schema import MESSAGE_COLUMNS
from sync.server.store import ServerStore

__all__ = [
    "SELF_FLAG",
    "copy_peers",
    "derive_box",
    "ensure_dialog",
    "has_dialog",
    "link_of",
    "linked_copy",
    "newest_id_within",
    "newest_link_upto",
    "set_link",
]

#: ``Peer.flags`` bit of the account's own user.
SELF_FLAG = 8
_PEER_COLUMNS = (
    "id, name, username, access_hash, flags, about, members, participants, changed_date,"
    " status, status_time, status_date"
)


def link_of(box: ServerStore, peer_id: int, message_id: int) -> int | None:
    row = box.database.one(
        "SELECT link FROM links WHERE peer = ? AND id = ?", (peer_id, message_id)
    )
    return None if row is None else int(row[0])


def set_link(box: ServerStore, peer_id: int, message_id: int, link: int) -> None:
    box.database.execute(
        "INSERT OR REPLACE INTO links VALUES (?, ?, ?)", (peer_id, message_id, link)
    )


def linked_copy(box: ServerStore, link: int) -> tuple[int, int] | None:
    """(peer, id) of this box's copy of the message ``link`` names, if it has one."""
    row = box.database.one("SELECT peer, id FROM links WHERE link = ?", (link,))
    return None if row is None else (int(row[0]), int(row[1]))


def newest_link_upto(box: ServerStore, peer_id: int, max_id: int) -> int | None:
    """The link of the newest linked message of a chat at or before ``max_id``."""
    row = box.database.one(
        "SELECT link FROM links WHERE peer = ? AND id <= ? ORDER BY id DESC LIMIT 1",
        (peer_id, max_id),
    )
    return None if row is None else int(row[0])


def newest_id_within(box: ServerStore, peer_id: int, link: int) -> int | None:
    """The newest id of a chat whose copy is linked at or before ``link``: copies are made
    in the same order in every box, so this is where a read of ``link`` ends here."""
    row = box.database.one(
        "SELECT max(id) FROM links WHERE peer = ? AND link <= ?", (peer_id, link)
    )
    return None if row is None or row[0] is None else int(row[0])


def has_dialog(box: ServerStore, peer_id: int) -> bool:
    return box.database.one("SELECT 1 FROM dialogs WHERE peer = ?", (peer_id,)) is not None


def ensure_dialog(box: ServerStore, peer_id: int) -> None:
    """Give the box a chat with ``peer_id`` (empty, unread nothing) if it has none."""
    box.database.execute(
        "INSERT OR IGNORE INTO dialogs VALUES (?, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL, ?)",
        (peer_id, box.now()),
    )


def copy_peers(source: ServerStore, target: ServerStore, ids: Iterable[int]) -> None:
    """Copy the peers among ``ids`` that ``target`` lacks, as ``source`` has them, with
    the self flag on ``target``'s own user only."""
    me = target.self_id
    wanted = sorted({int(i) for i in ids} - {0})
    if not wanted:
        return
    marks = ", ".join("?" * len(wanted))
    present = {
        int(row[0])
        for row in target.database.execute(
            f"SELECT id FROM peers WHERE id IN ({marks})",  # noqa: S608
            wanted,
        )
    }
    missing = [peer_id for peer_id in wanted if peer_id not in present]
    if not missing:
        return
    marks = ", ".join("?" * len(missing))
    rows = source.database.execute(
        f"SELECT {_PEER_COLUMNS} FROM peers WHERE id IN ({marks})",  # noqa: S608
        missing,
    )
    fixed = []
    for row in rows:
        values = list(row)
        flags = int(values[4]) & ~SELF_FLAG
        values[4] = flags | SELF_FLAG if values[0] == me else flags
        fixed.append(values)
    target.database.execute_many(
        f"INSERT INTO peers ({_PEER_COLUMNS}) VALUES ({', '.join('?' * 12)})", fixed
    )


def _shared_chats(primary: ServerStore, user_id: int) -> list[tuple[int, int]]:
    """(chat in the primary box, the same chat in the user's box) for every chat the two
    accounts share: their private chat, and the groups with the user among the members."""
    chats = []
    if has_dialog(primary, user_id):
        chats.append((user_id, primary.self_id))
    for (peer_id,) in primary.database.execute("SELECT peer FROM dialogs ORDER BY peer"):
        if peer_kind(peer_id) is PeerKind.GROUP and user_id in primary.members(peer_id):
            chats.append((int(peer_id), int(peer_id)))
    return chats


def derive_box(
    primary: ServerStore, box: ServerStore, user_id: int, new_link: Callable[[], int]
) -> None:
    """Fill the empty ``box`` as ``user_id``'s account: the chats it shares with the
    primary account, every message copied under the same id and linked to its original
    (``new_link`` gives unused links), read marks mirrored, and empty update logs."""
    me = primary.self_id
    chats = _shared_chats(primary, user_id)
    with primary.transaction(), box.transaction():
        box.set_meta("self_id", user_id)
        peer_ids = {user_id, me}
        for source_chat, _ in chats:
            peer_ids.add(source_chat)
            peer_ids.update(primary.members(source_chat))
            for (author,) in primary.database.execute(
                "SELECT DISTINCT author FROM messages WHERE peer = ? AND author IS NOT NULL",
                (source_chat,),
            ):
                peer_ids.add(int(author))
        copy_peers(primary, box, peer_ids)
        for source_chat, chat in chats:
            _copy_chat(primary, box, source_chat, chat, user_id, new_link)
        for key, value in (("pts", 1), ("qts", 0), ("seq", 1), ("log_start", 1)):
            box.set_meta(key, value)
        box.set_meta("next_id", primary.meta("next_id", 1))
        box.fill_contacts()
        box.set_meta("date", primary.now())


def _copy_chat(
    primary: ServerStore,
    box: ServerStore,
    source_chat: int,
    chat: int,
    user_id: int,
    new_link: Callable[[], int],
) -> None:
    rows: list[list[Any]] = []
    links = []
    for row in primary.database.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE peer = ? ORDER BY id",  # noqa: S608
        (source_chat,),
    ):
        values = list(row)
        out, author = bool(values[3]), values[4]
        if author is None:  # a private chat's message names its side by ``out`` alone
            author = primary.self_id if out else source_chat
        values[0], values[3], values[4] = chat, int(author == user_id), author
        rows.append(values)
        link = link_of(primary, source_chat, values[1])
        if link is None:
            link = new_link()
            set_link(primary, source_chat, values[1], link)
        links.append((chat, values[1], link))
    box.database.execute_many(
        f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES ({', '.join('?' * 10)})", rows
    )
    box.database.execute_many("INSERT INTO links VALUES (?, ?, ?)", links)
    for kind, message_id in primary.database.execute(
        "SELECT kind, id FROM media_index WHERE peer = ?", (source_chat,)
    ):
        box.database.execute(
            "INSERT OR IGNORE INTO media_index VALUES (?, ?, ?)", (chat, kind, message_id)
        )
    read_inbox, read_outbox = primary.read_marks(source_chat)
    top_id, top_date = rows[-1][1:3] if rows else (0, 0)
    if peer_kind(chat) is PeerKind.USER:  # each side's read is the other's outbox
        read_inbox, read_outbox = read_outbox, read_inbox
    else:  # a group: what the primary account read, everyone has read
        read_inbox = read_outbox = read_inbox
    box.database.execute(
        "INSERT INTO dialogs VALUES (?, ?, ?, ?, ?, NULL, 0, 0, NULL, NULL, NULL, ?)",
        (chat, top_id, top_date, read_inbox, read_outbox, box.now()),
    )
