"""The main window: one dock per panel, the menus, the status bar, and the A/B comparison's docks.

What it does is in its controllers (:mod:`posenc_gui.window`), one of each: :attr:`MainWindow.dock_placement`
(the docks and their layouts), :attr:`~MainWindow.sessions`, :attr:`~MainWindow.saved_settings` (the settings
file), :attr:`~MainWindow.themes` and :attr:`~MainWindow.shortcuts`; the panels are built on demand
(:mod:`posenc_gui.window.panels`). The methods below that hand over to a controller are the window's API for
the panels (:mod:`posenc_gui.views.host`), scripts and tests.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (QDialog, QDockWidget, QLabel, QMainWindow, QMessageBox, QProgressBar, QToolButton,
                               QUndoView, QVBoxLayout, QWidget)

from . import __version__, resources_path
from .compute import ComputeService
from .window.layouts import first_size
from .linked_cursor import Cursor
from .model import EncodingParams
from .model.core.digits import entry_with_error, shown_number
from .session import Session
from .state import AppState
from .window.status_line import MessageLine
from .views.base import Panel
from .views.compare import MODES as COMPARE_MODES, Comparison
from .views.export_ui import install_export_actions
from .views.labels import StatusText, counted
from .views.model_locations import install_models_menu
from .views.model_open import model_location, open_chosen_path, open_model_dialog, open_model_path
from .views.registry import declarations
from .window.docks import DockPlacement
from .window.panels import LazyPanels, PanelPrebuilder, PanelUseTracker
from .window.sessions import Sessions
from .window.settings import WindowSettings
from .window.shortcuts import Shortcuts
from .window.themes import Themes

#: The panels of the right area shown at first launch (their ``dock``); the others are tabbed behind them.
PRIMARY_PANELS = tuple(d.panel_id for d in declarations() if d.dock.area == "right" and d.dock.shown)
#: How long the status bar shows what a model opened from the command line is shown as (its notes).
MODEL_MESSAGE_MS = 30_000
#: The status bar's cursor readout while there is no linked cursor.
NO_CURSOR = "Cursor: hover a plot to mark a position in every panel, click to pin it"


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
        A dock's panel was built (see :class:`~posenc_gui.window.panels.LazyPanels`).
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
        #: The settings file, and what the window restores from it and saves to it.
        self.saved_settings = WindowSettings(self)
        self.settings = self.saved_settings.file
        restored = (self.saved_settings.read_params() if restore and params is None and session is None
                    else None)
        start = params or (session and session.params) or restored or EncodingParams()
        if overrides:  # the command line's flags, on the restored scheme if it takes them, else on the defaults
            try:
                start = start.replaced(fit_sizes=True, **overrides)
            except ValueError:
                start = EncodingParams().replaced(fit_sizes=True, **overrides)
        self.state = AppState(start, self)
        self.state.remembered.update(self.saved_settings.remembered)
        #: The A/B comparison: the pinned setup A and how the docks show it beside the current setup B.
        self.comparison = Comparison(self.state, self)
        self._compared_mode: str | None = None  # the mode the docks are wrapped in (None: not comparing)
        if restore:
            self.saved_settings.restore_view()
        self.themes = Themes(self)
        self.themes.restore(restore, theme_name)
        self.compute = ComputeService(self)
        #: The registered panels' declarations by panel id, in View-menu order (their modules are imported
        #: when their panels are built).
        self.panel_declarations = {declared.panel_id: declared for declared in declarations()}
        self.panels = LazyPanels(list(self.panel_declarations), self._build_panel, self.panelCreated.emit)
        self.docks: dict[str, QDockWidget] = {}
        self.use_tracker = PanelUseTracker(self)
        self.sessions = Sessions(self)
        self.dock_placement = DockPlacement(self)
        self.resize(*first_size(self.screen().availableGeometry().size()))  # before the docks are sized
        self._build_menus()
        self.dock_placement.build()
        self._build_status_bar()
        self.state.paramsChanged.connect(self.dock_placement.follow_layout)
        self.state.modelOpened.connect(self._bring_decoder_forward)
        if restore:
            self.saved_settings.restore_layout()
        self.keep_on_screen()
        if restore and params is None and session is None:
            self.saved_settings.restore_comparison()
        warning = self.saved_settings.warning()
        if warning:
            self.statusBar().showMessage(warning, 15_000)
        self.panelCreated.connect(self.dock_placement.fit_new_panel)
        installed = install_export_actions(self, self.file_menu, self.docks, self.panelCreated)
        #: File-menu export actions by name, and each built panel's Export button (see views.export_ui).
        self.export_actions: dict[str, QAction] = installed.actions
        self.export_buttons: dict[str, QToolButton] = installed.buttons
        self._build_handout_action()
        self.themes.build_menu()
        self.shortcuts = Shortcuts(self)
        self.shortcuts.build()
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
        self.sessions.build_menu()
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
        self.handout_action.triggered.connect(self._open_handout_dialog)
        copy = self.export_actions["copy"]
        actions = self.file_menu.actions()
        after = actions[actions.index(copy) + 1] if copy in actions and actions.index(copy) + 1 < len(actions) else None
        self.file_menu.insertAction(after, self.handout_action)
        self.export_actions["handout"] = self.handout_action

    def _open_handout_dialog(self) -> None:
        from .views.handout_ui import open_handout_dialog  # the handout's modules load on first use

        open_handout_dialog(self)

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

    def _build_panel(self, panel_id: str) -> Panel:
        panel = self.panel_declarations[panel_id].load()(self.state, self.compute, self)
        panel.attach_host(self)
        self.use_tracker.watch(panel)
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
        self.message_line = MessageLine(status)  # the messages elided before the cursor readout, not into it

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
        return self.use_tracker.last

    def panel_shown(self, panel_id: str) -> bool:
        """Whether the dock of ``panel_id`` is shown (it may be behind another dock's tab)."""
        return self.docks[panel_id].isVisible()

    def show_status(self, message: str) -> None:
        """Show ``message`` in the status bar for ten seconds."""
        self.statusBar().showMessage(message, 10_000)

    def window_widget(self) -> QWidget:
        """The window itself (the :class:`~posenc_gui.views.host.ExportHost` interface)."""
        return self

    def _bring_decoder_forward(self, path: str) -> None:
        """A decoder opened (``--model``, File ▸ Open model…, a drop) brings the Decoder panel forward, which
        traces it; raised after the event that opened it, once the window shows the model's layout."""
        from .model.decoder import is_decoder  # the decoder package loads on first use

        if is_decoder(path):
            QTimer.singleShot(0, lambda: self.raise_panel("decoder"))

    def raise_panel(self, panel_id: str, keep_in_view: str | None = None) -> None:
        """Show the dock of ``panel_id`` in front of its tab group (:meth:`.DockPlacement.raise_panel`)."""
        self.dock_placement.raise_panel(panel_id, keep_in_view)

    def go_to_panel(self, name: str | None = None) -> str | None:
        """Bring the panel named ``name`` (asked for when None) to the front (:meth:`.DockPlacement.go_to_panel`)."""
        return self.dock_placement.go_to_panel(name)

    def switch_tab(self, step: int) -> str | None:
        """Bring the next or previous tab of the current panel's dock forward (:meth:`.DockPlacement.switch_tab`)."""
        return self.dock_placement.switch_tab(step)

    def reset_zoom(self) -> str | None:
        """Show everything the current panel plots again (:meth:`.Shortcuts.reset_zoom`)."""
        return self.shortcuts.reset_zoom()

    def reset_layout(self, key: str | None = None) -> None:
        """Put every dock where layout ``key`` has it (:meth:`.DockPlacement.reset_layout`)."""
        self.dock_placement.reset_layout(key)

    def keep_on_screen(self) -> None:
        """Fit the window, frame included, into its screen (:meth:`.DockPlacement.keep_on_screen`)."""
        self.dock_placement.keep_on_screen()

    def set_theme(self, name: str) -> None:
        """Show the window and every panel in the theme ``name`` (:meth:`.Themes.set_theme`)."""
        self.themes.set_theme(name)

    def set_colormap(self, kind: str, name: str) -> None:
        """Draw every matrix of ``kind`` with the colour map ``name`` (:meth:`.Themes.set_colormap`)."""
        self.themes.set_colormap(kind, name)

    def current_session(self) -> Session:
        """What a session file of the window holds now (:meth:`.Sessions.current`)."""
        return self.sessions.current()

    def save_session(self, path: str) -> str | None:
        """Write the session to ``path``; None, or why not (:meth:`.Sessions.save`)."""
        return self.sessions.save(path)

    def open_session(self, path: str) -> str | None:
        """Open the session file at ``path``; None, or why nothing changed (:meth:`.Sessions.open`)."""
        return self.sessions.open(path)

    def apply_session(self, session: Session, overrides: dict | None = None) -> str | None:
        """Show ``session`` (``overrides`` on its parameters); None, or why not (:meth:`.Sessions.apply`)."""
        return self.sessions.apply(session, overrides)

    def recent_sessions(self) -> list[str]:
        """The session files opened or saved last, newest first (:meth:`.Sessions.recent`)."""
        return self.sessions.recent()

    def save_settings(self) -> str | None:
        """Write the settings file; None, or why not (:meth:`.WindowSettings.save`)."""
        return self.saved_settings.save()

    def setVisible(self, visible: bool) -> None:  # noqa: N802 (Qt override)
        if visible and not self.isVisible() and not self.dock_placement.fitted_to_screen:
            # before the docks show (and their panels are built): a second row tabbed on a short screen is not built
            self.dock_placement.fit_rows_to_screen_height()
            self.compute.start_at_once_until_idle()  # the shown panels' first data while the window is laid out
        super().setVisible(visible)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if not self.dock_placement.fitted_to_screen:  # the shown docks' panels are built now, the frame may be known
            self.dock_placement.fitted_to_screen = True
            self.dock_placement.fit_layout_to_screen()
            self.keep_on_screen()
        self._prebuilder.start()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        self._prebuilder.stop()
        self.save_settings()
        self.compute.shutdown()
        super().closeEvent(event)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About posenc_gui",
            f"<b>posenc_gui {__version__}</b><br>A desktop lab for transformer positional encodings.",
        )

    def panel(self, panel_id: str) -> QWidget:
        """The panel widget with ``panel_id``."""
        return self.panels[panel_id]


