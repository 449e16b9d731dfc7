"""A snapshot feed: from the postbox thread to the main thread, merged within a frame,
and never a Qt receiver (the postbox thread may be the one that frees it)."""

from __future__ import annotations

import weakref

from postbox import CombinedView, Postbox, StateCursor, StateViewKey
from ui.feed import SnapshotFeed

KEY = StateViewKey()


def _set_state(postbox: Postbox, pts: int) -> None:
    postbox.run(lambda tx: tx.set_state(StateCursor(pts, 0, 0, 0)))


def _pts(snapshot: CombinedView) -> int | None:
    state = snapshot[KEY].state
    return None if state is None else state.pts


def test_a_lone_snapshot_comes_at_once_and_a_burst_is_merged(qtbot, postbox) -> None:
    seen: list[int | None] = []
    feed = SnapshotFeed(postbox, [KEY], lambda snapshot: seen.append(_pts(snapshot)))
    qtbot.waitUntil(lambda: seen == [None])  # the first snapshot
    for pts in (1, 2, 3):  # the main thread is busy: these are merged, not queued
        _set_state(postbox, pts)
    qtbot.waitUntil(lambda: seen[-1] == 3)
    assert len(seen) < 4 and feed.merged >= 1
    feed.close()


def test_a_snapshot_within_a_frame_waits_for_the_frame(qtbot, postbox) -> None:
    seen: list[int | None] = []
    feed = SnapshotFeed(postbox, [KEY], lambda s: seen.append(_pts(s)), interval=3600)
    qtbot.waitUntil(lambda: seen == [None])
    _set_state(postbox, 1)
    qtbot.waitUntil(lambda: feed._timer_armed)
    assert seen == [None]  # held back until the frame is over
    feed.close()


def test_no_qt_connection_tracks_the_feed(qtbot, postbox) -> None:
    """Qt tracks a receiver with a weak reference and disconnects where it is freed;
    freed on the postbox thread, that crashed the app."""
    seen: list[int | None] = []
    feed = SnapshotFeed(postbox, [KEY], lambda s: seen.append(_pts(s)), interval=0.05)
    qtbot.waitUntil(lambda: seen == [None])
    _set_state(postbox, 1)
    qtbot.waitUntil(lambda: feed._timer_armed)
    assert weakref.getweakrefcount(feed) == 0  # the armed timer holds no weak reference
    qtbot.waitUntil(lambda: seen == [None, 1])  # and still hands the snapshot over
    feed.close()
