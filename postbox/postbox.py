"""Postbox: the database, its thread, and transactions on it.

Everything that touches SQLite runs on the postbox thread, one transaction at a
time. ``transaction(fn)`` queues ``fn`` there and returns a future;
``fn(tx)`` runs inside ``BEGIN IMMEDIATE``, so it reads a consistent database and
no other process writes meanwhile. When ``fn`` returns, the tables flush in
dependency order, SQLite commits, and the change record goes to the commit
listeners (still on the postbox thread). If anything raises, SQLite rolls back,
every cache is dropped, and the future carries the exception.

``Postbox(path, inline=True)`` has no thread: work runs on the caller's thread, in
submission order, through the same commit path (a deterministic simulation drives it
so). ``before_commit`` is called inside every commit just before SQLite commits; what
it raises rolls the transaction back as a real storage error would.

Another process's commits (``postbox-chat send``, a second window) reach the open views
through SQLite's ``data_version``, a cheap look between transactions: every transaction
looks first; the postbox thread looks when the write-ahead log is written (``file_watch``,
where the system reports it: at once), and, while views are open or external change
listeners registered, whenever it was idle for ``external_check_interval`` (the
fallback). What another process changed reloads every open view; views that differ
re-emit.
"""

from __future__ import annotations

import _thread
import collections
import gc
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Final, Generic, TypeVar, cast

from postbox.change_record import ChangeCollector, ChangeRecord
from postbox.errors import PostboxClosedError, PostboxError
from postbox.file_watch import watch_writes
from postbox.schema import migrate
from postbox.seed_configuration import DEFAULT_SEED_CONFIGURATION, SeedConfiguration
from postbox.tables import Tables
from postbox.transaction import Transaction
from postbox.value_box import CHECKPOINT_PAGES, DEFAULT_BUSY_TIMEOUT_MS, ValueBox
from postbox.view_keys import AnyViewKey
from postbox.views.factory import mutable_view_for_key
from postbox.views.subscription import Callback, CombinedView, Subscription
from postbox.views.view_tracker import ReplayListener, ViewTracker

__all__ = ["Postbox"]

T = TypeVar("T")
CommitListener = Callable[[ChangeRecord], None]
ExternalChangeListener = Callable[[int], None]

_log = logging.getLogger(__name__)
_STOP: Final = object()
#: Queued by the file watch: the write-ahead log was written.
_FILE_WRITTEN: Final = object()
#: How often an idle postbox with open views (or external change listeners) checks for
#: another process's commits.
EXTERNAL_CHECK_INTERVAL: Final = 0.25
#: After a write-ahead log write that showed nothing new, look once more this much later:
#: the writer updates SQLite's index (a memory map, which raises no event) after its write.
FOLLOW_UP_CHECK_DELAY: Final = 0.02
#: Quiet time after which a large WAL is folded back into the file.
IDLE_CHECKPOINT_DELAY: Final = 0.05
#: WAL pages past which the WAL is folded back even while transactions keep coming.
BUSY_CHECKPOINT_PAGES: Final = 8 * CHECKPOINT_PAGES


class _Waiter(Generic[T]):
    """What ``run`` waits on: the part of a ``Future`` the postbox thread uses, on one
    bare lock (a ``Future`` takes a condition and several locks per wait)."""

    __slots__ = ("_error", "_lock", "_value")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()
        self._value: T | None = None
        self._error: BaseException | None = None

    def set_running_or_notify_cancel(self) -> bool:
        return True

    def set_result(self, value: T) -> None:
        self._value = value
        self._lock.release()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._lock.release()

    def result(self) -> T:
        self._lock.acquire()
        if self._error is not None:
            try:
                raise self._error
            finally:
                self._error = None
        return cast(T, self._value)


_Completion = Future[T] | _Waiter[T]


class Postbox:
    """One database file (``None`` for memory) and the thread that owns it.

    ``check_pages``: look over every page of an existing file before writing into it
    (SQLite's ``quick_check``), as after an unclean close; a damaged file is refused with
    ``NotADatabaseError`` and left as it was.
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        seed_configuration: SeedConfiguration = DEFAULT_SEED_CONFIGURATION,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        external_check_interval: float = EXTERNAL_CHECK_INTERVAL,
        watch_file: bool = True,
        inline: bool = False,
        check_pages: bool = False,
    ) -> None:
        self.path = None if path is None else str(path)
        self.external_check_interval = external_check_interval
        self.tracker = ViewTracker()
        self._data_version = 0
        self.seed_configuration = seed_configuration
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._commit_listeners: list[CommitListener] = []
        self._external_listeners: list[ExternalChangeListener] = []
        self._closed = False
        self._close_lock = threading.Lock()
        self._box: ValueBox | None = None
        self._tables: Tables | None = None
        self._version = 0
        #: Fault injection: called inside every commit before SQLite commits.
        self.before_commit: Callable[[], None] | None = None
        self._inline = inline
        self._inline_pending: collections.deque[tuple[Callable[[], Any], _Completion[Any]]] = (
            collections.deque()
        )
        self._inline_running = False
        #: Stops the file watch (``None``: no watch, idle checks only).
        self._stop_watch: Callable[[], None] | None = None
        self._file_check_queued = False
        #: When (monotonic) to look for another process's commits once more.
        self._follow_up_at: float | None = None
        self._thread = threading.Thread(target=self._run, name="postbox", daemon=True)
        if inline:
            self._open(busy_timeout_ms, check_pages)
            return
        self._thread.start()
        opened: Future[None] = Future()
        self._queue.put((lambda: self._open(busy_timeout_ms, check_pages), opened))
        try:
            opened.result()
        except BaseException:
            self._stop_thread()
            raise
        if watch_file and self.path is not None:
            self._stop_watch = watch_writes(self.path + "-wal", self._on_file_written)

    # -- public ---------------------------------------------------------------

    def transaction(self, fn: Callable[[Transaction], T]) -> Future[T]:
        """Run ``fn(tx)`` as one transaction on the postbox thread."""
        future: Future[T] = Future()
        self._submit(lambda: self._run_transaction(fn), future)
        return future

    def _submit(self, task: Callable[[], T], future: _Completion[T]) -> None:
        if self._closed:
            raise PostboxClosedError("the postbox is closed")
        if self._inline:
            self._inline_pending.append((task, future))
            self._drain_inline()
            return
        self._queue.put((task, future))

    def _drain_inline(self) -> None:
        """Run queued work on this thread; work queued by a listener runs after the
        task that queued it, as on the postbox thread."""
        if self._inline_running:
            return
        self._inline_running = True
        try:
            while self._inline_pending:
                task, future = self._inline_pending.popleft()
                self._run_task(task, future)
            if self._box is not None and self._box.wal_pages > CHECKPOINT_PAGES:
                self._checkpoint()
        finally:
            self._inline_running = False

    def run(self, fn: Callable[[Transaction], T]) -> T:
        """``transaction(fn)`` and wait for its result; not for the postbox thread itself."""
        if self.is_postbox_thread:
            raise PostboxError(
                "run() would wait on itself; use transaction() on the postbox thread"
            )
        waiter: _Waiter[T] = _Waiter()
        self._submit(lambda: self._run_transaction(fn), waiter)
        return waiter.result()

    def combined_view(
        self, keys: Iterable[AnyViewKey], callback: Callback | None = None
    ) -> Subscription:
        """Open live views of ``keys``: one consistent snapshot of all of them per commit.

        The views load and register in one step on the postbox thread, so no commit
        falls between; ``subscription.ready`` resolves with the first snapshot.
        ``callback`` runs on the postbox thread for every snapshot; without one,
        iterate the subscription on an asyncio loop.
        """
        subscription = Subscription(frozenset(keys), callback, self.remove_subscription)
        self._submit(lambda: self._open_views(subscription), subscription.ready)
        return subscription

    def remove_subscription(self, subscription: Subscription) -> None:
        """Remove a subscription's views (``Subscription.dispose`` calls this)."""
        if self._closed:
            return
        done: Future[None] = Future()
        self._submit(lambda: self.tracker.remove(subscription, self._version), done)

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        """Call ``listener(record)`` on the postbox thread after every non-empty commit.

        Returns a function that removes the listener.
        """
        self._commit_listeners.append(listener)
        return lambda: self._commit_listeners.remove(listener)

    def add_replay_listener(self, listener: ReplayListener) -> Callable[[], None]:
        """Call ``listener(report)`` on the postbox thread after each commit has been
        replayed against the open views: a ``ReplayReport`` names the views the commit
        consulted, with the topics of the change that woke each, and those that
        re-emitted, with their update type (what an inspector shows).

        Returns a function that removes the listener.
        """
        listeners = self.tracker.replay_listeners
        listeners.append(listener)
        return lambda: listeners.remove(listener)

    def add_external_change_listener(self, listener: ExternalChangeListener) -> Callable[[], None]:
        """Call ``listener(version)`` when another process is found to have committed."""
        self._external_listeners.append(listener)
        return lambda: self._external_listeners.remove(listener)

    @property
    def transaction_state_version(self) -> int:
        """The version of the last commit this postbox has seen."""
        return self._version

    @property
    def is_postbox_thread(self) -> bool:
        if self._inline:
            return self._inline_running
        return threading.current_thread() is self._thread

    def close(self) -> None:
        """Finish queued transactions, then close the database. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if self._inline:
            if self._inline_running:
                raise PostboxError("close() cannot be called from a transaction")
            if self._box is not None:
                self._box.close()
            return
        self._stop_thread()

    def __enter__(self) -> Postbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- postbox thread -------------------------------------------------------

    def _stop_thread(self) -> None:
        self._closed = True
        if self._stop_watch is not None:
            self._stop_watch()
            self._stop_watch = None
        if threading.current_thread() is self._thread:
            raise PostboxError("close() cannot be called from a transaction")
        self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._idle_timeout())
            except queue.Empty:
                self._on_idle()
                continue
            if item is _STOP:
                break
            if item is _FILE_WRITTEN:
                self._on_file_written_check()
                continue
            task, future = item
            self._run_task(task, future)
            if self._box is not None and self._box.wal_pages > BUSY_CHECKPOINT_PAGES:
                self._checkpoint()  # busy for long: fold the WAL back anyway
        self._drain_after_stop()
        if self._box is not None:
            self._box.close()

    @staticmethod
    def _run_task(task: Callable[[], Any], future: _Completion[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = task()
        except BaseException as exc:  # the future carries it to the caller
            future.set_exception(exc)
        else:
            future.set_result(result)

    def _idle_timeout(self) -> float | None:
        """How long to wait for work before idle chores (None: no chore pending)."""
        timeout = None
        if self._box is not None and self._box.wal_pages > CHECKPOINT_PAGES:
            timeout = IDLE_CHECKPOINT_DELAY
        if self._watches_others:
            timeout = min(timeout or self.external_check_interval, self.external_check_interval)
        if self._follow_up_at is not None:
            due = max(0.0, self._follow_up_at - time.monotonic())
            timeout = due if timeout is None else min(timeout, due)
        return timeout

    def _on_idle(self) -> None:
        self._checkpoint()
        follow_up = self._follow_up_at is not None and self._follow_up_at <= time.monotonic()
        if follow_up:
            self._follow_up_at = None
        if follow_up or self._watches_others:
            self._check_external()

    @property
    def _watches_others(self) -> bool:
        """Whether anyone needs to know of other processes' commits (open views, or
        external change listeners)."""
        return self.tracker.has_views or bool(self._external_listeners)

    def _on_file_written(self) -> None:
        """On the file watch's thread: have the postbox thread look (once per burst)."""
        if self._closed or self._file_check_queued:
            return
        if not self._watches_others:
            return  # nobody to tell
        self._file_check_queued = True
        self._queue.put(_FILE_WRITTEN)

    def _on_file_written_check(self) -> None:
        self._file_check_queued = False
        if not self._check_external():
            self._follow_up_at = time.monotonic() + FOLLOW_UP_CHECK_DELAY

    def _checkpoint(self) -> None:
        """Fold the WAL back into the file; done between bursts of work, not in commits."""
        if self._box is None:
            return
        try:
            self._box.checkpoint_if_over(CHECKPOINT_PAGES)
        except PostboxError:
            _log.exception("checkpoint failed; it is tried again when idle")

    def _drain_after_stop(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP and item is not _FILE_WRITTEN:
                item[1].set_exception(PostboxClosedError("the postbox was closed first"))

    def _open(self, busy_timeout_ms: int, check_pages: bool) -> None:
        box = ValueBox(self.path, busy_timeout_ms=busy_timeout_ms, check_pages=check_pages)
        try:
            with box.write_transaction():
                migrate(box)
                tables = Tables(box, self.seed_configuration)
                self._initialize(tables)
                for table in tables.in_commit_order:
                    table.before_commit()
                tables.reset()
        except BaseException:
            box.close()
            raise
        self._box, self._tables = box, tables
        self._version = tables.metadata.transaction_state_version()

    def _initialize(self, tables: Tables) -> None:
        """A new database starts with the seed configuration's chat-list holes."""
        if tables.metadata.is_chat_list_initialized():
            return
        tables.metadata.set_chat_list_initialized()
        for group_id, hole in self.seed_configuration.chat_list_holes.items():
            tables.chat_list.add_hole(group_id, hole)

    def _run_transaction(self, fn: Callable[[Transaction], T]) -> T:
        # A transaction and its view replay allocate a few objects per row and nothing
        # cyclic; the cycle collector would only rescan the growing caches, many times
        # for a bulk write, and delay the views' snapshots.
        collector_was_enabled = gc.isenabled()
        gc.disable()
        try:
            result, record = self._commit(fn)
            if record.transaction_state_version != self._version:
                self._version = record.transaction_state_version
                self._replay_views(record)
                self._notify_commit(record)
        finally:
            if collector_was_enabled:
                gc.enable()
        return result

    def _commit(self, fn: Callable[[Transaction], T]) -> tuple[T, ChangeRecord]:
        box, tables = self._box, self._tables
        assert box is not None and tables is not None
        box.begin()
        collector = ChangeCollector()
        tables.attach(collector)
        try:
            if box.others_committed():
                self._notice_external(tables)
            else:
                tables.metadata.assume_stored_transaction_state_version(self._version)
            tx = Transaction(tables, self.seed_configuration, collector)
            result = fn(tx)
            record = tx.commit()
            if self.before_commit is not None:
                self.before_commit()
            box.commit()
            tables.committed()
        except BaseException:
            box.rollback()
            raise
        finally:
            tables.reset()
        return result, record

    def _reader(self) -> Transaction:
        assert self._tables is not None
        return Transaction(self._tables, self.seed_configuration, ChangeCollector(), read_only=True)

    def _notice_external(self, tables: Tables) -> bool:
        """Inside a transaction: if another process committed, refresh every view."""
        stored_version = tables.metadata.stored_transaction_state_version()
        if stored_version == self._version:
            return False
        self._version = stored_version
        tables.forget_committed()
        if self.tracker.has_views:
            self.tracker.refresh_all(self._reader(), stored_version)
        self._notify_external(stored_version)
        return True

    def _check_external(self) -> bool:
        """Between transactions: a cheap look for another process's commits; True if
        one was found."""
        box, tables = self._box, self._tables
        assert box is not None and tables is not None
        try:
            data_version = box.data_version()
            if data_version == self._data_version:
                return False
            self._data_version = data_version
            box.begin_read()
            try:
                return self._notice_external(tables)
            finally:
                box.rollback()
                tables.keep_reads()
                tables.reset()
        except PostboxError:
            _log.exception("checking for other processes' commits failed")
            return False

    def _replay_views(self, record: ChangeRecord) -> None:
        """Replay a commit against the open views, in a read transaction of its own."""
        if not self.tracker.has_views:
            return
        box, tables = self._box, self._tables
        assert box is not None and tables is not None
        box.begin_read(lazy=True)
        try:
            self.tracker.replay(record, self._reader())
            # Another process may have committed between our COMMIT and this read (if the
            # views read nothing, they saw none of it, and the next transaction looks).
            if box.others_committed():
                self._notice_external(tables)
                self._data_version = box.data_version()
        finally:
            box.rollback()
            tables.keep_reads()
            tables.reset()

    def _open_views(self, subscription: Subscription) -> CombinedView:
        box, tables = self._box, self._tables
        assert box is not None and tables is not None
        box.begin_read()
        try:
            self._notice_external(tables)
            reader = self._reader()
            for key in subscription.keys:
                subscription.views[key] = mutable_view_for_key(key, reader)
            self.tracker.add(subscription, self._version)
            self._data_version = box.data_version()
        finally:
            box.rollback()
            tables.keep_reads()
            tables.reset()
        assert subscription.latest is not None
        return subscription.latest

    def _notify_commit(self, record: ChangeRecord) -> None:
        for listener in list(self._commit_listeners):
            try:
                listener(record)
            except Exception:
                _log.exception("commit listener %r failed", listener)

    def _notify_external(self, version: int) -> None:
        for listener in list(self._external_listeners):
            try:
                listener(version)
            except Exception:
                _log.exception("external change listener %r failed", listener)
