"""``postbox-seed``: write a dataset directory (and a client database) by Spark or locally.

Exit status: 0 done, 1 the output could not be written, 2 a wrong command line or no
Java for Spark.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dataset import DEMO_NOW, AccountSpec
from spark_tools.client_db import (
    ClientSpec,
    client_layout,
    window_messages,
    windows,
    write_client_db,
)
from spark_tools.client_messages import ClientMessage, sorted_client_messages
from spark_tools.dataset_job import SeedResult, local_path, spark_path
from spark_tools.errors import JavaMissingError, OutputError, SeedError
from spark_tools.progress import Progress
from spark_tools.server_db import remove_shards, shard_directory, shard_path, write_server_db
from spark_tools.session import spark_session

__all__ = ["main", "seed"]

PROG = "postbox-seed"
MAX_CHATS = 100_000
MAX_MESSAGES = 100_000_000
MAX_DAYS = 3_650
#: Messages per part when --partitions is not given: small enough for steady progress.
ROWS_PER_PART = 250_000


def _bounded(low: int, high: int) -> Any:
    """A whole number within ``low..high``; argparse names the flag before the message."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:,} is outside {low:,}..{high:,}")
        return value

    return parse


_MASTER = re.compile(r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|yarn|(spark|k8s)://\S+")


def _master(text: str) -> str:
    if not _MASTER.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Spark master: local, local[N], local[*], spark://HOST:PORT, "
            "yarn or k8s://URL"
        )
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Generate a chat dataset for postbox-server --dataset (and optionally a "
        "pre-filled client database) with PySpark, or with --local in this process.",
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="dataset directory to create"
    )
    account = parser.add_argument_group("the account")
    for name, default, what in (
        ("users", 700, "private chats"),
        ("groups", 180, "groups"),
        ("channels", 120, "channels"),
    ):
        account.add_argument(
            f"--{name}", type=_bounded(1 if name == "users" else 0, MAX_CHATS),
            default=default, metavar="N", help=f"{what} (default: {default:,})",
        )  # fmt: skip
    account.add_argument(
        "--messages", type=_bounded(0, MAX_MESSAGES), default=100_000, metavar="N",
        help="messages sent over all chats; the few deleted since are not in the dataset "
        "(default: 100,000)",
    )  # fmt: skip
    account.add_argument(
        "--days", type=_bounded(1, MAX_DAYS), default=30, metavar="N",
        help="days of history before --now (default: 30)",
    )  # fmt: skip
    account.add_argument(
        "--seed", type=_bounded(0, 2**63 - 1), default=1, metavar="S",
        help="the same seed and sizes give the same files (default: 1)",
    )  # fmt: skip
    account.add_argument(
        "--now", type=_bounded(86_400 * 3_651, 2**31 - 1), default=DEMO_NOW,
        metavar="UNIX", help="the dataset's current time (default: 2024-06-01 18:30 UTC)",
    )  # fmt: skip
    account.add_argument(
        "--offline-days", type=_bounded(1, MAX_DAYS), default=1, metavar="D",
        help="the server's update log covers the last D days; the client database synced "
        "up to their start (default: 1)",
    )  # fmt: skip
    parser.add_argument(
        "--server-db", type=Path, metavar="PATH",
        help="also write the server database postbox-server --db PATH serves",
    )  # fmt: skip
    client = parser.add_argument_group("the client database")
    client.add_argument(
        "--client-db", type=Path, metavar="PATH", help="also write this client Postbox file"
    )
    client.add_argument(
        "--client-dialogs", type=_bounded(1, MAX_CHATS * 3),
        metavar="N", help="store only the first N chats of the chat list, with a chat-list "
        "hole below them (default: all chats)",
    )  # fmt: skip
    client.add_argument(
        "--client-active", type=_bounded(0, 10_000), default=20,
        metavar="N", help="busiest chats whose recent history is stored (default: 20)",
    )  # fmt: skip
    client.add_argument(
        "--client-window", type=_bounded(1, 100_000), default=200,
        metavar="N", help="messages stored of each of those chats (default: 200)",
    )  # fmt: skip
    run = parser.add_argument_group("running")
    run.add_argument(
        "--partitions", type=_bounded(1, 100_000), metavar="P",
        help="message parts, generated as that many Spark tasks (default: one per "
        f"{ROWS_PER_PART:,} messages, at least 4); the data does not depend on it",
    )  # fmt: skip
    run.add_argument(
        "--master", type=_master, default="local[*]", metavar="URL",
        help="Spark master (default: local[*])",
    )  # fmt: skip
    run.add_argument("--local", action="store_true", help="generate in this process, no Spark")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    if args.offline_days >= args.days:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: --offline-days must be less than --days", file=sys.stderr)
        return 2
    spec = AccountSpec(
        seed=args.seed,
        users=args.users,
        groups=args.groups,
        channels=args.channels,
        messages=args.messages,
        days=args.days,
        now=args.now,
        log_days=args.offline_days,
        delete_share=0.01,
    )
    client = ClientSpec(args.client_dialogs, args.client_active, args.client_window)
    progress = Progress(quiet=args.quiet)
    try:
        spark = None if args.local else spark_session(args.master)
        started = time.monotonic()
        partitions = args.partitions or max(4, -(-spec.messages // ROWS_PER_PART))
        result = seed(
            spark, spec, args.out, partitions, progress, args.client_db, client,
            server_db=args.server_db,
        )  # fmt: skip
        progress.close()
        elapsed = time.monotonic() - started
        print(
            f"{PROG}: wrote {result.messages:,} messages in {result.parts} parts to {args.out}"
            f" in {elapsed:.1f} s{_deleted_note(spec, result)}",
            file=sys.stderr,
        )
    except JavaMissingError as error:
        progress.close()
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except SeedError as error:
        progress.close()
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        progress.close()
        return 130
    return 0


def _deleted_note(spec: AccountSpec, result: SeedResult) -> str:
    """Why fewer messages were written than ``--messages`` asked: it counts the messages
    sent, and the ones deleted since (as people do) are gone from the dataset."""
    deleted = spec.messages - result.messages
    if deleted <= 0:
        return ""
    return f" ({spec.messages:,} sent, {deleted:,} of them deleted since)"


def seed(
    spark: Any,
    spec: AccountSpec,
    out: Path,
    partitions: int,
    progress: Progress,
    client_db: Path | None = None,
    client: ClientSpec = ClientSpec(),  # noqa: B008 - frozen, so sharing it is safe
    *,
    server_db: Path | None = None,
) -> SeedResult:
    """Write the dataset (by Spark if ``spark`` is a session, else locally), and the
    server database and the client file if asked; both paths and any partition count
    give the same files for the same arguments."""
    for database in (client_db, server_db):
        if database is not None:
            _check_database(database)
    shards = None if server_db is None else shard_directory(server_db)
    try:
        if shards is not None:
            shards.mkdir(parents=True)
        if spark is None:
            result = local_path(spec, out, partitions, progress, shards)
        else:
            result = spark_path(spark, spec, out, partitions, progress, shards)
        if server_db is not None and shards is not None:
            numbered = [shard_path(shards, number) for number in range(result.parts)]
            write_server_db(server_db, result.head, numbered, result.messages, progress)
    finally:
        if shards is not None:
            remove_shards(shards)
    if client_db is not None:
        plan = result.plan
        progress.stage("client database: layout")
        tables = result.tables
        layout = client_layout(plan, tables, client)
        todo = windows(layout)

        def sorted_messages() -> Iterable[ClientMessage]:
            if spark is None:
                return sorted(m for window in todo for m in window_messages(plan, window))
            # A few thousand rows by default: one sorted partition per 100,000 of them.
            expected = sum(upper - lower for _, lower, upper, _ in todo)
            slices = max(1, min(partitions, expected // 100_000))
            rdd = spark.sparkContext.parallelize(todo, slices)
            keyed = rdd.flatMap(lambda window: window_messages(plan, window))
            return sorted_client_messages(spark, keyed, slices)

        write_client_db(client_db, plan, layout, sorted_messages, progress, tables)
    return result


def _check_database(path: Path) -> None:
    """Refuse a database file that exists or cannot be created, before any work."""
    try:
        _check_new_file(path)
    except OSError as error:  # a name too long, say
        raise OutputError(f"{path}: {error.strerror}") from None


def _check_new_file(path: Path) -> None:
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, not a database file")
    if path.exists():
        raise OutputError(f"{path}: exists; refusing to overwrite a database")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: cannot be created ({parent} is not a writable directory)")


if __name__ == "__main__":
    sys.exit(main())
