"""When a panel is ready to export: it computed its current data and shows it in a layout that no longer
changes (:func:`until_drawn`), waited for in the event loop, never for a fixed time.

The window's export dialog and ``posenc-gui export`` both wait with it before they render a figure.
"""

from __future__ import annotations

import time
from typing import Any

#: How long to wait for a panel's computation before giving up.
COMPUTE_TIMEOUT_S = 120.0


class StillComputing(RuntimeError):
    """A panel that had not drawn its data after :data:`COMPUTE_TIMEOUT_S` (a hang)."""


#: Passes of the event loop in a row that start no new work before a panel counts as settled.
QUIET_PASSES = 2
#: Paints after which a layout that still changes is exported as it is.
MAX_PAINTS = 5


def settle(panel: Any, deadline: float | None = None) -> None:
    """Process events until ``panel`` computed and shows its current data at its current size.

    Layout and resize events run; a re-sampling waiting for its debounce
    runs at once; while a request computes in a worker the loop sleeps in
    Qt's event dispatcher until the result arrives. It returns after
    :data:`QUIET_PASSES` passes in a row that found nothing to do (a pass
    can post layout events for the next). ``deadline`` (``time.monotonic()``,
    default :data:`COMPUTE_TIMEOUT_S` from now) only bounds a hang.

    Raises
    ------
    StillComputing
        When the panel is still computing at the deadline.
    """
    from PySide6.QtCore import QCoreApplication

    deadline = time.monotonic() + COMPUTE_TIMEOUT_S if deadline is None else deadline
    quiet = 0
    while quiet < QUIET_PASSES:
        QCoreApplication.processEvents()
        panel.state.flush()
        if panel.shows_current_data():
            quiet += 1
            continue
        quiet = 0
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise StillComputing(f"the {panel.title} panel did not finish computing in {COMPUTE_TIMEOUT_S:g} s")
        panel.ensure_current()
        if panel.run_debounced() or panel.compute.is_idle():
            continue
        panel.compute.wait_idle(remaining)


def _layout(panel: Any) -> tuple:
    """The geometry of the panel's widgets and of its plots' layout items (axes, view boxes, titles)."""
    from PySide6.QtWidgets import QGraphicsView, QGraphicsWidget, QWidget

    widgets = tuple(child.geometry().getRect() for child in panel.findChildren(QWidget))
    items = tuple(item.geometry().getRect() for view in panel.findChildren(QGraphicsView) if view.scene()
                  for item in view.scene().items() if isinstance(item, QGraphicsWidget))
    return widgets, items


def until_drawn(panel: Any) -> None:
    """Process events and paint until ``panel`` shows its current data in a layout that no longer changes.

    pyqtgraph fits an axis to its tick labels while painting it, which
    can move the plot and re-sample it: the panel is painted (at once, not
    after the window system's next frame) and settled again until a paint
    leaves the layout as it was. :data:`COMPUTE_TIMEOUT_S` only bounds a hang.

    Raises
    ------
    StillComputing
        When the panel is still computing after :data:`COMPUTE_TIMEOUT_S`.
    """
    deadline = time.monotonic() + COMPUTE_TIMEOUT_S
    settle(panel, deadline)
    for _ in range(MAX_PAINTS):
        before = _layout(panel)
        panel.repaint()
        settle(panel, deadline)
        if _layout(panel) == before:
            return
