"""Where a push waits inside the sync engine: the three phases of each batch, timed.

``EngineStages`` wraps one running engine's ``StateManager`` (on its own instance, as
``_ui_push`` wraps the window's methods): each push is stamped as it reaches the state
manager, and each batch of ``processUpdateGroups`` is timed from its oldest push to
the start of the batch (waiting for the sync thread), through phase one (the read on
the postbox thread and back), phase two (the pure checks) and phase three (the replay
commit and back).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import Figure, percentile
from client.account import Account
from sync.engine.state_manager import StateManager

__all__ = ["EngineStages"]


@dataclass
class _Batch:
    pushes: int
    waited: float
    reads: list[tuple[float, float]] = field(default_factory=list)


class EngineStages:
    """Times the state manager's batches while ``active``."""

    def __init__(self, account: Account) -> None:
        self.active = False
        self._arrived: dict[int, float] = {}
        self.batches: list[_Batch] = []
        manager: StateManager = account.worker.call(lambda engine: engine.state_manager)
        account.worker.call(lambda _engine: self._wrap(manager))

    def _wrap(self, manager: StateManager) -> None:  # on the sync thread
        push, process, read = manager.push, manager._process, manager._read
        current: list[_Batch] = []

        def stamped_push(update: Any) -> None:
            push(update)
            if self.active:
                self._arrived[id(manager._incoming[-1])] = time.monotonic()

        async def timed_process(batch: list[Any]) -> None:
            started = time.monotonic()
            oldest = min((self._arrived.pop(id(g), started) for g in batch), default=started)
            record = _Batch(len(batch), started - oldest)
            current.append(record)
            try:
                await process(batch)
            finally:
                current.pop()
                if self.active:
                    self.batches.append(record)

        async def timed_read(fn: Callable[[Any], Any]) -> Any:
            started = time.monotonic()
            result = await read(fn)
            if current:
                current[-1].reads.append((started, time.monotonic()))
            return result

        manager.push = stamped_push  # type: ignore[assignment,method-assign]
        manager._process = timed_process  # type: ignore[method-assign]
        manager._read = timed_read  # type: ignore[method-assign]

    def figures(self) -> list[Figure]:
        batches = [b for b in self.batches if len(b.reads) == 2]
        if not batches:
            return []
        stages: list[tuple[str, list[float]]] = [
            ("waiting for the batch", [b.waited for b in batches]),
            ("phase one (read)", [b.reads[0][1] - b.reads[0][0] for b in batches]),
            ("phase two (checks)", [b.reads[1][0] - b.reads[0][1] for b in batches]),
            ("phase three (replay commit)", [b.reads[1][1] - b.reads[1][0] for b in batches]),
        ]
        pushes = statistics.mean(b.pushes for b in batches)
        figures = [
            Figure(
                "  engine batches",
                len(batches),
                "batches",
                f"{pushes:.1f} pushes a batch on average; each timed below from its oldest push",
            )
        ]
        for name, seconds in stages:
            values = [s * 1e3 for s in seconds]
            figures.append(
                Figure(
                    f"  engine {name}: median",
                    statistics.median(values),
                    "ms",
                    f"p99 {percentile(values, 99):.1f} ms",
                )
            )
        return figures
