"""Magnitude: ‖p_i‖ against position, next to the size of a typical embedding ‖e_i‖."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..model.panels.panel_data import MagnitudeData, compute_magnitude
from .base import EmbeddingScalePanel
from .cursor import CursorAxis
from .plotkit import (
    BLUE, FOREGROUND, MAX_DOTS, ORANGE, add_legend_below, add_plot, nice_bounds,
    prepare_for_paint, set_title, set_y_range,
)

class MagnitudePanel(EmbeddingScalePanel):
    """How large the position vector is compared with the word embedding it is added to."""

    panel_id = "magnitude"
    title = "Magnitude"
    model_function = compute_magnitude
    model_in_process = False
    cursor_axes = ("position",)
    help_text = (
        "The encoding p<sub>i</sub> is added to the word embedding e<sub>i</sub>; if ‖p<sub>i</sub>‖ "
        "is much larger than ‖e<sub>i</sub>‖, position swamps meaning. Blue: ‖PE(i)‖ = "
        "√(Σ<sub>j</sub> PE(i, j)²) against position i. Orange: the typical norm of an embedding "
        "with independent N(0, σ²) entries, √(E‖e‖²) = σ·√d (σ is the embedding scale above). "
        "Naive: ‖p<sub>i</sub>‖ = i·√d grows without bound. Sinusoidal: each (sin, cos) pair "
        "contributes sin² + cos² = 1, so ‖p<sub>i</sub>‖² = d/2 at every position (odd d: "
        "the unpaired last sine adds sin² ≤ 1, so ‖p<sub>i</sub>‖² varies between ⌊d/2⌋ and ⌊d/2⌋ + 1)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        self.plot = add_plot(self.canvas.ci, "position i", "norm")
        self.legend = add_legend_below(self.canvas, self.plot, labelTextColor=FOREGROUND)
        self.norm_curve = self.plot.plot(pen=pg.mkPen(BLUE, width=2), name="‖p_i‖ (positional encoding)")
        self.embedding_curve = self.plot.plot(
            pen=pg.mkPen(ORANGE, width=2, style=Qt.PenStyle.DashLine), name="typical ‖e_i‖ = σ·√d")
        self.body.addWidget(self.canvas, 1)
        self.link_cursor(self.canvas, [CursorAxis(self.plot, "x", "position")])
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def show_data(self, data: MagnitudeData) -> None:
        x = data.positions
        dots = x.size <= MAX_DOTS
        self.norm_curve.setData(x, data.norms, symbol="o" if dots else None, symbolSize=4,
                                symbolBrush=BLUE, symbolPen=None)
        right = max(x[-1], 1)  # one position: a line from 0 to 0 would not be drawn at all
        self.embedding_curve.setData([0.0, right], [data.embedding, data.embedding])
        top = max(float(np.max(data.norms)), data.embedding)
        self.plot.setXRange(0, right, padding=0.02)
        set_y_range(self.plot, 0, nice_bounds(0.0, top * 1.1)[1] if top > 0 else 1.0)  # a round top
        params = data.params
        last = data.norms[-1]
        self.summary_label.setText(
            f"‖p‖ from <b>{np.min(data.norms):.4g}</b> to <b>{np.max(data.norms):.4g}</b> over positions "
            f"0…{params.seq_len - 1:,}; typical ‖e‖ = σ·√d = <b>{data.embedding:.4g}</b> "
            f"(σ = {data.scale:g}, d = {params.d_model:,}). At the last position ‖p‖ / ‖e‖ = "
            f"<b>{last / data.embedding:.3g}</b>."
        )
        # The message bar is not part of an exported figure: the title says the sampling too.
        sampled = f", {data.sample.describe('position')} and the last" if data.sample.stride > 1 else ""
        set_title(self.plot, f"{params.title()}{sampled}")
        if data.sample.stride > 1:
            self.show_message(f"Showing {data.sample.describe('position')} (and the last).", "info")
        else:
            self.show_message("")
        prepare_for_paint(self.canvas)

    def data_export(self, data: MagnitudeData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Positions and ‖p‖ (sampled as shown), and the typical embedding norm."""
        return {"norms": np.column_stack([data.positions, data.norms])}, {
            "columns": ["position", "pe_norm"],
            "embedding_scale": data.scale,
            "embedding_norm": data.embedding,
            "embedding_norm_estimate": "sqrt(E||e||^2) = scale * sqrt(d_model)",
            "position_stride": data.sample.stride,
        }
