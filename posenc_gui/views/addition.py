"""Addition vs concatenation: cost, the four-term logit split against embedding scale, near-orthogonality."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..model.analyses.addition import TERMS
from ..model.panels.panel_data import AdditionData, addition_data
from .base import EmbeddingScalePanel
from .labels import plain_text
from .plotkit import (
    BLUE, FOREGROUND, GREEN, ORANGE, PINK, add_canvas_title, add_plot, decade_ticks, prepare_for_paint,
    set_axis_label, set_canvas_title, set_ticks, snap_log_span,
)

TERM_COLOURS = {"e·e": BLUE, "e·p": GREEN, "p·e": PINK, "p·p": ORANGE}
TERM_STYLES = {"p·e": Qt.PenStyle.DashLine}
ADD_COLOUR, CONCAT_COLOUR = BLUE, ORANGE
GREY = "#555555"
#: Labelled decades on a horizontal log axis (labels there sit side by side, not stacked).
HORIZONTAL_DECADE_LABELS = 8


#: The key's sample of each kind of line: solid, dashed and dotted curves; dashed and dotted vertical lines.
KEY_SAMPLES = {"solid": "━", "dashed": "╍", "dotted": "┈", "vertical dashed": "╎", "vertical dotted": "┊"}
#: The key entries of the vertical lines (explained with their values in the caption).
SCALE_KEY = (GREY, "chosen σ", "vertical dashed")
BALANCE_KEY = (GREY, "σ where ‖e‖ = ‖p‖", "vertical dotted")


def _key(items: list[tuple[str, str] | tuple[str, str, str]]) -> str:
    """A plot's key: ``(colour, text)`` for a solid line, ``(colour, text, kind)`` for a :data:`KEY_SAMPLES` kind."""
    entries = []
    for colour, text, *kind in items:
        sample = KEY_SAMPLES[kind[0] if kind else "solid"]
        entries.append(f'<span style="color:{colour}">{sample} {text}</span>')
    return " &nbsp; ".join(entries)


class AdditionPanel(EmbeddingScalePanel):
    """Why the positional encoding is added, not concatenated, and how meaning and position stay apart."""

    panel_id = "addition"
    title = "Addition vs concatenation"
    model_function = addition_data
    help_text = (
        "<b>Cost</b> (top left): a projection W of the input x costs d<sub>in</sub>·d<sub>out</sub> weights "
        "and N·d<sub>in</sub>·d<sub>out</sub> multiply-adds. Adding, x = e + p, keeps d<sub>in</sub> = d; "
        "concatenating, x = [e | p], makes it 2d: twice the weights and work in every W<sub>q</sub>, "
        "W<sub>k</sub>, W<sub>v</sub>. "
        "<b>Four terms</b> (top right): the logit (e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·"
        "((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)ᵀ/√d<sub>k</sub> = e·e + e·p + p·e + p·p "
        "(e<sub>i</sub>W<sub>q</sub>W<sub>k</sub>ᵀe<sub>j</sub>ᵀ/√d<sub>k</sub>, …), each term's RMS "
        "against the embedding scale σ (entries of e are N(0, σ²), ‖e‖ ≈ σ√d), in the permutation "
        "demo's toy head (d ≤ 64). e·e grows like σ², the cross terms like σ, p·p stays. "
        "<b>cos(e, e+p)</b> (bottom left): how much adding p turns the embedding; 1 = not at all. "
        "<b>Near-orthogonality</b> (bottom right): |cos(e, p)| for random e against d; it shrinks like "
        "√(2/(πd)), so in high d meaning and position occupy almost separate directions. "
        "Dashed vertical lines: the chosen σ (or d); dotted: the σ where ‖e‖ = ‖p‖."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.cost_plot = self._plot(1, 0, "", "relative to adding (= 1)")
        self.terms_plot = self._plot(1, 1, "embedding scale σ", "RMS of the term", log=(True, True))
        self.cosine_plot = self._plot(2, 0, "embedding scale σ", "cos(e, e + p)", log=(True, False))
        self.ortho_plot = self._plot(2, 1, "dimension d", "|cos(e, p)|", log=(True, True))
        self.cost_plot.getAxis("bottom").setTicks([[(0.5, "parameters of W"), (3.0, "multiply-adds, N tokens")]])
        self.cost_plot.setXRange(-0.6, 4.1, padding=0)
        self.cost_plot.setYRange(0, 2.6, padding=0)
        self.cost_bars = pg.BarGraphItem(x=[0, 1, 2.5, 3.5], height=[1, 2, 1, 2], width=0.8,
                                         brushes=[ADD_COLOUR, CONCAT_COLOUR] * 2, pens=[pg.mkPen(None)] * 4)
        self.cost_plot.addItem(self.cost_bars)
        self.cost_texts = [pg.TextItem("", color=FOREGROUND, anchor=(0.5, 1.0)) for _ in range(4)]
        for item in self.cost_texts:
            self.cost_plot.addItem(item)
        self.cost_plot.setTitle(_key([(ADD_COLOUR, "add: d inputs"), (CONCAT_COLOUR, "concatenate: 2d")]),
                                size="9pt")
        # e·p and p·e have the same size, so their curves lie on top of each other: p·e is
        # drawn dashed over a solid e·p, and both stay visible.
        self.term_curves = {name: self.terms_plot.plot(
            pen=pg.mkPen(TERM_COLOURS[name], width=2, style=TERM_STYLES.get(name, Qt.PenStyle.SolidLine)),
            antialias=True) for name in TERMS}
        self.terms_plot.setTitle(_key([(TERM_COLOURS[n], n, "dashed" if n in TERM_STYLES else "solid") for n in TERMS]
                                      + [SCALE_KEY, BALANCE_KEY]), size="9pt")
        self.cos_mean_curve = self.cosine_plot.plot(pen=pg.mkPen(ADD_COLOUR, width=2), antialias=True)
        self.cos_min_curve = self.cosine_plot.plot(
            pen=pg.mkPen(ADD_COLOUR, width=1.5, style=Qt.PenStyle.DashLine), antialias=True)
        self.cosine_plot.setTitle(_key([(ADD_COLOUR, "mean over positions"), (ADD_COLOUR, "minimum", "dashed"),
                                        SCALE_KEY, BALANCE_KEY]), size="9pt")
        self.ortho_pe = self.ortho_plot.plot(pen=pg.mkPen(ADD_COLOUR, width=2), symbol="o", symbolSize=5,
                                             symbolBrush=ADD_COLOUR, symbolPen=None, antialias=True)
        self.ortho_q95 = self.ortho_plot.plot(
            pen=pg.mkPen(ADD_COLOUR, width=1.5, style=Qt.PenStyle.DashLine), antialias=True)
        self.ortho_random = self.ortho_plot.plot(pen=pg.mkPen(CONCAT_COLOUR, width=1.5), symbol="t", symbolSize=5,
                                                 symbolBrush=CONCAT_COLOUR, symbolPen=None, antialias=True)
        # e vs p is the claim, e vs e′ the reference it nearly equals: draw the claim on top.
        self.ortho_pe.setZValue(2)
        self.ortho_q95.setZValue(2)
        self.ortho_reference = self.ortho_plot.plot(
            pen=pg.mkPen(GREY, width=1, style=Qt.PenStyle.DotLine), antialias=True)
        self.ortho_plot.setTitle(_key([(ADD_COLOUR, "e vs p: mean (95 % dashed)"), (CONCAT_COLOUR, "e vs random e′"),
                                       (GREY, "√(2/(πd))", "dotted"), (GREY, "this d", "vertical dashed")]),
                                 size="9pt")
        dashed = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DashLine)
        dotted = pg.mkPen(GREY, width=1, style=Qt.PenStyle.DotLine)
        self.scale_lines = [pg.InfiniteLine(angle=90, pen=dashed) for _ in range(2)]
        self.balance_lines = [pg.InfiniteLine(angle=90, pen=dotted) for _ in range(2)]
        for plot, line, balance in zip((self.terms_plot, self.cosine_plot), self.scale_lines, self.balance_lines):
            plot.addItem(line)
            plot.addItem(balance)
        self.d_line = pg.InfiniteLine(angle=90, pen=dashed)
        self.ortho_plot.addItem(self.d_line)
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def _plot(self, row: int, col: int, x_label: str, y_label: str, log: tuple[bool, bool] = (False, False)):
        return add_plot(self.canvas.ci, x_label, y_label, *log, buttons=False, row=row, col=col)

    # ------------------------------------------------------------------ data

    def is_stale(self) -> bool:
        """True when the plots do not show the current parameters and σ."""
        data = self.data
        return data is None or data.params != self.state.params or data.scale != self.state.view["embedding_scale"]

    def show_data(self, data: AdditionData) -> None:
        self.show_message("")  # an earlier error no longer applies
        params, cost, sweep, ortho = data.params, data.cost, data.sweep, data.ortho
        # cost
        heights = [1.0, cost.params_ratio, 1.0, cost.macs_ratio]
        self.cost_bars.setOpts(height=heights)
        labels = [cost.params_add, cost.params_concat, cost.macs_add, cost.macs_concat]
        for item, x, height, value in zip(self.cost_texts, (0, 1, 2.5, 3.5), heights, labels):
            item.setText(_short(value))
            item.setPos(x, height + 0.05)
        self.cost_plot.setYRange(0, max(heights) * 1.3, padding=0)
        # four terms
        for index, name in enumerate(TERMS):
            values = sweep.term_rms[:, index]
            ok = values > 0
            self.term_curves[name].setData(sweep.scales[ok], values[ok])
        positive = sweep.term_rms[sweep.term_rms > 0]
        if positive.size:
            # log ranges snap outwards to quarter decades: a d_model step keeps the axes as laid out
            low, high = snap_log_span(math.log10(positive.min()) - 0.3, math.log10(positive.max()) + 0.3)
            self.terms_plot.setYRange(low, high, padding=0)
            set_ticks(self.terms_plot.getAxis("left"), decade_ticks(low, high))
        # cosine
        self.cos_mean_curve.setData(sweep.scales, sweep.cosine_mean)
        self.cos_min_curve.setData(sweep.scales, sweep.cosine_min)
        finite = sweep.cosine_min[np.isfinite(sweep.cosine_min)]
        bottom = min(-0.05, float(finite.min()) - 0.05) if finite.size else -0.05
        self.cosine_plot.setYRange(math.floor(bottom * 4) / 4, 1.05, padding=0)  # in quarters: a step keeps it
        x_span = (math.log10(sweep.scales[0]), math.log10(sweep.scales[-1]))
        for plot in (self.terms_plot, self.cosine_plot):
            plot.setXRange(*x_span, padding=0.02)
            set_ticks(plot.getAxis("bottom"), decade_ticks(*x_span, max_labels=HORIZONTAL_DECADE_LABELS))
        for line in self.scale_lines:
            line.setValue(math.log10(data.scale))
        for line in self.balance_lines:
            line.setVisible(sweep.balance_scale > 0)
            if sweep.balance_scale > 0:
                line.setValue(math.log10(sweep.balance_scale))
        # orthogonality
        dims = ortho.dims.astype(np.float64)
        ok = np.isfinite(ortho.pe_mean)
        self.ortho_pe.setData(dims[ok], ortho.pe_mean[ok])
        self.ortho_q95.setData(dims[ok], ortho.pe_q95[ok])
        self.ortho_random.setData(dims, ortho.random_mean)
        self.ortho_reference.setData(dims, ortho.reference)
        self.d_line.setValue(math.log10(params.d_model))
        d_span = (math.log10(dims.min()), math.log10(dims.max()))
        self.ortho_plot.setXRange(*d_span, padding=0.03)
        set_ticks(self.ortho_plot.getAxis("bottom"), decade_ticks(*d_span, max_labels=HORIZONTAL_DECADE_LABELS))
        values = np.concatenate([ortho.pe_q95[ok], ortho.pe_mean[ok], ortho.random_mean, ortho.reference])
        y_span = snap_log_span(math.log10(values.min()) - 0.2, math.log10(min(values.max(), 1.0)) + 0.2)
        self.ortho_plot.setYRange(*y_span, padding=0)
        set_ticks(self.ortho_plot.getAxis("left"), decade_ticks(*y_span))
        self._summary(data)

    def _summary(self, data: AdditionData) -> None:
        params, cost, current = data.params, data.cost, data.current
        shares = ", ".join(f"{name} {100 * current.term_share[0, i]:.0f} %" for i, name in enumerate(TERMS))
        where = np.flatnonzero(data.ortho.dims == params.d_model)
        at_d = data.ortho.pe_mean[where[0]] if where.size else math.nan
        ortho = (f"; at d = {params.d_model:,}, mean |cos(e, p)| = <b>{at_d:.3f}</b>"
                 if math.isfinite(at_d) else "")
        self.summary_label.setText(
            f"One {cost.d_model}×{cost.d_out} projection: <b>{cost.params_add:,}</b> weights when adding, "
            f"<b>{cost.params_concat:,}</b> when concatenating (×{cost.params_ratio:g}); "
            f"{cost.macs_add:,} vs {cost.macs_concat:,} multiply-adds for {cost.seq_len:,} tokens. "
            f"At σ = {data.scale:g} (‖e‖ ≈ σ√d = {data.embedding_norm:.3g}, "
            f"RMS ‖p‖ = {current.pe_norm_rms:.3g}): mean cos(e, e + p) = <b>{current.cosine_mean[0]:.3f}</b>; "
            f"logit shares {shares} (toy head, d = {current.split_d_model}, {current.split_tokens} tokens)"
            f"{ortho}."
        )
        set_axis_label(self.cost_plot.getAxis("bottom"), f"d = {params.d_model:,}, N = {params.seq_len:,}")
        set_canvas_title(self.figure_title, params.title())
        prepare_for_paint(self.canvas)

    def figure_caption(self) -> str:
        """The headline numbers (costs, cos(e, e + p), logit shares, |cos(e, p)|) and where the vertical lines are."""
        data = self.data
        if data is None:
            return ""
        balance = data.sweep.balance_scale
        lines = (f"Dashed vertical lines: the chosen σ = {data.scale:g} and d = {data.params.d_model:,}"
                 + (f"; dotted: σ = {balance:.3g}, where ‖e‖ = ‖p‖." if balance > 0 else "."))
        return f"{plain_text(self.summary_label.text())} {lines}"

    def export_data(self) -> dict[str, Any]:
        """The sweep (σ, cosines, term RMS), the orthogonality table and the costs."""
        data = self.data
        if self.is_stale():  # not computed yet, or a hidden dock: compute now
            data = addition_data(self.state.params, self.state.view["embedding_scale"])
        sweep, ortho, cost = data.sweep, data.ortho, data.cost
        table = np.column_stack([sweep.scales, sweep.cosine_mean, sweep.cosine_min, sweep.term_rms])
        ortho_table = np.column_stack([ortho.dims, ortho.pe_mean, ortho.pe_q95, ortho.pe_max, ortho.random_mean,
                                       ortho.random_q95, ortho.reference])
        return {
            "arrays": {"scale_sweep": table, "orthogonality": ortho_table},
            "meta": {
                "panel": self.panel_id,
                "params": data.params.as_dict(),
                "columns": ["scale", "cos_mean", "cos_min", *[f"rms_{t}" for t in TERMS]],
                "orthogonality_columns": ["d", "pe_mean", "pe_q95", "pe_max", "random_mean", "random_q95",
                                          "reference"],
                "scale": data.scale,
                "cost": cost.__dict__.copy(),
                "split_d_model": sweep.split_d_model,
                "split_tokens": sweep.split_tokens,
                "balance_scale": sweep.balance_scale,
                "seed": sweep.seed,
            },
        }


def _short(value: int) -> str:
    """``262,144``, ``33.6 M``, ``134.2 G`` or ``70.4 T`` (display only; a bar label fits ~8 characters)."""
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if value >= 10 * scale:
            return f"{value / scale:,.1f} {suffix}"
    return f"{value:,}"
