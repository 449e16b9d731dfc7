"""Slow motion: the demo's --latency, and the inspector's button that switches the
server's latency on and off."""

from __future__ import annotations

import argparse

import pytest

from client.account import Account
from client.app import parse_latency
from client.demo_stage import DemoStage
from client.slow_motion import SlowMotion
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import FAST
from ui.main_window import MainWindow

TOKEN = "slow"


@pytest.mark.parametrize(
    ("text", "seconds"), [("800ms", 0.8), ("0.5s", 0.5), ("2", 2.0), (" 1500MS ", 1.5), ("0", 0.0)]
)
def test_a_latency_reads_in_milliseconds_or_seconds(text: str, seconds: float) -> None:
    assert parse_latency(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "says"), [("fast", "not a time"), ("20s", "within 0..10")])
def test_a_wrong_latency_says_why(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        parse_latency(text)


def test_switching_tells_the_server_the_latency_or_zero() -> None:
    told: list[float] = []
    slow = SlowMotion(0.8, told.append)
    slow.switch(True)
    slow.switch(False)
    assert told == [0.8, 0.0]
    assert slow.label == "Slow motion (800 ms)"


@pytest.mark.gui
def test_the_inspector_button_slows_the_real_server_down_and_back(qtbot, tmp_path) -> None:
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=3, peers=8, messages=100)) as server:
        stage = DemoStage(server)  # asks without waiting; later calls come after it
        account = Account(tmp_path / "c.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST)
        account.start()
        window = MainWindow(account, slow_motion=SlowMotion(0.3, stage.set_latency))
        qtbot.addWidget(window)
        try:
            button = window.inspector.slow_button
            assert button is not None and not button.isChecked()
            button.click()
            assert server.call(lambda mock: mock.latency) == pytest.approx(0.3)
            button.click()
            assert server.call(lambda mock: mock.latency) == 0.0
        finally:
            window.close_feeds()
            account.close()


def test_switching_twice_the_same_way_tells_the_server_once_and_watchers_follow() -> None:
    told: list[float] = []
    heard: list[bool] = []
    slow = SlowMotion(0.5, told.append)
    stop = slow.watch(heard.append)
    slow.switch(True)
    slow.switch(True)
    stop()
    slow.switch(False)
    assert told == [0.5, 0.0]
    assert heard == [True]


@pytest.mark.gui
def test_two_windows_share_slow_motion_and_their_buttons_follow_each_other(qtbot, tmp_path) -> None:
    told: list[float] = []
    slow = SlowMotion(0.3, told.append)
    with EmbeddedServer(ServerConfig(token=TOKEN, seed=3, peers=8, messages=100)) as server:
        accounts = [
            Account(tmp_path / f"{n}.db", "127.0.0.1", server.port, TOKEN, timeouts=FAST).start()
            for n in range(2)
        ]
        windows = [MainWindow(account, slow_motion=slow) for account in accounts]
        for window in windows:
            qtbot.addWidget(window)
        try:
            first, second = (window.inspector.slow_button for window in windows)
            assert first is not None and second is not None
            first.click()
            assert second.isChecked() and slow.on
            second.click()
            assert not first.isChecked() and not slow.on
            assert told == [0.3, 0.0]  # once each way, not once per window
            windows[0].close_feeds()
            second.click()  # a closed window's button no longer follows
            assert not first.isChecked() and told == [0.3, 0.0, 0.3]
        finally:
            for window, account in zip(windows, accounts, strict=True):
                window.close_feeds()
                account.close()
