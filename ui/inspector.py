"""The inspector: what the database and the sync engine are doing, as it happens.

* **Sync**: the connection, the operation running, the state manager's queue, fills
  in flight and messages waiting to go out (polled from the engine), and the cursor
  (pts, qts, seq, date) from a live ``StateViewKey`` view.
* **Hole map** of the open chat: its id ranges, newest first: stored (with how many
  messages), holes, and holes being fetched; the range the window shows is outlined.
* **Transactions**: the last commits, what each changed, and every view it made
  re-emit with the update type (``Postbox.add_replay_listener``).
"""

from __future__ import annotations

import datetime as dt
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from PySide6.QtCore import QModelIndex, QRect, QRectF, QSignalBlocker, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolTip,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from client import EngineStatus, HoleSegment, SegmentKind
from client.slow_motion import SlowMotion
from postbox import (
    ChatListHolesEntry,
    ClosedRange,
    CombinedView,
    MessageHistoryHolesEntry,
    MessageHistoryView,
    PeerId,
    ReplayReport,
    StateViewKey,
    Transaction,
)
from ui.account_port import AccountLike
from ui.feed import SnapshotFeed
from ui.futures import FutureRelay
from ui.hole_bar import BarLayout, bar_layout
from ui.theme import current_theme, qcolor
from ui.transactions import (
    CommitEntry,
    TransactionLog,
    commit_detail,
    describe_commit,
    unknown_peer_name,
)

__all__ = ["CommitRecorder", "HoleMapWidget", "InspectorPanel"]

#: How often the panel asks the engine for its state while shown.
POLL_MS = 250
_SEGMENT_COLORS = {
    SegmentKind.STORED: "#4fae4e",
    SegmentKind.HOLE: "#9aa3ad",
    SegmentKind.FETCHING: "#f0a030",
}


_HOLE_MAP_TIP = (
    "The open chat's message ids, oldest on the left. Green: ranges stored here. Grey: a"
    " hole, ids the server may have that this database does not. Orange: a hole being"
    " fetched. The outline is the window the chat shows; scrolling into a hole makes"
    " the filler fetch it, and the hole turns green."
)
_SLOW_MOTION_TIP = (
    "The demo's server holds every answer and push this long: scroll into a hole to watch"
    " the loading row, the fetch in flight (orange on the hole map) and the FillHole that"
    " puts the messages in place, while live messages still slide in as Generic."
)
_TERMS_TIP = (
    "A commit is one Postbox transaction. Its change record lists what it stored; the"
    " views watching those parts (topics) are consulted, replay it against their window,"
    " and re-emit only if their window changed. Update types: Generic (a live change,"
    " animated), FillHole (a hole filled, rows in place), UpdateVisible (the window moved),"
    " Initial and InitialUnread (first snapshots). Blue lines: views a live change"
    " re-emitted (Generic); grey: views re-emitted in place, or consulted and silent."
    " A hole: ids the server may have and this database does not, kept per space (the"
    " whole history, or one media tag's). Cursor: pts counts the account's changes, qts"
    " its secret-chat events, seq the server's containers. Operation log (tag N): the"
    " queue of work a tag names (reads to send, validations)."
)
_OPERATION_TIP = (
    "The sync engine's state manager runs one operation at a time, in the seeds' order:"
    " pollDifference (getDifference: what changed since the stored pts), processUpdateGroups"
    " (pushes checked against pts, qts and seq, then applied), pollChannels (a channel's"
    " difference), custom (work that must not interleave with the others, such as checking"
    " read states with the server), processEvents (what the replay asks for next)."
)
_HEADLINE_TIP = (
    "Views open: every live query on screen. Consulted: the views watching something this"
    " commit touched (found through the topic index, without asking the others). Silent:"
    " consulted views whose window did not change, so they sent nothing."
)
_SILENT_TIP = "Views the commit concerned that replayed it and found their window unchanged."
_UPDATE_TIPS = {
    "Generic": "A live change (a new message, an edit, a read): rows animate in.",
    "Initial": "The view's first snapshot.",
    "InitialUnread": "The first snapshot, anchored at the first unread message.",
    "FillHole": "A hole in the window was filled from the server: rows appear in place.",
    "UpdateVisible": "The window moved or reloaded (scrolling, a jump): rows appear in place.",
}


class CommitRecorder:
    """The last replay reports, kept on the postbox thread at the cost of an append; the
    panel describes them only when it is shown, so a hidden inspector costs the main
    thread nothing per commit."""

    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self._reports: deque[tuple[ReplayReport, float]] = deque(maxlen=limit)

    def report(self, report: ReplayReport) -> None:  # on the postbox thread
        with self._lock:
            self._reports.append((report, time.time()))

    def take(self) -> list[tuple[ReplayReport, float]]:
        with self._lock:
            reports = list(self._reports)
            self._reports.clear()
        return reports


class HoleMapWidget(QWidget):
    """The open chat's id space: a bar, oldest ids on the left (stored ranges, holes,
    fetches in flight, the window outlined; ``ui.hole_bar``), then one row per segment,
    newest first, with its ids and what it stores."""

    #: The bar's height and the space under it for its end labels, in pixels.
    BAR = 18

    def __init__(self) -> None:
        super().__init__()
        self.segments: list[HoleSegment] = []
        self.shown_range: ClosedRange | None = None
        self.layout_of_bar: BarLayout | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setToolTip(_HOLE_MAP_TIP)

    def set_map(self, segments: Sequence[HoleSegment], window: ClosedRange | None) -> None:
        self.segments = list(segments)
        self.shown_range = window
        self.updateGeometry()
        self.update()

    def _row_height(self) -> int:
        return QFontMetrics(self.font()).height() + 8

    def _bar_area(self) -> int:
        return self.BAR + QFontMetrics(self.font()).height() + 8 if self.segments else 0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt
        rows = max(1, len(self.segments)) * self._row_height()
        return QSize(240, self._bar_area() + rows + 4)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        theme = current_theme()
        height = self._row_height()
        if not self.segments:
            painter.setPen(qcolor(theme.muted))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no chat open")
            return
        self._paint_bar(painter)
        top = self._bar_area()
        for position, segment in enumerate(self.segments):
            row = QRect(2, top + 2 + position * height, self.width() - 4, height - 3)
            painter.setPen(Qt.PenStyle.NoPen)
            color = QColor(_SEGMENT_COLORS[segment.kind])
            color.setAlpha(60)
            painter.setBrush(color)
            painter.drawRoundedRect(row, 5, 5)
            chip = QRect(row.left() + 6, row.top() + (row.height() - 10) // 2, 10, 10)
            painter.setBrush(QColor(_SEGMENT_COLORS[segment.kind]))
            painter.drawEllipse(chip)
            window = self.shown_range
            shown = window is not None and window.overlaps(
                ClosedRange(segment.lower, segment.upper)
            )
            if shown and segment.kind is SegmentKind.STORED:
                painter.setPen(qcolor(theme.accent))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRoundedRect(row, 5, 5)
            painter.setPen(qcolor(theme.text))
            label = segment.label() + ("   ◀ window" if shown else "")
            painter.drawText(
                row.adjusted(22, 0, -4, 0),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                label,
            )

    def _paint_bar(self, painter: QPainter) -> None:
        theme = current_theme()
        inset = 4
        layout = bar_layout(self.segments, self.shown_range, self.width() - 2 * inset)
        self.layout_of_bar = layout
        painter.setPen(Qt.PenStyle.NoPen)
        for span in layout.spans:
            painter.setBrush(QColor(_SEGMENT_COLORS[span.segment.kind]))
            painter.drawRect(QRectF(inset + span.left, 2, span.right - span.left - 1, self.BAR))
        if layout.window is not None:
            left, right = layout.window
            painter.setPen(QPen(qcolor(theme.accent), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(inset + left, 1, right - left, self.BAR + 2))
        painter.setPen(qcolor(theme.muted))
        labels = QRect(inset, self.BAR + 4, self.width() - 2 * inset, self.BAR)
        painter.drawText(labels, Qt.AlignmentFlag.AlignLeft, "id 1")
        if layout.spans:
            newest = f"id {layout.spans[-1].upper:,}"
            painter.drawText(labels, Qt.AlignmentFlag.AlignRight, newest)
        painter.drawText(labels, Qt.AlignmentFlag.AlignHCenter, "widths: log of the ids")


class InspectorPanel(QWidget):
    def __init__(
        self,
        account: AccountLike,
        relay: FutureRelay,
        names: Callable[[PeerId], str],
        slow_motion: SlowMotion | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("inspector")
        self.account = account
        self._relay = relay
        self._names = names
        self.log = TransactionLog(limit=60)
        self._log_dirty = False
        #: Commits logged since the tree was drawn; the whole tree is drawn anew when
        #: the panel is shown again.
        self._unrendered = 0
        self._render_all = True
        self.peer_id: PeerId | None = None
        self._history: MessageHistoryView | None = None
        self._fetching: tuple[MessageHistoryHolesEntry | ChatListHolesEntry, ...] = ()
        self._map_pending = False
        #: The filter and pause as the reader had them before ``point_at``.
        self._before_pointing: tuple[str, bool] | None = None
        #: The map changed while it was being read: read it again.
        self._map_stale = False
        #: Names read from the database for peers the window does not list.
        self._known_names: dict[int, str] = {}
        self._unknown: set[PeerId] = set()
        self._names_pending = False
        self.setMinimumWidth(300)

        self.connection = QLabel("connection: …")
        self.connection.setWordWrap(True)
        self.operation = QLabel("operation: idle")
        self.operation.setToolTip(_OPERATION_TIP)
        self.queue = QLabel("queue: empty")
        self.queue.setWordWrap(True)
        self.queue.setToolTip(_OPERATION_TIP)
        self.work = QLabel("")
        self.cursor_label = QLabel("cursor: none yet")
        self.hole_map = HoleMapWidget()
        self.hole_caption = QLabel("")
        self.hole_caption.setObjectName("caption")
        self.transactions = QTreeWidget()
        self.transactions.setHeaderLabels(["commit", "what changed / view re-emitted"])
        # Wide enough for "#123456 12:34:56" in the panel's font, at any size.
        stamp = self.transactions.fontMetrics().horizontalAdvance("#000000 00:00:00")
        self.transactions.setColumnWidth(0, stamp + 28)
        self.transactions.setUniformRowHeights(True)

        top = QWidget()
        column = QVBoxLayout(top)
        column.setContentsMargins(12, 10, 12, 4)
        sections: list[tuple[str, list[QWidget]]] = [
            ("Sync", [self.connection, self.operation, self.queue, self.work, self.cursor_label]),
            ("Hole map of the open chat", [self.hole_map, self.hole_caption]),
        ]
        self.slow_motion = slow_motion
        self.slow_button: QPushButton | None = None
        self._stop_watching_slow_motion: Callable[[], None] = lambda: None
        if slow_motion is not None:
            button = QPushButton(slow_motion.label)
            button.setObjectName("toggle")  # filled while on
            button.setCheckable(True)
            button.setChecked(slow_motion.on)
            button.setToolTip(_SLOW_MOTION_TIP)
            button.toggled.connect(self._slow_motion_toggled)
            self.slow_button = button
            # Another window of the demo may switch it: this button follows.
            self._stop_watching_slow_motion = slow_motion.watch(self._slow_motion_switched)
        for title, widgets in sections:
            heading = QLabel(title)
            heading.setObjectName("section")
            if title == "Sync" and self.slow_button is not None:
                row = QHBoxLayout()
                row.addWidget(heading, 1)
                row.addWidget(self.slow_button)
                column.addLayout(row)
            else:
                column.addWidget(heading)
            for widget in widgets:
                column.addWidget(widget)
        column.addStretch(1)
        bottom = QWidget()
        lower = QVBoxLayout(bottom)
        lower.setContentsMargins(12, 0, 12, 8)
        heading = QLabel("Transactions (newest first)")
        heading.setObjectName("section")
        heading.setToolTip(_TERMS_TIP)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setObjectName("toggle")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Hold the list still; commits go on and show on resume.")
        self.pause_button.toggled.connect(self._paused)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: a chat or a view (history, chat list…)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_changed)
        self.legend_button = QPushButton("?")
        self.legend_button.setObjectName("flat")
        self.legend_button.setToolTip(_TERMS_TIP)
        self.legend_button.clicked.connect(self._show_legend)
        controls = QHBoxLayout()
        controls.addWidget(heading, 1)
        controls.addWidget(self.legend_button)
        controls.addWidget(self.pause_button)
        lower.addLayout(controls)
        lower.addWidget(self.filter)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setPlaceholderText("Select a commit to read it whole here.")
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.transactions.currentItemChanged.connect(self._commit_selected)
        commits = QSplitter(Qt.Orientation.Vertical)
        commits.setChildrenCollapsible(False)
        commits.addWidget(self.transactions)
        commits.addWidget(self.detail)
        commits.setSizes([300, 110])
        lower.addWidget(commits, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([330, 420])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        self._recorder = CommitRecorder(limit=self.log.limit)
        self._remove_listener = account.postbox.add_replay_listener(self._recorder.report)
        self._state_key = StateViewKey()
        self._state_feed = SnapshotFeed(account.postbox, [self._state_key], self._state_changed)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()

    # -- transactions --------------------------------------------------------------------

    def _take_reports(self) -> None:
        touched_open_chat = False
        for report, at in self._recorder.take():
            self.log.add(describe_commit(report, self._name, at=at))
            self._unrendered += 1
            self._log_dirty = True
            touched_open_chat |= self.peer_id in report.change.message_operations
        if touched_open_chat:
            self._request_hole_map()

    def _name(self, peer_id: PeerId) -> str:
        """A peer's name: the window's, else one read from the database (looked up in
        the background the first time, so later commits name it)."""
        known = self._known_names.get(int(peer_id))
        if known is not None:
            return known
        shown = self._names(peer_id)
        if shown == unknown_peer_name(peer_id):
            self._unknown.add(peer_id)
        return shown

    def _look_up_names(self) -> None:
        unknown, self._unknown = list(self._unknown), set()
        if not unknown or self._names_pending:
            self._unknown.update(unknown)
            return
        self._names_pending = True

        def read(tx: Transaction) -> dict[int, str]:
            peers = ((peer_id, tx.get_peer(peer_id)) for peer_id in unknown)
            return {int(peer_id): peer.name for peer_id, peer in peers if peer is not None}

        def found(names: dict[int, str]) -> None:
            self._names_pending = False
            self._known_names.update(names)

        def failed(_error: BaseException) -> None:
            self._names_pending = False

        self._relay.watch(self.account.postbox.transaction(read), found, failed)

    @Slot()
    def _show_legend(self) -> None:
        """What the terms mean, on a click as well as on hover."""
        button = self.legend_button
        QToolTip.showText(button.mapToGlobal(button.rect().bottomLeft()), _TERMS_TIP, button)

    @Slot(bool)
    def _paused(self, paused: bool) -> None:
        self.pause_button.setText("Resume" if paused else "Pause")
        if not paused:
            self._render_log()

    @Slot(str)
    def _filter_changed(self, _text: str) -> None:
        self._render_all = self._log_dirty = True
        self._render_log()

    def _matches(self, entry: CommitEntry) -> bool:
        wanted = self.filter.text().strip().lower()
        if not wanted:
            return True
        lines = [*entry.changes, *(view for view, _ in entry.views), *entry.reasons]
        lines += [view for view, _ in entry.silent]
        return any(wanted in line.lower() for line in lines)

    def _render_log(self) -> None:
        """Draw the commits added since the last time at the top of the tree and drop
        those past the log's limit from its bottom: work in proportion to the new
        commits, not to the log (the whole tree only when the panel is shown again, or
        filtered). Paused, the tree stays as it is."""
        if not self._log_dirty or self.pause_button.isChecked():
            return
        self._log_dirty = False
        tree = self.transactions
        fresh, self._unrendered = self._unrendered, 0
        if self.filter.text().strip():
            tree.clear()
            for entry in self.log:
                if self._matches(entry):
                    tree.addTopLevelItem(self._log_item(entry))
            self._render_all = True  # unfiltered again, the whole tree is drawn anew
        elif self._render_all or fresh >= len(self.log):
            self._render_all = False
            tree.clear()
            for entry in self.log:
                tree.addTopLevelItem(self._log_item(entry))
        else:
            for entry in reversed(list(itertools.islice(self.log, fresh))):
                tree.insertTopLevelItem(0, self._log_item(entry))
            while tree.topLevelItemCount() > len(self.log):
                tree.takeTopLevelItem(tree.topLevelItemCount() - 1)
        # The newest three commits are open; the one pushed past them closes.
        for position in range(min(fresh + 3, tree.topLevelItemCount())):
            item = tree.topLevelItem(position)
            if item is not None:
                item.setExpanded(position < 3)

    def _log_item(self, entry: CommitEntry) -> QTreeWidgetItem:
        """A commit: what it changed; each view it re-emitted, with its update type and
        why; and, folded, the views it consulted that stayed silent."""
        muted = qcolor(current_theme().muted)
        accent = qcolor(current_theme().accent)
        at = dt.datetime.fromtimestamp(entry.at).strftime("%H:%M:%S")
        item = QTreeWidgetItem([f"#{entry.version} {at}", entry.headline])
        item.setData(0, Qt.ItemDataRole.UserRole, entry.version)
        item.setToolTip(1, _HEADLINE_TIP)
        for change in entry.changes:
            line = QTreeWidgetItem(["", change])
            line.setToolTip(1, change)
            item.addChild(line)
        for (view, update), why in zip(entry.views, entry.reasons, strict=True):
            text = f"→ {view}: {update}, {why}"
            child = QTreeWidgetItem(["", text])
            child.setForeground(1, accent if update == "Generic" else muted)
            child.setToolTip(1, f"{text}\n\n{update}: {_UPDATE_TIPS.get(update, '')}")
            item.addChild(child)
        if entry.silent:
            folded = QTreeWidgetItem(["", f"{len(entry.silent)} consulted, unchanged"])
            folded.setForeground(1, muted)
            folded.setToolTip(1, _SILENT_TIP)
            for view, why in entry.silent:
                line = QTreeWidgetItem(["", f"· {view}: watched {why}"])
                line.setForeground(1, muted)
                folded.addChild(line)
            item.addChild(folded)
        return item

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _commit_selected(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        """Tell the selected line's commit whole in the detail pane."""
        while item is not None and item.parent() is not None:
            item = item.parent()
        version = None if item is None else item.data(0, Qt.ItemDataRole.UserRole)
        entry = next((e for e in self.log if e.version == version), None)
        if entry is None:
            self.detail.clear()
        else:
            self.detail.setPlainText(commit_detail(entry))

    def commits(self) -> list[CommitEntry]:
        """The commits logged, newest first, up to the last one replayed (read even
        while the panel is hidden)."""
        self._take_reports()
        return list(self.log)

    def newest_version(self) -> int:
        """The newest commit logged so far (0 before any)."""
        return next((entry.version for entry in self.commits()), 0)

    def point_at(self, version: int, view: str, *, open_silent: bool = False) -> None:
        """Show commit ``version`` and select its line about ``view``, holding the list
        still (paused) until ``release``; ``open_silent`` unfolds its silent views."""
        self._take_reports()
        if self._before_pointing is None:
            self._before_pointing = (self.filter.text(), self.pause_button.isChecked())
        self.filter.clear()
        self.pause_button.setChecked(False)
        self._render_all = self._log_dirty = True
        self._render_log()
        tree = self.transactions
        commit = next(
            (
                item
                for position in range(tree.topLevelItemCount())
                if (item := tree.topLevelItem(position)) is not None
                and item.text(0).startswith(f"#{version} ")
            ),
            None,
        )
        if commit is None:
            return
        self.pause_button.setChecked(True)
        commit.setExpanded(True)
        line = commit
        for position in range(commit.childCount()):
            child = commit.child(position)
            if child is None:
                continue
            if child.text(1).startswith(f"→ {view}"):
                line = child
            elif open_silent and child.childCount():
                child.setExpanded(True)
        tree.setCurrentItem(line)
        tree.scrollToItem(commit, QAbstractItemView.ScrollHint.PositionAtTop)

    def release(self) -> None:
        """After ``point_at``: the list filtered and paused as the reader had it."""
        if self._before_pointing is None:
            return
        wanted, paused = self._before_pointing
        self._before_pointing = None
        self.transactions.setCurrentIndex(QModelIndex())  # the detail pane empties with it
        self.pause_button.setChecked(False)
        self.filter.setText(wanted)
        self.pause_button.setChecked(paused)

    # -- the open chat's hole map --------------------------------------------------------

    def show_history(self, peer_id: PeerId | None, view: MessageHistoryView | None) -> None:
        changed = peer_id != self.peer_id
        self.peer_id, self._history = peer_id, view
        if changed:
            self.hole_map.set_map([], None)
        self._request_hole_map()

    def _request_hole_map(self) -> None:
        if self.peer_id is None or not self.isVisible():
            return
        if self._map_pending:  # asked again once this answer is in: it may be stale
            self._map_stale = True
            return
        self._map_stale = False
        peer = self.peer_id
        fetching = [
            entry.hole
            for entry in self._fetching
            if isinstance(entry, MessageHistoryHolesEntry) and entry.peer_id == peer
        ]
        self._map_pending = True

        def shown(segments: list[HoleSegment]) -> None:
            self._map_pending = False
            if self._map_stale or peer != self.peer_id:
                self._request_hole_map()
                return
            window = None
            view = self._history
            if view is not None and view.entries:
                window = ClosedRange(view.entries[0].id.id, view.entries[-1].id.id)
            self.hole_map.set_map(segments, window)
            stored = sum(s.messages for s in segments)
            holes = sum(s.kind is not SegmentKind.STORED for s in segments)
            shown_count = len(view.entries) if view is not None else 0
            self.hole_caption.setText(
                f"{stored:,} messages stored, {holes} hole(s); the window holds {shown_count}"
            )

        def failed(_error: BaseException) -> None:
            self._map_pending = False

        self._relay.watch(self.account.hole_map(peer, fetching), shown, failed)

    # -- sync state ----------------------------------------------------------------------

    @Slot(object)
    def _state_changed(self, combined: CombinedView) -> None:
        view = combined[self._state_key]
        state = view.state
        if state is None:
            self.cursor_label.setText("cursor: none yet (first sync)")
            return
        date = dt.datetime.fromtimestamp(state.date, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        self.cursor_label.setText(
            f"cursor: pts {state.pts:,} · qts {state.qts:,} · seq {state.seq:,} · {date} UTC"
        )

    @Slot()
    def refresh(self) -> None:
        """Poll the engine and redraw what changed (only while shown)."""
        if not self.isVisible():
            self._timer.stop()
            return
        self._take_reports()
        self._render_log()
        self._look_up_names()
        self._relay.watch(self.account.status_later(), self._show_status)

    def _show_status(self, status: EngineStatus | None) -> None:
        if status is None:
            self.connection.setText("connection: not started")
            return
        self.connection.setText(f"connection: {status.connection} · {status.role}")
        self.operation.setText(f"operation: {status.operation or 'idle'}")
        queue = status.queue
        self.queue.setText("queue: " + (" → ".join(queue) if queue else "empty"))
        fetching, outgoing = status.fetching, status.outgoing
        fills = [
            f"{self._names(e.peer_id)} {e.hole.lower}–{e.hole.upper}"
            for e in fetching
            if isinstance(e, MessageHistoryHolesEntry)
        ]
        others = len(fetching) - len(fills)
        described = ", ".join(fills) + (f" +{others} chat list" if others else "")
        self.work.setText(f"fetching: {described or 'nothing'} · outgoing: {outgoing}")
        if fetching != self._fetching:
            self._fetching = fetching
            self._request_hole_map()

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt
        self._timer.start()
        self._log_dirty = True
        self._render_all = True
        self._request_hole_map()
        super().showEvent(event)  # type: ignore[arg-type]

    @Slot(bool)
    def _slow_motion_toggled(self, on: bool) -> None:
        if self.slow_motion is not None:
            self.slow_motion.switch(on)

    def _slow_motion_switched(self, on: bool) -> None:
        button = self.slow_button
        if button is not None and button.isChecked() != on:
            with QSignalBlocker(button):
                button.setChecked(on)

    def close_feeds(self) -> None:
        self._stop_watching_slow_motion()
        self._stop_watching_slow_motion = lambda: None
        self._timer.stop()
        self._remove_listener()
        self._remove_listener = lambda: None
        self._state_feed.close()
