"""The window's keyboard shortcuts: one table (:data:`SHORTCUTS`) gives the actions their keys, the actions the
window makes for them (the walkthrough's steps, the tab and panel navigation, reset zoom), and Help ▸ Keyboard
shortcuts, which lists them and every other action of the window that has a shortcut. The window keeps one
:class:`Shortcuts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QGraphicsView, QHeaderView, QTableWidget, QTableWidgetItem,
                               QVBoxLayout)

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


@dataclass(frozen=True)
class Shortcut:
    """One keyboard shortcut of the window: the action ``name``, its keys and what it does (Help ▸ Keyboard
    shortcuts).

    The action is the attribute ``attribute`` (``<name>_action`` when empty) of :class:`Shortcuts` or of the
    window, or the window's export action ``name`` (see :meth:`Shortcuts.action`).
    """

    name: str
    keys: str
    what: str
    attribute: str = ""


#: The window's own shortcuts, one table: the actions get their keys from it. Help ▸ Keyboard shortcuts
#: lists these and every other action of the window that has a shortcut (File, Edit, …).
SHORTCUTS = (
    Shortcut("walkthrough_next", "Alt+Right", "Walkthrough: next step"),
    Shortcut("walkthrough_back", "Alt+Left", "Walkthrough: previous step"),
    Shortcut("next_tab", "Ctrl+PgDown", "Next panel among the tabs of the current panel's dock"),
    Shortcut("previous_tab", "Ctrl+PgUp", "Previous panel among the tabs of the current panel's dock"),
    Shortcut("go_to_panel", "Ctrl+K", "Go to a panel by typing part of its name"),
    Shortcut("reset_zoom", "Ctrl+0", "Reset the zoom of the current panel: show all it plots"),
    Shortcut("export", "Ctrl+E", "Export a panel's figure or data…"),
    Shortcut("pin_a", "Ctrl+Shift+A", "Pin the current setup as A (A/B comparison)", attribute="pin_action"),
    Shortcut("keyboard_shortcuts", "F1", "List the keyboard shortcuts"),
)


class Shortcuts:
    """Makes ``window``'s shortcut actions, gives every :data:`SHORTCUTS` entry its keys, and lists them.

    Parameters
    ----------
    window : MainWindow
        The window whose actions (its own, this object's, its export actions) get the keys.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def build(self) -> None:
        """The actions of :data:`SHORTCUTS` that the window makes here, and every table entry's keys.

        An entry whose action the window does not have is left out (it is
        not listed either).
        """
        self.walkthrough_next_action = QAction("Walkthrough: &next step", self.window)
        self.walkthrough_next_action.triggered.connect(lambda: self._walkthrough_step(+1))
        self.walkthrough_back_action = QAction("Walkthrough: &previous step", self.window)
        self.walkthrough_back_action.triggered.connect(lambda: self._walkthrough_step(-1))
        self.next_tab_action = QAction("Ne&xt tab", self.window)
        self.next_tab_action.triggered.connect(lambda: self.window.switch_tab(+1))
        self.previous_tab_action = QAction("Pre&vious tab", self.window)
        self.previous_tab_action.triggered.connect(lambda: self.window.switch_tab(-1))
        self.reset_zoom_action = QAction("Reset &zoom", self.window)
        self.reset_zoom_action.triggered.connect(self.reset_zoom)
        self.go_to_panel_action = QAction("&Go to panel…", self.window)
        self.go_to_panel_action.triggered.connect(lambda: self.window.go_to_panel())
        self.keyboard_shortcuts_action = QAction("&Keyboard shortcuts", self.window)
        self.keyboard_shortcuts_action.triggered.connect(self.show_table)
        for entry in SHORTCUTS:
            action = self.action(entry.name)
            if action is not None:
                action.setShortcut(QKeySequence(entry.keys))
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.window.view_menu.addSeparator()
        self.window.view_menu.addActions([self.go_to_panel_action, self.next_tab_action, self.previous_tab_action,
                                          self.reset_zoom_action,
                                          self.walkthrough_back_action, self.walkthrough_next_action])
        self.window.help_menu.insertAction(self.window.help_menu.actions()[0], self.keyboard_shortcuts_action)

    def action(self, name: str) -> QAction | None:
        """The action of the :data:`SHORTCUTS` entry ``name`` (see :class:`Shortcut`), None when the window has none."""
        entry = next(entry for entry in SHORTCUTS if entry.name == name)
        attribute = entry.attribute or f"{name}_action"
        action = getattr(self, attribute, None) or getattr(self.window, attribute, None)
        if action is None:
            action = self.window.export_actions.get(name)
        return action if isinstance(action, QAction) else None

    def rows(self) -> list[tuple[str, str, str]]:
        """``(keys, action, what it does)`` for every action of the window that has a shortcut, table entries first."""
        rows, seen = [], set()
        for entry in SHORTCUTS:
            action = self.action(entry.name)
            if action is not None and not action.shortcut().isEmpty():
                seen.add(action)
                rows.append((_keys_text(action), _action_text(action), entry.what))
        for action in self.window.findChildren(QAction):
            if action not in seen and action.shortcuts():
                seen.add(action)
                rows.append((_keys_text(action), _action_text(action), action.statusTip() or ""))
        return rows

    def show_table(self) -> QDialog:
        """Help ▸ Keyboard shortcuts: a table of :meth:`rows`."""
        rows = self.rows()
        dialog = QDialog(self.window)
        dialog.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(rows), 3, dialog)
        table.setObjectName("shortcuts-table")
        table.setHorizontalHeaderLabels(["Keys", "Action", "What it does"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                table.setItem(row, column, QTableWidgetItem(value))
        table.resizeColumnsToContents()
        table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(table)
        layout.addWidget(buttons)
        dialog.resize(720, 420)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def reset_zoom(self) -> str | None:
        """Show everything the current panel plots again (after zooming or panning); the panel's id, or None."""
        current = self.window.dock_placement.current_panel()
        if current is None:
            return None
        panel = self.window.panels[current]
        for view in panel.findChildren(QGraphicsView):
            for item in view.items():
                if isinstance(item, pg.ViewBox) and item.isVisible():
                    item.autoRange(padding=0)
        panel.schedule_update()  # each panel sets its own ranges (round ends, room for labels) on update
        return current

    def _walkthrough_step(self, step: int) -> None:
        self.window.raise_panel("walkthrough")
        walkthrough = self.window.panels["walkthrough"]
        walkthrough.next() if step > 0 else walkthrough.back()


def _keys_text(action: QAction) -> str:
    """An action's shortcuts as the user types them (``Ctrl+Shift+Z, Ctrl+Y``)."""
    return ", ".join(key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts())


def _action_text(action: QAction) -> str:
    """An action's menu text without its ``&`` accelerators."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
