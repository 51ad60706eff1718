"""The window's docks: one per panel, where they go (the family's layout, fitted to the screen), and moving
between them (raise one, go to one by name, the next tab). The default layouts themselves are
:mod:`.layouts`, finding a panel by name :mod:`.navigation`. The window keeps
one :class:`DockPlacement`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QStyle, QWidget

from . import navigation as panel_navigation
from .layouts import DockLayouts, layout_key
from .paint_hold import PaintHold
from ..model import EncodingParams

if TYPE_CHECKING:
    from ..mainwindow import MainWindow

#: Screens with less available height than this (logical pixels) show the right area's docks as one row of
#: tabs: in two rows, each plot would be under ~160 px tall.
TWO_ROWS_MIN_HEIGHT = 800


class DockPlacement:
    """Builds ``window``'s docks (``window.docks``) and its layouts (``window.dock_layouts``), keeps them and the
    window on screen, and brings a panel's dock to the front.

    Parameters
    ----------
    window : MainWindow
        The window holding the docks; its panels (``window.panels``) are built when their dock first shows.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        #: Whether the window was fitted to its screen once shown (panels built after that fit again).
        self.fitted_to_screen = False
        #: Holds the window's repaints after a change of scheme until the panels' new data is in and laid out.
        self.paint_hold = PaintHold(window, window.compute)
        self._scheme = window.state.params.scheme

    def build(self) -> None:
        """A dock per registered panel (its panel built when it first shows), listed in the View menu, with
        View ▸ Layout, and the docks arranged in the current scheme's layout."""
        for panel_id, declared in self.window.panel_declarations.items():
            dock = QDockWidget(declared.title, self.window)
            dock.setObjectName(f"dock-{panel_id}")
            dock.setWidget(QWidget(dock))  # replaced by the panel when the dock is first shown
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.DockWidgetMovable
                | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                | QDockWidget.DockWidgetFeature.DockWidgetClosable
            )
            # Selecting a dock's tab shows it without a show event (see
            # Panel.on_screen): build its panel, or bring it up to date.
            dock.visibilityChanged.connect(
                lambda visible, pid=panel_id: visible and self.window.panels[pid].ensure_current()
            )
            # A dock floated from behind a tab (where Qt parks it off screen)
            # is shown without a visibilityChanged(True).
            dock.topLevelChanged.connect(
                lambda floating, pid=panel_id, d=dock:
                floating and d.isVisible() and self.window.panels[pid].ensure_current()
            )
            self.window.docks[panel_id] = dock
            self.window.view_menu.addAction(dock.toggleViewAction())
        self.window.view_menu.addSeparator()
        declared = self.window.panel_declarations
        # Only the panels a layout names are asked, and their docks show: their modules load for them anyway.
        self.window.dock_layouts = DockLayouts(self.window, self.window.docks,
                                               lambda pid, params: declared[pid].load().shows(params.info))
        layout_menu = self.window.view_menu.addMenu("&Layout")
        for key, layout in self.window.dock_layouts.layouts.items():
            action = layout_menu.addAction(layout.title)
            action.setToolTip(f"Arrange the docks as the default layout for {layout.title.replace('&', '').lower()}")
            action.triggered.connect(lambda _=False, k=key: self.reset_layout(k))
        layout_menu.addSeparator()
        layout_menu.addAction(self.window.reset_layout_action)
        self.window.view_menu.addAction(self.window.reset_layout_action)
        self.window.dock_layouts.arrange(layout_key(self.window.state.params), self.window.state.params)

    def raise_panel(self, panel_id: str, keep_in_view: str | None = None) -> None:
        """Show the dock of ``panel_id`` and bring it to the front of its tab group (see :class:`PanelHost`).

        When the dock of ``keep_in_view`` is tabbed with it, that dock moves
        below the first dock of the left column first, so both are seen.
        """
        dock = self.window.docks[panel_id]
        if keep_in_view is not None:
            self._move_out_of_tabs(self.window.docks[keep_in_view], dock)
        dock.show()
        dock.raise_()

    def _move_out_of_tabs(self, own: QDockWidget, target: QDockWidget) -> None:
        """Move ``own`` out of ``target``'s tab group, below the left column's first dock."""
        if own is target or own.isFloating() or target not in self.window.tabifiedDockWidgets(own):
            return
        self.window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, own)
        own.show()
        column = [dock for dock in self.window.dock_layouts.left_docks() if dock is not own]
        top = column[0] if column else None
        if top is not None and not top.isFloating() and top.isVisible():
            self.window.splitDockWidget(top, own, Qt.Orientation.Vertical)
            height = max(self.window.height(), 600)
            self.window.resizeDocks([top, own], [int(height * 0.4), int(height * 0.6)], Qt.Orientation.Vertical)

    def keep_on_screen(self) -> None:
        """Fit the window, frame included, into the available area of its screen and move it inside.

        The default size is larger than a small laptop's screen, and a
        geometry saved on a larger or since disconnected monitor may be
        larger than the screen, or lie partly or wholly outside it. The
        window system's frame is not known before the window is shown (on
        X11 not even at once after): at least a title bar's height is kept
        free for it, as Qt's restoreGeometry does.
        """
        frame, inner = self.window.frameGeometry(), self.window.geometry()
        available, border_w, border_h = self._available()
        width = min(inner.width(), available.width() - border_w)
        height = min(inner.height(), available.height() - border_h)
        if (width, height) != (inner.width(), inner.height()):
            self.window.resize(width, height)
        x = max(available.left(), min(frame.x(), available.right() + 1 - (width + border_w)))
        y = max(available.top(), min(frame.y(), available.bottom() + 1 - (height + border_h)))
        if (x, y) != (frame.x(), frame.y()):
            self.window.move(x, y)

    def reset_layout(self, key: str | None = None) -> None:
        """Put every dock back where layout ``key`` (default: the current scheme's) has it, closed ones too."""
        self.window.dock_layouts.reset(self.window.state.params, key or layout_key(self.window.state.params))
        self.fit_layout_to_screen()

    def follow_layout(self, params: EncodingParams) -> None:
        """Switch to the layout of a new scheme's family (see :mod:`.layouts`); a new scheme is painted once its
        panels' data is in (:class:`.PaintHold`)."""
        if self.window.dock_layouts.follow(params):
            self.fit_layout_to_screen()
        if params.scheme != self._scheme and self.window.isVisible():
            self.paint_hold.start()
        self._scheme = params.scheme

    def _available(self) -> tuple[QRect, int, int]:
        """The available area of the window's screen, and the width and height its frame takes (or will)."""
        frame, inner = self.window.frameGeometry(), self.window.geometry()
        screen = QGuiApplication.screenAt(frame.center()) or self.window.screen()
        title_bar = self.window.style().pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, None, self.window)
        return (screen.availableGeometry(), frame.width() - inner.width(),
                max(frame.height() - inner.height(), title_bar))

    def fit_layout_to_screen(self) -> None:
        """Tab a row of docks into one place when side by side they are wider than the screen, and both rows
        into one on a short screen.

        Side by side (the waveforms and the similarity; the positional logits
        and the permutation demo), with the parameter column, their controls
        need more width than a laptop's screen has. The second row goes first,
        then the first.
        """
        available, border_w, _ = self._available()
        self.fit_rows_to_screen_height()
        for row in reversed(self.window.dock_layouts.rows()):
            side_by_side = len(row) > 1 and all(dock.isVisible() and not dock.isFloating() for dock in row) and not any(
                other in self.window.tabifiedDockWidgets(row[0]) for other in row[1:])
            if side_by_side and self.window.minimumSizeHint().width() > available.width() - border_w:
                self.window.dock_layouts.tab_in_order(row[0], row[1:])

        panel_navigation.readable_tabs(self.window)

    def fit_rows_to_screen_height(self) -> None:
        """On a short screen, the right area's two rows in one: the first row's first dock in front, the others
        tabbed behind it.

        Two rows of plots on a short screen would each be too low to read.
        Needs no panel built: the window tabs them before it first shows
        (:meth:`MainWindow.setVisible`), so that no panel is built for a
        first paint it is not in.
        """
        available, _, border_h = self._available()
        top, second = self.window.dock_layouts.rows()
        if top and second and available.height() - border_h < TWO_ROWS_MIN_HEIGHT:
            apart = [dock for dock in [*top[1:], *second] if not dock.isFloating()
                     and dock.isVisibleTo(self.window) and dock not in self.window.tabifiedDockWidgets(top[0])]
            if apart:  # raised only then: a refit after a panel is built keeps the tab the user chose
                self.window.dock_layouts.tab_in_order(top[0], apart)

    def fit_new_panel(self, _panel_id: str) -> None:
        """A panel built after the window was fitted may need more width than its placeholder: fit again, once
        Qt has laid it out."""
        if self.fitted_to_screen:
            QTimer.singleShot(0, self._refit)

    def _refit(self) -> None:
        self.fit_layout_to_screen()
        self.keep_on_screen()

    def go_to_panel(self, name: str | None = None) -> str | None:
        """Bring the panel named ``name`` (asked for when None; see :func:`panel_navigation.find_panel`) to the
        front; its id, or None (cancelled, or no single panel of that name: said in the status bar)."""
        titles = {pid: dock.windowTitle() for pid, dock in self.window.docks.items()}
        if name is None:
            name = panel_navigation.ask_panel_name(self.window, sorted(titles.values(), key=str.casefold))
            if name is None:
                return None
        panel_id = panel_navigation.find_panel(name, titles)
        if panel_id is None:
            self.window.show_status(f"No single panel is named {name.strip()[:60]!r}: View lists them all")
            return None
        if self.window.docks[panel_id].isHidden():
            self.window.docks[panel_id].show()
        self.raise_panel(panel_id)
        return panel_id

    def current_panel(self) -> str | None:
        """The panel the user last used while its dock shows, else the first shown one."""
        window = self.window
        last = window.last_used_panel
        if last is not None and window.panel_shown(last) and window.panels[last].on_screen():
            return last
        return next((pid for pid in window.docks if window.panel_shown(pid) and window.panels[pid].on_screen()), None)

    def switch_tab(self, step: int) -> str | None:
        """Bring the next (``step`` +1) or previous (−1) dock of the current panel's tab group to the front.

        Returns the panel now in front (None when the current dock has no tabs).
        """
        current = self.current_panel()
        if current is None:
            return None
        dock = self.window.docks[current]
        group = [pid for pid, other in self.window.docks.items()
                 if other is dock or (other in self.window.tabifiedDockWidgets(dock) and other.isVisible())]
        if len(group) < 2:
            return None
        chosen = group[(group.index(current) + step) % len(group)]
        self.raise_panel(chosen)
        self.window.panels[chosen].setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.window.use_tracker.last = chosen
        return chosen
