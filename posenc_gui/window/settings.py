"""The window's settings file: what the window restores from it at start (parameters, view settings, A/B
comparison, geometry and dock layouts; the theme's part is :mod:`posenc_gui.window.themes`') and saves back on
close. The file itself, untrusted and bounded, is :class:`posenc_gui.settings.Settings`. The window keeps one
:class:`WindowSettings`.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QStandardPaths

from .layouts import SETTINGS_VERSION, layout_key
from ..model import OPTION_SPECS, EncodingParams, ParamSpec
from ..session import checked_compare
from ..settings import Key, Settings
from ..views.export_ui import SETTINGS_FOLDER, SETTINGS_FORMAT, SETTINGS_SCALE

if TYPE_CHECKING:
    from ..mainwindow import MainWindow

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


def settings_file() -> str:
    """Path of the ini file holding layout and last parameters.

    ``POSENC_GUI_SETTINGS`` overrides it (tests, portable installs).
    """
    override = os.environ.get("POSENC_GUI_SETTINGS")
    if override:
        return override
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return os.path.join(folder or os.path.expanduser("~/.config/posenc-gui"), "posenc-gui.ini")


def _no_constant(text: str) -> None:
    raise ValueError(f"{text} is no number")


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


class WindowSettings:
    """Reads ``window``'s settings file (:func:`settings_file`) and writes it back; notes what it could not use.

    Parameters
    ----------
    window : MainWindow
        The window it restores and saves.

    Attributes
    ----------
    file : Settings
        The settings file's checked values (``window.settings``; the export dialog keeps its choices there too).
    ignored : list of str
        What of the file was not used, and why, for :meth:`warning`.
    remembered : dict
        The saved values of options the saved scheme does not take (``AppState.remembered``), once
        :meth:`read_params` ran.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.file = Settings(settings_file(), SETTINGS_KEYS)
        self.ignored = list(self.file.ignored)
        self.remembered: dict[str, object] = {}

    def read_params(self) -> EncodingParams | None:
        """The parameters saved last (and their :attr:`remembered` options), or None when there are none or
        they are damaged (named in :attr:`ignored`)."""
        raw = self.file.value("params")
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
            self.remembered = {name: value for name, value in remembered.items()
                                if name in OPTION_SPECS and _is_valid(OPTION_SPECS[name], value)}
            return EncodingParams.validated(**values)
        except RecursionError:
            self.ignored.append("parameters ignored (nested too deeply)")
            return None
        except ValueError as error:
            self.ignored.append(f"parameters ignored ({error})")
            return None

    def restore_view(self) -> None:
        """The shared view settings saved last (σ, the demo's d_model, the reference); a bad one is named and left."""
        raw = self.file.value("view")
        if raw is None:
            return
        try:
            values = json.loads(raw)
        except ValueError:
            values = None
        if not isinstance(values, dict):
            self.ignored.append("view settings ignored (not a JSON object)")
            return
        for name, value in values.items():
            try:
                self.window.state.set_view(**{str(name): value})
            except ValueError as error:
                self.ignored.append(f"view setting ignored ({error})")

    def restore_comparison(self) -> None:
        """Pin the A saved last, in its mode (a bad one is named in the status bar and left out)."""
        raw = self.file.value("compare")
        if raw is None:
            return
        try:
            pinned, mode = checked_compare(json.loads(raw, parse_constant=_no_constant))
        except (ValueError, RecursionError) as error:  # SessionError is a ValueError, as json's errors are
            self.ignored.append(f"A/B comparison ignored ({error})")
            return
        self.window.comparison.set_mode(mode)
        if pinned is not None:
            self.window.comparison.pin(pinned)

    def restore_layout(self) -> None:
        """The window's saved geometry and dock layouts (each family's); an unreadable one is named and left."""
        geometry = self.file.value("geometry")
        window_state = self.file.value("windowState")
        if geometry is not None and not self.window.restoreGeometry(geometry):
            self.ignored.append("window geometry ignored (unreadable)")
        layouts = self.window.dock_layouts
        saved_key, problems = (layouts.load_text(raw) if (raw := self.file.value("layouts")) is not None
                               else (None, []))
        self.ignored += problems
        key = layout_key(self.window.state.params)
        if window_state is not None and saved_key not in (None, key):
            # saved in another family's layout (the command line chose another scheme): kept for that family
            layouts.remember(saved_key, window_state)
            window_state = layouts.saved(key)
        if window_state is not None and not layouts.restore(window_state, self.window.state.params):
            self.ignored.append("layout ignored (unreadable)")

    def warning(self) -> str | None:
        """One line on what of the settings file was not used, or None when all of it was."""
        if self.file.problem is not None:
            return self.file.warning()
        if self.ignored:
            return f"Saved settings: {'; '.join(self.ignored)}. Using defaults for them."
        return None

    def save(self) -> str | None:
        """Write geometry, dock layout and parameters; None, or why not (also shown in the status bar)."""
        self.file.setValue("geometry", self.window.saveGeometry())
        self.file.setValue("windowState", self.window.saveState(SETTINGS_VERSION))
        self.file.setValue("layouts", self.window.dock_layouts.to_text())
        remembered = {name: value for name, value in self.window.state.remembered.items()
                      if name not in self.window.state.params.options}
        self.file.setValue("params", json.dumps({**self.window.state.params.as_dict(), "remembered": remembered}))
        self.file.setValue("view", json.dumps(dict(self.window.state.view)))
        pinned = self.window.comparison.pinned
        self.file.setValue("compare", json.dumps(None if pinned is None else
                                                 {"a": pinned.params.as_dict(), "mode": self.window.comparison.mode}))
        self.window.themes.save()
        problem = self.file.save()
        if problem is not None:
            self.window.statusBar().showMessage(problem, 10_000)
        return problem
