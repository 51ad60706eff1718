"""The canvas every figure is drawn on, and what the kit's items share about painting."""

from __future__ import annotations

import functools
import sys

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsView, QWidget

from .theme import current, register_canvas

#: How far a tick label may reach past either end of its axis, in pixels (horizontal, vertical):
#: half a label, so the label of a tick at the very end (0 on an axis from 0, −0.5 for matrix
#: columns) is drawn instead of dropped. Past the canvas it is still dropped.
END_LABEL_REACH_PX = (18, 8)


def new_layout_widget(parent=None) -> pg.GraphicsLayoutWidget:
    """A plot canvas on the current theme's background (white in the light and print themes).

    The canvas is registered with :mod:`.theme`, which restyles it when the theme changes.
    """
    widget = pg.GraphicsLayoutWidget(parent=parent)
    register_canvas(widget)
    widget.setBackground(current().background)
    # A plain white fill is cheaper than pyqtgraph's cached background pixmap,
    # and one rectangle around the changed items cheaper than their exact union.
    widget.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
    widget.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
    # Room on the right for the label of a tick at the right end of the last plot (see CompactAxisItem).
    widget.ci.setContentsMargins(6, 6, END_LABEL_REACH_PX[0], 6)
    return widget



def close_canvases(widget: QWidget) -> None:
    """Empty and close every canvas in ``widget`` (pyqtgraph's ``GraphicsView.close``) before ``widget`` is deleted.

    Deleted with their scenes full, the canvases of a window with every panel built crashed the process now and
    then on a busy machine (2 to 7 runs in 30): a scene torn down from C++ asked a pyqtgraph item for its geometry,
    the item's Python override raised, and Shiboken crashed printing the error. Emptied first, while every Python
    object is whole, nothing is left to ask (0 in 33).
    """
    for canvas in widget.findChildren(pg.GraphicsView):
        canvas.close()

def paint_guard(paint):
    """Report an exception raised while painting instead of letting it leave Qt's paint call.

    With PySide6 6.11, an exception that escapes the paint of a pyqtgraph
    item segfaults the process (pyqtgraph guards its curves for the same
    reason). The item draws nothing this time, and the error goes to
    ``sys.excepthook`` as any other would.
    """

    @functools.wraps(paint)
    def guarded(self, *args) -> None:
        try:
            paint(self, *args)
        except Exception:  # noqa: BLE001 - reported, not swallowed
            sys.excepthook(*sys.exc_info())

    return guarded


def prepare_for_paint(canvas: pg.GraphicsView) -> None:
    """Bring the canvas's view transforms and the text items that follow them up to date now.

    pyqtgraph does this when a paint starts (``GraphicsScene.prepareForPaint``):
    view boxes apply their new ranges, and text items turn and scale back to
    the screen. Changed in the middle of a paint, they mark the scene dirty
    again and Qt paints the plot a second time; called at the end of an
    update, the same changes join the first paint.
    """
    scene = canvas.scene()
    if scene is not None:
        scene.prepareForPaint()


def view_pixels(view_box: pg.ViewBox, fallback: int) -> tuple[int, int]:
    """The view's size in pixels, or ``fallback`` for a side not laid out yet.

    A view whose canvas is shown is laid out, and its own size is used
    however small: taking a tiny view for an unlaid one asked for
    ``fallback`` pixels, and a note that comes and goes with the sampling
    then resized the view across that line and back, for ever.
    """
    width, height = int(view_box.width()), int(view_box.height())
    canvas = view_box.getViewWidget()
    if canvas is not None and canvas.isVisible():
        return max(1, width), max(1, height)
    return (width if width > 8 else fallback), (height if height > 8 else fallback)
