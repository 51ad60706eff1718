"""The window's themes and colour maps: View ▸ Theme and View ▸ Colour maps, the saved choice restored at start
(or the command line's) and saved on close, and every built panel restyled when they change. The window keeps
one :class:`Themes`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication

from ..views.plotkit import theme

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class Themes(QObject):
    """Chooses, restores and saves ``window``'s theme and colour maps (:mod:`posenc_gui.views.plotkit.theme`).

    A child of the window: its connection to the theme's ``changed`` signal ends with the window.

    Parameters
    ----------
    window : MainWindow
        The window whose menus, settings (``window.saved_settings``) and panels follow the theme.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window

    def restore(self, restore: bool, chosen: str | None) -> None:
        """Use the theme ``chosen`` (the command line's), else the saved one (``restore``), else light.

        The same for the colour maps (saved, else the defaults). A saved value
        that is not one of the choices is named in the settings warning and
        the default is used.
        """
        name, maps = chosen or theme.LIGHT.name, {kind: names[0] for kind, names in theme.COLORMAP_CHOICES.items()}
        ignored = self.window.saved_settings.ignored
        if restore:
            saved = self.window.settings.value("theme")
            if chosen is None and saved is not None:
                if saved in theme.THEME_NAMES:
                    name = saved
                else:
                    ignored.append(f"theme ignored (not one of {', '.join(theme.THEME_NAMES)})")
            raw = self.window.settings.value("colormaps")
            if raw is not None:
                try:
                    saved_maps = json.loads(raw)
                except ValueError:
                    saved_maps = None
                if not isinstance(saved_maps, dict):
                    ignored.append("colour maps ignored (not a JSON object)")
                    saved_maps = {}
                for kind, value in saved_maps.items():
                    if kind in maps and value in theme.COLORMAP_CHOICES[kind]:
                        maps[kind] = value
                    else:
                        ignored.append(f"colour map {str(kind)[:40]!r} ignored (unknown)")
        for kind, value in maps.items():
            theme.set_colormap(kind, value)
        theme.set_theme(name)
        theme.apply_window_palette(QApplication.instance())

    def save(self) -> None:
        """Put the current theme and colour maps in the window's settings (written with the others)."""
        self.window.settings.setValue("theme", theme.current().name)
        self.window.settings.setValue("colormaps", json.dumps({kind: theme.colormap_for(kind)
                                                               for kind in theme.COLORMAP_CHOICES}))

    def build_menu(self) -> None:
        """View ▸ Theme (light, dark, print) and View ▸ Colour maps (one choice per kind of matrix)."""
        self.window.view_menu.addSeparator()
        theme_menu = self.window.view_menu.addMenu("&Theme")
        group = QActionGroup(self.window)
        self.theme_actions: dict[str, QAction] = {}
        labels = {"light": "&Light", "dark": "&Dark", "print": "&Print (white, black text, heavier lines)"}
        for name in theme.THEME_NAMES:
            action = QAction(labels[name], self.window, checkable=True)
            action.setChecked(name == theme.current().name)
            action.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[name] = action
        maps_menu = self.window.view_menu.addMenu("&Colour maps")
        self.colormap_actions: dict[tuple[str, str], QAction] = {}
        for kind, names in theme.COLORMAP_CHOICES.items():
            kind_menu = maps_menu.addMenu(theme.COLORMAP_KIND_LABELS[kind])
            kind_group = QActionGroup(self.window)
            for name in names:
                action = QAction(name, self.window, checkable=True)
                action.setChecked(name == theme.colormap_for(kind))
                action.triggered.connect(lambda _=False, k=kind, n=name: self.set_colormap(k, n))
                kind_group.addAction(action)
                kind_menu.addAction(action)
                self.colormap_actions[(kind, name)] = action
        theme.signals.changed.connect(self._theme_changed)
        self.window.panelCreated.connect(lambda panel_id: theme.restyle(self.window.panels[panel_id]))

    def set_theme(self, name: str) -> None:
        """Show the window and every panel in the theme ``name`` (ValueError for an unknown one)."""
        theme.set_theme(name)  # the window follows theme.signals.changed

    def set_colormap(self, kind: str, name: str) -> None:
        """Draw every matrix of ``kind`` with the colour map ``name`` (see :data:`.plotkit.theme.COLORMAP_CHOICES`)."""
        theme.set_colormap(kind, name)

    def _theme_changed(self) -> None:
        """Restyle the window and the built panels in the current theme and colour maps; the menus show them."""
        current = theme.current()
        theme.apply_window_palette(QApplication.instance(), current)
        for name, action in self.theme_actions.items():
            action.setChecked(name == current.name)
        for (kind, name), action in self.colormap_actions.items():
            action.setChecked(name == theme.colormap_for(kind))
        for panel in self.window.panels.built().values():
            theme.restyle(panel.exported())  # with A's copy and the difference while comparing
            panel.schedule_update()  # what a panel sets on each update (titles, keys, maps) in the new colours
            if panel.comparison is not None:
                panel.comparison.a.schedule_update()
