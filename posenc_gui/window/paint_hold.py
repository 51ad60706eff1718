"""One repaint for a new dock layout: the window paints once its panels' data for the new scheme is in.

A scheme switch into another family restores that family's docks; Qt then
painted each newly shown panel with what it last drew (another scheme's
data, or the same scheme's from the last visit), laid out, then painted it
again when the new data arrived: two or three repaints of every plot of
the layout per switch. :class:`PaintHold` holds the window's repaint
requests from the new layout until the compute service is idle (every
request the layout's panels made is delivered), at most
:data:`~posenc_gui.compute.BUSY_DELAY_MS` (after which the busy indicator
must show), then lets Qt paint everything that changed, once.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from ..compute import BUSY_DELAY_MS, ComputeService

#: The longest a new layout waits for its panels' data before it is painted anyway (ms).
HOLD_MS = BUSY_DELAY_MS


class PaintHold(QObject):
    """Holds ``window``'s repaints from :meth:`start` until ``compute`` is idle or :data:`HOLD_MS` passed.

    Qt asks a window to repaint what changed with one ``UpdateRequest``
    event at a time; while held, that event is kept back (the changed
    regions accumulate) and posted again at the end, so each widget that
    changed paints once, with its new data. The GUI thread is never blocked
    meanwhile: events, results and layouts run as usual.
    """

    def __init__(self, window: QWidget, compute: ComputeService) -> None:
        super().__init__(window)
        self._window = window
        self._compute = compute
        self._holding = False
        self._armed = False  # the event that started the hold is over: the idle service ends it
        self._held = False  # an update request was kept back
        self._limit = QTimer(self)
        self._limit.setSingleShot(True)
        self._limit.timeout.connect(self.release)
        compute.idle.connect(self._idle)
        window.installEventFilter(self)

    @property
    def holding(self) -> bool:
        """Whether repaints are held now."""
        return self._holding

    def start(self) -> None:
        """Hold repaints until the requests made now and in this event are delivered (or :data:`HOLD_MS`)."""
        self._holding, self._armed = True, False
        self._limit.start(HOLD_MS)
        # the panels ask for their data in this event (a layout's docks as they show, then each panel as it
        # hears of the new parameters; one that no longer applies cancels its requests meanwhile): the idle
        # service ends the hold from the next event on, and if none asked, there is nothing to wait for
        QTimer.singleShot(0, self, self._arm)

    def _arm(self) -> None:
        self._armed = True
        self._idle()

    def _idle(self) -> None:
        if self._armed and self._compute.is_idle():
            self.release()

    def release(self) -> None:
        """Let the window paint what changed (now, or in the next event: a result being delivered draws first)."""
        if not self._holding:
            return
        self._holding = False
        self._limit.stop()
        if self._held:
            self._held = False
            QCoreApplication.postEvent(self._window, QEvent(QEvent.Type.UpdateRequest))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if self._holding and watched is self._window and event.type() == QEvent.Type.UpdateRequest:
            self._held = True
            return True
        return False
