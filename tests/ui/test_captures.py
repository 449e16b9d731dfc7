"""The README's animated captures (``client.captures``): frames are grabbed whole and
stored as the rectangle that changed, equal ones merged into a longer frame."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage

from client.apng import png_chunks
from client.captures import changed_rectangle, frames_of


def image(marks: tuple[tuple[QRect, str], ...] = ()) -> QImage:
    picture = QImage(40, 30, QImage.Format.Format_RGB32)
    picture.fill(QColor("white"))
    for rectangle, colour in marks:
        for x in range(rectangle.left(), rectangle.right() + 1):
            for y in range(rectangle.top(), rectangle.bottom() + 1):
                picture.setPixelColor(x, y, QColor(colour))
    return picture


def test_the_rectangle_that_changed_is_found_to_the_pixel() -> None:
    blank = image()
    assert changed_rectangle(blank, image()) is None
    assert changed_rectangle(blank, image(((QRect(3, 5, 4, 2), "red"),))) == (3, 5, 4, 2)
    # Two marks apart: the rectangle holds both.
    both = image(
        (
            (QRect(1, 2, 1, 1), "red"),
            (QRect(30, 20, 2, 3), "blue"),
        )
    )
    assert changed_rectangle(blank, both) == (1, 2, 31, 21)
    # The last column and row count too.
    assert changed_rectangle(blank, image(((QRect(39, 29, 1, 1), "red"),))) == (39, 29, 1, 1)


def test_equal_frames_are_merged_and_changed_ones_cropped() -> None:
    blank, marked = image(), image(((QRect(10, 10, 5, 5), "green"),))
    frames = frames_of([(blank, 0.0), (image(), 0.06), (marked, 0.12), (marked, 0.18)])
    assert [(f.x, f.y, f.delay_ms) for f in frames] == [(0, 0, 120), (10, 10, 1560)]
    header = next(data for kind, data in png_chunks(frames[1].png) if kind == b"IHDR")
    assert header[:8] == (5).to_bytes(4, "big") * 2


def test_a_mistyped_option_is_refused_before_anything_starts(capsys) -> None:
    from client.screenshots import main

    with pytest.raises(SystemExit) as exited:
        main(["--capture"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --capture" in capsys.readouterr().err
