"""The compose box: a text field that grows with its text up to a few lines, sends on
Enter and starts a new line on Shift+Enter, counts characters near the limit, and holds
no more than a draft may (``MAX_DRAFT_LENGTH``: a longer paste is cut there)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QResizeEvent, QShowEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QPlainTextEdit, QSizePolicy

from client import MAX_DRAFT_LENGTH
from ui.chat_interface import length_hint
from ui.theme import current_theme

__all__ = ["MAX_LINES", "ComposeBox", "TypingGoesToCompose"]

#: The most lines the box grows to; past them its text scrolls.
MAX_LINES = 8


class ComposeBox(QPlainTextEdit):
    #: Enter was pressed (without Shift): send what is typed.
    submitted = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("composeBox")
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        #: The characters count, shown next to the send button near the limit.
        self.counter = QLabel()
        self.counter.setObjectName("caption")
        self.counter.hide()
        self.textChanged.connect(self._on_text_changed)
        self._placeholders: tuple[str, ...] = ()
        self._fit_height()

    def set_placeholders(self, *texts: str) -> None:
        """The placeholder: the first of ``texts`` (longest first) that fits on the
        box's one line at its width, else the last; chosen again as the box resizes."""
        self._placeholders = texts
        self._fit_placeholder()

    def _fit_placeholder(self) -> None:
        if not self._placeholders:
            return
        room = self.viewport().width() - 2 * int(self.document().documentMargin())
        metrics = self.fontMetrics()
        fitting = (t for t in self._placeholders if metrics.horizontalAdvance(t) <= room)
        chosen = next(fitting, self._placeholders[-1])
        if self.placeholderText() != chosen:
            self.setPlaceholderText(chosen)

    # The rest of the pane speaks of the box as of a one-line field.
    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # noqa: N802 - as QLineEdit's
        if text == self.toPlainText():
            return
        self.setPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        super().keyPressEvent(event)

    def visible_lines(self) -> int:
        """The lines the text takes at the box's width (wrapped lines count)."""
        lines = 0
        block = self.document().firstBlock()
        while block.isValid():
            layout = block.layout()
            lines += max(1, layout.lineCount() if layout is not None else 1)
            block = block.next()
        return max(1, lines)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt
        hint = super().sizeHint()
        return QSize(hint.width(), self._height_for(self.visible_lines()))

    def _height_for(self, lines: int) -> int:
        # What the border and the style sheet's padding add above and below the text.
        margins = self.contentsMargins()
        chrome = margins.top() + margins.bottom()
        document = int(self.document().documentMargin() * 2)
        text = min(lines, MAX_LINES) * self.fontMetrics().lineSpacing()
        return text + document + chrome

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        self._fit_height()  # a narrower box wraps into more lines
        self._fit_placeholder()

    def _fit_height(self) -> None:
        lines = self.visible_lines()
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if lines > MAX_LINES
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        height = self._height_for(lines)
        if self.height() != height:
            self.setFixedHeight(height)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt
        super().showEvent(event)
        self._fit_height()  # the style sheet's padding is known once shown
        self._fit_placeholder()

    @Slot()
    def _on_text_changed(self) -> None:
        if self.document().characterCount() - 1 > MAX_DRAFT_LENGTH:
            # What is past the limit goes (its draft could not be kept): this edit
            # changes the text again, and that change is the one shown.
            cursor = QTextCursor(self.document())
            cursor.setPosition(MAX_DRAFT_LENGTH)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            return
        self._fit_height()
        hint = length_hint(self.toPlainText())
        if hint is None:
            self.counter.hide()
            return
        text, over = hint
        self.counter.setText(text)
        self.counter.setProperty("over", over)
        self.counter.setStyleSheet(f"color: {current_theme().warning};" if over else "")
        self.counter.show()


class TypingGoesToCompose(QObject):
    """Typing while the chat list or the history has the focus writes in the compose
    box, as in Telegram Desktop, instead of jumping to a chat whose name starts with the
    letter typed (a list view's own type-ahead)."""

    def __init__(self, compose: ComposeBox) -> None:
        super().__init__(compose)
        self._compose = compose

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        shortcut = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
        text = event.text()
        compose = self._compose
        if (
            not text
            or not text.isprintable()
            or event.modifiers() & (shortcut | Qt.KeyboardModifier.MetaModifier)
        ):
            return False
        if compose.isEnabled() and compose.isVisibleTo(compose.window()):
            compose.setFocus()
            QApplication.sendEvent(compose, event)
        return True  # with no box to write in (a channel one reads), the key does nothing
