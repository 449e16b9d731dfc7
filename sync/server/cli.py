"""``postbox-server``: run the mock server on its own, with a dataset, traffic and faults.

The token is never printed or logged. It comes from ``--token-file`` (the file's first
line) or ``--token``, else from ``POSTBOX_SERVER_TOKEN``; with none of them the server
makes a random one and writes it to a new private file, whose path (not the token) it
prints, and which it removes when it stops.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import errno
import logging
import os
import secrets
import shutil
import signal
import socket
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dataset import MAX_DAYS, MAX_MESSAGES, MAX_PEERS, DatasetError, dataset_directory_problem
from sync.errors import ServerDatabaseError
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import MockServer

__all__ = ["TOKEN_ENVIRONMENT", "CommandLine", "TokenSource", "main", "parse_args", "parse_config"]

#: The environment variable a token may come from.
TOKEN_ENVIRONMENT = "POSTBOX_SERVER_TOKEN"
#: Bytes of randomness in a token the server makes itself.
_TOKEN_BYTES = 32

_EPILOG = """\
examples:
  postbox-server --token-file secret.txt             generated account, port chosen
  postbox-server --port 7000 --rate 5 --db srv.db    5 events/s, data kept in srv.db
  postbox-server --dataset DIR --drop 0.1 --reorder 4
  postbox-server --db srv.db --drop-response 0.05 --cut-response 0.01
The token comes from --token-file or --token, else POSTBOX_SERVER_TOKEN; with none of
them a random one is written to a new private file, whose path is printed.
Listening beyond 127.0.0.1 needs an explicit --host and prints a warning.
"""


class TokenSource(enum.Enum):
    """Where the token came from."""

    FLAG = "--token"
    FILE = "--token-file"
    ENVIRONMENT = TOKEN_ENVIRONMENT
    GENERATED = "generated"


@dataclass(frozen=True, slots=True)
class CommandLine:
    """What the arguments (and the environment) ask for."""

    config: ServerConfig
    verbose: bool
    token_source: TokenSource
    #: Things to tell the user before serving (say, a token file others can read).
    warnings: tuple[str, ...] = ()


def _ranged(
    kind: Callable[[str], float], low: float, high: float, what: str
) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is outside {_shown(low)}..{_shown(high)}")
        return value

    return parse


def _shown(number: float) -> str:
    """A bound in full (``10000000``): ``:g`` would print ``1e+07``."""
    return str(int(number)) if number == int(number) else f"{number:g}"


def _int(low: int, high: int) -> Callable[[str], float]:
    return _ranged(int, low, high, "a whole number")


def _probability(text: str) -> float:
    return _ranged(float, 0.0, 1.0, "a probability")(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="postbox-server",
        description="The postbox-chat mock server: one account over msgpack frames on TCP, "
        "with a seeded dataset, simulated traffic and fault injection.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    net = parser.add_argument_group("network")
    net.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    net.add_argument("--port", type=_int(0, 65535), default=0, help="0 picks a free port (default)")
    tokens = net.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="read the token clients authorize with from the first line of PATH (keep it"
        " private: chmod 600)",
    )
    tokens.add_argument(
        "--token",
        help=f"the token itself (other users can see it in the process list: prefer"
        f" --token-file or {TOKEN_ENVIRONMENT})",
    )
    net.add_argument(
        "--accounts-file",
        type=Path,
        metavar="PATH",
        help="write every account's token to PATH (user id, token, name; readable by you"
        " only): each person of the dataset can log in as an account of their own",
    )
    data = parser.add_argument_group("data")
    data.add_argument(
        "--db", type=Path, help="server SQLite file, kept between runs (default: memory)"
    )
    data.add_argument("--dataset", type=Path, help="a dataset directory (as postbox-seed writes)")
    data.add_argument(
        "--seed", type=_int(0, 2**63 - 1), default=1, help="dataset, traffic and fault seed"
    )
    data.add_argument("--peers", type=_int(1, MAX_PEERS), default=200, help="chats to generate")
    data.add_argument(
        "--messages", type=_int(0, MAX_MESSAGES), default=5_000, help="messages to generate"
    )
    data.add_argument(
        "--days", type=_int(1, MAX_DAYS), default=60, help="days of history to generate"
    )
    data.add_argument(
        "--log-window",
        type=_int(1, 10_000_000),
        default=10_000,
        help="pts points the update logs keep",
    )
    traffic = parser.add_argument_group("traffic and faults (all off by default)")
    traffic.add_argument(
        "--rate", type=_ranged(float, 0, 10_000, "a number"), default=0.0, help="events per second"
    )
    traffic.add_argument(
        "--drop", type=_probability, default=0.0, help="probability of dropping a push"
    )
    traffic.add_argument(
        "--dup", type=_probability, default=0.0, help="probability of sending a push twice"
    )
    traffic.add_argument(
        "--reorder", type=_int(0, 1000), default=0, help="shuffle pushes in windows of N"
    )
    traffic.add_argument(
        "--delay",
        type=_ranged(float, 0, 60, "a number"),
        default=0.0,
        help="delay pushes by up to S seconds",
    )
    traffic.add_argument(
        "--disconnect-every",
        type=_int(0, 2**31 - 1),
        default=0,
        help="cut a connection after N pushes",
    )
    traffic.add_argument(
        "--too-long",
        type=_probability,
        default=0.0,
        help="probability of updatesTooLong instead of a push",
    )
    traffic.add_argument(
        "--channel-too-long",
        type=_probability,
        default=0.0,
        help="probability of channelTooLong for a channel push",
    )
    answers = parser.add_argument_group("faults on answers to requests (all off by default)")
    answers.add_argument(
        "--drop-response",
        type=_probability,
        default=0.0,
        help="probability that an answer is never sent (the request still takes effect)",
    )
    answers.add_argument(
        "--delay-response",
        type=_ranged(float, 0, 60, "a number"),
        default=0.0,
        help="delay answers by up to S seconds",
    )
    answers.add_argument(
        "--cut-response",
        type=_probability,
        default=0.0,
        help="probability of closing the connection halfway through an answer",
    )
    limits = parser.add_argument_group("rate limits and hints, as Telegram's (off by default)")
    limits.add_argument(
        "--flood-limit",
        type=_int(0, 1_000_000),
        default=0,
        help="calls of one kind (sends, differences, history) a connection may make per"
        " --flood-window; one more is answered FLOOD_WAIT with the seconds to wait",
    )
    limits.add_argument(
        "--flood-window",
        type=_ranged(float, 0.001, 3600, "a number"),
        default=1.0,
        help="the window of --flood-limit, in seconds",
    )
    limits.add_argument(
        "--channel-timeout",
        type=_int(0, 3600),
        default=0,
        help="seconds a channel difference tells the client not to poll that channel again",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log every connection and request error"
    )
    return parser


def _read_token_file(path: Path) -> tuple[str, list[str]]:
    """The first line of ``path``, and a warning if others may read the file;
    ``ValueError`` with a readable message if it cannot serve as a token."""
    try:
        with path.open(encoding="utf-8") as file:
            mode = os.fstat(file.fileno()).st_mode
            line = file.readline(1024)
    except OSError as error:
        raise ValueError(f"--token-file {path}: cannot read it ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"--token-file {path}: not a text file") from None
    token = line.strip()
    if not token:
        raise ValueError(f"--token-file {path}: its first line holds no token")
    warnings = []
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.append(
            f"{path} can be read by other users (mode {stat.S_IMODE(mode):04o});"
            f" make it private: chmod 600 {path}"
        )
    return token, warnings


def _token(args: argparse.Namespace) -> tuple[str, TokenSource, list[str]]:
    if args.token_file is not None:
        token, warnings = _read_token_file(args.token_file)
        return token, TokenSource.FILE, warnings
    if args.token is not None:
        return args.token, TokenSource.FLAG, []
    from_environment = os.environ.get(TOKEN_ENVIRONMENT)
    if from_environment is not None:
        if not from_environment.strip():
            raise ValueError(f"{TOKEN_ENVIRONMENT} is set but empty")
        return from_environment.strip(), TokenSource.ENVIRONMENT, []
    return secrets.token_urlsafe(_TOKEN_BYTES), TokenSource.GENERATED, []


def parse_config(argv: list[str] | None = None) -> tuple[ServerConfig, bool]:
    """The config the arguments describe, and whether to log verbosely; exits on bad input."""
    command = parse_args(argv)
    return command.config, command.verbose


def parse_args(argv: list[str] | None = None) -> CommandLine:
    """What the arguments and the environment ask for; exits on bad input."""
    parser = _parser()
    args = parser.parse_args(argv)
    problem = _path_problem(args)
    if problem is not None:
        parser.error(problem)
    try:
        token, token_source, warnings = _token(args)
        faults = FaultConfig(
            drop=args.drop,
            duplicate=args.dup,
            reorder=int(args.reorder),
            delay=args.delay,
            disconnect_every=int(args.disconnect_every),
            too_long=args.too_long,
            channel_too_long=args.channel_too_long,
            drop_response=args.drop_response,
            delay_response=args.delay_response,
            cut_response=args.cut_response,
            flood_limit=int(args.flood_limit),
            flood_window=args.flood_window,
            channel_timeout=int(args.channel_timeout),
        )
        config = ServerConfig(
            token=token,
            host=args.host,
            port=int(args.port),
            db=args.db,
            dataset=args.dataset,
            tokens_file=args.accounts_file,
            seed=int(args.seed),
            peers=int(args.peers),
            messages=int(args.messages),
            days=int(args.days),
            rate=args.rate,
            log_window=int(args.log_window),
            faults=faults,
        )
    except ValueError as error:
        parser.error(str(error))
    return CommandLine(config, args.verbose, token_source, tuple(warnings))


def _path_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with a path argument at first sight, as argparse words it."""
    if args.dataset is not None:
        problem = dataset_directory_problem(args.dataset)
        if problem is not None:
            return f"argument --dataset: {problem}"
    for flag, path in (("--db", args.db), ("--accounts-file", args.accounts_file)):
        problem = None if path is None else _file_path_problem(path)
        if problem is not None:
            return f"argument {flag}: {problem}"
    return None


def _file_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a file this server writes, if that shows already."""
    try:
        if path.is_dir():
            return f"{path} is a directory, not a file"
        if not path.parent.exists():
            return f"the folder {path.parent} does not exist"
        if not path.parent.is_dir():
            return f"{path.parent} is not a folder"
    except OSError as error:  # a name too long, say
        return f"{path}: {error.strerror}"
    return None


def _write_token_file(token: str) -> Path:
    """A new file holding ``token``, readable by its owner only, in a new private
    directory (``_remove_token_file`` removes both)."""
    directory = Path(tempfile.mkdtemp(prefix="postbox-server-"))
    path = directory / "token"
    descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(token + "\n")
    return path


def _remove_token_file(path: Path) -> None:
    shutil.rmtree(path.parent, ignore_errors=True)


async def _serve(command: CommandLine, token_file: Path | None) -> None:
    config = command.config
    server = MockServer(config)
    await server.start()
    if token_file is not None:
        where = f"the token is in {token_file}"
    else:
        where = f"token from {command.token_source.value}"
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    # Only now: whoever reads this line may stop the server at once.
    print(f"postbox-server: listening on {config.host}:{server.port} ({where})", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    """Run ``postbox-server`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit
    status: 0 stopped, 1 could not serve, 2 a wrong command line."""
    try:
        command = parse_args(argv)
    except SystemExit as exit_:  # argparse has printed its message (or the help)
        return exit_.code if isinstance(exit_.code, int) else 2
    logging.basicConfig(
        level=logging.DEBUG if command.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for warning in command.warnings:
        print(f"postbox-server: warning: {warning}", file=sys.stderr, flush=True)
    token_file = None
    if command.token_source is TokenSource.GENERATED:
        try:
            token_file = _write_token_file(command.config.token)
        except OSError as error:
            print(f"postbox-server: error: cannot write a token file: {error}", file=sys.stderr)
            return 1
    try:
        return _run(command, token_file)
    finally:
        if token_file is not None:
            _remove_token_file(token_file)


def _run(command: CommandLine, token_file: Path | None) -> int:
    try:
        asyncio.run(_serve(command, token_file))
    except DatasetError as error:
        print(f"postbox-server: error: {error}", file=sys.stderr)
        return 1
    except ServerDatabaseError as error:
        print(f"postbox-server: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the address, the port or the accounts file
        print(f"postbox-server: error: {_os_problem(error, command.config)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    print("postbox-server: stopped", file=sys.stderr)
    return 0


def _os_problem(error: OSError, config: ServerConfig) -> str:
    """An OS error while starting, in words: a bare ``[Errno -2]`` says nothing."""
    where = f"{config.host}:{config.port}"
    if isinstance(error, socket.gaierror):
        return f"cannot listen on {where}: {config.host} is not an address here ({error.strerror})"
    if error.errno == errno.EADDRINUSE:
        return f"cannot listen on {where}: the port is in use (--port 0 picks a free one)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {where}: {config.host} is not an address of this machine"
    if error.errno == errno.EACCES and 0 < config.port < 1024:
        return f"cannot listen on {where}: permission denied (ports below 1024 need privileges)"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
