"""File ▸ Export handout…: the figures of chosen panels, the parameters and the headline numbers, in one PDF or folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from ..export import ExportError
from ..export.handout import DEFAULT_PAGE, Handout
from ..export.readiness import StillComputing
from .export_ui import THEME_LABELS, _Busy, _ready, last_folder, show_error
from .plotkit.theme import THEME_NAMES, current as current_theme
from .registry import panel_classes

if TYPE_CHECKING:
    from .host import ExportHost

#: The handout's forms in the dialog: (label, folder formats or None for one PDF).
FORMS = {"pdf": ("One PDF, a page per figure", None), "png": ("A folder of PNG figures and index.html", ("png",)),
         "svg": ("A folder of SVG figures and index.html", ("svg",))}
#: The PDF's paper in the dialog: its label by the page name :class:`Handout` takes.
PAGE_LABELS = {"a4": "A4, landscape", "letter": "Letter, landscape"}


def ask_handout_target(parent: QWidget, proposed: str, form: str) -> str | None:
    """The PDF file or the folder the user chooses, or None when cancelled (tests replace it)."""
    if FORMS[form][1] is None:
        path, _ = QFileDialog.getSaveFileName(parent, "Export handout to", proposed, "PDF (*.pdf);;All files (*)")
    else:
        path = QFileDialog.getExistingDirectory(parent, "Export handout into the folder", str(Path(proposed).parent))
    return path or None


def default_panels(window: ExportHost) -> list[str]:
    """The panels a handout takes by default: every shown dock's, that makes a figure of the current scheme."""
    info = window.state.params.info
    return [cls.panel_id for cls in panel_classes()
            if cls.in_handout and window.panel_shown(cls.panel_id) and cls.shows(info)]


def setup_lines(window: ExportHost) -> list[str]:
    """The handout's description of the setup: the parameters, or A and B while comparing."""
    params = window.state.params
    comparison = getattr(window, "comparison", None)
    pinned = comparison.pinned if comparison is not None else None
    if pinned is not None:
        return [f"A (pinned): {pinned.params.title()}", f"B: {params.title()}"]
    return [f"Setup: {params.title()}"]


def export_handout(window: ExportHost, target: str, panel_ids: list[str], form: str = "pdf",
                   theme_name: str | None = None, page: str = DEFAULT_PAGE) -> Path | None:
    """Write the handout of ``panel_ids`` (in the panels' order) to ``target`` with figures in ``theme_name``
    (None: the window's), a PDF's pages on ``page`` paper (``"a4"`` or ``"letter"``, landscape); the file
    written (the PDF or the index), or None when it failed (said in a dialog; a PDF is then not written)."""
    params = window.state.params
    titles = [cls.title for cls in panel_classes() if cls.panel_id in panel_ids]
    order = {cls.panel_id: index for index, cls in enumerate(panel_classes())}
    chosen = sorted(panel_ids, key=lambda pid: order.get(pid, len(order)))
    left_out: list[str] = []
    try:
        with _Busy():
            handout = Handout(target, f"Positional encodings — {params.info.label}", setup_lines(window), titles,
                              FORMS[form][1] or ("png",), theme_name=theme_name, page=page)
            try:
                for panel_id in chosen:
                    try:
                        handout.add(_ready(window, panel_id, "png"))
                    except (ExportError, StillComputing) as error:
                        left_out.append(f"{panel_id} ({error})")
                written = handout.finish()
            except BaseException:
                handout.abandon()
                raise
    except ExportError as error:
        show_error(window.window_widget(), str(error))
        return None
    note = f"; left out: {', '.join(left_out)}" if left_out else ""
    window.show_status(f"Exported a handout of {len(handout.entries)} figures to {written}{note}")
    return written


class HandoutDialog(QDialog):
    """Choose the panels (the shown ones ticked), the form and the target of a handout."""

    def __init__(self, window: ExportHost) -> None:
        super().__init__(window.window_widget())
        self.window_ = window
        self.setWindowTitle("Export handout")
        layout = QVBoxLayout(self)
        intro = QLabel("Every ticked panel's figure, with the parameters and its headline numbers, in order. "
                       "While A is pinned, each figure shows A and B.", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.panel_list = QListWidget(self)
        ticked = set(default_panels(window))
        info = window.state.params.info
        for cls in panel_classes():
            if not cls.in_handout:
                continue
            item = QListWidgetItem(cls.title if cls.shows(info) else f"{cls.title} (does not show this scheme)")
            item.setData(Qt.ItemDataRole.UserRole, cls.panel_id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if cls.panel_id in ticked else Qt.CheckState.Unchecked)
            self.panel_list.addItem(item)
        layout.addWidget(self.panel_list, 1)
        form = QFormLayout()
        self.form_box = QComboBox(self)
        for key, (label, _) in FORMS.items():
            self.form_box.addItem(label, key)
        form.addRow("Form", self.form_box)
        self.theme_box = QComboBox(self)
        for name in THEME_NAMES:
            self.theme_box.addItem(THEME_LABELS[name], name)
        self.theme_box.setCurrentIndex(self.theme_box.findData(current_theme().name))
        self.theme_box.setToolTip("The colours of the figures; the window keeps its own (View ▸ Theme)")
        form.addRow("Theme", self.theme_box)
        self.page_box = QComboBox(self)
        for name, label in PAGE_LABELS.items():
            self.page_box.addItem(label, name)
        self.page_box.setCurrentIndex(self.page_box.findData(DEFAULT_PAGE))
        self.page_box.setToolTip("The PDF's paper: every page this size, each figure scaled to fit it")
        form.addRow("Page", self.page_box)
        row = QHBoxLayout()
        self.path_edit = QLineEdit(str(Path(last_folder(window)) / f"{window.state.params.slug()}_handout.pdf"), self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form.addRow("Save to", row)
        layout.addLayout(form)
        self.form_box.currentIndexChanged.connect(self._form_changed)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(460, 520)

    @property
    def form(self) -> str:
        return self.form_box.currentData()

    def chosen(self) -> list[str]:
        """The ticked panels' ids, in the list's order."""
        items = (self.panel_list.item(row) for row in range(self.panel_list.count()))
        return [item.data(Qt.ItemDataRole.UserRole) for item in items if item.checkState() == Qt.CheckState.Checked]

    def _form_changed(self) -> None:
        path = Path(self.path_edit.text())
        pdf = FORMS[self.form][1] is None
        self.page_box.setEnabled(pdf)  # a folder of figures has no pages
        self.path_edit.setText(str(path.with_suffix(".pdf")) if pdf else str(path.with_suffix("")) + "/")

    def _browse(self) -> None:
        chosen = ask_handout_target(self, self.path_edit.text(), self.form)
        if chosen:
            self.path_edit.setText(chosen if FORMS[self.form][1] is None else chosen.rstrip("/") + "/")

    def _save(self) -> None:
        if not self.chosen():
            show_error(self, "Tick at least one panel for the handout")
            return
        if export_handout(self.window_, self.path_edit.text(), self.chosen(), self.form,
                          self.theme_box.currentData(), self.page_box.currentData()) is not None:
            self.accept()


def open_handout_dialog(window: ExportHost) -> HandoutDialog:
    """Show File ▸ Export handout…'s dialog (returned, for tests)."""
    dialog = HandoutDialog(window)
    dialog.open()
    return dialog
