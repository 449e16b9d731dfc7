"""Themes fill every colour of the style sheet; the app commands refuse bad input clearly."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from client.app import parse_faults
from client.cli import main
from sync.server.config import FaultConfig
from ui.theme import DARK, LIGHT, STYLE_SHEET, Theme, style_sheet


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_a_theme_fills_every_colour_of_the_style_sheet(theme: Theme) -> None:
    sheet = style_sheet(theme)
    assert "$" not in sheet
    used = set(re.findall(r"\$(\w+)", STYLE_SHEET.read_text(encoding="utf-8")))
    assert used <= {f.name for f in fields(Theme)}
    for name in used:
        assert getattr(theme, name) in sheet


def test_fault_specs_parse_into_a_fault_config() -> None:
    assert parse_faults("drop=0.05, reorder=4,dup=0.1") == FaultConfig(
        drop=0.05, reorder=4, duplicate=0.1
    )
    assert parse_faults("") == FaultConfig()
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_faults("drop")
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_faults("explode=1")
    with pytest.raises(ValueError, match="not a number"):
        parse_faults("delay=soon")


def test_fault_specs_name_the_faults_on_answers() -> None:
    assert parse_faults("drop-response=0.1,delay_response=0.5,cut_response=0.01") == FaultConfig(
        drop_response=0.1, delay_response=0.5, cut_response=0.01
    )
    with pytest.raises(ValueError, match="^cut_response must be a probability within 0..1"):
        parse_faults("cut_response=2")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--faults", "drop=2"], "drop"),
        (["demo", "--faults", "melt=1"], "NAME=VALUE"),
        (["demo", "--rate", "-1"], "rate must be within"),
        (["demo", "--devices", "5"], "within 1..4"),
        (["demo", "--devices", "two"], "within 1..4"),
        (["run", "--server", "nowhere", "--token", "t", "--db", "x.db"], "HOST:PORT"),
        (["run", "--token", "t", "--db", "x.db"], "--server"),
    ],
)
def test_the_app_commands_refuse_bad_arguments(argv, message, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_without_a_display_demo_says_how_to_proceed(monkeypatch, capsys) -> None:
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["demo"]) == 2
    assert "xvfb-run" in capsys.readouterr().err


def test_the_theme_switch_repaints_in_the_other_theme_and_is_kept(
    qtbot, tmp_path, monkeypatch
) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QShortcut
    from PySide6.QtWidgets import QApplication

    from client.account import Account
    from ui import theme as themes
    from ui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    monkeypatch.setattr(themes, "app_settings", lambda: settings)
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    themes.apply_theme(application, "light")
    account = Account(tmp_path / "c.db", "127.0.0.1", 1, "unused")
    window = MainWindow(account)
    qtbot.addWidget(window)
    try:
        assert themes.saved_theme() == "auto"
        shortcuts = {sc.key().toString() for sc in window.findChildren(QShortcut)}
        assert "Ctrl+Shift+L" in shortcuts
        window.switch_theme()
        assert themes.current_theme() is themes.DARK
        assert themes.saved_theme() == "dark"
        window.theme_button.click()
        assert themes.current_theme() is themes.LIGHT
        assert themes.saved_theme() == "light"
    finally:
        window.close_feeds()
        account.close()
        themes.apply_theme(application, "light")


def test_a_bad_theme_argument_is_refused(capsys) -> None:
    assert main(["demo", "--theme", "purple"]) == 2
    assert "invalid choice: 'purple'" in capsys.readouterr().err


def test_fault_specs_take_rate_limits_and_channel_timeouts_as_whole_numbers() -> None:
    config = parse_faults("flood-limit=3,flood_window=0.5,channel-timeout=10")
    assert config == FaultConfig(flood_limit=3, flood_window=0.5, channel_timeout=10)
    assert type(config.flood_limit) is int and type(config.channel_timeout) is int
