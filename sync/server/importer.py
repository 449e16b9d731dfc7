"""Loading a dataset into an empty server store, its dates moved so its "now" is today
(unless the dataset keeps its dates), with its update log if it has one."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from dataset import DemoDataset
from postbox import MessageFlags, StoreMessage
from sync.protocol import (
    Media,
    MediaKind,
    PeerKind,
    peer_kind,
)
from sync.server.schema import media_to_db, pack
from sync.server.update_log_import import import_update_log

if TYPE_CHECKING:
    from sync.server.store import ServerStore

__all__ = ["import_dataset", "server_message_rows"]

_INT32_MAX = 2**31 - 1
_INCOMING = int(MessageFlags.INCOMING)

#: Messages inserted per executemany when importing a dataset.
_IMPORT_BATCH = 20_000

_MEDIA_KIND_NAMES = {0: "photo", 1: "video", 2: "file", 3: "voice", 4: "link"}
_PRESENCE_NAMES = {0: "offline", 1: "online", 2: "recently", 3: "long_ago"}
_ABOUT_USER = (
    "Coffee first.", "Usually replies within a day.", "Photographer and hiker.",
    "Working on something new.", "Ask me about books.", "", "",
)  # fmt: skip
_ABOUT_GROUP = "A group for {name}: plans, photos and everything in between."
_ABOUT_CHANNEL = "{name}: news and links, a few posts a day."


def import_dataset(
    store: ServerStore,
    dataset: DemoDataset,
    messages: Iterable[StoreMessage] | None = None,
    *,
    rows: Iterable[Sequence[Any]] | None = None,
) -> None:
    """Fill an empty store from ``dataset``, its dates moved so its "now" is today.

    ``messages`` replaces ``dataset.messages`` when given, so a large dataset can be
    streamed from its files instead of held in memory; ``rows`` does the same with
    checked dataset rows (``iter_message_rows``), without building messages on the way.
    """
    if not store.is_empty:
        raise ValueError("the server database already holds an account")
    now = store.now()
    shift = 0 if dataset.keep_dates else now - dataset.now
    rng = random.Random(f"about:{dataset.seed}")
    members = dict(dataset.group_members)
    presences = dict(dataset.presences)
    with store.transaction():
        store.insert_peers(
            _peer_row(peer, members.get(peer.id), presences.get(peer.id), rng, shift)
            for peer in (dataset.self_peer, *dataset.peers)
        )
        if rows is not None:
            row_source = iter(rows)
            while row_batch := list(itertools.islice(row_source, _IMPORT_BATCH)):
                _insert_rows(store, row_batch, shift)
        else:
            source = iter(dataset.messages if messages is None else messages)
            while batch := list(itertools.islice(source, _IMPORT_BATCH)):
                _insert_messages(store, batch, shift)
        _import_dialogs(store, dataset, shift)
        store.set_meta("next_id", store.max_shared_message_id() + 1)
        store.set_meta("self_id", int(dataset.self_peer.id))
        for key, value in (("pts", 1), ("qts", 0), ("seq", 1), ("log_start", 1)):
            store.set_meta(key, value)
        import_update_log(store, dataset, shift)
        store.fill_contacts()
        store.set_meta("date", now)


def _insert_messages(store: ServerStore, batch: Sequence[StoreMessage], shift: int) -> None:
    rows = []
    media_rows: list[tuple[int, str, int | None]] = []
    for m in batch:
        peer_id = int(m.peer_id)
        media = [_wire_media(item) for item in m.media] if m.media else []
        rows.append(
            (
                peer_id,
                m.id,
                m.timestamp + shift,
                0 if m.flags & _INCOMING else 1,
                None if m.author_id is None else int(m.author_id),
                m.text,
                media_to_db(media),
                m.reply_to_id,
                None if m.edit_timestamp is None else m.edit_timestamp + shift,
            )
        )
        media_rows.extend((peer_id, str(item.kind), m.id) for item in media)
    store.insert_messages(rows, media_rows)


def _insert_rows(store: ServerStore, batch: Sequence[Sequence[Any]], shift: int) -> None:
    """``_insert_messages`` straight from dataset rows: the same database rows."""
    store.insert_messages(*server_message_rows(batch, shift))


def server_message_rows(
    batch: Iterable[Sequence[Any]], shift: int = 0
) -> tuple[list[tuple[Any, ...]], list[tuple[int, str, int]]]:
    """The ``messages`` rows (``DATASET_COLUMNS``) and ``media_index`` rows of dataset
    message rows, their dates moved by ``shift``: what an import writes for them."""
    names = _MEDIA_KIND_NAMES
    rows = []
    media_rows: list[tuple[int, str, int]] = []
    for peer_id, _namespace, id_, timestamp, flags, _tags, author, text, media, *rest in batch:
        reply_to, edit_timestamp = rest[0], rest[1]
        blob = None
        if media:
            blob = pack(
                [
                    {"kind": names[kind], "id": item_id, "size": size, "url": url, "title": title}
                    for kind, item_id, size, url, title in media
                ]
            )
            media_rows.extend((peer_id, names[item[0]], id_) for item in media)
        rows.append(
            (
                peer_id,
                id_,
                timestamp + shift,
                0 if flags & _INCOMING else 1,
                author,
                text,
                blob,
                reply_to,
                None if edit_timestamp is None else edit_timestamp + shift,
            )
        )
    return rows, media_rows


def _peer_row(
    peer: Any,
    members: Sequence[int] | None,
    presence: Any,
    rng: random.Random,
    shift: int,
) -> tuple[Any, ...]:
    """The peer as ``ServerStore.insert_peers`` takes it."""
    kind = peer_kind(int(peer.id))
    if kind is PeerKind.USER:
        about = rng.choice(_ABOUT_USER)
        participants = None
    elif kind is PeerKind.GROUP:
        about = _ABOUT_GROUP.format(name=peer.name)
        participants = len(members or ()) + 1
    else:
        about = _ABOUT_CHANNEL.format(name=peer.name)
        participants = int(rng.lognormvariate(7, 1.5)) + 10
    status, status_time = None, 0
    if presence is not None:
        status = _PRESENCE_NAMES[int(presence.status)]
        status_time = presence.timestamp + shift if presence.timestamp else 0
    return (
        int(peer.id),
        peer.name,
        peer.username,
        peer.access_hash,
        peer.flags,
        about,
        pack([int(m) for m in members]) if members is not None else None,
        participants,
        status,
        max(0, status_time),
    )


def _import_dialogs(store: ServerStore, dataset: DemoDataset, shift: int) -> None:
    read_states = dict(dataset.read_states)
    pinned = {peer_id: order for order, peer_id in enumerate(dataset.pinned)}
    archived = set(dataset.archived)
    muted = {peer_id: s.muted_until for peer_id, s in dataset.notification_settings}
    rows = []
    for peer in dataset.peers:
        peer_id = int(peer.id)
        top_id, top_date = store.top_message(peer_id)
        read = read_states.get(peer.id)
        until = muted.get(peer.id, 0)
        if until and until < _INT32_MAX:  # a mute for ever stays one; dates are 64-bit
            until += shift
        is_channel = peer_kind(peer_id) is PeerKind.CHANNEL
        rows.append(
            (
                peer_id,
                top_id,
                top_date,
                read.max_incoming_read_id if read else 0,
                read.max_outgoing_read_id if read else 0,
                pinned.get(peer.id),
                1 if peer.id in archived else 0,
                until,
                1 if is_channel else None,
                top_id + 1 if is_channel else None,
                1 if is_channel else None,
                0,
            )
        )
    store.insert_dialogs(rows)


def _wire_media(item: Any) -> Media:
    return Media(
        MediaKind(_MEDIA_KIND_NAMES[int(item.kind)]), item.id, item.size, item.url, item.title
    )
