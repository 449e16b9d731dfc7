"""``postbox-chat sync`` and ``postbox-chat verify``: the sync engine without a window.

``sync`` opens the views a user would look at (the chat list, and the history of each
``--open`` peer), so the hole filler fetches what they show, runs the engine, reports
progress on stderr and prints a JSON summary. It exits 1 with a one-line cause when it
could not connect, the token was refused, or (``--until-idle``) the engine did not
reach "converged and idle": no gap or difference pending, the open views' holes
filled, nothing waiting to be sent or validated. Only one process syncs a database at a
time: while another one does (a window), ``sync`` waits as a standby and fails after
``--connect-timeout`` if it never took over; ``--timeout`` bounds the whole run,
connecting included. A database belongs to the account that first synced it: another
account's token is refused (exit 1, nothing sent) unless ``--start-over`` empties the
database first. A database ``sync`` created is removed again if it never connected; an
empty or foreign file is refused and left as it was.
``verify`` compares the database with the server (``sync.verify``), prints each
divergence on a line (``category peer N: what``) and the JSON summary, and exits 0 if
they agree, 1 if they diverge and 2 if it cannot compare (database missing, empty or not
a database, server unreachable, token refused).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from client.database_file import DatabasePathError, check_database_path
from client.token_option import add_token_argument
from postbox import (
    ChatListViewKey,
    HistoryAnchor,
    MasterClientLock,
    MessageHistoryViewKey,
    PeerGroupId,
    PeerId,
    Postbox,
    PostboxError,
)
from sync.connection import ConnectionLostError, ServerConnection
from sync.engine import (
    AccountMismatchError,
    AuthorizationError,
    DatabaseDamagedError,
    EngineStatus,
    SyncEngine,
    Timeouts,
)
from sync.protocol import Auth, ErrorCode, RpcError
from sync.verify import Report, verify

__all__ = ["add_sync_commands", "parse_address"]


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair; ``argparse.ArgumentTypeError`` if it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:7000)")
    return host, int(port)


def _peer(text: str) -> PeerId:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a peer id (a number)") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text} is outside the peer id range")
    return PeerId(value)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most 86,400 seconds, not {text}"
        )
    return value


def add_sync_commands(commands: Any) -> None:
    """Register ``sync`` and ``verify`` on an ``argparse`` subparsers object."""
    for name, help_text in (
        ("sync", "sync a database with a server, without a window"),
        ("verify", "compare a database with the server; exit 1 on a divergence, 2 if it cannot"),
    ):
        parser = commands.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("--server", type=parse_address, required=True, metavar="HOST:PORT")
        add_token_argument(parser)
        parser.add_argument("--db", type=Path, required=True, help="the Postbox database file")
        if name == "sync":
            parser.add_argument(
                "--until-idle", action="store_true", help="stop once nothing is left to do"
            )
            parser.add_argument(
                "--open", type=_peer, nargs="*", default=[], metavar="PEER",
                help="open these chats' history, so their holes are filled",
            )  # fmt: skip
            parser.add_argument(
                "--timeout", type=_seconds, default=600.0,
                help="give up after this long, connecting included",
            )  # fmt: skip
            parser.add_argument(
                "--connect-timeout", type=_seconds, default=30.0,
                help="give up if no connection is made in this long (at most --timeout)",
            )  # fmt: skip
            parser.add_argument(
                "--start-over", action="store_true",
                help="empty the database first (its chats, drafts and unsent messages are"
                " lost), e.g. to sync it as another account than the one it belongs to",
            )  # fmt: skip
            parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
            parser.set_defaults(command=_sync_command)
        else:
            parser.set_defaults(command=_verify_command)


def _sync_command(args: argparse.Namespace, out: TextIO) -> int:
    return asyncio.run(_sync(args, out))


@dataclass
class _Outcome:
    """What a sync got to before it ended (set as it goes, read after any exception)."""

    connected: bool = False


async def _sync(args: argparse.Namespace, out: TextIO) -> int:
    """A sync that made the database and never connected leaves nothing behind: the
    file would hold no more than an empty account (a file that was there stays)."""
    db: Path = args.db
    check_database_path(db, create=True)
    if args.start_over and db.exists() and not _start_over(db):
        print(
            f"postbox-chat: error: another process syncs {db}: close it before --start-over",
            file=sys.stderr,
        )
        return 1
    made = [] if db.exists() else [path for path in _files_of(db) if not path.exists()]
    outcome = _Outcome()
    try:
        return await _sync_database(args, out, outcome)
    finally:
        if made and not outcome.connected:
            for path in made:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()


def _start_over(db: Path) -> bool:
    """Empty the database ``db``: remove it and SQLite's companions, once Postbox has
    opened it (another application's file is refused and left as it was) and while no
    other process syncs it. False if one does."""
    Postbox(db, watch_file=False).close()
    lock = MasterClientLock(db)
    if not lock.try_acquire():
        return False
    try:
        for path in _files_of(db)[:-1]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    finally:
        lock.release()
    return True


def _files_of(db: Path) -> list[Path]:
    """The database file and the companions SQLite and the master election make."""
    companions = [Path(f"{db}{suffix}") for suffix in ("-wal", "-shm", "-journal")]
    return [db, *companions, MasterClientLock(db).path]


async def _sync_database(args: argparse.Namespace, out: TextIO, outcome: _Outcome) -> int:
    host, port = args.server
    started = time.monotonic()
    postbox = Postbox(args.db, check_pages=True)
    keys: list[Any] = [ChatListViewKey(PeerGroupId.ROOT, count=100)]
    keys += [
        MessageHistoryViewKey(peer_id, HistoryAnchor.upper_bound(), 50) for peer_id in args.open
    ]
    subscription = postbox.combined_view(keys)
    engine = SyncEngine(
        postbox, host, port, args.token, timeouts=Timeouts(), master_lock=MasterClientLock(args.db)
    )
    task = asyncio.create_task(engine.run())
    progress = None if args.quiet else asyncio.create_task(_progress(engine))
    failure: str | None = None
    idle = False
    connect_timeout, timeout = _limits(args)
    try:
        failure = await _wait_connected(engine, task, connect_timeout, f"{host}:{port}")
        timeout = max(0.0, timeout - (time.monotonic() - started))
        if failure is None and args.until_idle:
            waiter = asyncio.create_task(engine.wait_idle(settle=0.5, timeout=timeout))
            done, _ = await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                task.result()
            idle = waiter.result()
            if not idle:
                failure = f"not converged after {args.timeout:g} s: {_busy_with(engine)}"
        elif failure is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), timeout)
    except AccountMismatchError as error:
        failure = (
            f"{error}: sync it with that account's token, use another --db, or add"
            " --start-over to empty it first"
        )
    except (AuthorizationError, DatabaseDamagedError) as error:
        failure = str(error)
    finally:
        if progress is not None:
            progress.cancel()
            print(file=sys.stderr)  # end the progress line
        status = engine.status()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, AuthorizationError, DatabaseDamagedError):
            await task
        subscription.dispose()
        elapsed = time.monotonic() - started
        summary = _summary(status, _role_held(engine), postbox, elapsed, idle)
        outcome.connected = engine.connections > 0
        postbox.close()
    print(json.dumps(summary, indent=2), file=out)
    if failure is not None:
        print(f"postbox-chat: error: {failure}", file=sys.stderr)
        return 1
    return 0


def _limits(args: argparse.Namespace) -> tuple[float, float]:
    """How long to wait for a connection, and for the whole run: ``--timeout`` bounds
    both (connecting included), ``--connect-timeout`` the first."""
    timeout: float = args.timeout
    return min(args.connect_timeout, timeout), timeout


def _role_held(engine: SyncEngine) -> str:
    """The role the engine had while it ran: "master" if it synced the database at any
    time, "standby" if another process did all along. Taken after the engine stopped,
    the role itself would always be "standby" (stopping gives the master's role up)."""
    election = engine.election
    return "master" if election is None or election.was_master else "standby"


async def _wait_connected(
    engine: SyncEngine, task: asyncio.Task[None], timeout: float, address: str
) -> str | None:
    """``None`` once the engine is connected; else why it could not connect in time."""
    waiter = asyncio.create_task(engine.wait_for(lambda: engine.connections > 0, timeout))
    done, _ = await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        waiter.cancel()
        task.result()  # raises what ended it (a refused token)
    try:
        waiter.result()
    except TimeoutError:
        status = engine.status()
        if status.role == "standby":
            master = "" if status.master_client_id is None else f" {status.master_client_id:x}"
            return (
                f"another process (client{master}) syncs this database and did not stop "
                f"in {timeout:g} s: close it, or let it sync"
            )
        cause = status.problem or "no answer"
        return f"could not connect to {address} in {timeout:g} s ({cause})"
    return None


def _busy_with(engine: SyncEngine) -> str:
    """What the engine is still doing, in a line."""
    status = engine.status()
    parts = [f"connection {status.connection}"]
    if status.queue:
        parts.append("queued " + ", ".join(status.queue))
    if status.fills_in_flight:
        parts.append(f"{status.fills_in_flight} fills in flight")
    if status.outgoing:
        parts.append(f"{status.outgoing} outgoing")
    if status.validating:
        parts.append(f"{status.validating} chats waiting for the server's counts")
    if status.problem:
        parts.append(status.problem)
    return "; ".join(parts)


def _summary(
    status: EngineStatus, role: str, postbox: Postbox, elapsed: float, idle: bool
) -> dict[str, Any]:
    try:
        cursor = postbox.run(lambda tx: tx.get_state())
    except PostboxError:  # a damaged cursor: the engine's error says so
        cursor = None
    return {
        "connection": status.connection,
        "role": role,
        "converged_and_idle": idle,
        "problem": status.problem,
        "elapsed_seconds": round(elapsed, 3),
        "cursor": None if cursor is None else {
            "pts": cursor.pts, "qts": cursor.qts, "seq": cursor.seq, "date": cursor.date,
        },
        "counters": status.counters,
        "pending_outgoing": status.outgoing,
    }  # fmt: skip


async def _progress(engine: SyncEngine) -> None:
    while True:
        await asyncio.sleep(0.5)
        status = engine.status()
        counters = status.counters
        print(
            f"\r{status.connection:<12} {status.operation:<22} "
            f"updates {counters['updates_applied']:>7}  fills {counters['fills']:>5}  "
            f"dialogs {counters['dialogs_filled']:>5}  sent {counters['sent']:>4}",
            end="",
            file=sys.stderr,
            flush=True,
        )


def _verify_command(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 converged, 1 diverged, 2 could not compare (one line on stderr)."""
    try:
        report = asyncio.run(_verify(args))
    except _CannotCompareError as error:
        print(f"postbox-chat: error: {error}", file=sys.stderr)
        return 2
    for divergence in report.divergences:
        print(divergence, file=out)
    print(json.dumps(report.summary(), indent=2), file=out)
    return 0 if report.ok else 1


class _CannotCompareError(Exception):
    """The database or the server cannot be read, so nothing can be compared."""


async def _verify(args: argparse.Namespace) -> Report:
    host, port = args.server
    try:
        check_database_path(args.db, create=False)
        postbox = Postbox(args.db, check_pages=True)
    except (DatabasePathError, PostboxError) as error:
        raise _CannotCompareError(_naming(args.db, error)) from error
    try:
        try:
            connection = await ServerConnection.open(host, port)
        except OSError as error:
            raise _CannotCompareError(f"cannot reach {host}:{port}: {error}") from error
        try:
            await connection.call(Auth(args.token))
            return await verify(postbox, connection.call)
        except RpcError as error:
            if error.code == ErrorCode.AUTH_FAILED:
                raise _CannotCompareError("the server refused the token") from error
            raise _CannotCompareError(f"the server refused a request: {error}") from error
        except ConnectionLostError as error:
            raise _CannotCompareError(f"lost the server: {error}") from error
        except PostboxError as error:
            raise _CannotCompareError(_naming(args.db, error)) from error
        finally:
            await connection.close()
    finally:
        postbox.close()


def _naming(path: Path, error: Exception) -> str:
    """The error's line, naming the database once: most errors name it already."""
    message = str(error)
    return message if str(path) in message else f"{path}: {message}"
