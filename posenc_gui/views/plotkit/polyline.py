"""Curves that stroke only the samples the screen can tell apart.

A line plot samples about one point per pixel column; Qt strokes a pen wider
than one pixel segment by segment, and that stroking was the largest single
cost of a default-size step (the waveforms' bold curves: 0.3–1.2 ms each for
~450 segments). On screen, a plain line is drawn as one polyline through every
``s``-th sample, ``s`` the longest stride whose chords pass within
:data:`TOLERANCE_PX` of the samples they skip; exports (which set the
segmented-line mode to ``"off"``, see ``export/figures.py``) and curves with
gaps or fills draw every sample, as pyqtgraph does.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPolygonF, QTransform

from .canvas import paint_guard
from .pgcompat import finite_data_bounds, item_option, segmented_line_mode

#: Largest distance, in device pixels, of a sample from the polyline drawn for it on screen.
TOLERANCE_PX = 0.2


def polyline_indices(x_px: np.ndarray, y_px: np.ndarray, tolerance: float = TOLERANCE_PX) -> np.ndarray | None:
    """Indices of the samples a polyline must pass through to be within ``tolerance`` of all of them.

    Parameters
    ----------
    x_px, y_px : numpy.ndarray
        The samples in device pixels (in any order: the polyline joins them
        in the order given).
    tolerance : float
        Largest distance in pixels of a sample from the chord between the kept
        samples around it.

    Returns
    -------
    numpy.ndarray or None
        None if a sample is not finite (no polyline stands in for a gap).
        Else every ``s``-th index from 0, and the last. Where the second
        differences of the samples are at most ``M`` pixels long, a sample
        ``k`` steps after a kept one and ``s − k`` before the next is at
        most ``M·k·(s − k)/2 ≤ M·s²/8`` from the chord's point between
        them (the discrete maximum principle), so ``s = ⌊√(8·tolerance/M)⌋``.
        One pass over the samples, where halving the chords until they fit
        took a dozen NumPy calls a round (82 against 6 µs a curve).
    """
    count = len(x_px)
    if count < 3:
        return np.arange(count) if np.isfinite(x_px).all() and np.isfinite(y_px).all() else None
    # every sample enters a second difference, and a non-finite one makes it NaN, which max() passes on
    bend = float(np.hypot(np.diff(x_px, 2), np.diff(y_px, 2)).max())
    if not math.isfinite(bend):
        return None
    stride = count - 1 if bend == 0 else int(math.sqrt(8 * tolerance / bend))
    stride = max(1, min(count - 1, stride))
    kept = np.arange(0, count, stride)
    return kept if kept[-1] == count - 1 else np.append(kept, count - 1)


class ScreenCurve(pg.PlotCurveItem):
    """A :class:`pg.PlotCurveItem` that draws a plain line on screen as a polyline of the samples that show.

    Curves with a fill, a shadow pen, steps, a composition mode or a
    non-finite value, and any curve drawn for an export, are painted by
    pyqtgraph. Thin (1 px) lines are drawn here too: pyqtgraph's paint of one
    (its painter path and bookkeeping) took 0.11 ms, the polyline 0.03. The
    kept samples are found once per data and view transform. Finite data's
    bounds are a plain min and max (:func:`.pgcompat.finite_data_bounds`).
    """

    def __init__(self, *args, **kwargs) -> None:
        self._screen_polyline: tuple[tuple, QPolygonF | None] | None = None
        super().__init__(*args, **kwargs)

    def setData(self, *args, **kwargs) -> None:  # noqa: N802 (pyqtgraph API)
        self._screen_polyline = None
        super().setData(*args, **kwargs)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802 (pyqtgraph override)
        bounds = finite_data_bounds(self, ax, frac, orthoRange)
        return super().dataBounds(ax, frac, orthoRange) if bounds is None else bounds

    def screen_polyline(self, transform: QTransform) -> QPolygonF | None:
        """The polyline (in data coordinates) drawn through ``transform`` (the item's to device pixels, as
        a paint on screen has it), or None where pyqtgraph paints the curve."""
        key = (transform.m11(), transform.m12(), transform.m21(), transform.m22())
        if self._screen_polyline is not None and self._screen_polyline[0] == key:
            return self._screen_polyline[1]
        polyline = None
        x, y = self.getData()
        if x is not None and len(x) >= 2 and self._plain_line() and transform.m12() == 0 and transform.m21() == 0:
            kept = polyline_indices(transform.m11() * x, transform.m22() * y)  # offsets change no difference
            if kept is not None:
                polyline = pg.functions.arrayToQPolygonF(x[kept], y[kept])
        self._screen_polyline = (key, polyline)
        return polyline

    def _plain_line(self) -> bool:
        """True for one joined line of one pen: no fill, shadow, steps, composition mode or chosen gaps."""
        pen, connect = item_option(self, "pen"), item_option(self, "connect")
        return (isinstance(connect, str) and connect in ("all", "finite") and pen is not None and pen.style() != Qt.PenStyle.NoPen and item_option(self, "fillLevel") is None
                and item_option(self, "shadowPen") is None and not item_option(self, "stepMode")
                and item_option(self, "compositionMode") is None)

    @paint_guard
    def paint(self, painter, option, widget) -> None:
        # The painter maps the item to the device (no view look-up and transform composition: 10–15 µs a curve).
        polyline = self.screen_polyline(painter.transform()) if segmented_line_mode(self) == "auto" else None
        if polyline is None:
            super().paint(painter, option, widget)
            return
        painter.setRenderHint(painter.RenderHint.Antialiasing, bool(item_option(self, "antialias")))
        painter.setPen(item_option(self, "pen"))
        painter.drawPolyline(polyline)
