"""Input to paint under load: a key typed into the compose box, a wheel turned on a list.

``InputProbe`` runs beside the push-to-paint traffic. Every ``period`` it posts one
event to the main thread's queue, as the window system would deliver it, and times it
to the end of the first paint that shows its effect:

* **keypress**: a ``QKeyEvent`` with a letter posted to the compose box, until the end
  of the compose box's first paint whose text holds that letter;
* **wheel**: a ``QWheelEvent`` posted to the viewport of the chat history (up, from
  the bottom) or of the chat list (down, from the top), in turn, until the end of that
  viewport's first paint after its scroll bar moved. Once painted, the view goes back
  to its live end (the history's bottom, the list's top), as a reader who glanced away
  would, so the push-to-paint figures measured at the same time still see new rows.

A paint is timed where it ends: the probe's event filter runs the widget's own paint
handler and then stops the event. An event the widget ignored (no scroll possible)
is dropped from the figures and counted apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget

from ui.compose_box import ComposeBox

__all__ = ["InputProbe", "InputTimes"]

#: Letters typed; the compose box is emptied when it holds this many.
_MAX_TEXT = 40


@dataclass
class InputTimes:
    """Milliseconds from posting an event to the end of the paint that showed it."""

    keypress: list[float] = field(default_factory=list)
    wheel_history: list[float] = field(default_factory=list)
    wheel_chat_list: list[float] = field(default_factory=list)
    #: Events posted that no paint showed before the next one was due.
    unshown: int = 0


class _PaintTimer(QObject):
    """Runs a widget's paint itself and reports when it ended."""

    def __init__(
        self, widget: QWidget, probe: InputProbe, *, text_area: ComposeBox | None = None
    ) -> None:
        super().__init__(widget)
        self._widget = widget
        self._text_area = text_area
        self._probe = probe
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if watched is not self._widget or not self._probe.waiting_on(self._widget):
            return False
        if event.type() == QEvent.Type.Wheel:
            self._probe.wheel_delivered()
            return False
        if event.type() != QEvent.Type.Paint:
            return False
        assert isinstance(event, QPaintEvent)
        # The widget's own paint handler, then the time: the event is handled here. The
        # compose box paints its text on its viewport, through its own viewport handler.
        if self._text_area is not None:
            self._text_area.viewportEvent(event)
        else:
            type(self._widget).paintEvent(self._widget, event)
        self._probe.painted(self._widget, time.monotonic())
        return True


class InputProbe:
    """Posts a key or wheel event every ``period_ms`` while ``active``, in turn."""

    def __init__(
        self,
        compose: ComposeBox,
        history: QAbstractItemView,
        chat_list: QAbstractItemView,
        *,
        period_ms: int = 97,
    ) -> None:
        self.times = InputTimes()
        self.active = False
        self._compose = compose
        self._views = {"history": history, "chat_list": chat_list}
        self._timers = [
            _PaintTimer(compose.viewport(), self, text_area=compose),
            _PaintTimer(history.viewport(), self),
            _PaintTimer(chat_list.viewport(), self),
        ]
        #: The event under way: (kind, widget painted, posted at, what to wait for).
        self._pending: tuple[str, QWidget, float, object] | None = None
        self._turn = 0
        self._letter = 0
        self._timer = QTimer()
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self._post_next)

    def start(self) -> None:
        self.active = True
        self._timer.start()

    def stop(self) -> None:
        self.active = False
        self._timer.stop()
        self._pending = None

    def waiting_on(self, widget: QWidget) -> bool:
        return self._pending is not None and self._pending[1] is widget

    def painted(self, widget: QWidget, now: float) -> None:
        pending = self._pending
        if pending is None or pending[1] is not widget:
            return
        kind, _widget, posted, expected = pending
        if kind == "keypress":
            if not self._compose.text().endswith(str(expected)):
                return
            self.times.keypress.append((now - posted) * 1e3)
        else:
            bar = self._views[kind].verticalScrollBar()
            if expected is None or bar.value() == expected:
                return  # not delivered yet, or a paint before the scroll
            samples = self.times.wheel_history if kind == "history" else self.times.wheel_chat_list
            samples.append((now - posted) * 1e3)
            QTimer.singleShot(0, self._back_to_live_end)
        self._pending = None

    def _back_to_live_end(self) -> None:
        self._views["history"].scrollToBottom()
        self._views["chat_list"].verticalScrollBar().setValue(0)

    def wheel_delivered(self) -> None:
        """The wheel reaches its view now: the scroll bar's value before it moves."""
        pending = self._pending
        if pending is not None and pending[0] != "keypress" and pending[3] is None:
            bar = self._views[pending[0]].verticalScrollBar()
            self._pending = (pending[0], pending[1], pending[2], bar.value())

    def _post_next(self) -> None:
        if not self.active:
            return
        if self._pending is not None:
            self.times.unshown += 1
            self._pending = None
        kind = ("keypress", "history", "keypress", "chat_list")[self._turn % 4]
        self._turn += 1
        if kind == "keypress":
            self._post_key()
        else:
            self._post_wheel(kind)

    def _post_key(self) -> None:
        if len(self._compose.text()) >= _MAX_TEXT:
            self._compose.clear()
        letter = "abcdefghijklmnopqrstuvwxyz"[self._letter % 26]
        self._letter += 1
        key = Qt.Key(int(Qt.Key.Key_A) + (ord(letter) - ord("a")))
        modifiers = Qt.KeyboardModifier.NoModifier
        press = QKeyEvent(QEvent.Type.KeyPress, key, modifiers, letter)
        release = QKeyEvent(QEvent.Type.KeyRelease, key, modifiers, letter)
        self._pending = ("keypress", self._compose.viewport(), time.monotonic(), letter)
        QApplication.postEvent(self._compose, press)
        QApplication.postEvent(self._compose, release)

    def _post_wheel(self, kind: str) -> None:
        view = self._views[kind]
        viewport = view.viewport()
        down = kind == "chat_list"
        at = QPointF(viewport.width() / 2, viewport.height() / 2)
        wheel = QWheelEvent(
            at,
            QPointF(viewport.mapToGlobal(at.toPoint())),
            QPoint(0, 0),
            QPoint(0, -120 if down else 120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        self._pending = (kind, viewport, time.monotonic(), None)
        QApplication.postEvent(viewport, wheel)
