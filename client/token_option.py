"""The ``--token`` option of the commands that log in, with the environment as fallback.

A token on the command line is visible to every user of the machine in the process
list; ``POSTBOX_TOKEN`` keeps it out of there (as ``postbox-server`` does with
``POSTBOX_SERVER_TOKEN``).
"""

from __future__ import annotations

import argparse
import os

__all__ = ["TOKEN_ENVIRONMENT", "add_token_argument", "missing_token"]

TOKEN_ENVIRONMENT = "POSTBOX_TOKEN"


def add_token_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENVIRONMENT) or None,
        help=f"the account's token (default: ${TOKEN_ENVIRONMENT}, which keeps it out of the"
        " process list)",
    )


def missing_token(args: argparse.Namespace) -> str | None:
    """The line to print if the command logs in but got no token, else ``None``."""
    if "token" in vars(args) and not args.token:
        return f"give the account's token with --token or ${TOKEN_ENVIRONMENT}"
    return None
