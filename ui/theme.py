"""Light and dark themes: the palette, the style sheet (``ui/styles/app.qss``, package
data), bubble colours.

``apply_theme(app, "auto")`` follows the system's colour scheme; ``"light"`` and
``"dark"`` force one. The choice made in the app is kept in the user's settings
(``saved_theme``) for the next start. The delegates read ``current_theme()`` when they paint, so a
theme change repaints everything in its colours.
"""

from __future__ import annotations

import functools
import string
from dataclasses import asdict, dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

__all__ = [
    "DARK",
    "LIGHT",
    "STYLE_SHEET",
    "THEMES",
    "Theme",
    "app_settings",
    "apply_theme",
    "current_theme",
    "qcolor",
    "save_theme",
    "saved_theme",
    "style_sheet",
]

#: The style sheet template, read from the installed package (a wheel or a checkout).
STYLE_SHEET: Traversable = resources.files("ui") / "styles" / "app.qss"


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    window: str
    base: str
    input: str
    text: str
    muted: str
    accent: str
    divider: str
    selection: str
    scrollbar: str
    history: str
    bubble_in: str
    bubble_out: str
    bubble_text: str
    time_in: str
    time_out: str
    date_pill: str
    online: str
    badge_muted: str
    warning: str


LIGHT = Theme(
    name="light",
    window="#f4f4f5",
    base="#ffffff",
    input="#f1f3f5",
    text="#1b1f23",
    muted="#7d8690",
    accent="#3390ec",
    divider="#dfe1e5",
    selection="#e3eefb",
    scrollbar="#c4c9cf",
    history="#d7e3ec",
    bubble_in="#ffffff",
    bubble_out="#e1ffc7",
    bubble_text="#1a1a1a",
    time_in="#8a8a8a",
    time_out="#4fae4e",
    date_pill="#00000040",
    online="#4dcd5e",
    badge_muted="#b3b9c0",
    warning="#d14b3f",
)

DARK = Theme(
    name="dark",
    window="#17212b",
    base="#1e2c3a",
    input="#242f3d",
    text="#e9eef3",
    muted="#8596a8",
    accent="#5fa8f0",
    divider="#0f1922",
    selection="#2b5278",
    scrollbar="#3d4c5c",
    history="#0e1621",
    bubble_in="#182533",
    bubble_out="#2b5278",
    bubble_text="#f5f7f9",
    time_in="#6d7f8f",
    time_out="#7da8d3",
    date_pill="#ffffff26",
    online="#4dcd5e",
    badge_muted="#4b5a6a",
    warning="#ef7a6f",
)

_current = LIGHT


def current_theme() -> Theme:
    return _current


def style_sheet(theme: Theme) -> str:
    """The style sheet with the theme's colours filled in."""
    return string.Template(STYLE_SHEET.read_text(encoding="utf-8")).substitute(asdict(theme))


@functools.lru_cache(maxsize=256)
def qcolor(value: str) -> QColor:
    """``#rrggbbaa`` (CSS order) as a QColor, parsed once (do not modify the result)."""
    if len(value) == 9:
        color = QColor(value[:7])
        color.setAlpha(int(value[7:], 16))
        return color
    return QColor(value)


def _palette(theme: Theme) -> QPalette:
    palette = QPalette()
    role = QPalette.ColorRole
    for which, value in (
        (role.Window, theme.window),
        (role.WindowText, theme.text),
        (role.Base, theme.base),
        (role.AlternateBase, theme.input),
        (role.Text, theme.text),
        (role.Button, theme.base),
        (role.ButtonText, theme.text),
        (role.Highlight, theme.accent),
        (role.HighlightedText, "#ffffff"),
        (role.PlaceholderText, theme.muted),
        (role.ToolTipBase, theme.base),
        (role.ToolTipText, theme.text),
        (role.Link, theme.accent),
    ):
        palette.setColor(which, qcolor(value))
    return palette


THEMES = ("auto", "light", "dark")


def app_settings() -> QSettings:
    """Where the app keeps what it remembers (the theme, the tour offered)."""
    return QSettings("postbox-chat", "postbox-chat")


def saved_theme() -> str:
    """The theme chosen last in the app (``auto`` if none, or if the setting is bad)."""
    value = app_settings().value("theme", "auto")
    return value if isinstance(value, str) and value in THEMES else "auto"


def save_theme(name: str) -> None:
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}: use auto, light or dark")
    app_settings().setValue("theme", name)


def apply_theme(app: QApplication, name: str = "auto") -> Theme:
    """Use the light or dark theme (``auto``: as the system's colour scheme says)."""
    global _current
    if name == "auto":
        dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
        theme = DARK if dark else LIGHT
    elif name in ("light", "dark"):
        theme = DARK if name == "dark" else LIGHT
    else:
        raise ValueError(f"unknown theme {name!r}: use auto, light or dark")
    _current = theme
    app.setStyle("Fusion")
    app.setPalette(_palette(theme))
    app.setStyleSheet(style_sheet(theme))
    return theme
