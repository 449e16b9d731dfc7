"""The ``--token`` option of the commands that log in, with the environment as fallback.

A token on the command line is visible to every user of the machine in the process
list; ``POSTBOX_TOKEN`` keeps it out of there (as ``postbox-server`` does with
``POSTBOX_SERVER_TOKEN``). A token the protocol cannot carry (too long, control
characters, bytes that are no text) is refused before anything connects: no server
would take it, and retrying would only hide the mistake.
"""

from __future__ import annotations

import argparse
import os
import unicodedata

from sync.protocol import MAX_TOKEN_LENGTH

__all__ = ["TOKEN_ENVIRONMENT", "add_token_argument", "token_problem"]

TOKEN_ENVIRONMENT = "POSTBOX_TOKEN"


def add_token_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENVIRONMENT) or None,
        help=f"the account's token (default: ${TOKEN_ENVIRONMENT}, which keeps it out of the"
        " process list)",
    )


def token_problem(args: argparse.Namespace) -> str | None:
    """The line to print if the command logs in but got no token, or one the protocol
    cannot carry; else ``None``. The token itself is never repeated."""
    if "token" not in vars(args):
        return None
    token: str | None = args.token
    if not token:
        return f"give the account's token with --token or ${TOKEN_ENVIRONMENT}"
    if len(token) > MAX_TOKEN_LENGTH:
        return f"the token must be at most {MAX_TOKEN_LENGTH} characters, not {len(token)}"
    if any(unicodedata.category(character) in ("Cc", "Cs") for character in token):
        return "the token holds control characters or bytes that are not text (check the copy)"
    return None
