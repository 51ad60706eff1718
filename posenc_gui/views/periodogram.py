"""Periodogram: which frequencies each dimension of a table holds (dimensions × frequency, and one dimension's spectrum)."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QLabel, QSpinBox, QWidget

from ..compute import ModelJob
from ..model import EncodingParams
from ..model.analyses.table_spectra import (
    LOBE_BINS, DimensionPeriodogram, PeriodogramData, dimension_periodogram, periodogram_data,
)
from .base import Panel
from .cursor import CursorAxis
from .plotkit import (
    BLUE, CompactAxisItem, FOREGROUND, GREEN, LegendBelow, MatrixPlot, NO_PEN, ORANGE, add_canvas_title, decade_label,
    decade_ticks, new_plot, prepare_for_paint, set_canvas_title, set_ticks, set_title, shared_brush, show_grid,
    style_axis, style_plot,
)
from .registry import PanelOption

#: Colour levels of the image: log₁₀ of the share of a dimension's power, 10⁻⁶ … 1.
LEVELS = (-6.0, 0.0)
COLORBAR_TICKS = [[(float(k), decade_label(k)) for k in (-6, -4, -2, 0)], [(float(k), "") for k in (-5, -3, -1)]]
GREY = "#888888"
#: Above this many bins the line plot draws about one point per pixel (exact at any zoom).
MAX_WHOLE_CURVE = 4096


def _frequency_ticks(low: float, high: float) -> list[list[tuple[float, str]]]:
    """Bottom axis (log₁₀ frequency): labelled decades, and the Nyquist frequency 0.5 when it is in range."""
    major, minor = decade_ticks(low, high)
    nyquist = math.log10(0.5)
    if low <= nyquist <= high:
        major = [tick for tick in major if abs(tick[0] - nyquist) > 0.25] + [(nyquist, "0.5")]
    return [major, minor]


def _wavelength_ticks(low: float, high: float) -> list[list[tuple[float, str]]]:
    """Top axis: wavelengths 2, 10, 100, … positions at x = −log₁₀ λ."""
    major = [(-float(k), decade_label(k)) for k in range(math.ceil(-high), math.floor(-low) + 1) if k >= 1]
    if low <= math.log10(0.5) <= high:
        major.append((math.log10(0.5), "2"))
    return [major, []]


def _number(x: float) -> str:
    """A frequency or a wavelength in four significant digits (thousands separated)."""
    return f"{x:,.0f}" if abs(x) >= 10_000 else f"{x:.4g}"


class PeriodogramPanel(Panel):
    """Image of every dimension's spectrum over frequency, and the chosen dimension's spectrum as a curve."""

    panel_id = "periodogram"
    title = "Periodogram"
    model_functions = (periodogram_data, dimension_periodogram)
    cursor_axes = ("dimension",)
    cli_options = (PanelOption("--dim", "dimension whose spectrum the periodogram plots (0-based)", type=int,
                               metavar="J", default=0, example=3),)
    help_text = (
        "Each dimension of the table as a signal over position: its periodogram, the share of the dimension's "
        "variance at each frequency k/n cycles per position (a wavelength of n/k positions), over the first n "
        "positions with the mean removed (every position up to 65,536; fewer at a large d_model, said below the "
        "plot). <b>Left:</b> one row per dimension, dimension 0 at the top, log<sub>10</sub> of the share on a "
        "logarithmic frequency axis (wavelengths on the top axis), through a Hann window so that a frequency "
        "between two bins stays one bright cell; with thousands of dimensions or bins each cell is the largest "
        "share of those it covers; grey rows are constant. <b>Right:</b> the chosen dimension's periodogram "
        "(grey) and with the window (blue), its peak (dot) and, for a scheme with a formula, the formula's "
        "frequency 1/(2π·divisor) (dashed). The sinusoidal encoding puts pair i at one frequency, "
        "1/(2π·base<sup>2i/d</sup>): a staircase of peaks. A learned table as initialised (random) has a flat "
        "spectrum: its peak holds about ln(n/2)/(n/2) of the power (Fisher's g for white noise). A dimension "
        "has its power in one frequency when ≥ 90 % of it is within ±2 bins of its peak (Hann window) and the "
        "peak makes at least 3 cycles over the n positions; slower, a wave and a trend look alike."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Dimension:"))
        self.dim_box = QSpinBox(self)
        self.dim_box.setRange(0, state.params.d_model - 1)
        self.dim_box.setGroupSeparatorShown(True)
        self.dim_box.setToolTip("The dimension whose spectrum the plot on the right shows")
        self.dim_box.valueChanged.connect(self.schedule_update)
        self.header.addWidget(self.dim_box)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        # The image on the left, the chosen dimension's spectrum on the right: side by side, both keep
        # their height in a dock of a few hundred pixels.
        self.matrix = MatrixPlot(self.canvas.ci, "frequency (cycles per position)", "dimension",
                                 "share of the power (Hann)", row=1, col=0)
        self.matrix.set_colorbar_ticks(COLORBAR_TICKS)
        image_plot = self.matrix.plot
        image_plot.setAxisItems({"top": CompactAxisItem("top")})  # labels at the ends too ("2" at Nyquist)
        style_axis(image_plot.getAxis("top"), cached=False)
        image_plot.showAxis("top")
        image_plot.setLabel("top", "wavelength (positions)")
        side = self.canvas.ci.addLayout(row=1, col=1)
        self.line_plot: pg.PlotItem = new_plot(side, row=0, col=0)
        style_plot(self.line_plot)
        show_grid(self.line_plot)
        self.line_plot.hideButtons()
        self.line_plot.setLabel("bottom", "frequency (cycles per position)")
        self.line_plot.setLabel("left", "share of the power")
        self.line_plot.setXLink(image_plot)  # the same frequencies: zoom one, the other follows
        self.legend = LegendBelow(self.line_plot, labelTextColor=FOREGROUND)
        side.addItem(self.legend, row=1, col=0)
        self.line_plot.legend = self.legend  # curves with a name join it
        self.raw_curve = self.line_plot.plot(pen=pg.mkPen(GREY, width=1), name="periodogram")
        self.hann_curve = self.line_plot.plot(pen=pg.mkPen(BLUE, width=1.5), name="Hann window")
        self.peak_dot = self.line_plot.plot(pen=None, symbol="o", symbolSize=8, symbolPen=NO_PEN,
                                            symbolBrush=shared_brush(ORANGE), name="peak")
        self.known_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(GREEN, width=1.5, style=Qt.PenStyle.DashLine))
        self.line_plot.addItem(self.known_line, ignoreBounds=True)
        self.known_entry = pg.PlotDataItem(pen=pg.mkPen(GREEN, width=1.5, style=Qt.PenStyle.DashLine))
        self._known_in_legend = False
        layout = self.canvas.ci.layout
        layout.setColumnStretchFactor(0, 3)
        layout.setColumnStretchFactor(1, 2)
        self.body.addWidget(self.canvas, 1)
        self.dim_label = self.add_summary_label()  # the chosen dimension's formula and numbers, under the plots
        self.dim_data: DimensionPeriodogram | None = None
        self._table_requested: EncodingParams | None = None
        #: The chosen dimension's result that waits for its table, so that the canvas repaints once for both.
        self._held_dim: DimensionPeriodogram | None = None
        self._errors = {"table": "", "dim": ""}
        self.link_cursor(self.canvas, [CursorAxis(self.matrix.plot, "y", "dimension")])  # the cursor's row
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    # --------------------------------------------------------------- options
    def apply_options(self, dim: int | None = None) -> None:
        """Choose the dimension whose spectrum the right-hand plot shows (:meth:`set_dim`)."""
        if dim is not None:
            self.set_dim(dim)

    def current_options(self) -> dict[str, int]:
        """The chosen dimension."""
        return {"dim": self.dim_box.value()}

    def set_dim(self, dim: int) -> None:
        """Choose the dimension of the right-hand plot, ``0 … d_model − 1``."""
        d_model = self.state.params.d_model
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 0 <= dim < d_model:
            raise ValueError(f"dim must be in 0…{d_model - 1:,} (d_model {d_model:,}), got {dim!r}")
        self.dim_box.setValue(int(dim))

    # ------------------------------------------------------------------ data
    def _on_params(self, params: EncodingParams) -> None:
        self.dim_box.blockSignals(True)
        self.dim_box.setMaximum(params.d_model - 1)
        self.dim_box.blockSignals(False)
        self.schedule_update()

    def unavailable_reason(self, params: EncodingParams) -> str | None:
        """A scheme without a table, or a single position (which has no frequency)."""
        reason = super().unavailable_reason(params)
        if reason is None and params.seq_len < 2:
            return "one position has no frequency: the periodogram needs at least 2 positions."
        return reason

    def request_update(self) -> None:
        """The table's periodogram (unless already asked for these parameters) and the chosen dimension's, in the worker."""
        params = self.state.params
        if params != self._table_requested:
            self._table_requested = params
            self.compute.submit((self, "table"), ModelJob(periodogram_data, (params,)), self._show_table,
                                lambda error: self._failed("table", error))
        self.compute.submit((self, "dim"), ModelJob(dimension_periodogram, (params, self.dim_box.value())),
                            self._show_dim, lambda error: self._failed("dim", error))

    def _failed(self, part: str, error: Exception) -> None:
        if part == "table":
            self._table_requested = None  # asked again, it computes again
            self._show_held_dim()
        self._errors[part] = str(error)
        self._show_errors()

    def _show_errors(self) -> None:
        text = " ".join(message for message in self._errors.values() if message)
        self.show_message(text, "error")

    def _show_table(self, data: PeriodogramData) -> None:
        self.data = data
        self._errors["table"] = ""
        self._show_errors()
        low, high = data.log_frequency_range
        rows = data.image_rows
        top, bottom = -0.5, rows.count * rows.stride - 0.5
        grey_rows = bool(data.constant_rows.any())
        self.matrix.set_matrix(data.image, QRectF(low, top, high - low, bottom - top), levels=LEVELS, signed=False,
                               masked=grey_rows)
        view = self.matrix.view_box
        view.setLimits(xMin=low, xMax=high, yMin=top, yMax=bottom, minXRange=(high - low) / 64,
                       minYRange=min(3.0, bottom - top))
        view.setRange(xRange=(low, high), yRange=(top, bottom), padding=0)
        set_ticks(self.matrix.plot.getAxis("bottom"), _frequency_ticks(low, high))
        set_ticks(self.matrix.plot.getAxis("top"), _wavelength_ticks(low, high))
        set_ticks(self.line_plot.getAxis("bottom"), _frequency_ticks(low, high))
        set_canvas_title(self.figure_title, data.params.title())
        drawn = (f" The image draws each row as the largest share of {rows.stride:,} dimensions."
                 if rows.stride > 1 else "")
        drawn += " Grey rows: constant dimensions." if grey_rows else ""
        self.summary_label.setText(html.escape(data.summary() + drawn))
        held, self._held_dim = self._held_dim, None
        if held is not None and held.params == data.params:
            self._draw_dim(held)
        prepare_for_paint(self.canvas)

    def _show_held_dim(self) -> None:
        """Draw the dimension's result that waited for a table that will not come."""
        held, self._held_dim = self._held_dim, None
        if held is not None:
            self._draw_dim(held)
            prepare_for_paint(self.canvas)

    def _show_dim(self, data: DimensionPeriodogram) -> None:
        """Draw the chosen dimension's spectrum, or hold it while the table of the same parameters computes."""
        if data.params == self._table_requested and self.compute.is_pending((self, "table")):
            self._held_dim = data  # drawn with the table: one repaint per parameter change, not two
            return
        self._held_dim = None
        self._draw_dim(data)
        prepare_for_paint(self.canvas)

    def _draw_dim(self, data: DimensionPeriodogram) -> None:
        self.dim_data = data
        self._errors["dim"] = ""
        self._show_errors()
        x = data.log_frequency
        raw, hann = data.log_shares()
        many = x.size > MAX_WHOLE_CURVE
        for curve, values in ((self.raw_curve, raw), (self.hann_curve, hann)):
            curve.setDownsampling(auto=many, method="peak")
            curve.setClipToView(many)
            curve.setData(x, values, connect="finite")
        if data.constant:
            self.peak_dot.setData([], [])
        else:
            self.peak_dot.setData([math.log10(data.peak_frequency)], [raw[data.peak_bin - 1]])
        known = data.known_frequency
        shown = known is not None and known > 0 and math.isfinite(known)
        # from the first bin's lower edge, where the frequency axis starts
        self.known_line.setVisible(shown and known * data.positions >= 0.5)
        if shown:
            self.known_line.setValue(math.log10(known))
        if shown != self._known_in_legend:
            if shown:
                self.legend.addItem(self.known_entry, "formula's frequency")
            else:
                self.legend.removeItem(self.known_entry)
            self._known_in_legend = shown
        finite = np.concatenate([raw[np.isfinite(raw)], hann[np.isfinite(hann)]])
        bottom = max(float(finite.min()), -12.0) if finite.size else -6.0
        span = (math.floor(bottom) - 0.2, 0.3)
        self.line_plot.setYRange(*span, padding=0)
        set_ticks(self.line_plot.getAxis("left"), decade_ticks(*span))
        set_title(self.line_plot, f"dimension {data.dim:,}")
        self.dim_label.setText(self._dim_text(data))

    @staticmethod
    def _dim_text(data: DimensionPeriodogram) -> str:
        """The chosen dimension's formula, peak and shares, for the line above its plot."""
        head = f"<b>Dimension {data.dim:,}</b>: {html.escape(data.term)}"
        if data.constant:
            return head + f", constant over the first {data.positions:,} positions."
        f = data.peak_frequency
        text = (f"{head}: peak {_number(f)} cycles/position (λ {_number(1 / f)}), share {data.peak_share:.3g}, "
                f"{data.lobe_share:.1%} within ±{LOBE_BINS} bins" + (", too slow to tell" if data.too_slow else ""))
        known = data.known_frequency
        if known is not None and math.isfinite(known) and known > 0:
            agrees = known * data.positions >= 1 and abs(f - known) * data.positions <= 1
            text += (f"; formula λ {_number(1 / known)}: "
                     + ("agrees within one bin" if agrees else
                        "longer than the positions analysed" if known * data.positions < 1 else "differs"))
        return text + "."

    # ---------------------------------------------------------------- export
    def data_export(self, data: PeriodogramData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Per dimension its peak, shares and known frequency; the image; the chosen dimension's spectrum."""
        dim = self.dim_data
        d_model = data.params.d_model
        known = data.known_frequency if data.known_frequency is not None else np.full(d_model, np.nan)
        agrees = data.agrees if data.agrees is not None else np.zeros(d_model, dtype=bool)
        table = np.column_stack([np.arange(d_model), data.peak_frequency, 1.0 / data.peak_frequency,
                                 data.peak_share, data.lobe_share, data.variance, known, agrees.astype(np.float64)])
        arrays = {"dimensions": table, "frequency": data.frequency}
        if not data.constant_rows.all():  # an image of nothing but constant rows would be all −inf
            arrays["image"] = data.image
        meta = {
            "positions_analysed": data.positions,
            "columns": ["dim", "peak_frequency", "peak_wavelength", "peak_share", "lobe_share", "variance",
                        "known_frequency", "agrees"],
            "image": {"rows": "dimensions, each the largest of image_dims_per_row consecutive ones",
                      "columns": "log10 frequency, evenly spaced over log10_frequency_range",
                      "values": "log10 share of the power (Hann window), -inf: constant",
                      "shown": "omitted when every dimension is constant"},
            "image_dims_per_row": data.image_rows.stride,
            "log10_frequency_range": list(data.log_frequency_range),
            "summary": data.summary(),
        }
        if dim is not None and dim.params == data.params:
            arrays["dimension_spectrum"] = np.column_stack([dim.frequency, dim.share, dim.hann_share])
            meta["dimension"] = dim.dim
        return arrays, meta
