"""The state manager: one serial queue between the server's pushes and Postbox.

Operations run one at a time, as in the seeds' AccountStateManager: a requested
``pollDifference`` goes first (its waiters are told when it completes), then the
collected pushes (all that arrived while the previous operation ran, processed
together; with nothing running they go at once), then channel polls, ``custom``
operations, and last the events of what was replayed (``processEvents``). Every operation
follows the three phases: read the stored cursor, build the final state (a list of
mutation operations), replay it in one transaction that also moves the cursor.

Gaps: an update that starts beyond the stored pts (or qts, or seq) is held; the rules
in ``sync.state`` (``Sequencer``, ``GapDeadlines``) say when the missing update has not
come within ``Timeouts.gap``, and the manager then asks for the difference. A reconnect and
``updatesTooLong`` count as gaps. A quiet connection is polled every
``Timeouts.quiet_poll`` seconds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from postbox import (
    MessageFlags,
    MessageId,
    PeerId,
    Postbox,
    PostboxError,
    StateCursor,
    Transaction,
)
from postbox.errors import is_final
from sync.engine.channel_access import channel_gone, inaccessible_channels
from sync.engine.convert import peer_from_wire
from sync.engine.crash_points import crash_point
from sync.engine.mutable_state import (
    AccountMutableState,
    AddMessages,
    DeleteMessages,
    EditMessage,
    MergePeers,
    PollChannel,
    ResetChannel,
)
from sync.engine.recent import RecentChanges
from sync.engine.references import PeerDescriber
from sync.engine.replay import replay_final_state
from sync.engine.timing import Backoff, Timeouts, loop_time
from sync.notifier import ChangeNotifier
from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    ChannelDifference,
    ChannelDifferenceEmpty,
    ChannelDifferenceTooLong,
    Difference,
    DifferenceEmpty,
    DifferenceSlice,
    DifferenceTooLong,
    GetChannelDifference,
    GetDifference,
    GetState,
    InvalidParamsError,
    PeerKind,
    ProtocolError,
    ShortMessage,
    State,
    UpdateNewEncryptedMessage,
    UpdatePeer,
    Updates,
    UpdateUserStatus,
)
from sync.state import (
    ACCOUNT_CHATS,
    ACCOUNT_PTS,
    QTS,
    SEQ,
    ChannelPollTimeouts,
    GapDeadlines,
    GapKey,
    Grouped,
    Sequencer,
    ServerLiedError,
    channel_of,
    check_message,
    check_peers,
    check_update,
    group_push,
    pts_of,
)

__all__ = ["DIFFERENCE_SLICE", "StateManager", "StateWentBackwardsError", "SyncEvents"]

log = logging.getLogger("postbox.sync")

T = TypeVar("T")

#: pts points one getDifference answer may cover: big enough that a slice touching a
#: few hundred chats amortizes their per-chat work, small enough to stay one short
#: transaction.
DIFFERENCE_SLICE = 5_000
#: Channels whose differences are fetched together (one branch each, one transaction).
CHANNELS_AT_ONCE = 16
#: Most updates one getChannelDifference answer carries.
CHANNEL_DIFFERENCE_LIMIT = 100


class StateWentBackwardsError(ProtocolError):
    """The server's answer leads to a state older than the stored one (or a slice that
    does not move it): applying it would undo what is known or ask the same forever."""


def _cursor(state: State) -> StateCursor:
    return StateCursor(state.pts, state.qts, state.seq, state.date)


@dataclass(frozen=True, slots=True)
class SyncEvents:
    """What one replay brought, for notifications: new incoming messages, deletions."""

    added_incoming: tuple[MessageId, ...]
    deleted: tuple[MessageId, ...]


def _channels_in(batch: list[Grouped]) -> set[int]:
    """The channels whose updates ``batch`` carries, in seq containers too."""
    everything = [*batch, *(grouped.seq[2] for grouped in batch if grouped.seq is not None)]
    return {channel for grouped in everything for channel in grouped.channels}


def _resolve(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)


async def _settle(work: Callable[[], Awaitable[T]], done: asyncio.Future[T]) -> None:
    try:
        result = await work()
    except Exception as error:  # handed to the caller of custom()
        if not done.done():
            done.set_exception(error)
    else:
        if not done.done():
            done.set_result(result)


@dataclass(slots=True)
class Counters:
    """What the engine has done, for progress output and the inspector."""

    pushes: int = 0
    updates_applied: int = 0
    differences: int = 0
    slices: int = 0
    too_long: int = 0
    channel_differences: int = 0
    channel_too_long: int = 0
    gaps: int = 0
    replays: int = 0
    replay_retries: int = 0
    failures: int = 0
    #: Answers refused for breaking the protocol's rules (nothing of them stored).
    lies_refused: int = 0
    #: Peers an answer named without describing them, fetched with getPeers.
    peers_fetched: int = 0
    last_activity: float = field(default_factory=loop_time)


class StateManager:
    """Keeps the stored cursor, histories and channel states in step with the server.

    ``call`` sends one request over the current connection (and waits for it to come
    back after a reconnect). ``self_id`` is the account's user, for the short form.
    """

    def __init__(
        self,
        postbox: Postbox,
        call: Callable[[Any], Any],
        *,
        self_id: int,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        difference_limit: int = DIFFERENCE_SLICE,
        recent: RecentChanges | None = None,
        changes: ChangeNotifier | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.postbox = postbox
        self.recent = recent or RecentChanges()
        #: Notified after every operation, for ``changes.wait_for(...)``.
        self.changes = changes or ChangeNotifier()
        self._call = call
        self.self_id = self_id
        self.timeouts = timeouts
        self.difference_limit = difference_limit
        self.counters = Counters()
        self._incoming: list[Grouped] = []
        self._poll_requested = False
        self._channels_to_poll: set[int] = set()
        #: Whether the channels to poll that a previous process stored were read yet.
        self._stored_polls_read = False
        self._pts = Sequencer[AnyUpdate](0)
        self._qts = Sequencer[UpdateNewEncryptedMessage](0)
        self._seq = Sequencer[Grouped](0)
        self._channel_seqs: dict[int, Sequencer[AnyUpdate]] = {}
        self._gaps = GapDeadlines(timeouts.gap)
        self._gap_timer: asyncio.TimerHandle | None = None
        #: Channels the server said not to poll again yet (a difference's ``timeout``).
        self.channel_timeouts = ChannelPollTimeouts()
        self._channel_timer: asyncio.TimerHandle | None = None
        #: Channels the server refused for good (``CHANNEL_PRIVATE``), to forget.
        self._channels_to_forget: set[int] = set()
        self._wake = asyncio.Event()
        self._busy = False
        self.current_operation = "idle"
        #: The last failure, until an operation completes again (for the status line).
        self.problem: str | None = None
        self._failures = Backoff(timeouts.retry_min, timeouts.retry_max, rng)
        self._retries_waiting = 0
        self._custom: list[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = []
        self._poll_waiters: list[asyncio.Future[None]] = []
        self._listeners: list[Callable[[SyncEvents], None]] = []
        self._events: list[SyncEvents] = []
        #: Fetches the peers an answer names without describing them (min peers).
        self.describer = PeerDescriber(postbox, call)

    # -- input -----------------------------------------------------------------------

    def push(self, push: AnyUpdates) -> None:
        """A push from the server; processed with whatever else arrives meanwhile."""
        self.counters.pushes += 1
        self.counters.last_activity = loop_time()
        try:
            _check_push(push)
        except ServerLiedError as error:
            # Refused whole: the difference brings what the push should have said.
            self._lied(error)
            self.request_poll("a push that breaks the protocol")
            return
        self._incoming.append(group_push(push, self.self_id))
        self._wake.set()

    def request_poll(self, reason: str) -> None:
        """Ask for the difference before anything else (a gap, a reconnect, too long)."""
        if not self._poll_requested:
            log.debug("poll requested: %s", reason)
        self._poll_requested = True
        self._wake.set()

    def request_channel_poll(self, channel: int) -> None:
        self._channels_to_poll.add(channel)
        self._wake.set()

    def channel_refused(self, channel: int) -> None:
        """The server refused a request about ``channel`` for good (``CHANNEL_PRIVATE``:
        the account was removed from it): forget the chat and stop asking about it."""
        self._channels_to_forget.add(channel)
        self._wake.set()

    @property
    def idle(self) -> bool:
        """Nothing queued, nothing held waiting for a missing update, nothing running."""
        return not (
            self._busy
            or self._retries_waiting
            or self._incoming
            or self._poll_requested
            or self._channels_to_poll
            or self._channels_to_forget
            or self._custom
            or self._events
            or self._pts.held
            or self._qts.held
            or self._seq.held
            or any(s.held for s in self._channel_seqs.values())
        )

    def holding(self) -> list[str]:
        """What keeps the manager from idle beyond its queue: running, retrying, holding
        updates for a gap (empty when nothing does)."""
        parts = []
        if self._busy:
            parts.append("running")
        if self._retries_waiting:
            parts.append(f"{self._retries_waiting} retries waiting")
        for name, box in (("pts", self._pts), ("qts", self._qts), ("seq", self._seq)):
            if box.held:
                parts.append(f"{name} gap held")
        parts.extend(
            f"channel {channel} gap held"
            for channel, box in sorted(self._channel_seqs.items())
            if box.held
        )
        return parts

    def queue_description(self) -> list[str]:
        """The queue as the inspector shows it, first to run first."""
        queued = []
        if self._poll_requested:
            queued.append("pollDifference")
        if self._incoming:
            queued.append(f"processUpdateGroups ({len(self._incoming)} pushes)")
        now = loop_time()
        for channel in sorted(self._channels_to_poll):
            until = self.channel_timeouts.held_until(channel)
            later = f" (in {until - now:.1f} s)" if until is not None and until > now else ""
            queued.append(f"pollChannel {channel}{later}")
        queued.extend(f"forgetChannel {channel}" for channel in sorted(self._channels_to_forget))
        queued.extend("custom" for _ in self._custom)
        if self._events:
            queued.append("processEvents")
        return queued

    # -- the serial queue --------------------------------------------------------------

    async def run(self) -> None:
        """Run operations one at a time, for ever (cancel to stop)."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while await self._run_one():
                pass

    async def _run_one(self) -> bool:
        """Run the next operation, in the seeds' order; ``False`` if there is none."""
        if self._poll_requested:
            self._poll_requested = False
            waiters, self._poll_waiters = self._poll_waiters, []
            done = await self._operation(
                "pollDifference",
                self._poll_difference(),
                retry=lambda: self.request_poll("retry after a failure"),
            )
            if not done:
                # Channels its replays stored to poll may not have been read back: the
                # next poll reads them with the cursor, as a restart would.
                self._stored_polls_read = False
            if self._poll_requested or not done:  # the next poll answers them
                self._poll_waiters[:0] = waiters
            else:
                _resolve(waiters)
            return True
        if self._incoming:
            batch, self._incoming = self._incoming, []
            pushed_to = _channels_in(batch)

            def catch_up() -> None:
                # What the pushes carried, the differences bring too: the account's,
                # and each channel's (the account's difference carries none of theirs).
                self.request_poll("retry after a failure")
                for channel in pushed_to:
                    self.request_channel_poll(channel)

            await self._operation("processUpdateGroups", self._process(batch), retry=catch_up)
            return True
        due = self._channels_due()
        if due:
            channels = due[:CHANNELS_AT_ONCE]
            self._channels_to_poll.difference_update(channels)
            name = f"pollChannels ({len(channels)})"

            def again() -> None:
                for channel in channels:
                    self.request_channel_poll(channel)

            await self._operation(name, self._poll_channels(channels), retry=again)
            return True
        if self._channels_to_forget:
            gone, self._channels_to_forget = sorted(self._channels_to_forget), set()

            def forget_again() -> None:
                for channel in gone:
                    self.channel_refused(channel)

            await self._operation("forgetChannels", self._forget(gone), retry=forget_again)
            return True
        if self._custom:
            work, done_future = self._custom.pop(0)
            await self._operation("custom", _settle(work, done_future))
            return True
        if self._events:
            events, self._events = self._events, []
            await self._operation("processEvents", self._emit(events))
            return True
        return False

    def _channels_due(self) -> list[int]:
        """The channels to poll now; for those the server's ``timeout`` still holds
        back, a wake-up at the first one's deadline."""
        now = loop_time()
        due = self.channel_timeouts.due(self._channels_to_poll, now)
        if self._channel_timer is not None:
            self._channel_timer.cancel()
            self._channel_timer = None
        deadline = self.channel_timeouts.next_deadline(self._channels_to_poll)
        if deadline is not None:
            loop = asyncio.get_running_loop()
            self._channel_timer = loop.call_at(deadline, self._wake.set)
        return due

    # -- custom operations, poll completion, events -------------------------------------

    async def custom(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` as an operation of the queue (nothing else runs meanwhile)."""
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._custom.append((work, done))
        self._wake.set()
        return await done

    async def poll_completion(self) -> None:
        """Ask for the difference and wait until a poll has run to its end."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._poll_waiters.append(done)
        self.request_poll("a caller waits for a complete poll")
        await done

    def add_event_listener(self, listener: Callable[[SyncEvents], None]) -> Callable[[], None]:
        """Call ``listener`` with what each replay brought (new incoming messages,
        deletions), after it committed. Returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def _emit(self, events: list[SyncEvents]) -> None:
        for event in events:
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception:
                    log.exception("a sync event listener failed")

    def _collect_events(self, state: AccountMutableState) -> None:
        if not self._listeners:
            return
        added: list[MessageId] = []
        deleted: list[MessageId] = []
        for operation in state.operations:
            if isinstance(operation, AddMessages):
                added += [
                    MessageId(m.peer_id, m.namespace, m.id or 0)
                    for m in operation.messages
                    if m.flags & MessageFlags.INCOMING
                ]
            elif isinstance(operation, DeleteMessages):
                deleted += [MessageId(operation.peer_id, 0, i) for i in operation.ids]
        if added or deleted:
            self._events.append(SyncEvents(tuple(added), tuple(deleted)))

    async def _operation(
        self, name: str, work: Any, *, retry: Callable[[], None] | None = None
    ) -> bool:
        """Run one operation; ``False`` if it did not complete.

        A lost connection is the connection loop's to handle (it reconnects and asks
        for the difference). Any other failure (the database full or locked, a server
        answer that breaks the protocol) is logged, shown in ``problem``, and ``retry``
        runs after a growing pause: an operation is never lost silently. A damaged
        database (``is_final``) is raised instead: no retry would cure it.
        """
        self._busy = True
        self.current_operation = name
        try:
            await work
        except ConnectionError as error:
            log.info("%s interrupted: %s", name, error)
            return False
        except Exception as error:
            if is_final(error):
                self.problem = f"{name} failed: {error}"
                raise
            self._failed(name, error, retry)
            return False
        else:
            self._failures.reset()
            self.problem = None
            return True
        finally:
            self._busy = False
            self.current_operation = "idle"
            self.changes.notify()

    def _failed(self, name: str, error: Exception, retry: Callable[[], None] | None) -> None:
        pause = self._failures.next()
        self.counters.failures += 1
        if isinstance(error, ServerLiedError | InvalidParamsError):
            self.counters.lies_refused += 1
        self.problem = f"{name} failed: {error}"
        if isinstance(error, PostboxError | ProtocolError):
            log.error("%s failed, retrying in %.1f s: %s", name, pause, error)
        else:
            log.exception("%s failed, retrying in %.1f s", name, pause)
        if retry is None:
            return
        self._retries_waiting += 1

        def run_retry() -> None:
            self._retries_waiting -= 1
            retry()

        asyncio.get_running_loop().call_later(pause, run_retry)

    async def _read(self, fn: Callable[[Transaction], T]) -> T:
        return await asyncio.wrap_future(self.postbox.transaction(fn))

    def _lied(self, error: ServerLiedError) -> None:
        self.counters.lies_refused += 1
        self.problem = f"refused an answer from the server: {error}"
        log.error("refused an answer from the server: %s", error)

    async def _describe(self, state: AccountMutableState) -> None:
        """Before a replay: every peer its messages name is stored, carried, or fetched
        now with getPeers (a min peer) and stored with them; ``ServerLiedError`` if the
        server cannot describe one."""
        carried = {
            int(peer.id)
            for operation in state.operations
            if isinstance(operation, MergePeers)
            for peer in operation.peers
        }
        described = await self.describer.describe(state.references, carried)
        if described:
            self.counters.peers_fetched += len(described)
            state.operations.insert(0, MergePeers(tuple(peer_from_wire(p) for p in described)))

    async def _replay(self, state: AccountMutableState, channels: dict[PeerId, int]) -> bool:
        """Phase three; ``False`` if the stored cursor moved since phase one."""
        await self._describe(state)
        for operation in state.operations:
            if isinstance(operation, DeleteMessages):
                self.recent.record(operation.peer_id, operation.ids)
            elif isinstance(operation, EditMessage):
                self.recent.record(operation.message.peer_id, (operation.message.id or 0,))
            elif isinstance(operation, AddMessages | ResetChannel):
                self.recent.record_messages(operation.messages)
        replay = functools.partial(replay_final_state, state=state, initial_channel_pts=channels)
        replayed = await self._read(replay)
        if replayed:
            self._collect_events(state)
        return replayed

    # -- pushes ------------------------------------------------------------------------

    async def _process(self, batch: list[Grouped]) -> None:
        everything = [*batch, *(grouped.seq[2] for grouped in batch if grouped.seq is not None)]
        channels = _channels_in(batch)
        carried = {int(peer.id) for grouped in everything for peer in grouped.peers}
        needed = {g.needs_peer for g in batch if g.needs_peer is not None} - carried

        def phase_one(
            tx: Transaction,
        ) -> tuple[StateCursor | None, dict[int, int | None], set[int]]:
            # A refused channel's updates (pushed before it was left) are dropped.
            reachable = channels - inaccessible_channels(tx)
            states = {ch: tx.get_peer_chat_state(PeerId(ch)) for ch in reachable}
            unknown = {peer for peer in needed if tx.get_peer(PeerId(peer)) is None}
            pts = {ch: (s.pts if s else None) for ch, s in states.items()}
            return tx.get_state(), pts, unknown

        stored, channel_pts, unknown_peers = await self._read(phase_one)
        channels = set(channel_pts)
        if stored is None:
            self.request_poll("no stored state yet")
            return
        self._pts.reset(stored.pts)
        self._qts.reset(stored.qts)
        self._seq.reset(stored.seq)
        state = AccountMutableState(stored, stored)
        # A container whose seq is next releases its contents to their own checks.
        seq_items = [
            (grouped.seq[1], grouped.seq[1] - grouped.seq[0] + 1, grouped.seq[2])
            for grouped in batch
            if grouped.seq is not None
        ]
        seq_result = self._seq.offer(seq_items)
        self._watch_gap(SEQ, seq_result.gap, seq_result.inconsistent)
        groups = [*batch, *seq_result.ready]
        for grouped in groups:
            # Older than the stored state: the difference since gave newer names and
            # presences. It carries none of a channel's updates, so those still apply,
            # and the peers they name are stored only if not stored yet.
            stale = 0 < grouped.date < stored.date
            if not stale:
                state.merge_peers(grouped.peers)
            elif grouped.channels:
                state.merge_peers(grouped.peers, only_new=True)
            if grouped.too_long:
                self.request_poll("updatesTooLong")
            for update in grouped.unordered:
                if not (stale and isinstance(update, UpdateUserStatus | UpdatePeer)):
                    state.apply(update)
            for hint in grouped.channel_hints:
                state.poll_channel(PeerId(hint.channel), hint.pts or 0)
        pts_items = []
        for grouped in groups:
            if grouped.needs_peer in unknown_peers:
                # Telegram's rule for a short message from someone we do not know: drop
                # it and let the difference bring it together with its sender.
                self.request_poll("short message from an unknown user")
                continue
            for update in grouped.pts:
                pts, count = pts_of(update) or (0, 0)
                pts_items.append((pts, count, update))
        result = self._pts.offer(pts_items)
        for update in result.ready:
            state.apply(update)
        self.counters.updates_applied += len(result.ready)
        self._watch_gap(ACCOUNT_PTS, result.gap, result.inconsistent)
        qts_result = self._qts.offer(
            (update.qts, 1, update) for grouped in groups for update in grouped.qts
        )
        for encrypted in qts_result.ready:
            state.apply(encrypted)
        self.counters.updates_applied += len(qts_result.ready)
        self._watch_gap(QTS, qts_result.gap, qts_result.inconsistent)
        state.cursor = replace(
            stored, pts=self._pts.position, qts=self._qts.position, seq=self._seq.position
        )
        initial_channels: dict[PeerId, int] = {}
        for channel in sorted(channels):
            local = channel_pts[channel]
            if local is None:  # never synced: start from the server
                told = [pts_of(u) or (0, 0) for g in groups for u in g.channels.get(channel, ())]
                state.poll_channel(PeerId(channel), max((pts for pts, _ in told), default=0))
                continue
            initial_channels[PeerId(channel)] = local
            sequencer = self._channel_seqs.setdefault(channel, Sequencer[AnyUpdate](local))
            sequencer.reset(local)
            items = []
            for grouped in groups:
                for update in grouped.channels.get(channel, ()):
                    pts, count = pts_of(update) or (0, 0)
                    items.append((pts, count, update))
            channel_result = sequencer.offer(items)
            for update in channel_result.ready:
                state.apply(update)
            self.counters.updates_applied += len(channel_result.ready)
            if sequencer.position != local:
                state.set_channel_pts(PeerId(channel), sequencer.position)
            self._watch_gap(channel, channel_result.gap, channel_result.inconsistent)
        self._channels_to_poll |= {int(c) for c in state.channels_to_poll}
        if not state.operations and state.cursor == stored:
            return
        replayed = await self._replay(state, initial_channels)
        crash_point("state_manager.process.replayed")
        self.counters.replays += 1
        if not replayed:
            # The cursor moved under us (a send applied its pts): start this batch over.
            self.counters.replay_retries += 1
            self._incoming[:0] = batch
            self._wake.set()

    def _watch_gap(self, counter: GapKey, gap: bool, inconsistent: bool) -> None:
        """Tell the gap rules what a check of ``counter`` found, and act on it: resolve
        it now, or keep the one timer armed at the next deadline."""
        before = self._gaps.opened
        if self._gaps.observe(counter, gap=gap, inconsistent=inconsistent, now=loop_time()):
            self._resolve_gap(counter)
        self.counters.gaps += self._gaps.opened - before
        self._arm_gap_timer()

    def _arm_gap_timer(self) -> None:
        deadline = self._gaps.next_deadline()
        if self._gap_timer is not None and (deadline is None or self._gap_timer.when() != deadline):
            self._gap_timer.cancel()
            self._gap_timer = None
        if deadline is not None and self._gap_timer is None:
            loop = asyncio.get_running_loop()
            self._gap_timer = loop.call_at(deadline, self._on_gap_deadline)

    def _on_gap_deadline(self) -> None:
        self._gap_timer = None
        for counter in self._gaps.expired(loop_time()):
            self._resolve_gap(counter)
        self._arm_gap_timer()

    def _resolve_gap(self, counter: GapKey) -> None:
        """A missing update did not come (or cannot): ask for what covers it."""
        if counter is ACCOUNT_PTS or counter in (SEQ, QTS):
            self.request_poll("a gap in pts, qts or seq was not filled in time")
        else:
            assert counter is not None
            self._channel_seqs.pop(counter, None)
            self.request_channel_poll(counter)

    def _requeue_held(self, channel: int | None) -> None:
        """After a difference, updates still held (newer than it) go round again."""
        if channel is None:
            held = list(self._pts.held.values())
            self._pts.held.clear()
            qts_held = list(self._qts.held.values())
            self._qts.held.clear()
            seq_held = list(self._seq.held.items())
            self._seq.held.clear()
            if held or qts_held or seq_held:
                grouped = Grouped(pts=held, qts=qts_held)
                self._incoming.insert(0, grouped)
                for (start, end), updates in seq_held:
                    self._incoming.insert(1, Grouped(seq=(start + 1, end, updates)))
                self._wake.set()
            return
        sequencer = self._channel_seqs.pop(channel, None)
        self._watch_gap(channel, False, False)
        if sequencer is not None and sequencer.held:
            self._incoming.insert(0, Grouped(channels={channel: list(sequencer.held.values())}))
            self._wake.set()

    # -- the difference ---------------------------------------------------------------

    async def _poll_difference(self) -> None:
        """getDifference until final; each answer replayed in its own transaction.

        While one slice is replayed, the next is already being fetched from the cursor
        the slice leads to: if the replay finds the stored cursor moved, that prefetch
        is dropped and the loop starts again from what is stored.
        """
        prefetch: asyncio.Task[Any] | None = None
        hinted = False
        try:
            while True:
                stored, left = await self._read(self._read_cursor)
                if left is not None:  # the first poll: what a previous process left
                    self._stored_polls_read = True
                    self._channels_to_poll |= {int(channel) for channel in left}
                if stored is None:
                    server = await self._call(GetState())
                    crash_point("state_manager.poll_difference.state_answered")
                    self.recent.record_jump()  # history before this state comes by fills
                    initial = functools.partial(_set_initial_state, cursor=_cursor(server))
                    await self._read(initial)
                    crash_point("state_manager.poll_difference.state_stored")
                    stored = _cursor(server)
                if prefetch is not None and prefetch.get_name() == _request_name(stored):
                    answer = await prefetch
                else:
                    if prefetch is not None:
                        prefetch.cancel()
                    answer = await self._call(self._difference_request(stored))
                crash_point("state_manager.poll_difference.answered")
                prefetch = None
                self.counters.differences += 1
                state = AccountMutableState(stored, stored)
                final = self._build_difference(state, answer)
                if not final:
                    prefetch = asyncio.create_task(
                        self._call(self._difference_request(state.cursor)),
                        name=_request_name(state.cursor),
                    )
                replayed = await self._replay(state, {})
                crash_point("state_manager.poll_difference.replayed")
                self.counters.replays += 1
                if not replayed:
                    self.counters.replay_retries += 1
                    continue
                self._channels_to_poll |= {int(c) for c in state.channels_to_poll}
                hinted |= any(isinstance(op, PollChannel) for op in state.operations)
                if final:
                    break
        finally:
            if prefetch is not None:
                prefetch.cancel()
        self._pts.reset(state.cursor.pts)
        self._qts.reset(state.cursor.qts)
        self._seq.reset(state.cursor.seq)
        for counter in (ACCOUNT_PTS, QTS, SEQ):
            self._watch_gap(counter, False, False)
        self._requeue_held(None)
        self.counters.last_activity = loop_time()
        if hinted:  # the channels the difference named that its replay found behind
            stored_polls = await self._read(lambda tx: tx.get_channels_to_poll())
            self._channels_to_poll |= {int(channel) for channel in stored_polls}

    def _read_cursor(self, tx: Transaction) -> tuple[StateCursor | None, dict[PeerId, int] | None]:
        """The stored cursor, and on the first poll the stored channels to poll."""
        left = None if self._stored_polls_read else tx.get_channels_to_poll()
        return tx.get_state(), left

    def _difference_request(self, cursor: StateCursor) -> GetDifference:
        return GetDifference(cursor.pts, cursor.qts, cursor.date, self.difference_limit)

    def _build_difference(self, state: AccountMutableState, answer: Any) -> bool:
        """Phase two for one difference answer; ``True`` if it was the final one."""
        stored = state.cursor
        if isinstance(answer, DifferenceEmpty):
            state.cursor = replace(stored, date=answer.date, seq=answer.seq)
            return True
        if isinstance(answer, DifferenceTooLong):
            self.counters.too_long += 1
            self.recent.record_jump()
            log.info("difference too long: histories become holes, pts %s", answer.pts)
            state.reset_histories()
            state.cursor = replace(stored, pts=answer.pts)
            return False
        assert isinstance(answer, Difference | DifferenceSlice)
        reached = answer.intermediate_state if isinstance(answer, DifferenceSlice) else answer.state
        if (
            reached.pts < stored.pts
            or reached.qts < stored.qts
            or isinstance(answer, DifferenceSlice)
            and (reached.pts, reached.qts) == (stored.pts, stored.qts)
        ):
            raise StateWentBackwardsError(
                f"a difference from pts/qts {stored.pts}/{stored.qts}"
                f" leads to {reached.pts}/{reached.qts}"
            )
        _check_difference(answer)
        state.merge_peers(answer.peers)
        messages = (*answer.new_messages, *answer.new_encrypted_messages)
        state.add_difference(messages, answer.other_updates)
        self.counters.updates_applied += len(messages) + len(answer.other_updates)
        if isinstance(answer, DifferenceSlice):
            self.counters.slices += 1
            state.cursor = _cursor(answer.intermediate_state)
            return False
        state.merge_presences(answer.presences)
        state.cursor = _cursor(answer.state)
        for hint in answer.channels:
            state.poll_channel(PeerId(hint.channel), hint.pts, always=False)
        return True

    async def _poll_channels(self, channels: list[int]) -> None:
        """getChannelDifference for several channels at once, as the seeds branch: each
        answer is built on a branch of one state, the branches are merged back, and the
        whole is replayed in one transaction. Channels not final yet go round again; a
        stored channel to poll goes in the transaction that stores it caught up."""

        def phase_one(
            tx: Transaction,
        ) -> tuple[StateCursor | None, list[int], list[int | None], set[PeerId]]:
            # A channel refused for good is not asked about again (after a restart too).
            asked = sorted(set(channels) - inaccessible_channels(tx))
            states = [tx.get_peer_chat_state(PeerId(channel)) for channel in asked]
            listed = {PeerId(c) for c in asked if tx.get_channel_to_poll(PeerId(c)) is not None}
            return tx.get_state(), asked, [s.pts if s else None for s in states], listed

        stored, channels, local, listed = await self._read(phase_one)
        peer_ids = [PeerId(channel) for channel in channels]
        if stored is None:
            self.request_poll("no stored state yet")
            self._channels_to_poll.update(channels)
            return
        try:
            results = await asyncio.gather(
                *(
                    self._call(GetChannelDifference(channel, pts or 0, CHANNEL_DIFFERENCE_LIMIT))
                    for channel, pts in zip(channels, local, strict=True)
                ),
                return_exceptions=True,
            )
        except BaseException:
            self._channels_to_poll.update(channels)  # asked again after the reconnect
            raise
        crash_point("state_manager.poll_channels.answered")
        failed = [r for r in results if isinstance(r, BaseException) and not channel_gone(r)]
        if failed:
            self._channels_to_poll.update(channels)  # asked again (after the reconnect)
            raise failed[0]
        answers: list[Any] = list(results)
        self.counters.channel_differences += len(channels)
        state = AccountMutableState(stored, stored)
        initial: dict[PeerId, int] = {}
        unfinished: list[int] = []
        for peer_id, pts, answer in zip(peer_ids, local, answers, strict=True):
            if pts is not None:
                initial[peer_id] = pts
            if isinstance(answer, BaseException):
                log.warning("channel %d refused for good: %s", int(peer_id), answer)
                state.forget_channel(peer_id)
                continue
            branch = state.branch()
            if not self._build_channel(branch, peer_id, pts, answer):
                unfinished.append(int(peer_id))
            elif peer_id in listed:
                branch.channel_caught_up(peer_id)
            state.merge(branch)
        if state.operations:
            replayed = await self._replay(state, initial)
            crash_point("state_manager.poll_channels.replayed")
            self.counters.replays += 1
            if not replayed:
                self.counters.replay_retries += 1
                self._channels_to_poll.update(channels)
                self._wake.set()
                return
        self._channels_to_poll.update(unfinished)
        now = loop_time()
        for channel, answer in zip(channels, answers, strict=True):
            final = channel not in unfinished
            self.channel_timeouts.observe(
                channel, getattr(answer, "timeout", None), final=final, now=now
            )
            if final:
                self._requeue_held(channel)

    async def _forget(self, channels: list[int]) -> None:
        """Forget channels the server refused for good, in one transaction."""
        stored = await self._read(lambda tx: tx.get_state())
        if stored is None:  # nothing synced yet: forgotten once there is a cursor
            self._channels_to_forget.update(channels)
            self.request_poll("no stored state yet")
            return
        state = AccountMutableState(stored, stored)
        for channel in channels:
            log.warning("channel %d refused for good: forgotten", channel)
            state.forget_channel(PeerId(channel))
            self._channels_to_poll.discard(channel)
        if not await self._replay(state, {}):
            self._channels_to_forget.update(channels)  # the cursor moved: again
            self._wake.set()

    def _build_channel(
        self, state: AccountMutableState, peer_id: PeerId, local: int | None, answer: Any
    ) -> bool:
        """Phase two for one channel difference; ``True`` if the channel is caught up."""
        if isinstance(answer, ChannelDifferenceEmpty):
            if answer.pts != local:
                state.set_channel_pts(peer_id, answer.pts)
            return True
        _check_channel_difference(int(peer_id), answer)
        if isinstance(answer, ChannelDifferenceTooLong):
            self.counters.channel_too_long += 1
            self.recent.record_jump()
            state.merge_peers(answer.peers)
            state.reset_channel(answer.dialog, answer.messages)
            return True
        assert isinstance(answer, ChannelDifference)
        if local is not None and answer.pts < local:
            raise StateWentBackwardsError(
                f"channel {int(peer_id)}'s difference from pts {local} leads to {answer.pts}"
            )
        state.merge_peers(answer.peers)
        state.add_difference(answer.new_messages, answer.other_updates)
        self.counters.updates_applied += len(answer.new_messages) + len(answer.other_updates)
        state.set_channel_pts(peer_id, answer.pts)
        return answer.final


def _check_push(push: AnyUpdates) -> None:
    """``ServerLiedError`` if a push names peers of the wrong kinds."""
    if isinstance(push, Updates):
        check_peers(push.peers, "a push")
        for update in push.updates:
            check_update(update, "a push")
    elif isinstance(push, ShortMessage):
        check_update(push.as_update(0), "a short message")


def _check_difference(answer: Difference | DifferenceSlice) -> None:
    where = "a difference"
    check_peers(answer.peers, where, answer.channels if isinstance(answer, Difference) else ())
    for message in answer.new_messages:
        check_message(message, ACCOUNT_CHATS, where)
    for message in answer.new_encrypted_messages:
        check_message(message, (PeerKind.SECRET,), where)
    for update in answer.other_updates:
        check_update(update, where)


def _check_channel_difference(channel: int, answer: Any) -> None:
    """A channel's difference speaks of that channel alone."""
    where = f"channel {channel}'s difference"
    if isinstance(answer, ChannelDifferenceEmpty):
        return
    check_peers(answer.peers, where)
    if isinstance(answer, ChannelDifferenceTooLong):
        messages = answer.messages
        updates: tuple[AnyUpdate, ...] = ()
        if answer.dialog.peer != channel:
            raise ServerLiedError(f"{where} has the dialog of {answer.dialog.peer}")
    else:
        messages, updates = answer.new_messages, answer.other_updates
    for message in messages:
        check_message(message, (PeerKind.CHANNEL,), where)
        if message.peer != channel:
            raise ServerLiedError(f"{where} has message {message.id} of {message.peer}")
    for update in updates:
        check_update(update, where)
        if channel_of(update) not in (None, channel):
            raise ServerLiedError(f"{where} has an update of channel {channel_of(update)}")


def _request_name(cursor: StateCursor) -> str:
    return f"getDifference {cursor.pts} {cursor.qts} {cursor.date}"


def _set_initial_state(tx: Transaction, cursor: StateCursor) -> None:
    if tx.get_state() is None:
        tx.set_state(cursor)
