"""File ▸ Models on this computer: the models of the Hugging Face cache, Ollama and LM Studio, one click to open.

The submenu is filled each time it is about to show, from
:func:`~posenc_gui.model.files.locations.find_models` run on a thread of its own
(bounded, no network), so neither start-up nor the menu waits for a disk:
the menu says it is looking until the listing arrives. Each model is an
entry "name — size kind" under its source; choosing one opens it as File ▸
Open model… does (:func:`~posenc_gui.views.model_open.open_chosen_path`).
A source with no folder here, or what could not be listed, is a disabled
line.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QWidget

from ..state import AppState
from .model_open import open_chosen_path

if TYPE_CHECKING:
    from ..model.files.locations import SourceScan

#: Characters of a problem line the menu shows (the rest is elided).
SHOWN_PROBLEM = 140
#: What the menu shows while it looks.
LOOKING = "Looking for models…"


class ModelsMenu(QObject):
    """Fills ``menu`` with the models found on this computer each time it is about to show.

    ``environ`` (default ``os.environ``, read at each scan) gives the folders' variables.
    """

    #: (the scan's number, its list of SourceScan), emitted from the scanning thread.
    scanned = Signal(int, object)

    def __init__(self, menu: QMenu, state: AppState, parent: QWidget | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        super().__init__(menu)
        self.menu, self.state, self.parent_widget = menu, state, parent
        self.environ = environ
        self._number = 0
        self._scanning = False
        self.scanned.connect(self._show)
        menu.aboutToShow.connect(self.refresh)
        menu.addAction(LOOKING).setEnabled(False)

    def refresh(self) -> None:
        """Look again, on a thread (a scan still running is waited for, not doubled)."""
        if self._scanning:
            return
        self._scanning = True
        self._number += 1
        if not any(action.isEnabled() for action in self.menu.actions()):
            self.menu.clear()
            self.menu.addAction(LOOKING).setEnabled(False)
        threading.Thread(target=self._scan, args=(self._number,), name="posenc-model-scan", daemon=True).start()

    def _scan(self, number: int) -> None:
        from ..model.files.locations import SourceScan, find_models  # the readers load with the menu's first scan

        try:
            scans = find_models(self.environ)
        except Exception as error:  # a bug here must not leave the menu saying it looks for ever
            scans = [SourceScan("Models", problems=[f"the models could not be listed: {error}"])]
        try:
            self.scanned.emit(number, scans)
        except RuntimeError:  # the window closed meanwhile
            pass

    def _show(self, number: int, scans: list[SourceScan]) -> None:
        self._scanning = False
        if number != self._number:
            return
        self.menu.clear()
        for scan in scans:
            self.menu.addSection(scan.source)
            if scan.folder is None:
                self.menu.addAction(f"{scan.source}: no models folder on this computer").setEnabled(False)
            elif not scan.models:
                self.menu.addAction(f"No models in {scan.folder}").setEnabled(False)
            for model in scan.models:
                action = self.menu.addAction(model.label)
                action.setToolTip(str(model.path))
                action.setStatusTip(f"Open {model.name} ({model.path})")
                action.triggered.connect(lambda _=False, path=str(model.path): self.open(path))
            for problem in scan.notes:
                shown = problem if len(problem) <= SHOWN_PROBLEM else problem[:SHOWN_PROBLEM - 1] + "…"
                self.menu.addAction(shown).setEnabled(False)
        self.menu.setToolTipsVisible(True)

    def open(self, path: str) -> str | None:
        """Open the model at ``path`` as File ▸ Open model… does; None, or the reason nothing changed."""
        return open_chosen_path(self.state, path, self.parent_widget)


def install_models_menu(file_menu: QMenu, state: AppState, parent: QWidget | None = None) -> ModelsMenu:
    """Add File ▸ Models on this computer to ``file_menu``; the ModelsMenu that fills it."""
    menu = file_menu.addMenu("Models on this &computer")
    menu.setStatusTip("The models of the Hugging Face cache, Ollama and LM Studio on this computer "
                      "(a config.json alone opens as its RoPE set-up)")
    return ModelsMenu(menu, state, parent)
