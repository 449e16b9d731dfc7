"""Comparing histories, pending outbound, shared-media counts and the update cursors."""

from __future__ import annotations

from collections.abc import Mapping

from postbox import MessageFlags, PeerId
from sync.engine.log_tags import (
    DELETE_TAG,
    DRAFT_TAG,
    EDIT_TAG,
    READ_TAG,
    SEND_TAG,
    SETTINGS_TAG,
)
from sync.protocol import MediaKind, State
from sync.verify.expected import expected_message, stored_message
from sync.verify.local_side import LocalChat, LocalState
from sync.verify.report import Category, Report
from sync.verify.server_side import ServerDialogs, ServerHistory

__all__ = [
    "compare_cursor",
    "compare_messages",
    "compare_pending",
    "compare_tag_summaries",
    "failed_random_id",
]

_OPERATION_NAMES = {
    SEND_TAG: "send",
    READ_TAG: "read-state sync",
    EDIT_TAG: "edit",
    DELETE_TAG: "delete",
    SETTINGS_TAG: "mute",
    DRAFT_TAG: "draft",
}


def compare_messages(report: Report, chat: LocalChat, history: ServerHistory) -> None:
    """Stored messages outside the holes equal the server's, server messages outside the
    holes are stored; messages inside holes are only counted.

    ``history`` holds the server's messages outside the holes only (and the total count).
    """
    peer = int(chat.peer_id)
    server = history.messages
    report.server_messages += history.count
    report.messages_in_holes += history.count - len(server)
    report.local_messages += len(chat.messages)
    seen: set[int] = set()
    for message in chat.messages:
        id_ = message.id.id
        if id_ in seen:
            report.add(Category.MESSAGES, peer, f"message {id_} is stored twice")
        seen.add(id_)
        if chat.in_hole(id_):
            report.unverified += 1
            continue
        expected = server.get(id_)
        if expected is None:
            report.add(Category.MESSAGES, peer, f"message {id_} is not on the server")
        elif stored_message(message) != expected_message(expected):
            report.add(Category.MESSAGES, peer, f"message {id_} differs from the server's")
    for id_ in server:
        if id_ not in seen:
            report.add(Category.MESSAGES, peer, f"message {id_} is missing outside the holes")


def compare_pending(
    report: Report, local: LocalState, arrived: Mapping[int, tuple[int, int]] | None = None
) -> None:
    """At quiescence nothing outgoing is left: no local message, no unsent id, no log
    entry. A failed message is the client's own (the server refused it) and is only
    counted, unless the server did store it after all: ``arrived`` maps each stored
    send's random id to where it was stored."""
    arrived = arrived or {}
    pending_ids = set()
    for chat in local.chats.values():
        peer = int(chat.peer_id)
        for message in chat.pending:
            pending_ids.add(message.id)
            id_ = message.id.id
            if not message.flags & MessageFlags.FAILED:
                report.add(Category.PENDING, peer, f"local message {id_} is still unsent")
                continue
            failure = local.failures.get(message.id)
            if failure is None:
                report.add(
                    Category.PENDING,
                    peer,
                    f"local message {id_} is failed, but no failure is recorded",
                )
                continue
            report.failed_messages += 1
            stored = arrived.get(failed_random_id(failure.request) or 0)
            if stored is not None:
                report.add(
                    Category.PENDING,
                    peer,
                    f"local message {id_} failed here, but the server stored it as message "
                    f"{stored[1]} in chat {stored[0]}",
                )
    for message_id in local.failures:
        if message_id not in pending_ids:
            report.add(
                Category.PENDING,
                int(message_id.peer_id),
                f"failed-messages table lists message {message_id.id}, which is not pending",
            )
    for message_id in local.unsent:
        if message_id not in pending_ids:
            report.add(
                Category.PENDING,
                int(message_id.peer_id),
                f"unsent queue lists message {message_id.id}, which is not stored",
            )
    for entry in local.operations:
        name = _OPERATION_NAMES.get(entry.tag, f"tag {entry.tag}")
        report.add(
            Category.PENDING,
            int(entry.peer_id),
            f"{name} operation {entry.tag_local_index} is still in the operation log",
        )


def failed_random_id(request: object) -> int | None:
    """The random id a failed send was sent with, if its request is known and holds one
    a server could have stored (an int64)."""
    if isinstance(request, dict):
        random_id = request.get("random_id")
        if type(random_id) is int and -(2**63) <= random_id < 2**63:
            return random_id
    return None


def compare_tag_summaries(
    report: Report, chat: LocalChat, counts: Mapping[tuple[int, MediaKind], int]
) -> None:
    peer = int(chat.peer_id)
    for kind, summary in chat.tag_summaries:
        expected = counts.get((peer, kind))
        if expected is None:
            continue  # the server does not list the chat: reported under the chat list
        report.tag_summaries_compared += 1
        if summary.count != expected:
            report.add(
                Category.TAG_SUMMARIES, peer, f"{kind} count {summary.count} != server {expected}"
            )


def compare_cursor(
    report: Report,
    local: LocalState,
    state: State,
    server: ServerDialogs,
    unloaded: frozenset[int],
) -> None:
    """pts, qts and seq, and the pts of every channel the client has loaded."""
    cursor = local.cursor
    if cursor is None:
        report.add(Category.CURSOR, None, "no stored cursor")
    else:
        mine = (cursor.pts, cursor.qts, cursor.seq)
        theirs = (state.pts, state.qts, state.seq)
        if mine != theirs:
            report.add(
                Category.CURSOR,
                None,
                "pts/qts/seq {}/{}/{} != server {}/{}/{}".format(*mine, *theirs),
            )
    for dialog in server.dialogs:
        if dialog.pts is None:
            continue
        chat = local.chats.get(PeerId(dialog.peer))
        stored = None if chat is None or chat.channel is None else chat.channel.pts
        if stored is None and dialog.peer in unloaded:
            continue
        if stored != dialog.pts:
            report.add(Category.CURSOR, dialog.peer, f"channel pts {stored} != server {dialog.pts}")
