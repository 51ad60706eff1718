"""The main window: one dock per panel, View menu, persistent layout and parameters."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Callable

import pyqtgraph as pg
from PySide6.QtCore import QByteArray, QElapsedTimer, QEvent, QObject, QRect, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtGui import (QAction, QActionGroup, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QIcon,
                           QKeySequence)
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QDockWidget, QFileDialog, QGraphicsView,
                               QHeaderView, QLabel, QMainWindow, QMessageBox, QProgressBar, QStyle, QTableWidget,
                               QTableWidgetItem, QToolButton, QUndoView, QVBoxLayout, QWidget)

from . import __version__, panel_navigation, resources_path
from .compute import ComputeService
from .dock_layouts import SETTINGS_VERSION, DockLayouts, layout_key
from .model import OPTION_SPECS, EncodingParams, ParamSpec
from .model.core.digits import entry_with_error, shown_number
from .session import Session, SessionError, checked_compare, read_session, write_session
from .settings import Key, Settings
from .linked_cursor import Cursor
from .state import AppState
from .views.base import Panel
from .views.compare import MODES as COMPARE_MODES, Comparison
from .views.export_ui import SETTINGS_FOLDER, SETTINGS_FORMAT, SETTINGS_SCALE, install_export_actions
from .views.handout_ui import open_handout_dialog
from .views.labels import StatusText, counted
from .views.model_locations import install_models_menu
from .views.model_open import model_location, open_chosen_path, open_model_dialog, open_model_path
from .views.plotkit import theme
from .views.registry import panel_classes

#: Every key of the settings file. The window's state and geometry are a few
#: hundred bytes, the parameters' JSON about 110 (a few kB with LongRoPE's
#: factor lists, at most 2 × 4,096 numbers, twice with the remembered ones):
#: the bounds keep Qt's parsers and json's within their limits (json's
#: recursion is caught).
SETTINGS_KEYS = {
    "geometry": Key(QByteArray, 1024, "window geometry", required=True),
    "windowState": Key(QByteArray, 16 * 1024, "layout", required=True),
    "params": Key(str, 512 * 1024, "parameters", required=True),
    "view": Key(str, 1024, "view settings"),
    SETTINGS_FOLDER: Key(str, 4096, "export folder"),
    SETTINGS_FORMAT: Key(str, 16, "export format"),
    SETTINGS_SCALE: Key(str, 32, "PNG scale"),
    "recentSessions": Key(str, 40 * 1024, "recent sessions"),
    "compare": Key(str, 512 * 1024, "A/B comparison"),
    "theme": Key(str, 16, "theme"),
    "colormaps": Key(str, 256, "colour maps"),
    "layouts": Key(str, 32 * 1024, "layouts per family"),
}


@dataclass(frozen=True)
class Shortcut:
    """One keyboard shortcut of the window: the action ``name``, its keys and what it does (Help ▸ Keyboard
    shortcuts).

    The action is the window's attribute ``attribute`` (``<name>_action`` when empty), or its export action
    ``name`` (see :meth:`MainWindow.shortcut_action`).
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
#: Session files File ▸ Open recent offers, newest first.
MAX_RECENT_SESSIONS = 8
#: Longest path File ▸ Open recent keeps.
MAX_RECENT_PATH = 4096
#: The window's size at first launch (logical pixels), made smaller on a screen without room for it.
DEFAULT_SIZE = (1500, 950)
#: The panels of the right area shown at first launch (their ``dock``); the others are tabbed behind them.
PRIMARY_PANELS = tuple(cls.panel_id for cls in panel_classes() if cls.dock.area == "right" and cls.dock.shown)
#: Screens with less available height than this (logical pixels) show the right area's docks as one row of
#: tabs: in two rows, each plot would be under ~160 px tall.
TWO_ROWS_MIN_HEIGHT = 800
#: Hidden docks get their panels built in idle time, starting this long after the window appears.
PREBUILD_DELAY_MS = 2000
#: ... one at a time, this far apart, and only when no view has asked for an
#: update (a parameter change, a zoom, a pan) for IDLE_MS and no mouse button is held.
PREBUILD_STEP_MS = 300
IDLE_MS = 1000
#: How long the status bar shows what a model opened from the command line is shown as (its notes).
MODEL_MESSAGE_MS = 30_000
#: The status bar's cursor readout while there is no linked cursor.
NO_CURSOR = "Cursor: hover a plot to mark a position in every panel, click to pin it"


#: The file dialogs' filter of session files.
SESSION_FILTER = "posenc-gui sessions (*.json);;All files (*)"


def _no_constant(text: str) -> None:
    raise ValueError(f"{text} is no number")


def ask_session_path(parent: QWidget, title: str, proposed: str, save: bool) -> str | None:
    """The session file the user chooses in a file dialog, or None when cancelled (tests replace it)."""
    ask = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    path, _ = ask(parent, title, proposed, SESSION_FILTER)
    return path or None


def show_session_problem(parent: QWidget, title: str, message: str) -> None:
    """Tell the user why a session was not opened or saved (tests replace it)."""
    QMessageBox.warning(parent, title, message)


def settings_file() -> str:
    """Path of the ini file holding layout and last parameters.

    ``POSENC_GUI_SETTINGS`` overrides it (tests, portable installs).
    """
    override = os.environ.get("POSENC_GUI_SETTINGS")
    if override:
        return override
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return os.path.join(folder or os.path.expanduser("~/.config/posenc-gui"), "posenc-gui.ini")


class LazyPanels(Mapping):
    """The window's panels by id; each is built the first time it is asked for.

    Building every panel up front would delay the first window (the
    permutation demo alone makes dozens of plots); a dock builds its panel when it is first shown,
    and ``panels[panel_id]`` builds it on demand (export, scripts, tests).
    """

    def __init__(self, panel_ids: list[str], build: Callable[[str], Panel],
                 on_built: Callable[[str], None]) -> None:
        self._ids = list(panel_ids)
        self._build = build
        self._on_built = on_built
        self._built: dict[str, Panel] = {}

    def __getitem__(self, panel_id: str) -> Panel:
        if panel_id not in self._ids:
            raise KeyError(panel_id)
        if panel_id not in self._built:
            self._built[panel_id] = self._build(panel_id)
            self._on_built(panel_id)
        return self._built[panel_id]

    def __contains__(self, panel_id: object) -> bool:
        return panel_id in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def built(self) -> dict[str, Panel]:
        """The panels built so far, without building the others."""
        return dict(self._built)


class PanelPrebuilder:
    """Builds the panels of hidden docks while the user is idle.

    A panel is built the first time its dock shows, which blocks the window
    while pyqtgraph builds its plots (the addition dock has six).
    Showing a tabbed dock or a walkthrough step then hitches. Built ahead,
    one panel per idle moment, a hidden panel costs nothing more: it
    computes only once it is shown (:meth:`Panel.schedule_update`).
    """

    def __init__(self, window: "MainWindow") -> None:
        self._window = window
        self._timer = QTimer(window)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._step)
        self._since_change = QElapsedTimer()
        self._since_change.start()
        self._stopped = False
        window.state.paramsChanged.connect(lambda _: self._since_change.restart())

    def start(self) -> None:
        """Begin after :data:`PREBUILD_DELAY_MS` (the first time the window shows)."""
        if not self._stopped and not self._timer.isActive() and self.pending():
            self._timer.start(PREBUILD_DELAY_MS)

    def stop(self) -> None:
        self._stopped = True
        self._timer.stop()

    def pending(self) -> list[str]:
        """Panels not built yet, in View-menu order."""
        built = self._window.panels.built()
        return [panel_id for panel_id in self._window.panels if panel_id not in built]

    def _step(self) -> None:
        pending = self.pending()
        if self._stopped or not pending:
            return
        window = self._window
        # A zoom or pan changes no parameter, but each re-sample goes through
        # the compute service: building a panel then would hitch a long wheel zoom.
        busy = (QApplication.mouseButtons() != Qt.MouseButton.NoButton
                or self._since_change.elapsed() < IDLE_MS
                or window.compute.ms_since_request() < IDLE_MS or not window.compute.is_idle())
        if not busy:
            window.compute.prepare_worker_process()
            window.panels[pending[0]]
        if len(pending) > (0 if busy else 1):
            self._timer.start(PREBUILD_STEP_MS)


class PanelUseTracker(QObject):
    """Which panel the user used last: hovered, clicked or zoomed one of its plots, or typed in it.

    The export dialog (Ctrl+E) and Copy figure offer that panel. Each
    built panel's canvases (the viewports of its graphics views) are
    watched with an event filter for the cursor entering, a button press
    and the wheel; keyboard focus moving into a panel (a control clicked or
    tabbed to) counts too. Moving over a panel's controls does not: the
    way from a plot to the menu bar crosses other docks.
    """

    USES = (QEvent.Type.Enter, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.last: str | None = None
        QApplication.instance().focusChanged.connect(self._focus_changed)  # ends with this object

    def watch(self, panel: Panel) -> None:
        """Follow the use of ``panel``'s canvases."""
        for view in panel.findChildren(QGraphicsView):
            view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() in self.USES:
            self._used(watched)
        return False

    def _focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        # Focus that arrives from another window or from outside (the window
        # activated again, a dialog closed) returns to where it was: no use.
        if old is not None and new is not None and old.window() is new.window():
            self._used(new)

    def _used(self, widget: QObject | None) -> None:
        while widget is not None and not isinstance(widget, Panel):
            widget = widget.parent()
        if widget is not None:
            self.last = widget.panel_id


class MainWindow(QMainWindow):
    """Docks for every panel, sharing one :class:`AppState` and :class:`ComputeService`.

    Parameters
    ----------
    params : EncodingParams, optional
        Starting parameters; when omitted, the last session's are restored.
    overrides : dict, optional
        Fields set on top of the starting parameters (the command line's flags).
    restore : bool
        Restore layout, geometry and (unless ``params`` is given) parameters.
    session : Session, optional
        A checked session file's content, applied on top of what was restored
        (``overrides`` still win); see :meth:`apply_session`.
    notice : str, optional
        A message for the status bar (what the command line's ``--model`` opened, and its notes).

    Signals
    -------
    panelCreated(str)
        A dock's panel was built (see :class:`LazyPanels`).
    """

    panelCreated = Signal(str)

    def __init__(
        self, params: EncodingParams | None = None, overrides: dict | None = None, restore: bool = True,
        session: Session | None = None, notice: str | None = None, theme_name: str | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle("posenc_gui — positional encodings lab")
        self.setWindowIcon(QIcon(str(resources_path("icons", "posenc-gui.svg"))))
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self.settings = Settings(settings_file(), SETTINGS_KEYS)
        self._ignored_settings = list(self.settings.ignored)
        #: Saved values of options the saved scheme does not take (AppState.remembered).
        self._remembered: dict[str, object] = {}
        restored = self._read_params() if restore and params is None and session is None else None
        start = params or (session and session.params) or restored or EncodingParams()
        if overrides:  # the command line's flags, on the restored scheme if it takes them, else on the defaults
            try:
                start = start.replaced(fit_sizes=True, **overrides)
            except ValueError:
                start = EncodingParams().replaced(fit_sizes=True, **overrides)
        self.state = AppState(start, self)
        self.state.remembered.update(self._remembered)
        #: The A/B comparison: the pinned setup A and how the docks show it beside the current setup B.
        self.comparison = Comparison(self.state, self)
        self._compared_mode: str | None = None  # the mode the docks are wrapped in (None: not comparing)
        if restore:
            self._restore_view()
        self._restore_theme(restore, theme_name)
        self.compute = ComputeService(self)
        self._panel_classes = {cls.panel_id: cls for cls in panel_classes()}
        self.panels = LazyPanels(list(self._panel_classes), self._build_panel, self.panelCreated.emit)
        self.docks: dict[str, QDockWidget] = {}
        self._use_tracker = PanelUseTracker(self)
        self._build_menus()
        self._build_docks()
        self._build_status_bar()
        self.state.paramsChanged.connect(self._follow_layout)
        self.resize(*DEFAULT_SIZE)
        if restore:
            self._restore_layout()
        self.keep_on_screen()
        self._fitted_to_screen = False
        if restore and params is None and session is None:
            self._restore_comparison()
        warning = self._settings_warning()
        if warning:
            self.statusBar().showMessage(warning, 15_000)
        self.panelCreated.connect(self._fit_new_panel)
        installed = install_export_actions(self, self.file_menu, self.docks, self.panelCreated)
        #: File-menu export actions by name, and each built panel's Export button (see views.export_ui).
        self.export_actions: dict[str, QAction] = installed.actions
        self.export_buttons: dict[str, QToolButton] = installed.buttons
        self._build_handout_action()
        self._build_theme_menu()
        self._build_shortcuts()
        self._prebuilder = PanelPrebuilder(self)
        self.setAcceptDrops(True)  # a model folder or file dropped anywhere on the window opens it
        if session is not None:
            problem = self.apply_session(session, overrides)
            if problem:
                self.statusBar().showMessage(problem, 15_000)
        if notice:
            self.statusBar().showMessage(notice, MODEL_MESSAGE_MS)

    # ----------------------------------------------------------------- build
    def _build_menus(self) -> None:
        menu_bar = self.menuBar()
        self.file_menu = menu_bar.addMenu("&File")
        self._build_model_menu()
        self._build_session_menu()
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        self.file_menu.addAction(quit_action)
        self._build_edit_menu()
        self._build_compare_menu()
        self.view_menu = menu_bar.addMenu("&View")
        self.reset_layout_action = QAction("&Reset layout", self)
        self.reset_layout_action.triggered.connect(self.reset_layout)
        self.help_menu = help_menu = menu_bar.addMenu("&Help")
        about = QAction("&About posenc_gui", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    def _build_edit_menu(self) -> None:
        """Edit ▸ Undo, Redo (named after their step, disabled when there is none) and History….

        The shortcuts are the window's: while a text field or spin box has
        the focus, Qt gives Ctrl+Z to the field (its own text undo) before any
        window shortcut, so typing is undone key by key there, as in every
        Qt application; the menu's entries always undo parameter steps.
        """
        history = self.state.history
        self.edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = history.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.Undo))
        self.redo_action = history.createRedoAction(self, "&Redo")
        redo_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)
        redo_keys += [key for key in (QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")) if key not in redo_keys]
        self.redo_action.setShortcuts(redo_keys)
        self.history_action = QAction("&History…", self)
        self.history_action.setStatusTip("The steps of this window's parameter history; click one to go there.")
        self.history_action.triggered.connect(self.show_history)
        self.edit_menu.addActions([self.undo_action, self.redo_action])
        self.edit_menu.addSeparator()
        self.edit_menu.addAction(self.history_action)
        self._history_dialog: QDialog | None = None

    def _build_compare_menu(self) -> None:
        """Compare ▸ Pin current setup as A, Swap A and B, Stop comparing, and how panels show A and B."""
        menu = self.menuBar().addMenu("&Compare")
        self.compare_menu = menu
        self.pin_action = QAction("&Pin current setup as A", self, shortcut=QKeySequence("Ctrl+Shift+A"))
        self.pin_action.setStatusTip("Keep the current setup as A; the parameters you change next are B, "
                                     "shown beside A in every panel")
        self.pin_action.triggered.connect(lambda: self.pin_a())
        self.swap_action = QAction("S&wap A and B", self)
        self.swap_action.triggered.connect(self._swap_ab)
        self.unpin_action = QAction("&Stop comparing", self)
        self.unpin_action.triggered.connect(self.comparison.clear)
        menu.addActions([self.pin_action, self.swap_action, self.unpin_action])
        menu.addSeparator()
        self.compare_mode_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for mode, text in COMPARE_MODES.items():
            action = QAction(text, self, checkable=True)
            action.setChecked(mode == self.comparison.mode)
            action.triggered.connect(lambda _=False, chosen=mode: self.comparison.set_mode(chosen))
            group.addAction(action)
            menu.addAction(action)
            self.compare_mode_actions[mode] = action
        self.comparison.changed.connect(self._comparison_changed)
        self.panelCreated.connect(self._wrap_new_panel)
        self._comparison_changed()

    def _build_handout_action(self) -> None:
        """File ▸ Export handout…, after the other export actions."""
        self.handout_action = QAction("Export &handout…", self, shortcut=QKeySequence("Ctrl+Shift+H"))
        self.handout_action.setStatusTip("Export several panels' figures with the parameters and their headline "
                                         "numbers as one PDF, or as a folder of figures with an index page")
        self.handout_action.triggered.connect(lambda: open_handout_dialog(self))
        copy = self.export_actions["copy"]
        actions = self.file_menu.actions()
        after = actions[actions.index(copy) + 1] if copy in actions and actions.index(copy) + 1 < len(actions) else None
        self.file_menu.insertAction(after, self.handout_action)
        self.export_actions["handout"] = self.handout_action

    def pin_a(self, params: EncodingParams | None = None) -> None:
        """Pin ``params`` (the current setup by default) as A and show A beside B in every comparable panel."""
        self.state.flush()
        self.comparison.pin(params)
        self.statusBar().showMessage(f"Pinned A: {self.comparison.pinned.params.title()}. Change the parameters "
                                     "(B) to compare; Compare ▸ Stop comparing ends it.", 10_000)

    def _swap_ab(self) -> None:
        problem = self.comparison.swap()
        if problem:
            self.statusBar().showMessage(problem, 10_000)

    def _comparison_changed(self) -> None:
        """Wrap the built panels' docks for the new mode, or unwrap them; enable what applies."""
        active = self.comparison.active
        for action in (self.swap_action, self.unpin_action):
            action.setEnabled(active)
        self.compare_mode_actions[self.comparison.mode].setChecked(True)
        mode = self.comparison.mode if active else None
        if not hasattr(self, "panels"):
            return
        if mode == self._compared_mode:  # A pinned again: the compared panels follow its state
            pinned = self.comparison.pinned
            for panel in self.panels.built().values():
                panel.set_pinned(pinned.params if pinned is not None else None)
            return
        self._compared_mode = mode
        for panel_id, panel in self.panels.built().items():
            self._show_compared(panel_id, panel)

    def _wrap_new_panel(self, panel_id: str) -> None:
        if self._compared_mode is not None:
            self._show_compared(panel_id, self.panels[panel_id])

    def _show_compared(self, panel_id: str, panel: Panel) -> None:
        """Put ``panel`` in its dock alone, or with A beside it (the window's current comparison)."""
        pinned = self.comparison.pinned
        panel.set_pinned(pinned.params if pinned is not None else None)
        if not panel.comparable:
            return
        dock = self.docks[panel_id]
        if panel.comparison is not None:
            panel.comparison.release()
        if self._compared_mode is not None:
            dock.setWidget(self.comparison.wrap(panel))
            dock.setWindowTitle(f"{panel.title} — A/B")
        else:
            dock.setWidget(panel)
            dock.setWindowTitle(panel.title)
        panel.schedule_update()

    def show_history(self) -> QDialog:
        """Show (and return) the history dialog: every step of :attr:`AppState.history`; clicking one goes there."""
        if self._history_dialog is None:
            dialog = QDialog(self)
            dialog.setWindowTitle("Parameter history")
            layout = QVBoxLayout(dialog)
            view = QUndoView(self.state.history, dialog)
            view.setEmptyLabel("Start")
            layout.addWidget(view)
            note = QLabel(f"The last {self.state.history.undoLimit()} steps of this window; "
                          "the history starts empty at each launch.", dialog)
            note.setWordWrap(True)
            layout.addWidget(note)
            dialog.resize(360, 420)
            self._history_dialog = dialog
        self._history_dialog.show()
        self._history_dialog.raise_()
        return self._history_dialog
    def _build_model_menu(self) -> None:
        """File ▸ Open model… (a file; config.json stands for its folder) and Open model folder…."""
        self.open_model_action = QAction("Open &model…", self, shortcut=QKeySequence("Ctrl+M"))
        self.open_model_action.setStatusTip("Show a model's learned position table or its RoPE set-up: a "
                                            ".safetensors, .gguf, .npy or .npz file, or a folder's config.json")
        self.open_model_action.triggered.connect(lambda: open_model_dialog(self.state, self))
        self.open_model_folder_action = QAction("Open model &folder…", self)
        self.open_model_folder_action.setStatusTip("Show the model of a Hugging Face folder (config.json and "
                                                   "model.safetensors, or its shards)")
        self.open_model_folder_action.triggered.connect(lambda: open_model_dialog(self.state, self, folder=True))
        self.file_menu.addActions([self.open_model_action, self.open_model_folder_action])
        self.models_menu = install_models_menu(self.file_menu, self.state, self)  # File ▸ Models on this computer
        self.file_menu.addSeparator()

    def open_model(self, path: str) -> str | None:
        """Open the model at ``path`` as File ▸ Open model… does; None, or the reason nothing changed."""
        return open_model_path(self.state, model_location(path), self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        path = self._dropped_path(event)
        if path is None:
            return
        event.acceptProposedAction()
        open_chosen_path(self.state, path, self)

    @staticmethod
    def _dropped_path(event) -> str | None:
        """The first local file or folder of a drag, or None (text, web addresses)."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        local = [url.toLocalFile() for url in urls if url.isLocalFile()]
        return local[0] if local else None

    def _build_session_menu(self) -> None:
        """File ▸ Save session…, Open session… and Open recent ▸."""
        self.save_session_action = QAction("&Save session…", self, shortcut=QKeySequence("Ctrl+S"))
        self.save_session_action.triggered.connect(self._save_session_dialog)
        self.open_session_action = QAction("&Open session…", self, shortcut=QKeySequence("Ctrl+O"))
        self.open_session_action.triggered.connect(lambda: self._open_session_dialog())
        self.file_menu.addAction(self.open_session_action)
        self.recent_menu = self.file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.file_menu.addAction(self.save_session_action)
        self.file_menu.addSeparator()

    def _build_docks(self) -> None:
        for panel_id, panel_class in self._panel_classes.items():
            dock = QDockWidget(panel_class.title, self)
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
                lambda visible, pid=panel_id: visible and self.panels[pid].ensure_current()
            )
            # A dock floated from behind a tab (where Qt parks it off screen)
            # is shown without a visibilityChanged(True).
            dock.topLevelChanged.connect(
                lambda floating, pid=panel_id, d=dock: floating and d.isVisible() and self.panels[pid].ensure_current()
            )
            self.docks[panel_id] = dock
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        self.dock_layouts = DockLayouts(self, self.docks, lambda pid, params: self._panel_classes[pid].shows(params.info))
        layout_menu = self.view_menu.addMenu("&Layout")
        for key, layout in self.dock_layouts.layouts.items():
            action = layout_menu.addAction(layout.title)
            action.setToolTip(f"Arrange the docks as the default layout for {layout.title.replace('&', '').lower()}")
            action.triggered.connect(lambda _=False, k=key: self.reset_layout(k))
        layout_menu.addSeparator()
        layout_menu.addAction(self.reset_layout_action)
        self.view_menu.addAction(self.reset_layout_action)
        self.dock_layouts.arrange(layout_key(self.state.params), self.state.params)

    def _build_panel(self, panel_id: str) -> Panel:
        panel = self._panel_classes[panel_id](self.state, self.compute, self)
        panel.attach_host(self)
        self._use_tracker.watch(panel)
        dock = self.docks[panel_id]
        placeholder = dock.widget()
        dock.setWidget(panel)
        if placeholder is not None and placeholder is not panel:
            placeholder.deleteLater()
        return panel

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self.busy_indicator = QProgressBar(self)
        self.busy_indicator.setRange(0, 0)  # indeterminate
        self.busy_indicator.setMaximumWidth(120)
        self.busy_indicator.setToolTip("Computing the newest view…")
        self.busy_indicator.hide()
        status.addPermanentWidget(self.busy_indicator)
        self.params_label = StatusText("four_vector · 1,048,576 positions · d_model 8,192", self, expanding=False)
        status.addPermanentWidget(self.params_label)
        self.compute.busyChanged.connect(self.busy_indicator.setVisible)
        self.state.message.connect(lambda text: status.showMessage(text, 10_000))
        self.state.paramsChanged.connect(self._show_params)
        self._show_params(self.state.params)
        self._build_cursor_readout()

    def _show_params(self, params: EncodingParams) -> None:
        self.params_label.setText(
            f"{params.scheme} · {counted(params.seq_len, 'position')} · d_model {params.d_model:,}"
        )

    # -------------------------------------------------- linked cursor readout
    def _build_cursor_readout(self) -> None:
        """A permanent status-bar line for the linked cursor (``state.cursor``): where, its value, how it is set."""
        self.cursor_label = StatusText(
            "Cursor pinned at position 1,048,575, dimension 8,191: −0.999999999999 (arrows move it, Esc clears)",
            self, expanding=False)
        # always there: showing it at the first hover would re-lay out the window (and re-sample the panels)
        self.statusBar().insertPermanentWidget(0, self.cursor_label)
        self._show_cursor(self.state.cursor.current)
        self.state.cursor.changed.connect(self._show_cursor)
        self.state.paramsChanged.connect(lambda _: self._show_cursor(self.state.cursor.current))

    def _show_cursor(self, cursor: Cursor | None) -> None:
        if cursor is None:
            self.cursor_label.setText(NO_CURSOR)
            return
        where = f"position {cursor.position:,}"
        if cursor.dimension is not None:
            where += f", dimension {cursor.dimension:,}"
            try:  # PE(position, dimension); a bias scheme has no table entry to show
                where += ": " + shown_number(*entry_with_error(self.state.params, cursor.position, cursor.dimension))
            except ValueError:
                pass
        how = "pinned at" if cursor.pinned else "at"
        hint = "arrows move it, Shift ×10, Esc clears" if cursor.pinned else "click to pin"
        self.cursor_label.setText(f"Cursor {how} {where} ({hint})")

    # ------------------------------------------------------------ public API
    @property
    def last_used_panel(self) -> str | None:
        """The id of the panel the user last hovered or clicked a plot of, zoomed or typed in (None before any)."""
        return self._use_tracker.last

    def keep_on_screen(self) -> None:
        """Fit the window, frame included, into the available area of its screen and move it inside.

        The default size is larger than a small laptop's screen, and a
        geometry saved on a larger or since disconnected monitor may be
        larger than the screen, or lie partly or wholly outside it. The
        window system's frame is not known before the window is shown (on
        X11 not even at once after): at least a title bar's height is kept
        free for it, as Qt's restoreGeometry does.
        """
        frame, inner = self.frameGeometry(), self.geometry()
        available, border_w, border_h = self._available()
        width = min(inner.width(), available.width() - border_w)
        height = min(inner.height(), available.height() - border_h)
        if (width, height) != (inner.width(), inner.height()):
            self.resize(width, height)
        x = max(available.left(), min(frame.x(), available.right() + 1 - (width + border_w)))
        y = max(available.top(), min(frame.y(), available.bottom() + 1 - (height + border_h)))
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    def raise_panel(self, panel_id: str, keep_in_view: str | None = None) -> None:
        """Show the dock of ``panel_id`` and bring it to the front of its tab group (see :class:`PanelHost`).

        When the dock of ``keep_in_view`` is tabbed with it, that dock moves
        below the first dock of the left column first, so both are seen.
        """
        dock = self.docks[panel_id]
        if keep_in_view is not None:
            self._move_out_of_tabs(self.docks[keep_in_view], dock)
        dock.show()
        dock.raise_()

    def _move_out_of_tabs(self, own: QDockWidget, target: QDockWidget) -> None:
        """Move ``own`` out of ``target``'s tab group, below the left column's first dock."""
        if own is target or own.isFloating() or target not in self.tabifiedDockWidgets(own):
            return
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, own)
        own.show()
        column = [dock for dock in self.dock_layouts.left_docks() if dock is not own]
        top = column[0] if column else None
        if top is not None and not top.isFloating() and top.isVisible():
            self.splitDockWidget(top, own, Qt.Orientation.Vertical)
            height = max(self.height(), 600)
            self.resizeDocks([top, own], [int(height * 0.4), int(height * 0.6)], Qt.Orientation.Vertical)

    def panel_shown(self, panel_id: str) -> bool:
        """Whether the dock of ``panel_id`` is shown (it may be behind another dock's tab)."""
        return self.docks[panel_id].isVisible()

    def show_status(self, message: str) -> None:
        """Show ``message`` in the status bar for ten seconds."""
        self.statusBar().showMessage(message, 10_000)

    def window_widget(self) -> QWidget:
        """The window itself (the :class:`~posenc_gui.views.host.ExportHost` interface)."""
        return self

    def reset_layout(self, key: str | None = None) -> None:
        """Put every dock back where layout ``key`` (default: the current scheme's) has it, closed ones too."""
        self.dock_layouts.reset(self.state.params, key or layout_key(self.state.params))
        self._fit_layout_to_screen()

    def _follow_layout(self, params: EncodingParams) -> None:
        """Switch to the layout of a new scheme's family (see :mod:`posenc_gui.dock_layouts`)."""
        if self.dock_layouts.follow(params):
            self._fit_layout_to_screen()

    # ------------------------------------------------------------ placement
    def _available(self) -> tuple[QRect, int, int]:
        """The available area of the window's screen, and the width and height its frame takes (or will)."""
        frame, inner = self.frameGeometry(), self.geometry()
        screen = QGuiApplication.screenAt(frame.center()) or self.screen()
        title_bar = self.style().pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, None, self)
        return (screen.availableGeometry(), frame.width() - inner.width(),
                max(frame.height() - inner.height(), title_bar))

    def _fit_layout_to_screen(self) -> None:
        """Tab a row of docks into one place when side by side they are wider than the screen, and both rows
        into one on a short screen.

        Side by side (the waveforms and the similarity; the positional logits
        and the permutation demo), with the parameter column, their controls
        need more width than a laptop's screen has. The second row goes first,
        then the first.
        """
        available, border_w, border_h = self._available()
        top, second = self.dock_layouts.rows()
        if top and second and available.height() - border_h < TWO_ROWS_MIN_HEIGHT:
            # two rows of plots on a short screen would each be too low to read: one row, the rest in tabs
            apart = [dock for dock in [*top[1:], *second] if not dock.isFloating() and dock.isVisible()
                     and dock not in self.tabifiedDockWidgets(top[0])]
            if apart:  # raised only then: a refit after a panel is built keeps the tab the user chose
                with self.dock_layouts.arrangement():
                    for dock in apart:
                        self.tabifyDockWidget(top[0], dock)
                    top[0].raise_()
        for row in reversed(self.dock_layouts.rows()):
            side_by_side = len(row) > 1 and all(dock.isVisible() and not dock.isFloating() for dock in row) and not any(
                other in self.tabifiedDockWidgets(row[0]) for other in row[1:])
            if side_by_side and self.minimumSizeHint().width() > available.width() - border_w:
                with self.dock_layouts.arrangement():
                    for other in row[1:]:
                        self.tabifyDockWidget(row[0], other)
                    row[0].raise_()

        panel_navigation.readable_tabs(self)

    def _fit_new_panel(self, _panel_id: str) -> None:
        """A panel built after the window was fitted may need more width than its placeholder: fit again, once
        Qt has laid it out."""
        if self._fitted_to_screen:
            QTimer.singleShot(0, self._refit)

    def _refit(self) -> None:
        self._fit_layout_to_screen()
        self.keep_on_screen()

    # ------------------------------------------------------------- sessions
    def current_session(self) -> Session:
        """The parameters, view settings, built panels' options, layout and A/B comparison, as a session file
        holds them."""
        remembered = {name: value for name, value in self.state.remembered.items()
                      if name not in self.state.params.options}
        panels = {panel_id: options for panel_id, panel in self.panels.built().items()
                  if (options := panel.current_options())}
        pinned = self.comparison.pinned.params if self.comparison.pinned is not None else None
        return Session(self.state.params, remembered, dict(self.state.view), panels,
                       bytes(self.saveState(SETTINGS_VERSION).data()), pinned, self.comparison.mode)

    def save_session(self, path: str) -> str | None:
        """Write :meth:`current_session` to ``path`` (atomically); None, or why not (also in the status bar)."""
        from .export import ExportError

        try:
            written = write_session(path, self.current_session())
        except ExportError as error:
            return self._session_problem(f"Session not saved: {error}")
        self._remember_recent(str(written))
        self.show_status(f"Session saved to {written}")
        return None

    def open_session(self, path: str) -> str | None:
        """Read the session file at ``path`` and apply it; None, or the one-line reason nothing changed."""
        try:
            session = read_session(path)
        except SessionError as error:
            return self._session_problem(f"Session {path} not opened: {error}")
        problem = self.apply_session(session)
        if problem:
            return self._session_problem(f"Session {path} not opened: {problem}")
        self._remember_recent(os.path.abspath(path))
        self.show_status(f"Session {path} opened")
        return None

    def apply_session(self, session: Session, overrides: dict | None = None) -> str | None:
        """Show ``session`` (with ``overrides`` on its parameters); None, or why not, and then nothing changed.

        The parameters and view settings come first (a panel's options can
        depend on them, a waveform's dimensions on d_model), except for a
        panel whose options set them too (:attr:`Panel.sets_other_state`),
        which comes before. The layout is applied only when it restores;
        otherwise the one before stays, and a note says so.
        """
        before, remembered = self.current_session(), dict(self.state.remembered)
        try:
            params = session.params.replaced(session.remembered, fit_sizes=True, **(overrides or {}))
        except ValueError as error:
            return str(error)
        try:
            self._apply_values(session, params)
        except ValueError as error:
            self.state.remembered.clear()
            self.state.remembered.update(remembered)
            self._apply_values(before, before.params)
            self.restoreState(QByteArray(before.layout), SETTINGS_VERSION)
            return str(error)
        if session.layout is not None and not self.restoreState(QByteArray(session.layout), SETTINGS_VERSION):
            self.restoreState(QByteArray(before.layout), SETTINGS_VERSION)
            self.show_status("Session opened; its layout is not one this window can restore, the layout stays")
        return None

    def _apply_values(self, session: Session, params: EncodingParams) -> None:
        """Set ``params`` and the session's remembered options, view settings and panel options, in that
        order but for the panels that set other state, which come first; ValueError naming a refused one."""
        first = {pid: opts for pid, opts in session.panels.items() if self._panel_classes[pid].sets_other_state}
        self._apply_panel_options(first)
        self.state.remembered.update(session.remembered)
        problem = self.state.set_params(params)
        if problem:
            raise ValueError(problem)
        self.state.set_view(**session.view)
        self._apply_panel_options({pid: opts for pid, opts in session.panels.items() if pid not in first})
        self.comparison.set_mode(session.compare_mode)
        if session.pinned is not None:
            self.comparison.pin(session.pinned)
        else:
            self.comparison.clear()

    def _apply_panel_options(self, panels: Mapping[str, Mapping[str, object]]) -> None:
        for panel_id, options in panels.items():
            try:
                self.panels[panel_id].apply_options(**options)
            except (ValueError, TypeError) as error:
                raise ValueError(f"panels.{panel_id}: {error}") from None

    def recent_sessions(self) -> list[str]:
        """The session files opened or saved last, newest first (at most :data:`MAX_RECENT_SESSIONS`)."""
        try:
            paths = json.loads(self.settings.value("recentSessions") or "[]")
        except (ValueError, RecursionError):  # a damaged settings file: nested 20,000 deep fits its bound
            return []
        if not isinstance(paths, list):
            return []
        return [path for path in paths if isinstance(path, str) and 0 < len(path) <= MAX_RECENT_PATH
                ][:MAX_RECENT_SESSIONS]

    def _remember_recent(self, path: str) -> None:
        if len(path) > MAX_RECENT_PATH:
            return
        paths = [path, *(other for other in self.recent_sessions() if other != path)][:MAX_RECENT_SESSIONS]
        self.settings.setValue("recentSessions", json.dumps(paths))

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self.recent_sessions()
        for path in paths:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, chosen=path: self._open_session_dialog(chosen))
        if not paths:
            self.recent_menu.addAction("No recent sessions").setEnabled(False)

    def _session_problem(self, message: str) -> str:
        self.show_status(message)
        return message

    def _open_session_dialog(self, path: str | None = None) -> None:
        path = path or ask_session_path(self, "Open session", self._session_folder(), save=False)
        problem = path and self.open_session(path)
        if problem:
            show_session_problem(self, "Session not opened", problem)

    def _save_session_dialog(self) -> None:
        proposed = os.path.join(self._session_folder(), f"{self.state.params.slug()}.json")
        path = ask_session_path(self, "Save session", proposed, save=True)
        problem = path and self.save_session(path)
        if problem:
            show_session_problem(self, "Session not saved", problem)

    def _session_folder(self) -> str:
        recent = self.recent_sessions()
        return os.path.dirname(recent[0]) if recent else os.path.expanduser("~")

    # ------------------------------------------------------------- settings
    def _read_params(self) -> EncodingParams | None:
        raw = self.settings.value("params")
        if raw is None:
            return None
        try:
            values = json.loads(raw)
            if not isinstance(values, dict):
                raise ValueError("not a JSON object")
            _check_param_types(values)
            remembered = values.pop("remembered", {})
            if not isinstance(remembered, dict):
                raise ValueError("remembered must be an object")
            self._remembered = {name: value for name, value in remembered.items()
                                if name in OPTION_SPECS and _is_valid(OPTION_SPECS[name], value)}
            return EncodingParams.validated(**values)
        except RecursionError:
            self._ignored_settings.append("parameters ignored (nested too deeply)")
            return None
        except ValueError as error:
            self._ignored_settings.append(f"parameters ignored ({error})")
            return None

    def _restore_view(self) -> None:
        """The shared view settings saved last (σ, the demo's d_model, the reference); a bad one is named and left."""
        raw = self.settings.value("view")
        if raw is None:
            return
        try:
            values = json.loads(raw)
        except ValueError:
            values = None
        if not isinstance(values, dict):
            self._ignored_settings.append("view settings ignored (not a JSON object)")
            return
        for name, value in values.items():
            try:
                self.state.set_view(**{str(name): value})
            except ValueError as error:
                self._ignored_settings.append(f"view setting ignored ({error})")

    def _restore_comparison(self) -> None:
        """Pin the A saved last, in its mode (a bad one is named in the status bar and left out)."""
        raw = self.settings.value("compare")
        if raw is None:
            return
        try:
            pinned, mode = checked_compare(json.loads(raw, parse_constant=_no_constant))
        except (ValueError, RecursionError) as error:  # SessionError is a ValueError, as json's errors are
            self._ignored_settings.append(f"A/B comparison ignored ({error})")
            return
        self.comparison.set_mode(mode)
        if pinned is not None:
            self.comparison.pin(pinned)

    def _restore_layout(self) -> None:
        geometry = self.settings.value("geometry")
        window_state = self.settings.value("windowState")
        if geometry is not None and not self.restoreGeometry(geometry):
            self._ignored_settings.append("window geometry ignored (unreadable)")
        saved_key, problems = (self.dock_layouts.load_text(raw) if (raw := self.settings.value("layouts")) is not None
                               else (None, []))
        self._ignored_settings += problems
        key = layout_key(self.state.params)
        if window_state is not None and saved_key not in (None, key):
            # saved in another family's layout (the command line chose another scheme): kept for that family
            self.dock_layouts.remember(saved_key, window_state)
            window_state = self.dock_layouts.saved(key)
        if window_state is not None and not self.dock_layouts.restore(window_state, self.state.params):
            self._ignored_settings.append("layout ignored (unreadable)")

    def _settings_warning(self) -> str | None:
        """One line on what of the settings file was not used, or None when all of it was."""
        if self.settings.problem is not None:
            return self.settings.warning()
        if self._ignored_settings:
            return f"Saved settings: {'; '.join(self._ignored_settings)}. Using defaults for them."
        return None

    def save_settings(self) -> str | None:
        """Write geometry, dock layout and parameters; None, or why not (also shown in the status bar)."""
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState(SETTINGS_VERSION))
        self.settings.setValue("layouts", self.dock_layouts.to_text())
        remembered = {name: value for name, value in self.state.remembered.items()
                      if name not in self.state.params.options}
        self.settings.setValue("params", json.dumps({**self.state.params.as_dict(), "remembered": remembered}))
        self.settings.setValue("view", json.dumps(dict(self.state.view)))
        pinned = self.comparison.pinned
        self.settings.setValue("compare", json.dumps(None if pinned is None else
                                                     {"a": pinned.params.as_dict(), "mode": self.comparison.mode}))
        self._save_theme()
        problem = self.settings.save()
        if problem is not None:
            self.statusBar().showMessage(problem, 10_000)
        return problem

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if not self._fitted_to_screen:  # the shown docks' panels are built now, and the frame may be known
            self._fitted_to_screen = True
            self._fit_layout_to_screen()
            self.keep_on_screen()
        self._prebuilder.start()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        self._prebuilder.stop()
        self.save_settings()
        self.compute.shutdown()
        super().closeEvent(event)

    # ------------------------------------------------- themes and colour maps
    def _restore_theme(self, restore: bool, chosen: str | None) -> None:
        """Use the theme ``chosen`` (the command line's), else the saved one (``restore``), else light.

        The same for the colour maps (saved, else the defaults). A saved value
        that is not one of the choices is named in the settings warning and
        the default is used.
        """
        name, maps = chosen or theme.LIGHT.name, {kind: names[0] for kind, names in theme.COLORMAP_CHOICES.items()}
        if restore:
            saved = self.settings.value("theme")
            if chosen is None and saved is not None:
                if saved in theme.THEME_NAMES:
                    name = saved
                else:
                    self._ignored_settings.append(f"theme ignored (not one of {', '.join(theme.THEME_NAMES)})")
            raw = self.settings.value("colormaps")
            if raw is not None:
                try:
                    saved_maps = json.loads(raw)
                except ValueError:
                    saved_maps = None
                if not isinstance(saved_maps, dict):
                    self._ignored_settings.append("colour maps ignored (not a JSON object)")
                    saved_maps = {}
                for kind, value in saved_maps.items():
                    if kind in maps and value in theme.COLORMAP_CHOICES[kind]:
                        maps[kind] = value
                    else:
                        self._ignored_settings.append(f"colour map {str(kind)[:40]!r} ignored (unknown)")
        for kind, value in maps.items():
            theme.set_colormap(kind, value)
        theme.set_theme(name)
        theme.apply_window_palette(QApplication.instance())

    def _save_theme(self) -> None:
        self.settings.setValue("theme", theme.current().name)
        self.settings.setValue("colormaps", json.dumps({kind: theme.colormap_for(kind)
                                                        for kind in theme.COLORMAP_CHOICES}))

    def _build_theme_menu(self) -> None:
        """View ▸ Theme (light, dark, print) and View ▸ Colour maps (one choice per kind of matrix)."""
        self.view_menu.addSeparator()
        theme_menu = self.view_menu.addMenu("&Theme")
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        labels = {"light": "&Light", "dark": "&Dark", "print": "&Print (white, black text, heavier lines)"}
        for name in theme.THEME_NAMES:
            action = QAction(labels[name], self, checkable=True)
            action.setChecked(name == theme.current().name)
            action.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[name] = action
        maps_menu = self.view_menu.addMenu("&Colour maps")
        self.colormap_actions: dict[tuple[str, str], QAction] = {}
        for kind, names in theme.COLORMAP_CHOICES.items():
            kind_menu = maps_menu.addMenu(theme.COLORMAP_KIND_LABELS[kind])
            kind_group = QActionGroup(self)
            for name in names:
                action = QAction(name, self, checkable=True)
                action.setChecked(name == theme.colormap_for(kind))
                action.triggered.connect(lambda _=False, k=kind, n=name: self.set_colormap(k, n))
                kind_group.addAction(action)
                kind_menu.addAction(action)
                self.colormap_actions[(kind, name)] = action
        theme.signals.changed.connect(self._theme_changed)
        self.panelCreated.connect(lambda panel_id: theme.restyle(self.panels[panel_id]))

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
        for panel in self.panels.built().values():
            theme.restyle(panel.exported())  # with A's copy and the difference while comparing
            panel.schedule_update()  # what a panel sets on each update (titles, keys, maps) in the new colours
            if panel.comparison is not None:
                panel.comparison.a.schedule_update()

    # ------------------------------------------------------------ shortcuts
    def shortcut_action(self, name: str) -> QAction | None:
        """The action of the :data:`SHORTCUTS` entry ``name`` (see :class:`Shortcut`), None when the window has none."""
        entry = next(entry for entry in SHORTCUTS if entry.name == name)
        action = getattr(self, entry.attribute or f"{name}_action", None)
        if action is None:
            action = self.export_actions.get(name)
        return action if isinstance(action, QAction) else None

    def _build_shortcuts(self) -> None:
        """The actions of :data:`SHORTCUTS` that the window makes here, and every table entry's keys.

        An entry whose action the window does not have is left out (it is
        not listed either).
        """
        self.walkthrough_next_action = QAction("Walkthrough: &next step", self)
        self.walkthrough_next_action.triggered.connect(lambda: self._walkthrough_step(+1))
        self.walkthrough_back_action = QAction("Walkthrough: &previous step", self)
        self.walkthrough_back_action.triggered.connect(lambda: self._walkthrough_step(-1))
        self.next_tab_action = QAction("Ne&xt tab", self)
        self.next_tab_action.triggered.connect(lambda: self.switch_tab(+1))
        self.previous_tab_action = QAction("Pre&vious tab", self)
        self.previous_tab_action.triggered.connect(lambda: self.switch_tab(-1))
        self.reset_zoom_action = QAction("Reset &zoom", self)
        self.reset_zoom_action.triggered.connect(self.reset_zoom)
        self.go_to_panel_action = QAction("&Go to panel…", self)
        self.go_to_panel_action.triggered.connect(lambda: self.go_to_panel())
        self.keyboard_shortcuts_action = QAction("&Keyboard shortcuts", self)
        self.keyboard_shortcuts_action.triggered.connect(self.show_shortcuts)
        for entry in SHORTCUTS:
            action = self.shortcut_action(entry.name)
            if action is not None:
                action.setShortcut(QKeySequence(entry.keys))
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.view_menu.addSeparator()
        self.view_menu.addActions([self.go_to_panel_action, self.next_tab_action, self.previous_tab_action,
                                   self.reset_zoom_action,
                                   self.walkthrough_back_action, self.walkthrough_next_action])
        self.help_menu.insertAction(self.help_menu.actions()[0], self.keyboard_shortcuts_action)

    def go_to_panel(self, name: str | None = None) -> str | None:
        """Bring the panel named ``name`` (asked for when None; see :func:`panel_navigation.find_panel`) to the
        front; its id, or None (cancelled, or no single panel of that name: said in the status bar)."""
        titles = {pid: dock.windowTitle() for pid, dock in self.docks.items()}
        if name is None:
            name = panel_navigation.ask_panel_name(self, sorted(titles.values(), key=str.casefold))
            if name is None:
                return None
        panel_id = panel_navigation.find_panel(name, titles)
        if panel_id is None:
            self.show_status(f"No single panel is named {name.strip()[:60]!r}: View lists them all")
            return None
        if self.docks[panel_id].isHidden():
            self.docks[panel_id].show()
        self.raise_panel(panel_id)
        return panel_id

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        """``(keys, action, what it does)`` for every action of the window that has a shortcut, table entries first."""
        rows, seen = [], set()
        for entry in SHORTCUTS:
            action = self.shortcut_action(entry.name)
            if action is not None and not action.shortcut().isEmpty():
                seen.add(action)
                rows.append((_keys_text(action), _action_text(action), entry.what))
        for action in self.findChildren(QAction):
            if action not in seen and action.shortcuts():
                seen.add(action)
                rows.append((_keys_text(action), _action_text(action), action.statusTip() or ""))
        return rows

    def show_shortcuts(self) -> QDialog:
        """Help ▸ Keyboard shortcuts: a table of :meth:`shortcut_rows`."""
        rows = self.shortcut_rows()
        dialog = QDialog(self)
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

    def _current_dock_panel(self) -> str | None:
        """The panel the user last used while its dock shows, else the first shown one."""
        last = self.last_used_panel
        if last is not None and self.panel_shown(last) and self.panels[last].on_screen():
            return last
        return next((pid for pid in self.docks if self.panel_shown(pid) and self.panels[pid].on_screen()), None)

    def switch_tab(self, step: int) -> str | None:
        """Bring the next (``step`` +1) or previous (−1) dock of the current panel's tab group to the front.

        Returns the panel now in front (None when the current dock has no tabs).
        """
        current = self._current_dock_panel()
        if current is None:
            return None
        dock = self.docks[current]
        group = [pid for pid, other in self.docks.items()
                 if other is dock or (other in self.tabifiedDockWidgets(dock) and other.isVisible())]
        if len(group) < 2:
            return None
        chosen = group[(group.index(current) + step) % len(group)]
        self.raise_panel(chosen)
        self.panels[chosen].setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._use_tracker.last = chosen
        return chosen

    def reset_zoom(self) -> str | None:
        """Show everything the current panel plots again (after zooming or panning); the panel's id, or None."""
        current = self._current_dock_panel()
        if current is None:
            return None
        panel = self.panels[current]
        for view in panel.findChildren(QGraphicsView):
            for item in view.items():
                if isinstance(item, pg.ViewBox) and item.isVisible():
                    item.autoRange(padding=0)
        panel.schedule_update()  # each panel sets its own ranges (round ends, room for labels) on update
        return current

    def _walkthrough_step(self, step: int) -> None:
        self.raise_panel("walkthrough")
        walkthrough = self.panels["walkthrough"]
        walkthrough.next() if step > 0 else walkthrough.back()

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About posenc_gui",
            f"<b>posenc_gui {__version__}</b><br>A desktop lab for transformer positional encodings.",
        )

    def panel(self, panel_id: str) -> QWidget:
        """The panel widget with ``panel_id``."""
        return self.panels[panel_id]


def _check_param_types(values: dict) -> None:
    """Raise ValueError unless the saved scheme is text and the sizes are whole numbers.

    The model converts what it can (``4.0`` is a d_model of 4); a settings
    file holds exactly what the window wrote, so anything else is a damaged
    file. The options are checked by their specs.
    """
    for name, kind, expected in (("scheme", str, "text"), ("seq_len", int, "a whole number"),
                                 ("d_model", int, "a whole number")):
        value = values.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            raise ValueError(f"{name} must be {expected}, got {value!r}")


def _is_valid(spec: ParamSpec, value: object) -> bool:
    try:
        spec.check(value)
    except ValueError:
        return False
    return True


def _keys_text(action: QAction) -> str:
    """An action's shortcuts as the user types them (``Ctrl+Shift+Z, Ctrl+Y``)."""
    return ", ".join(key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts())


def _action_text(action: QAction) -> str:
    """An action's menu text without its ``&`` accelerators."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
