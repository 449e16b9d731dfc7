"""An asyncio event loop on virtual time, for deterministic simulations.

``VirtualLoop`` is a selector event loop whose selector never waits: when the loop
would block until its next timer, the virtual clock jumps there instead. ``time()``
is that clock, so every ``sleep``, timeout and ``call_later`` runs in virtual seconds
and a run takes as long as its callbacks compute. Real I/O is refused: registering a
file descriptor, using an executor or calling in from another thread raises
``SimulationError``. A loop with no timer and nothing ready can never make progress:
``StalledError``.

A process can be suspended (``suspend``, then ``resume``), as a laptop sleeps: code
that runs in a context whose ``OWNER`` names it (``owned_context``) stops, its
callbacks and timers held, and its clock (``time()`` as it reads it) stands still
while the rest of the world's goes on; on waking, its timers are due as much later
as it slept. ``global_time()`` is the world's clock, which the wall clocks follow.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import math
import selectors
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from sync.errors import SyncError

__all__ = [
    "OWNER",
    "SimulationError",
    "StalledError",
    "VirtualLoop",
    "owned_context",
    "run_virtual",
]

T = TypeVar("T")

#: The simulated process the running code belongs to (``None``: the world itself).
OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar("owner", default=None)


def owned_context(owner: str | None) -> contextvars.Context:
    """A context in which code (and every task and callback it starts) is ``owner``'s."""
    context = contextvars.Context()
    context.run(OWNER.set, owner)
    return context


class SimulationError(SyncError):
    """Something inside the simulation tried to leave it (a socket, a thread)."""


class StalledError(SimulationError):
    """Nothing is ready and no timer is set: the simulated world has stopped."""


class _VirtualSelector(selectors.BaseSelector):
    """Registers nothing; ``select(timeout)`` advances the owning loop's clock."""

    def __init__(self) -> None:
        self.loop: VirtualLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        raise SimulationError(f"real I/O inside the simulation: {fileobj!r}")

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        raise KeyError(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        assert loop is not None
        if timeout is None:
            raise StalledError(f"nothing to run at virtual time {loop.time():.3f} s")
        if timeout > 0:
            loop.advance(timeout)
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return {}

    def close(self) -> None:
        return None


class VirtualLoop(asyncio.SelectorEventLoop):
    """A single-threaded event loop whose clock only moves when it would otherwise wait."""

    def __init__(self, start: float = 0.0) -> None:
        self._virtual_now = start
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._owner = threading.get_ident()
        self._failed: list[asyncio.Task[Any]] = []
        #: Seconds each process's clock stood still while it was suspended.
        self._lost: dict[str, float] = {}
        #: The suspended processes: when each went to sleep, and what it holds meanwhile.
        self._asleep: dict[str, tuple[float, list[asyncio.Handle]]] = {}
        self.set_task_factory(self._make_task)

    def _make_task(
        self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any
    ) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        # ``_exception``, not ``exception()``: asking would count as handling it.
        if not task.cancelled() and task._exception is not None:
            self._failed.append(task)

    @property
    def failed_tasks(self) -> list[str]:
        """Every task that ended with an exception nobody retrieved (one that died
        silently), as "name: error", in order; one whose caller got the error is fine."""
        return [
            f"{task.get_name()}: {type(error).__name__}: {error}"
            for task in self._failed
            if task._log_traceback and (error := task._exception) is not None
        ]

    def time(self) -> float:
        """The clock of the process the running code belongs to: the world's, less
        the time that process was suspended."""
        owner = OWNER.get()
        if owner is None or not self._lost:
            return self._virtual_now
        return self._virtual_now - self._lost.get(owner, 0.0)

    def global_time(self) -> float:
        """The world's clock, whoever reads it."""
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        self._virtual_now += seconds

    # -- suspended processes ------------------------------------------------------------

    def call_soon(  # type: ignore[override]
        self, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.Handle:
        if self._asleep:
            owner = OWNER.get() if context is None else context.get(OWNER)
            if owner in self._asleep:
                handle = asyncio.Handle(callback, args, self, context)
                self._asleep[owner][1].append(handle)
                return handle
        return super().call_soon(callback, *args, context=context)

    def call_later(  # type: ignore[override]
        self, delay: float, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.TimerHandle:
        if not self._lost:
            return super().call_later(delay, callback, *args, context=context)
        # A positive delay too small to move a clock that stands apart still moves it,
        # or a loop that waits it out would wait at the same instant for ever.
        now = self.time()
        when = now + delay
        if delay > 0 and when <= now:
            when = math.nextafter(now, math.inf)
        return self.call_at(when, callback, *args, context=context)

    def call_at(  # type: ignore[override]
        self, when: float, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.TimerHandle:
        if not self._lost:
            return super().call_at(when, callback, *args, context=context)
        # ``when`` is on the caller's clock; the timer runs in its context's process.
        caller = OWNER.get()
        when = _on_world_clock(when, self._lost.get(caller, 0.0) if caller is not None else 0.0)
        owner = caller if context is None else context.get(OWNER)
        if owner in self._asleep:
            timer = asyncio.TimerHandle(when, callback, args, self, context)
            self._asleep[owner][1].append(timer)
            return timer
        return super().call_at(when, callback, *args, context=context)

    def suspend(self, owner: str) -> None:
        """Stop ``owner``'s process: its ready callbacks and timers are held, and so is
        whatever it is woken for until ``resume``."""
        if owner in self._asleep:
            return
        held: list[asyncio.Handle] = []
        ready: Any = self._ready  # type: ignore[attr-defined]
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        for handle in list(ready):
            if handle._context.get(OWNER) == owner:
                ready.remove(handle)
                held.append(handle)
        kept = []
        for timer in scheduled:
            context: contextvars.Context = timer._context  # type: ignore[attr-defined]
            if not timer.cancelled() and context.get(OWNER) == owner:
                timer._scheduled = False  # type: ignore[attr-defined]
                held.append(timer)
            else:
                kept.append(timer)
        heapq.heapify(kept)
        scheduled[:] = kept
        self._lost.setdefault(owner, 0.0)
        self._asleep[owner] = (self._virtual_now, held)

    def resume(self, owner: str) -> float:
        """Wake ``owner``'s process; returns how long it slept. Its clock takes up
        where it stopped, so each timer it holds is due as much later."""
        if owner not in self._asleep:
            return 0.0
        since, held = self._asleep.pop(owner)
        slept = self._virtual_now - since
        lost = self._lost[owner]
        self._lost[owner] = lost + slept
        ready: Any = self._ready  # type: ignore[attr-defined]
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        for handle in held:
            if handle.cancelled():
                continue
            if isinstance(handle, asyncio.TimerHandle):
                due = handle._when - lost  # type: ignore[attr-defined]
                handle._when = _on_world_clock(due, lost + slept)  # type: ignore[attr-defined]
                heapq.heappush(scheduled, handle)
                handle._scheduled = True  # type: ignore[attr-defined]
            else:
                ready.append(handle)
        return slept

    def asleep(self, owner: str) -> bool:
        return owner in self._asleep

    # No self-pipe: nothing outside the loop's thread may wake it.
    def _make_self_pipe(self) -> None:
        return None

    def _close_self_pipe(self) -> None:
        return None

    def _write_to_self(self) -> None:
        return None

    def call_soon_threadsafe(  # type: ignore[override]
        self, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.Handle:
        if threading.get_ident() != self._owner:
            raise SimulationError("another thread called into the simulation")
        return self.call_soon(callback, *args, context=context)

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., T], *args: Any
    ) -> Any:
        raise SimulationError(f"{func!r} was sent to a thread inside the simulation")


def _on_world_clock(when: float, lost: float) -> float:
    """The world's time at which a clock ``lost`` seconds behind reads ``when``, at the
    earliest: never a hair before it, as float rounding could make it."""
    world = when + lost
    while world - lost < when:
        world = math.nextafter(world, math.inf)
    return world


def run_virtual(main: Coroutine[Any, Any, T], *, start: float = 0.0) -> T:
    """Run ``main`` to completion on a fresh ``VirtualLoop``; closes the loop after."""
    loop = VirtualLoop(start)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_remaining(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_remaining(loop: VirtualLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
