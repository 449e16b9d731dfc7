"""``postbox-server``: run the mock server on its own, with a dataset, traffic and faults."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from dataset import MAX_DAYS, MAX_MESSAGES, MAX_PEERS, DatasetError
from sync.errors import ServerDatabaseError
from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import MockServer

__all__ = ["main", "parse_config"]

_EPILOG = """\
examples:
  postbox-server --token secret                      generated account, port chosen
  postbox-server --port 7000 --rate 5 --db srv.db    5 events/s, data kept in srv.db
  postbox-server --dataset DIR --drop 0.1 --reorder 4
  postbox-server --db srv.db --drop-response 0.05 --cut-response 0.01
Listening beyond 127.0.0.1 needs an explicit --host and prints a warning.
"""


def _ranged(
    kind: Callable[[str], float], low: float, high: float, what: str
) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is outside {low:g}..{high:g}")
        return value

    return parse


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
    net.add_argument("--token", default="demo-token", help="the token clients authorize with")
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
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log every connection and request error"
    )
    return parser


def parse_config(argv: list[str] | None = None) -> tuple[ServerConfig, bool]:
    """The config the arguments describe, and whether to log verbosely; exits on bad input."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.dataset is not None and not (args.dataset / "manifest.json").is_file():
        parser.error(f"--dataset {args.dataset}: not a dataset directory (no manifest.json)")
    try:
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
        )
        config = ServerConfig(
            token=args.token,
            host=args.host,
            port=int(args.port),
            db=args.db,
            dataset=args.dataset,
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
    return config, args.verbose


async def _serve(config: ServerConfig) -> None:
    server = MockServer(config)
    await server.start()
    print(
        f"postbox-server: listening on {config.host}:{server.port} (token {config.token!r})",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    config, verbose = parse_config(argv)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        asyncio.run(_serve(config))
    except DatasetError as error:
        print(f"postbox-server: error: {error}", file=sys.stderr)
        return 1
    except (ServerDatabaseError, OSError) as error:  # the database, or the port
        print(f"postbox-server: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    print("postbox-server: stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
