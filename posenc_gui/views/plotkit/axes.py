"""Axes: readable tick labels at any scale, styled plots, grids and y ranges that keep their end labels."""

from __future__ import annotations

import math
import weakref

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QGraphicsItem

from .canvas import END_LABEL_REACH_PX, paint_guard
from .pgcompat import (AxisPlacingEndLabels, PlotWithoutMenu, TitleOnceAxisItem, centre_axis_title,
                       lay_out_axis_drawing, let_title_narrow, paint_axis, wrap_axis_title)
from .text import cache_text
from .theme import current
from .ticks import (MIN_LABELS, compact_tick_strings, integer_ticks, nice_bounds, next_round_step,
                    previous_round_step, ticks_within)

#: Room kept above and below a y range set by :func:`set_y_range`, in pixels: half a tick label's height.
END_LABEL_ROOM_PX = 7


def lay_out_axes(canvas: pg.GraphicsView) -> bool:
    """Lay out now the axes of ``canvas`` whose next paint would (see :func:`.pgcompat.lay_out_axis_drawing`); True
    when one took another room for its labels, and its plot is laid out again before it is painted."""
    scene = canvas.scene()
    changed = False
    for item in scene.items() if scene is not None else ():
        if isinstance(item, pg.AxisItem) and item.isVisible():
            changed |= lay_out_axis_drawing(item)
    return changed


class CompactAxisItem(AxisPlacingEndLabels):
    """An axis whose tick labels stay readable for a million positions.

    pyqtgraph labels 1,000,000 as ``1e+06`` and always draws its major
    labels, even when a narrow plot makes them overlap (the similarity
    matrix at 1,048,576 positions printed ``200000400000600000``). Here
    labels are :func:`compact_tick_strings`, and a horizontal axis widens
    its major step until the labels fit side by side. pyqtgraph's automatic
    SI prefix is off: it labelled a one-position axis −400 … 400 "(x0.001)",
    and a spread of 1e-12 "spread (x1e-12)" with ticks 0.2 … 1, read as the
    values themselves.

    pyqtgraph drops a label that reaches past the axis's bounding
    rectangle: the 0 of an axis starting at 0 (or at −0.5, matrix columns)
    was never labelled. The rectangle reaches :data:`END_LABEL_REACH_PX`
    past the ends here, as long as it stays on the canvas; a label that
    still does not fit is slid inside it, unless it would then touch another
    label. The step is made finer when fewer than :data:`MIN_LABELS` ticks
    would fall on the axis.
    """

    #: Free space kept between two tick labels, in pixels.
    LABEL_GAP_PX = 12
    #: Height a vertical axis gives each label (the text and the space around it), in pixels.
    LABEL_HEIGHT_PX = 18
    #: Ticks only at whole numbers (rows and columns of a matrix are indices).
    integer_ticks = False

    @paint_guard
    def paint(self, p, option, widget) -> None:  # noqa: D102 (pyqtgraph override: see pgcompat.paint_axis)
        paint_axis(self, p, option, widget)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)
        self._label_room: QRectF | None = None  # see boundingRect; found again after a change of geometry
        self.geometryChanged.connect(self._forget_label_room)

    def _forget_label_room(self) -> None:
        self._label_room = None

    def resizeEvent(self, event=None) -> None:  # noqa: N802 (pyqtgraph override: it places the title here)
        wrap_axis_title(self)
        super().resizeEvent(event)

    def label_room(self) -> QRectF:
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
        return super().label_room() | room

    def place_labels(self, axis_spec, tick_specs, text_specs):
        """The labels inside :meth:`label_room`; one that reaches past it is slid inside, if it fits there."""
        room = self.label_room()
        along = 1 if self.orientation in ("top", "bottom") else 0
        placed, moved = [], []
        for rect, flags, text in text_specs:
            if room & rect != rect:
                rect = _moved_inside(rect, room, along)
                if rect is None:
                    continue
                moved.append(len(placed))
            placed.append((rect, flags, text))
        return axis_spec, tick_specs, _without_overlaps(placed, moved)

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph override)
        if self.logMode or not values:
            return super().tickStrings(values, scale, spacing)
        extent = max(abs(end) for end in self.range) * scale
        return compact_tick_strings([v * scale for v in values], spacing * scale, extent)

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph override)
        """pyqtgraph's tick values, a higher level's ticks dropped from the lower by a plain comparison.

        pyqtgraph drops them with ``np.isclose`` (about 80 µs a call, a layout
        of the heatmap's dimension axis at every d_model step); ``|a − b| ≤
        atol`` is what it computes for finite values.
        """
        if self.logMode:
            return super().tickValues(minVal, maxVal, size)
        low, high = sorted((minVal, maxVal))
        low, high = low * self.scale, high * self.scale
        ticks, seen = [], np.empty(0)
        for spacing, offset in self.tickSpacing(low, high, size):
            start = math.ceil((low - offset) / spacing) * spacing + offset
            values = (np.arange(int((high - start) / spacing) + 1) * spacing + start) / self.scale
            if seen.size:  # within 1 % of a step of a tick already placed: the same tick
                values = values[~(np.abs(values[:, None] - seen) <= spacing / self.scale * 0.01).any(axis=1)]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        return ticks

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
            major = next_round_step(major)
        smallest = 1.0 if self.integer_ticks else 0.0
        while ticks_within(minVal, maxVal, major) < MIN_LABELS:  # labels closer together, rather than too few
            finer = previous_round_step(major)
            if finer < smallest or span / finer * label_size(finer, self.LABEL_GAP_PX / 2) > size:
                break
            major = finer
        if major == levels[0][0]:
            return levels
        return [(major, 0)] + [level for level in levels[1:] if level[0] < major]


#: Least space between an end label moved inside its axis's room and the next label, in pixels.
MOVED_LABEL_GAP_PX = 4


def _moved_inside(placed: QRectF, bounds: QRectF, along: int) -> QRectF | None:
    """``placed`` slid along the axis (``along`` 1: horizontal, 0: vertical) to lie in ``bounds``; None if it cannot."""
    if along == 1:
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


def style_axis(axis: pg.AxisItem, cached: bool = True) -> None:
    """Ticks and labels in the theme's foreground, drawn from a pixmap cache unless ``cached`` is False.

    Cached, a repaint of the plot area the axis covers is a blit; export
    switches caching off so SVG and PDF still get vector axes. An axis that
    draws no grid over data that change is redrawn only after its range
    changes, and then a cache is pure overhead (``cached=False``).
    """
    foreground = current().foreground
    axis.setPen(foreground)
    axis.setTextPen(foreground)
    if cached:
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    cache_text(axis.label)  # the axis title: a child item, outside the axis's own cache
    # Two tick levels, not three: the third adds only tiny unlabelled ticks.
    axis.setStyle(maxTickLevel=1, maxTextLevel=1)


def new_plot(layout: pg.GraphicsLayout | pg.GraphicsLayoutWidget, **position: int) -> pg.PlotItem:
    """A plot added to ``layout`` (at ``row``, ``col``, ``colspan`` in ``position``, else the next cell), made with
    the kit's axes (:class:`CompactAxisItem` left and bottom), no menus and its options built when first used
    (:class:`~.pgcompat.PlotWithoutMenu`); style it with :func:`style_plot`.

    Made with them, rather than given them after: pyqtgraph's default axes
    were built, styled and thrown away (~1 ms a plot). The top and right
    axes are hidden, as pyqtgraph's are (it shows every axis it is given).
    """
    axes = {"left": CompactAxisItem("left"), "bottom": CompactAxisItem("bottom"),
            "top": TitleOnceAxisItem("top"), "right": TitleOnceAxisItem("right")}
    plot = PlotWithoutMenu(axisItems=axes)
    layout.addItem(plot, **position)
    plot.hideAxis("top")
    plot.hideAxis("right")
    return plot


def style_plot(plot: pg.PlotItem, cached_axes: bool = True) -> None:
    """Axes (with :class:`CompactAxisItem` labels) and title in the theme's foreground.

    Call it right after creating the plot: it gives a plot not made by
    :func:`new_plot` the kit's left and bottom axes. ``cached_axes``: see
    :func:`style_axis`.
    """
    compact = {side: CompactAxisItem(side) for side in ("left", "bottom")
               if not isinstance(plot.getAxis(side), CompactAxisItem)}
    if compact:
        plot.setAxisItems(compact)
    for name in ("left", "bottom", "right", "top"):
        style_axis(plot.getAxis(name), cached_axes)
    plot.titleLabel.setAttr("color", current().foreground)
    cache_text(plot.titleLabel.item)
    let_title_narrow(plot.titleLabel, plot=plot)


def add_plot(layout: pg.GraphicsLayout, x_label: str = "", y_label: str = "", log_x: bool = False,
             log_y: bool = False, buttons: bool = True, **position: int) -> pg.PlotItem:
    """A styled plot added to ``layout`` (at ``row``, ``col``, ``colspan`` in ``position``, else the next cell).

    Its axes and title in the theme (:func:`style_plot`), its grid under the
    data (:func:`show_grid`), no context menu; ``buttons=False`` hides the
    auto-range button too. The axis titles are set when given, the axes
    logarithmic with ``log_x`` and ``log_y``.
    """
    plot = new_plot(layout, **position)
    style_plot(plot)
    if not buttons:
        plot.hideButtons()
    show_grid(plot)
    if log_x or log_y:
        plot.setLogMode(x=log_x, y=log_y)
    if x_label:
        plot.setLabel("bottom", x_label)
    if y_label:
        plot.setLabel("left", y_label)
    return plot


def show_grid(plot: pg.PlotItem) -> None:
    """Light grid lines, under the data.

    pyqtgraph draws a plot's grid with its axes, and stacks the axes above
    the view box: the lines crossed the curves and the legend's text. The
    view box (transparent, and clipping what it holds to the plot area) goes
    above the axes instead, so curves and the opaque legend cover the grid.
    """
    plot.showGrid(x=True, y=True, alpha=current().grid_alpha)
    plot.getViewBox().setZValue(plot.getAxis("left").zValue() + 1)


def set_axis_label(axis: pg.AxisItem, text: str) -> None:
    """Set an axis title only when it changes (``setLabel`` re-lays out the plot), centred along the axis."""
    if axis.labelText != text:
        axis.setLabel(text, color=current().foreground)
        centre_axis_title(axis)


#: The ticks :func:`set_ticks` last gave each axis.
_GIVEN_TICKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_ticks(axis: pg.AxisItem, ticks: list | None) -> None:
    """``axis.setTicks(ticks)``, unless this function gave the axis these ticks last.

    Setting ticks, even the same ones, lays the axis out again at the next
    paint; the analysis panels set theirs on every update. Axes whose ticks
    change go through this function only.
    """
    if axis in _GIVEN_TICKS and _GIVEN_TICKS[axis] == ticks:
        return
    _GIVEN_TICKS[axis] = ticks
    axis.setTicks(ticks)


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


#: The padding :func:`set_y_range` last gave each view box.
_LABEL_PADDING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: What :func:`set_y_range` last asked of each view box, and the y range the view then showed.
_Y_RANGE_SET: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_y_range(plot: pg.PlotItem, low: float, high: float, padding: float = 0.0) -> None:
    """Show ``low … high`` on the y axis, padded by ``padding`` (a fraction) and at least :data:`END_LABEL_ROOM_PX`.

    The labels of round bounds sit at the ends of the axis, which drops a
    label it cannot hold whole: a short plot of sinusoids lost its ±1, and
    a plot from 0 its 0. The view's transform is updated now, not during
    the next paint (which would then paint twice).
    """
    view_box = plot.getViewBox()
    height = view_box.height()
    # Padding p on each side gives p·height/(1 + 2p) pixels.
    room = END_LABEL_ROOM_PX / (height - 2 * END_LABEL_ROOM_PX) if height > 4 * END_LABEL_ROOM_PX else 0.0
    # A padding that still gives the room, and not much more, is kept: a plot whose
    # height changes by a text line keeps its range, so its axis keeps its labels.
    kept = _LABEL_PADDING.get(view_box)
    if kept is None or not max(padding, room) <= kept <= max(padding, 2 * room):
        kept = _LABEL_PADDING[view_box] = max(padding, 1.25 * room)
    asked = (low, high, kept)
    last = _Y_RANGE_SET.get(view_box)
    if (last is not None and last[0] == asked and view_box.viewRange()[1] == last[1]
            and not view_box.autoRangeEnabled()[1]):
        return  # shown already (the waveforms' ±1 at every step): pyqtgraph's range update and its signals cost ~0.1 ms
    view_box.setYRange(low, high, padding=kept)
    view_box.updateMatrix()
    _Y_RANGE_SET[view_box] = (asked, view_box.viewRange()[1])


def set_integer_ticks(axis: pg.AxisItem, first: int, last: int) -> None:
    """Integer ticks on ``axis`` for a short range, the axis's own ticks otherwise."""
    set_ticks(axis, integer_ticks(first, last))
