"""The window's sessions: File ▸ Open session…, Save session… and Open recent, and what a session file holds
of the window (:class:`~posenc_gui.session.Session`: parameters, view settings, panel options, layout, A/B).
The window keeps one :class:`Sessions`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from .layouts import SETTINGS_VERSION
from ..model import EncodingParams
from ..session import Session, SessionError, read_session, write_session

if TYPE_CHECKING:
    from ..mainwindow import MainWindow

#: Session files File ▸ Open recent offers, newest first.
MAX_RECENT_SESSIONS = 8
#: Longest path File ▸ Open recent keeps.
MAX_RECENT_PATH = 4096

#: The file dialogs' filter of session files.
SESSION_FILTER = "posenc-gui sessions (*.json);;All files (*)"


def ask_session_path(parent: QWidget, title: str, proposed: str, save: bool) -> str | None:
    """The session file the user chooses in a file dialog, or None when cancelled (tests replace it)."""
    ask = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    path, _ = ask(parent, title, proposed, SESSION_FILTER)
    return path or None


def show_session_problem(parent: QWidget, title: str, message: str) -> None:
    """Tell the user why a session was not opened or saved (tests replace it)."""
    QMessageBox.warning(parent, title, message)


class Sessions:
    """Opens, saves and applies session files for ``window``, and lists the recent ones (kept in its settings).

    Parameters
    ----------
    window : MainWindow
        The window whose parameters, view settings, built panels' options, layout and A/B comparison a
        session holds.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def build_menu(self) -> None:
        """File ▸ Save session…, Open session… and Open recent ▸."""
        self.save_session_action = QAction("&Save session…", self.window, shortcut=QKeySequence("Ctrl+S"))
        self.save_session_action.triggered.connect(self._save_dialog)
        self.open_session_action = QAction("&Open session…", self.window, shortcut=QKeySequence("Ctrl+O"))
        self.open_session_action.triggered.connect(lambda: self._open_dialog())
        self.window.file_menu.addAction(self.open_session_action)
        self.recent_menu = self.window.file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self.fill_recent_menu)
        self.window.file_menu.addAction(self.save_session_action)
        self.window.file_menu.addSeparator()

    def current(self) -> Session:
        """The parameters, view settings, built panels' options, layout and A/B comparison, as a session file
        holds them."""
        remembered = {name: value for name, value in self.window.state.remembered.items()
                      if name not in self.window.state.params.options}
        panels = {panel_id: options for panel_id, panel in self.window.panels.built().items()
                  if (options := panel.current_options())}
        pinned = self.window.comparison.pinned.params if self.window.comparison.pinned is not None else None
        return Session(self.window.state.params, remembered, dict(self.window.state.view), panels,
                       bytes(self.window.saveState(SETTINGS_VERSION).data()), pinned, self.window.comparison.mode)

    def save(self, path: str) -> str | None:
        """Write :meth:`current` to ``path`` (atomically); None, or why not (also in the status bar)."""
        from ..export import ExportError

        try:
            written = write_session(path, self.current())
        except ExportError as error:
            return self._problem(f"Session not saved: {error}")
        self._remember_recent(str(written))
        self.window.show_status(f"Session saved to {written}")
        return None

    def open(self, path: str) -> str | None:
        """Read the session file at ``path`` and apply it; None, or the one-line reason nothing changed."""
        try:
            session = read_session(path)
        except SessionError as error:
            return self._problem(f"Session {path} not opened: {error}")
        problem = self.apply(session)
        if problem:
            return self._problem(f"Session {path} not opened: {problem}")
        self._remember_recent(os.path.abspath(path))
        self.window.show_status(f"Session {path} opened")
        return None

    def apply(self, session: Session, overrides: dict | None = None) -> str | None:
        """Show ``session`` (with ``overrides`` on its parameters); None, or why not, and then nothing changed.

        The parameters and view settings come first (a panel's options can
        depend on them, a waveform's dimensions on d_model), except for a
        panel whose options set them too (:attr:`Panel.sets_other_state`),
        which comes before. The layout is applied only when it restores;
        otherwise the one before stays, and a note says so.
        """
        before, remembered = self.current(), dict(self.window.state.remembered)
        try:
            params = session.params.replaced(session.remembered, fit_sizes=True, **(overrides or {}))
        except ValueError as error:
            return str(error)
        try:
            self._apply_values(session, params)
        except ValueError as error:
            self.window.state.remembered.clear()
            self.window.state.remembered.update(remembered)
            self._apply_values(before, before.params)
            self.window.restoreState(QByteArray(before.layout), SETTINGS_VERSION)
            return str(error)
        if session.layout is not None and not self.window.restoreState(QByteArray(session.layout), SETTINGS_VERSION):
            self.window.restoreState(QByteArray(before.layout), SETTINGS_VERSION)
            self.window.show_status("Session opened; its layout is not one this window can restore, the layout stays")
        return None

    def _apply_values(self, session: Session, params: EncodingParams) -> None:
        """Set ``params`` and the session's remembered options, view settings and panel options, in that
        order but for the panels that set other state, which come first; ValueError naming a refused one."""
        declared = self.window.panel_declarations
        first = {pid: opts for pid, opts in session.panels.items() if declared[pid].load().sets_other_state}
        self._apply_panel_options(first)
        self.window.state.remembered.update(session.remembered)
        problem = self.window.state.set_params(params)
        if problem:
            raise ValueError(problem)
        self.window.state.set_view(**session.view)
        self._apply_panel_options({pid: opts for pid, opts in session.panels.items() if pid not in first})
        self.window.comparison.set_mode(session.compare_mode)
        if session.pinned is not None:
            self.window.comparison.pin(session.pinned)
        else:
            self.window.comparison.clear()

    def _apply_panel_options(self, panels: Mapping[str, Mapping[str, object]]) -> None:
        for panel_id, options in panels.items():
            try:
                self.window.panels[panel_id].apply_options(**options)
            except (ValueError, TypeError) as error:
                raise ValueError(f"panels.{panel_id}: {error}") from None

    def recent(self) -> list[str]:
        """The session files opened or saved last, newest first (at most :data:`MAX_RECENT_SESSIONS`)."""
        try:
            paths = json.loads(self.window.settings.value("recentSessions") or "[]")
        except (ValueError, RecursionError):  # a damaged settings file: nested 20,000 deep fits its bound
            return []
        if not isinstance(paths, list):
            return []
        return [path for path in paths if isinstance(path, str) and 0 < len(path) <= MAX_RECENT_PATH
                ][:MAX_RECENT_SESSIONS]

    def _remember_recent(self, path: str) -> None:
        if len(path) > MAX_RECENT_PATH:
            return
        paths = [path, *(other for other in self.recent() if other != path)][:MAX_RECENT_SESSIONS]
        self.window.settings.setValue("recentSessions", json.dumps(paths))

    def fill_recent_menu(self) -> None:
        """List :meth:`recent` in File ▸ Open recent (as the menu is about to show)."""
        self.recent_menu.clear()
        paths = self.recent()
        for path in paths:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, chosen=path: self._open_dialog(chosen))
        if not paths:
            self.recent_menu.addAction("No recent sessions").setEnabled(False)

    def _problem(self, message: str) -> str:
        self.window.show_status(message)
        return message

    def _open_dialog(self, path: str | None = None) -> None:
        path = path or ask_session_path(self.window, "Open session", self._folder(), save=False)
        problem = path and self.open(path)
        if problem:
            show_session_problem(self.window, "Session not opened", problem)

    def _save_dialog(self) -> None:
        proposed = os.path.join(self._folder(), f"{self.window.state.params.slug()}.json")
        path = ask_session_path(self.window, "Save session", proposed, save=True)
        problem = path and self.save(path)
        if problem:
            show_session_problem(self.window, "Session not saved", problem)

    def _folder(self) -> str:
        recent = self.recent()
        return os.path.dirname(recent[0]) if recent else os.path.expanduser("~")
