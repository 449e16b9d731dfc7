"""``postbox-chat app``: the desktop client against an embedded mock server.

It starts a mock server with a generated account and live traffic, a fresh local
database (or ``--db``), the sync worker, and the window, all on a qasync event loop.
Without a display it says so instead of letting Qt abort.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from client.account import Account

__all__ = ["add_app_command", "display_problem"]


def display_problem() -> str | None:
    """Why Qt could not open a window here, or ``None`` if it should be able to."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return None
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return (
            "no display: set DISPLAY, or run under a virtual one "
            "(xvfb-run postbox-chat app), or use QT_QPA_PLATFORM=offscreen"
        )
    return None


def add_app_command(commands: Any) -> None:
    parser = commands.add_parser(
        "app",
        help="open the desktop client against an embedded mock server with live traffic",
        description="Open the desktop client against an embedded mock server.",
    )
    parser.add_argument("--rate", type=float, default=3.0, help="server events per second")
    parser.add_argument("--seed", type=int, default=1, help="dataset and traffic seed")
    parser.add_argument("--db", type=Path, help="local database (default: a fresh temporary one)")
    parser.set_defaults(command=_app_command)


def _app_command(args: argparse.Namespace, out: TextIO) -> int:
    problem = display_problem()
    if problem is not None:
        print(f"postbox-chat: {problem}", file=sys.stderr)
        return 2
    if not 0 <= args.rate <= 1000:
        print("postbox-chat: --rate must be within 0..1000", file=sys.stderr)
        return 2
    import qasync
    from PySide6.QtWidgets import QApplication

    from sync.server import EmbeddedServer, ServerConfig
    from ui.main_window import MainWindow

    existing = QApplication.instance()
    application = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(application)
    asyncio.set_event_loop(loop)
    try:
        config = ServerConfig(token="demo-token", seed=args.seed, rate=args.rate)
    except ValueError as error:
        print(f"postbox-chat: {error}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="postbox-chat-") as scratch:
        db = args.db or Path(scratch) / "client.db"
        with EmbeddedServer(config) as server:
            account = Account(db, "127.0.0.1", server.port, config.token).start()
            window = MainWindow(account)
            window.show()
            print(f"postbox-chat: server on 127.0.0.1:{server.port}, database {db}", file=out)
            try:
                with loop:
                    closed = asyncio.Event()
                    application.lastWindowClosed.connect(closed.set)
                    loop.run_until_complete(closed.wait())
            finally:
                window.close_feeds()
                window.deleteLater()
                account.close()
    application.shutdown()  # tear Qt down before the interpreter does
    return 0
