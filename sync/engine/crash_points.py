"""Crash points: every place where the engine's file and its memory part ways.

A process can die anywhere, but what it loses depends on where: just after a Postbox
commit (the file moved on, the rest of the operation lived only in memory) or just
after a server's answer came (the server acted, the client has not stored it yet).
``CRASH_POINTS`` names each such place in the engine, after its call site, and the
engine calls ``crash_point(name)`` there. In production nothing is installed and the
call is one context-variable read. A test or the simulation installs a hook for the
tasks of one engine (``with_crash_point_hook``); the hook may raise
``asyncio.CancelledError`` to stop the engine exactly there, as a killed process would:
as a cancellation, no part of the engine takes it for a failure to retry.

Left out: the master election's commits, made only with a master lock (which the
simulation does not use) and about which process syncs, not what it synced.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Final

__all__ = [
    "CRASH_POINTS",
    "crash_point",
    "with_crash_point_hook",
]

#: Every crash point, ``part.function.what_just_happened``.
CRASH_POINTS: Final[tuple[str, ...]] = (
    # engine.py: connecting
    "engine.device_id.stored",
    "engine.authorize.answered",
    "engine.bind_account.stored",
    # state_manager.py: pushes, the account's difference, the channels' differences
    "state_manager.process.replayed",
    "state_manager.poll_difference.state_answered",
    "state_manager.poll_difference.state_stored",
    "state_manager.poll_difference.answered",
    "state_manager.poll_difference.replayed",
    "state_manager.poll_channels.answered",
    "state_manager.poll_channels.replayed",
    # hole_filler.py
    "hole_filler.fill_history.answered",
    "hole_filler.fill_history.stored",
    "hole_filler.fill_chat_list.answered",
    "hole_filler.fill_chat_list.stored",
    # outbound.py: each kind of outgoing change, answered and then stored
    "outbound.send.answered",
    "outbound.forward.answered",
    "outbound.deliver.send_stored",
    "outbound.deliver.read_answered",
    "outbound.deliver.read_stored",
    "outbound.deliver.mute_answered",
    "outbound.deliver.mute_stored",
    "outbound.deliver.draft_answered",
    "outbound.deliver.draft_stored",
    "outbound.deliver.edit_answered",
    "outbound.deliver.edit_stored",
    "outbound.deliver.delete_answered",
    "outbound.deliver.delete_stored",
    "outbound.attempt.given_up",
    # validators.py
    "read_states.fetch_and_apply.answered",
    "read_states.fetch_and_apply.stored",
    "tag_summaries.validate.answered",
    "tag_summaries.validate.stored",
    "tag_summaries.validate.settled",
    # item_collections.py
    "sticker_sets.sync_once.list_answered",
    "sticker_sets.fetch_sets.set_answered",
    "sticker_sets.sync_once.gifs_answered",
    "sticker_sets.sync_once.stored",
    # profile.py: a profile screen opened
    "profile.refresh_profile.answered",
    "profile.refresh_profile.stored",
    # references.py: the peers an answer names without describing them
    "references.describe.answered",
)

_KNOWN: Final = frozenset(CRASH_POINTS)

_hook: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "crash_point_hook", default=None
)


def crash_point(name: str) -> None:
    """The engine is at crash point ``name``: the installed hook, if any, is told."""
    hook = _hook.get()
    if hook is not None:
        if name not in _KNOWN:
            raise ValueError(f"{name!r} is not listed in CRASH_POINTS")
        hook(name)


def with_crash_point_hook(hook: Callable[[str], None]) -> contextvars.Context:
    """A copy of the current context with ``hook`` installed: the engine's task created
    in it (``asyncio.create_task(..., context=...)``), and every task that one starts,
    tell ``hook`` of each crash point they reach."""
    context = contextvars.copy_context()
    context.run(_hook.set, hook)
    return context
