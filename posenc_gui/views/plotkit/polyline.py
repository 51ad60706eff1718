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
from PySide6.QtGui import QPainterPath

from .canvas import paint_guard
from .pgcompat import finite_data_bounds, item_option, segmented_line_mode

#: Largest distance, in device pixels, of a sample from the polyline drawn for it on screen.
TOLERANCE_PX = 0.2
#: Every this many samples one is kept at first; the chords between them are then halved where needed.
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
        Chords are halved until they fit (fewer NumPy calls than splitting at
        the farthest sample; a few more samples kept).
    """
    count = len(x_px)
    keep = np.zeros(count, dtype=bool)
    keep[::FIRST_STRIDE] = True
    keep[-1] = True
    while True:
        kept = np.flatnonzero(keep)
        # each sample's chord: samples kept[i] … kept[i + 1] − 1 lie on chord i (the last sample on its own end)
        chord = np.repeat(np.arange(len(kept) - 1), np.diff(kept))
        start, end = kept[chord], kept[chord + 1]
        along = (x_px[:-1] - x_px[start]) / (x_px[end] - x_px[start])
        off = np.abs(y_px[start] + along * (y_px[end] - y_px[start]) - y_px[:-1])
        too_far = np.maximum.reduceat(off, kept[:-1]) > tolerance
        if not too_far.any():
            return kept
        # halve each chord with a sample too far from it: chords of adjacent samples are exact, so this ends
        keep[(kept[:-1][too_far] + kept[1:][too_far]) // 2] = True


class ScreenCurve(pg.PlotCurveItem):
    """A :class:`pg.PlotCurveItem` that draws a wide pen on screen as a polyline of the samples that show.

    Curves with a pen of at most one pixel, a fill or shadow pen, a
    non-finite value or x not increasing, and any curve drawn for an export, are painted by
    pyqtgraph. The kept samples are found once per data and view transform. Finite data's bounds are a
    plain min and max (:func:`.pgcompat.finite_data_bounds`).
    """

    def __init__(self, *args, **kwargs) -> None:
        self._screen_polyline: tuple[tuple, QPainterPath | None] | None = None
        super().__init__(*args, **kwargs)

    def setData(self, *args, **kwargs) -> None:  # noqa: N802 (pyqtgraph API)
        self._screen_polyline = None
        super().setData(*args, **kwargs)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802 (pyqtgraph override)
        bounds = finite_data_bounds(self, ax, frac, orthoRange)
        return super().dataBounds(ax, frac, orthoRange) if bounds is None else bounds

    def screen_polyline(self) -> QPainterPath | None:
        """The polyline (a path of straight segments) drawn on screen at the current transform, or None where
        pyqtgraph paints the curve."""
        view = self.getViewWidget()
        if view is None:
            return None
        transform = self.deviceTransform(view.viewportTransform())
        key = (transform.m11(), transform.m12(), transform.m21(), transform.m22(), transform.dx(), transform.dy())
        if self._screen_polyline is not None and self._screen_polyline[0] == key:
            return self._screen_polyline[1]
        path = None
        x, y = self.getData()
        pen = item_option(self, "pen")
        if (x is not None and len(x) >= 3 and pen.widthF() > 1 and item_option(self, "fillLevel") is None
                and item_option(self, "shadowPen") is None
                and transform.m12() == 0 and transform.m21() == 0 and transform.m11() != 0
                and np.isfinite(x).all() and np.isfinite(y).all() and (np.diff(x) > 0).all()):
            x_px = transform.m11() * x + transform.dx()
            y_px = transform.m22() * y + transform.dy()
            kept = polyline_indices(x_px, y_px)
            path = pg.arrayToQPath(x[kept], y[kept])
        self._screen_polyline = (key, path)
        return path

    @paint_guard
    def paint(self, painter, option, widget) -> None:
        path = self.screen_polyline() if segmented_line_mode(self) == "auto" else None
        if path is None:
            super().paint(painter, option, widget)
            return
        painter.setRenderHint(painter.RenderHint.Antialiasing, bool(item_option(self, "antialias")))
        painter.setPen(item_option(self, "pen"))
        painter.drawPath(path)
