"""Argument types shared by the ``postbox-chat`` commands: each says in words what is
wrong with a value (argparse puts ``argument --flag:`` before it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["bounded_int"]


def bounded_int(subject: str, lowest: int, highest: int) -> Callable[[str], int]:
    """An argparse type for a whole number within ``lowest..highest`` (``_`` separators
    allowed, as in ``50_000``); ``subject`` names it in the message ("the number of
    chats")."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lowest <= value <= highest:
            raise argparse.ArgumentTypeError(
                f"{subject} must be within {lowest:,}..{highest:,}, not {value:,}"
            )
        return value

    return parse
