"""RoPE precision: the error of a model dtype's cos and sin against float64, per position and rotary pair."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from ..model.rope.precision import (
    DTYPES, POSITION_CHOICES, RopePrecisionData, check_dtype, check_positions, rope_precision_data,
)
from .base import RopeOnlyPanel
from .plotkit import (
    BLUE, ORANGE, MatrixPlot, new_plot, prepare_for_paint, set_ticks, show_grid, style_plot,
)
from .plotkit.stacked import StackedX
from .registry import PanelOption

#: The choices of the position ids, as the combo box shows them.
POSITION_LABELS = {"float32": "position ids in float32 (Hugging Face)", "model": "position ids in the model dtype"}
#: Decades of the colour scale at most (errors below its bottom share its colour).
COLOUR_DECADES = 8
#: The pens of the cast-alone line and of the markers of the first indistinguishable and overflowing positions.
ROUNDOFF_PEN = pg.mkPen("#666666", width=1, style=Qt.PenStyle.DashLine)
MARKER_PEN = pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DashLine)


def decade_levels(error: np.ndarray) -> tuple[int, int]:
    """The colour scale's decades (log10): up to the largest finite error, at most :data:`COLOUR_DECADES` below."""
    finite = error[np.isfinite(error) & (error > 0)]
    if finite.size == 0:
        return -COLOUR_DECADES, 0
    high = math.ceil(math.log10(finite.max()))
    low = max(math.floor(math.log10(finite.min())), high - COLOUR_DECADES)
    return low, max(high, low + 1)


def _span(counts: np.ndarray) -> str:
    """``"128"``, or ``"1,024 to 1,025"`` when the bins differ."""
    low, high = int(counts.min()), int(counts.max())
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"


class RopePrecisionPanel(RopeOnlyPanel):
    """The error of RoPE's cos and sin in float32, bfloat16 or float16 against float64, computed as models do."""

    panel_id = "precision"
    title = "RoPE precision"
    rope_subject = "Hugging Face computation"
    model_function = rope_precision_data
    cli_options = (
        PanelOption("--dtype", "model dtype of cos and sin (float64 is the reference)", choices=DTYPES,
                    default="bfloat16", example="float16"),
        PanelOption("--position-ids", "where the position ids are made: float32 (Hugging Face) or model (the "
                    "model dtype)", choices=POSITION_CHOICES, default="float32", example="model"),
    )
    help_text = (
        "A model computes RoPE as Hugging Face's LlamaRotaryEmbedding does: the inverse frequencies "
        "θ<sub>i</sub> in float32, the position ids as float32, the angles p·θ<sub>i</sub> in float32, "
        "cos and sin in float32 (times the attention factor), then rounded to the model's dtype. The map "
        "shows, per position (columns; for long N each column is the largest over the positions it covers) "
        "and rotary pair (rows), the distance between the model's (cos, sin) and float64's, log colour "
        "scale; the curve below is its largest value over the pairs, with the dashed line at what the cast "
        "to the dtype alone can move them. The float32 angle loses about p·θ<sub>i</sub>·2<sup>−24</sup>, "
        "so the fast pairs err most at long N. “Position ids in the model dtype” rounds the ids "
        "first, as code does that makes them with the model's dtype: bfloat16 holds integers exactly only "
        "to 256 (257 becomes 256), float16 to 2048, and float16 ids are infinite from 65,520. The first "
        "indistinguishable position is the first p whose cos and sin equal those of p + 1 in every pair."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("dtype:", self))
        self.dtype_box = QComboBox(self)
        for dtype in DTYPES:
            self.dtype_box.addItem(dtype, dtype)
        self.dtype_box.setCurrentIndex(DTYPES.index("bfloat16"))
        self.dtype_box.setToolTip("The model's dtype, which cos and sin are rounded to (float64 is the reference)")
        self.dtype_box.currentIndexChanged.connect(lambda _: self.schedule_update())
        self.header.addWidget(self.dtype_box)
        self.positions_box = QComboBox(self)
        for where in POSITION_CHOICES:
            self.positions_box.addItem(POSITION_LABELS[where], where)
        self.positions_box.currentIndexChanged.connect(lambda _: self.schedule_update())
        self.header.addWidget(self.positions_box)
        self.add_headline_and_canvas()
        self.matrix = MatrixPlot(self.canvas.ci, "position p", "rotary pair i", "error", row=0, col=0)
        self.curve_plot: pg.PlotItem = new_plot(self.canvas, row=1, col=0)
        style_plot(self.curve_plot)
        self.curve_plot.hideButtons()
        show_grid(self.curve_plot)
        self.curve_plot.setLogMode(x=False, y=True)
        self.curve_plot.setLabel("bottom", "position p")
        self.curve_plot.setLabel("left", "largest error over the pairs")
        self.curve_plot.setXLink(self.matrix.plot)
        # the same left and right edges as the map's view (whose colour bar is on its right): the same range
        self.stacked = StackedX([self.matrix.plot, self.curve_plot], self.matrix.colorbar)
        self.canvas.ci.layout.setRowStretchFactor(0, 3)
        self.canvas.ci.layout.setRowStretchFactor(1, 2)
        self.curve = self.curve_plot.plot(pen=pg.mkPen(BLUE, width=2), stepMode="center")
        self.roundoff_line = pg.InfiniteLine(angle=0, pen=ROUNDOFF_PEN)
        self.curve_plot.addItem(self.roundoff_line, ignoreBounds=True)
        self.indistinguishable_line = pg.InfiniteLine(angle=90, pen=MARKER_PEN)
        self.curve_plot.addItem(self.indistinguishable_line, ignoreBounds=True)
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    # ------------------------------------------------------------- options
    @property
    def dtype(self) -> str:
        """The chosen model dtype."""
        return self.dtype_box.currentData()

    @property
    def position_ids(self) -> str:
        """Where the position ids are made: ``"float32"`` or ``"model"``."""
        return self.positions_box.currentData()

    def apply_options(self, dtype: str | None = None, position_ids: str | None = None) -> None:
        """Choose the dtype and where the position ids are made; ValueError naming a value not offered."""
        if dtype is not None:
            self.dtype_box.setCurrentIndex(DTYPES.index(check_dtype(dtype)))
        if position_ids is not None:
            self.positions_box.setCurrentIndex(POSITION_CHOICES.index(check_positions(position_ids, "position_ids")))

    def current_options(self) -> dict[str, str]:
        """The dtype and the position ids' choice."""
        return {"dtype": self.dtype, "position_ids": self.position_ids}

    # ------------------------------------------------------------- drawing
    def model_arguments(self) -> tuple:
        """The parameters, the dtype and where the position ids are made."""
        return self.state.params, self.dtype, self.position_ids

    def show_data(self, data: RopePrecisionData) -> None:
        seq_len, pairs = data.params.seq_len, data.inv_freq.size
        low, high = decade_levels(data.error)
        shown = np.log10(np.clip(data.error, 10.0 ** low, 10.0 ** high)).T  # rows: pairs
        self.matrix.set_matrix(shown, QRectF(-0.5, -0.5, seq_len, pairs), levels=(low, high), signed=False)
        self.matrix.set_colorbar_label("error |(cos, sin) − float64| (log scale)")
        self.matrix.set_colorbar_ticks([[(decade, f"1e{decade}") for decade in range(low, high + 1)]])
        self.matrix.set_full_range((-0.5, seq_len - 0.5), (-0.5, pairs - 0.5))
        self.matrix.set_title(data.title())
        per_bin = np.clip(data.max_error_per_bin, 10.0 ** low, 10.0 ** high)
        self.curve.setData(data.bin_edges.astype(np.float64) - 0.5, per_bin)
        self.roundoff_line.setValue(math.log10(data.unit_roundoff * data.attention_factor))
        self.curve_plot.setLabel("left", "largest error over the pairs" if data.coverage.proved
                                 else "largest over the pairs and sampled positions")
        self.curve_plot.setYRange(low, high, padding=0.02)
        set_ticks(self.curve_plot.getAxis("left"), [[(decade, f"1e{decade}") for decade in range(low, high + 1)]])
        marker = data.first_indistinguishable
        self.indistinguishable_line.setVisible(marker is not None)
        if marker is not None:
            self.indistinguishable_line.setValue(marker)
        self.summary_label.setText(self._summary(data))
        prepare_for_paint(self.canvas)

    @staticmethod
    def _summary(data: RopePrecisionData) -> str:
        seq_len = data.params.seq_len
        largest = "∞" if math.isinf(data.max_error) else f"{data.max_error:.3g}"
        widths = np.diff(data.bin_edges)
        sampling = ("" if widths.max() == 1 else
                    f" Each column is the largest error over {_span(data.evaluated)} evaluated of its "
                    f"{_span(widths)} positions.")
        first = data.first_indistinguishable
        if first is None:
            told = (f"every position can be told from the next up to N − 1 = {seq_len - 1:,} "
                    f"({data.position_dtype} position ids stay exact up to {data.position_collision:,})")
        elif first == data.position_collision:
            told = (f"the first position that cannot be told from the next is <b>{first:,}</b>: position ids "
                    f"{first:,} and {first + 1:,} round to the same {data.position_dtype} value")
        else:
            told = (f"the first position that cannot be told from the next is <b>{first:,}</b>: the cos and sin "
                    f"of every pair round to the same {data.dtype} values at {first:,} and {first + 1:,}")
        if first is not None:
            told += " (orange line)"
        overflow = (f" {data.position_dtype} position ids are infinite from {data.overflow_position:,}: cos and sin "
                    "are NaN there (error ∞)." if data.overflow_position is not None
                    and data.overflow_position < seq_len else "")
        return (
            f"<b>{data.dtype}</b> (position ids in {data.position_dtype}) against float64: largest error "
            f"<b>{largest}</b> {data.coverage.extent()}, at position {data.max_error_position:,}, pair "
            f"{data.max_error_pair} (the cast alone moves cos and sin by at most "
            f"{data.unit_roundoff * data.attention_factor:.3g}, dashed); {told}.{overflow}{sampling}"
        )

    def data_export(self, data: RopePrecisionData) -> tuple[dict[str, Any], dict[str, Any]]:
        """The error per position bin and pair, the bins, both frequencies; the summary numbers in ``meta``."""
        bins = np.column_stack([data.bin_edges[:-1], data.bin_edges[1:] - 1, data.evaluated, data.max_error_per_bin])
        arrays = {
            "error": data.error,
            "bins": bins,
            "inv_freq": data.inv_freq.astype(np.float64),
            "inv_freq_reference": data.inv_freq_reference,
        }
        return arrays, {
            "dtype": data.dtype,
            "position_ids": data.position_dtype,
            "error": "max over each bin's evaluated positions of |(cos, sin)_dtype − (cos, sin)_float64|; "
                     "rows: position bins, columns: rotary pairs",
            "bins_columns": ["first_position", "last_position", "evaluated_positions", "max_error_over_pairs"],
            "sampled": not data.coverage.proved,
            "max_error": data.max_error,  # null when infinite: max_error_infinite says so
            "max_error_infinite": math.isinf(data.max_error),
            "max_error_position": data.max_error_position,
            "max_error_pair": data.max_error_pair,
            "max_error_coverage": {**data.coverage.as_dict(), "extent": data.coverage.extent()},
            "first_indistinguishable_position": data.first_indistinguishable,
            "first_indistinguishable_coverage": data.indistinguishable_coverage.as_dict(),
            "position_collision": data.position_collision,
            "overflow_position": data.overflow_position,
            "unit_roundoff": data.unit_roundoff,
            "attention_factor": data.attention_factor,
        }
