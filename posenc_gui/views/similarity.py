"""Similarity: position × position matrix and the profile against offset k."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from ..model import METRICS, AxisSample, EncodingParams, limits, pairwise, sample_axis
from ..model.panels.table_data import (
    MAX_PROFILE_WORK, MatrixData, ProfileData, compute_matrix, compute_profile, samples_within_budget,
)
from ..model.core.digits import pair_similarity, shown_number
from ..model.analyses.similarity import METRIC_LABELS
from ..model.analyses.compare import ShownMatrix
from .base import Panel
from .cursor import CursorAxis
from ..state import VIEW_SPECS
from .registry import DockPlacement, PanelOption
from .labels import HoverReadout, StatusText, clipped_levels, clipping_text, value_range_text
from .plotkit import (
    BLUE, FOREGROUND, MatrixPlot, ScreenCurve, add_canvas_title, add_plot, fit_y_range, new_layout_widget,
    set_axis_label, set_canvas_title, set_title, view_pixels,
)

FALLBACK_PIXELS = 600
#: The metrics that take both signs (diverging colours, see ``plotkit.colour_scale``); a distance cannot.
SIGNED_METRICS = ("dot", "cosine")
def _matrix_extent(data: MatrixData) -> str:
    """Which positions a sampled matrix shows: "every 512th position in both directions"."""
    if data.rows.stride == data.cols.stride:
        return f"{data.rows.describe('position')} in both directions"
    return f"rows: {data.rows.describe('position')}, columns: {data.cols.describe('position')}"


HOVER_PROMPT = "Hover over the matrix or the profile for the similarity of two positions."


class SimilarityPanel(Panel):
    """Position × position similarity (Toeplitz for sinusoidal) and its offset profile."""

    panel_id = "similarity"
    title = "Similarity"
    dock = DockPlacement("right", shown=True)
    model_functions = (compute_matrix, compute_profile)
    compares_matrix = True
    view_settings = ("reference",)
    cursor_axes = ("position",)
    cli_options = (PanelOption("--metric", "similarity measure", choices=tuple(METRICS), default="dot",
                               example="cosine"),
                   PanelOption("--reference", "reference position of the offset profile", spec=VIEW_SPECS["reference"],
                               example=3))
    help_text = (
        "Left: the similarity of PE(p) and PE(q) for every pair of positions (row p, column q), "
        "as dot product, cosine or Euclidean distance. For the sinusoidal scheme at even d "
        "PE(p)·PE(p+k) = Σ<sub>i</sub> cos(k·ω<sub>i</sub>) depends only on the offset k, so the "
        "matrix is constant along diagonals (Toeplitz): position is encoded relatively (at odd d the "
        "unpaired last sine adds sin(pω)·sin((p+k)ω), which does depend on p). "
        "Right: the row of the reference position, plotted against the offset k = q − p. "
        "Hover either for the similarity of two positions, with only the digits that float64 rounding "
        "leaves certain (the entries' errors summed over the d terms)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Metric:"))
        self.metric_box = QComboBox(self)
        for metric in METRICS:
            self.metric_box.addItem(METRIC_LABELS[metric], metric)
        self.metric_box.currentIndexChanged.connect(lambda _: self.schedule_update())
        self.header.addWidget(self.metric_box)
        self.reference = self.add_view_spin_box("Reference position:", "reference")
        self.reference_box = self.reference.box
        self.finish_header()
        self.canvas = new_layout_widget(self)
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.matrix = MatrixPlot(self.canvas.ci, "position q (column)", "position p (row)", "similarity",
                                 row=1, col=0)
        self.reference_line = pg.InfiniteLine(angle=0, pen=pg.mkPen("#444444", width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.matrix.plot.addItem(self.reference_line)
        self.profile_plot = add_plot(self.canvas.ci, "offset k = q − reference", "similarity", row=1, col=1)
        # connect="finite": pyqtgraph 0.14 raises painting a thick curve none of whose points is finite
        # (nope's cosine profile is all NaN) with the default "all"
        self.profile_curve = ScreenCurve(pen=pg.mkPen(BLUE, width=2), connect="finite")
        self.profile_plot.addItem(self.profile_curve)
        # A line through one point draws nothing: a one-position sequence's profile is this dot.
        self.profile_dot = pg.ScatterPlotItem(size=7, brush=BLUE, pen=None)
        self.profile_dot.hide()
        self.profile_plot.addItem(self.profile_dot)
        self.profile_zero = pg.InfiniteLine(angle=90, pos=0, pen=pg.mkPen(FOREGROUND, width=1))
        self.profile_plot.addItem(self.profile_zero)
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 2)
        self.body.addWidget(self.canvas, 1)
        self.hover_line = StatusText(HOVER_PROMPT, self)
        self.body.addWidget(self.hover_line)
        self.hover = HoverReadout(self.hover_line, HOVER_PROMPT, lambda pair: self.describe_pair(*pair),
                                  self._in_range)  # cells are (p, q)
        self.canvas.scene().sigMouseMoved.connect(self._hover)
        # Under the plot, where it has the panel's width (the header is full).
        self.sampling_label = StatusText(
            "Matrix every 8,192nd position in both directions (exact values); zoom in for every position.", self,
            wrap=True)
        self.sampling_label.hide()
        self.body.addWidget(self.sampling_label)
        self.matrix_data: MatrixData | None = None
        self.profile_data: ProfileData | None = None
        # A result that waits for the other half's, so both repaint together.
        self._held: dict[str, Callable[[], None]] = {}
        # The message of each half that failed, until that half succeeds.
        self._errors: dict[str, str] = {}
        self._profile_key: tuple[int, int] | None = None
        self._length: int | None = None
        # the cursor's row p and column q in the matrix; in the profile, its offset from the reference
        self.link_cursor(self.canvas, [
            CursorAxis(self.matrix.plot, "y", "position"), CursorAxis(self.matrix.plot, "x", "position"),
            CursorAxis(self.profile_plot, "x", "position", self._offset_of, self._position_at_offset)])
        self.debounce(self.resample, self.matrix.view_box.sigRangeChangedManually,
                      self.matrix.view_box.sigResized)
        self.debounce(self._request_profile, self.profile_plot.getViewBox().sigRangeChangedManually)
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    @property
    def metric(self) -> str:
        return self.metric_box.currentData()

    def apply_options(self, metric: str | None = None, reference: int | None = None) -> None:
        """The command line's and the walkthrough's options: :meth:`set_options`."""
        self.set_options(metric=metric, reference=reference)

    def current_options(self) -> dict[str, str]:
        """The metric (the reference position is a view setting)."""
        return {"metric": self.metric}

    def set_options(self, metric: str | None = None, reference: int | None = None) -> None:
        """Choose the metric and/or reference position (used by scripts and export)."""
        if metric is not None:
            if metric not in METRICS:
                raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
            self.metric_box.setCurrentIndex(self.metric_box.findData(metric))
        if reference is not None:
            limit = self.state.params.seq_len - 1
            self.state.set_view(reference=limits.check_int("reference", reference, 0, limit))

    def _on_params(self, params: EncodingParams) -> None:
        # Only on a new length: QSpinBox.setRange re-lays out the dock and the
        # window even when the range is unchanged.
        if params.seq_len != self._length:
            self.reference_box.blockSignals(True)
            self.reference.set_range(0, params.seq_len - 1)
            self.reference_box.blockSignals(False)
            if self.state.view["reference"] >= params.seq_len:  # the middle: the profile shows offsets both ways
                self.state.set_view(reference=params.seq_len // 2)
            self._length = params.seq_len
            extent = (-0.5, params.seq_len - 0.5)
            self.matrix.set_full_range(extent, extent)
        self.schedule_update()

    def _view_changed(self, name: str, value: object) -> None:
        if name == "reference" and self.unavailable_message() is None:  # only the profile depends on it
            self._request_profile()

    def request_update(self) -> None:
        """Evaluate the visible matrix and profile in workers; the newest request wins."""
        self._request_matrix()
        self._request_profile()

    def _request_matrix(self) -> None:
        params, metric = self.state.params, self.metric
        vb = self.matrix.view_box
        (x0, x1), (y0, y1) = vb.viewRange()
        width, height = view_pixels(vb, FALLBACK_PIXELS)
        budget = samples_within_budget(max(width, height), params.d_model)
        rows = sample_axis(y0, y1, params.seq_len, min(height, budget))
        cols = sample_axis(x0, x1, params.seq_len, min(width, budget))
        self.compute.submit((self, "matrix"), lambda: compute_matrix(params, metric, rows, cols),
                            lambda data: self._arrived("matrix", lambda: self._show_matrix(data)),
                            lambda error: self._failed("matrix", error))

    def _request_profile(self) -> None:
        params, metric, reference = self.state.params, self.metric, self.state.view["reference"]
        vb = self.profile_plot.getViewBox()
        (k0, k1), _ = vb.viewRange()
        if self._profile_key != (params.seq_len, reference):  # new extent: show all offsets
            self._profile_key = (params.seq_len, reference)
            k0, k1 = -reference, params.seq_len - 1 - reference
            vb.setLimits(xMin=k0 - 0.5, xMax=k1 + 0.5)
            vb.setXRange(k0, k1, padding=0.02)
        width, _ = view_pixels(vb, FALLBACK_PIXELS)
        points = samples_within_budget(2 * width, params.d_model, MAX_PROFILE_WORK, square=False)
        targets = sample_axis(reference + k0, reference + k1, params.seq_len, points)
        self.compute.submit((self, "profile"), lambda: compute_profile(params, metric, reference, targets),
                            lambda data: self._arrived("profile", lambda: self._show_profile(data)),
                            lambda error: self._failed("profile", error))

    def _arrived(self, part: str, show: Callable[[], None]) -> None:
        """Show a result, or hold it while the other half of the canvas is still computing.

        After a parameter change the matrix and the profile come from two
        workers, in separate event-loop turns; shown as they come, the
        canvas would repaint twice per slider step.
        """
        if self.unavailable_message() is not None:  # the scheme changed to one the panel does not show
            self._held = {}
            return
        self._held[part] = show
        other = "profile" if part == "matrix" else "matrix"
        if not self.compute.is_pending((self, other)):
            self._show_held()

    def _show_held(self) -> None:
        held, self._held = self._held, {}
        for show in held.values():
            show()

    def _failed(self, part: str, error: Exception) -> None:
        self._show_held()  # the other half, if it is waiting, is still good
        self._errors[part] = str(error)
        self._show_errors()

    def _show_errors(self) -> None:
        """The message bar shows what failed, matrix or profile, until that half succeeds."""
        self.show_message(" ".join(dict.fromkeys(self._errors.values())), "error")

    # ----------------------------------------------------------------- hover
    def _hover(self, scene_pos) -> None:
        pair = self.matrix.cell_at(scene_pos)  # (row p, column q)
        profile_box = self.profile_plot.getViewBox()
        if pair is None and self.profile_data is not None and profile_box.sceneBoundingRect().contains(scene_pos):
            reference = self.profile_data.reference
            pair = (reference, reference + int(round(profile_box.mapSceneToView(scene_pos).x())))
        self.hover.hover(pair)

    def _offset_of(self, position: int) -> float | None:
        """The profile's offset k of ``position`` from the reference it shows (None before it shows one)."""
        return None if self.profile_data is None else float(position - self.profile_data.reference)

    def _position_at_offset(self, offset: float) -> int:
        reference = self.state.view["reference"] if self.profile_data is None else self.profile_data.reference
        return reference + int(round(offset))

    def _in_range(self, pair: tuple[int, int]) -> bool:
        length = self.state.params.seq_len
        return 0 <= pair[0] < length and 0 <= pair[1] < length

    def describe_pair(self, p: int, q: int) -> str:
        """``"p 12, q 40 (offset k = 28): dot product = 131.031237702"``: only the digits rounding leaves certain."""
        shown = self.matrix_data  # the parameters of what is on screen (the current ones once it is up to date)
        params, metric = (shown.params, shown.metric) if shown is not None else (self.state.params, self.metric)
        value, error = pair_similarity(params, p, q, metric)
        return f"p {p:,}, q {q:,} (offset k = {q - p:,}): {METRIC_LABELS[metric]} = {shown_number(value, error)}"

    # ------------------------------------------------------------------ show
    def _show_matrix(self, data: MatrixData) -> None:
        self.matrix_data = data
        self.hover.refresh()  # new parameters or metric
        (y0, y1), (x0, x1) = data.rows.extent, data.cols.extent
        signed = data.metric in SIGNED_METRICS
        self.matrix.set_colorbar_label(METRIC_LABELS[data.metric] + ("" if data.colour_bound is None else " (clipped)"))
        self.matrix.set_matrix(data.matrix, QRectF(x0, y0, x1 - x0, y1 - y0), signed=signed,
                               levels=clipped_levels(data.colour_bound, signed))
        self.matrix.set_title(f"{METRIC_LABELS[data.metric]} of PE(p) and PE(q)")
        set_canvas_title(self.figure_title, data.params.title())
        sampled = data.rows.stride > 1 or data.cols.stride > 1
        self.sampling_label.setText(
            f"Matrix {_matrix_extent(data)} (exact values); zoom in for every position." if sampled else "")
        if self.sampling_label.isHidden() == sampled:  # shown only while sampled (a relayout, rarely)
            self.sampling_label.setVisible(sampled)
        self._errors.pop("matrix", None)
        self._show_errors()

    def _show_profile(self, data: ProfileData) -> None:
        self.profile_data = data
        self.reference_line.setPos(data.reference)
        self.profile_curve.setData(data.offsets, data.profile)
        # an undefined value (the cosine with a zero vector) gets no dot: pyqtgraph warns on an all-NaN one
        single = data.offsets.size == 1 and bool(np.isfinite(data.profile).all())
        if single:
            self.profile_dot.setData(x=data.offsets, y=data.profile)
        if self.profile_dot.isVisible() != single:
            self.profile_dot.setVisible(single)
        fit_y_range(self.profile_plot, data.profile)
        set_axis_label(self.profile_plot.getAxis("left"), METRIC_LABELS[data.metric])
        set_title(self.profile_plot, f"from p = {data.reference:,} (dashed)")
        self.redraw_cursor()  # its offset from the new reference
        self._errors.pop("profile", None)
        self._show_errors()

    def shown_matrix(self) -> ShownMatrix | None:
        """The shown similarity samples at their positions p (rows) and q (columns)."""
        data = self.matrix_data
        if data is None:
            return None
        return ShownMatrix(data.matrix, data.rows.indices(), data.cols.indices(), "position p", "position q")

    def linked_view_boxes(self) -> list:
        return [self.matrix.view_box]

    def headline(self) -> str:
        """The sampling of the matrix (the line under it)."""
        return self.sampling_label.text()

    def figure_caption(self) -> str:
        """The ranges of the matrix and the profile, and which positions they show when sampled."""
        matrix, profile = self.matrix_data, self.profile_data
        ranges, sampled = [], []
        if matrix is not None:
            ranges.append(value_range_text(f"Matrix ({METRIC_LABELS[matrix.metric]})", matrix.matrix))
            if matrix.colour_bound is not None:
                ranges.append(clipping_text(matrix.colour_bound, matrix.metric in SIGNED_METRICS))
            if matrix.rows.stride > 1 or matrix.cols.stride > 1:
                sampled.append(f"Matrix: {_matrix_extent(matrix)}.")
        if profile is not None:
            ranges.append(value_range_text(f"Profile from p = {profile.reference:,}", profile.profile))
            if profile.stride > 1:
                sampled.append(f"Profile: {AxisSample(0, profile.stride, 1).describe('offset')} k.")
        return " ".join(ranges + sampled + (["Exact values at the positions shown."] if sampled else []))

    def export_data(self) -> dict[str, Any]:
        """The full matrix when it fits the limits, else refused with the reason."""
        p = self.state.params
        limits.check_size("similarity export", p.seq_len, p.seq_len, limits.MAX_SIMILARITY_ELEMENTS)
        pe = p.encode()
        matrix = pairwise(pe, pe, self.metric)
        reference = self.state.view["reference"]
        meta = {"panel": self.panel_id, "params": p.as_dict(), "metric": self.metric,
                "reference": reference, "rows": "position p", "columns": "position q"}
        return {"arrays": {"similarity": matrix, "profile": matrix[reference]}, "meta": meta}
