"""Painting the rows: chat-list entries and history bubbles.

Rows have fixed heights per kind, so views lay out in constant time per row. Colours
come from the current theme (``ui.theme``); sizes scale with the font.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Hashable, Mapping, Set

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen, QPolygonF, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ui.failed_messages import preview_prefix
from ui.models import ROW_ROLE, RowModel
from ui.paint_cache import RowPixmaps
from ui.rows import ChatRow, DateRow, DeliveryState, LoadingRow, MessageRow, UnreadRow
from ui.stickers import paint_sticker_message, sticker_row_height, sticker_size
from ui.theme import current_theme, qcolor

__all__ = ["ChatListDelegate", "HistoryDelegate", "has_links", "link_at", "link_document"]

_Index = QModelIndex | QPersistentModelIndex
#: Text boxes a history delegate remembers before starting afresh.
_CACHE_LIMIT = 20_000
#: Row heights a history delegate remembers (a few windows' worth).
_HEIGHTS_LIMIT = 2_000
#: ``QStyle.StateFlag.State_Selected`` as a plain int: a row's paint tests it without
#: the enum arithmetic that costs more than the rest of a cached row's paint.
_SELECTED = QStyle.StateFlag.State_Selected.value
_TICKS = {
    DeliveryState.PENDING: "◷",
    DeliveryState.FAILED: "",  # the red "!" beside the bubble says it
    DeliveryState.SENT: "✓",
    DeliveryState.READ: "✓✓",
}


def _row_at(index: _Index) -> object:
    """The row object at ``index``: from a ``RowModel``'s list directly (no round trip
    through Qt's ``data``), else through ``ROW_ROLE``."""
    model = index.model()
    if isinstance(model, RowModel):
        rows = model.rows
        position = index.row()
        return rows[position] if 0 <= position < len(rows) else None
    return index.data(ROW_ROLE)


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
        row = _row_at(index)
        if not isinstance(row, ChatRow):
            return
        selected = bool(option.state.value & _SELECTED)
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
        markers = ("  ⊘" if row.muted else "") + ("  ★" if row.pinned else "")
        painter.setFont(bold)
        painter.setPen(text_color)
        title_left = left
        if row.secret:
            secret_color = text_color if selected else qcolor(theme.online)
            title_left += _draw_lock(painter, left, top, line, secret_color)
            painter.setPen(secret_color)
        title = _title_with_markers(
            QFontMetrics(bold), row.title, markers, right - time_width - title_left - 6
        )
        painter.drawText(
            QRect(title_left, top, right - title_left, line), Qt.AlignmentFlag.AlignLeft, title
        )
        second = top + int(line * 1.35)
        badge_width = 0
        if row.failed:  # a message failed to send: a red "!" instead of the count
            badge_width = line + 4
            badge = QRect(right - badge_width, second - 1, badge_width, line + 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("white") if selected else qcolor(theme.warning))
            painter.drawEllipse(badge)
            painter.setFont(bold)
            painter.setPen(qcolor(theme.warning) if selected else QColor("white"))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, "!")
        elif row.unread:
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
        width = right - left - badge_width - 8
        if row.draft:
            # Telegram's look: "Draft:" in red, then the text typed, instead of the preview.
            label = "Draft: "
            painter.setPen(QColor("white") if selected else qcolor(theme.warning))
            painter.drawText(
                QRect(left, second, width, line + 2), Qt.AlignmentFlag.AlignLeft, label
            )
            shift = option.fontMetrics.horizontalAdvance(label)
            left, width = left + shift, width - shift
            preview = row.draft
        else:
            preview = preview_prefix(outgoing=row.outgoing, failed=row.top_failed) + row.preview
        painter.setPen(muted_color)
        preview = option.fontMetrics.elidedText(preview, Qt.TextElideMode.ElideRight, width)
        painter.drawText(QRect(left, second, width, line + 2), Qt.AlignmentFlag.AlignLeft, preview)
        painter.restore()


def _title_with_markers(metrics: QFontMetrics, title: str, markers: str, width: int) -> str:
    """A chat's name elided to leave room for its markers (muted, pinned), which stay in
    sight however long the name; if even the markers do not fit, the whole is elided."""
    room = width - metrics.horizontalAdvance(markers)
    if room < metrics.horizontalAdvance(title[:1] + "…"):
        return _fit(metrics, title + markers, width)
    return _fit(metrics, title, room) + markers


_URL = re.compile(r"https?://[^\s<>\"]+[^\s<>\".,;:!?)\]'’]")


def has_links(text: str) -> bool:
    return "http" in text and _URL.search(text) is not None


def link_document(text: str, font: QFont, width: int) -> QTextDocument:
    """The text laid out at ``width`` with its web addresses as links in the accent colour."""
    accent = current_theme().accent
    parts: list[str] = []
    position = 0
    for match in _URL.finditer(text):
        parts.append(html.escape(text[position : match.start()]))
        url = html.escape(match.group(0), quote=True)
        parts.append(f'<a href="{url}" style="color: {accent}">{url}</a>')
        position = match.end()
    parts.append(html.escape(text[position:]))
    document = QTextDocument()
    document.setDocumentMargin(0)
    document.setDefaultFont(font)
    document.setDefaultStyleSheet(f"body {{ color: {current_theme().bubble_text}; }}")
    document.setHtml("<body>" + "".join(parts).replace("\n", "<br>") + "</body>")
    document.setTextWidth(width)
    return document


def link_at(text: str, font: QFont, width: int, point: QPointF) -> str | None:
    """The address of the link at ``point`` (relative to the text's top left), if any."""
    document = link_document(text, font, width)  # kept alive while its layout is asked
    anchor = document.documentLayout().anchorAt(point)
    return anchor or None


def _body_text(row: MessageRow) -> str:
    """The bubble's text: the message's, or for a message with only a link, its title."""
    if row.text:
        return row.text
    return "" if _media_card_text(row) else row.media


def _media_card_text(row: MessageRow) -> tuple[str, str] | None:
    """(title, "Photo · 1.2 MB") of a media item drawn as a card; ``None`` for none or
    for a link (shown as a line above its text)."""
    if not row.media_kind or row.media_kind == "link":
        return None
    kind = _KIND_NAMES.get(row.media_kind, "Media")
    details = kind if row.media_size <= 0 else f"{kind} · {format_size(row.media_size)}"
    return row.media or kind, details


_KIND_NAMES = {
    "photo": "Photo", "video": "Video", "file": "File", "voice": "Voice message", "gif": "GIF",
    "sticker": "Sticker",
}  # fmt: skip


def format_size(size: int) -> str:
    """1.2 MB, 640 KB, 12 B."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} B"


def _card_height(line: int) -> int:
    return 2 * line + 6


def _card_text_left(line: int) -> int:
    """Where a media card's text starts, from the card's left: after the disc and a gap."""
    return _card_height(line) + 10


def _media_height(row: MessageRow, line: int) -> int:
    if _media_card_text(row):
        return _card_height(line) + (6 if row.text else 0)
    return line + 4 if row.media and row.text else 0


def _fit(metrics: QFontMetrics, text: str, width: int) -> str:
    """``text`` elided to ``width``; untouched if it fits (Qt elides text exactly as wide
    as the width it is given)."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)


def _forward_parts(row: MessageRow) -> tuple[str, str] | None:
    """The forward line in two parts, plain and bold; ``None`` if not a forward."""
    if row.forwarded_from is None:
        return None
    if not row.forwarded_from:
        return ("Forwarded message", "")
    return ("Forwarded from ", row.forwarded_from)


def _reply_height(line: int) -> int:
    """A reply preview: the name and a line of the message answered, and a gap."""
    return 2 * line + 8


def _draw_kind_icon(painter: QPainter, disc: QRect, kind: str) -> None:
    """A white glyph for a media kind, drawn inside ``disc``."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    white = QColor("white")
    c = QRectF(disc).center()
    r = disc.width() / 2
    if kind in ("video", "voice", "gif"):  # play
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        painter.drawPolygon(
            QPolygonF([QPointF(c.x() - r * 0.25, c.y() - r * 0.38),
                       QPointF(c.x() - r * 0.25, c.y() + r * 0.38),
                       QPointF(c.x() + r * 0.42, c.y())])
        )  # fmt: skip
    elif kind == "photo":  # a frame with a mountain
        painter.setPen(QPen(white, max(1.5, r / 9)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        frame = QRectF(c.x() - r * 0.45, c.y() - r * 0.35, r * 0.9, r * 0.7)
        painter.drawRoundedRect(frame, 2, 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        peak = QPointF(frame.left() + frame.width() * 0.4, frame.top() + frame.height() * 0.4)
        painter.drawPolygon(
            QPolygonF([QPointF(frame.left() + 2, frame.bottom() - 2), peak,
                       QPointF(frame.right() - 2, frame.bottom() - 2)])
        )  # fmt: skip
    else:  # a page with a folded corner
        painter.setPen(QPen(white, max(1.5, r / 9)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        w, h = r * 0.7, r * 0.9
        left, top = c.x() - w / 2, c.y() - h / 2
        fold = w * 0.35
        painter.drawPolygon(
            QPolygonF([QPointF(left, top), QPointF(left + w - fold, top),
                       QPointF(left + w, top + fold), QPointF(left + w, top + h),
                       QPointF(left, top + h)])
        )  # fmt: skip
    painter.restore()


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
        selected: Set[Hashable] | None = None,
    ) -> None:
        super().__init__(parent)
        self._view = parent
        self._progress: Mapping[Hashable, float] = progress if progress is not None else {}
        #: Where each reply preview was drawn, relative to its row's top left: a click
        #: there jumps to the message it answers.
        self.reply_areas: dict[Hashable, QRect] = {}
        #: Where the text of each message was drawn, likewise: for clicks on links
        #: (``link_at``) and for selecting text in place.
        self.text_areas: dict[Hashable, QRect] = {}
        #: Where the red "!" of each failed message was drawn, likewise: a click there
        #: offers to send it again or delete it.
        self.failure_marks: dict[Hashable, QRect] = {}
        #: Rows flashed to show the reader where a jump landed: key to strength (0..1).
        self._highlight: Mapping[Hashable, float] = highlight if highlight is not None else {}
        #: Rows the reader selected.
        self._selected: Set[Hashable] = selected if selected is not None else set()
        self._bodies: dict[tuple[str, int, int], QRect] = {}
        #: Row heights by row object (the object is kept, so its id stays its own).
        self._heights: dict[int, tuple[object, int, int, int]] = {}
        self.pixmaps = RowPixmaps(limit=160)

    def _text_width(self, option: QStyleOptionViewItem) -> int:
        """How wide a bubble's text may be: most of the view, at most a comfortable line."""
        line = _line(option)
        available = self._view.width() if self._view is not None else option.rect.width()
        return max(160, min(int(line * 30), int(available * 0.72))) - line * 2

    def _body(self, option: QStyleOptionViewItem, row: MessageRow) -> QRect:
        """The wrapped text's box: measured once per text, width and font."""
        width = self._text_width(option)
        text = _body_text(row)
        if not text:
            return QRect()
        key = (text, width, _line(option))
        body = self._bodies.get(key)
        if body is None:
            if len(self._bodies) > _CACHE_LIMIT:
                self._bodies.clear()
            if has_links(text):
                document = link_document(text, option.font, width)
                size = document.size()
                body = QRect(0, 0, math.ceil(document.idealWidth()), math.ceil(size.height()))
            else:
                body = option.fontMetrics.boundingRect(
                    QRect(0, 0, width, 100_000), Qt.TextFlag.TextWordWrap, text
                )
            self._bodies[key] = body
        return body

    def link_at(self, option: QStyleOptionViewItem, row: MessageRow, point: QPoint) -> str | None:
        """The address of the link under ``point`` (relative to the row's top left)."""
        area = self.text_areas.get(row.key)
        if area is None or not area.contains(point) or not has_links(row.text):
            return None
        inside = QPointF(point - area.topLeft())
        return link_at(row.text, option.font, self._text_width(option), inside)

    def _full_height(self, option: QStyleOptionViewItem, row: object) -> int:
        line = _line(option)
        if not isinstance(row, MessageRow):
            return int(line * 2)
        failure = line + 4 if row.failure else 0
        if row.sticker is not None:
            return sticker_row_height(row, line) + failure
        extra = _media_height(row, line) + (line + 2 if row.author else 0) + failure
        extra += _reply_height(line) if row.reply is not None else 0
        extra += line + 2 if row.forwarded_from is not None else 0
        return self._body(option, row).height() + extra + line + int(line * 1.4)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        """Measured once per row object, text width and font: a layout after a snapshot
        measures only the rows that are new or changed."""
        row = _row_at(index)
        width, line = self._text_width(option), _line(option)
        known = self._heights.get(id(row))
        if known is not None and known[0] is row and known[1] == width and known[2] == line:
            return QSize(200, known[3])
        if len(self._heights) > _HEIGHTS_LIMIT:
            self._heights.clear()
        height = self._full_height(option, row)
        self._heights[id(row)] = (row, width, line, height)
        return QSize(200, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        row = _row_at(index)
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
            chosen = 0.7 if row.key in self._selected else 0.0
            strength = max(self._highlight.get(row.key, 0.0), chosen)
            if strength:
                tint = QColor(qcolor(theme.accent))  # a copy: the cached colour is shared
                tint.setAlphaF(0.25 * strength)
                painter.fillRect(rect, tint)
            appearing = self._progress.get(row.key)
            if appearing is not None:  # fading in as the view slides it into sight
                painter.setOpacity(appearing)
            self.pixmaps.paint(
                painter, option, row, lambda canvas, at: self._paint_message(canvas, at, row)
            )
        painter.restore()

    def _paint_card(
        self,
        painter: QPainter,
        area: QRect,
        row: MessageRow,
        card: tuple[str, str],
        option: QStyleOptionViewItem,
        bold: QFont,
        line: int,
    ) -> None:
        """A media placeholder: an icon of its kind in a disc, its title and size."""
        theme = current_theme()
        size = _card_height(line)
        disc = QRect(area.left(), area.top(), size, size)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(qcolor(theme.accent))
        painter.drawEllipse(disc)
        _draw_kind_icon(painter, disc, row.media_kind)
        text_left = area.left() + _card_text_left(line)
        width = area.right() - text_left
        painter.setFont(bold)
        painter.setPen(qcolor(theme.bubble_text))
        painter.drawText(
            QRect(text_left, area.top() + 2, width, line),
            Qt.AlignmentFlag.AlignLeft,
            QFontMetrics(bold).elidedText(card[0], Qt.TextElideMode.ElideRight, width),
        )
        painter.setFont(option.font)
        painter.setPen(qcolor(theme.time_out if row.outgoing else theme.time_in))
        painter.drawText(
            QRect(text_left, area.top() + line + 4, width, line), Qt.AlignmentFlag.AlignLeft,
            card[1],
        )  # fmt: skip

    @staticmethod
    def _paint_forward(
        painter: QPainter, area: QRect, parts: tuple[str, str], font: QFont, bold: QFont
    ) -> None:
        """ "Forwarded from" and the name in bold, in the accent colour, elided to fit."""
        painter.setPen(qcolor(current_theme().accent))
        painter.setFont(font)
        lead = _fit(QFontMetrics(font), parts[0], area.width())
        painter.drawText(area, Qt.AlignmentFlag.AlignLeft, lead)
        used = QFontMetrics(font).horizontalAdvance(lead)
        if parts[1] and used < area.width():
            name_area = area.adjusted(used, 0, 0, 0)
            painter.setFont(bold)
            name = _fit(QFontMetrics(bold), parts[1], name_area.width())
            painter.drawText(name_area, Qt.AlignmentFlag.AlignLeft, name)
        painter.setFont(font)

    def _paint_message(
        self, painter: QPainter, option: QStyleOptionViewItem, row: MessageRow
    ) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        theme = current_theme()
        rect = option.rect
        line = _line(option)
        metrics = option.fontMetrics
        text = _body_text(row)
        body = self._body(option, row)
        footer = row.time + ("  edited" if row.edited else "")
        if row.delivery and _TICKS[row.delivery]:
            footer += "  " + _TICKS[row.delivery]
        if row.sticker is not None:
            paint_sticker_message(painter, option, row, footer)
            if row.failure:
                size, width = sticker_size(line), metrics.horizontalAdvance(row.failure) + 2
                reason = QRect(rect.right() - line - width, rect.bottom() - line - 2, width, line)
                self._paint_failure(painter, option, row, reason, rect.right() - size - line)
            return
        bold = QFont(option.font)
        bold.setBold(True)
        author_width = QFontMetrics(bold).horizontalAdvance(row.author) if row.author else 0
        media_height = _media_height(row, line)
        card = _media_card_text(row)
        card_width = (
            _card_text_left(line) + 6 + max(QFontMetrics(bold).horizontalAdvance(card[0]),
                                            metrics.horizontalAdvance(card[1]))
            if card else 0
        )  # fmt: skip
        author_height = line + 2 if row.author else 0
        forward = _forward_parts(row)
        forward_width = (
            metrics.horizontalAdvance(forward[0]) + QFontMetrics(bold).horizontalAdvance(forward[1])
            if forward
            else 0
        )
        reply = row.reply
        reply_width = 0
        if reply is not None:
            reply_width = min(
                self._text_width(option),
                max(
                    QFontMetrics(bold).horizontalAdvance(reply.author),
                    metrics.horizontalAdvance(reply.text),
                )
                + 16,  # the bar, its gap, and room for rounding
            )
        failure_width = metrics.horizontalAdvance(row.failure) if row.failure else 0
        # A link's title: the bubble widens for it up to the text's width, then it is elided.
        link_line = "▸ " + row.media if media_height and not card else ""
        link_width = metrics.horizontalAdvance(link_line) if link_line else 0
        width = max(
            body.width(),
            metrics.horizontalAdvance(footer) + line,
            min(failure_width, self._text_width(option)),
            author_width,
            min(forward_width, self._text_width(option)),
            reply_width,
            min(card_width, self._text_width(option)),
            min(link_width, self._text_width(option)),
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
        if forward:
            self._paint_forward(painter, QRect(inner.left(), top, inner.width(), line), forward,
                                option.font, bold)  # fmt: skip
            top += line + 2
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
        if card:
            self._paint_card(painter, QRect(inner.left(), top, inner.width(), _card_height(line)),
                             row, card, option, bold, line)  # fmt: skip
            top += media_height
        elif media_height:
            painter.setPen(qcolor(theme.accent))
            painter.drawText(
                QRect(inner.left(), top, inner.width(), line),
                Qt.AlignmentFlag.AlignLeft,
                _fit(metrics, link_line, inner.width()),
            )
            top += media_height
        painter.setPen(qcolor(theme.bubble_text))
        area = QRect(inner.left(), top, inner.width(), body.height())
        self.text_areas[row.key] = area.translated(-rect.left(), -rect.top())
        if has_links(text):
            document = link_document(text, option.font, self._text_width(option))
            painter.save()
            painter.translate(inner.left(), top)
            document.drawContents(painter)
            painter.restore()
        else:
            painter.drawText(
                QRect(inner.left(), top, inner.width(), body.height()),
                Qt.TextFlag.TextWordWrap,
                text,
            )
        if row.failure:
            reason = QRect(inner.left(), top + body.height() + 2, inner.width(), line)
            self._paint_failure(painter, option, row, reason, bubble.left())
            top += line + 4
        painter.setPen(qcolor(theme.time_out if row.outgoing else theme.time_in))
        painter.drawText(
            QRect(inner.left(), top + body.height(), inner.width(), line),
            Qt.AlignmentFlag.AlignRight,
            footer,
        )

    def _paint_failure(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        row: MessageRow,
        reason: QRect,
        left: int,
    ) -> None:
        """Why the message was not sent, in red in ``reason``, and a red "!" left of the
        message (whose left edge is ``left``), which a click opens Retry and Delete on."""
        theme = current_theme()
        rect, line = option.rect, _line(option)
        warning = qcolor(theme.warning)
        painter.setPen(warning)
        painter.setFont(option.font)
        text = _fit(option.fontMetrics, row.failure, reason.width())
        painter.drawText(reason, Qt.AlignmentFlag.AlignLeft, text)
        size = int(line * 1.3)
        mark = QRect(left - size - line // 2, reason.bottom() - size + 2, size, size)
        self.failure_marks[row.key] = mark.translated(-rect.left(), -rect.top())
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(warning)
        painter.drawEllipse(mark)
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(QColor("white"))
        painter.drawText(mark, Qt.AlignmentFlag.AlignCenter, "!")
        painter.setFont(option.font)
