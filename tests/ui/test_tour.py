"""The guided tour against the demo's real server on loopback: each step makes its
event happen, reaches the state it shows, and points at the inspector line for it; the
whole tour leaves the database equal to the account by ``verify``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QObject, QSettings

from client import SegmentKind
from client.account import Account
from client.demo_stage import DemoStage
from client.slow_motion import SlowMotion
from postbox import PeerId
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer, MockServer
from tests.client.account_helpers import verify_agrees_for
from tests.sync.engine_helpers import FAST
from tests.ui.conftest import loaded
from ui import theme as themes
from ui.main_window import MainWindow
from ui.rows import ChatRow, LoadingRow
from ui.tour import (
    Beat,
    StepImpossible,
    TourCard,
    TourRunner,
    Wait,
    first_start,
    remember_offered,
)
from ui.tour_steps import TOUR

TOKEN = "tour"
#: Slow enough that a loading row is on screen while its fetch is in flight.
LATENCY = 0.3


@pytest.fixture
def demo(qtbot, tmp_path) -> Iterator[tuple[MainWindow, EmbeddedServer]]:
    config = ServerConfig(token=TOKEN, seed=2, peers=12, messages=300)
    with EmbeddedServer(config) as server:
        account = Account(tmp_path / "c.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        account.start()

        stage = DemoStage(server)
        main = MainWindow(account, slow_motion=SlowMotion(LATENCY, stage.set_latency), stage=stage)
        qtbot.addWidget(main)
        main.resize(1280, 800)
        main.show()
        qtbot.waitUntil(lambda: loaded(main), timeout=30_000)
        try:
            yield main, server
        finally:
            main.close_feeds()
            account.close()


def run_step(qtbot, card: TourCard, position: int) -> str:
    card.show_step(position)
    qtbot.waitUntil(lambda: not card.runner.running, timeout=60_000)
    assert card.runner.succeeded, card.runner.outcome
    assert card.status.text().startswith("✓")
    return card.status.text()


def people_in(main: MainWindow) -> list[ChatRow]:
    return [
        r
        for r in main.chat_model.rows
        if isinstance(r, ChatRow)
        and not r.is_hole
        and PeerId(r.peer_id).namespace == 0
        and not r.secret
    ]


def started(main: MainWindow) -> TourCard:
    main.start_tour(beat_scale=0)
    assert main.tour is not None and main.tour.isVisible()
    return main.tour


def counters(main: MainWindow) -> dict[str, int]:
    status = main.account.status_later().result(timeout=10)
    assert status is not None
    found: dict[str, int] = status.counters
    return found


def pointed_line(main: MainWindow) -> str:
    item = main.inspector.transactions.currentItem()
    assert item is not None
    return item.text(1)


def test_the_tour_is_offered_on_the_first_start_only(qapp, tmp_path, monkeypatch) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    monkeypatch.setattr(themes, "app_settings", lambda: settings)
    assert first_start()
    remember_offered()
    assert not first_start()


def test_the_tour_opens_on_its_welcome_and_acts_only_when_started(qtbot, demo) -> None:
    main, server = demo
    card = started(main)
    assert card.position == 0 and card.title.text() == TOUR[0].title
    assert card.counter.text() == "Guided tour · 5 steps"
    assert card.next_button.text() == "Start" and not card.runner.running
    assert main.open_peer is None  # nothing happened yet
    # The welcome is a page to read: the live traffic goes on under it (calls reach the
    # server in order, so this sees what the card asked).
    assert not server.call(lambda mock: mock.traffic_paused)
    card.finish()
    assert not card.isVisible()
    assert not server.call(lambda mock: mock.traffic_paused)


def test_the_traffic_pauses_only_while_a_step_runs(qtbot, demo) -> None:
    main, server = demo
    card = started(main)
    card.show_step(1)
    assert card.runner.running
    assert server.call(lambda mock: mock.traffic_paused)
    qtbot.waitUntil(lambda: not card.runner.running, timeout=60_000)
    assert card.runner.succeeded, card.runner.outcome
    assert not server.call(lambda mock: mock.traffic_paused)  # read the outcome with traffic on
    card.show_step(0)  # back to the welcome page
    assert not server.call(lambda mock: mock.traffic_paused)


def closed_mid_step(main: MainWindow, card: TourCard, server: EmbeddedServer) -> None:
    """Close the window's feeds: the step stops, and the demo's traffic and slow motion
    are as they were for the windows left."""
    main.close_feeds()
    assert not card.runner.running
    assert not server.call(lambda mock: mock.traffic_paused)
    assert server.call(lambda mock: mock.latency) == 0


def test_closing_the_window_mid_step_lets_the_traffic_go_on(qtbot, demo) -> None:
    main, server = demo
    card = started(main)
    card.show_step(2)  # slow motion on, and waiting
    assert card.runner.running
    closed_mid_step(main, card, server)


def test_in_a_narrow_window_the_card_stays_in_sight_and_closing_ends_the_tour(qtbot, demo) -> None:
    main, server = demo
    main.resize(900, 800)  # with the inspector shown, too narrow for the list beside
    card = started(main)
    assert card.isVisible() and main.side.isAncestorOf(card)
    card.show_step(4)
    qtbot.waitUntil(lambda: main.narrow and main.open_peer is not None and main.side.isHidden())
    # The list is hidden: the card moved under the open chat, in sight.
    assert card.runner.running and card.isVisible() and main.chat_pane.isAncestorOf(card)
    closed_mid_step(main, card, server)


def test_opening_another_chat_mid_step_stops_it_with_a_word(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    card.show_step(2)
    # Waiting for the fill (slow motion holds the answer): the reader opens another chat.
    qtbot.waitUntil(lambda: "the filler asks" in card.status.text(), timeout=30_000)
    watched = main.open_peer
    other = next(r for r in main.chat_model.rows if isinstance(r, ChatRow) and r.peer_id != watched)
    main.open_chat(PeerId(other.peer_id), other.title)
    qtbot.waitUntil(lambda: not card.runner.running, timeout=5_000)
    assert not card.runner.succeeded
    assert card.status.text().startswith("✗ Another chat was opened. Press Again")


def test_the_inspector_is_left_filtered_and_paused_as_the_reader_had_it(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    main.chat_pane.inspector_button.setChecked(True)
    inspector = main.inspector
    inspector.filter.setText("chat list")
    inspector.pause_button.setChecked(True)
    run_step(qtbot, card, 1)
    assert inspector.filter.text() == ""  # the commit shown is not filtered away
    assert inspector.detail.toPlainText().startswith("Commit #")  # the commit shown
    card.finish()
    assert inspector.filter.text() == "chat list" and inspector.pause_button.isChecked()
    assert inspector.detail.toPlainText() == ""  # not left telling a commit nobody chose


def test_the_tour_writes_only_where_someone_can(qtbot, demo) -> None:
    """A chat with another account (as in ``--devices 2``) is passed over: the
    traffic never writes that account's side."""
    main, server = demo
    qtbot.waitUntil(lambda: len(people_in(main)) >= 2)
    first = people_in(main)[0]

    def log_in(mock: MockServer) -> None:
        mock.service.accounts.box(first.peer_id)

    server.call(log_in)
    main.open_chat(PeerId(first.peer_id), first.title)
    card = started(main)
    run_step(qtbot, card, 1)
    assert main.open_peer not in (None, first.peer_id)
    card.finish()


def test_a_live_insert_names_its_view_and_counts_the_silent_ones(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    outcome = run_step(qtbot, card, 1)
    assert main.inspector.isVisible() and main.open_peer is not None
    title = main.header.text()
    line = pointed_line(main)
    assert line.startswith(f"→ history of {title}: Generic, 1 new message")
    assert main.inspector.pause_button.isChecked()  # held still on the commit shown
    assert "consulted and stayed silent" in outcome
    entry = next(e for e in main.inspector.log if f"#{e.version} " in outcome)
    assert entry.open_views > entry.consulted  # some views were never asked
    card.show_step(2)  # moving on lets the inspector run again
    assert not main.inspector.pause_button.isChecked()
    card.runner.stop()


def test_scrolling_into_a_hole_shows_a_loading_row_then_a_fill_hole(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    loading_seen: list[bool] = []
    main.history_model.rowsInserted.connect(
        lambda *_: loading_seen.append(
            any(isinstance(r, LoadingRow) for r in main.history_model.rows)
        )
    )
    slow = main.inspector.slow_button
    assert slow is not None and not slow.isChecked()
    outcome = run_step(qtbot, card, 2)
    assert slow.isChecked()  # slow motion on while the step shows
    assert any(loading_seen)
    assert ": FillHole" in pointed_line(main)
    assert "removed" in outcome
    # The hole map follows: the fetch it drew in flight is over.
    qtbot.waitUntil(
        lambda: not any(s.kind is SegmentKind.FETCHING for s in main.inspector.hole_map.segments)
    )
    card.finish()
    assert not slow.isChecked()  # as the reader had it


def test_a_read_on_another_device_clears_the_badge_here(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    outcome = run_step(qtbot, card, 3)
    assert pointed_line(main).startswith("→ chat list")
    read = outcome.split("watches read state of ")[1].split(",")[0]
    row = next(r for r in main.chat_model.rows if r.title == read)
    assert row.unread == 0
    card.finish()


def test_a_dropped_connection_is_caught_up_by_get_difference(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    before = counters(main)["differences"]
    run_step(qtbot, card, 4)
    assert counters(main)["differences"] > before
    # The commit shown is the one that stored what was missed, not any later one.
    assert re.match(r"→ history of .*: Generic, 3 new messages", pointed_line(main))
    card.finish()


def test_too_long_turns_history_into_holes_that_fill_on_demand(qtbot, demo) -> None:
    main, _server = demo
    card = started(main)
    outcome = run_step(qtbot, card, 5)
    # The holes were added by one commit and the open chat filled by a later one.
    reset, fill = (int(n) for n in re.findall(r"commit #(\d+)", outcome))
    assert reset < fill
    assert counters(main)["too_long"] == 1
    assert ": FillHole" in pointed_line(main)
    card.finish()


def test_the_whole_tour_leaves_the_database_equal_to_the_account(
    qtbot, demo, tmp_path, capsys
) -> None:
    main, server = demo
    card = started(main)
    for position in range(1, len(TOUR)):
        run_step(qtbot, card, position)
    card.next_button.click()  # "Finish"
    assert not card.isVisible()
    assert main.account.worker.call(lambda engine: engine.wait_idle(timeout=30))
    verify_agrees_for(server, tmp_path / "c.db", TOKEN, capsys)


def test_without_the_demo_server_the_tour_is_not_offered(qtbot, window) -> None:
    main, _server = window
    assert not main.tour_action.isEnabled()
    main.start_tour()
    assert main.tour is None


# -- the runner, without a server ---------------------------------------------------------


def test_the_runner_sends_what_a_wait_found_and_reports_the_closing_line(qtbot) -> None:
    parent = QObject()
    runner = TourRunner(parent, beat_scale=0)
    ready: list[int] = []

    def script():
        found = yield Wait(lambda: ready and ready[0], "waiting")
        yield Beat(500, "a pause")
        return f"found {found}"

    doing: list[str] = []
    runner.doing.connect(doing.append)
    runner.run(script())
    assert runner.running and doing == ["waiting"]
    ready.append(7)
    with qtbot.waitSignal(runner.done, timeout=5_000) as finished:
        pass
    assert finished.args == ["found 7"] and runner.succeeded
    assert doing == ["waiting", "a pause"]


def test_a_step_that_breaks_says_why_instead_of_raising(qtbot) -> None:
    parent = QObject()
    runner = TourRunner(parent, beat_scale=0)

    def script():
        yield Wait(lambda: 1 / 0, "dividing")
        return "never"

    with qtbot.waitSignal(runner.failed, timeout=5_000) as failed:
        runner.run(script())
    assert failed.args == ["The step stopped: division by zero"]
    assert not runner.running and not runner.succeeded


def test_a_step_that_cannot_happen_here_says_so_as_a_failure(qtbot) -> None:
    parent = QObject()
    runner = TourRunner(parent, beat_scale=0)

    def script():
        yield Beat(0)
        raise StepImpossible("There is no private chat to write in.")

    with qtbot.waitSignal(runner.failed, timeout=5_000) as failed:
        runner.run(script())
    assert failed.args == ["There is no private chat to write in."]


def test_stopping_closes_the_script(qtbot) -> None:
    parent = QObject()
    runner = TourRunner(parent, beat_scale=0)
    closed: list[bool] = []

    def script():
        try:
            yield Wait(lambda: False, "forever")
        finally:
            closed.append(True)
        return ""

    runner.run(script())
    runner.stop()
    assert closed == [True] and not runner.running
