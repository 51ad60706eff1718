"""One repaint for a new dock layout: the window paints once its panels' data for the new scheme is in.

A scheme switch into another family restores that family's docks; Qt then
painted each newly shown panel with what it last drew (another scheme's
data, or the same scheme's from the last visit), laid out, then painted it
again when the new data arrived, and again after each pass of the plots'
layouts that the new data started: two to five repaints of every plot of
the layout per switch. :class:`PaintHold` holds the window's repaint
requests from a scheme change until the compute service is idle (every
request the panels made is delivered) and the layouts that started settle,
at most :data:`~posenc_gui.compute.BUSY_DELAY_MS` (after which the busy
indicator must show), then lets Qt paint everything that changed, once.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from ..compute import BUSY_DELAY_MS, ComputeService
from ..views.plotkit import lay_out_axes, prepare_for_paint

#: The longest a new layout waits for its panels' data before it is painted anyway (ms).
HOLD_MS = BUSY_DELAY_MS


class PaintHold(QObject):
    """Holds ``window``'s repaints from :meth:`start` until ``compute`` is idle or :data:`HOLD_MS` passed.

    Qt asks a window to repaint what changed with one ``UpdateRequest``
    event at a time; while held, that event is kept back (the changed
    regions accumulate) and posted again at the end, so each widget that
    changed paints once, with its new data. The GUI thread is never blocked
    meanwhile: events, results and layouts run as usual (an application
    event filter, only while holding, sees the layout requests).
    """

    def __init__(self, window: QWidget, compute: ComputeService) -> None:
        super().__init__(window)
        self._window = window
        self._compute = compute
        self._holding = False
        self._armed = False  # the event that started the hold is over: the idle service ends it
        self._held = False  # an update request was kept back
        self._laid_out = False  # a layout ran since the last look (the new data's layouts are not settled)
        self._prepared = False  # a look found everything settled: one more pass, then the release
        self._limit = QTimer(self)
        self._limit.setSingleShot(True)
        self._limit.timeout.connect(self.release)
        compute.idle.connect(self._settle)

    @property
    def holding(self) -> bool:
        """Whether repaints are held now."""
        return self._holding

    def start(self) -> None:
        """Hold repaints until the requests made now and in this event are delivered (or :data:`HOLD_MS`)."""
        if not self._holding:
            QCoreApplication.instance().installEventFilter(self)  # the window's repaints, every layout request
        self._holding, self._armed, self._prepared = True, False, False
        self._limit.start(HOLD_MS)
        # the panels ask for their data in this event (a layout's docks as they show, then each panel as it
        # hears of the new parameters; one that no longer applies cancels its requests meanwhile): the idle
        # service ends the hold from the next event on, and if none asked, there is nothing to wait for
        QTimer.singleShot(0, self, self._arm)

    def _arm(self) -> None:
        self._armed = True
        self._settle()

    def _settle(self) -> None:
        """Release once the service is idle, an event-loop pass ran no layout (each pass of a plot's layout
        posts the next one: painting between them painted the plot once per pass) and the shown plots' axes
        are laid out for their new labels (see :func:`.plotkit.lay_out_axes`)."""
        if not (self._holding and self._armed and self._compute.is_idle()):
            self._prepared = False
            return  # the service's idle signal looks again
        if self._laid_out or self._lay_out_axes():
            self._laid_out = self._prepared = False
            QTimer.singleShot(0, self, self._settle)
        elif not self._prepared:  # one more pass: the scenes post what the views' new ranges changed
            self._prepared = True
            QTimer.singleShot(0, self, self._settle)
        else:
            self.release()

    def _lay_out_axes(self) -> bool:
        """Do what the paint of each plot on screen would do first: apply its views' new ranges, lay out its
        vertical axes for their labels; True if an axis's width changed (its plot is laid out again). A scheme
        switch into ALiBi painted its bias and logits plots five times: once per axis that took a new width,
        once more after a paint whose start applied new ranges."""
        changed = False
        for panel in self._window.panels.built().values():
            if panel.on_screen():
                for canvas in panel.findChildren(pg.GraphicsView):
                    if canvas.isVisible():
                        prepare_for_paint(canvas)
                        changed |= lay_out_axes(canvas)
        return changed

    def release(self) -> None:
        """Let the window paint what changed (now, or in the next event: a result being delivered draws first)."""
        if not self._holding:
            return
        self._holding = False
        self._limit.stop()
        QCoreApplication.instance().removeEventFilter(self)
        if self._held:
            self._held = False
            QCoreApplication.postEvent(self._window, QEvent(QEvent.Type.UpdateRequest))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if self._holding:
            kind = event.type()
            if kind == QEvent.Type.UpdateRequest and watched is self._window:
                self._held = True
                return True
            if kind == QEvent.Type.LayoutRequest:
                self._laid_out = True
        return False
