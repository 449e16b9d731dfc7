"""``postbox-chat send --db DB --to PEER TEXT``: queue a message from another process.

It opens the database without any network, finds the chat, stores the message as
pending through ``enqueue_send`` (as the compose box does: shown at once, queued in the
outbound queue), prints the message's local id and exits. An app syncing the same file
sees the commit at once (its views and its outbound queue follow other processes'
commits) and sends it; if none runs, the next ``run``, ``demo --db`` or ``sync`` does.

``PEER`` is a peer id (a number), ``@username`` or a chat's exact title, looked up in
the local peers table. Exit status: 0 queued; 2 for a wrong command line: a database that
does not exist (or a directory), a peer unknown or ambiguous, no text, a text longer than
a message may be (``MAX_MESSAGE_LENGTH``: it is not split); 1 when the file
cannot be used (empty, not a postbox database, locked, read-only), all with one line on
stderr and the file as it was.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from client.database_file import check_database_path
from postbox import MessageId, PeerId, Postbox, Transaction
from sync.engine import PayloadError, check_text, enqueue_send
from sync.state import ServerClock

__all__ = ["PeerLookupError", "add_send_command", "resolve_peer"]

PROG = "postbox-chat"


class PeerLookupError(LookupError):
    """No stored peer, or more than one, answers to what was given."""


def resolve_peer(tx: Transaction, text: str) -> PeerId:
    """The stored peer ``text`` names: a peer id, ``@username`` (any case) or an exact
    title; ``PeerLookupError`` says why there is not exactly one."""
    wanted = text.strip()
    if not wanted:
        raise PeerLookupError("no peer given: pass a peer id, @username or a chat's title")
    if wanted.isascii() and wanted.isdigit():
        peer_id = PeerId(int(wanted)) if int(wanted) < 2**63 else None
        if peer_id is None or tx.get_peer(peer_id) is None:
            raise PeerLookupError(f"no peer {wanted} in this database")
        return peer_id
    peers = tx.get_all_peers()
    if wanted.startswith("@"):
        username = wanted[1:].casefold()
        found = [p for p in peers.values() if (p.username or "").casefold() == username]
        what = f"username {wanted}"
    else:
        found = [p for p in peers.values() if p.name == wanted]
        what = f"chat title {wanted!r}"
    if not found:
        raise PeerLookupError(f"no peer with the {what} in this database")
    if len(found) > 1:
        ids = ", ".join(str(int(p.id)) for p in sorted(found, key=lambda p: p.id))
        raise PeerLookupError(f"{len(found)} peers have the {what} ({ids}): give the peer id")
    return found[0].id


def add_send_command(commands: Any) -> None:
    """Register ``send`` on an ``argparse`` subparsers object."""
    parser = commands.add_parser(
        "send",
        help="queue a message in a database; the app syncing it (now or later) sends it",
        description=(
            "Store a message as pending in a Postbox database, without any network, and "
            "print its local id. An app syncing the database sends it at once; otherwise "
            "the next run or sync does."
        ),
    )
    parser.add_argument("--db", type=Path, required=True, help="the Postbox database file")
    parser.add_argument(
        "--to", required=True, metavar="PEER", help="a peer id, @username or exact chat title"
    )
    parser.add_argument("text", nargs="+", metavar="TEXT", help="the message (words joined)")
    parser.set_defaults(command=_send_command)


def _send_command(args: argparse.Namespace, out: TextIO) -> int:
    text = " ".join(args.text)
    db: Path = args.db
    if not text.strip():
        return _usage_error("a message needs some text")
    try:
        check_text(text)
    except PayloadError as error:
        return _usage_error(error.message)
    check_database_path(db, create=False)
    with Postbox(db, watch_file=False, check_pages=True) as postbox:
        try:
            message_id = postbox.run(lambda tx: _send(tx, args.to, text))
        except PeerLookupError as error:
            return _usage_error(str(error))
        except PayloadError as error:
            return _usage_error(error.message)
    print(message_id.id, file=out)
    return 0


def _send(tx: Transaction, peer: str, text: str) -> MessageId:
    # No server here: the device's clock, within the dates a message may carry.
    date = ServerClock().now(wall=time.time(), monotonic=0.0)
    return enqueue_send(tx, resolve_peer(tx, peer), text, timestamp=date)


def _usage_error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2
