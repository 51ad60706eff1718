"""Heatmap: positions × dimensions, evaluated at about one sample per pixel."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QLabel, QWidget

from ..model import AxisSample, EncodingParams, formula_term, limits, sample_axis
from ..model.panels.table_data import HeatmapData, compute_heatmap
from ..model.analyses.compare import ShownMatrix
from ..model.core.digits import entry_with_error, shown_number
from .base import TableOrAnglesPanel
from .cursor import CursorAxis
from .registry import DockPlacement
from .labels import (HoverReadout, NoticeLine, StatusText, WrappedLabelHolder, clipped_levels, clipping_text,
                     counted, value_range_text)
from .plotkit import MatrixImageItem, MatrixPlot, new_layout_widget, view_pixels

#: Used before the plot has been laid out and has a real pixel size.
FALLBACK_PIXELS = 1024
#: Greys out aliased dimensions (RGBA) without hiding their values.
ALIAS_SHADE = (128, 128, 128, 120)


NO_ALIASING = "No aliasing: every shown dimension is sampled at least twice per wavelength."


def _sampled(data: HeatmapData) -> bool:
    """Whether the heatmap shows fewer positions or dimensions than there are."""
    return data.positions.stride > 1 or data.dims.stride > 1


def _sampling_text(data: HeatmapData) -> str:
    """"Showing every 512th position and every 8th dimension (… samples, exact values)"."""
    return (f"Showing {data.positions.describe('position')} and {data.dims.describe('dimension')}"
            f" ({data.positions.count:,} × {data.dims.count:,} samples, exact values)")


def _aliasing_text(data: HeatmapData) -> str:
    """How many shown dimensions are sampled below their wavelength, and what that does."""
    return (f"{int(data.aliased.sum()):,} of the {data.dims.count:,} shown dimensions (greyed) have a wavelength "
            f"under 2 × the position step ({data.positions.stride:,}): their stripes are moiré.")


HOVER_PROMPT = "Hover over the heatmap for a cell's value and formula."


class HeatmapPanel(TableOrAnglesPanel):
    """PE matrix with position 0 at the top, diverging colours centred at 0."""

    panel_id = "heatmap"
    title = "Heatmap"
    dock = DockPlacement("right", shown=True)
    model_function = compute_heatmap
    keeps_results = True  # a scheme switched back to shows its last view at once
    compares_matrix = True
    cursor_axes = ("position", "dimension")
    help_text = (
        "Each row is the encoding vector of one position, each column one dimension: "
        "PE(pos, 2i) = sin(pos / base<sup>2i/d</sup>), PE(pos, 2i+1) = cos(pos / base<sup>2i/d</sup>) "
        "for the sinusoidal scheme. Blue is negative, red positive, white 0. Low dimensions "
        "oscillate fast (short wavelengths), high ones barely change. Hover a cell for its value "
        "and formula: the value shows only the digits that float64 rounding leaves certain, bounded by "
        "the position and the dimension (about 12 near position 100, 8 near 10⁶); scroll to zoom. "
        "Large matrices are drawn at about one sample per pixel (stated above the plot); every drawn "
        "value is the encoding at that sample's own position and dimension, not an average or an "
        "interpolation. Columns greyed out are "
        "sampled below their wavelength (aliased), so their stripes are moiré, not the function; "
        "the line above the plot says whether any are. For RoPE, which adds no table, the heatmap shows the "
        "rotation itself: what R(pos·θ<sub>i</sub>) makes of a query whose every pair is (1, 0): "
        "cos(pos·θ<sub>i</sub>) in the first channel of pair i and sin(pos·θ<sub>i</sub>) in the second, in the "
        "pairing's channel order (halves: i and i + d/2; interleaved: 2i and 2i + 1), with the chosen scaling's θ<sub>i</sub>. "
        "For xPos it is the same rotation (pairs interleaved) without xPos's scale ζ<sub>i</sub><sup>±pos/scale_base"
        "</sup>: that multiplies q and k, and only its product over a query and a key, ζ<sub>i</sub><sup>(m − n)/"
        "scale_base</sup>, reaches the logit (Positional logits shows it)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.sampling_label = StatusText("Showing every 512th position and every 8th dimension", self)
        self.header.addWidget(self.sampling_label, 1)
        self.finish_header(stretch=False)
        self.canvas = new_layout_widget(self)
        self.matrix = MatrixPlot(self.canvas.ci, "dimension (column)", "position (row)")
        self.alias_overlay = None
        # Whether the view aliases changes as the user zooms: said on a line
        # that keeps its height, so the plot never jumps under the mouse.
        self.alias_notice = NoticeLine(NO_ALIASING, self)
        self.body.addWidget(self.alias_notice)
        self.body.addWidget(self.canvas, 1)
        self.hover_label = QLabel(self)
        self.hover_label.setWordWrap(True)
        # Held: a new text on every mouse move must not re-lay out the window.
        self.body.addWidget(WrappedLabelHolder(self.hover_label, self))
        self.hover = HoverReadout(self.hover_label, HOVER_PROMPT, lambda cell: self.describe_cell(*cell),
                                  self._in_matrix)  # cells are (position, dimension)
        self._shape: tuple[int, int] | None = None
        # The whole new matrix, (columns, rows) in data coordinates, shown
        # once its values arrive (see _on_params).
        self._new_extents: tuple[tuple[float, float], tuple[float, float]] | None = None
        self.debounce(self.resample, self.matrix.view_box.sigRangeChangedManually,
                      self.matrix.view_box.sigResized)
        self.canvas.scene().sigMouseMoved.connect(self._hover)
        # the cursor's row (position) and column (dimension)
        self.link_cursor(self.canvas, [CursorAxis(self.matrix.plot, "y", "position"),
                                       CursorAxis(self.matrix.plot, "x", "dimension")])
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    # ------------------------------------------------------------------ data
    def _on_params(self, params: EncodingParams) -> None:
        shape = (params.seq_len, params.d_model)
        if shape != self._shape:
            # A new shape shows the whole matrix, but only together with its
            # values: re-ranging now would repaint the old image under the new
            # axes first (a wasted repaint where the values come from a worker).
            self._shape = shape
            self._new_extents = ((-0.5, params.d_model - 0.5), (-0.5, params.seq_len - 0.5))
        self.schedule_update()

    def visible_samples(self) -> tuple[AxisSample, AxisSample]:
        """The positions and dimensions to evaluate for the current view (or the new shape's) and size."""
        params = self.state.params
        (x0, x1), (y0, y1) = self._new_extents or self.matrix.view_box.viewRange()
        width, height = view_pixels(self.matrix.view_box, FALLBACK_PIXELS)
        return (sample_axis(y0, y1, params.seq_len, height), sample_axis(x0, x1, params.d_model, width))

    def model_arguments(self) -> tuple:
        """The parameters and the visible grid's positions and dimensions."""
        return (self.state.params, *self.visible_samples())

    def show_data(self, data: HeatmapData) -> None:
        if self._new_extents is not None and (data.params.seq_len, data.params.d_model) == self._shape:
            self.matrix.set_full_range(*self._new_extents)
            self._new_extents = None
        (y0, y1), (x0, x1) = data.positions.extent, data.dims.extent
        levels = clipped_levels(data.colour_bound)
        self.matrix.set_matrix(data.values, QRectF(x0, y0, x1 - x0, y1 - y0), levels=levels)
        self.matrix.set_colorbar_label("value" if levels is None else "value (clipped)")
        self.hover.refresh()
        self._show_aliasing(data, QRectF(x0, y0, x1 - x0, y1 - y0))
        self.matrix.set_title(data.params.title())
        if _sampled(data):
            self.sampling_label.setText(_sampling_text(data))
        else:
            self.sampling_label.setText(
                f"{counted(data.positions.count, 'position')} × {counted(data.dims.count, 'dimension')}")
        clipped = f" {clipping_text(data.colour_bound)}" if data.colour_bound is not None else ""
        if data.aliased.any():
            self.alias_notice.set_notice(f"Aliasing: {_aliasing_text(data)} Zoom in on positions to resolve "
                                         f"them.{clipped}", "warning")
        else:
            self.alias_notice.set_notice(NO_ALIASING + clipped, "warning" if clipped else "info")

    def _show_aliasing(self, data: HeatmapData, rect: QRectF) -> None:
        if not data.aliased.any():
            if self.alias_overlay is not None:
                self.alias_overlay.hide()
            return
        if self.alias_overlay is None:
            self.alias_overlay = MatrixImageItem()
            self.alias_overlay.setZValue(5)
            self.matrix.plot.addItem(self.alias_overlay)
        shade = np.zeros((1, data.aliased.size, 4), dtype=np.uint8)
        shade[0, data.aliased] = ALIAS_SHADE
        self.alias_overlay.setImage(shade, autoLevels=False, levels=(0, 255))
        self.alias_overlay.setRect(rect)
        self.alias_overlay.show()

    # ----------------------------------------------------------------- hover
    def _hover(self, scene_pos: QPointF) -> None:
        self.hover.hover(self.matrix.cell_at(scene_pos))

    def _in_matrix(self, cell: tuple[int, int]) -> bool:
        p = self.state.params
        return self.data is not None and 0 <= cell[0] < p.seq_len and 0 <= cell[1] < p.d_model

    def describe_cell(self, pos: int, dim: int) -> str:
        """``"pos 12, dim 7: 0.843853958732 = cos(pos / 10000^(2·3/512))"``: only the digits rounding leaves certain."""
        p = self.data.params if self.data is not None else self.state.params  # what is on screen
        value, error = entry_with_error(p, pos, dim)
        formula = formula_term(p.scheme, p.d_model, dim, **p.scheme_kwargs())
        return f"pos {pos:,}, dim {dim:,}: {shown_number(value, error)} = {formula}"

    # --------------------------------------------------------------- compare
    def shown_matrix(self) -> ShownMatrix | None:
        """The shown samples at their positions (rows) and dimensions (columns)."""
        if self.data is None:
            return None
        return ShownMatrix(self.data.values, self.data.positions.indices(), self.data.dims.indices(),
                           "position", "dimension")

    def linked_view_boxes(self) -> list:
        return [self.matrix.view_box]

    # ---------------------------------------------------------------- export
    def figure_caption(self) -> str:
        """The shown values' range, and the sampling and the aliasing of the figure when there are any."""
        data = self.data
        if data is None:
            return ""
        parts = [f"{_sampling_text(data)}." if _sampled(data) else "",
                 f"Aliasing: {_aliasing_text(data)}" if data.aliased.any() else "",
                 clipping_text(data.colour_bound) if data.colour_bound is not None else ""]
        return " ".join([value_range_text("Values", data.values), *(part for part in parts if part)])

    def headline(self) -> str:
        """What is shown and whether any dimension aliases (the lines above the plot)."""
        return f"{self.sampling_label.text()}. {self.alias_notice.text()}"

    def export_data(self) -> dict[str, Any]:
        """The full matrix when it fits the limits, else the shown samples (said in meta)."""
        p = self.state.params
        meta: dict[str, Any] = {"panel": self.panel_id, "params": p.as_dict()}
        if p.seq_len * p.d_model <= limits.MAX_ENCODE_ELEMENTS:
            values = p.encode()
            meta.update(rows="position 0…seq_len−1", columns="dimension 0…d_model−1", sampled=False)
            return {"arrays": {"encoding": values}, "meta": meta}
        data = self.data or compute_heatmap(p, *self.visible_samples())
        meta.update(sampled=True, rows=data.positions.describe("position"),
                    columns=data.dims.describe("dimension"))
        return {"arrays": {"encoding": data.values,
                           "positions": data.positions.indices(),
                           "dimensions": data.dims.indices()}, "meta": meta}
