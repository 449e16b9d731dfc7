"""The main window's shortcuts as the platform Qt runs on resolves them, printed as JSON.

Run under a real X server (``python -m tests.ui.shortcut_probe DB``): the offscreen
platform has no standard key bindings, so a ``QKeySequence.StandardKey`` bound beside
the same plain sequence looks harmless there and is ambiguous on X11. The probe opens
the window over a local database (nothing syncs), lists every window-wide shortcut with
every sequence it answers to, then presses Ctrl+Q through Qt's shortcut map and says
whether the window closed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from client.account import Account
from ui.main_window import MainWindow

_WIDE = (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)


def window_shortcuts(window: MainWindow) -> list[tuple[str, str]]:
    """(sequence, owner) for each sequence a window-wide shortcut or action answers to."""
    found: list[tuple[str, str]] = []
    for number, shortcut in enumerate(window.findChildren(QShortcut)):
        if shortcut.context() in _WIDE:
            sequences: list[QKeySequence] = shortcut.keys()
            owner = f"QShortcut #{number}"
            found += [(keys.toString(), owner) for keys in sequences if not keys.isEmpty()]
    for action in window.findChildren(QAction):
        if action.shortcutContext() in _WIDE:
            owner = f"QAction {action.text()!r}"
            found += [(keys.toString(), owner) for keys in action.shortcuts() if not keys.isEmpty()]
    return found


def main(database: Path) -> int:
    application = QApplication(sys.argv[:1])
    account = Account(database, "127.0.0.1", 1, "unused")
    try:
        window = MainWindow(account)
        window.show()
        window.activateWindow()
        active = QTest.qWaitForWindowActive(window, 10_000)
        report = {
            "platform": application.platformName(),
            "quit_bindings": [
                k.toString() for k in QKeySequence.keyBindings(QKeySequence.StandardKey.Quit)
            ],  # fmt: skip
            "shortcuts": window_shortcuts(window),
            "active": active,
        }
        QTest.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
        report["closed_by_ctrl_q"] = not window.isVisible()
        window.close_feeds()
        print(json.dumps(report))
    finally:
        account.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
