"""Finding a panel by its name: tabs that show whole titles, and View ▸ Go to panel… (Ctrl+K).

With twenty panels the window's tab bars cut titles to "H…", "U…"; the
tabs now keep their titles and scroll, and any panel can be reached by
typing part of its name.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QMainWindow, QTabBar, QWidget


def readable_tabs(window: QMainWindow) -> None:
    """Let every dock tab bar of ``window`` show whole titles, scrolling when they do not fit."""
    # the main window's own dock tab bars, not a panel's tab widgets: its children only (searching every panel's
    # widgets took 7 ms of each scheme switch)
    for bar in window.findChildren(QTabBar, "", Qt.FindChildOption.FindDirectChildrenOnly):
        if bar.elideMode() != Qt.TextElideMode.ElideNone or not bar.usesScrollButtons():
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)


def find_panel(text: str, titles: Mapping[str, str]) -> str | None:
    """The id of the panel named by ``text``: its title or id (any case), else the one title that starts with it,
    else the one that contains it; None when no panel or more than one matches."""
    wanted = " ".join(text.split()).casefold()
    if not wanted:
        return None
    exact = [pid for pid, title in titles.items() if wanted in (title.casefold(), pid.casefold())]
    if exact:
        return exact[0]
    for matches in ([pid for pid, title in titles.items() if title.casefold().startswith(wanted)],
                    [pid for pid, title in titles.items() if wanted in title.casefold()]):
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    return None


def ask_panel_name(parent: QWidget, titles: list[str]) -> str | None:
    """The panel name the user types or picks (completion over ``titles``), or None when cancelled (tests
    replace it)."""
    text, ok = QInputDialog.getItem(parent, "Go to panel", "Panel (type part of its name):", titles, 0, True)
    return text if ok else None
