"""RoPE frequencies: each rotary pair's wavelength with the chosen context scaling and without it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..model.rope.data import RopeFrequencyData, rope_frequency_data
from .base import RopeOnlyPanel
from .plotkit import (
    BLUE, FOREGROUND, GREEN, NO_PEN, ORANGE, add_legend_below, add_plot, prepare_for_paint,
    set_title, shared_brush,
)

#: The unscaled curve, and the pens of the horizontal lines: the trained context L₀, the context the
#: scaling reaches (L₀ · factor) and the number of positions N.
GREY = "#666666"
CONTEXT_PEN = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DashLine)
EXTENDED_PEN = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DashDotLine)
SEQUENCE_PEN = pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DotLine)
#: The legend's name of the scaled wavelengths (listed only with a scaling type).
SCALED_NAME = "with the scaling type"
#: The colour of each band of pairs a scaling type treats alike (kept, ramped or smoothed, divided).
BAND_COLOURS = {"extrapolated": BLUE, "high": BLUE, "ramped": GREEN, "medium": GREEN,
                "interpolated": ORANGE, "low": ORANGE}


class RopeFrequenciesPanel(RopeOnlyPanel):
    """The wavelength 2π/θ_i of every rotary pair, scaled and unscaled, against the contexts."""

    panel_id = "frequencies"
    title = "RoPE frequencies"
    rope_subject = "Hugging Face frequencies"
    model_function = rope_frequency_data
    keeps_results = True  # a scheme switched back to shows its last view at once
    model_in_process = False
    help_text = (
        "RoPE turns rotary pair i by position · θ<sub>i</sub>, θ<sub>i</sub> = rope_theta<sup>−2i/d</sup>: "
        "pair i completes one turn every 2π/θ<sub>i</sub> positions (its wavelength, log scale). Grey: "
        "without context scaling; blue: with the chosen scaling type, as Hugging Face computes it. The "
        "dashed line is the trained context L<sub>0</sub> (for the types that have one), the dotted line "
        "the number of positions N. A pair whose wavelength is above L<sub>0</sub> never completed a turn "
        "in training: linear interpolation divides every θ<sub>i</sub> by the factor, NTK raises the base, "
        "YaRN and llama3 keep the fast pairs and interpolate only the slow ones."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        self.plot = add_plot(self.canvas.ci, "rotary pair i", "wavelength 2π/θᵢ (positions)", log_y=True)
        self.legend = add_legend_below(self.canvas, self.plot, labelTextColor=FOREGROUND)
        self.unscaled_curve = self.plot.plot(pen=pg.mkPen(GREY, width=2), name="no scaling")
        self.scaled_curve = self.plot.plot(pen=pg.mkPen(BLUE, width=2), name=SCALED_NAME)
        self.context_line = pg.InfiniteLine(angle=0, pen=CONTEXT_PEN)
        self.sequence_line = pg.InfiniteLine(angle=0, pen=SEQUENCE_PEN)
        self.extended_line = pg.InfiniteLine(angle=0, pen=EXTENDED_PEN)
        self.plot.addItem(self.extended_line, ignoreBounds=True)
        self.plot.addItem(self.context_line, ignoreBounds=True)
        self.plot.addItem(self.sequence_line, ignoreBounds=True)
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def show_data(self, data: RopeFrequencyData) -> None:
        pairs = np.arange(data.inv_freq.size, dtype=np.float64)
        self.unscaled_curve.setData(pairs, data.unscaled_wavelength, symbol="o", symbolSize=4, symbolPen=NO_PEN,
                                    symbolBrush=shared_brush(GREY))
        rope_type = data.params.options["rope_type"]
        self.scaled_curve.setVisible(data.scaled)
        self.legend.show_entry(self.scaled_curve, SCALED_NAME, data.scaled)
        brushes = [shared_brush(BAND_COLOURS.get(band, BLUE)) for band in data.band.tolist()]
        self.scaled_curve.setData(pairs, data.wavelength, symbol="o", symbolSize=6, symbolPen=NO_PEN,
                                  symbolBrush=brushes)
        self.context_line.setVisible(data.trained_context is not None)
        if data.trained_context is not None:
            self.context_line.setValue(np.log10(data.trained_context))
        self.sequence_line.setValue(np.log10(max(data.params.seq_len, 1)))
        self.extended_line.setVisible(data.extended_context is not None)
        if data.extended_context is not None:
            self.extended_line.setValue(np.log10(data.extended_context))
        values = np.concatenate([data.wavelength, data.unscaled_wavelength,
                                 [data.params.seq_len, data.trained_context or data.params.seq_len]])
        low, high = np.log10(values.min()), np.log10(values.max())
        self.plot.setYRange(low - 0.1, high + 0.1, padding=0)
        self.plot.setXRange(-0.5, max(pairs.size - 0.5, 0.5), padding=0)
        set_title(self.plot, data.params.title())
        horizon = (f"the trained context L₀ = {data.trained_context:,}" if data.trained_context is not None
                   else f"N = {data.params.seq_len:,} positions")
        self.summary_label.setText(
            f"<b>{data.inv_freq.size}</b> rotary pairs; wavelengths from <b>{data.wavelength.min():.4g}</b> to "
            f"<b>{data.wavelength.max():.4g}</b> positions. <b>{data.beyond_trained}</b> pairs (unscaled) do not "
            f"complete one turn within {horizon}. Attention factor {data.attention_factor:.6g}. "
            + ("Dashed: L₀; " if data.trained_context is not None else "")  # a line only where there is an L₀
            + ("dash-dot: L₀ · factor; " if data.extended_context is not None else "") + "dotted (orange): N."
            + (f" Pairs by how {rope_type} treats them: "
               + "; ".join(f"{band} {first}–{last}" if first != last else f"{band} {first}"
                           for band, first, last in data.band_ranges)
               + " (blue: kept; green: ramped or smoothed; orange: divided by the factor)." if data.scaled
               else "")
        )
        prepare_for_paint(self.canvas)

    def data_export(self, data: RopeFrequencyData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Per pair: θ_i scaled and unscaled and their wavelengths; the band of each pair in ``meta``."""
        table = np.column_stack([np.arange(data.inv_freq.size), data.inv_freq, data.unscaled,
                                 data.wavelength, data.unscaled_wavelength])
        arrays = {"frequencies": table, "inv_freq": data.inv_freq}
        return arrays, {
            "columns": ["pair", "inv_freq", "inv_freq_unscaled", "wavelength", "wavelength_unscaled"],
            "bands": [str(band) for band in data.band],
            "attention_factor": data.attention_factor,
            "trained_context": data.trained_context,
            "extended_context": data.extended_context,
            "pairs_beyond_trained_context": data.beyond_trained,
        }
