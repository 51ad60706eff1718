"""Relative vs absolute: does PE(p)·PE(p + k) depend only on the offset k?"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSpinBox, QWidget

from ..model import AxisSample, EncodingParams
from ..model.analyses.analysis import MAX_OFFSETS
from ..model.panels.panel_data import RelativeData, relative_data
from .base import Panel
from .plotkit import (
    FOREGROUND, ORANGE, PALETTE, add_canvas_title, add_legend_below, fit_y_range, new_plot, nice_bounds,
    prepare_for_paint, set_canvas_title, set_integer_ticks, set_y_range, show_grid, style_plot,
)

MAX_REFERENCES = len(PALETTE)  # one palette colour per reference position


class RelativePanel(Panel):
    """Spread across p of PE(p)·PE(p+k) per offset, and the offset profile from several positions."""

    panel_id = "relative"
    title = "Relative vs absolute"
    model_function = relative_data
    help_text = (
        "Does the similarity of two positions depend only on how far apart they are (relative), or also "
        "on where they are (absolute)? For the sinusoidal encoding "
        "PE(p)·PE(p+k) = Σ<sub>i</sub> [sin(pω<sub>i</sub>)sin((p+k)ω<sub>i</sub>) + "
        "cos(pω<sub>i</sub>)cos((p+k)ω<sub>i</sub>)] = Σ<sub>i</sub> cos(k·ω<sub>i</sub>): "
        "independent of p at even d (at odd d the unpaired last sine adds sin(pω)·sin((p+k)ω), which "
        "depends on p). Left: for each offset k, the spread max<sub>p</sub> − min<sub>p</sub> of "
        "PE(p)·PE(p+k) over the positions p of the sequence (0 up to rounding for sinusoidal at even d; "
        "large for naive and all-sine). Right: the profile k ↦ PE(r)·PE(r+k) from several reference positions r, "
        "overlaid: the curves coincide exactly when the encoding is relative."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Offsets k up to:"))
        self.max_offset_box = QSpinBox(self)
        self.max_offset_box.setRange(1, 1_000_000)
        self.max_offset_box.setValue(64)
        self.max_offset_box.setGroupSeparatorShown(True)
        self.max_offset_box.valueChanged.connect(self.schedule_update)
        self.header.addWidget(self.max_offset_box)
        self.header.addWidget(QLabel("Reference positions:"))
        self.references_box = QSpinBox(self)
        self.references_box.setRange(1, MAX_REFERENCES)
        self.references_box.setValue(4)
        self.references_box.valueChanged.connect(self.schedule_update)
        self.header.addWidget(self.references_box)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.spread_plot: pg.PlotItem = new_plot(self.canvas, row=1, col=0)
        self.profile_plot: pg.PlotItem = new_plot(self.canvas, row=1, col=1)
        for plot in (self.spread_plot, self.profile_plot):
            style_plot(plot)
            show_grid(plot)
            plot.setLabel("bottom", "offset k")
        self.spread_plot.setLabel("left", "spread over p")
        self._spread_title = ""
        self._set_spread_title(1)
        self.profile_plot.setLabel("left", "PE(r)·PE(r+k)")
        self.profile_plot.setTitle("offset profile from reference positions r", size="10pt")
        self.spread_curve = self.spread_plot.plot(pen=pg.mkPen(ORANGE, width=2))
        self.legend = add_legend_below(self.canvas, self.profile_plot, labelTextColor=FOREGROUND)
        self.profile_curves: list[pg.PlotDataItem] = []
        self._profile_names: list[str] = []
        self.body.addWidget(self.canvas, 1)
        self._length: int | None = None
        state.paramsChanged.connect(self._on_params)
        self._on_params(state.params)

    def set_options(self, max_offset: int | None = None, references: int | None = None) -> None:
        """Choose the largest offset and the number of reference positions (walkthrough, scripts)."""
        if max_offset is not None:
            if not 1 <= max_offset <= self.max_offset_box.maximum():
                raise ValueError(f"max_offset must be in 1…{self.max_offset_box.maximum():,}, got {max_offset!r}")
            self.max_offset_box.setValue(int(max_offset))
        if references is not None:
            if not 1 <= references <= MAX_REFERENCES:
                raise ValueError(f"references must be in 1…{MAX_REFERENCES}, got {references!r}")
            self.references_box.setValue(int(references))

    def _on_params(self, params: EncodingParams) -> None:
        if params.seq_len != self._length:
            self._length = params.seq_len
            self.max_offset_box.blockSignals(True)
            self.max_offset_box.setValue(max(1, min(64, params.seq_len - 1)))
            self.max_offset_box.blockSignals(False)
        self.schedule_update()

    def model_arguments(self) -> tuple:
        """The parameters, the largest offset and the number of reference positions."""
        return self.state.params, self.max_offset_box.value(), self.references_box.value()

    def show_data(self, data: RelativeData) -> None:
        spread = data.spread
        k = spread.offsets
        self._set_spread_title(data.position_stride)
        self.spread_curve.setData(k, spread.spread, symbol="o" if k.size <= 128 else None, symbolSize=4,
                                  symbolBrush=ORANGE, symbolPen=None)
        # The spread axis starts at 0 and spans at least 1 % of the largest |dot product|, so
        # rounding noise (1e-14) of a relative encoding is drawn as the flat zero it is.
        # The top snaps to a round value (nice_bounds), so a step of d_model or base
        # keeps the axis as it is instead of laying its labels out again.
        scale = float(np.nanmax(np.abs(np.concatenate([spread.minimum, spread.maximum]))))
        top = max(float(np.nanmax(spread.spread)), 0.01 * scale, 1e-12) if scale > 0 else 1.0  # all 0: a unit axis
        set_y_range(self.spread_plot, 0, nice_bounds(0.0, top * 1.08)[1])
        self.spread_plot.setXRange(0, max(k[-1], 1), padding=0.02)

        names = [f"r = {reference:,.0f}" for reference in data.references]
        if names != self._profile_names:
            # New reference positions: new curves and legend. Otherwise only the data change.
            self.legend.clear()
            for curve in self.profile_curves:
                self.profile_plot.removeItem(curve)
            self.profile_curves = []
            for row, name in enumerate(names):
                color = PALETTE[row % len(PALETTE)]
                width = 3.5 if row == 0 else 1.8
                style = Qt.PenStyle.SolidLine if row == 0 else Qt.PenStyle.DashLine
                self.profile_curves.append(
                    self.profile_plot.plot(pen=pg.mkPen(color, width=width, style=style), name=name))
            self._profile_names = names
        for row, curve in enumerate(self.profile_curves):
            curve.setData(k, data.profiles[row])
        fit_y_range(self.profile_plot, *data.profiles)
        self.profile_plot.setXRange(0, max(k[-1], 1), padding=0.02)
        for plot in (self.spread_plot, self.profile_plot):  # offsets are integers
            set_integer_ticks(plot.getAxis("bottom"), 0, int(k[-1]))

        params = data.params
        set_canvas_title(self.figure_title, params.title())
        largest = float(np.nanmax(spread.spread))
        worst = int(np.nanargmax(spread.spread))
        self.summary_label.setText(
            f"{params.scheme}, d_model {params.d_model:,}: largest spread over p of PE(p)·PE(p+k) is "
            f"<b>{largest:.3g}</b> (at k = {k[worst]:,.0f}), while the dot products reach "
            f"{scale:.3g} in size; positions p = {data.positions[0]:,.0f}…{data.positions[-1]:,.0f}"
            + (f" ({AxisSample(0, data.position_stride, 1).describe('position')})"  # "every 2nd", not "2th"
               if data.position_stride > 1 else "")
            + f", offsets k = 0…{k[-1]:,.0f}" + (f" ({k.size:,} sampled)" if k.size < k[-1] + 1 else "") + "."
        )
        prepare_for_paint(self.canvas)

    def _set_spread_title(self, position_stride: int) -> None:
        """Title the spread plot; it says when the spread is over sampled positions p only.

        The message bar is not part of an exported figure, so the title says it.
        """
        title = "max<sub>p</sub> − min<sub>p</sub> of PE(p)·PE(p+k)"
        if position_stride > 1:
            title += f", p: {AxisSample(0, position_stride, 1).describe('position')}"  # "every 2nd", not "2th"
        if title != self._spread_title:
            self._spread_title = title
            self.spread_plot.setTitle(title, size="10pt")

    def data_export(self, data: RelativeData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Spread per offset (min, max, spread) and the reference profiles."""
        spread = data.spread
        arrays = {
            "spread": np.column_stack([spread.offsets, spread.minimum, spread.maximum, spread.spread]),
            "profiles": data.profiles,
            "references": data.references,
        }
        return arrays, {
            "columns": {"spread": ["k", "min", "max", "spread"],
                        "profiles": "rows: reference positions, columns: offsets k"},
            "positions_used": int(data.positions.size),
            "position_stride": data.position_stride,
            "max_offsets": MAX_OFFSETS,
        }
