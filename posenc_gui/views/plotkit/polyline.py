"""Curves that stroke only the samples the screen can tell apart.

A line plot samples about one point per pixel column; Qt strokes a pen wider
than one pixel segment by segment, and that stroking was the largest single
cost of a default-size step (the waveforms' bold curves: 0.3–1.2 ms each for
~450 segments). On screen, a smooth curve is drawn as one polyline through the
samples that a straight chord cannot stand in for within
:data:`TOLERANCE_PX`; exports (which set the segmented-line mode to ``"off"``,
see ``export/figures.py``) and curves with gaps or fills draw every sample, as
pyqtgraph does.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QPolygonF

from .canvas import paint_guard
from .pgcompat import segmented_line_mode

#: Largest distance, in device pixels, of a sample from the polyline drawn for it on screen.
TOLERANCE_PX = 0.2
#: Every this many samples one is kept at first; the chords between them are then refined.
FIRST_STRIDE = 16


def polyline_indices(x_px: np.ndarray, y_px: np.ndarray, tolerance: float = TOLERANCE_PX) -> np.ndarray:
    """Indices of the samples a polyline must pass through to be within ``tolerance`` of all of them.

    Parameters
    ----------
    x_px, y_px : numpy.ndarray
        The samples in device pixels, finite, ``x_px`` strictly increasing
        or decreasing (a line plot's samples, a view that may be mirrored), at
        least two.
    tolerance : float
        Largest vertical distance in pixels of a sample from the chord
        between the kept samples around it.

    Returns
    -------
    numpy.ndarray
        Increasing indices, the first and last sample included; every sample
        lies within ``tolerance`` of the chord of its two kept neighbours.
    """
    count = len(x_px)
    keep = np.zeros(count, dtype=bool)
    keep[::FIRST_STRIDE] = True
    keep[-1] = True
    positions = np.arange(count)
    while True:
        kept = np.flatnonzero(keep)
        chord = np.minimum(np.searchsorted(kept, positions, side="right") - 1, len(kept) - 2)
        start, end = kept[chord], kept[chord + 1]
        along = (x_px - x_px[start]) / (x_px[end] - x_px[start])
        off = np.abs(y_px[start] + along * (y_px[end] - y_px[start]) - y_px)
        # the sample farthest off each chord (Douglas and Peucker's split point), where it is too far
        by_chord = np.lexsort((-off, chord))
        worst = by_chord[np.r_[0, np.flatnonzero(np.diff(chord[by_chord])) + 1]]
        worst = worst[off[worst] > tolerance]
        if not worst.size:
            return kept
        keep[worst] = True  # a kept sample is on its chords: each pass keeps more, at most all


class ScreenCurve(pg.PlotCurveItem):
    """A :class:`pg.PlotCurveItem` that draws a wide pen on screen as a polyline of the samples that show.

    Curves with a pen of at most one pixel, a fill or shadow pen, a
    non-finite value or x not increasing, and any curve drawn for an export, are painted by
    pyqtgraph. The kept samples are found once per data and view transform.
    """

    def __init__(self, *args, **kwargs) -> None:
        self._screen_polyline: tuple[tuple, QPolygonF | None] | None = None
        super().__init__(*args, **kwargs)

    def setData(self, *args, **kwargs) -> None:  # noqa: N802 (pyqtgraph API)
        self._screen_polyline = None
        super().setData(*args, **kwargs)

    def screen_polyline(self) -> QPolygonF | None:
        """The polyline drawn on screen at the current transform, or None where pyqtgraph paints the curve."""
        view = self.getViewWidget()
        if view is None:
            return None
        transform = self.deviceTransform(view.viewportTransform())
        key = (transform.m11(), transform.m12(), transform.m21(), transform.m22(), transform.dx(), transform.dy())
        if self._screen_polyline is not None and self._screen_polyline[0] == key:
            return self._screen_polyline[1]
        polygon = None
        x, y = self.getData()
        pen = self.opts["pen"]
        if (x is not None and len(x) >= 3 and pen.widthF() > 1 and self.opts["fillLevel"] is None
                and self.opts["shadowPen"] is None
                and transform.m12() == 0 and transform.m21() == 0 and transform.m11() != 0
                and np.isfinite(x).all() and np.isfinite(y).all() and (np.diff(x) > 0).all()):
            x_px = transform.m11() * x + transform.dx()
            y_px = transform.m22() * y + transform.dy()
            kept = polyline_indices(x_px, y_px)
            polygon = QPolygonF([QPointF(float(a), float(b)) for a, b in zip(x[kept], y[kept])])
        self._screen_polyline = (key, polygon)
        return polygon

    @paint_guard
    def paint(self, painter, option, widget) -> None:
        polygon = self.screen_polyline() if segmented_line_mode(self) == "auto" else None
        if polygon is None:
            super().paint(painter, option, widget)
            return
        painter.setRenderHint(painter.RenderHint.Antialiasing, bool(self.opts["antialias"]))
        painter.setPen(self.opts["pen"])
        painter.drawPolyline(polygon)
