"""RoPE context extension: per rotary pair, the angles of training against those each scaling method uses at N."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..model.rope.context import ContextExtensionData, context_methods, MethodContext, context_extension_data
from .base import RopeOnlyPanel
from .plotkit import (
    BLUE, FOREGROUND, LegendBelow, NO_PEN, ORANGE, add_canvas_title, new_plot, nice_bounds, prepare_for_paint,
    set_axis_label, set_canvas_title, set_integer_ticks, set_title, shared_brush, show_grid, snap_log_span, style_plot,
)
from .plotkit.theme import themed

#: The trained range's end (drawn wider than the used range, which may lie on it) and the line of one turn (2π).
GREY = "#666666"
TURN_PEN = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DashLine)
#: The frame of the chosen method's plot.
CHOSEN_PEN = pg.mkPen(FOREGROUND, width=2)
#: Up to this many pairs, each pair's values are marked with a dot as well as joined by a line.
MAX_MARKED_PAIRS = 64


class RopeContextPanel(RopeOnlyPanel):
    """One plot per scaling method, shared axes: the trained angle range and the range used at N, per pair."""

    panel_id = "context"
    title = "RoPE context extension"
    rope_subject = "scaling methods against the trained context"
    model_function = context_extension_data
    keeps_results = True  # a scheme switched back to shows its last view at once
    model_in_process = False
    help_text = (
        "In training, at the trained context L<sub>0</sub>, rotary pair i took the angles p·θ<sub>i</sub> for "
        "the positions p = 0 … L<sub>0</sub> − 1 (unscaled θ<sub>i</sub>): steps of θ<sub>i</sub> spanning "
        "[0, L<sub>0</sub>·θ<sub>i</sub>) (grey). If L<sub>0</sub>·θ<sub>i</sub> ≥ 2π (above the dashed line) the "
        "pair completed a turn and saw every direction, so a larger angle is a direction it knows. Otherwise "
        "it never saw the directions past L<sub>0</sub>·θ<sub>i</sub>. At N positions a scaling method's "
        "frequencies θ′<sub>i</sub> reach the angle (N − 1)·θ′<sub>i</sub> (blue); a pair that never completed "
        "a turn <b>meets angles training never showed</b> when (N − 1)·θ′<sub>i</sub> ≥ L<sub>0</sub>·θ<sub>i</sub> "
        "(vermillion: the part beyond training). Every method is computed with the same L<sub>0</sub> "
        "(original_max_position_embeddings, used here also for default, linear and ntk, which have none of "
        "their own), factor, rope_theta and head dimension; the framed plot is the chosen scaling type."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        #: The methods compared (the scaling types registered when the panel opens) in two rows of small multiples.
        self.methods = context_methods()
        columns = -(-len(self.methods) // 2)
        self.figure_title = add_canvas_title(self.canvas, columns=columns)
        self.plots: dict[str, pg.PlotItem] = {}
        self.trained_curves: dict[str, pg.PlotDataItem] = {}
        self.used_curves: dict[str, pg.PlotDataItem] = {}
        self.unseen_bars: dict[str, pg.PlotDataItem] = {}
        first: pg.PlotItem | None = None
        for index, method in enumerate(self.methods):
            plot = new_plot(self.canvas, row=1 + index // columns, col=index % columns)
            style_plot(plot)
            show_grid(plot)
            plot.setLogMode(x=False, y=True)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
                plot.setYLink(first)
            turn = pg.InfiniteLine(pos=np.log10(2.0 * np.pi), angle=0, pen=TURN_PEN)
            plot.addItem(turn, ignoreBounds=True)
            self.trained_curves[method] = plot.plot(pen=pg.mkPen(GREY, width=4), name="trained: L₀·θᵢ")
            self.used_curves[method] = plot.plot(pen=pg.mkPen(BLUE, width=2), name="used at N: (N − 1)·θ′ᵢ")
            self.unseen_bars[method] = plot.plot(pen=pg.mkPen(ORANGE, width=3), connect="pairs",
                                                 name="never seen in training")
            self.plots[method] = plot
        # One key for all the plots, under the last row and as wide as the canvas (it fits its columns to that).
        self.legend = LegendBelow(self.canvas.ci, labelTextColor=FOREGROUND)
        self.canvas.ci.addItem(self.legend, row=3, col=0, colspan=columns)
        self.canvas.ci.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignHCenter)
        keyed = self.methods[0]
        for curves in (self.trained_curves, self.used_curves, self.unseen_bars):
            self.legend.addItem(curves[keyed], curves[keyed].name())
        for index, method in enumerate(self.methods):
            plot = self.plots[method]
            set_axis_label(plot.getAxis("left"), "angle (rad)" if index % columns == 0 else "")
            set_axis_label(plot.getAxis("bottom"), "rotary pair i" if index >= columns else "")
            # The axes are shared: their numbers once per row (left column) and once per column (lowest
            # plot), as small multiples have them; fourteen axes of text made each update several times slower.
            plot.getAxis("left").setStyle(showValues=index % columns == 0)
            plot.getAxis("bottom").setStyle(showValues=index + columns >= len(self.methods))
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def show_data(self, data: ContextExtensionData) -> None:
        pairs = np.arange(data.pairs, dtype=np.float64)
        marked = data.pairs <= MAX_MARKED_PAIRS
        symbols = {"symbol": "o", "symbolSize": 4, "symbolPen": NO_PEN} if marked else {"symbol": None}
        shown = [data.trained_max, [2.0 * np.pi]]
        for entry in data.methods:
            plot = self.plots[entry.method]
            self.trained_curves[entry.method].setData(pairs, data.trained_max, symbolBrush=shared_brush(GREY), **symbols)
            self._show_method(entry, pairs, data.trained_max, symbols)
            if entry.available:
                shown.append(entry.used_max[entry.used_max > 0])
            chosen = entry.method == data.chosen
            plot.getViewBox().setBorder(pg.mkPen(themed(FOREGROUND), width=CHOSEN_PEN.widthF()) if chosen else None)
            set_title(plot, self._method_title(entry, data.pairs, chosen))
            set_integer_ticks(plot.getAxis("bottom"), 0, data.pairs - 1)
        values = np.concatenate([np.asarray(part, dtype=np.float64) for part in shown])
        low, high = np.log10(values.min()), np.log10(values.max())
        first = self.plots[self.methods[0]]
        # Snapped ranges: a step of d_model or rope_theta keeps them, and then the fourteen axes keep their
        # drawings (an axis redraws only when its range changes).
        first.setYRange(*snap_log_span(low - 0.15, high + 0.15), padding=0)
        last_pair = nice_bounds(0.0, float(max(data.pairs - 1, 1)))[1]
        first.setXRange(-0.5, last_pair + 0.5, padding=0)
        set_canvas_title(self.figure_title, self._figure_title(data))
        self.summary_label.setText(self._summary(data))
        prepare_for_paint(self.canvas)

    def _show_method(self, entry: MethodContext, pairs: np.ndarray, trained_max: np.ndarray,
                     symbols: dict[str, Any]) -> None:
        """The used range of one method and the bars of its pairs' angles beyond training."""
        used_curve, bars = self.used_curves[entry.method], self.unseen_bars[entry.method]
        used_curve.setVisible(entry.available)
        bars.setVisible(entry.available)
        if not entry.available:
            return
        drawn = entry.used_max > 0  # a log axis holds no 0: N = 1 uses the angle 0 only
        used_curve.setData(pairs[drawn], entry.used_max[drawn], symbolBrush=shared_brush(BLUE), **symbols)
        unseen = np.flatnonzero(entry.unseen)
        bars.setData(np.repeat(pairs[unseen], 2),
                     np.column_stack([trained_max[unseen], entry.used_max[unseen]]).ravel())

    @staticmethod
    def _method_title(entry: MethodContext, pairs: int, chosen: bool) -> str:
        name = f"<b>{entry.method} (chosen)</b>" if chosen else entry.method
        if not entry.available:
            return f"{name}: not available"
        return f"{name}: {entry.unseen_count}/{pairs} pairs unseen"

    @staticmethod
    def _figure_title(data: ContextExtensionData) -> str:
        """The parameters' title, and L₀ and the factor where it leaves them out (they apply to every method)."""
        params = data.params
        in_use = {spec.name for spec in params.info.options_in_use(params.options)}
        extra = []
        if "original_max_position_embeddings" not in in_use:
            extra.append(f"L₀ {data.trained_context:,}")
        if "factor" not in in_use:
            extra.append(f"×{data.factor:g}")
        return params.title() + ("; every method at " + ", ".join(extra) if extra else "")

    @staticmethod
    def _summary(data: ContextExtensionData) -> str:
        counts = []
        for entry in data.methods:
            count = f"{entry.method} {entry.unseen_count if entry.available else 'n/a'}"
            counts.append(f"<b>{count}</b> (chosen)" if entry.method == data.chosen else count)
        refused = " ".join(f"{entry.method}: {entry.error}." for entry in data.methods if not entry.available)
        return (
            f"Trained context L₀ = <b>{data.trained_context:,}</b>, target N = <b>{data.target_length:,}</b>, "
            f"factor ×{data.factor:g}: <b>{data.turned_count}</b> of {data.pairs} pairs completed a turn in training "
            f"(L₀·θᵢ ≥ 2π, above the dashed line). Pairs meeting angles training never showed: {'; '.join(counts)}."
            + (f" Not available: {refused}" if refused else "")
        )

    def data_export(self, data: ContextExtensionData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Per pair: θ_i, L₀·θ_i, whether it turned, and per method θ′_i, (N − 1)·θ′_i, the ratio, unseen (0/1)."""
        columns = ["pair", "inv_freq_unscaled", "trained_max_angle", "turned_in_training"]
        parts = [np.arange(data.pairs, dtype=np.float64), data.unscaled, data.trained_max,
                 data.turned.astype(np.float64)]
        for entry in data.methods:
            if entry.available:
                columns += [f"inv_freq_{entry.method}", f"used_max_angle_{entry.method}", f"ratio_{entry.method}",
                            f"unseen_{entry.method}"]
                parts += [entry.inv_freq, entry.used_max, entry.ratio, entry.unseen.astype(np.float64)]
        arrays = {"context": np.column_stack(parts), "trained_max_angle": data.trained_max}
        return arrays, {
            "columns": columns,
            "trained_context": data.trained_context,
            "target_length": data.target_length,
            "factor": data.factor,
            "chosen": data.chosen,
            "pairs_turned_in_training": data.turned_count,
            "pairs_meeting_unseen_angles": {entry.method: entry.unseen_count if entry.available else None
                                            for entry in data.methods},
            "attention_factors": {entry.method: entry.attention_factor for entry in data.methods
                                  if entry.available},
            "unavailable": {entry.method: entry.error for entry in data.methods if not entry.available},
        }
