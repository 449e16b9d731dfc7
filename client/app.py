"""The desktop client's commands: ``postbox-chat demo`` and ``postbox-chat run``.

``demo`` starts a mock server on loopback with a generated account (or a dataset
directory) and live traffic, a fresh local database (or ``--db``), the sync worker and
the window, all on a qasync event loop. ``run`` opens the window against a server
that is already running. Without a display both say so instead of letting Qt abort.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import dataclasses
import functools
import importlib.util
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from client.account import Account
from client.arguments import bounded_int
from client.database_file import check_database_path
from client.demo_seats import MAX_DEVICES, Seat, demo_seats
from client.slow_motion import DEMO_LATENCY, SlowMotion
from client.token_option import add_token_argument
from dataset import MAX_MESSAGES, MAX_PEERS, dataset_directory_problem
from postbox import PeerId, Postbox
from sync.server.config import MAX_LATENCY, FaultConfig, ServerConfig

if TYPE_CHECKING:
    from client.demo_stage import DemoStage

__all__ = [
    "add_app_commands",
    "desktop_problem",
    "display_problem",
    "parse_faults",
    "parse_latency",
]

PROG = "postbox-chat"
_FAULT_NAMES = {field.name for field in dataclasses.fields(FaultConfig)}


#: The system libraries Qt's X11 platform plugin loads, with the Debian packages that
#: provide them: without one, Qt aborts with a message that does not say which.
XCB_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def desktop_problem() -> str | None:
    """Why the window cannot start in this installation (Qt or qasync missing), if so."""
    missing = [name for name in ("PySide6", "qasync") if not _installed(name)]
    if not missing:
        return None
    return (
        f"the window needs {' and '.join(missing)}, which this installation lacks: "
        "install the desktop extra (pip install 'postbox-chat[desktop]')"
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # blocked, or half imported
        return False


def display_problem(loads: Callable[[str], bool] | None = None) -> str | None:
    """Why Qt could not open a window here, or ``None`` if it should be able to.

    ``loads(name)`` says whether a shared library can be loaded (for tests)."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    if not sys.platform.startswith("linux"):
        return None
    if not platform and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return (
            "no display: set DISPLAY, or run under a virtual one "
            "(xvfb-run ./dev demo), or use QT_QPA_PLATFORM=offscreen"
        )
    if os.environ.get("WAYLAND_DISPLAY") and not platform:
        return None  # Qt picks Wayland there
    missing = [
        package for library, package in XCB_LIBRARIES.items() if not (loads or _loads)(library)
    ]
    if missing:
        return (
            "Qt's X11 plugin needs system libraries that are missing: install them with"
            f" apt-get install {' '.join(missing)}"
        )
    return None


def _loads(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def parse_faults(text: str) -> FaultConfig:
    """``"drop=0.05,reorder=4"`` as a ``FaultConfig``; ``ValueError`` names what is wrong."""
    values: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name == "dup":
            name = "duplicate"
        if not equals or name not in _FAULT_NAMES:
            known = ", ".join(sorted(_FAULT_NAMES))
            raise ValueError(f"{item!r} is not NAME=VALUE with NAME one of {known}")
        whole = ("reorder", "disconnect_every", "flood_limit", "channel_timeout")
        kind = int if name in whole else float
        try:
            values[name] = kind(value)
        except ValueError:
            number = "a whole number" if kind is int else "a number"
            raise ValueError(f"{name}: {value!r} is not {number}") from None
    return FaultConfig(**values)


def _faults_argument(text: str) -> FaultConfig:
    try:
        return parse_faults(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _bounded_devices(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_DEVICES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of windows within 1..4")
    return int(text)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1000:
        raise argparse.ArgumentTypeError("the rate must be within 0..1000 events a second")
    return value


def parse_latency(text: str) -> float:
    """``800ms``, ``0.8s`` or ``0.8`` (seconds), within the server's limit."""
    value = text.strip().lower()
    scale = 1.0
    if value.endswith("ms"):
        value, scale = value[:-2], 0.001
    elif value.endswith("s"):
        value = value[:-1]
    try:
        seconds = float(value) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time such as 800ms") from None
    if not 0.0 <= seconds <= MAX_LATENCY:
        raise argparse.ArgumentTypeError(f"the latency must be within 0..{MAX_LATENCY:g} s")
    return seconds


def _address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def add_app_commands(commands: Any) -> None:
    demo = commands.add_parser(
        "demo",
        help="open the app against an embedded mock server with live traffic",
        description=(
            "Open the desktop client against a mock server started here on loopback, "
            "with a generated account and live traffic, syncing into a fresh database."
        ),
    )
    demo.add_argument("--rate", type=_rate, default=3.0, help="server events per second (3)")
    demo.add_argument(
        "--seed", type=bounded_int("the seed", 0, 2**63 - 1), default=1,
        help="dataset and traffic seed (1)",
    )  # fmt: skip
    demo.add_argument(
        "--chats", type=bounded_int("the number of chats", 1, MAX_PEERS), default=200,
        help="chats to generate (200)",
    )  # fmt: skip
    demo.add_argument(
        "--messages", type=bounded_int("the number of messages", 0, MAX_MESSAGES),
        default=20_000, help="messages to generate (20000)",
    )  # fmt: skip
    demo.add_argument("--dataset", type=Path, help="serve this dataset directory instead")
    demo.add_argument(
        "--faults",
        type=_faults_argument,
        default=FaultConfig(),
        metavar="NAME=VALUE,...",
        help="inject faults into pushes and answers, e.g. drop=0.05,reorder=4,delay=0.5 "
        "(names: drop, dup, reorder, delay, disconnect_every, too_long, channel_too_long, "
        "drop_response, delay_response, cut_response)",
    )
    demo.add_argument(
        "--latency",
        type=parse_latency,
        default=0.0,
        metavar="TIME",
        help="slow motion: the server holds every answer and push this long, e.g. 800ms; "
        "the inspector's Slow motion button switches it (default: off, 800ms when switched)",
    )
    demo.add_argument("--db", type=Path, help="local database (default: a fresh temporary one)")
    demo.add_argument(
        "--devices",
        type=_bounded_devices,
        default=1,
        help="windows side by side, 1-4 (1): the account and a contact of it talking "
        "through the server, then a second device of each",
    )
    demo.add_argument(
        "--same-account",
        action="store_true",
        help="with --devices: every window is a device of the same account",
    )
    _theme_argument(demo)
    demo.set_defaults(command=_demo_command)
    run = commands.add_parser(
        "run",
        help="open the app against a running server",
        description="Open the desktop client against a running postbox-server.",
    )
    run.add_argument("--server", type=_address, required=True, metavar="HOST:PORT")
    add_token_argument(run)
    run.add_argument("--db", type=Path, required=True, help="local database (created if new)")
    _theme_argument(run)
    run.set_defaults(command=_run_command)


def _theme_argument(parser: Any) -> None:
    parser.add_argument(
        "--theme",
        choices=("auto", "light", "dark"),
        help="colours: auto follows the system (default: the last one chosen in the app)",
    )


def _demo_command(args: argparse.Namespace, out: TextIO) -> int:
    if args.db is not None:
        _check_database(args.db)
    if args.dataset is not None:
        problem = dataset_directory_problem(args.dataset)
        if problem is not None:
            print(f"{PROG}: error: argument --dataset: {problem}", file=sys.stderr)
            return 2
    problem = desktop_problem() or display_problem()
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    try:
        config = ServerConfig(
            token="demo-token",
            seed=args.seed,
            rate=args.rate,
            peers=args.chats,
            messages=args.messages,
            dataset=args.dataset,
            faults=args.faults,
            latency=args.latency,
        )
    except ValueError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    from client.demo_stage import DemoStage
    from sync.server import EmbeddedServer

    with _database(args.db) as db, EmbeddedServer(config) as server:
        seats = demo_seats(server, db, args.devices, same_account=args.same_account)
        print(f"{PROG}: server on 127.0.0.1:{server.port}, database {db}", file=out, flush=True)
        port = server.port

        stage = DemoStage(server)
        slow_motion = SlowMotion(
            args.latency or DEMO_LATENCY, stage.set_latency, on=args.latency > 0
        )
        return _show_windows(
            [
                _Window(
                    functools.partial(
                        Account,
                        seat.db,
                        "127.0.0.1",
                        port,
                        seat.token,
                        device_name=seat.device_name,
                    ),
                    seat,
                )
                for seat in seats
            ],
            out,
            args.theme,
            slow_motion,
            stage,
        )


def _run_command(args: argparse.Namespace, out: TextIO) -> int:
    _check_database(args.db)
    problem = desktop_problem() or display_problem()
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    host, port = args.server
    print(f"{PROG}: server {host}:{port}, database {args.db}", file=out, flush=True)
    return _show_windows(
        [_Window(lambda: Account(args.db, host, port, args.token), None)], out, args.theme
    )


def _check_database(db: Path) -> None:
    """Refuse an unusable ``--db`` now, before a server or a window starts; the file is
    left as it was (``DatabasePathError`` or ``PostboxError``, the command line's to say)."""
    check_database_path(db, create=True)
    if db.exists():
        Postbox(db, watch_file=False, check_pages=True).close()


@contextmanager
def _database(path: Path | None) -> Iterator[Path]:
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="postbox-chat-") as scratch:
        yield Path(scratch) / "client.db"


@dataclasses.dataclass(frozen=True)
class _Window:
    open_account: Callable[[], Account]
    seat: Seat | None


def _show_windows(
    windows: list[_Window],
    out: TextIO,
    theme: str | None = None,
    slow_motion: SlowMotion | None = None,
    stage: DemoStage | None = None,
) -> int:
    """Run the windows on a qasync loop until the last is closed (``theme``: as given on
    the command line, else the one chosen last in the app); several stand side by side.
    With the demo's ``stage``, the first window offers the guided tour on the first start
    (and has it in its Help menu)."""
    import qasync
    from PySide6.QtWidgets import QApplication

    from ui.garbage import MainThreadCollector
    from ui.main_window import MainWindow
    from ui.theme import apply_theme, saved_theme
    from ui.tour import first_start, remember_offered

    existing = QApplication.instance()
    application = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    apply_theme(application, theme or saved_theme())
    collector = MainThreadCollector(application).start()
    loop = qasync.QEventLoop(application)
    asyncio.set_event_loop(loop)
    stop_on_signals(application)
    opened: list[tuple[Account, MainWindow]] = []
    screen = application.primaryScreen().availableGeometry()
    width = screen.width() // len(windows)
    code = 0
    try:  # what was opened is closed again, also when a later window cannot open
        for number, wanted in enumerate(windows):
            account = wanted.open_account().start()
            try:
                if stage is None:
                    window = MainWindow(account, slow_motion=slow_motion)
                elif number == 0:
                    window = MainWindow(account, slow_motion=slow_motion, stage=stage)
                else:
                    no_tour = "in the first window"
                    window = MainWindow(account, slow_motion=slow_motion, no_tour_because=no_tour)
            except BaseException:
                account.close()
                raise
            opened.append((account, window))
            if wanted.seat is not None and len(windows) > 1:
                window.setWindowTitle(f"postbox-chat: {wanted.seat.title}")
                window.setGeometry(screen.x() + number * width, screen.y(), width, screen.height())
            window.show()
            if wanted.seat is not None and wanted.seat.open_peer:
                window.open_chat(PeerId(wanted.seat.open_peer), wanted.seat.open_title)
        if stage is not None and first_start():
            remember_offered()
            opened[0][1].start_tour()
        print(f"{PROG}: window open" if len(opened) == 1 else f"{PROG}: {len(opened)} windows open",
              file=out, flush=True)  # fmt: skip
        with loop:
            closed = asyncio.Event()
            application.lastWindowClosed.connect(closed.set)
            waiting = asyncio.ensure_future(closed.wait())
            try:
                loop.run_until_complete(waiting)
            except RuntimeError:
                # Qt's loop ended without the window closing: the display went away.
                waiting.cancel()
                print(f"{PROG}: the display went away; the app stopped", file=sys.stderr)
                code = 1
    finally:
        for account, window in opened:
            window.close_feeds()
            window.deleteLater()
            account.close()
        if not loop.is_closed():  # a window could not open: the loop never ran
            loop.close()
        collector.stop()
    application.shutdown()  # tear Qt down before the interpreter does
    return code


def stop_on_signals(application: Any) -> None:
    """Ctrl+C in the terminal and SIGTERM close the windows, so the app shuts down as
    from the close button: the sync worker stops, the database closes, temporary
    folders go. Python only sees a signal when it runs, so a timer lets it look."""
    from PySide6.QtCore import QTimer

    def close(_signal: int, _frame: object) -> None:
        # Through the event loop: a signal during start-up closes the window once shown.
        QTimer.singleShot(0, application.closeAllWindows)

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, close)
    wake = QTimer(application)
    wake.setInterval(200)
    wake.timeout.connect(lambda: None)
    wake.start()
