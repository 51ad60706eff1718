"""The window's panels: built the first time they are asked for (:class:`LazyPanels`), the hidden ones ahead in
idle time (:class:`PanelPrebuilder`), and which one the user used last (:class:`PanelUseTracker`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QGraphicsView, QMainWindow, QWidget

from ..views.base import Panel

if TYPE_CHECKING:
    from ..mainwindow import MainWindow

#: Hidden docks get their panels built in idle time, starting this long after the window appears.
PREBUILD_DELAY_MS = 2000
#: ... one at a time, this far apart, and only when no view has asked for an
#: update (a parameter change, a zoom, a pan) for IDLE_MS and no mouse button is held.
PREBUILD_STEP_MS = 300
IDLE_MS = 1000


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

    def __init__(self, window: MainWindow) -> None:
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
