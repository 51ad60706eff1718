"""Attention bias: a bias scheme's matrix for the chosen head, with ALiBi's slopes or T5's bucket map beside it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QWidget

from ..model.bias.data import AttentionBiasData, attention_bias_data, bias_at
from ..model.bias.t5 import BucketMap
from ..model.core.sampling import sample_axis
from ..model.analyses.compare import ShownMatrix
from .base import Panel
from .labels import StatusText, plain_text
from .plotkit import (
    BLUE, MASKED_COLOUR, NO_PEN, ORANGE, MatrixPlot, add_canvas_title, new_plot, prepare_for_paint, set_axis_label,
    set_canvas_title, set_ticks, set_title, set_y_range, shared_brush, show_grid, style_plot, view_pixels,
)

#: Pixels per axis sampled before the canvas is laid out (a headless export).
FALLBACK_PIXELS = 600
HOVER_PROMPT = "Hover over the matrix for the bias of a query and a key."
GREY = "#555555"
#: The bucket map's marks: max_exact (exact | log-spaced), max_distance, and the halves of a bidirectional map.
EXACT_PEN = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DashLine)
DISTANCE_PEN = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DotLine)
HALVES_PEN = pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DashLine)
MASKED_BRUSH = pg.mkBrush(pg.mkColor(MASKED_COLOUR).red(), pg.mkColor(MASKED_COLOUR).green(),
                          pg.mkColor(MASKED_COLOUR).blue(), 110)
LOG10_2 = math.log10(2.0)
#: The bucket map's initial reach: this many times the farthest change of bucket (or max_distance) each way.
BUCKET_MARGIN = 1.2


def _key(items: list[tuple[str, str]]) -> str:
    """A plot's key in its title: ``(colour, "━ text")`` entries side by side."""
    return " &nbsp; ".join(f'<span style="color:{colour}">{text}</span>' for colour, text in items)


def _set_visible(item: pg.GraphicsObject, visible: bool) -> None:
    """Show or hide ``item``, only if that changes it (each change repaints the plot)."""
    if item.isVisible() != visible:
        item.setVisible(visible)


def _power_of_two_ticks(low: float, high: float) -> list[list[tuple[float, str]]]:
    """Ticks of a log10 axis over ``[low, high]`` at the powers of two 1, 1/2, 1/4 … (ALiBi's slopes)."""
    highest, lowest = math.floor(high / LOG10_2), math.ceil(low / LOG10_2)  # exponents of two within the range
    return [[(k * LOG10_2, "1" if k == 0 else f"1/{2 ** -k:,}") for k in range(highest, lowest - 1, -1)], []]


def _power_of_two(slope: float) -> str:
    """``"2^−4"`` for a slope that is a power of two, else ``"2^−3.5"`` (an ALiBi slope is 2 to a rational)."""
    return f"2^{math.log2(slope):.6g}".replace("-", "−")


class AttentionBiasPanel(Panel):
    """The bias of one head over query × key positions; ALiBi's slope of every head or T5's bucket map."""

    panel_id = "bias"
    title = "Attention bias"
    requires = frozenset({"bias"})
    model_function = attention_bias_data
    keeps_results = True  # a scheme switched back to shows its last view at once
    model_functions = (bias_at,)
    compares_matrix = True
    help_text = (
        "A bias scheme adds a number to the attention logit of a query at m and a key at n, and adds nothing to the "
        "embeddings. <b>Left</b>: that bias for the chosen head, query m in rows, key n in columns; grey cells are "
        "masked (−inf: a causal bias's keys after the query, n > m). "
        "<b>ALiBi</b> (Press et al. 2022): −m<sub>h</sub>·(m − n), a penalty linear in the distance with one slope "
        "per head; <b>right</b>: every head's slope (log scale), the chosen one orange. For n heads a power of two "
        "the slopes are 2<sup>−8k/n</sup>, k = 1 … n; otherwise those of the power of two c below n, then every "
        "other slope of 2c heads. "
        "<b>T5</b> (Raffel et al. 2020): table[bucket(n − m), head]; <b>right</b>: the bucket of every relative "
        "position n − m. Distances below max_exact (dashed) have a bucket each, larger ones share log-spaced "
        "buckets, and from about max_distance (dotted) every key shares its side's last bucket; bidirectional "
        "(encoder) maps keys after the query to the upper half of the buckets (above the orange line), causal "
        "(decoder) masks them. The bucket map is exact; T5's bias values here are an untrained draw, N(0, σ²) with "
        "σ = d_model<sup>−0.5</sup> as Hugging Face initialises them, not a trained model's. "
        "At long contexts the matrix is sampled (zoom in for every position); the bias at each sampled pair is exact."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.matrix = MatrixPlot(self.canvas.ci, "key position n (column)", "query position m (row)", "bias",
                                 row=1, col=0)
        self.side_plot: pg.PlotItem = new_plot(self.canvas, row=1, col=1)
        style_plot(self.side_plot)
        self.side_plot.hideButtons()
        show_grid(self.side_plot)
        # ALiBi: every head's slope, the chosen one on top (data items: they follow the log axis)
        self.slopes = pg.PlotDataItem(pen=None, symbol="o", symbolSize=6, symbolPen=NO_PEN,
                                      symbolBrush=shared_brush(BLUE))
        self.chosen = pg.PlotDataItem(pen=None, symbol="o", symbolSize=11, symbolPen=NO_PEN,
                                      symbolBrush=shared_brush(ORANGE))
        # T5: the bucket of every relative position, as steps, and the marks of its regions
        self.masked_region = pg.LinearRegionItem(orientation="vertical", movable=False, brush=MASKED_BRUSH,
                                                 pen=NO_PEN)
        self.bucket_curve = pg.PlotCurveItem(pen=pg.mkPen(BLUE, width=2))  # steps once it has data
        self.exact_lines = [pg.InfiniteLine(angle=90, pen=EXACT_PEN) for _ in range(2)]
        self.distance_lines = [pg.InfiniteLine(angle=90, pen=DISTANCE_PEN) for _ in range(2)]
        self.halves_line = pg.InfiniteLine(angle=0, pen=HALVES_PEN)
        self.alibi_items = (self.slopes, self.chosen)
        self.t5_items = (self.masked_region, self.bucket_curve, *self.exact_lines, *self.distance_lines,
                         self.halves_line)
        for item in (*self.alibi_items, *self.t5_items):
            self.side_plot.addItem(item, ignoreBounds=isinstance(item, pg.InfiniteLine))
            item.hide()
        self._log_y: bool | None = None
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 2)
        self.body.addWidget(self.canvas, 1)
        self.hover = self.add_hover_line(HOVER_PROMPT, self.matrix.cell_at, lambda cell: self.describe_cell(*cell),
                                         self._in_matrix)  # cells are (query m, key n)
        self.sampling_label = StatusText(
            "Matrix: every 4,096th position in both directions (the bias at each sampled pair is exact); zoom in "
            "for every position.", self, wrap=True)
        self.sampling_label.hide()
        self.body.addWidget(self.sampling_label)
        self._length: int | None = None
        self._side_key: tuple | None = None
        self.debounce(self.resample, self.matrix.view_box.sigRangeChangedManually,
                      self.matrix.view_box.sigResized)
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    def _on_params(self, params) -> None:
        if params.seq_len != self._length:  # a new length: the whole matrix again
            self._length = params.seq_len
            extent = (-0.5, params.seq_len - 0.5)
            self.matrix.set_full_range(extent, extent)
        self.schedule_update(params)

    # ------------------------------------------------------------------ data
    def model_arguments(self) -> tuple:
        """The parameters and the visible positions, about one per pixel."""
        params = self.state.params
        (x0, x1), (y0, y1) = self.matrix.view_box.viewRange()
        width, height = view_pixels(self.matrix.view_box, FALLBACK_PIXELS)
        return params, sample_axis(y0, y1, params.seq_len, height), sample_axis(x0, x1, params.seq_len, width)

    def show_data(self, data: AttentionBiasData) -> None:
        self._show_matrix(data)
        if data.slopes is not None:
            self._show_slopes(data)
        elif data.buckets is not None:
            self._show_buckets(data.buckets, data.params.seq_len)
        self._show_summary(data)
        set_canvas_title(self.figure_title, data.params.title())
        self.hover.refresh()
        prepare_for_paint(self.canvas)

    def _show_matrix(self, data: AttentionBiasData) -> None:
        (y0, y1), (x0, x1) = data.rows.extent, data.cols.extent
        self.matrix.set_matrix(data.matrix, QRectF(x0, y0, x1 - x0, y1 - y0), signed=True, masked=True)
        self.matrix.set_title(data.subject + (", grey: masked" if data.masked else ""))
        sampled = data.rows.stride > 1 or data.cols.stride > 1
        self.sampling_label.setText(f"{self._matrix_sampling(data)}; zoom in for every position." if sampled else "")
        if self.sampling_label.isHidden() == sampled:
            self.sampling_label.setVisible(sampled)

    def _use_items(self, items: tuple, log_y: bool) -> None:
        """Hide the other scheme's items of the side plot, and put it on a log or linear y axis.

        ``items`` (one scheme's) keep their visibility: the panel shows each of them as its data ask.
        """
        for item in (*self.alibi_items, *self.t5_items):
            if item not in items:
                _set_visible(item, False)
        if log_y != self._log_y:
            self._log_y = log_y
            self.side_plot.setLogMode(x=False, y=log_y)

    def _show_slopes(self, data: AttentionBiasData) -> None:
        self._use_items(self.alibi_items, log_y=True)
        for item in self.alibi_items:
            _set_visible(item, True)
        heads = np.arange(data.slopes.size, dtype=np.float64)
        self.slopes.setData(heads, data.slopes)
        self.chosen.setData([float(data.head)], [data.slope])
        set_axis_label(self.side_plot.getAxis("bottom"), "head")
        set_axis_label(self.side_plot.getAxis("left"), "slope m (log scale)")
        set_title(self.side_plot, _key([(BLUE, "● slope of each head"),
                                        (ORANGE, f"● head {data.head}: m = {data.slope:.6g}")]))
        key = ("slopes", data.slopes.size)
        if key != self._side_key:  # the range follows the heads only: changing the head keeps it
            self._side_key = key
            self.side_plot.setLimits(xMin=None, xMax=None)
            self.side_plot.setXRange(-0.5, max(data.slopes.size - 0.5, 0.5), padding=0.02)
            low, high = math.log10(float(data.slopes.min())) - 0.15, math.log10(float(data.slopes.max())) + 0.15
            self.side_plot.setYRange(low, high, padding=0)
            set_ticks(self.side_plot.getAxis("left"), _power_of_two_ticks(low, high))

    def _show_buckets(self, buckets: BucketMap, seq_len: int) -> None:
        self._use_items(self.t5_items, log_y=False)
        for item in (self.bucket_curve, self.exact_lines[0], self.distance_lines[0]):
            _set_visible(item, True)
        edges = np.append(buckets.starts, seq_len).astype(np.float64) - 0.5  # run i covers starts[i] … starts[i+1] − 1
        self.bucket_curve.setData(edges, buckets.buckets.astype(np.float64), stepMode="center")
        for lines, distance in ((self.exact_lines, buckets.max_exact), (self.distance_lines, buckets.max_distance)):
            lines[0].setValue(-distance)
            lines[1].setValue(distance)
            _set_visible(lines[1], buckets.bidirectional)  # causal: the keys after the query have no buckets of their own
        _set_visible(self.halves_line, buckets.bidirectional)
        self.halves_line.setValue(buckets.side_buckets - 0.5)
        _set_visible(self.masked_region, not buckets.bidirectional and seq_len > 1)
        self.masked_region.setRegion((0.5, seq_len - 0.5))
        set_axis_label(self.side_plot.getAxis("bottom"), "relative position n − m (key − query)")
        set_axis_label(self.side_plot.getAxis("left"), "bucket")
        sign = "±" if buckets.bidirectional else "−"
        marks = [(GREY, f"╍ {sign}max_exact {buckets.max_exact:,}"),
                 (GREY, f"┄ {sign}max_distance {buckets.max_distance:,}")]
        marks.append((ORANGE, f"╍ halves: {buckets.side_buckets} buckets each") if buckets.bidirectional
                     else (GREY, "grey: keys after, masked"))
        set_title(self.side_plot, _key([(BLUE, "━ bucket"), *marks]))
        key = ("buckets", seq_len, buckets.farthest, buckets.max_distance, buckets.num_buckets)
        if key != self._side_key:  # a new map: show its structure, the far keys' one bucket at the edges
            self._side_key = key
            reach = min(seq_len - 0.5, BUCKET_MARGIN * max(buckets.farthest + 1, buckets.max_distance))
            self.side_plot.setLimits(xMin=-(seq_len - 0.5), xMax=seq_len - 0.5)
            self.side_plot.setXRange(-reach, reach, padding=0)
            set_y_range(self.side_plot, -0.5, buckets.num_buckets - 0.5, 0.02)
            set_ticks(self.side_plot.getAxis("left"), None)  # automatic: not ALiBi's powers of two

    # --------------------------------------------------------------- summary
    def _show_summary(self, data: AttentionBiasData) -> None:
        if data.slopes is not None:
            self.summary_label.setText(self._alibi_summary(data))
        elif data.buckets is not None:
            self.summary_label.setText(self._t5_summary(data))
        else:
            finite = data.matrix[np.isfinite(data.matrix)]
            span = f"from {finite.min():.6g} to {finite.max():.6g}" if finite.size else "masked everywhere"
            self.summary_label.setText(f"{data.subject.capitalize()}: {span} at the positions shown.")

    @staticmethod
    def _alibi_summary(data: AttentionBiasData) -> str:
        options, slope = data.params.options, data.slope
        n_heads, largest, smallest = options["n_heads"], int(np.argmax(data.slopes)), int(np.argmin(data.slopes))
        mask = ("symmetric: −m·|m − n| over every key" if options["symmetric"]
                else "keys after the query masked (causal, grey)")
        c = data.power_of_two_heads
        rule = (f"{n_heads} is a power of two: slopes 2^(−8k/{n_heads}), k = 1 … {n_heads}"
                if c == n_heads else
                f"{n_heads} is not a power of two: heads 0–{c - 1} have the slopes of {c} heads, heads "
                f"{c}–{n_heads - 1} every other slope of {2 * c}, so head {largest} has the largest")
        return (f"Head <b>{data.head}</b> of {n_heads}: slope m = <b>{slope:.6g}</b> = {_power_of_two(slope)}; "
                f"bias −{slope:.6g}·(m − n) for keys n ≤ m, {mask}. {rule}. Largest slope "
                f"{data.slopes[largest]:.6g} (head {largest}), smallest {data.slopes[smallest]:.6g} (head "
                f"{smallest}). d_model does not change the bias.")

    @staticmethod
    def _t5_summary(data: AttentionBiasData) -> str:
        buckets, options = data.buckets, data.params.options
        column = data.table[:, data.head]
        sides = (f"bidirectional (encoder): buckets 0–{buckets.side_buckets - 1} for keys at or before the query, "
                 f"{buckets.side_buckets}–{buckets.num_buckets - 1} after it" if buckets.bidirectional
                 else "causal (decoder): keys after the query masked (grey)")
        if not buckets.farthest:
            farthest = "every key shares one bucket"
        elif buckets.bidirectional:
            farthest = f"from distance {buckets.farthest:,} on, every key shares its side's last bucket"
        else:
            farthest = f"from distance {buckets.farthest:,} on, every key before the query shares the last bucket"
        return (f"Head <b>{data.head}</b> of {options['n_heads']}; {buckets.num_buckets} buckets, {sides}. "
                f"Distances 0–{buckets.max_exact - 1} have a bucket each, larger ones log-spaced buckets; {farthest} "
                f"(max_distance {buckets.max_distance:,}). The bucket map is exact; the biases are an untrained draw "
                f"(seed {options['seed']}, N(0, σ²), σ = d_model^−0.5 = {data.table_sigma:.4g}, as Hugging Face "
                f"initialises them), not a trained model's: this head's biases run from {column.min():.4g} to "
                f"{column.max():.4g}.")

    # ----------------------------------------------------------------- hover
    def _in_matrix(self, cell: tuple[int, int]) -> bool:
        length = self.data.params.seq_len if self.data is not None else 0
        return 0 <= cell[0] < length and 0 <= cell[1] < length

    def describe_cell(self, query: int, key: int) -> str:
        """``"query m 5, key n 3 (n − m = −2, bucket 2): bias 0.0123"``, exact at the positions under the mouse."""
        value, bucket = bias_at(self.data.params, query, key)
        shown = "masked (−inf)" if np.isneginf(value) else f"{value:.10g}"
        in_bucket = "" if bucket is None else f", bucket {bucket}"
        return f"query m {query:,}, key n {key:,} (n − m = {key - query:,}{in_bucket}): bias {shown}"

    # --------------------------------------------------------------- compare
    def shown_matrix(self) -> ShownMatrix | None:
        """The shown bias at its query positions (rows) and key positions (columns)."""
        if self.data is None:
            return None
        return ShownMatrix(self.data.matrix, self.data.rows.indices(), self.data.cols.indices(),
                           "query position", "key position")

    def linked_view_boxes(self) -> list:
        return [self.matrix.view_box]

    # ---------------------------------------------------------------- export
    @staticmethod
    def _matrix_sampling(data: AttentionBiasData) -> str:
        if data.rows.stride == data.cols.stride:
            where = f"{data.rows.describe('position')} in both directions"
        else:
            where = f"rows: {data.rows.describe('position')}, columns: {data.cols.describe('position')}"
        return f"Matrix: {where} (the bias at each sampled pair is exact)"

    def figure_caption(self) -> str:
        """The headline numbers, how the matrix is sampled, and how exact the bucket map is."""
        if self.data is None:
            return ""
        data, parts = self.data, [plain_text(self.summary_label.text())]
        if data.rows.stride > 1 or data.cols.stride > 1:
            parts.append(f"{self._matrix_sampling(data)}.")
        if data.buckets is not None:
            beyond = (f"beyond ±{data.buckets.farthest:,} each side keeps its last bucket" if data.buckets.bidirectional
                      else f"keys farther than {data.buckets.farthest:,} before the query keep the last bucket")
            parts.append(f"Bucket map: exact at every relative position; {beyond}.")
        return " ".join(parts)

    def data_export(self, data: AttentionBiasData) -> tuple[dict[str, Any], dict[str, Any]]:
        """The bias matrix at its positions, with ALiBi's slopes or T5's bucket runs and bias table."""
        arrays: dict[str, np.ndarray] = {"bias": data.matrix, "query_positions": data.rows.indices(),
                                         "key_positions": data.cols.indices()}
        meta: dict[str, Any] = {"rows": "query position m", "columns": "key position n", "head": data.head,
                                "masked_cells": data.masked, "masked_value": "-inf"}
        if data.rows.stride > 1 or data.cols.stride > 1:
            meta["sampled"] = self._matrix_sampling(data)
        if data.slopes is not None:
            arrays["slopes"] = data.slopes
            meta["slope"] = data.slope
        if data.buckets is not None:
            arrays["bucket_runs"] = np.column_stack([data.buckets.starts, data.buckets.buckets])
            arrays["table"] = data.table
            meta.update(bucket_runs_columns=["first relative position n - m", "bucket"],
                        table_rows="bucket", table_columns="head", table_sigma=data.table_sigma,
                        table="an untrained draw N(0, sigma^2), sigma = d_model^-0.5, not a trained model's")
        return arrays, meta
