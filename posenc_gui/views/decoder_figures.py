"""The Decoder panel's figures: head view, attention by offset, model view, frequency use and what-if.

Each figure is a canvas of its own with a title line (model, text, layer,
head); :meth:`DecoderFigure.show` draws a traced run (computed in the
worker: :mod:`posenc_gui.model.decoder.view_data`) and :meth:`export_arrays`
gives the numbers it draws. Nothing here computes beyond display.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from ..model.core.coverage import Coverage
from ..model.decoder.view_data import POSITIONAL_SHARE, SINK_SHARE, DecoderRun, FrequencyUse
from .rope_frequencies import BAND_COLOURS
from .plotkit import (
    BLUE, GREEN, NO_PEN, ORANGE, PINK, MatrixPlot, add_canvas_title, new_layout_widget, new_plot, prepare_for_paint,
    set_axis_label, set_canvas_title, set_ticks, set_title, shared_brush, show_grid, style_plot,
)

GREY = "#888888"
#: Token labels on an axis are cut to this many characters.
LABEL_CHARS = 10
#: At most this many token labels on an axis (else every k-th).
MAX_TOKEN_LABELS = 40
#: The share of a model-view cell its profile takes (the rest is the gap between cells).
CELL_FILL = 0.85


def token_label(text: str) -> str:
    """A token's text for an axis: spaces shown as ␣, line breaks as ⏎, cut to :data:`LABEL_CHARS`."""
    shown = text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") or "∅"
    return shown if len(shown) <= LABEL_CHARS else shown[:LABEL_CHARS - 1] + "…"


def token_ticks(texts: tuple[str, ...], with_text: bool = True) -> list[list[tuple[float, str]]]:
    """Ticks of a token axis: "i text" (or "i" alone) at every token (every k-th when there are many)."""
    most = MAX_TOKEN_LABELS if with_text else MAX_TOKEN_LABELS // 2  # index labels sit side by side
    step = max(1, -(-len(texts) // most))
    return [[(float(i), f"{i} {token_label(texts[i])}" if with_text else str(i))
             for i in range(0, len(texts), step)], []]


def figure_title(run: DecoderRun, layer: int | None, head: int | None, view: str) -> str:
    """The figure's title: model, text (cut), layer and head, view, and a what-if."""
    text = run.text if len(run.text) <= 48 else run.text[:47] + "…"
    where = "" if layer is None else f" · layer {layer}" + ("" if head is None else f", head {head}")
    what_if = f": {run.what_if}" if run.what_if else ""
    return html.escape(f"{run.name} · “{text}”{where} · {view}{what_if}")


def _plot(canvas: pg.GraphicsLayoutWidget, row: int, col: int, x_label: str, y_label: str,
          colspan: int = 1) -> pg.PlotItem:
    plot = new_plot(canvas, row=row, col=col, colspan=colspan)
    style_plot(plot)
    plot.hideButtons()
    show_grid(plot)
    set_axis_label(plot.getAxis("bottom"), x_label)
    set_axis_label(plot.getAxis("left"), y_label)
    return plot


def _key(items: list[tuple[str, str]]) -> str:
    return " &nbsp; ".join(f'<span style="color:{colour}">{html.escape(text)}</span>' for colour, text in items)


class DecoderFigure:
    """One view: a canvas with a title across its top, drawn by :meth:`show`."""

    name = ""
    columns = 1

    def __init__(self, parent) -> None:
        self.canvas = new_layout_widget(parent)
        self.title = add_canvas_title(self.canvas, columns=self.columns)
        self.arrays: dict[str, np.ndarray] = {}
        self.meta: dict[str, Any] = {}

    def show(self, run: DecoderRun, layer: int, head: int, extra: Any = None) -> None:
        """Draw ``head`` of ``layer`` of ``run`` (``extra``: the view's own data, computed in the worker)."""
        set_canvas_title(self.title, figure_title(run, layer, head, self.name))
        self.meta = {"view": self.name, "model": run.name, "model_path": run.path, "text": run.text,
                     "tokens": list(run.token_texts), "layer": layer, "head": head}
        self.arrays = {}
        self.draw(run, layer, head, extra)
        prepare_for_paint(self.canvas)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: Any) -> None:
        raise NotImplementedError

    def caption(self) -> str:
        """What the figure says in words under it (definitions, thresholds)."""
        return ""


class HeadFigure(DecoderFigure):
    """One head's attention: query tokens in rows, key tokens in columns, the causal mask grey."""

    name = "head view"

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.matrix = MatrixPlot(self.canvas.ci, "key token j", "query token i", "attention", row=1, col=0)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: Any) -> None:
        attention = run.trace.attention(layer)[head]
        count = attention.shape[0]
        shown = np.where(np.tril(np.ones((count, count), dtype=bool)), attention.astype(np.float64), -np.inf)
        self.matrix.set_matrix(shown, QRectF(-0.5, -0.5, count, count), levels=(0.0, 1.0), signed=False, masked=True)
        self.matrix.set_full_range((-0.5, count - 0.5), (-0.5, count - 0.5))
        set_ticks(self.matrix.plot.getAxis("bottom"), token_ticks(run.token_texts, with_text=False))
        set_ticks(self.matrix.plot.getAxis("left"), token_ticks(run.token_texts))
        self.matrix.set_title("softmax attention of query i over keys j ≤ i; grey: masked (j > i)")
        self.arrays = {"attention": attention.astype(np.float64)}

    def shown_attention(self) -> np.ndarray | None:
        """The attention drawn (the masked cells −inf), None before any."""
        return self.matrix.values


class OffsetFigure(DecoderFigure):
    """A head's mean attention against the offset and against the key's position; token-0 share per head."""

    name = "attention by offset"
    columns = 2

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.offset_plot = _plot(self.canvas, 1, 0, "offset d = i − j (query − key)", "mean attention")
        self.key_plot = _plot(self.canvas, 2, 0, "key position j", "mean attention")
        self.sink_plot = _plot(self.canvas, 1, 1, "head", "share of attention on token 0")
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 2)
        self.offset_curve = self.offset_plot.plot(pen=pg.mkPen(BLUE, width=2), symbol="o", symbolSize=5,
                                                  symbolPen=NO_PEN, symbolBrush=shared_brush(BLUE))
        self.positional_curve = self.offset_plot.plot(pen=pg.mkPen(GREEN, width=1, style=Qt.PenStyle.DashLine))
        self.key_curve = self.key_plot.plot(pen=pg.mkPen(ORANGE, width=2), symbol="o", symbolSize=5,
                                            symbolPen=NO_PEN, symbolBrush=shared_brush(ORANGE))
        self.threshold = pg.InfiniteLine(angle=0, pen=pg.mkPen(GREY, style=Qt.PenStyle.DotLine))
        self.sink_plot.addItem(self.threshold)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=BLUE, pen=NO_PEN)
        self.chosen_bar = pg.BarGraphItem(x=[], height=[], width=0.7, brush=ORANGE, pen=NO_PEN)
        self.sink_plot.addItem(self.bars)
        self.sink_plot.addItem(self.chosen_bar)
        for plot in (self.offset_plot, self.key_plot, self.sink_plot):
            plot.setYRange(0, 1.02, padding=0)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: Any) -> None:
        summary, row = run.summary, run.row(layer)
        by_offset, by_key = summary.by_offset[row, head], summary.by_key[row, head]
        positional, sinks = summary.positional[row, head], summary.sink_share[row]
        steps = np.arange(by_offset.size, dtype=np.float64)
        self.offset_curve.setData(steps, by_offset)
        finite = np.isfinite(positional)
        self.positional_curve.setData(steps[finite], positional[finite])
        self.key_curve.setData(steps, by_key)
        heads = np.arange(sinks.size, dtype=np.float64)
        self.bars.setOpts(x=heads, height=sinks)
        self.chosen_bar.setOpts(x=[float(head)], height=[float(sinks[head])])
        self.threshold.setValue(SINK_SHARE)
        for plot in (self.offset_plot, self.key_plot):
            plot.setXRange(-0.5, max(by_offset.size - 0.5, 0.5), padding=0.01)
        set_ticks(self.key_plot.getAxis("bottom"), token_ticks(run.token_texts, with_text=False))
        self.sink_plot.setXRange(-0.6, sinks.size - 0.4, padding=0)
        peak, at = summary.positional_peak[row, head], summary.positional_offset[row, head]
        set_title(self.offset_plot, _key([(BLUE, "━ all keys"), (GREEN, "╍ keys ≥ 1 (token 0 left out)")]))
        set_title(self.key_plot, _key([(ORANGE, "━ mean over queries i ≥ j of A[i, j]")]))
        set_title(self.sink_plot, _key([(BLUE, f"▮ layer {layer}'s heads"), (ORANGE, f"▮ head {head}"),
                                        (GREY, f"┄ sink ≥ {SINK_SHARE:g}")]))
        self.arrays = {"by_offset": by_offset, "by_key": by_key, "positional": positional, "sink_share": sinks}
        self.meta.update(positional_peak=float(peak), positional_offset=int(at), sink_share=float(sinks[head]))

    def caption(self) -> str:
        share = self.meta.get("positional_peak", float("nan"))
        return (f"Mean over the queries i that have a key at offset d (blue), or that see key j (orange). Green: "
                f"keys ≥ 1 only; the head's largest such share at one offset is {share:.2f} (at d = "
                f"{self.meta.get('positional_offset', '–')}). Right: mean over queries i ≥ 1 of A[i, 0], per head.")


class ModelFigure(DecoderFigure):
    """Layers × heads: each cell the head's mean attention against the offset; positional and sink heads marked."""

    name = "model view"

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.plot = _plot(self.canvas, 1, 0, "head", "layer")
        self.plot.showGrid(x=False, y=False)
        self.plot.invertY(True)
        self.curves = {kind: pg.PlotCurveItem(pen=pg.mkPen(colour, width=width), connect="finite")
                       for kind, colour, width in (("plain", BLUE, 1), ("sink", PINK, 1), ("positional", ORANGE, 2))}
        self.boxes = pg.PlotCurveItem(pen=pg.mkPen(ORANGE, width=1), connect="finite")
        self.chosen = pg.PlotCurveItem(pen=pg.mkPen(GREEN, width=2), connect="finite")
        for item in (*self.curves.values(), self.boxes, self.chosen):
            self.plot.addItem(item)

    @staticmethod
    def _box(x0: float, y0: float, size: float) -> tuple[list[float], list[float]]:
        return ([x0, x0 + size, x0 + size, x0, x0, np.nan], [y0, y0, y0 + size, y0 + size, y0, np.nan])

    def draw(self, run: DecoderRun, layer: int, head: int, extra: Any) -> None:
        summary = run.summary
        layers, heads, count = summary.by_offset.shape
        steps = np.linspace(0.0, CELL_FILL, count) if count > 1 else np.zeros(1)
        points = {kind: ([], []) for kind in self.curves}
        box_x: list[float] = []
        box_y: list[float] = []
        positional, sink = summary.is_positional, summary.is_sink
        for row in range(layers):
            for column in range(heads):
                kind = "positional" if positional[row, column] else "sink" if sink[row, column] else "plain"
                xs, ys = points[kind]
                xs.extend(column + steps)
                ys.extend(row + CELL_FILL * (1.0 - summary.by_offset[row, column]))
                xs.append(np.nan)
                ys.append(np.nan)
                if positional[row, column]:
                    bx, by = self._box(column - 0.05, row - 0.05, CELL_FILL + 0.1)
                    box_x += bx
                    box_y += by
        for kind, curve in self.curves.items():
            curve.setData(np.asarray(points[kind][0], float), np.asarray(points[kind][1], float))
        self.boxes.setData(np.asarray(box_x, float), np.asarray(box_y, float))
        row = run.row(layer)
        bx, by = self._box(head - 0.08, row - 0.08, CELL_FILL + 0.16)
        self.chosen.setData(np.asarray(bx, float), np.asarray(by, float))
        set_ticks(self.plot.getAxis("bottom"), [[(h + CELL_FILL / 2, str(h)) for h in range(heads)], []])
        step = max(1, layers // 30)
        set_ticks(self.plot.getAxis("left"),
                  [[(r + CELL_FILL / 2, str(run.trace.layers[r])) for r in range(0, layers, step)], []])
        self.plot.setXRange(-0.2, heads, padding=0)
        self.plot.setYRange(-0.2, layers, padding=0)
        set_title(self.plot, _key([(ORANGE, f"━ positional ({int(positional.sum())})"),
                                   (PINK, f"━ sink ({int((sink & ~positional).sum())})"),
                                   (BLUE, "━ other"), (GREEN, f"□ layer {layer}, head {head}")]))
        self.arrays = {"by_offset": summary.by_offset, "positional_peak": summary.positional_peak,
                       "positional_offset": summary.positional_offset, "sink_share": summary.sink_share}
        self.meta.update(layers=list(run.trace.layers), positional_heads=int(positional.sum()),
                         sink_heads=int(sink.sum()))

    def caption(self) -> str:
        tokens = len(self.meta.get("tokens", ()))
        return (f"Each cell: the head's mean attention against the offset d = 0 … T − 1 (left to right, 0 at the "
                f"cell's bottom, 1 at its top). Positional (orange, boxed): mean attention at one offset d ≤ "
                f"⌊(T − 1)/2⌋, over the queries whose key at d is not token 0, ≥ {POSITIONAL_SHARE:g}. Sink (pink): "
                f"mean attention of queries i ≥ 1 on token 0 ≥ {SINK_SHARE:g}. Both are measured on this text "
                f"only, {Coverage('token positions', 0, max(tokens - 1, 0)).extent()}: "
                "another text may mark other heads.")


class FrequencyFigure(DecoderFigure):
    """Each rotary pair's term of the last query's logits against the offset, the pairs' norms, wavelengths."""

    name = "frequency use"
    columns = 2

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.terms = MatrixPlot(self.canvas.ci, "offset d = i − j (i: the last token)", "rotary pair p",
                                "term of q·k/√d", row=1, col=0)
        self.terms.plot.invertY(False)
        self.norm_plot = _plot(self.canvas, 1, 1, "rotary pair p", "norm, share")
        self.wave_plot = _plot(self.canvas, 2, 0, "rotary pair p", "wavelength 2π/θ_p (positions)", colspan=2)
        self.wave_plot.setLogMode(x=False, y=True)
        self.q_curve = self.norm_plot.plot(pen=pg.mkPen(BLUE, width=2))
        self.k_curve = self.norm_plot.plot(pen=pg.mkPen(ORANGE, width=2))
        self.share_bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=GREEN, pen=NO_PEN)
        self.norm_plot.addItem(self.share_bars)
        self.wave_curve = self.wave_plot.plot(pen=None, symbol="o", symbolSize=5, symbolPen=NO_PEN,
                                              symbolBrush=shared_brush(BLUE))
        self.context_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(GREY, style=Qt.PenStyle.DashLine))
        self.tokens_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(ORANGE, style=Qt.PenStyle.DotLine))
        self.wave_plot.addItem(self.context_line)
        self.wave_plot.addItem(self.tokens_line)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: FrequencyUse | None) -> None:
        if extra is None:
            return
        pairs = extra.pairs
        terms = pairs.logits  # (P, query + 1), key j; shown against the offset query − j
        by_offset = terms[:, ::-1].astype(np.float64)
        count_pairs, count = by_offset.shape
        self.terms.set_matrix(by_offset, QRectF(-0.5, -0.5, count, count_pairs), signed=True)
        self.terms.set_full_range((-0.5, count - 0.5), (-0.5, count_pairs - 0.5))
        self.terms.set_title(f"pair terms of token {pairs.query}'s logits (sum + rest = the logit)")
        index = np.arange(count_pairs, dtype=np.float64)
        scale = max(float(extra.mean_query_norm.max()), float(extra.mean_key_norm.max()), 1e-30)
        self.q_curve.setData(index, extra.mean_query_norm / scale)
        self.k_curve.setData(index, extra.mean_key_norm / scale)
        self.share_bars.setOpts(x=index, height=pairs.share / max(float(pairs.share.max()), 1e-30))
        brushes = [shared_brush(BAND_COLOURS.get(band, BLUE)) for band in extra.band.tolist()]
        self.wave_curve.setData(index, extra.wavelength, symbolBrush=brushes)  # the plot's log mode takes log10
        context = run.max_positions or 0
        self.context_line.setVisible(context > 0)
        if context:
            self.context_line.setValue(np.log10(context))
        self.tokens_line.setValue(np.log10(max(len(run.token_texts), 1)))
        set_title(self.norm_plot, _key([(BLUE, "━ mean |q_p|"), (ORANGE, "━ mean |k_p|"), (GREEN, "▮ share"),
                                        (GREY, f"(÷ largest: {scale:.3g}, {pairs.share.max():.3f})")]))
        bands = sorted(set(extra.band.tolist()))
        set_title(self.wave_plot, _key([*((BAND_COLOURS.get(band, BLUE), f"● {band}") for band in bands),
                                        (GREY, f"╍ context {context:,}" if context else "no context given"),
                                        (ORANGE, f"┄ T = {len(run.token_texts)}")]))
        self.arrays = {"pair_terms": terms, "offsets": extra.offsets, "share": pairs.share,
                       "mean_query_norm": extra.mean_query_norm, "mean_key_norm": extra.mean_key_norm,
                       "wavelength": extra.wavelength}
        self.meta.update(query=pairs.query, rest_share=float(pairs.rest_share), bands=list(extra.band))

    def caption(self) -> str:
        return ("Left: each rotary pair's term (q_a k_a + q_b k_b)/√d of the last token's logit against the offset "
                "(Barbero et al. 2024). Right, top: mean norm of the pair in q and k over the tokens, and its share: "
                "mean |term| over every causal logit, ÷ the sum over pairs (each series ÷ its largest). Below: the "
                "pair's wavelength, as in the RoPE frequencies panel, against the context and the text's length.")


class WhatIfFigure(DecoderFigure):
    """The same head under another RoPE set-up or positions, drawn against the model's own."""

    name = "what-if"
    columns = 2

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.matrix = MatrixPlot(self.canvas.ci, "key token j", "query token i", "Δ attention", row=1, col=0)
        self.offset_plot = _plot(self.canvas, 1, 1, "offset d = i − j", "mean attention")
        self.own_curve = self.offset_plot.plot(pen=pg.mkPen(BLUE, width=2))
        self.what_curve = self.offset_plot.plot(pen=pg.mkPen(ORANGE, width=2, style=Qt.PenStyle.DashLine))
        self.offset_plot.setYRange(0, 1.02, padding=0)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: DecoderRun | None) -> None:
        if extra is None:
            return
        own = run.trace.attention(layer)[head].astype(np.float64)
        other = extra.trace.attention(layer)[head].astype(np.float64)
        count = own.shape[0]
        change = np.where(np.tril(np.ones((count, count), dtype=bool)), other - own, -np.inf)
        largest = float(np.abs(other - own).max())
        bound = max(largest, 1e-12)
        self.matrix.set_matrix(change, QRectF(-0.5, -0.5, count, count), levels=(-bound, bound), signed=True,
                               masked=True)
        self.matrix.set_full_range((-0.5, count - 0.5), (-0.5, count - 0.5))
        set_ticks(self.matrix.plot.getAxis("bottom"), token_ticks(run.token_texts, with_text=False))
        set_ticks(self.matrix.plot.getAxis("left"), token_ticks(run.token_texts))
        self.matrix.set_title(f"what-if − model's own: largest |Δ| {largest:.3g}; grey: masked")
        steps = np.arange(count, dtype=np.float64)
        own_profile = run.summary.by_offset[run.row(layer), head]
        what_profile = extra.summary.by_offset[extra.row(layer), head]
        self.own_curve.setData(steps, own_profile)
        self.what_curve.setData(steps, what_profile)
        self.offset_plot.setXRange(-0.5, max(count - 0.5, 0.5), padding=0.01)
        set_title(self.offset_plot, _key([(BLUE, "━ model's own"), (ORANGE, "╍ what-if")]))
        set_canvas_title(self.title, figure_title(extra, layer, head, self.name))
        self.arrays = {"attention_change": other - own, "own_by_offset": own_profile,
                       "what_if_by_offset": what_profile}
        self.meta.update(what_if=extra.what_if, largest_change=largest)

    def caption(self) -> str:
        return (f"What-if: {self.meta.get('what_if') or 'none'} (offsets are token offsets i − j; a gap moves "
                "position ids, not tokens). Left: the head's attention with the what-if minus the model's own.")


FIGURES = (HeadFigure, OffsetFigure, ModelFigure, FrequencyFigure, WhatIfFigure)
