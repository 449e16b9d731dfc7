"""The confirmation before messages are deleted, as Telegram Desktop shows it.

``DeleteDialog(question, rows, parent)`` asks "Delete 3 messages?" with, where the
account may, a ticked checkbox to delete them for the other side too, and the buttons
Cancel and Delete (the default, drawn as the destructive action). It does not delete:
whoever opens it (``open()``, which does not block) deletes on ``accepted``, reading
``rows`` and ``for_everyone``.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ui.delete_question import DeleteQuestion
from ui.rows import MessageRow

__all__ = ["DeleteDialog"]


class DeleteDialog(QDialog):
    """Asks before ``rows`` are deleted; ``accepted`` means delete them."""

    def __init__(
        self, question: DeleteQuestion, rows: Sequence[MessageRow], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("deleteDialog")
        self.setWindowTitle("Delete")
        self.rows = tuple(rows)
        self.heading = QLabel(question.title)
        self.heading.setObjectName("title")
        self.note = QLabel(question.note)
        self.note.setWordWrap(True)
        self.revoke: QCheckBox | None = None
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("flat")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self.reject)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setObjectName("destructive")
        self.delete_button.setDefault(True)
        self.delete_button.clicked.connect(self.accept)
        column = QVBoxLayout(self)
        column.setContentsMargins(22, 18, 18, 14)
        column.setSpacing(12)
        column.addWidget(self.heading)
        column.addWidget(self.note)
        if question.revoke_label is not None:
            self.revoke = QCheckBox(question.revoke_label)
            self.revoke.setChecked(True)
            column.addWidget(self.revoke)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.delete_button)
        column.addLayout(buttons)
        self.setMinimumWidth(340)

    @property
    def for_everyone(self) -> bool:
        """Delete for the other side too: offered and left ticked."""
        return self.revoke is not None and self.revoke.isChecked()
