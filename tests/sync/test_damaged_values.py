"""A database whose stored values are damaged stops the engine for good.

``quick_check`` sees damaged pages, not a value SQLite stores intact but that cannot be
decoded. Such a value fails every retry the same way: the engine stops with one line
naming the file and what to do, instead of retrying until the caller gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import apsw
import pytest

from client.status_line import status_line
from postbox import (
    CorruptValueError,
    DatabaseError,
    DatabaseLockedError,
    InvalidArgumentError,
    NotADatabaseError,
    Postbox,
    PostboxClosedError,
    PostboxError,
    ReadOnlyDatabaseError,
    StorageFullError,
)
from postbox.errors import is_final, translate_sqlite_error
from sync.engine import DatabaseDamagedError, SyncEngine
from sync.engine.hole_filler import HoleFiller
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST, TOKEN, running_engine, wait_quiescent
from tests.sync.test_hole_filler import TIMEOUTS, FakeClock, entry


@pytest.mark.parametrize(
    ("error", "final"),
    [
        (CorruptValueError("stored message cannot be decoded"), True),
        (NotADatabaseError("c.db is corrupt"), True),
        (translate_sqlite_error(apsw.CorruptError("malformed"), "c.db"), True),
        (translate_sqlite_error(apsw.NotADBError("not a database"), "c.db"), True),
        (apsw.CorruptError("malformed"), True),
        (StorageFullError("no space left"), False),
        (translate_sqlite_error(apsw.FullError("full"), "c.db"), False),
        (DatabaseLockedError("locked"), False),
        (translate_sqlite_error(apsw.BusyError("busy"), "c.db"), False),
        (ReadOnlyDatabaseError("read-only"), False),
        (DatabaseError("input/output error"), False),
        (PostboxError("unexpected SQLite error"), False),
        (InvalidArgumentError("id out of range"), False),
        (PostboxClosedError("closed"), False),
        (ConnectionError("lost"), False),
        (ValueError("a bug"), False),
    ],
)
def test_only_damaged_content_is_final(error: BaseException, final: bool) -> None:
    assert is_final(error) is final


def damage_state_cursor(db: Path) -> bytes:
    """Overwrite the stored state cursor with bytes that do not decode; returns them."""
    garbage = b"\xc1\xff\x00damaged"
    connection = apsw.Connection(str(db))
    try:
        connection.execute("UPDATE t_metadata SET value = ? WHERE key = ?", (garbage, b"state"))
        assert connection.changes() == 1
    finally:
        connection.close()
    return garbage


def stored_cursor_bytes(db: Path) -> bytes:
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        ((value,),) = connection.execute("SELECT value FROM t_metadata WHERE key = ?", (b"state",))
    finally:
        connection.close()
    return bytes(value)


def test_a_value_that_cannot_be_decoded_stops_the_engine_instead_of_retrying(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.db"
    with EmbeddedServer(ServerConfig(token=TOKEN, peers=10, messages=200, seed=3)) as server:

        async def first_sync() -> None:
            async with running_engine(server, db) as (engine, _postbox):
                await wait_quiescent(engine)

        asyncio.run(first_sync())
        server.call(lambda s: s.service.generate(20))  # a difference waits for the client
        garbage = damage_state_cursor(db)

        async def damaged_sync() -> tuple[BaseException | None, SyncEngine]:
            with Postbox(db) as postbox:
                engine = SyncEngine(postbox, "127.0.0.1", server.port, TOKEN, timeouts=FAST)
                task = asyncio.create_task(engine.run())
                try:
                    # Bounded only so that a retrying engine fails the test.
                    await asyncio.wait({task}, timeout=20)
                    assert task.done(), f"still retrying: {engine.status()}"
                    return task.exception(), engine
                finally:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, DatabaseDamagedError):
                        await task

        error, engine = asyncio.run(damaged_sync())

    assert isinstance(error, DatabaseDamagedError)
    assert isinstance(error.__cause__, CorruptValueError)
    line = str(error)
    assert "\n" not in line
    assert str(db) in line and "restore it from a copy" in line and "--start-over" in line
    assert engine.state_manager.counters.failures == 0  # not one retry
    assert engine.state_manager.counters.differences == 0
    assert stored_cursor_bytes(db) == garbage  # nothing written over it
    status = engine.status()
    assert status.connection == "database damaged"
    assert status.problem == line
    shown = status_line(status)
    assert shown.final and shown.warning and shown.can_log_out
    assert "damaged" in shown.text


def test_a_fill_that_meets_a_damaged_value_is_not_retried_but_raised(tmp_path: Path) -> None:
    async def scenario() -> BaseException | None:
        with Postbox(tmp_path / "c.db") as postbox:
            filler = HoleFiller(postbox, _never_called, timeouts=TIMEOUTS, clock=FakeClock())

            async def damaged(_entry: object) -> None:
                raise CorruptValueError("stored message cannot be decoded")

            filler._fill_history = damaged  # type: ignore[method-assign,assignment]
            task = asyncio.create_task(filler.run())
            await asyncio.sleep(0)
            filler._wanted = frozenset({entry()})
            filler._evaluate()
            await asyncio.wait({task}, timeout=10)
            assert task.done()
            assert not filler._retry_at  # no retry planned
            return task.exception()

    assert isinstance(asyncio.run(scenario()), CorruptValueError)


@pytest.mark.parametrize("part", ["outbound", "read_states", "item_collections"])
def test_a_part_that_meets_a_damaged_value_stops_the_engine(tmp_path: Path, part: str) -> None:
    async def scenario() -> BaseException | None:
        async def never_connects() -> object:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        with Postbox(tmp_path / "c.db") as postbox:
            engine = SyncEngine(postbox, "h", 1, TOKEN, connector=never_connects)  # type: ignore[arg-type]

            async def damaged() -> None:
                raise CorruptValueError("stored message cannot be decoded")

            getattr(engine, part).run = damaged
            task = asyncio.create_task(engine.run())
            await asyncio.wait({task}, timeout=10)
            assert task.done()
            assert engine.status().connection == "database damaged"
            return task.exception()

    error = asyncio.run(scenario())
    assert isinstance(error, DatabaseDamagedError)
    assert str(tmp_path / "c.db") in str(error)


@pytest.mark.parametrize(
    ("part", "reads"), [("outbound", "_read"), ("read_states", "_read"), ("tag_summaries", "_read")]
)
def test_a_part_raises_a_damaged_value_instead_of_retrying_it(
    tmp_path: Path, part: str, reads: str
) -> None:
    async def scenario() -> BaseException | None:
        with Postbox(tmp_path / "c.db") as postbox:
            engine = SyncEngine(postbox, "h", 1, TOKEN, timeouts=FAST)
            target = getattr(engine, part)
            attempts = 0

            async def damaged(_fn: object) -> object:
                nonlocal attempts
                attempts += 1
                raise CorruptValueError("stored message cannot be decoded")

            setattr(target, reads, damaged)
            task = asyncio.create_task(target._drain())
            await asyncio.wait({task}, timeout=10)
            assert task.done() and attempts == 1
            return task.exception()

    assert isinstance(asyncio.run(scenario()), CorruptValueError)


def test_sticker_sets_raise_a_damaged_value_instead_of_retrying_it(tmp_path: Path) -> None:
    async def scenario() -> BaseException | None:
        with Postbox(tmp_path / "c.db") as postbox:
            sets = SyncEngine(postbox, "h", 1, TOKEN, timeouts=FAST).item_collections

            async def damaged() -> bool:
                raise CorruptValueError("stored item collection cannot be decoded")

            sets.sync_once = damaged  # type: ignore[method-assign]
            sets.request("test")
            task = asyncio.create_task(sets.run())
            await asyncio.wait({task}, timeout=10)
            assert task.done()
            return task.exception()

    assert isinstance(asyncio.run(scenario()), CorruptValueError)


async def _never_called(_params: object) -> object:
    raise AssertionError("no request expected")
