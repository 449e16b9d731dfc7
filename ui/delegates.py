"""Painting the rows: chat-list entries and history bubbles.

Rows have fixed heights per kind, so views lay out in constant time per row. Colours
come from the current theme (``ui.theme``); sizes scale with the font.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ui.models import ROW_ROLE
from ui.paint_cache import RowPixmaps
from ui.rows import ChatRow, DateRow, DeliveryState, LoadingRow, MessageRow, UnreadRow
from ui.theme import current_theme, qcolor

__all__ = ["ChatListDelegate", "HistoryDelegate"]

_Index = QModelIndex | QPersistentModelIndex
#: Text boxes a history delegate remembers before starting afresh.
_CACHE_LIMIT = 20_000
_TICKS = {
    DeliveryState.PENDING: "◷",
    DeliveryState.FAILED: "⚠",
    DeliveryState.SENT: "✓",
    DeliveryState.READ: "✓✓",
}


def _line(option: QStyleOptionViewItem) -> int:
    """The height of a line of text in the option's font."""
    return option.fontMetrics.height()


class ChatListDelegate(QStyledItemDelegate):
    """A chat: avatar, name, time, preview, badge. Drawn once per look into a pixmap."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pixmaps = RowPixmaps(limit=256)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        return QSize(280, int(_line(option) * 3.6))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        row = index.data(ROW_ROLE)
        if not isinstance(row, ChatRow):
            return
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        self.pixmaps.paint(
            painter, option, (row, selected), lambda canvas, at: self._draw(canvas, at, row)
        )

    def _draw(self, painter: QPainter, option: QStyleOptionViewItem, row: ChatRow) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = option.rect
        theme = current_theme()
        accent = qcolor(theme.accent)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(rect, accent)
        text_color = QColor("white") if selected else qcolor(theme.text)
        muted_color = QColor("#e6f0fb") if selected else qcolor(theme.muted)
        line = _line(option)
        if row.is_hole:
            painter.setPen(muted_color)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "Loading chats…")
            painter.restore()
            return
        size = int(line * 2.6)
        avatar = QRect(
            rect.left() + line // 2, rect.top() + (rect.height() - size) // 2, size, size
        )
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(qcolor(row.color))
        painter.drawEllipse(avatar)
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(QColor("white"))
        painter.drawText(avatar, Qt.AlignmentFlag.AlignCenter, row.initials)
        if row.online:
            dot = line // 2 + 2
            painter.setBrush(qcolor(theme.online))
            painter.setPen(accent if selected else qcolor(theme.base))
            painter.drawEllipse(avatar.right() - dot + 2, avatar.bottom() - dot + 2, dot, dot)
        left = avatar.right() + line // 2 + 2
        right = rect.right() - line // 2
        top = rect.top() + int(line * 0.55)
        painter.setFont(option.font)
        time_width = option.fontMetrics.horizontalAdvance(row.time) + 4
        painter.setPen(muted_color)
        painter.drawText(
            QRect(right - time_width, top, time_width, line), Qt.AlignmentFlag.AlignRight, row.time
        )
        title = row.title + ("  ⊘" if row.muted else "") + ("  ★" if row.pinned else "")
        painter.setFont(bold)
        painter.setPen(text_color)
        title_left = left
        if row.secret:
            secret_color = text_color if selected else qcolor(theme.online)
            title_left += _draw_lock(painter, left, top, line, secret_color)
            painter.setPen(secret_color)
        metrics = QFontMetrics(bold)
        title = metrics.elidedText(
            title, Qt.TextElideMode.ElideRight, right - time_width - title_left - 6
        )
        painter.drawText(
            QRect(title_left, top, right - title_left, line), Qt.AlignmentFlag.AlignLeft, title
        )
        second = top + int(line * 1.35)
        badge_width = 0
        if row.unread:
            label = str(row.unread) if row.unread < 1000 else "999+"
            badge_width = max(line + 4, QFontMetrics(bold).horizontalAdvance(label) + line // 2 + 4)
            badge = QRect(right - badge_width, second - 1, badge_width, line + 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(
                qcolor(theme.badge_muted)
                if row.muted
                else (QColor("white") if selected else accent)
            )
            painter.drawRoundedRect(badge, badge.height() / 2, badge.height() / 2)
            painter.setPen(accent if selected and not row.muted else QColor("white"))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
        painter.setFont(option.font)
        painter.setPen(muted_color)
        preview = ("You: " if row.outgoing else "") + row.preview
        width = right - left - badge_width - 8
        preview = option.fontMetrics.elidedText(preview, Qt.TextElideMode.ElideRight, width)
        painter.drawText(QRect(left, second, width, line + 2), Qt.AlignmentFlag.AlignLeft, preview)
        painter.restore()


def _reply_height(line: int) -> int:
    """A reply preview: the name and a line of the message answered, and a gap."""
    return 2 * line + 8


def _draw_lock(painter: QPainter, left: int, top: int, line: int, color: QColor) -> int:
    """A small padlock at the start of a line of text; the width it takes."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    width = max(7, int(line * 0.62))
    body_height = max(5, int(line * 0.46))
    body_top = top + int(line * 0.85) - body_height
    shackle = QPen(color, max(1.5, line / 9))
    painter.setPen(shackle)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    inset = width * 0.2
    arc_height = body_height * 1.3
    painter.drawArc(
        QRectF(left + inset, body_top - arc_height / 2, width - 2 * inset, arc_height),
        0,
        180 * 16,
    )
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawRoundedRect(QRectF(left, body_top, width, body_height), 1.5, 1.5)
    painter.restore()
    return width + max(3, line // 4)


class HistoryDelegate(QStyledItemDelegate):
    """Bubbles: incoming on the left, outgoing on the right; date and loading rows.

    ``progress`` maps the keys of rows that are appearing to how far (0..1): such a
    row is drawn that faded in.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        progress: Mapping[Hashable, float] | None = None,
        highlight: Mapping[Hashable, float] | None = None,
    ) -> None:
        super().__init__(parent)
        self._view = parent
        self._progress: Mapping[Hashable, float] = progress if progress is not None else {}
        #: Where each reply preview was drawn, relative to its row's top left: a click
        #: there jumps to the message it answers.
        self.reply_areas: dict[Hashable, QRect] = {}
        #: Rows flashed to show the reader where a jump landed: key to strength (0..1).
        self._highlight: Mapping[Hashable, float] = highlight if highlight is not None else {}
        self._bodies: dict[tuple[str, int, int], QRect] = {}
        self.pixmaps = RowPixmaps(limit=160)

    def _text_width(self, option: QStyleOptionViewItem) -> int:
        """How wide a bubble's text may be: most of the view, at most a comfortable line."""
        line = _line(option)
        available = self._view.width() if self._view is not None else option.rect.width()
        return max(160, min(int(line * 30), int(available * 0.72))) - line * 2

    def _body(self, option: QStyleOptionViewItem, row: MessageRow) -> QRect:
        """The wrapped text's box: measured once per text, width and font."""
        width = self._text_width(option)
        text = row.text or row.media
        key = (text, width, _line(option))
        body = self._bodies.get(key)
        if body is None:
            if len(self._bodies) > _CACHE_LIMIT:
                self._bodies.clear()
            metrics = option.fontMetrics
            body = self._bodies[key] = metrics.boundingRect(
                QRect(0, 0, width, 100_000), Qt.TextFlag.TextWordWrap, text
            )
        return body

    def _full_height(self, option: QStyleOptionViewItem, row: object) -> int:
        line = _line(option)
        if not isinstance(row, MessageRow):
            return int(line * 2)
        extra = (line + 4 if row.media and row.text else 0) + (line + 2 if row.author else 0)
        extra += _reply_height(line) if row.reply is not None else 0
        return self._body(option, row).height() + extra + line + int(line * 1.4)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        return QSize(200, self._full_height(option, index.data(ROW_ROLE)))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        row = index.data(ROW_ROLE)
        rect = option.rect
        theme = current_theme()
        line = _line(option)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if isinstance(row, LoadingRow):
            painter.setPen(qcolor(theme.muted))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "Loading messages…")
        elif isinstance(row, DateRow):
            metrics = option.fontMetrics
            width = metrics.horizontalAdvance(row.text) + line * 2
            pill = QRect(rect.center().x() - width // 2, rect.top() + line // 3, width, line + 6)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(qcolor(theme.date_pill))
            painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
            painter.setPen(QColor("white"))
            painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, row.text)
        elif isinstance(row, UnreadRow):
            bar = QRect(rect.left(), rect.top() + line // 3, rect.width(), line + 8)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(qcolor(theme.base))
            painter.drawRect(bar)
            painter.setPen(qcolor(theme.muted))
            painter.drawText(bar, Qt.AlignmentFlag.AlignCenter, row.text)
        elif isinstance(row, MessageRow):
            strength = self._highlight.get(row.key)
            if strength:
                tint = qcolor(theme.accent)
                tint.setAlphaF(0.25 * strength)
                painter.fillRect(rect, tint)
            appearing = self._progress.get(row.key)
            if appearing is not None:  # fading in as the view slides it into sight
                painter.setOpacity(appearing)
            self.pixmaps.paint(
                painter, option, row, lambda canvas, at: self._paint_message(canvas, at, row)
            )
        painter.restore()

    def _paint_message(
        self, painter: QPainter, option: QStyleOptionViewItem, row: MessageRow
    ) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        theme = current_theme()
        rect = option.rect
        line = _line(option)
        metrics = option.fontMetrics
        text = row.text or row.media
        body = self._body(option, row)
        footer = row.time + ("  edited" if row.edited else "")
        if row.delivery:
            footer += "  " + _TICKS[row.delivery]
        bold = QFont(option.font)
        bold.setBold(True)
        author_width = QFontMetrics(bold).horizontalAdvance(row.author) if row.author else 0
        media_height = line + 4 if row.media and row.text else 0
        author_height = line + 2 if row.author else 0
        reply = row.reply
        reply_width = 0
        if reply is not None:
            reply_width = min(
                self._text_width(option),
                max(
                    QFontMetrics(bold).horizontalAdvance(reply.author),
                    metrics.horizontalAdvance(reply.text),
                )
                + 10,
            )
        width = max(
            body.width(), metrics.horizontalAdvance(footer) + line, author_width, reply_width
        )
        width += line * 2
        height = rect.height() - line // 2
        left = rect.right() - width - line if row.outgoing else rect.left() + line
        bubble = QRect(left, rect.top() + line // 4, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(qcolor(theme.bubble_out if row.outgoing else theme.bubble_in))
        painter.drawRoundedRect(bubble, line * 0.8, line * 0.8)
        inner = bubble.adjusted(line, line // 2, -line, -line // 2)
        top = inner.top()
        if row.author:
            painter.setFont(bold)
            painter.setPen(qcolor(row.author_color))
            painter.drawText(
                QRect(inner.left(), top, inner.width(), line),
                Qt.AlignmentFlag.AlignLeft,
                row.author,
            )
            painter.setFont(option.font)
            top += author_height
        if reply is not None:
            area = QRect(inner.left(), top, inner.width(), 2 * line + 2)
            self.reply_areas[row.key] = area.translated(-rect.left(), -rect.top())
            painter.fillRect(QRect(area.left(), area.top() + 1, 3, area.height() - 2),
                             qcolor(theme.accent))  # fmt: skip
            painter.setFont(bold)
            painter.setPen(qcolor(theme.accent))
            text_area = area.adjusted(10, 0, 0, 0)
            painter.drawText(
                QRect(text_area.left(), area.top(), text_area.width(), line),
                Qt.AlignmentFlag.AlignLeft,
                QFontMetrics(bold).elidedText(
                    reply.author or "Message", Qt.TextElideMode.ElideRight, text_area.width()
                ),
            )
            painter.setFont(option.font)
            painter.setPen(qcolor(theme.time_out if row.outgoing else theme.time_in))
            painter.drawText(
                QRect(text_area.left(), area.top() + line + 2, text_area.width(), line),
                Qt.AlignmentFlag.AlignLeft,
                metrics.elidedText(reply.text, Qt.TextElideMode.ElideRight, text_area.width()),
            )
            top += _reply_height(line)
        if media_height:
            painter.setPen(qcolor(theme.accent))
            painter.drawText(
                QRect(inner.left(), top, inner.width(), line),
                Qt.AlignmentFlag.AlignLeft,
                "▸ " + row.media,
            )
            top += media_height
        painter.setPen(qcolor(theme.bubble_text))
        painter.drawText(
            QRect(inner.left(), top, inner.width(), body.height()), Qt.TextFlag.TextWordWrap, text
        )
        painter.setPen(qcolor(theme.time_out if row.outgoing else theme.time_in))
        painter.drawText(
            QRect(inner.left(), top + body.height(), inner.width(), line),
            Qt.AlignmentFlag.AlignRight,
            footer,
        )
