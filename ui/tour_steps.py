"""The guided tour's steps, and what they read and do in the window.

Each step makes one idea of the design happen now, on the demo's server, and ends by
pointing at the inspector line that shows it:

1. a live insert animates, and most open views stay silent;
2. scrolling into a hole shows a loading row that the filler fills;
3. a read on another device clears the badge here;
4. a dropped connection: messages missed, then found by getDifference;
5. a difference too long: history becomes holes, which fill on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from client import EngineStatus, SegmentKind
from postbox import PeerId, PeerNamespace
from ui.rows import ChatRow, LoadingRow, MessageRow
from ui.tour import Beat, Script, StepImpossible, TourStage, TourStep, Wait
from ui.transactions import CommitEntry

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["TOUR", "TourContext"]

#: Messages written while the connection is down, and before "too long".
MISSED = 3


class TourContext:
    """What the steps see of the window and do to it, and the server they act on.
    ``beat_scale`` scales the pauses left for the reader (0 in tests)."""

    def __init__(self, window: MainWindow, stage: TourStage, *, beat_scale: float = 1.0) -> None:
        self.window = window
        self.stage = stage
        self.beat_scale = beat_scale
        #: Whether slow motion was on before a step turned it on.
        self._slow_before: bool | None = None
        #: The chat the running step is about, once opened.
        self._focus: ChatRow | None = None
        #: The engine's state as last heard (``counter``), and whether it was asked.
        self._status: EngineStatus | None = None
        self._status_pending = False

    # -- the window ----------------------------------------------------------------------

    def show_inspector(self) -> None:
        self.window.chat_pane.inspector_button.setChecked(True)

    def people(self, *, besides: int | None = None) -> list[ChatRow]:
        """The private chats with people in the chat list, top first."""
        return [
            row
            for row in self.window.chat_model.rows
            if isinstance(row, ChatRow)
            and not row.is_hole
            and not row.secret
            and PeerId(row.peer_id).namespace == PeerNamespace.USER
            and row.peer_id != besides
        ]

    def open(self, row: ChatRow) -> Wait:
        """Open the chat the step is about (at its newest messages), and watch that it
        stays open (``guard``)."""
        if self.window.open_peer == row.peer_id:
            self.window.chat_pane.jump_to_bottom()
        else:
            self.window.open_chat(PeerId(row.peer_id), row.title, unread=row.unread)
        self._focus = row
        return Wait(lambda: self.showing(row.peer_id), f"Opening the chat with {row.title}…")

    def guard(self) -> None:
        """Stop the step if the reader opened another chat than the one it is about."""
        focus = self._focus
        if focus is not None and self.window.open_peer != focus.peer_id:
            self._focus = None
            raise StepImpossible(
                f"Another chat was opened. Press Again to watch it in {focus.title}."
            )

    def showing(self, peer_id: int) -> bool:
        """The chat is open and its history shows its messages (not yet the chat
        shown before, whose rows stay until the new view's first snapshot)."""
        return self.window.open_peer == peer_id and any(
            isinstance(row, MessageRow) and row.peer_id == peer_id
            for row in self.window.history_model.rows
        )

    def shown_ids(self) -> set[int]:
        return {row.id for row in self.window.history_model.rows if isinstance(row, MessageRow)}

    def loading_shown(self) -> bool:
        rows = self.window.history_model.rows
        return bool(rows) and isinstance(rows[0], LoadingRow)

    def scroll_to_top(self) -> bool:
        """Scroll the open chat to its top; whether a loading row is the top row."""
        self.window.history.verticalScrollBar().setValue(0)
        return self.loading_shown()

    def unread(self, peer_id: int) -> int | None:
        row = next(
            (r for r in self.window.chat_model.rows if isinstance(r, ChatRow)
             and r.peer_id == peer_id),
            None,
        )  # fmt: skip
        return None if row is None else row.unread

    # -- the engine and the inspector ----------------------------------------------------

    def counter(self, name: str) -> int:
        """One of the engine's counters as last heard (asking again each time, so
        that a ``Wait`` on it sees it move)."""
        self._ask_status()
        status = self._status
        return 0 if status is None else status.counters.get(name, 0)

    def _ask_status(self) -> None:
        if self._status_pending:
            return
        self._status_pending = True

        def heard(status: EngineStatus | None) -> None:
            self._status, self._status_pending = status, False

        def failed(_error: BaseException) -> None:
            self._status_pending = False

        self.window.relay.watch(self.window.account.status_later(), heard, failed)

    def newest_commit(self) -> int:
        return self.window.inspector.newest_version()

    def commit(
        self, after: int, view: str, *, update: str | None = None, why: str = ""
    ) -> CommitEntry | None:
        """The first commit after version ``after`` that re-emitted ``view`` (with
        ``update``, for a reason that says ``why``), if one came."""
        for entry in reversed(self.window.inspector.commits()):
            if entry.version <= after:
                continue
            for (name, kind), reason in zip(entry.views, entry.reasons, strict=True):
                if name.startswith(view) and (update is None or kind == update) and why in reason:
                    return entry
        return None

    def commit_saying(self, after: int, text: str) -> CommitEntry | None:
        """The first commit after version ``after`` that says ``text`` anywhere: in what
        it stored, or in why it consulted a view (re-emitted or silent)."""
        for entry in reversed(self.window.inspector.commits()):
            lines = [*entry.changes, *entry.reasons, *(why for _, why in entry.silent)]
            if entry.version > after and any(text in line for line in lines):
                return entry
        return None

    def point_at(self, entry: CommitEntry, view: str, *, open_silent: bool = False) -> None:
        self.window.inspector.point_at(entry.version, view, open_silent=open_silent)

    def hole_map(self, peer_id: int) -> Future[Any]:
        return self.window.account.hole_map(PeerId(peer_id))

    def slow_motion(self, on: bool) -> None:
        button = self.window.inspector.slow_button
        if button is None:
            return
        if self._slow_before is None:
            self._slow_before = button.isChecked()
        button.setChecked(on)

    def tidy(self) -> None:
        """Undo what a step left: slow motion as the reader had it, the inspector
        running and unfiltered."""
        self._focus = None
        if self._slow_before is not None:
            self.slow_motion(self._slow_before)
            self._slow_before = None
        self.window.inspector.release()


def awaited(future: Future[Any], doing: str) -> Generator[Wait | Beat, object, Any]:
    """Wait for ``future`` (``yield from``); its result."""
    found = yield Wait(lambda: future.done() and (future.result(),), doing)
    assert isinstance(found, tuple)  # a tuple, so that a false result ends the wait too
    return found[0]


def someone_to_write(
    ctx: TourContext, *, besides: int | None = None
) -> Generator[Wait | Beat, object, list[ChatRow]]:
    """The private chats in the list where someone can write now (not a chat with
    another account), the open one first (``yield from``)."""
    people = ctx.people(besides=besides)
    people.sort(key=lambda row: row.peer_id != ctx.window.open_peer)
    asking = ctx.stage.writable([row.peer_id for row in people])
    writable = yield from awaited(asking, "Looking for someone to write…")
    rows = [row for row in people if row.peer_id in set(writable)]
    if not rows:
        raise StepImpossible("No private chat here has someone who can write in it.")
    return rows


def open_a_person(ctx: TourContext) -> Generator[Wait | Beat, object, ChatRow]:
    """Show the inspector and open a private chat where someone can write, the open
    chat if it is one (``yield from``)."""
    ctx.show_inspector()
    chat = (yield from someone_to_write(ctx))[0]
    yield ctx.open(chat)
    return chat


def status_now(ctx: TourContext) -> Generator[Wait | Beat, object, EngineStatus]:
    """The engine's state, asked now (``yield from``)."""
    status = yield from awaited(ctx.window.account.status_later(), "Asking the engine…")
    if status is None:
        raise StepImpossible("The sync engine is not running.")
    assert isinstance(status, EngineStatus)
    return status


# -- the steps ---------------------------------------------------------------------------


def live_insert(ctx: TourContext) -> Script:
    chat = yield from open_a_person(ctx)
    yield Beat(800)
    mark = ctx.newest_commit()
    said = yield from awaited(ctx.stage.say(chat.peer_id), f"{chat.title} is typing…")
    if said is None:
        raise StepImpossible(f"Nobody can write in {chat.title} now.")
    view = f"history of {chat.title}"
    entry = yield Wait(
        lambda: ctx.commit(mark, view, update="Generic", why="new message"),
        "The message is on its way…",
    )
    assert isinstance(entry, CommitEntry)
    ctx.point_at(entry, view, open_silent=True)
    never = entry.open_views - entry.consulted
    return (
        f"Commit #{entry.version} stored the message. Of {entry.open_views} open views,"
        f" {len(entry.views)} re-emitted ({view} as Generic: the row slid in),"
        f" {len(entry.silent)} were consulted and stayed silent, and {never} were never"
        " asked: their topics were not touched."
    )


def hole_fill(ctx: TourContext) -> Script:
    ctx.show_inspector()
    ctx.slow_motion(True)
    chat = None
    for row in ctx.people():
        # Opening a chat fills the hole its window covers; one longer than the window
        # keeps a hole above it.
        yield ctx.open(row)
        yield Wait(lambda: not ctx.loading_shown(), "Looking for a chat longer than its window…")
        looking = "Looking for a chat longer than its window…"
        segments = yield from awaited(ctx.hole_map(row.peer_id), looking)
        if any(segment.kind is SegmentKind.HOLE for segment in segments):
            chat = row
            break
    if chat is None:
        raise StepImpossible("Every chat is stored whole here: there is no hole to scroll into.")
    yield Beat(1500, "Its older messages are a hole: grey on the hole map.")
    mark = ctx.newest_commit()
    yield Wait(ctx.scroll_to_top, "Scrolling up into the hole…")
    view = f"history of {chat.title}"
    fetching = "A loading row: the filler asks the server for the hole (orange)…"
    entry = yield Wait(lambda: ctx.commit(mark, view, update="FillHole"), fetching)
    assert isinstance(entry, CommitEntry)
    ctx.point_at(entry, view)
    why = entry.reasons[[name for name, _ in entry.views].index(view)]
    return (
        f"Commit #{entry.version}: {why}. The history re-emitted as FillHole: the rows were"
        " put in place above what you were reading, not animated, and the view stayed"
        " where it was."
    )


def read_elsewhere(ctx: TourContext) -> Script:
    ctx.show_inspector()
    people = yield from someone_to_write(ctx, besides=ctx.window.open_peer)
    chat = people[min(2, len(people) - 1)]
    before = ctx.unread(chat.peer_id) or 0
    said = yield from awaited(ctx.stage.say(chat.peer_id), f"{chat.title} writes…")
    if said is None:
        raise StepImpossible(f"Nobody can write in {chat.title} now.")
    yield Wait(lambda: (ctx.unread(chat.peer_id) or 0) > before, "A badge in the chat list…")
    yield Beat(2000, f"{chat.title}'s badge counts the message. Now another device reads it…")
    mark = ctx.newest_commit()
    yield from awaited(ctx.stage.read_elsewhere(chat.peer_id), "Another device reads the chat…")
    yield Wait(lambda: ctx.unread(chat.peer_id) == 0, "The server pushes the read…")
    why = f"read state of {chat.title}"
    entry = yield Wait(lambda: ctx.commit(mark, "chat list", why=why), "The read is replayed…")
    assert isinstance(entry, CommitEntry)
    ctx.point_at(entry, "chat list")
    return (
        f"Commit #{entry.version} stored the read that came from the server. The chat list"
        f" watches {why}, so it re-emitted and the badge cleared; this window sent nothing."
    )


def written_unseen(
    ctx: TourContext, counter: str, event: Callable[[int, int], Future[list[int]]], doing: str
) -> Generator[Wait | Beat, object, tuple[ChatRow, int, int, list[int]]]:
    """Open a person's chat in slow motion, note the engine's ``counter`` and the newest
    commit, then have ``event`` write messages there that no push carries: the chat,
    the counter, the commit and the messages' ids (``yield from``)."""
    chat = yield from open_a_person(ctx)
    ctx.slow_motion(True)
    before = (yield from status_now(ctx)).counters.get(counter, 0)
    mark = ctx.newest_commit()
    written = yield from awaited(event(chat.peer_id, MISSED), doing)
    if len(written) < MISSED:
        raise StepImpossible(f"Nobody could write in {chat.title} meanwhile.")
    return chat, before, mark, written


def dropped_connection(ctx: TourContext) -> Script:
    chat, differences, mark, missed = yield from written_unseen(
        ctx, "differences", ctx.stage.drop_connections, "The network drops…"
    )
    yield Wait(
        lambda: set(missed) <= ctx.shown_ids(),
        f"{len(missed)} messages are written while the connection is down; no push carries"
        " them. Reconnecting…",
    )
    yield Wait(lambda: ctx.counter("differences") > differences, "Asking getDifference…")
    view = f"history of {chat.title}"
    entry = yield Wait(lambda: ctx.commit(mark, view, why="new message"), "Storing what it missed…")
    assert isinstance(entry, CommitEntry)
    ctx.point_at(entry, view)
    return (
        f"Back online, the client asked getDifference from its pts (the cursor above) and"
        f" got the {len(missed)} messages it missed; commit #{entry.version} stored them"
        " and the history re-emitted."
    )


def too_long(ctx: TourContext) -> Script:
    chat, before, mark, late = yield from written_unseen(
        ctx, "too_long", ctx.stage.too_long, "The client falls far behind…"
    )
    yield Wait(
        lambda: ctx.counter("too_long") > before,
        'updatesTooLong, and getDifference answers "too long"…',
    )
    view = f"history of {chat.title}"
    added = f"added in {chat.title}"
    reset = yield Wait(lambda: ctx.commit_saying(mark, added), "Every history becomes a hole…")
    assert isinstance(reset, CommitEntry)
    fill = yield Wait(
        lambda: ctx.commit(reset.version, view, update="FillHole", why="removed"),
        "A loading row: what is on screen fills on demand…",
    )
    assert isinstance(fill, CommitEntry)
    yield Wait(lambda: set(late) <= ctx.shown_ids(), "The newest messages come in…")
    ctx.point_at(fill, view)
    return (
        "The server had too much to send one by one. The client jumped its cursor to the"
        f" server's pts and made every chat's history a hole (commit #{reset.version}):"
        " nothing stored is trusted to be complete. What is on screen filled again"
        f" (commit #{fill.version}, FillHole); other chats fill when opened."
    )


TOUR = [
    TourStep(
        "Every screen here is a live query",
        "The chat list, the open chat and the inspector are views over the local"
        " database: a commit is replayed against the views that watch what it changed,"
        " and only those whose window changed re-emit. The sync engine keeps the database"
        " in step with the demo's server. Five short steps make each idea happen on"
        " screen, against that server, and point at the inspector line that shows it."
        " While a step runs, the demo's own traffic pauses so its event stands out.",
    ),
    TourStep(
        "A live insert, and the views that stay silent",
        "Someone writes in the open chat. The commit that stores the message is replayed"
        " only against the views that watch what it touched. The history re-emits as"
        " Generic, so the new row slides in; the chat list and the cursor change too."
        " Every other open view is left alone, most without even being asked. The"
        " inspector on the right shows the commit.",
        live_insert,
    ),
    TourStep(
        "Scrolling into a hole",
        "Slow motion is on: the server holds each answer for a moment. The chat's older"
        " messages are a hole, ids the server has and this database does not. Scrolling"
        " up reaches it: a loading row shows, the filler fetches the range (orange on the"
        " hole map), and its answer is stored as a FillHole.",
        hole_fill,
    ),
    TourStep(
        "A read on another device",
        "A message arrives in another chat, and its badge counts it. Then the account"
        " reads that chat on another device: the server pushes the read, and the badge"
        " here clears without this window doing anything.",
        read_elsewhere,
    ),
    TourStep(
        "A dropped connection: the gap, and getDifference",
        "The server drops this client's connection, and messages are written in the open"
        " chat before it is back. No push carries them: the client learns of them by"
        " asking for the difference since its pts, the cursor in the inspector.",
        dropped_connection,
    ),
    TourStep(
        "Too long: history becomes holes",
        "The server tells the client it has fallen too far behind (updatesTooLong), and"
        ' its getDifference answer is "too long". The client cannot know what changed,'
        " so every history becomes a hole; what is on screen fills again on demand.",
        too_long,
    ),
]
