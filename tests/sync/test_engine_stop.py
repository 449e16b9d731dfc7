"""An engine being stopped stops, even when what it waited for finishes at that moment.

On Python 3.11, ``asyncio.wait_for`` returns the result of an awaited thing that
finished just before the cancellation was delivered, and drops the cancellation: an
engine cancelled as its connection opened went on syncing, holding the master lock.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from postbox import Postbox
from sync.engine import SyncEngine


def test_a_cancellation_that_meets_the_connection_opening_stops_the_engine(
    db_path: Path,
) -> None:
    async def scenario() -> bool:
        gate = asyncio.Event()

        async def connector() -> object:
            await gate.wait()
            return object()

        with Postbox(db_path) as postbox:
            engine = SyncEngine(postbox, "h", 1, "t", connector=connector)  # type: ignore[arg-type]

            async def open_then_sync() -> None:
                await engine._open()
                await asyncio.Event().wait()  # the rest of the engine's life

            task = asyncio.create_task(open_then_sync())
            await asyncio.sleep(0)  # waiting for the connection
            gate.set()
            await asyncio.sleep(0)  # the connection is open...
            task.cancel()  # ...as the engine is told to stop
            for _ in range(5):  # a few turns of the loop, no clock
                await asyncio.sleep(0)
            stopped = task.cancelled()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return stopped

    assert asyncio.run(scenario())
