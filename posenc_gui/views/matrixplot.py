"""A matrix shown as an image: row 0 at the top, a colormap and a colorbar.

Every matrix view of the app (heatmap, similarity, T_k, …) uses this so the
orientation and the colour scale are the same everywhere.
"""

from __future__ import annotations

import functools
import math
import re
import sys

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (QColor, QFont, QFontMetrics, QFontMetricsF, QImage, QPainter, QPen, QPicture, QPolygonF,
                           QStaticText, QTransform)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsSimpleTextItem, QGraphicsView, QSizePolicy

DIVERGING = "RdBu"  # ColorBrewer's blue–white–red, see get_colormap
SEQUENTIAL = "viridis"
# The colour rule of every figure (see :func:`colour_scale`): a signed quantity gets DIVERGING
# centred at 0 with symmetric limits, an unsigned one SEQUENTIAL from 0.
#: ColorBrewer RdBu (11 classes, reversed: blue < 0 < red), colour-blind safe.
#: pyqtgraph ships it only through matplotlib; its own CET-D1A diverging map
#: has a pink-grey centre (#eee3e8) that makes exact zeros look tinted.
_RDBU = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
         "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f")


def get_colormap(name: str) -> pg.ColorMap:
    """A colormap by name: the app's ``"RdBu"`` or any of pyqtgraph's."""
    if name == "RdBu":
        return pg.ColorMap(np.linspace(0.0, 1.0, len(_RDBU)), list(_RDBU), name="RdBu")
    return pg.colormap.get(name)


FOREGROUND = "#222222"
#: Colour-blind-safe qualitative palette (Okabe–Ito), cycled over series.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442")
BLUE, GREEN, PINK, ORANGE = PALETTE[0], PALETTE[2], PALETTE[3], PALETTE[4]  # ORANGE: Okabe–Ito vermillion
#: Line plots draw a dot per position while there are at most this many.
MAX_DOTS = 300
#: Opacity of grid lines.
GRID_ALPHA = 0.25


def new_layout_widget(parent=None) -> pg.GraphicsLayoutWidget:
    """A white-background plot canvas, as figures for slides and papers want."""
    widget = pg.GraphicsLayoutWidget(parent=parent)
    widget.setBackground("w")
    # pyqtgraph caches the background as a pixmap and blits it under every
    # repaint, a copy Qt splits across its GUI thread pool and waits for;
    # filling with the plain white brush is cheaper (1.2–2.7 ms less per
    # default-size step for the three core panels, alternating A/B runs).
    widget.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
    # A step changes most of a plot: the image or curves, their axis, the
    # title. pyqtgraph repaints the exact union of the changed items, a
    # region of many rectangles that Qt clips every fill and blit to; one
    # rectangle around them is 2–3 ms cheaper per default-size step (A/B as
    # above; full-viewport repaints gained less, Qt's "smart" mode nothing).
    widget.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
    # Room on the right for the label of a tick at the right end of the last plot (see CompactAxisItem).
    widget.ci.setContentsMargins(6, 6, END_LABEL_REACH_PX[0], 6)
    return widget


def _paint_guard(paint):
    """Report an exception raised while painting instead of letting it leave Qt's paint call.

    With PySide6 6.11, an exception that escapes the paint of a pyqtgraph
    item segfaults the process (seen with an axis whose tick labels raised;
    pyqtgraph guards its curves for the same reason). The item draws nothing
    this time, and the error goes to ``sys.excepthook`` as any other would.
    """

    @functools.wraps(paint)
    def guarded(self, *args) -> None:
        try:
            paint(self, *args)
        except Exception:  # noqa: BLE001 - reported, not swallowed
            sys.excepthook(*sys.exc_info())

    return guarded


class MatrixImageItem(pg.ImageItem):
    """A row-major :class:`pg.ImageItem` that renders straight to premultiplied ARGB32.

    pyqtgraph renders a colormapped image as an 8-bit indexed QImage, which
    Qt's raster engine converts on every paint: drawing a 128 × 512 heatmap
    scaled to the plot took 2 ms, against 0.3 ms for the premultiplied
    format it draws natively. For the case every matrix view uses (2-D float
    values, scalar levels, an opaque lookup table of at most 256 colours)
    the render maps values to colours in a few NumPy passes; it gives the
    same pixels as pyqtgraph's path followed by a conversion, in a quarter
    of the time (1.1 → 0.3 ms for the default heatmap and similarity
    matrix). Anything else goes through pyqtgraph and is converted once.
    """

    paint = _paint_guard(pg.ImageItem.paint)

    def __init__(self, **kwargs) -> None:
        super().__init__(axisOrder="row-major", **kwargs)
        self._pixels: np.ndarray | None = None  # the buffer self.qimage points into
        self._palette: tuple[np.ndarray, np.ndarray | None] | None = None  # (lut, its ARGB32 words)

    def render(self) -> None:
        palette = self._opaque_palette()
        image = self.image
        if palette is None or image is None or image.ndim != 2 or image.dtype.kind != "f" or not image.size:
            self._pixels = None
            super().render()
            native = QImage.Format.Format_ARGB32_Premultiplied
            if self.qimage is not None and self.qimage.format() != native:
                self.qimage = self.qimage.convertToFormat(native)
            return
        low, high = (float(level) for level in self.levels)
        colours = len(palette)
        # pyqtgraph's rescaleData: (value − low) · colours / span, clipped, truncated.
        scaled = np.subtract(image, low)
        scaled *= colours / ((high - low) or 1.0)
        np.clip(scaled, 0, colours - 1, out=scaled)
        missing = np.isnan(scaled) if np.isnan(scaled.min()) else None
        if missing is not None:
            scaled[missing] = 0
        pixels = palette[scaled.astype(np.uint8)]
        if missing is not None:
            pixels[missing] = 0  # transparent, as pyqtgraph shows NaN
        height, width = pixels.shape
        self._pixels = pixels
        self.qimage = QImage(pixels.data, width, height, 4 * width, QImage.Format.Format_ARGB32_Premultiplied)
        self._renderRequired = False
        self._unrenderable = False

    def _opaque_palette(self) -> np.ndarray | None:
        """The lookup table as ARGB32 words, or None when the fast render does not apply."""
        lut = self.lut
        if self.autoDownsample or self.levels is None or np.ndim(self.levels) != 1 or not isinstance(lut, np.ndarray):
            return None
        cached = self._palette
        if cached is not None and cached[0] is lut:
            return cached[1]
        palette = None
        if (lut.dtype == np.uint8 and lut.ndim == 2 and lut.shape[1] in (3, 4) and 0 < lut.shape[0] <= 256
                and not (lut.shape[1] == 4 and (lut[:, 3] != 255).any())):
            channels = lut.astype(np.uint32)
            palette = (0xFF000000 | (channels[:, 0] << 16) | (channels[:, 1] << 8) | channels[:, 2]).astype(np.uint32)
        self._palette = (lut, palette)
        return palette


class CurveItem(pg.PlotCurveItem):
    """A :class:`pg.PlotCurveItem` that is cheap to update and to stroke.

    - Data bounds cost a plain min and max. Qt asks for a curve's bounding
      rectangle after every ``setData``, and pyqtgraph answers with a
      NaN-tolerant scan under a warnings filter (55 µs per axis, 0.7 ms per
      step for the default waveforms and similarity profile).
    - On screen, the polyline skips samples that lie within
      :attr:`TOLERANCE_PX` of the chord between the kept ones. Qt strokes a
      2 px line point by point, slowly: a smooth 461-point curve took 0.3 to
      0.9 ms, and the same curve through every 4th sample looks identical
      and takes 0.1. The data (``getData``, exports) keep every sample, and
      figure exports draw them all.
    - A plain line (no fill, shadow, steps or gaps) is drawn as one polyline
      straight from the samples, without pyqtgraph's painter path and its
      bookkeeping (0.15 ms per curve per update).

    NaN or infinite data, and every other style, take pyqtgraph's path.
    """

    #: Largest distance, in device pixels, between the drawn and the full polyline.
    TOLERANCE_PX = 0.2

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, skipFiniteCheck=True, **kwargs)
        # What pyqtgraph still draws (non-finite data, other styles) is one
        # painter path, not separate segments.
        self.setSegmentedLineMode("off")
        self._polyline: QPolygonF | None = None
        self._polyline_source: tuple | None = None

    @property
    def drawn_points(self) -> int:
        """How many samples the last paint stroked through."""
        if self._polyline is not None:
            return self._polyline.size()
        return self.path.elementCount() if self.path is not None else 0

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802 (pyqtgraph override)
        data = self.xData if ax == 0 else self.yData
        if (frac < 1.0 or orthoRange is not None or data is None or not len(data)
                or self.opts["shadowPen"] is not None):
            return super().dataBounds(ax, frac, orthoRange)
        cache = self._boundsCache[ax]
        if cache is not None and cache[0] == (frac, orthoRange):
            return cache[1]
        low, high = float(data.min()), float(data.max())
        if not (math.isfinite(low) and math.isfinite(high)):
            return super().dataBounds(ax, frac, orthoRange)
        pen = self.opts["pen"]
        if not pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen:
            low, high = low - pen.widthF() * 0.7072, high + pen.widthF() * 0.7072
        self._boundsCache[ax] = [(frac, orthoRange), (low, high)]
        return low, high

    @_paint_guard
    def paint(self, painter, option, widget) -> None:
        transform = painter.transform()
        scale = None
        if self._exportOpts is False and transform.m12() == 0 and transform.m21() == 0:
            scale = (abs(transform.m11()), abs(transform.m22()))
        x, y = self.xData, self.yData
        source = self._polyline_source
        if source is None or source[0] is not x or source[1] is not y or source[2] != scale:
            self._polyline = self._build_polyline(x, y, scale)
            self._polyline_source = (x, y, scale)
        if self._polyline is None or not self._plain_line():
            super().paint(painter, option, widget)
            return
        if self._exportOpts is not False:
            antialias = self._exportOpts.get("antialias", True)
        else:
            antialias = self.opts["antialias"]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
        painter.setPen(self.opts["pen"])
        painter.drawPolyline(self._polyline)

    def _build_polyline(self, x, y, scale: tuple[float, float] | None) -> QPolygonF | None:
        """The samples to stroke as one polyline, or None when pyqtgraph must draw the curve."""
        if (x is None or y is None or len(x) < 2 or self.opts["pen"] is None or not self._plain_line()
                or not (np.isfinite(x).all() and np.isfinite(y).all())):
            return None
        kept = self._kept_samples(x, y, scale)
        return pg.functions.arrayToQPolygonF(x, y) if kept is None else pg.functions.arrayToQPolygonF(x[kept], y[kept])

    def _plain_line(self) -> bool:
        opts = self.opts
        connect = opts["connect"]
        return (isinstance(connect, str) and connect == "all" and opts["fillLevel"] is None
                and opts["shadowPen"] is None and not opts["stepMode"] and opts["compositionMode"] is None)

    def _kept_samples(self, x: np.ndarray, y: np.ndarray, scale: tuple[float, float] | None) -> np.ndarray | None:
        """Indices of the samples to stroke through, or None for all of them.

        Between two kept samples ``s`` steps apart, a polyline whose second
        differences are at most ``M`` pixels strays at most ``M·s²/8`` from
        the chord, so every ``s = √(8·tolerance / M)``-th sample is kept
        (and the last).
        """
        if scale is None or len(x) < 8:
            return None
        bend = math.hypot(float(np.abs(np.diff(x, 2)).max()) * scale[0],
                          float(np.abs(np.diff(y, 2)).max()) * scale[1])
        if not math.isfinite(bend):
            return None
        step = len(x) - 1 if bend == 0 else int(math.sqrt(8 * self.TOLERANCE_PX / bend))
        step = max(1, min(len(x) - 1, step))
        if step == 1:
            return None
        kept = np.arange(0, len(x), step)
        return kept if kept[-1] == len(x) - 1 else np.append(kept, len(x) - 1)


def style_axis(axis: pg.AxisItem, cached: bool = True) -> None:
    """Dark ticks and labels, drawn from a pixmap cache unless ``cached`` is False.

    Replaying an axis's tick labels (and grid lines) costs about a
    millisecond per axis per repaint, and every data update repaints the
    plot area the axes cover; cached, a repaint is a blit. Export switches
    caching off so SVG and PDF still get vector axes. An axis that draws no
    grid over data that change is redrawn only after its range changes, and
    then a cache is pure overhead (``cached=False``: 0.7 ms less per d_model
    step for the heatmap's and similarity matrix's axes).
    """
    axis.setPen(FOREGROUND)
    axis.setTextPen(FOREGROUND)
    if cached:
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    cache_text(axis.label)  # the axis title: a child item, outside the axis's own cache
    _set_title_only_when_changed(axis)
    # Two tick levels, not three: the third adds only tiny unlabelled ticks,
    # and measuring its labels doubled the time to re-lay out an axis after
    # its range changed (2.4 → 1.1 ms for the heatmap's dimension axis).
    axis.setStyle(maxTickLevel=1, maxTextLevel=1)


def _set_title_only_when_changed(axis: pg.AxisItem) -> None:
    """Make ``axis`` give its title item new HTML only when the HTML changes.

    pyqtgraph re-sets the title (``AxisItem._updateLabel``) on every change
    of the axis's range, for its automatic SI prefix, even when the text is
    the same: the rich-text item lays its document out again and its pixmap
    cache is rendered again, six times per update in the spectrum panel and
    twice per step for the similarity panel's colour bar. The rest of what
    ``_updateLabel`` does (size, picture, repaint) still happens every time.
    """
    shown: list[str | None] = [None]

    def update_label() -> None:
        html = axis.labelString()
        if html != shown[0]:
            shown[0] = html
            axis.label.setHtml(html)
        axis._adjustSize()
        axis.picture = None
        axis.update()

    axis._updateLabel = update_label


def compact_tick_strings(values, spacing: float, extent: float = 0.0) -> list[str]:
    """Tick labels that stay readable for a million positions: ``200k``, ``1.5M``, ``1,000,010``.

    Parameters
    ----------
    values : sequence of float
        The ticks.
    spacing : float
        The step between them; it sets the decimals.
    extent : float
        The largest |value| on the axis: every level of ticks of one axis
        takes the same unit ("100k, 0.2M, 300k" mixed them).

    Values under 10,000 (or steps under 1) are written as pyqtgraph writes
    them; large round values in k or M with as few decimals as show the step
    exactly (0.25M, not 0.2M); fine steps among large values as exact
    integers with separators.
    """
    if not len(values):
        return []
    largest = max(max(abs(v) for v in values), abs(extent))
    if largest < 10_000 or spacing < 1:
        places = max(0, math.ceil(-math.log10(spacing))) if spacing > 0 else 0
        return ["%g" % v if abs(v) < .001 or abs(v) >= 10_000 else f"{v:.{places}f}" for v in values]
    if spacing < 1_000:  # zoomed in on large positions: exact integers
        return [f"{round(v):,}" for v in values]
    unit, suffix = (1e6, "M") if largest >= 1e6 else (1e3, "k")
    relative = spacing / unit
    decimals = next((d for d in range(7) if abs(round(relative, d) - relative) <= 1e-9 * relative), 6)
    strings = []
    for v in values:
        text = f"{v / unit:.{decimals}f}"
        if decimals:
            text = text.rstrip("0").rstrip(".")
        strings.append("0" if text in ("0", "-0") else text + suffix)
    return strings


#: How far a tick label may reach past either end of its axis, in pixels (horizontal, vertical):
#: half a label, so the label of a tick at the very end (0 on an axis from 0, −0.5 for matrix
#: columns) is drawn instead of dropped. Past the canvas it is still dropped.
END_LABEL_REACH_PX = (18, 8)
#: Every linear axis labels at least this many ticks where its length holds them.
MIN_LABELS = 3


class CompactAxisItem(pg.AxisItem):
    """An axis whose tick labels stay readable for a million positions.

    pyqtgraph labels 1,000,000 as ``1e+06`` and always draws its major
    labels, even when a narrow plot makes them overlap (the similarity
    matrix at 1,048,576 positions printed ``200000400000600000``). Here
    labels are :func:`compact_tick_strings`, and a horizontal axis widens
    its major step until the labels fit side by side. pyqtgraph's automatic
    SI prefix is off: it labelled a one-position axis −400 … 400 "(x0.001)",
    and a spread of 1e-12 "spread (x1e-12)" with ticks 0.2 … 1, read as the
    values themselves.

    pyqtgraph drops a label that reaches past the ends of its axis: the 0
    of an axis starting at 0 (or at −0.5, matrix columns) was never
    labelled. A label may reach :data:`END_LABEL_REACH_PX` past them here,
    as long as it stays on the canvas, and the step is made finer when
    fewer than :data:`MIN_LABELS` ticks would fall on the axis.
    """

    #: Free space kept between two tick labels, in pixels.
    LABEL_GAP_PX = 12
    #: Height a vertical axis gives each label (the text and the space around it), in pixels.
    LABEL_HEIGHT_PX = 18

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)
        self._label_room: QRectF | None = None  # see boundingRect; found again after a change of geometry
        self.geometryChanged.connect(self._forget_label_room)

    def _forget_label_room(self) -> None:
        self._label_room = None

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        """pyqtgraph's rectangle, reaching :data:`END_LABEL_REACH_PX` past both ends of the axis (on the canvas)."""
        room = self._label_room
        if room is None:
            own = self.mapRectFromParent(self.geometry())
            if self.orientation in ("top", "bottom"):
                reach = END_LABEL_REACH_PX[0]
                room = own.adjusted(-reach, 0, reach, 0)
            else:
                reach = END_LABEL_REACH_PX[1]
                room = own.adjusted(0, -reach, 0, reach)
            scene = self.scene()
            views = scene.views() if scene is not None else ()
            if views:  # the canvas's visible area (the scene's own rectangle would ask every item, this one too)
                view = views[0]
                room &= self.mapRectFromScene(view.mapToScene(view.viewport().rect()).boundingRect())
                self._label_room = room
        return super().boundingRect() | room

    @_paint_guard
    def paint(self, p, opt, widget) -> None:
        """Draw from the layout kept since the last change (pyqtgraph's ``picture`` is None after one).

        pyqtgraph records the axis into a QPicture and plays it back: on
        every change of range the recording costs as much as drawing, and
        each playback lays every label out again. The layout is kept instead,
        and the labels are drawn as static text, whose glyphs are laid out once.
        """
        drawing = self.picture
        if drawing is None:
            drawing = self.picture = _AxisDrawing.of(self)
        drawing.play(p)

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph override)
        if self.logMode or not values:
            return super().tickStrings(values, scale, spacing)
        extent = max(abs(end) for end in self.range) * scale
        return compact_tick_strings([v * scale for v in values], spacing * scale, extent)

    #: Ticks only at whole numbers (rows and columns of a matrix are indices).
    integer_ticks = False

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph override)
        """pyqtgraph's steps; a horizontal axis widens the major one until its labels fit side by side.

        Where that (or pyqtgraph's own step) leaves fewer than
        :data:`MIN_LABELS` ticks on the axis, the step is made finer again
        as long as the labels still fit.
        """
        levels = super().tickSpacing(minVal, maxVal, size)
        if self.integer_ticks and levels:
            levels = [level for level in levels if level[0] >= 1] or [(1.0, 0.0)]
        if not levels or size <= 0:
            return levels
        major = levels[0][0]
        span = abs(maxVal - minVal)
        if self.orientation in ("bottom", "top"):
            metrics = QFontMetrics(self.style["tickFont"] or QFont())

            def label_size(step: float, gap: float = self.LABEL_GAP_PX) -> float:
                labels = self.tickStrings([minVal, maxVal, (minVal + maxVal) / 2], self.scale, step)
                return max(metrics.horizontalAdvance(text) for text in labels) + gap
        else:
            def label_size(step: float, gap: float = 0.0) -> float:
                return self.LABEL_HEIGHT_PX

        for _ in range(12):  # 1 → 2 → 5 → 10 …: a few steps always suffice
            if self.orientation not in ("bottom", "top") or span / major * label_size(major) <= size:
                break
            major = _next_round_step(major)
        smallest = 1.0 if self.integer_ticks else 0.0
        while _ticks_within(minVal, maxVal, major) < MIN_LABELS:  # labels closer together, rather than too few
            finer = _previous_round_step(major)
            if finer < smallest or span / finer * label_size(finer, self.LABEL_GAP_PX / 2) > size:
                break
            major = finer
        if major == levels[0][0]:
            return levels
        return [(major, 0)] + [level for level in levels[1:] if level[0] < major]

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph override)
        """pyqtgraph's tick values, with its de-duplication done without ``np.isclose`` (80 µs a call)."""
        if self.logMode:
            return super().tickValues(minVal, maxVal, size)
        minVal, maxVal = sorted((minVal, maxVal))
        minVal, maxVal = minVal * self.scale, maxVal * self.scale
        ticks = []
        seen = np.empty(0)
        for spacing, offset in self.tickSpacing(minVal, maxVal, size):
            start = math.ceil((minVal - offset) / spacing) * spacing + offset
            count = int((maxVal - start) / spacing) + 1
            values = (np.arange(count) * spacing + start) / self.scale
            if seen.size:  # drop ticks a higher level already has (within 1 % of a step)
                values = values[~(np.abs(values[:, None] - seen) <= spacing / self.scale * 0.01).any(axis=1)]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        return ticks

    def generateDrawSpecs(self, p):  # noqa: N802 (pyqtgraph override)
        """pyqtgraph's layout of ticks and labels, for the plain axes every plot here uses.

        pyqtgraph's version re-measures the axis's bounding rectangle for each
        label and builds a Point per coordinate: 1 ms for the heatmap's
        dimension axis, which is laid out again on every d_model step. This
        one computes the same specifications, grid lines included (a test
        compares them), in about half the time, for log axes and ticks set
        with ``setTicks`` too; other styles (no values shown, axes stopped at
        a tick, a fixed tick alpha) still use pyqtgraph's. One difference:
        the label of a tick near an end, which pyqtgraph drops when it
        reaches past the axis's room, is slid inside it here, unless it
        would then touch another label.
        """
        style = self.style
        if (not style["showValues"]
                or tuple(style["stopAxisAtTick"]) != (False, False) or style["tickAlpha"] is not None):
            return super().generateDrawSpecs(p)
        if style["tickFont"] is not None:
            p.setFont(style["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        grid = self.grid
        view = self.linkedView()
        # Grid lines run from the far side of the linked view to the axis.
        tick_bounds = bounds if view is None or grid is False else view.mapRectToItem(self, view.boundingRect())
        orientation = self.orientation
        if orientation == "left":
            span = (bounds.topRight() + QPointF(-1, -1), bounds.bottomRight() + QPointF(-1, 1))
            tick_start, tick_stop, tick_dir, axis = tick_bounds.right(), bounds.right(), -1, 0
        elif orientation == "right":
            span = (bounds.topLeft() + QPointF(1, -1), bounds.bottomLeft() + QPointF(1, 1))
            tick_start, tick_stop, tick_dir, axis = tick_bounds.left(), bounds.left(), 1, 0
        elif orientation == "top":
            span = (bounds.bottomLeft() + QPointF(-1, -1), bounds.bottomRight() + QPointF(1, -1))
            tick_start, tick_stop, tick_dir, axis = tick_bounds.bottom(), bounds.bottom(), -1, 1
        else:
            span = (bounds.topLeft() + QPointF(-1, 1), bounds.topRight() + QPointF(1, 1))
            tick_start, tick_stop, tick_dir, axis = tick_bounds.top(), bounds.top(), 1, 1
        start, stop = self.mapToDevice(span[0]), self.mapToDevice(span[1])
        if start is None or stop is None:
            return None
        length = math.hypot(stop.x() - start.x(), stop.y() - start.y())
        if length == 0:
            return None
        low, high = self.range
        if self._tickLevels is None:
            levels, fixed_strings = self.tickValues(low, high, length), None
        else:  # set with setTicks: [[(value, text), ...] per level]
            levels = [(None, [value for value, _ in level]) for level in self._tickLevels]
            fixed_strings = [[text for _, text in level] for level in self._tickLevels]
        difference = high - low
        if difference == 0:
            scale, offset = 1, 0
        elif axis == 0:
            scale = -bounds.height() / difference
            offset = low * scale - bounds.height()
        else:
            scale = bounds.width() / difference
            offset = low * scale
        ends = (low * scale - offset, high * scale - offset)
        lowest, highest = min(ends), max(ends)

        tick_specs, positions = [], []
        for level, (_, values) in enumerate(levels):
            tick_length = style["tickLength"] / (level * 0.5 + 1.0)
            alpha = 255 / (level + 1)
            if grid is not False:  # pyqtgraph fades dense grid lines
                alpha *= grid / 255.0 * min(max(0.05 * length / (len(values) + 1), 0.0), 1.0)
            pen = self.tickPen()
            if pen.brush().style() == Qt.BrushStyle.SolidPattern:
                pen = QPen(pen)
                colour = QColor(pen.color())
                colour.setAlpha(int(alpha))
                pen.setColor(colour)
            level_positions = []
            end = tick_stop + tick_length * tick_dir if grid is False else tick_stop
            for value in values:
                x = value * scale - offset
                if x < lowest or x > highest:
                    level_positions.append(None)
                    continue
                level_positions.append(x)
                if axis == 0:
                    tick_specs.append((pen, QPointF(tick_start, x), QPointF(end, x)))
                else:
                    tick_specs.append((pen, QPointF(x, tick_start), QPointF(x, end)))
            positions.append(level_positions)
        axis_spec = (self.pen(), span[0], span[1])

        text_specs, text_rects = [], []
        moved: list[int] = []  # the end labels moved inside the axis's room
        last_size_across = 0
        own_bounds = self.boundingRect()
        gap = max(0, style["tickLength"]) + style["tickTextOffset"][axis]
        font_key = (p.font().key(), p.device().logicalDpiY())
        flags = _LABEL_FLAGS[orientation]
        for level in range(min(len(levels), style["maxTextLevel"] + 1)):
            spacing, values = levels[level]
            if fixed_strings is None:
                strings = self.tickStrings(values, self.autoSIPrefixScale * self.scale, spacing)
            else:
                strings = fixed_strings[level]
            if not strings:
                continue
            rects = []
            for j, text in enumerate(strings):
                if positions[level][j] is None:
                    rects.append(None)
                    continue
                rect = self._text_rect(p, font_key, text)
                rects.append(rect)
                text_rects.append(rect)
            along = [r.height() if axis == 0 else r.width() for r in text_rects]
            across = [r.width() if axis == 0 else r.height() for r in text_rects]
            size_along, size_across = (sum(along), max(across)) if text_rects else (0, 0)
            if level > 0 and any(len(text_specs) >= count and size_along / length >= limit
                                 for count, limit in style["textFillLimits"]):
                break  # crowded: no labels for this level
            last_size_across = size_across
            for j, text in enumerate(strings):
                x, rect = positions[level][j], rects[j]
                if x is None:
                    continue
                width, height = rect.width(), rect.height()
                if orientation == "left":
                    placed = QRectF(tick_stop - gap - width, x - height / 2, width, height)
                elif orientation == "right":
                    placed = QRectF(tick_stop + gap, x - height / 2, width, height)
                elif orientation == "top":
                    placed = QRectF(x - width / 2, tick_stop - gap - height, width, height)
                else:
                    placed = QRectF(x - width / 2, tick_stop + gap, width, height)
                if own_bounds & placed != placed:  # would spill past the axis: moved inside, if it fits there
                    placed = _moved_inside(placed, own_bounds, axis)
                    if placed is None:
                        continue
                    moved.append(len(text_specs))
                text_specs.append((placed, flags, text))
        self._updateMaxTextSize(last_size_across)
        return axis_spec, tick_specs, _without_overlaps(text_specs, moved)

    def _text_rect(self, p, font_key: tuple[str, int], text: str) -> QRectF:
        """A label's box as pyqtgraph measures it (80 % of the painter's height), remembered per font."""

        def measure() -> QRectF:
            rect = p.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
            rect.setHeight(rect.height() * 0.8)
            return rect

        return QRectF(remembered(_TEXT_RECTS, (font_key, text), measure))


#: Least space between an end label moved inside its axis's room and the next label, in pixels.
MOVED_LABEL_GAP_PX = 4


def _moved_inside(placed: QRectF, bounds: QRectF, axis: int) -> QRectF | None:
    """``placed`` slid along the axis (``axis`` 1: horizontal, 0: vertical) to lie in ``bounds``; None if it cannot."""
    if axis == 1:
        if placed.width() > bounds.width() or placed.top() < bounds.top() or placed.bottom() > bounds.bottom():
            return None
        left = min(max(placed.left(), bounds.left()), bounds.right() - placed.width())
        return QRectF(left, placed.top(), placed.width(), placed.height())
    if placed.height() > bounds.height() or placed.left() < bounds.left() or placed.right() > bounds.right():
        return None
    top = min(max(placed.top(), bounds.top()), bounds.bottom() - placed.height())
    return QRectF(placed.left(), top, placed.width(), placed.height())


def _without_overlaps(text_specs: list, moved: list[int]) -> list:
    """``text_specs`` without the moved end labels that would now touch another label."""
    if not moved:
        return text_specs
    kept_moved = set(moved)
    others = [spec[0] for index, spec in enumerate(text_specs) if index not in kept_moved]
    gap = MOVED_LABEL_GAP_PX
    for index in moved:
        room = text_specs[index][0].adjusted(-gap, -gap / 2, gap, gap / 2)
        if any(room.intersects(rect) for rect in others):
            kept_moved.discard(index)
        else:
            others.append(text_specs[index][0])
    return [spec for index, spec in enumerate(text_specs) if index not in moved or index in kept_moved]


def remembered(cache: dict, key, make):
    """``cache[key]``, made by ``make()`` the first time; a cache past 2048 entries starts afresh.

    Text layouts depend only on the font and the text, and the same few
    labels return on every step, so a plain bounded dict is enough (the
    painter that measures them cannot be part of an ``lru_cache`` key).
    """
    value = cache.get(key)
    if value is None:
        if len(cache) > 2048:
            cache.clear()
        value = cache[key] = make()
    return value


_TEXT_RECTS: dict[tuple[tuple[str, int], str], QRectF] = {}
_ALIGN = Qt.AlignmentFlag
#: How pyqtgraph aligns tick labels on each side of a plot.
_LABEL_FLAGS = {
    "left": _ALIGN.AlignRight | _ALIGN.AlignVCenter | Qt.TextFlag.TextDontClip,
    "right": _ALIGN.AlignLeft | _ALIGN.AlignVCenter | Qt.TextFlag.TextDontClip,
    "top": _ALIGN.AlignHCenter | _ALIGN.AlignBottom | Qt.TextFlag.TextDontClip,
    "bottom": _ALIGN.AlignHCenter | _ALIGN.AlignTop | Qt.TextFlag.TextDontClip,
}


class _AxisDrawing:
    """An axis's lines and labels, laid out once and drawn as often as it is repainted."""

    def __init__(self, lines, label_pen: QPen, font: QFont, clip: QRectF, labels) -> None:
        self.lines = lines  # [(pen, [QLineF, ...]), ...] in drawing order
        self.label_pen = label_pen
        self.font = font
        self.clip = clip
        self.labels = labels  # [(top-left QPointF, QStaticText), ...]

    @classmethod
    def of(cls, axis: pg.AxisItem) -> _AxisDrawing:
        """Lay ``axis`` out as pyqtgraph does: its specifications, measured on a QPicture's painter."""
        recording = QPicture()  # measured on, never drawn on
        measure = QPainter(recording)
        try:
            if axis.style["tickFont"] is not None:
                measure.setFont(axis.style["tickFont"])
            font = QFont(measure.font())  # what pyqtgraph's recording holds
            specs = axis.generateDrawSpecs(measure)
            if specs is None:
                return cls([], QPen(), font, QRectF(), [])
            axis_spec, tick_specs, text_specs = specs
            lines: list = []
            for pen, start, end in [axis_spec, *tick_specs]:
                if not lines or lines[-1][0] != pen:
                    lines.append((pen, []))
                lines[-1][1].append(QLineF(start, end))
            font_key = (measure.font().key(), measure.device().logicalDpiY())
            labels = [static_text_at(measure, font_key, rect, int(flags), text) for rect, flags, text in text_specs]
            clip = QRectF(axis.boundingRect().toAlignedRect())
        finally:
            measure.end()
        return cls(lines, axis.textPen(), font, clip, labels)

    def play(self, p: QPainter) -> None:
        """What pyqtgraph's ``AxisItem.drawPicture`` draws, onto ``p``."""
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        for pen, lines in self.lines:
            p.setPen(pen)
            p.drawLines(lines)
        if not self.labels:
            return
        p.setFont(self.font)
        p.setPen(self.label_pen)
        p.setClipRect(self.clip, Qt.ClipOperation.IntersectClip)
        for top_left, text in self.labels:
            p.drawStaticText(top_left, text)


def static_text_at(p: QPainter, font_key, rect: QRectF, flags: int, text: str) -> tuple[QPointF, QStaticText]:
    """Where ``p.drawText(rect, flags, text)`` puts the text's top-left corner, and the text laid out once.

    ``p.drawStaticText`` at that corner draws the text in a fraction of
    drawText's time: with the axes' alignments, to the pixel (a test compares
    them); centred in both directions, to a fraction of a pixel. The layout
    is remembered per ``font_key`` (the painter's font and resolution), text,
    flags and box size.
    """

    def lay_out() -> tuple[QPointF, QStaticText]:
        placed = p.boundingRect(QRectF(0, 0, rect.width(), rect.height()), flags, text)
        static = QStaticText(text)
        static.setTextFormat(Qt.TextFormat.PlainText)
        static.prepare(QTransform(), p.font())
        metrics = QFontMetricsF(p.font())
        # drawText aligns the text's advance, not the wider box boundingRect reports (glyphs
        # are placed at fractions of a pixel: the box's x was off in 1 of 9 placements).
        x = placed.x()
        if flags & Qt.AlignmentFlag.AlignRight:
            x = rect.width() - metrics.horizontalAdvance(text)
        elif flags & Qt.AlignmentFlag.AlignHCenter:
            x = (rect.width() - metrics.horizontalAdvance(text)) / 2
        # qt_format_text places a single line math.ceil(leading) below the text's box.
        return QPointF(x, placed.y() + math.ceil(metrics.leading())), static

    offset, static = remembered(_STATIC_LABELS, (font_key, text, flags, rect.width(), rect.height()), lay_out)
    return rect.topLeft() + offset, static


_STATIC_LABELS: dict = {}


def _ticks_within(low: float, high: float, step: float) -> int:
    """How many multiples of ``step`` lie in ``[low, high]``."""
    low, high = sorted((low, high))
    return max(0, math.floor(high / step + 1e-9) - math.ceil(low / step - 1e-9) + 1)


def _previous_round_step(step: float) -> float:
    """The step in 1, 2, 5, 10, 20, 50, … below ``step``."""
    exponent = math.floor(math.log10(step))
    mantissa = step / 10.0**exponent
    for factor in (5, 2, 1):
        if factor < mantissa * (1 - 1e-9):
            return factor * 10.0**exponent
    return 5 * 10.0 ** (exponent - 1)


def _next_round_step(step: float) -> float:
    """The next step in 1, 2, 5, 10, 20, 50, … above ``step``."""
    exponent = math.floor(math.log10(step))
    for factor in (2, 5, 10):
        candidate = factor * 10.0**exponent
        if candidate > step * (1 + 1e-9):
            return candidate
    return 20 * 10.0**exponent


def style_plot(plot: pg.PlotItem, cached_axes: bool = True) -> None:
    """Dark axes (with :class:`CompactAxisItem` labels) and title on the white canvas.

    Call it right after creating the plot: it replaces the left and bottom
    axes. ``cached_axes``: see :func:`style_axis`.
    """
    plot.setAxisItems({"left": CompactAxisItem("left"), "bottom": CompactAxisItem("bottom")})
    for name in ("left", "bottom", "right", "top"):
        style_axis(plot.getAxis(name), cached_axes)
    plot.titleLabel.setAttr("color", FOREGROUND)
    cache_text(plot.titleLabel.item)
    _let_title_narrow(plot.titleLabel)


#: Narrowest a title lets its plot become (see :func:`_let_title_narrow`).
MIN_TITLE_WIDTH = 60


def _let_title_narrow(label: pg.LabelItem) -> None:
    """Keep a title's text width as its preferred width, not its minimum.

    pyqtgraph makes the text's width the title's minimum, after every text
    change and resize: a dock narrower than its plots' titles then held a
    canvas wider than its view, clipped at the right edge with the end of
    the plot (the similarity dock at 1,048,576 positions in a 1,600 px
    window). Now the title has its full width wherever there is room; where
    there is not, its centred text runs over the empty corners beside it.
    """
    update_min = label.updateMin

    def update_min_narrow() -> None:
        update_min()
        label.setMinimumWidth(min(label.minimumWidth(), MIN_TITLE_WIDTH))

    label.updateMin = update_min_narrow
    update_min_narrow()


def cache_text(item: QGraphicsItem) -> None:
    """Draw a text item from a pixmap of its device pixels, rendered again only when it changes.

    Qt draws a rich-text item (axis and plot titles, legend entries) by
    walking its document's layout on every repaint that touches it, and a
    data update repaints most of a plot: about 0.2 ms per title, a fifth to
    a half of a plot's repaint when nothing else changed. Setting new text
    updates the item, which renders the pixmap again. Export switches the
    cache off, so SVG and PDF keep the text as text.
    """
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


class LegendBelow(pg.LegendItem):
    """A legend in the canvas's cell under its plot, where it covers no data.

    Drawn over the view box, the waveforms' legend hid the top right of the
    curves (sinusoids fill every corner), the magnitude's the start of its
    dashed line, and the relative panel's the ends of rising profiles. Here
    the entries fill as many columns as the plot's width holds: one row on
    a wide figure, a few in a narrow dock.

    The entries' text is drawn from a pixmap cache (:func:`cache_text`); the
    samples (line and symbol) are drawn directly: they show the current pen
    of their curve, which changes without telling the legend.
    """

    def __init__(self, plot: pg.PlotItem, **kwargs) -> None:
        super().__init__(offset=None, frame=False, **kwargs)
        self._plot = plot
        self.layout.setContentsMargins(0, 2, 0, 0)
        # No wider than its entries, and no minimum of its own: a legend could
        # otherwise hold the plot's column wider than the canvas (the plot then
        # clipped at the right, as titles were), and the plot could never
        # narrow to tell it to take fewer columns.
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(1)
        plot.geometryChanged.connect(self.fit_columns)

    def addItem(self, item, name) -> None:  # noqa: N802 (pyqtgraph override)
        super().addItem(item, name)
        _, label = self.items[-1]
        cache_text(label.item)

    #: Space between one entry's text and the next entry's sample, in pixels
    #: (the layout's own spacing, 5 px, ran the entries of a row together).
    ENTRY_GAP_PX = 18

    def fit_columns(self) -> None:
        """As many columns as the plot's width holds (entries fill the rows left to right)."""
        if not self.items:
            return
        spacing = self.layout.horizontalSpacing()
        widths = [sample.preferredWidth() + spacing + label.preferredWidth() for sample, label in self.items]

        def needed(columns: int) -> float:
            return (sum(max(widths[column::columns]) for column in range(columns))
                    + self.ENTRY_GAP_PX * (columns - 1))

        available = self._plot.width()
        self.setColumnCount(next((columns for columns in range(len(widths), 1, -1) if needed(columns) <= available), 1))

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph override)
        # The canvas's layout places this legend: ask it for room instead of
        # setting a geometry of our own, as a floating legend does.
        self.fit_columns()
        for text_column in range(1, self.layout.columnCount() - 1, 2):  # each entry is a sample and a text
            self.layout.setColumnSpacing(text_column, self.ENTRY_GAP_PX)
        self.updateGeometry()

    def setGeometry(self, rect: QRectF) -> None:  # noqa: N802 (Qt override)
        # Centred in its cell, the legend would start between two pixels, and its
        # entries' cached text pixmaps (cache_text) would be drawn half a pixel off.
        super().setGeometry(QRectF(round(rect.x()), round(rect.y()), rect.width(), rect.height()))


def add_legend_below(canvas: pg.GraphicsLayoutWidget, plot: pg.PlotItem, **kwargs) -> LegendBelow:
    """A :class:`LegendBelow` for ``plot``, centred in the canvas's cell under the plot's (which must be free).

    ``kwargs`` go to pyqtgraph's ``LegendItem``.
    """
    legend = LegendBelow(plot, **kwargs)
    cells = canvas.ci.items[plot]
    row = max(r for r, _ in cells) + 1
    col = min(c for _, c in cells)
    canvas.ci.addItem(legend, row=row, col=col, colspan=max(c for _, c in cells) - col + 1)
    canvas.ci.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    plot.legend = legend
    return legend


def _same_value(a, b) -> bool:
    """Whether two style arguments are the same: the same object, or equal plain values (not arrays)."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, (np.ndarray, list, tuple, dict)):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class Markers(pg.ScatterPlotItem):
    """A :class:`pg.ScatterPlotItem` that moves its markers in place when only their positions change.

    pyqtgraph's ``setData`` rebuilds every marker: a new record array, the
    style and a symbol-atlas lookup per marker in Python loops (about 1 ms
    per update for 128 markers under a profiler, once or twice per update in
    most analysis panels). A parameter step gives the same number of
    markers with the same style at new places; then only the positions are
    written, and everything pyqtgraph derives from them (bounds, the
    picture) is invalidated as its ``setData`` does. Any other call is
    pyqtgraph's.
    """

    def __init__(self, *args, **kwargs) -> None:
        self._style_args: dict | None = None
        super().__init__(*args, **kwargs)

    def setData(self, *args, **kwargs) -> None:  # noqa: N802 (pyqtgraph override)
        if len(args) == 2:  # x and y, as pyqtgraph reads two unnamed arguments
            kwargs = {**kwargs, "x": args[0], "y": args[1]}
            args = ()
        if not self._moved(args, kwargs):
            super().setData(*args, **kwargs)
            self._style_args = None if args or "x" not in kwargs or "y" not in kwargs else \
                {key: value for key, value in kwargs.items() if key not in ("x", "y")}

    def _moved(self, args: tuple, kwargs: dict) -> bool:
        """Write new positions into the markers if that is all that changes; whether it was."""
        style = self._style_args
        if args or style is None or "x" not in kwargs or "y" not in kwargs:
            return False
        new_style = {key: value for key, value in kwargs.items() if key not in ("x", "y")}
        if new_style.keys() != style.keys() or not all(_same_value(new_style[k], style[k]) for k in style):
            return False
        x = np.asarray(kwargs["x"], dtype=np.float64)
        y = np.asarray(kwargs["y"], dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape or x.size != len(self.data) or x.size == 0:
            return False
        self.data["x"] = x
        self.data["y"] = y
        self.data["item"][...] = None  # point objects handed out before hold the old positions
        self.prepareGeometryChange()
        self.informViewBoundsChanged()
        self.bounds = [None, None]
        self.invalidate()
        self.sigPlotChanged.emit(self)
        return True


class DataItem(pg.PlotDataItem):
    """A :class:`pg.PlotDataItem` that re-plots after a change of the y range only when that changes the drawing.

    pyqtgraph re-plots a data item (its curve and its markers) on every
    change of the view's y range, in case its dynamic range limit must now
    cut points far outside the view. That limit cuts only data over a
    million view heights tall; the analysis panels fit their y range to new
    data on every update, so each item was plotted twice per update (a
    millisecond or more each with markers). Here the re-plot is skipped when
    the limit cuts nothing, either before or after the change: the same
    points would be drawn. Its markers are :class:`Markers`.
    """

    _display_cut = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        stock = self.scatter  # made by PlotDataItem's constructor, which has no hook for the class
        if stock.scene() is not None:
            stock.scene().removeItem(stock)
        stock.setParentItem(None)
        self.scatter = Markers()
        self.scatter.setParentItem(self)
        self.scatter.sigClicked.connect(self.scatterClicked)
        self.scatter.sigHovered.connect(self.sigPointsHovered)
        if self._dataset is not None:
            self.updateItems(styleUpdate=True)

    def updateItems(self, styleUpdate: bool = True) -> None:  # noqa: N802 (pyqtgraph override)
        super().updateItems(styleUpdate)
        view = self.getViewBox()
        self._display_cut = view is None or self._range_limit_cuts(view.viewRect())

    def viewRangeChanged(self, vb=None, ranges=None, changed=None) -> None:  # noqa: N802 (pyqtgraph override)
        view = self.getViewBox()
        x_matters = self.opts["clipToView"] or self.opts["autoDownsample"]
        if (changed is not None and changed[1] and not (changed[0] and x_matters) and view is not None
                and not self._display_cut and not self._range_limit_cuts(view.viewRect())):
            if changed[0]:
                self.setProperty("xViewRangeWasChanged", True)
            return
        super().viewRangeChanged(vb, ranges, changed)

    def _range_limit_cuts(self, view_rect: QRectF) -> bool:
        """Whether pyqtgraph's dynamic range limit cuts this item's data in a view of ``view_rect``.

        The condition of ``PlotDataItem._getDisplayDataset`` (pyqtgraph 0.14).
        """
        limit = self.opts["dynamicRangeLimit"]
        mapped = self._datasetMapped
        data = None if limit is None or mapped is None else mapped.dataRect()
        if data is None:
            return False
        height = view_rect.height()
        return bool(height > 0 and not data.bottom() < view_rect.top() and not data.top() > view_rect.bottom()
                    and data.height() > 2 * self.opts["dynamicRangeHyst"] * limit * height)


class LineItem(CurveItem):
    """A plain line (no markers) in a plot whose axes may be logarithmic.

    What ``plot.plot()`` makes, a :class:`pg.PlotDataItem`, runs its
    display pipeline on every ``setData`` (log mapping, clipping and
    downsampling checks, a marker item updated even when it draws none)
    and strokes its curve through a painter path: about 0.5 ms per line
    per update under a profiler, eight times per step for the addition
    panel. A line needs only the log mapping, done here, and
    :class:`CurveItem`'s cheaper stroke. Non-finite values after the
    mapping (zero or negative data on a log axis) leave gaps, as
    pyqtgraph's item does.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._log_mode = (False, False)
        self._original: tuple[np.ndarray, np.ndarray] | tuple[None, None] = (None, None)

    def setLogMode(self, x_mode: bool, y_mode: bool) -> None:  # noqa: N802 (pyqtgraph's item protocol)
        """Map the data to log10 on the axes that are logarithmic (``PlotItem`` calls this)."""
        if (bool(x_mode), bool(y_mode)) != self._log_mode:
            self._log_mode = (bool(x_mode), bool(y_mode))
            self._show_mapped()

    def setData(self, *args, **kwargs) -> None:  # noqa: N802 (pyqtgraph's name)
        """Show the line through ``x, y`` (data coordinates, before any log mapping).

        Style keywords are :class:`pg.PlotCurveItem`'s; without ``x`` and
        ``y`` (pyqtgraph's constructor passes its keywords here) only the
        style changes.
        """
        if len(args) == 2:
            kwargs["x"], kwargs["y"] = args
        elif args:
            raise TypeError("LineItem.setData takes x and y")
        x, y = kwargs.pop("x", None), kwargs.pop("y", None)
        if x is None and y is None:
            super().setData(**kwargs)
            return
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError(f"x and y must be 1-D arrays of one length, got shapes {x.shape} and {y.shape}")
        old_x, old_y = self._original
        if (not kwargs and old_x is not None and np.array_equal(x, old_x, equal_nan=True)
                and np.array_equal(y, old_y, equal_nan=True)):
            # The same line: nothing to lay out or repaint. Analysis panels set every line on each
            # update, and a d_model step leaves many unchanged (the Addition dock's four logit terms).
            return
        self._original = (x, y)
        self._show_mapped(**kwargs)

    def getOriginalDataset(self) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:  # noqa: N802
        """The data as given to :meth:`setData` (pyqtgraph's ``PlotDataItem`` name)."""
        return self._original

    def _show_mapped(self, **style) -> None:
        x, y = self._original
        if x is None:
            return
        with np.errstate(divide="ignore", invalid="ignore"):
            if self._log_mode[0]:
                x = np.log10(x)
            if self._log_mode[1]:
                y = np.log10(y)
        finite = bool(np.isfinite(x).all() and np.isfinite(y).all())
        super().setData(x=x, y=y, connect="all" if finite else "finite", **style)


def add_line(plot: pg.PlotItem, pen, name: str | None = None, antialias: bool = False) -> LineItem:
    """Add an empty :class:`LineItem` drawn with ``pen`` to ``plot`` (listed in its legend under ``name``)."""
    item = LineItem(pen=pen, name=name, antialias=antialias)
    plot.addItem(item)
    return item


def add_data_item(plot: pg.PlotItem, *args, **kwargs) -> DataItem:
    """``plot.plot(*args, **kwargs)``, with a :class:`DataItem`."""
    item = DataItem(*args, **kwargs)
    plot.addItem(item)
    return item


def prepare_for_paint(canvas: pg.GraphicsView) -> None:
    """Bring the canvas's view transforms and the text items that follow them up to date now.

    pyqtgraph does this when a paint starts: its view boxes apply their new
    ranges, and text items (the labels of lines such as "N = 128") turn and
    scale back to the screen, moving their own transforms. Changed in the
    middle of a paint, they mark the scene dirty again, and Qt repaints the
    plot a second time at once (3–4 ms per update for the spectrum). Called
    at the end of an update, the same changes join the first paint.
    """
    scene = canvas.scene()
    if scene is not None:
        scene.prepareForPaint()


def show_grid(plot: pg.PlotItem) -> None:
    """Light grid lines, under the data.

    pyqtgraph draws a plot's grid with its axes, and stacks the axes above
    the view box: the lines crossed the curves and the legend's text. The
    view box (transparent, and clipping what it holds to the plot area) goes
    above the axes instead, so curves and the opaque legend cover the grid.
    """
    plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
    plot.getViewBox().setZValue(plot.getAxis("left").zValue() + 1)


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


TITLE_POINTS = 10.0
_TEXT_COLOUR = QColor(FOREGROUND)
_MARKUP = re.compile(r"[<&]")


def set_title(plot: pg.PlotItem, title: str) -> None:
    """Set a plot's title, in place when the new text fits the title row.

    ``PlotItem.setTitle`` re-lays out the whole plot (and, through the
    scene, the canvas) on every call; titles that carry a parameter change
    on every slider step, so a title that still fits its row only swaps its
    text and re-centres it.
    """
    label = plot.titleLabel
    if label.text == title and label.isVisible():
        return
    if not (label.isVisible() and label.text is not None and replace_label_text(label, title, TITLE_POINTS)):
        plot.setTitle(title, size=f"{TITLE_POINTS:g}pt")


def add_canvas_title(canvas: pg.GraphicsLayoutWidget, columns: int = 1) -> pg.LabelItem:
    """A title across the top row of ``canvas`` (its plots go in the rows below), for figures of several plots.

    Set its text with :func:`set_canvas_title`.
    """
    label = canvas.ci.addLabel("", row=0, col=0, colspan=columns, color=FOREGROUND, size=f"{TITLE_POINTS:g}pt")
    cache_text(label.item)
    _let_title_narrow(label)
    return label


def set_canvas_title(label: pg.LabelItem, title: str) -> None:
    """Show ``title`` in a label made by :func:`add_canvas_title`, in place when it fits (as :func:`set_title`)."""
    if label.text == title:
        return
    if not (label.text and replace_label_text(label, title, TITLE_POINTS)):
        label.setText(title, color=FOREGROUND, size=f"{TITLE_POINTS:g}pt")


def replace_label_text(label: pg.LabelItem, text: str, points: float) -> bool:
    """Show new plain text in a laid-out label, in place, if it fits the label's current box.

    Returns False (and shows the label's own text item again, unchanged)
    when the text has markup or is wider than the box: then the caller sets
    it the ordinary way, which re-lays out. In place, the text goes to a
    :class:`QGraphicsSimpleTextItem` over the label: no layout pass and no
    rich-text document (0.09 → 0.03 ms per label, and cheaper to paint;
    eight labels change on every default step).
    """
    if _MARKUP.search(text):
        return False
    plain = _plain_text_item(label, points)
    plain.setText(text)
    bounds, box = plain.boundingRect(), label.rect()
    if bounds.width() > box.width():
        plain.hide()
        label.item.show()
        return False
    if label.item.isVisible():
        label.item.hide()
        plain.show()
    _place_plain_text(label)
    label.text = text
    return True


def _place_plain_text(label: pg.LabelItem) -> None:
    """Put the label's plain text where its rich text would be, in the label's current box."""
    plain = label._plain_text
    bounds, box = plain.boundingRect(), label.rect()
    if label.opts.get("justify") == "left":  # where the rich text starts, inside its document margin
        left = box.left() + label.item.document().documentMargin()
    else:
        left = box.center().x() - bounds.width() / 2
    plain.setPos(left, box.center().y() - bounds.height() / 2)


def label_plain_text(label: pg.LabelItem) -> str:
    """The text a label shows, whichever of its two text items shows it."""
    plain = getattr(label, "_plain_text", None)
    return plain.text() if plain is not None and plain.isVisible() else label.item.toPlainText()


def _plain_text_item(label: pg.LabelItem, points: float) -> QGraphicsSimpleTextItem:
    """The plain text item drawn over ``label``, made on first use.

    The label's own ``setText`` (pyqtgraph's ``setTitle``, a legend
    relabelling) hands the text back to the label's rich-text item.
    """
    plain = getattr(label, "_plain_text", None)
    if plain is None:
        plain = QGraphicsSimpleTextItem(label)
        font = QFont()
        font.setPointSizeF(points)
        plain.setFont(font)
        plain.setBrush(_TEXT_COLOUR)
        plain.hide()
        label._plain_text = plain
        # A resized plot (a dock dragged wider, an export at another width) moves the box.
        label.geometryChanged.connect(lambda: plain.isVisible() and _place_plain_text(label))
        set_rich_text = label.setText

        def set_text(text, **kwargs):
            plain.hide()
            label.item.show()
            set_rich_text(text, **kwargs)

        label.setText = set_text
    return plain


def set_ticks(axis: pg.AxisItem, ticks: list | None) -> None:
    """``axis.setTicks(ticks)``, unless the axis has these ticks already.

    Setting ticks, even the same ones, lays the axis out again at the next
    paint (about a millisecond); the analysis panels set theirs on every
    update. pyqtgraph keeps them in ``_tickLevels`` and has no getter.
    """
    if axis._tickLevels != ticks:
        axis.setTicks(ticks)


def set_axis_label(axis: pg.AxisItem, text: str) -> None:
    """Set an axis title only when it changes (same reason as :func:`set_title`), centred along the axis.

    pyqtgraph centres the title only when the axis is resized: a title of
    another length stayed where the old one started, off centre.
    """
    if axis.labelText != text:
        axis.setLabel(text, color=FOREGROUND)
        axis.resizeEvent()


def nice_bounds(low: float, high: float) -> tuple[float, float]:
    """``[low, high]`` widened to multiples of a round step (a tenth of the span's decade).

    Axis and colour-scale ranges snap to these, so a small change of the
    data (another base, d_model ± 2) keeps the same ticks: pyqtgraph then
    reuses the axis instead of laying out its labels again on every update.
    """
    span = high - low
    if not np.isfinite(span) or span <= 0:
        magnitude = max(abs(low), abs(high)) or 1.0  # all zeros: a unit range, not one of 1e-300
        return low - 0.5 * magnitude, high + 0.5 * magnitude
    step = 10.0 ** np.floor(np.log10(span)) / 10
    # %.12g drops the last-bit noise of n·step (17 · 0.05 = 0.8500000000000001)
    return float(f"{np.floor(low / step) * step:.12g}"), float(f"{np.ceil(high / step) * step:.12g}")


#: Log-axis ranges snap outwards to multiples of this many decades (see :func:`snap_log_span`).
LOG_SPAN_STEP = 0.25


def snap_log_span(low: float, high: float) -> tuple[float, float]:
    """A log10 axis range ``[low, high]`` widened to multiples of :data:`LOG_SPAN_STEP` decades.

    As :func:`nice_bounds` for linear axes: a parameter step that moves the
    data a little keeps the range, and the axis keeps its laid-out labels.
    """
    return math.floor(low / LOG_SPAN_STEP) * LOG_SPAN_STEP, math.ceil(high / LOG_SPAN_STEP) * LOG_SPAN_STEP


#: Room kept above and below a y range set by :func:`set_y_range`, in pixels: half a tick label's height.
END_LABEL_ROOM_PX = 7


def fit_y_range(plot: pg.PlotItem, *series: np.ndarray, padding: float = 0.03) -> None:
    """Set the y range from the finite values of ``series`` now, instead of auto-ranging.

    pyqtgraph auto-ranges while painting, which changes the range and so
    paints the plot a second time after every data update. The range runs
    between round bounds (``nice_bounds``), padded as :func:`set_y_range` does.
    """
    finite = [s[np.isfinite(s)] for s in series if s is not None and s.size]
    finite = [f for f in finite if f.size]
    if not finite:
        return
    low, high = nice_bounds(min(float(f.min()) for f in finite), max(float(f.max()) for f in finite))
    set_y_range(plot, low, high, padding)


def set_y_range(plot: pg.PlotItem, low: float, high: float, padding: float = 0.0) -> None:
    """Show ``low … high`` on the y axis, padded by ``padding`` (a fraction) and at least :data:`END_LABEL_ROOM_PX`.

    The labels of round bounds sit at the ends of the axis, which drops a
    label it cannot hold whole: a short plot of sinusoids lost its ±1, and
    a plot from 0 its 0. The matrix is updated now, not during the next
    paint (which would then paint twice).
    """
    view_box = plot.getViewBox()
    height = view_box.height()
    # Padding p on each side gives p·height/(1 + 2p) pixels.
    room = END_LABEL_ROOM_PX / (height - 2 * END_LABEL_ROOM_PX) if height > 4 * END_LABEL_ROOM_PX else 0.0
    # A padding that still gives the room, and not much more, is kept: a plot whose
    # height changes by a text line keeps its range, so its axis keeps its laid-out labels.
    kept = getattr(view_box, "_label_padding", None)
    if kept is None or not max(padding, room) <= kept <= max(padding, 2 * room):
        kept = view_box._label_padding = max(padding, 1.25 * room)
    view_box.setYRange(low, high, padding=kept)
    view_box.updateMatrix()


def symmetric_levels(values: np.ndarray) -> tuple[float, float]:
    """Colour levels centred at 0: ``(−m, m)``, ``m`` = max |finite value| rounded up (1 if none)."""
    m = float(np.max(np.abs(values))) if values.size else 1.0
    if not np.isfinite(m):  # rare (NaN cosines of zero vectors): filter, which copies
        finite = np.abs(values[np.isfinite(values)])
        m = float(finite.max()) if finite.size else 1.0
    m = nice_bounds(0.0, m)[1] if m > 0 else 1.0
    return -m, m


#: A colour bar labels at most this many values, and gives each label at least this many pixels.
MAX_COLORBAR_LABELS = 9
COLORBAR_LABEL_PX = 26
#: Mantissas of the colour bar's label steps; the unlabelled ticks between labels divide a step by …
_COLORBAR_STEPS = {1: 5, 2: 4, 5: 5}


def colorbar_ticks(low: float, high: float, length_px: float) -> list[list[tuple[float, str]]]:
    """Ticks of a colour bar over ``[low, high]`` that is ``length_px`` long: labelled ones, then unlabelled.

    The labels are multiples of one round step (1, 2 or 5 × 10^k), so 0
    is labelled whenever it is in range, at most :data:`MAX_COLORBAR_LABELS`
    of them and no closer than :data:`COLORBAR_LABEL_PX` (at least 3); they
    read as the axes' labels do (:func:`compact_tick_strings`).
    """
    span = high - low
    if not (math.isfinite(span) and span > 0):
        return [[(low, compact_tick_strings([low], 1.0)[0])], []]
    wanted = max(3, min(MAX_COLORBAR_LABELS, int(length_px // COLORBAR_LABEL_PX)))
    exponent = math.floor(math.log10(span / wanted))
    mantissa, step = next((m, m * 10.0**e) for e in range(exponent, exponent + 3) for m in _COLORBAR_STEPS
                          if _ticks_within(low, high, m * 10.0**e) <= wanted)
    extent = max(abs(low), abs(high))
    if _ticks_within(low, high, step) < MIN_LABELS:  # no round step gives three: the limits and the middle
        middle = 0.0 if low < 0 < high else (low + high) / 2
        values = [low, middle, high]
        return [list(zip(values, compact_tick_strings(values, span / 2, extent))), []]
    first = math.ceil(low / step - 1e-9)
    values = [float(f"{(first + i) * step:.12g}") for i in range(_ticks_within(low, high, step))]
    minor_step = step / _COLORBAR_STEPS[mantissa]
    minor_first = math.ceil(low / minor_step - 1e-9)
    minor = [float(f"{(minor_first + i) * minor_step:.12g}") for i in range(_ticks_within(low, high, minor_step))]
    labelled = set(values)
    return [list(zip(values, compact_tick_strings(values, step, extent))),
            [(value, "") for value in minor if value not in labelled]]


def colour_scale(values: np.ndarray, signed: bool) -> tuple[str, tuple[float, float]]:
    """The colormap and levels of a matrix of ``values``: the one colour rule of the app.

    The rule follows the quantity, not the data, so that two figures of one
    quantity compare: a quantity that can take both signs (an encoding
    value, a dot product, a cosine, a T_k entry, a logit) is drawn with the
    diverging map centred at 0, limits ``±max|value|`` rounded up; one that
    cannot be negative (a distance, a probability) with the sequential map
    from 0 to its maximum rounded up. A dot product that happens to be
    positive everywhere is still drawn diverging.

    Parameters
    ----------
    values : ndarray
        The matrix (NaN and infinite entries are ignored).
    signed : bool
        Whether the quantity can take both signs.
    """
    if signed:
        return DIVERGING, symmetric_levels(values)
    finite = values[np.isfinite(values)] if values.size else values
    top = float(finite.max()) if finite.size else 0.0
    return SEQUENTIAL, (0.0, nice_bounds(0.0, top)[1] if top > 0 else 1.0)


class MatrixPlot:
    """A :class:`pg.PlotItem` holding one row-major image with a colorbar.

    Parameters
    ----------
    layout : pg.GraphicsLayout
        Where to add the plot (``GraphicsLayoutWidget.ci`` or a sub-layout).
    x_label, y_label : str
        Axis titles (columns, rows).
    colorbar_label : str
        Title of the colorbar.
    """

    def __init__(self, layout: pg.GraphicsLayout, x_label: str, y_label: str, colorbar_label: str = "value",
                 row: int | None = None, col: int | None = None) -> None:
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=col)
        style_plot(self.plot, cached_axes=False)  # no grid over the image
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        # Rows and columns are indices: whole-number ticks (the left and bottom
        # axes have no SI prefix, see CompactAxisItem). The hidden top and right
        # axes follow the view too; with the prefix on, each new range re-parsed
        # their HTML labels.
        for side in ("top", "right"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        for side in ("bottom", "left"):
            self.plot.getAxis(side).integer_ticks = True
        self.plot.invertY(True)  # matrix orientation: row 0 at the top
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.image = MatrixImageItem()
        self.plot.addItem(self.image)
        self.colormap_name = DIVERGING
        self.colorbar = pg.ColorBarItem(
            values=(-1, 1), colorMap=get_colormap(DIVERGING), interactive=False, label=colorbar_label,
            width=18, pen=FOREGROUND,
        )
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        # pyqtgraph fixes the colour scale's axis at 45 px, which hides labels
        # such as "5e+07"; let it grow with its labels instead.
        self.colorbar.getAxis("right").setWidth(None)
        for axis_name in ("left", "right"):
            style_axis(self.colorbar.getAxis(axis_name), cached=False)
        self.values: np.ndarray | None = None
        self.rect: QRectF | None = None
        self._given_colorbar_ticks: list | None = None
        self.colorbar.geometryChanged.connect(self._fit_colorbar_ticks)

    def set_title(self, title: str) -> None:
        """Set the plot title (only if it changed)."""
        set_title(self.plot, title)

    @property
    def view_box(self) -> pg.ViewBox:
        return self.plot.getViewBox()

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        """The cell under ``scene_pos`` as (row, column) in data coordinates, rounded; None off the plot area.

        Rows and columns are the data's own indices (positions, dimensions),
        whatever the sampling of the image: a panel looks its value up or
        computes it.
        """
        view_box = self.view_box
        if not view_box.sceneBoundingRect().contains(scene_pos):
            return None
        point = view_box.mapSceneToView(scene_pos)
        return int(round(point.y())), int(round(point.x()))

    def set_colorbar_label(self, text: str) -> None:
        """Title of the colour scale."""
        set_axis_label(self.colorbar.getAxis("left"), text)

    def set_colorbar_ticks(self, ticks: list | None) -> None:
        """Ticks of the colour scale as ``axis.setTicks`` takes them; ``None`` for :func:`colorbar_ticks`."""
        self._given_colorbar_ticks = ticks
        if ticks is None:
            self._fit_colorbar_ticks()
        else:
            set_ticks(self.colorbar.axis, ticks)

    def _fit_colorbar_ticks(self) -> None:
        """Automatic colour-bar ticks for the current levels and length (unless ticks were given)."""
        if self._given_colorbar_ticks is None:
            low, high = self.colorbar.levels()
            length = self.colorbar.axis.height()
            set_ticks(self.colorbar.axis, colorbar_ticks(low, high, length if length > 8 else 300))

    def set_colormap(self, name: str) -> None:
        """Switch to the colormap ``name`` (pyqtgraph's registry)."""
        if name != self.colormap_name:
            self.colormap_name = name
            self.colorbar.setColorMap(get_colormap(name))

    def set_matrix(self, values: np.ndarray, rect: QRectF, levels: tuple[float, float] | None = None,
                   signed: bool = True) -> None:
        """Show ``values`` (rows × columns) over ``rect`` in data coordinates.

        Colours follow :func:`colour_scale` for a ``signed`` (or unsigned)
        quantity; ``levels`` replaces the levels it gives.
        """
        name, automatic = colour_scale(values, signed)
        self.set_colormap(name)
        levels = automatic if levels is None else levels
        self.values = values
        self.rect = QRectF(rect)
        self.image.setImage(values, autoLevels=False)
        self.image.setRect(rect)
        # The image keeps its levels across setImage; setting the colour bar
        # again would redraw its axis labels (1–2 ms) for nothing.
        if tuple(levels) != tuple(self.colorbar.levels()):
            self.colorbar.setLevels(levels)
            self._fit_colorbar_ticks()

    def set_full_range(self, x_extent: tuple[float, float], y_extent: tuple[float, float]) -> None:
        """Limit panning/zooming to the matrix and show all of it."""
        vb = self.view_box
        # The limits go straight into the view's state (what setLimits does,
        # less its own re-ranging pass, 0.4 ms), so that the range below is
        # applied, and the axes re-laid out, once.
        limits = vb.state["limits"]
        limits["xLimits"], limits["yLimits"] = list(x_extent), list(y_extent)
        # zoomed in to the end, a view still spans MIN_LABELS rows and columns: each is a labelled tick
        limits["xRange"][0] = min(float(MIN_LABELS), x_extent[1] - x_extent[0])
        limits["yRange"][0] = min(float(MIN_LABELS), y_extent[1] - y_extent[0])
        vb.setRange(xRange=x_extent, yRange=y_extent, padding=0)
        # Apply the new transform now: pyqtgraph defers it to the next paint,
        # and moving the items during that paint makes Qt paint the plot twice.
        vb.updateMatrix()
