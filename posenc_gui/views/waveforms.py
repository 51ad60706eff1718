"""Waveforms: value against position for chosen dimensions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QCheckBox, QGraphicsPathItem, QLabel, QLineEdit, QWidget

from ..model import EncodingParams
from ..model.panels.table_data import (
    MIN_DOT_SPACING_PX, WaveformData, compute_waveforms, default_dims, parse_dims,
)
from .base import TableOrAnglesPanel
from .cursor import CursorAxis
from .registry import DockPlacement, PanelOption
from .labels import NoticeLine, WrappedLabelHolder, plain_text
from .plotkit import (
    FOREGROUND, PALETTE, ScreenCurve, add_legend_below, fit_y_range, new_layout_widget, new_plot, set_title, show_grid,
    style_plot, view_pixels,
)
from .plotkit.pgcompat import item_option, legend_entries, show_plain_text

CURVE_WIDTH = 2
#: Curves with fewer samples (pixels) per period than this are drawn 1 px wide.
DENSE_SAMPLES_PER_PERIOD = 32
FALLBACK_PIXELS = 800
LEGEND_POINTS = 9.0
#: Opacity (0–255) of the band drawn for a dimension sampled below its wavelength.
BAND_ALPHA = 70
#: The note under the plot follows the curves this long after the last update.
NOTE_DELAY_MS = 150
#: The legend's entry for the dots, while they are drawn and while they are too dense to draw.
DOTS_ENTRY = "integer positions"
DOTS_HIDDEN_ENTRY = "integer positions: zoom in"
DOTS_COLOUR = "#555555"


def _band_path(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> QPainterPath:
    """The closed outline of the band between ``low`` and ``high`` over ``x``."""
    path = pg.arrayToQPath(np.concatenate([x, x[::-1]]), np.concatenate([high, low[::-1]]))
    path.closeSubpath()
    return path


def sampling_notice(data: WaveformData, aliased_dims: list[int], dots_hidden: bool) -> tuple[str, str]:
    """The notice above the curves for this zoom level, and its level (``"warning"`` for aliasing).

    The most important words come first: a narrow dock elides the end (the
    tooltip holds the whole text).
    """
    step = f"{data.curve_step:.3g} positions per pixel"
    if aliased_dims and not data.bands_known:
        return (f"Aliased: dim{'s' if len(aliased_dims) > 1 else ''} {', '.join(map(str, aliased_dims))}, sampled "
                f"below {'their' if len(aliased_dims) > 1 else 'its'} period ({step}), and {data.params.scheme} "
                "does not bound its values between samples: the curve shows the samples only; zoom in.", "warning")
    if aliased_dims:
        dots = " Zoom in to see the dots at integer positions." if dots_hidden else ""
        return (f"Aliased: dim{'s' if len(aliased_dims) > 1 else ''} {', '.join(map(str, aliased_dims))}, drawn as "
                f"the band of {'their' if len(aliased_dims) > 1 else 'its'} exact values within each pixel; "
                f"zoom in for the shape (a wavelength under 2 × the sampling step, {step}).{dots}", "warning")
    no_aliasing = f"No aliasing: every curve has at least two samples per wavelength ({step})."
    if dots_hidden:
        return "Integer positions are closer than a few pixels: zoom in to see their dots. " + no_aliasing, "info"
    return no_aliasing, "info"


class WaveformsPanel(TableOrAnglesPanel):
    """Value against position: the continuous curve plus dots at integer positions."""

    panel_id = "waveforms"
    title = "Waveforms"
    dock = DockPlacement("right", shown=True)
    model_function = compute_waveforms
    cli_options = (PanelOption("--dims", "dimensions to plot, e.g. '0,1,6-7' (at most 12)", metavar="LIST",
                               example="0,1"),)
    cursor_axes = ("position",)
    help_text = (
        "Each curve is one dimension j of the encoding as a function of position, PE(pos, j), "
        "drawn as a continuous curve with dots at the integer positions a model actually sees. "
        "For the sinusoidal scheme, dimension pair i oscillates with wavelength "
        "λ<sub>i</sub> = 2π·base<sup>2i/d</sup>, shown in the legend. Type dimensions as "
        "<code>0, 1, 100-101</code>. Scroll to zoom, drag to pan. For RoPE the curves are the rotation's "
        "cos(pos·θ<sub>i</sub>) and sin(pos·θ<sub>i</sub>) in the pairing's channel order (the heatmap's columns). "
        "For xPos they are the same rotation (pairs interleaved) without its scale ζ<sub>i</sub><sup>±pos/scale_base"
        "</sup>, which multiplies q and k and reaches the logit only as ζ<sub>i</sub><sup>(m − n)/scale_base</sup> "
        "(Positional logits shows it)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Dimensions:"))
        self.dims_edit = QLineEdit(self)
        self.dims_edit.setPlaceholderText("e.g. 0, 1, 6-7")
        self.dims_edit.setMinimumWidth(140)
        self.dims_edit.textEdited.connect(self._dims_edited)
        self.header.addWidget(self.dims_edit)
        self.dots_box = QCheckBox("dots at integer positions", self)
        self.dots_box.setChecked(True)
        self.dots_box.setToolTip(f"A dot at each integer position, while they are at least {MIN_DOT_SPACING_PX} px "
                                 "apart (the legend and the line above the plot say when they are too close)")
        self.dots_box.toggled.connect(lambda _: self._redraw())
        self.header.addWidget(self.dots_box)
        self.finish_header()
        self.canvas = new_layout_widget(self)
        self.plot: pg.PlotItem = new_plot(self.canvas)
        style_plot(self.plot)
        self.plot.setLabel("bottom", "position")
        self.plot.setLabel("left", "PE(pos, j)")
        show_grid(self.plot)
        self.legend = add_legend_below(self.canvas, self.plot, labelTextColor=FOREGROUND, verSpacing=-6,
                                        labelTextSize=f"{LEGEND_POINTS:g}pt")
        # What the zoom level does to the curves (aliasing, hidden dots) changes
        # as the user zooms: said on a line that keeps its height, so the plot
        # never jumps under the mouse. The note below holds the formulas.
        self.sampling_notice = NoticeLine("Aliased: dims 0, 1, 2048, 2049, drawn as the band of their values", self)
        self.body.addWidget(self.sampling_notice)
        self.body.addWidget(self.canvas, 1)
        self.note_label = QLabel(self)
        self.note_label.setWordWrap(True)
        self.note_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(WrappedLabelHolder(self.note_label, self))
        # The note's text changes on every d_model step; laying it out and
        # drawing it again (a few hundred microseconds) is left until the user pauses.
        self._note_text = ""
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.setInterval(NOTE_DELAY_MS)
        self._note_timer.timeout.connect(lambda: self.note_label.setText(self._note_text))
        self.dims: tuple[int, ...] = default_dims(state.params.d_model)
        self._user_dims = False
        #: Why the text in the dimension field is not what the curves show ("" when it is).
        self._dims_error = ""
        self._show_dims_text(", ".join(map(str, self.dims)))
        #: Per dimension: its curve, its dots (None until first shown) and its value band.
        self._items: list[tuple[pg.PlotCurveItem, pg.ScatterPlotItem | None, QGraphicsPathItem]] = []
        # What the legend shows for the dots (a sample only: the dots themselves are drawn per curve).
        self._dots_sample = pg.ScatterPlotItem(symbol="o", size=5, brush=DOTS_COLOUR, pen=pg.mkPen("w", width=0.5))
        self._legend_names: list[str] = []
        self._length = None
        self.link_cursor(self.canvas, [CursorAxis(self.plot, "x", "position")])
        self.debounce(self.resample, self.plot.getViewBox().sigXRangeChanged,
                      self.plot.getViewBox().sigResized)
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    def apply_options(self, dims: str | None = None) -> None:
        """Show the dimensions ``dims`` (text like ``"0, 1, 6-7"``); ValueError naming the allowed range."""
        if dims is not None:
            parse_dims(dims, self.state.params.d_model)
            self.set_dims(dims)

    def current_options(self) -> dict[str, str]:
        """The dimensions the user chose (none while the defaults of the size are shown)."""
        return {"dims": ", ".join(map(str, self.dims))} if self._user_dims else {}

    def set_dims(self, dims: tuple[int, ...] | str) -> None:
        """Show these dimensions (a tuple, or text like ``"0, 1, 6-7"``)."""
        text = dims if isinstance(dims, str) else ", ".join(map(str, dims))
        self._show_dims_text(text)
        self._dims_edited(text)

    def _show_dims_text(self, text: str) -> None:
        """Put ``text`` in the dimension list, scrolled to its start (setText leaves it at the end)."""
        self.dims_edit.setText(text)
        self.dims_edit.setCursorPosition(0)

    def _dims_edited(self, text: str) -> None:
        try:
            self.dims = parse_dims(text, self.state.params.d_model)
        except ValueError as error:
            self._dims_error = str(error)
            self.show_message(self._dims_error, "error")
            return
        self._user_dims = True
        self._dims_error = ""
        self.show_message("")
        self.schedule_update()

    def _fit_dims(self, params: EncodingParams) -> None:
        """Make the chosen dimensions exist at ``params.d_model``, and the message say why the field is refused.

        A refused text is parsed again (another d_model may admit it, or
        change the range its message names); dimensions past a smaller
        d_model are dropped, and the defaults of the size stand in until the
        user has chosen some. Called before each request too: a re-sample
        can be asked for between a parameter change and its ``paramsChanged``.
        """
        refused = self._dims_error
        if refused:
            try:
                self.dims = parse_dims(self.dims_edit.text(), params.d_model)
                self._user_dims = True
                self._dims_error = ""
            except ValueError as error:
                self._dims_error = str(error)
        if self._user_dims:
            fitted = tuple(d for d in self.dims if d < params.d_model) or default_dims(params.d_model)
        else:
            fitted = default_dims(params.d_model)
        if fitted != self.dims or (self._dims_error and not self._user_dims):
            self.dims = fitted
            self._show_dims_text(", ".join(map(str, fitted)))
            self._dims_error = ""
        if self._dims_error != refused:
            self.show_message(self._dims_error, "error")

    def _on_params(self, params: EncodingParams) -> None:
        self._fit_dims(params)
        if params.seq_len != self._length:
            self._length = params.seq_len
            vb = self.plot.getViewBox()
            vb.setLimits(xMin=-0.5, xMax=max(params.seq_len - 0.5, 0.5))
            vb.setXRange(0, max(params.seq_len - 1, 1), padding=0.02)
        self.schedule_update()

    def model_arguments(self) -> tuple:
        """The parameters, the dimensions (fitted to d_model) and the visible positions, about one per pixel."""
        params = self.state.params
        self._fit_dims(params)
        vb = self.plot.getViewBox()
        (low, high), _ = vb.viewRange()
        pixels, _ = view_pixels(vb, FALLBACK_PIXELS)
        return params, self.dims, low, high, pixels

    def show_data(self, data: WaveformData) -> None:
        self.show_message(self._dims_error, "error")  # an earlier failure no longer applies; a bad field does
        self._redraw()

    def _redraw(self) -> None:
        data = self.data
        if data is None:
            return
        names, aliased_dims = [], []
        for j, dim in enumerate(data.dims):
            wl = data.wavelength[j]
            # Short: the legend's columns are as wide as its longest entry. The band
            # explains itself, and the line above the plot says what it is.
            name = f"dim {dim} ({'not periodic' if not np.isfinite(wl) else f'λ = {wl:,.4g}'}"
            if data.aliased[j]:
                aliased_dims.append(dim)
                name += ", aliased"
            names.append(name + ")")
        show_dots = data.dots is not None and self.dots_box.isChecked()
        if self.dots_box.isChecked():  # every mark in the legend: the dots, or why there are none
            names.append(DOTS_ENTRY if show_dots else DOTS_HIDDEN_ENTRY)
        if len(data.dims) != len(self._items) or len(names) != len(self._legend_names):
            self._rebuild_items(names, len(data.dims))
        else:
            relaid = False
            for (_, label), name, old in zip(legend_entries(self.legend), names, self._legend_names):
                if name != old and not show_plain_text(label, name, item_option(label, "color", FOREGROUND)):
                    label.setText(name)
                    relaid = True
            if relaid:  # a wider entry may need fewer columns
                self.legend.fit_columns()
            self._legend_names = names
        fit_y_range(self.plot, data.curve_y, data.dot_y, data.band_low, data.band_high)
        empty = np.empty(0)
        for j, (curve, dots, band) in enumerate(self._items):
            if data.aliased[j] and data.bands_known:
                # Sampled below its wavelength, the curve would draw moiré;
                # the band is the exact range it sweeps in each pixel column.
                curve.setData(empty, empty)
                band.setPath(_band_path(data.curve_x, data.band_low[:, j], data.band_high[:, j]))
                band.show()
            else:
                # A curve with few pixels per period swings steeply across the
                # plot; Qt strokes such a path with a 2 px pen many times slower
                # than with a 1 px one, and dense oscillations read better thin
                # anyway, leaving the bold lines to the smooth curves.
                dense = data.wavelength[j] < DENSE_SAMPLES_PER_PERIOD * data.curve_step
                width = 1 if dense else CURVE_WIDTH
                colour = QColor(PALETTE[j % len(PALETTE)])
                pen = item_option(curve, "pen")
                if pen.widthF() != width or pen.color() != colour:
                    curve.setPen(pg.mkPen(PALETTE[j % len(PALETTE)], width=width))
                curve.setData(data.curve_x, data.curve_y[:, j])
                band.hide()
            if show_dots:
                if dots is None:
                    dots = self._add_dots(j)
                dots.setData(data.dots.indices(), data.dot_y[:, j])
            if dots is not None:
                dots.setVisible(show_dots)
        self._note_text = "; ".join(f"dim {dim} = {label}" for dim, label in zip(data.dims, data.labels)) + "."
        if self._note_text != self.note_label.text():
            self._note_timer.start()
        self.sampling_notice.set_notice(*sampling_notice(data, aliased_dims,
                                                         data.dots is None and self.dots_box.isChecked()))
        set_title(self.plot, data.params.title())

    def _rebuild_items(self, names: list[str], curves: int) -> None:
        """One curve and one dot series per dimension, made only when the legend changes.

        ``names`` are the legend's entries: one per curve (the first
        ``curves``), then the dots' if any. The plain curve and scatter
        items, not PlotDataItem: these series are already sampled at one
        point per pixel, so its downsampling and clipping are work for nothing.
        """
        for items in self._items:
            for item in items:
                if item is not None:
                    self.plot.removeItem(item)
        self.legend.clear()
        self._items = []
        for j, name in enumerate(names[:curves]):
            color = PALETTE[j % len(PALETTE)]
            # connect="finite": see the similarity profile (pyqtgraph 0.14 and an all-NaN thick curve)
            curve = ScreenCurve(pen=pg.mkPen(color, width=CURVE_WIDTH), name=name, connect="finite")
            band = QGraphicsPathItem()
            fill = QColor(color)
            fill.setAlpha(BAND_ALPHA)
            band.setBrush(fill)
            band.setPen(QPen(Qt.PenStyle.NoPen))
            band.hide()
            for item in (band, curve):
                self.plot.addItem(item)
            self._items.append((curve, None, band))
        for name in names[curves:]:
            self.legend.addItem(self._dots_sample, name)
        self._legend_names = names

    def _add_dots(self, j: int) -> pg.ScatterPlotItem:
        """Dimension ``j``'s dots, made when first shown (they are hidden until zoomed in: five series at
        start-up for nothing), drawn above its curve and below the next dimension's band."""
        curve, _, band = self._items[j]
        dots = pg.ScatterPlotItem(symbol="o", size=5, brush=PALETTE[j % len(PALETTE)], pen=pg.mkPen("w", width=0.5))
        self.plot.addItem(dots)
        if j + 1 < len(self._items):
            dots.stackBefore(self._items[j + 1][2])
        self._items[j] = (curve, dots, band)
        return dots

    def figure_caption(self) -> str:
        """Which curves are drawn as value bands, and why, when any are; else the curves' formulas (the lines
        around the plot)."""
        data = self.data
        aliased_dims = [dim for dim, band in zip(data.dims, data.aliased) if band] if data is not None else []
        if not aliased_dims:
            return self.headline()
        if not data.bands_known:
            return sampling_notice(data, aliased_dims, dots_hidden=False)[0]
        many = len(aliased_dims) > 1
        return (f"Dim{'s' if many else ''} {', '.join(map(str, aliased_dims))}: a wavelength under 2 × the "
                f"curves' sampling step ({data.curve_step:,.4g} positions), drawn as the band of "
                f"{'their' if many else 'its'} exact values within each step.")

    def headline(self) -> str:
        """The curves' formulas and whether any aliases (the lines around the plot).

        The formulas are those of the curves shown, not the note under the plot, which follows them only
        after :data:`NOTE_DELAY_MS`: an export in between names the curves it draws.
        """
        return " ".join(text for text in (self.sampling_notice.text(), plain_text(self._note_text)) if text)

    def export_data(self) -> dict[str, Any]:
        """Values at every integer position of the chosen dimensions (refused past the limits)."""
        p = self.state.params
        dims = np.array(self.dims, dtype=np.int64)
        values = p.encode(dims=dims)
        meta = {"panel": self.panel_id, "params": p.as_dict(), "dims": list(self.dims),
                "rows": "position 0…seq_len−1", "columns": [f"dim {d}" for d in self.dims]}
        return {"arrays": {"waveforms": values, "dims": dims}, "meta": meta}
