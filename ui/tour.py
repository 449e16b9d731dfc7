"""The guided tour: a card that walks through the ideas the app shows, one step at a
time, each made to happen on screen now and pointed at in the inspector.

A step is a script (``ui.tour_steps``): a generator that acts on the window and the
demo's server, and yields what it waits for: ``Wait`` until something holds, whose
value is sent back into the script, or a ``Beat``, a pause so a person sees what just
happened before the next thing does. ``TourRunner`` drives it on a timer; the card shows
what the step waits for and, at the end, what it found.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from ui import theme

if TYPE_CHECKING:
    from ui.tour_steps import TourContext

__all__ = [
    "Beat",
    "Script",
    "StepImpossible",
    "TourCard",
    "TourRunner",
    "TourStage",
    "TourStep",
    "Wait",
    "first_start",
    "remember_offered",
]

#: How often the runner looks whether what a step waits for holds.
TICK_MS = 50
#: How long a step waits for one thing before it says that it did not happen.
WAIT_LIMIT_MS = 45_000


def first_start() -> bool:
    """Whether the tour has never been offered on this machine; it is offered once."""
    return not theme.app_settings().value("tour/offered", False, bool)


def remember_offered() -> None:
    theme.app_settings().setValue("tour/offered", True)


class TourStage(Protocol):
    """The demo server's side of the tour (``sync.server.stage``), each call a future
    of its result."""

    def quiet(self, on: bool) -> Future[None]: ...

    def writable(self, peer_ids: list[int]) -> Future[list[int]]: ...

    def say(self, peer_id: int) -> Future[int | None]: ...

    def read_elsewhere(self, peer_id: int) -> Future[bool]: ...

    def drop_connections(self, peer_id: int, messages: int) -> Future[list[int]]: ...

    def too_long(self, peer_id: int, messages: int) -> Future[list[int]]: ...


class StepImpossible(Exception):  # noqa: N818 - it reads as what the card says
    """The step cannot happen here (no chat of the kind it needs): said on its card."""


@dataclass(frozen=True, slots=True)
class Wait:
    """Wait until ``ready()`` returns something true, and send that into the script;
    ``doing`` tells the reader what is awaited."""

    ready: Callable[[], object]
    doing: str


@dataclass(frozen=True, slots=True)
class Beat:
    """A pause of ``ms`` milliseconds (times the context's beat scale)."""

    ms: int
    doing: str = ""


#: A step's script: yields what it waits for, returns the line that says what happened.
Script = Generator[Wait | Beat, object, str]


@dataclass(frozen=True, slots=True)
class TourStep:
    title: str
    #: What will happen, and where to look.
    text: str
    #: ``None``: a page to read, where nothing happens (the welcome).
    script: Callable[[TourContext], Script] | None = None


class TourRunner(QObject):
    """Runs one step's script at a time on a timer."""

    #: What the step waits for now.
    doing = Signal(str)
    #: The step is done: what it found.
    done = Signal(str)
    #: The step could not go on: why.
    failed = Signal(str)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        beat_scale: float = 1.0,
        guard: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(parent)
        self.beat_scale = beat_scale
        #: Called before each look at a wait: raises ``StepImpossible`` when the reader
        #: did something that the step cannot go on after (opened another chat).
        self.guard = guard
        self._script: Script | None = None
        self._waiting: Wait | None = None
        self._waited_ms = 0
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._beat = QTimer(self)
        self._beat.setSingleShot(True)
        self._beat.timeout.connect(lambda: self._advance(None))
        #: The last step's outcome: its closing line, or the reason it failed.
        self.outcome: str | None = None
        self.succeeded = False

    @property
    def running(self) -> bool:
        return self._script is not None

    def run(self, script: Script) -> None:
        self.stop()
        self.outcome, self.succeeded = None, False
        self._script = script
        self._advance(None)

    def stop(self) -> None:
        self._timer.stop()
        self._beat.stop()
        script, self._script, self._waiting = self._script, None, None
        if script is not None:
            script.close()

    def _advance(self, value: object) -> None:
        script = self._script
        if script is None:
            return
        try:
            wanted = script.send(value)
        except StopIteration as finished:
            self._finish(str(finished.value or ""), succeeded=True)
            return
        except StepImpossible as impossible:
            self._finish(str(impossible), succeeded=False)
            return
        except Exception as error:  # noqa: BLE001 - a step that breaks says so on its card
            self._finish(f"The step stopped: {error}", succeeded=False)
            return
        if wanted.doing:
            self.doing.emit(wanted.doing)
        if isinstance(wanted, Beat):
            self._beat.start(max(0, round(wanted.ms * self.beat_scale)))
            return
        self._waiting, self._waited_ms = wanted, 0
        self._timer.start()

    @Slot()
    def _tick(self) -> None:
        waiting = self._waiting
        if waiting is None:
            self._timer.stop()
            return
        try:
            self.guard()
            value = waiting.ready()
        except StepImpossible as impossible:
            self._finish(str(impossible), succeeded=False)
            return
        except Exception as error:  # noqa: BLE001 - as above
            self._finish(f"The step stopped: {error}", succeeded=False)
            return
        if value:
            self._timer.stop()
            self._waiting = None
            self._advance(value)
            return
        self._waited_ms += TICK_MS
        if self._waited_ms >= WAIT_LIMIT_MS:
            what = waiting.doing.rstrip("…. ")
            self._finish(f"Nothing came of it in {WAIT_LIMIT_MS // 1000} s ({what}).", False)

    def _finish(self, outcome: str, succeeded: bool) -> None:
        self._timer.stop()
        self._script = self._waiting = None
        self.outcome, self.succeeded = outcome, succeeded
        (self.done if succeeded else self.failed).emit(outcome)


class TourCard(QFrame):
    """The tour's card: which step, what it does, what it waits for or found, and the
    buttons to go back, run it again, go on or leave."""

    def __init__(self, steps: list[TourStep], context: TourContext) -> None:
        super().__init__()
        self.setObjectName("tour")
        self.steps = steps
        self.context = context
        self.position = 0
        self.runner = TourRunner(self, beat_scale=context.beat_scale, guard=context.guard)
        self.runner.doing.connect(self._doing)
        self.runner.done.connect(self._done)
        self.runner.failed.connect(self._failed)

        self.counter = QLabel()
        self.counter.setObjectName("caption")
        close = QPushButton("✕")
        close.setObjectName("flat")
        close.setToolTip("Leave the tour (it stays in the ? menu)")
        close.clicked.connect(self.finish)
        self.title = QLabel()
        self.title.setObjectName("section")
        self.title.setWordWrap(True)
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.status = QLabel()
        self.status.setObjectName("caption")
        self.status.setWordWrap(True)
        self.back_button = QPushButton("Back")
        self.back_button.clicked.connect(lambda: self.show_step(self.position - 1))
        self.again_button = QPushButton("Again")
        self.again_button.setToolTip("Make it happen once more")
        self.again_button.clicked.connect(lambda: self.show_step(self.position))
        self.next_button = QPushButton("Next")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self._next)

        top = QHBoxLayout()
        top.addWidget(self.counter, 1)
        top.addWidget(close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.back_button)
        buttons.addStretch(1)
        buttons.addWidget(self.again_button)
        buttons.addWidget(self.next_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 8, 12, 10)
        column.setSpacing(6)
        column.addLayout(top)
        column.addWidget(self.title)
        column.addWidget(self.body)
        column.addWidget(self.status)
        column.addLayout(buttons)

    @property
    def step(self) -> TourStep:
        return self.steps[self.position]

    def show_step(self, position: int) -> None:
        """Show step ``position`` and make it happen. The demo's live traffic pauses
        while a step runs, so its event stands out, and goes on while a page is read."""
        self.runner.stop()
        self.context.tidy()
        self.position = max(0, min(position, len(self.steps) - 1))
        step = self.step
        self.context.stage.quiet(step.script is not None)
        acts = [position for position, s in enumerate(self.steps) if s.script is not None]
        if step.script is None:
            self.counter.setText(f"Guided tour · {len(acts)} steps")
        else:
            self.counter.setText(f"Guided tour · {acts.index(self.position) + 1} of {len(acts)}")
        self.title.setText(step.title)
        self.body.setText(step.text)
        self.status.setText("")
        self.back_button.setVisible(self.position > 0)
        self.again_button.setVisible(step.script is not None)
        self.again_button.setEnabled(False)
        last = self.position == len(self.steps) - 1
        self.next_button.setText("Finish" if last else "Start" if step.script is None else "Next")
        if step.script is not None:
            self.runner.run(step.script(self.context))

    @Slot()
    def _next(self) -> None:
        if self.position == len(self.steps) - 1:
            self.finish()
        else:
            self.show_step(self.position + 1)

    @Slot()
    def finish(self) -> None:
        self.runner.stop()
        self.context.tidy()
        self.context.stage.quiet(False)
        self.hide()

    @Slot(str)
    def _doing(self, text: str) -> None:
        self.status.setText(f"⋯ {text}")

    @Slot(str)
    def _done(self, text: str) -> None:
        self.status.setText(f"✓ {text}")
        self._ended()

    @Slot(str)
    def _failed(self, text: str) -> None:
        self.status.setText(f"✗ {text}")
        self._ended()

    def _ended(self) -> None:
        """A step has run: the traffic goes on while its outcome is read."""
        self.again_button.setEnabled(True)
        self.context.stage.quiet(False)
