"""Waiting in tests: on a condition, never for a fixed time.

A wait for a fixed time passes on an idle machine and fails on a loaded one
(the waited-for timer fires, or the thread starts, a little later). Every
wait here ends as soon as its condition holds; the timeout only bounds a
hang, so it is generous.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QGraphicsView, QGraphicsWidget, QWidget

#: Bound of every wait of the tests, in seconds: a hang detector, not a speed test. The slowest
#: waits (a subprocess that starts the app and exports, a scan of a million positions) take tens of
#: seconds on a busy 2-core machine; this allows four times that. The ``qtbot`` fixture's waits and
#: ``ComputeService.wait_idle()`` default to it in the tests (conftest.py).
TIMEOUT_S = 180
TIMEOUT_MS = TIMEOUT_S * 1000
#: Rounds of events in a row that change nothing before :func:`finish_pending` calls a widget settled.
QUIET_ROUNDS = 2


def timers_waiting(widget) -> list[QTimer]:
    """``widget``'s single-shot timers that have not fired yet (debounced re-samples, delayed texts)."""
    return [timer for timer in widget.findChildren(QTimer) if timer.isSingleShot() and timer.isActive()]


def geometry(widget) -> list[tuple]:
    """Where ``widget``'s children and the layout items of its plots are."""
    places = [child.geometry().getRect() for child in widget.findChildren(QWidget)]
    for view in widget.findChildren(QGraphicsView):
        if view.scene() is not None:
            places += [item.geometry().getRect() for item in view.scene().items() if isinstance(item, QGraphicsWidget)]
    return places


def finish_pending(qtbot, widget) -> None:
    """Run what ``widget`` has pending until nothing of it is left waiting.

    That is its posted events (a layout posts the next step of itself: a
    word-wrapped label's new height, then its parent's layout), a paint
    (pyqtgraph applies new view ranges when a paint starts) and its
    single-shot timers (re-samples debounced after a resize or a zoom,
    delayed texts). Done after :data:`QUIET_ROUNDS` rounds in a row of events
    and a paint that move nothing, with no timer waiting before or after.
    The paint is done at once (``repaint``) rather than waited for: the
    platform schedules repaints on a timer of its own.
    """
    quiet = 0

    def settled() -> bool:
        nonlocal quiet
        before, waiting = geometry(widget), timers_waiting(widget)
        QApplication.processEvents()
        if widget.isVisible():
            widget.repaint()
            QApplication.processEvents()
        still = not waiting and not timers_waiting(widget) and geometry(widget) == before
        quiet = quiet + 1 if still else 0
        return quiet >= QUIET_ROUNDS

    qtbot.waitUntil(settled, timeout=TIMEOUT_MS)
