"""Drawing stickers and GIFs: a large emoji on a soft shape, with no image file.

``draw_face`` draws one face (``ui.rows.StickerFace``) into a square; the history
delegate uses ``paint_sticker_message`` for a sticker message, drawn as Telegram
Desktop draws stickers: no bubble, the sticker on the sender's side, the time (and the
ticks of an outgoing one) in a small pill below it.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPolygonF
from PySide6.QtWidgets import QStyleOptionViewItem

from ui.rows import MessageRow, StickerFace
from ui.theme import current_theme, qcolor

__all__ = [
    "EMOJI_FAMILIES",
    "draw_face",
    "paint_sticker_message",
    "shape_path",
    "sticker_row_height",
    "sticker_size",
]

#: Font families tried for the emoji, colour ones first.
EMOJI_FAMILIES = ("Noto Color Emoji", "Apple Color Emoji", "Segoe UI Emoji", "Twemoji")
#: How opaque the shape behind the emoji is: soft, so the emoji stands out.
_SHAPE_ALPHA = 0.42


def sticker_size(line: int) -> int:
    """The side of a sticker in the history, from the height of a line of text."""
    return line * 8


def sticker_row_height(row: MessageRow, line: int) -> int:
    """A sticker row: its author's name (in a group), the sticker, the time pill."""
    author = line + 2 if row.author else 0
    return author + sticker_size(line) + line + 10 + line // 2


def shape_path(shape: str, rect: QRectF) -> QPainterPath:
    """The outline of a named shape filling ``rect`` (a circle for an unknown name)."""
    path = QPainterPath()
    c, r = rect.center(), min(rect.width(), rect.height()) / 2
    if shape == "rounded_square":
        side = r * 1.8
        path.addRoundedRect(
            QRectF(c.x() - side / 2, c.y() - side / 2, side, side), r * 0.45, r * 0.45
        )
    elif shape == "diamond":
        path.addPolygon(_polygon(c, r, 4, -math.pi / 2))
        path.closeSubpath()
    elif shape == "hexagon":
        path.addPolygon(_polygon(c, r, 6, 0.0))
        path.closeSubpath()
    elif shape == "star":
        points = [
            QPointF(
                c.x() + (r if i % 2 == 0 else r * 0.62) * math.cos(-math.pi / 2 + i * math.pi / 8),
                c.y() + (r if i % 2 == 0 else r * 0.62) * math.sin(-math.pi / 2 + i * math.pi / 8),
            )
            for i in range(16)
        ]
        path.addPolygon(QPolygonF(points))
        path.closeSubpath()
    else:
        path.addEllipse(c, r, r)
    return path


def _polygon(c: QPointF, r: float, sides: int, start: float) -> QPolygonF:
    return QPolygonF(
        [
            QPointF(c.x() + r * math.cos(start + i * 2 * math.pi / sides),
                    c.y() + r * math.sin(start + i * 2 * math.pi / sides))
            for i in range(sides)
        ]
    )  # fmt: skip


def emoji_font(base: QFont, pixels: int) -> QFont:
    font = QFont(base)
    font.setFamilies([*EMOJI_FAMILIES, *base.families()])
    font.setPixelSize(max(8, pixels))
    return font


def draw_face(painter: QPainter, rect: QRect | QRectF, face: StickerFace, font: QFont) -> None:
    """The face's shape filling ``rect`` softly, its emoji large on it; a GIF badge."""
    area = QRectF(rect)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    colour = QColor(face.colour)
    colour.setAlphaF(_SHAPE_ALPHA)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    inset = area.width() * 0.04
    painter.drawPath(shape_path(face.shape, area.adjusted(inset, inset, -inset, -inset)))
    painter.setFont(emoji_font(font, int(area.height() * 0.52)))
    painter.setPen(qcolor(current_theme().text))
    painter.drawText(area, Qt.AlignmentFlag.AlignCenter, face.emoji)
    if face.gif:
        badge_font = QFont(font)
        badge_font.setBold(True)
        badge_font.setPixelSize(max(8, int(area.height() * 0.13)))
        metrics = QFontMetrics(badge_font)
        badge = QRectF(
            area.left() + inset,
            area.top() + inset,
            metrics.horizontalAdvance("GIF") + metrics.height() * 0.8,
            metrics.height() * 1.2,
        )
        painter.setBrush(QColor(0, 0, 0, 110))
        painter.drawRoundedRect(badge, badge.height() / 2, badge.height() / 2)
        painter.setFont(badge_font)
        painter.setPen(QColor("white"))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, "GIF")
    painter.restore()


def paint_sticker_message(
    painter: QPainter, option: QStyleOptionViewItem, row: MessageRow, footer: str
) -> None:
    """A sticker message: the sticker on its side, the ``footer`` (time, ticks) below."""
    assert row.sticker is not None
    theme = current_theme()
    rect = option.rect
    line = option.fontMetrics.height()
    size = sticker_size(line)
    left = rect.right() - size - line if row.outgoing else rect.left() + line
    top = rect.top() + line // 4
    if row.author:
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(qcolor(row.author_color))
        painter.drawText(QRect(left, top, size * 2, line), Qt.AlignmentFlag.AlignLeft, row.author)
        painter.setFont(option.font)
        top += line + 2
    draw_face(painter, QRect(left, top, size, size), row.sticker, option.font)
    width = option.fontMetrics.horizontalAdvance(footer) + line
    pill = QRect(left + size - width, top + size + 4, width, line + 4)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(qcolor(theme.date_pill))
    painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
    painter.setPen(QColor("white"))
    painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, footer)
