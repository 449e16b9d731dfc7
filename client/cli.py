"""The ``postbox-chat`` command line.

Commands: ``demo`` and ``run`` open the desktop client (``client.app``); ``sync`` and
``verify`` run the sync engine headless (``client.sync_commands``); ``send`` queues a
message in a database from another process (``client.send_command``); ``storage-demo``
generates a dataset (``dataset.generator``), writes it into a fresh Postbox
database through ordinary transactions, and prints the chat list, a history window, a
full-text search, a shared-media summary and one live change, with the figures it
measured (``client.storage_demo``). This module parses the command line and runs the
command.

Exit status: 0 on success, 1 when postbox reports an error (``PostboxError``) or the
``--db`` file cannot be used (empty, not a database: left as it was), 2 for a wrong
command line, which includes a ``--db`` path that is a directory or in a missing
folder, and refusing to overwrite an existing database.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from client.app import add_app_commands
from client.arguments import bounded_int
from client.database_file import DatabasePathError, check_database_path
from client.send_command import add_send_command
from client.storage_demo import run_demo
from client.sync_commands import add_sync_commands
from client.token_option import token_problem
from dataset import MAX_DAYS, MAX_MESSAGES, MAX_PEERS
from postbox import PostboxError

__all__ = [
    "DEFAULT_CHATS",
    "DEFAULT_DAYS",
    "DEFAULT_MESSAGES",
    "DEFAULT_SEED",
    "PROG",
    "main",
]

PROG = "postbox-chat"
DEFAULT_SEED = 1
DEFAULT_CHATS = 200
DEFAULT_MESSAGES = 50_000
DEFAULT_DAYS = 30


def main(argv: list[str] | None = None) -> int:
    """Run ``postbox-chat`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message (or the help)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    problem = token_problem(args)
    if problem is not None:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    out = sys.stdout
    _tolerate_narrow_encoding(out)
    command: Callable[[argparse.Namespace, TextIO], int] = args.command
    try:
        return command(args, out)
    except DatabasePathError as exc:  # before anything opened the file
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except PostboxError as exc:
        with contextlib.suppress(OSError):
            out.flush()  # what was printed so far comes before the error
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``postbox-chat storage-demo | head``)
        _discard_stdout()
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A desktop chat client over Telegram-style Postbox storage.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    add_sync_commands(commands)
    add_send_command(commands)
    add_app_commands(commands)
    demo = commands.add_parser(
        "storage-demo",
        help="build a Postbox database from a generated dataset and print what it holds",
        description=(
            "Generate a deterministic dataset, write it into a fresh Postbox database and "
            "print its chat list, a history window, a search, a shared-media summary, one "
            "live change and the figures measured on the way."
        ),
    )
    demo.add_argument(
        "--db",
        metavar="PATH",
        type=Path,
        help="database file to create (default: one in a new temporary directory, removed on exit)",
    )
    demo.add_argument(
        "--reuse",
        action="store_true",
        help="write into the --db file even if it exists (messages already stored are kept)",
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"dataset seed; the same seed gives the same data (default: {DEFAULT_SEED})",
    )
    demo.add_argument(
        "--chats",
        metavar="N",
        type=bounded_int("the number of chats", 1, MAX_PEERS),
        default=DEFAULT_CHATS,
        help=f"number of chats (default: {DEFAULT_CHATS:,})",
    )
    demo.add_argument(
        "--messages",
        metavar="N",
        type=bounded_int("the number of messages", 0, MAX_MESSAGES),
        default=DEFAULT_MESSAGES,
        help=f"number of messages over all chats (default: {DEFAULT_MESSAGES:,})",
    )
    demo.add_argument(
        "--days",
        metavar="D",
        type=bounded_int("the number of days", 1, MAX_DAYS),
        default=DEFAULT_DAYS,
        help=f"days of history (default: {DEFAULT_DAYS})",
    )
    demo.set_defaults(command=_demo_command)
    return parser


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):  # not a real file (captured output, say)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _tolerate_narrow_encoding(stream: TextIO) -> None:
    """Messages carry emoji: on a terminal that cannot show them, print replacements."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    if isinstance(stream, io.TextIOWrapper) and encoding not in ("utf8", "utf16", "utf32"):
        stream.reconfigure(errors="replace")


def _demo_command(args: argparse.Namespace, out: TextIO) -> int:
    db: Path | None = args.db
    if db is None:
        if args.reuse:
            print(f"{PROG}: error: --reuse needs --db PATH", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="postbox-demo-") as directory:
            path = Path(directory) / "demo.db"
            return _run_demo_command(args, path, out, temporary=True)
    check_database_path(db, create=True)
    if db.exists() and not args.reuse:
        print(
            f"{PROG}: error: {db} already exists: choose another --db path (or pass --reuse "
            "to write the demo into this postbox database)",
            file=sys.stderr,
        )
        return 2
    return _run_demo_command(args, db, out, temporary=False)


def _run_demo_command(args: argparse.Namespace, path: Path, out: TextIO, *, temporary: bool) -> int:
    return run_demo(
        path,
        seed=args.seed,
        chats=args.chats,
        messages=args.messages,
        days=args.days,
        out=out,
        prog=PROG,
        temporary=temporary,
    )


if __name__ == "__main__":
    sys.exit(main())
