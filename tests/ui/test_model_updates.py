"""A model fed snapshot after snapshot holds what a model built from the last one holds,
and tells its views exactly how it got there (no reset, signals that add up)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QModelIndex, Qt, QtMsgType, qInstallMessageHandler
from PySide6.QtTest import QAbstractItemModelTester

from postbox import ViewUpdateType
from ui.models import ROW_ROLE, ChatListModel
from ui.rows import ChatRow

pytestmark = pytest.mark.gui

ROLES = (ROW_ROLE, int(Qt.ItemDataRole.DisplayRole), int(Qt.ItemDataRole.AccessibleTextRole))
UPDATES = (ViewUpdateType.GENERIC, ViewUpdateType.FILL_HOLE, ViewUpdateType.INITIAL)


def chat(key: int, version: int) -> ChatRow:
    return ChatRow(
        key, key, f"Chat {key}", "C", "#e17076", f"message {version}", "12:00", version % 3,
        False, False, False, False,
    )  # fmt: skip


@st.composite
def snapshot_sequences(draw: st.DrawFn) -> list[list[ChatRow]]:
    """Snapshots as a chat list gives them: chats come, go, move and change, and a row
    that did not change is often the very object of the snapshot before."""
    snapshots: list[list[ChatRow]] = []
    previous: dict[int, ChatRow] = {}
    for _ in range(draw(st.integers(1, 6))):
        keys = draw(st.lists(st.integers(0, 30), unique=True, max_size=25))
        similar = draw(st.booleans())
        if previous and similar:
            # Mostly the same list: a few chats move to the top, some fall off the end.
            kept = [k for k in previous if draw(st.integers(0, 4)) > 0]
            top = draw(st.lists(st.integers(0, 40), unique=True, max_size=4))
            keys = [*top, *(k for k in kept if k not in top)]
        rows = []
        for key in keys:
            old = previous.get(key)
            choice = draw(st.integers(0, 2))
            if old is not None and choice == 0:
                rows.append(old)  # the same object
            elif old is not None and choice == 1:
                rows.append(dataclasses.replace(old))  # equal, another object
            else:
                rows.append(chat(key, draw(st.integers(0, 3))))
        snapshots.append(rows)
        previous = {row.peer_id: row for row in rows}
    return snapshots


class Shadow:
    """What a view knows of the model, learnt only from its signals."""

    def __init__(self, model: ChatListModel) -> None:
        self.model = model
        self.rows: list[object] = []
        self.resets = 0
        model.rowsInserted.connect(self._inserted)
        model.rowsRemoved.connect(self._removed)
        model.rowsMoved.connect(self._moved)
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(self._reset)

    def _row(self, row: int) -> object:
        return self.model.data(self.model.index(row, 0), ROW_ROLE)

    def _inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        self.rows[first:first] = [self._row(r) for r in range(first, last + 1)]

    def _removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        del self.rows[first : last + 1]

    def _moved(self, _p: QModelIndex, start: int, end: int, _d: QModelIndex, to: int) -> None:
        moved = self.rows[start : end + 1]
        del self.rows[start : end + 1]
        at = to if to < start else to - len(moved)
        self.rows[at:at] = moved

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            self.rows[row] = self._row(row)

    def _reset(self) -> None:
        self.resets += 1
        self.rows = [self._row(r) for r in range(self.model.rowCount())]


def every_value(model: ChatListModel) -> list[tuple[object, ...]]:
    return [
        tuple(model.data(model.index(row, 0), role) for role in ROLES)
        for row in range(model.rowCount())
    ]


@settings(max_examples=150, deadline=None)
@given(snapshot_sequences(), st.lists(st.sampled_from(UPDATES), min_size=6, max_size=6))
def test_snapshots_applied_in_turn_equal_the_last_applied_at_once(qapp, snapshots, updates):
    warnings: list[str] = []

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        if kind != QtMsgType.QtDebugMsg:
            warnings.append(message)

    previous_handler = qInstallMessageHandler(handler)
    try:
        model = ChatListModel()
        tester = QAbstractItemModelTester(
            model, QAbstractItemModelTester.FailureReportingMode.Warning
        )
        shadow = Shadow(model)
        for rows, update in zip(snapshots, updates, strict=False):
            model.apply(rows, update)
            assert list(model.rows) == rows
            assert shadow.rows == rows
        fresh = ChatListModel()
        fresh.apply(snapshots[-1], ViewUpdateType.INITIAL)
        assert every_value(model) == every_value(fresh)
        assert shadow.resets == 0
        del tester
    finally:
        qInstallMessageHandler(previous_handler)
    assert warnings == []


def test_rows_that_are_the_same_objects_cost_no_change(qapp) -> None:
    rows = [chat(k, 0) for k in range(5)]
    model = ChatListModel()
    model.apply(rows, ViewUpdateType.INITIAL)
    assert model.apply(list(rows), ViewUpdateType.GENERIC) == []
