"""The hole map's bar: segments laid out oldest first by the log of their ids, the
newest open-ended range clipped to what is known, the window outlined where its ids are."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client import HoleSegment, SegmentKind
from client.hole_map import MAX_ID, hole_map
from postbox import ClosedRange
from ui.hole_bar import MIN_SPAN, bar_layout

STORED, HOLE, FETCHING = SegmentKind.STORED, SegmentKind.HOLE, SegmentKind.FETCHING

#: A chat of ids 1..4,441 missing, 4,442..4,501 stored (60), newer ones stored too.
KNOWN = [
    HoleSegment(4_502, MAX_ID, STORED, 0),
    HoleSegment(4_442, 4_501, STORED, 60),
    HoleSegment(1, 4_441, HOLE),
]


def test_a_known_layout() -> None:
    layout = bar_layout(KNOWN, ClosedRange(4_442, 4_501), 300)
    assert [span.segment.kind for span in layout.spans] == [HOLE, STORED, STORED]
    hole, window_range, newest = layout.spans
    # Widths: MIN_SPAN each, the rest by log2(1 + ids): 4,441 ids, 60 ids, and the
    # open-ended range clipped to one id (it stores nothing and the window ends below).
    weights = [math.log2(1 + 4_441), math.log2(1 + 60), math.log2(1 + 1)]
    spare = 300 - 3 * MIN_SPAN
    expected = [MIN_SPAN + spare * w / sum(weights) for w in weights]
    assert [span.right - span.left for span in layout.spans] == pytest.approx(expected)
    assert hole.left == 0.0
    assert newest.right == pytest.approx(300)
    assert (newest.lower, newest.upper) == (4_502, 4_502)
    # The window covers exactly the stored range of sixty.
    assert layout.window is not None
    assert list(layout.window) == pytest.approx([window_range.left, window_range.right])


def test_ids_sit_linearly_within_their_span() -> None:
    layout = bar_layout(KNOWN, None, 300)
    hole = layout.spans[0]
    middle = layout.x_of(2_221)
    assert middle == pytest.approx(hole.left + (2_220 / 4_441) * (hole.right - hole.left))
    assert layout.window is None


def test_the_open_ended_range_ends_at_the_newest_id_known() -> None:
    segments = [HoleSegment(101, MAX_ID, STORED, 40), HoleSegment(1, 100, HOLE)]
    assert bar_layout(segments, None, 200).spans[-1].upper == 140
    assert bar_layout(segments, ClosedRange(120, 400), 200).spans[-1].upper == 400


def test_a_window_in_a_tiny_range_is_still_visible() -> None:
    segments = [HoleSegment(2, MAX_ID, STORED, 1), HoleSegment(1, 1, HOLE)]
    layout = bar_layout(segments, ClosedRange(2, 2), 100)
    assert layout.window is not None
    left, right = layout.window
    assert right - left >= 3


@given(
    st.lists(st.integers(1, 10_000), unique=True, min_size=0, max_size=12).map(sorted),
    st.integers(60, 800),
)
def test_spans_tile_the_bar_in_id_order(bounds: list[int], width: int) -> None:
    holes = [ClosedRange(a, b) for a, b in zip(bounds[::2], bounds[1::2], strict=False) if a <= b]
    segments = hole_map(holes, lambda lower, upper: min(upper - lower + 1, 50))
    layout = bar_layout(segments, None, width)
    assert layout.spans[0].left == 0.0
    assert layout.spans[-1].right == pytest.approx(max(width, MIN_SPAN * len(segments)))
    for before, after in zip(layout.spans, layout.spans[1:], strict=False):
        assert before.right == pytest.approx(after.left)
        assert before.upper < after.lower
        assert after.right - after.left >= MIN_SPAN


@pytest.mark.gui
def test_the_widget_draws_the_bar_above_the_rows(qtbot) -> None:
    from ui.inspector import HoleMapWidget

    widget = HoleMapWidget()
    qtbot.addWidget(widget)
    widget.resize(320, 200)
    widget.set_map(KNOWN, ClosedRange(4_442, 4_501))
    widget.grab()  # paints
    layout = widget.layout_of_bar
    assert layout is not None and layout.window is not None
    assert layout.spans[-1].right == pytest.approx(320 - 8)
    assert widget.sizeHint().height() > 3 * (widget.fontMetrics().height() + 8)
