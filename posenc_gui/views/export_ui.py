"""Export from the window: a button on every dock, File ▸ Export…, window PNG, clipboard.

:func:`install_export_actions` adds everything to a window's File menu and
docks; the actions use only the window's :class:`~posenc_gui.views.host.ExportHost`
interface. Dialogs go through :func:`ask_save_path` and :func:`show_error` so
tests (and scripts) can replace them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..export import (
    DEFAULT_PNG_SCALE,
    FORMAT_DESCRIPTIONS,
    FORMATS,
    IMAGE_FORMATS,
    MAX_PNG_SIDE,
    MAX_SCALE,
    MIN_PNG_WIDTH,
    MIN_SCALE,
    ExportError,
    caption_height,
    copy_to_clipboard,
    export_panel,
    export_widget_png,
    figure_caption,
    format_for_path,
    png_size_problem,
    suggested_name,
)

from ..export.readiness import StillComputing, until_drawn
from .base import MESSAGE_STYLES
from .plotkit.theme import THEME_NAMES, current as current_theme, themed_text
from .registry import declaration, panel_class

if TYPE_CHECKING:
    from .base import Panel
    from .compare import ComparedPanel
    from .host import ExportHost

SETTINGS_FOLDER = "export/last_folder"
SETTINGS_SCALE = "export/png_scale"
SETTINGS_FORMAT = "export/last_format"


# ------------------------------------------------------------- dialog hooks
def ask_save_path(parent: QWidget, title: str, proposed: str, fmt: str | None) -> str | None:
    """Ask where to save; ``None`` when cancelled. Tests replace this function."""
    if fmt:
        filters = f"{FORMAT_DESCRIPTIONS[fmt]} (*.{fmt});;All files (*)"
    else:
        filters = "PNG image (*.png);;All files (*)"
    path, _ = QFileDialog.getSaveFileName(parent, title, proposed, filters)
    return path or None


def show_error(parent: QWidget, message: str) -> None:
    """Tell the user why an export failed. Tests replace this function."""
    QMessageBox.critical(parent, "Export failed", message)


# ----------------------------------------------------------------- settings
def last_folder(window: ExportHost) -> str:
    """The folder of the last export (or the home folder)."""
    folder = window.settings.value(SETTINGS_FOLDER)
    if folder and os.path.isdir(str(folder)):
        return str(folder)
    return str(Path.home())


def png_scale(window: ExportHost) -> float:
    try:
        value = float(window.settings.value(SETTINGS_SCALE, DEFAULT_PNG_SCALE))
    except (TypeError, ValueError):
        return DEFAULT_PNG_SCALE
    return value if MIN_SCALE <= value <= MAX_SCALE else DEFAULT_PNG_SCALE


def proposed_path(window: ExportHost, panel_id: str, fmt: str) -> str:
    """Last folder + a descriptive name (scheme, sizes, panel)."""
    return os.path.join(last_folder(window), suggested_name(window.state.params, panel_id, fmt))


def _remember(window: ExportHost, path: Path, fmt: str | None = None) -> None:
    window.settings.setValue(SETTINGS_FOLDER, str(path.parent))
    if fmt:
        window.settings.setValue(SETTINGS_FORMAT, fmt)


# ------------------------------------------------------------------ actions
class _Busy:
    def __enter__(self) -> None:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)

    def __exit__(self, *exc: object) -> None:
        QApplication.restoreOverrideCursor()


def _ready(window: ExportHost, panel_id: str, fmt: str) -> Panel | ComparedPanel:
    """The panel (its A/B comparison while A is pinned), shown (a figure in a hidden tab was never laid
    out) and up to date."""
    panel = window.panels[panel_id]
    if fmt in IMAGE_FORMATS and not (panel.figure_widget().isVisible() and panel.on_screen()):
        window.raise_panel(panel_id)  # laid out now: its plots re-sample for their size
    window.state.flush()
    panel.ensure_current()  # a data export of a panel behind a tab
    exported = panel.exported()  # A and B together while comparing
    until_drawn(exported)
    return exported


def export_panel_to(window: ExportHost, panel_id: str, path: str, *, width: int | None = None,
                    scale: float | None = None, theme_name: str | None = None) -> Path | None:
    """Export ``panel_id`` to ``path`` (format from the extension), a figure in ``theme_name`` (None: the
    window's); report errors in a dialog."""
    try:
        fmt = format_for_path(path)
        panel = _ready(window, panel_id, fmt)
        if fmt == "png" and width is None and scale is None:
            scale = png_scale(window)
        with _Busy():
            written = export_panel(panel, path, fmt=fmt, width=width if fmt == "png" else None,
                                   scale=scale if fmt == "png" else None, theme=theme_name)
    except (ExportError, StillComputing) as error:
        show_error(window.window_widget(), str(error))
        return None
    _remember(window, written, fmt)
    window.show_status(f"Exported {panel.title} to {written}")
    return written


def export_panel_interactive(window: ExportHost, panel_id: str, fmt: str) -> Path | None:
    """Ask for a file name (proposed: last folder + descriptive name) and export."""
    title = window.panels[panel_id].title
    path = ask_save_path(window.window_widget(), f"Export {title} as {fmt.upper()}",
                         proposed_path(window, panel_id, fmt), fmt)
    if not path:
        return None
    if not Path(path).suffix:
        path += f".{fmt}"
    return export_panel_to(window, panel_id, path)


def export_window_png(window: ExportHost, path: str | None = None, *, scale: float | None = None) -> Path | None:
    """The whole window (every visible dock) as one PNG."""
    if path is None:
        name = suggested_name(window.state.params, "window", "png")
        path = ask_save_path(window.window_widget(), "Export window as PNG",
                             os.path.join(last_folder(window), name), "png")
        if not path:
            return None
        if not Path(path).suffix:
            path += ".png"
    window.compute.wait_idle()
    try:
        with _Busy():
            written = export_widget_png(window.window_widget(), path, scale=scale or png_scale(window),
                                        description=f"posenc_gui window — {window.state.params.slug()}")
    except ExportError as error:
        show_error(window.window_widget(), str(error))
        return None
    _remember(window, written)
    window.show_status(f"Exported the window to {written}")
    return written


def copy_panel_figure(window: ExportHost, panel_id: str | None = None) -> bool:
    """Copy a panel's figure (the current one by default) to the clipboard."""
    panel_id = panel_id or current_panel_id(window)
    if panel_id is None:
        return False
    try:
        panel = _ready(window, panel_id, "png")
        copy_to_clipboard(panel.figure_widget(), caption=figure_caption(panel))
    except (ExportError, StillComputing) as error:
        show_error(window.window_widget(), str(error))
        return False
    window.show_status(f"Copied the {panel.title} figure to the clipboard")
    return True


def current_panel_id(window: ExportHost) -> str | None:
    """The panel the user last used (:attr:`ExportHost.last_used_panel`) while its dock shows, else the first shown.

    The first shown is taken among the panels with a plot (those that declare model functions).
    """
    current = window.last_used_panel
    if current in window.panels and window.panel_shown(current):
        return current
    for panel_id in window.panels:
        if window.panel_shown(panel_id) and panel_class(panel_id).model_functions:
            return panel_id
    return next(iter(window.panels), None)


# ------------------------------------------------------------ export dialog
#: The export dialog's words for the themes.
THEME_LABELS = {"light": "Light", "dark": "Dark", "print": "Print (white, black text, heavier lines)"}


class ExportDialog(QDialog):
    """File ▸ Export…: choose the panel, the format, the PNG size and the file."""

    def __init__(self, window: ExportHost, panel_id: str | None = None) -> None:
        super().__init__(window.window_widget())
        self.window_ = window
        self.setWindowTitle("Export figure or data")
        self.panel_box = QComboBox(self)
        for pid in window.panels:
            self.panel_box.addItem(panel_class(pid).title, pid)
        start = panel_id or current_panel_id(window)
        if start is not None:
            self.panel_box.setCurrentIndex(max(0, self.panel_box.findData(start)))
        self.format_box = QComboBox(self)
        self._list_formats(str(window.settings.value(SETTINGS_FORMAT, "png")))

        self.scale_radio = QRadioButton("Scale", self)
        self.scale_spin = QDoubleSpinBox(self)
        self.scale_spin.setRange(MIN_SCALE, MAX_SCALE)
        self.scale_spin.setSingleStep(0.5)
        self.scale_spin.setValue(png_scale(window))
        self.scale_spin.setSuffix(" ×")
        self.width_radio = QRadioButton("Width", self)
        self.width_spin = QSpinBox(self)
        self.width_spin.setRange(MIN_PNG_WIDTH, MAX_PNG_SIDE)
        self.width_spin.setSuffix(" px")
        self.width_spin.setValue(1920)
        self.scale_radio.setChecked(True)
        self.size_label = QLabel(self)
        self.theme_box = QComboBox(self)
        for name in THEME_NAMES:
            self.theme_box.addItem(THEME_LABELS[name], name)
        self.theme_box.setCurrentIndex(self.theme_box.findData(current_theme().name))
        self.theme_box.setToolTip("The colours of the figure; the window keeps its own (View ▸ Theme)")
        png_row = QHBoxLayout()
        for w in (self.scale_radio, self.scale_spin, self.width_radio, self.width_spin):
            png_row.addWidget(w)
        png_row.addStretch(1)
        self.png_widget = QWidget(self)
        png_column = QVBoxLayout(self.png_widget)
        png_column.setContentsMargins(0, 0, 0, 0)
        png_column.addLayout(png_row)
        png_column.addWidget(self.size_label)

        self.path_edit = QLineEdit(self)
        self.path_edit.setMinimumWidth(420)
        self.path_edit.textEdited.connect(self._path_edited)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)

        form = QFormLayout()
        form.addRow("Panel:", self.panel_box)
        form.addRow("Format:", self.format_box)
        form.addRow("PNG size:", self.png_widget)
        form.addRow("Theme:", self.theme_box)
        form.addRow("File:", path_row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._export)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

        self._user_named = False
        self.written: Path | None = None
        for signal in (self.panel_box.currentIndexChanged, self.format_box.currentIndexChanged):
            signal.connect(self._refresh)
        for signal in (self.scale_spin.valueChanged, self.width_spin.valueChanged, self.scale_radio.toggled):
            signal.connect(self._update_size)
        # editing a value chooses it
        self.scale_spin.valueChanged.connect(lambda _v: self.scale_radio.setChecked(True))
        self.width_spin.valueChanged.connect(lambda _v: self.width_radio.setChecked(True))
        self._refresh()

    @property
    def panel_id(self) -> str:
        return self.panel_box.currentData()

    @property
    def fmt(self) -> str:
        return self.format_box.currentData()

    def _path_edited(self, _text: str) -> None:
        self._user_named = True

    def _list_formats(self, chosen: str) -> None:
        """Offer the formats the chosen panel exports, keeping ``chosen`` when it is one of them."""
        formats = panel_class(self.panel_id).export_formats
        if [self.format_box.itemData(row) for row in range(self.format_box.count())] != list(formats):
            self.format_box.blockSignals(True)
            self.format_box.clear()
            for fmt in formats:
                self.format_box.addItem(f"{fmt.upper()} — {FORMAT_DESCRIPTIONS[fmt]}", fmt)
            self.format_box.blockSignals(False)
        self.format_box.setCurrentIndex(max(0, self.format_box.findData(chosen)))

    def _refresh(self, *_args: object) -> None:
        self._list_formats(self.fmt)
        self.png_widget.setEnabled(self.fmt == "png")
        self.theme_box.setEnabled(self.fmt in IMAGE_FORMATS)
        text = self.path_edit.text()
        if not self._user_named or not text:
            self.path_edit.setText(proposed_path(self.window_, self.panel_id, self.fmt))
        else:  # keep the user's name, switch the extension
            self.path_edit.setText(str(Path(text).with_suffix(f".{self.fmt}")))
        self._update_size()

    def _update_size(self, *_args: object) -> None:
        panel = self.window_.panels[self.panel_id].exported()
        figure = panel.figure_widget()
        w, h = max(1, figure.width()), max(1, figure.height())
        below = caption_height(figure_caption(panel), w)
        if self.width_radio.isChecked():
            out_w = self.width_spin.value()
            out_h = round((h + below) * out_w / w)
        else:
            out_w, out_h = round(w * self.scale_spin.value()), round((h + below) * self.scale_spin.value())
        problem = png_size_problem(out_w, out_h) if self.fmt == "png" else None
        # past the memory budget: said where the size is chosen, and nothing to export until it is smaller
        self.size_label.setText(problem or f"{out_w:,} × {out_h:,} pixels (figure on screen: {w} × {h}"
                                + (", and a caption under it)" if below else ")"))
        self.size_label.setWordWrap(problem is not None)
        self.size_label.setStyleSheet(themed_text(MESSAGE_STYLES["error"]) if problem else "")
        self.export_button.setEnabled(problem is None)

    def _browse(self) -> None:
        path = ask_save_path(self, "Export to", self.path_edit.text(), self.fmt)
        if path:
            self._user_named = True
            self.path_edit.setText(path)

    def png_options(self) -> dict[str, Any]:
        if self.fmt != "png":
            return {}
        if self.width_radio.isChecked():
            return {"width": self.width_spin.value()}
        return {"scale": self.scale_spin.value()}

    def _export(self) -> None:
        path = self.path_edit.text().strip()
        if not path:
            show_error(self, "Choose a file to export to.")
            return
        if not Path(path).suffix:
            path += f".{self.fmt}"
        if self.fmt == "png" and self.scale_radio.isChecked():
            self.window_.settings.setValue(SETTINGS_SCALE, self.scale_spin.value())
        written = export_panel_to(self.window_, self.panel_id, path, **self.png_options(),
                                  theme_name=self.theme_box.currentData())
        if written is not None:  # on failure the dialog stays open with the error shown
            self.written = written
            self.accept()


def open_export_dialog(window: ExportHost, panel_id: str | None = None) -> ExportDialog:
    dialog = ExportDialog(window, panel_id)
    dialog.open()
    return dialog


# --------------------------------------------------------------- installing
def _panel_menu(window: ExportHost, panel_id: str, parent: QWidget) -> QMenu:
    """The export actions of one panel: a format each (those it declares), copy, and the dialog."""
    menu = QMenu(parent)
    declared = declaration(panel_id)  # the dock's menu is made before its panel's module is imported
    for fmt in declared.export_formats or FORMATS:
        action = menu.addAction(f"Export {declared.title} as {fmt.upper()}…")
        action.setObjectName(f"export-{panel_id}-{fmt}")
        action.triggered.connect(lambda _=False, f=fmt: export_panel_interactive(window, panel_id, f))
        if fmt == IMAGE_FORMATS[-1]:
            menu.addSeparator()
    menu.addSeparator()
    copy = menu.addAction("Copy figure to clipboard")
    copy.setObjectName(f"copy-{panel_id}")
    copy.triggered.connect(lambda: copy_panel_figure(window, panel_id))
    more = menu.addAction("Export…")
    more.triggered.connect(lambda: open_export_dialog(window, panel_id))
    return menu


#: The object name of a dock's right-click export menu (:func:`dock_export_menu`).
DOCK_MENU_NAME = "dock-export-menu"


def dock_export_menu(window: ExportHost, panel_id: str, dock: QDockWidget) -> QMenu:
    """The export actions of the dock's right-click menu, made the first time they are asked for.

    Made then, not with the dock: the window has a dock per panel, 26 menus
    of nine actions at start-up for the one a user may open.
    """
    menu = dock.findChild(QMenu, DOCK_MENU_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    if menu is None:
        menu = _panel_menu(window, panel_id, dock)
        menu.setObjectName(DOCK_MENU_NAME)
    return menu


def _add_dock_actions(window: ExportHost, panel_id: str, dock: QDockWidget) -> None:
    """The export actions on the dock's right-click menu (the dock exists before its panel)."""
    dock.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    dock.customContextMenuRequested.connect(
        lambda position: dock_export_menu(window, panel_id, dock).popup(dock.mapToGlobal(position)))


def _add_dock_button(window: ExportHost, panel_id: str) -> QToolButton:
    panel = window.panels[panel_id]
    button = QToolButton(panel)
    button.setText("Export")
    button.setObjectName(f"export-button-{panel_id}")
    button.setToolTip("Export this figure (PNG, SVG, PDF) or its numbers (CSV, NPY, JSON), or copy it")
    button.setAccessibleName(f"Export {panel.title}")
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    button.setMenu(_panel_menu(window, panel_id, button))
    header = panel.header
    # before the help button that finish_header() put at the end
    header.insertWidget(max(0, header.count() - 1), button)
    # Now, not from the event loop as Qt shows a widget added to a shown layout:
    # the window fits its layout to the screen by the panels' width with it.
    button.show()
    return button


@dataclass(frozen=True)
class InstalledExport:
    """What :func:`install_export_actions` made: the File-menu actions by name, and the Export buttons.

    ``buttons`` gains each panel's button as the panel is built.
    """

    actions: dict[str, QAction]
    buttons: dict[str, QToolButton]


def install_export_actions(window: ExportHost, file_menu: QMenu, docks: Mapping[str, QDockWidget],
                           panel_created: SignalInstance) -> InstalledExport:
    """Add File ▸ Export…, Export window as PNG, Copy figure, and export actions on every dock.

    Parameters
    ----------
    window : ExportHost
        The window the actions export from.
    file_menu : QMenu
        The actions are inserted at its top.
    docks : mapping
        Each panel's dock by panel id: its right-click menu gets the panel's export actions.
    panel_created : signal
        Emitted with a panel id when that panel is built: it then gets its Export button.
    """
    parent = window.window_widget()
    first = file_menu.actions()[0] if file_menu.actions() else None
    export = QAction("&Export…", parent)
    export.setShortcut(QKeySequence("Ctrl+E"))
    export.setStatusTip("Export a panel as PNG, SVG, PDF, CSV, NPY or JSON")
    export.triggered.connect(lambda: open_export_dialog(window))
    window_png = QAction("Export &window as PNG…", parent)
    window_png.triggered.connect(lambda: export_window_png(window))
    copy = QAction("&Copy figure to clipboard", parent)
    copy.setShortcut(QKeySequence("Ctrl+Shift+C"))
    copy.setStatusTip("Copy the current panel's figure as an image")
    copy.triggered.connect(lambda: copy_panel_figure(window))
    for action in (export, window_png, copy):
        file_menu.insertAction(first, action)
    if first is not None:
        file_menu.insertSeparator(first)
    for panel_id, dock in docks.items():
        _add_dock_actions(window, panel_id, dock)
    buttons: dict[str, QToolButton] = {}
    for panel_id in window.panels.built():
        buttons[panel_id] = _add_dock_button(window, panel_id)

    def add_button(panel_id: str) -> None:
        if panel_id not in buttons:
            buttons[panel_id] = _add_dock_button(window, panel_id)

    panel_created.connect(add_button)
    return InstalledExport({"export": export, "export_window": window_png, "copy": copy}, buttons)


__all__ = [
    "ExportDialog",
    "InstalledExport",
    "ask_save_path",
    "copy_panel_figure",
    "current_panel_id",
    "dock_export_menu",
    "export_panel_interactive",
    "export_panel_to",
    "export_window_png",
    "install_export_actions",
    "open_export_dialog",
    "show_error",
]
