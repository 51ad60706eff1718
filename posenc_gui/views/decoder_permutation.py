"""The Decoder panel's permutation view: one text and its reordering through a real decoder's head, causally.

Draws an :class:`~posenc_gui.model.decoder.orderings.OrderingComparison`
(computed in the worker) for the chosen layer and head, everything in the
first ordering's token order: both attentions (each ordering's causal mask
grey), how much each token's query and key before RoPE moved (the context
the mask lets it read), and for the pairs both masks let through, the logit's
change split into the position's part and the context's part.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from ..model.decoder.orderings import OrderingComparison
from ..model.decoder.view_data import DecoderRun
from .decoder_figures import GREY, DecoderFigure, _key, _plot, token_label, token_ticks
from .plotkit import BLUE, GREEN, NO_PEN, ORANGE, MatrixPlot, set_canvas_title, set_ticks, set_title, shared_brush

#: The view's least height (logical pixels): two rows of plots with token labels; a smaller dock scrolls.
MIN_HEIGHT = 560
#: At most this many pairs are labelled on the logit plot's axis.
MAX_PAIR_LABELS = 10
#: A change of a vector before RoPE below this (relative) is float32 rounding: RoPE rotated and was
#: rotated back, each rounding step ≤ 2⁻²⁴ relative, a few dozen of them.
ROUNDING = 1e-5


def orderings_title(comparison: OrderingComparison, layer: int, head: int) -> str:
    """The view's title: model, both texts, layer and head."""
    run_a, run_b = comparison.run_a, comparison.run_b
    return html.escape(f"{run_a.name} · “{run_a.text}” / “{run_b.text}” · layer {layer}, head {head} · "
                       "permutation (causal)")


class PermutationFigure(DecoderFigure):
    """Both orderings' attention of one head aligned by token, and what the reordering changed."""

    name = "permutation"
    columns = 2

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.matrix_a = MatrixPlot(self.canvas.ci, "key token s", "query token t", "attention", row=1, col=0)
        self.matrix_b = MatrixPlot(self.canvas.ci, "key token s", "query token t", "attention", row=1, col=1)
        self.change_plot = _plot(self.canvas, 2, 0, "token (first ordering's order)", "‖Δ‖ / ‖A‖ before RoPE")
        self.logit_plot = _plot(self.canvas, 2, 1, "pair t ← s (query ← key, A's token numbers) seen in both",
                                "logit change B − A")
        self.query_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=BLUE, pen=NO_PEN)
        self.key_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=ORANGE, pen=NO_PEN)
        self.change_plot.addItem(self.query_bars)
        self.change_plot.addItem(self.key_bars)
        self.position_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=BLUE, pen=NO_PEN)
        self.context_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=ORANGE, pen=NO_PEN)
        self.total_curve = pg.ScatterPlotItem(symbol="o", size=7, pen=NO_PEN, brush=shared_brush(GREEN))
        for item in (self.position_bars, self.context_bars, self.total_curve):
            self.logit_plot.addItem(item)
        self.logit_plot.addItem(pg.InfiniteLine(angle=0, pen=pg.mkPen(GREY, style=Qt.PenStyle.DotLine)))
        self.comparison: OrderingComparison | None = None
        self.canvas.setMinimumHeight(MIN_HEIGHT)

    def show(self, run: DecoderRun, layer: int, head: int, extra: Any = None) -> None:
        """Draw ``extra``, the comparison (its first ordering's run stands for ``run`` in the export's meta)."""
        super().show(extra.run_a if isinstance(extra, OrderingComparison) else run, layer, head, extra)

    def draw(self, run: DecoderRun, layer: int, head: int, extra: OrderingComparison | None) -> None:
        self.comparison = extra
        if extra is None:
            return
        set_canvas_title(self.title, orderings_title(extra, layer, head))
        row, texts = extra.run_a.row(layer), extra.run_a.token_texts
        count = extra.order.size
        rect = QRectF(-0.5, -0.5, count, count)
        attention = {}
        for matrix, which, seen, label in ((self.matrix_a, "a", extra.seen_a, "A"),
                                           (self.matrix_b, "b", extra.seen_b, "B")):
            values = getattr(extra, f"attention_{which}")[row, head]
            attention[which] = values
            matrix.set_matrix(np.where(seen, values, -np.inf), rect, levels=(0.0, 1.0), signed=False, masked=True)
            matrix.set_full_range((-0.5, count - 0.5), (-0.5, count - 0.5))
            set_ticks(matrix.plot.getAxis("bottom"), token_ticks(texts, with_text=False))
            ticks = token_ticks(texts)
            if which == "b":  # each token's place in B beside its place in A
                ticks = [[(t, f"{label_text} (B {extra.order[int(t)]})") for t, label_text in ticks[0]], []]
            set_ticks(matrix.plot.getAxis("left"), ticks)
            text = getattr(extra, f"run_{which}").text
            matrix.set_title(html.escape(f"{label} “{text}” (grey: masked)"))
        kv = head // (extra.run_a.trace.num_heads // extra.run_a.trace.num_kv_heads)
        query_change, key_change = extra.query_change[row, head], extra.key_change[row, kv]
        steps = np.arange(count, dtype=np.float64)
        self.query_bars.setOpts(x=steps - 0.2, height=query_change)
        self.key_bars.setOpts(x=steps + 0.2, height=key_change)
        set_ticks(self.change_plot.getAxis("bottom"),
                  [[(float(t), f"{t} {token_label(texts[t])}" + ("" if extra.same_id[t] else " ≠id"))
                    for t in range(count)], []])
        self.change_plot.setXRange(-0.6, count - 0.4, padding=0)
        set_title(self.change_plot, _key([(BLUE, f"▮ query, head {head}"), (ORANGE, f"▮ key, kv head {kv}")]))
        queries, keys = np.nonzero(extra.seen_in_both)
        logits = {name: getattr(extra, f"logits_{name}")[row, head][queries, keys] for name in ("a", "b", "b_at_a")}
        position, context = logits["b"] - logits["b_at_a"], logits["b_at_a"] - logits["a"]
        pairs = np.arange(queries.size, dtype=np.float64)
        self.position_bars.setOpts(x=pairs - 0.2, height=position)
        self.context_bars.setOpts(x=pairs + 0.2, height=context)
        self.total_curve.setData(pairs, logits["b"] - logits["a"])
        step = max(1, -(-queries.size // MAX_PAIR_LABELS))
        set_ticks(self.logit_plot.getAxis("bottom"),
                  [[(float(k), f"{queries[k]}←{keys[k]}") for k in range(0, queries.size, step)], []])
        self.logit_plot.setXRange(-0.6, max(queries.size - 0.4, 0.6), padding=0)
        set_title(self.logit_plot, _key([(BLUE, "▮ position's part"), (ORANGE, "▮ context's part"),
                                         (GREEN, "● B − A")]))
        self.arrays = {"attention_a": attention["a"], "attention_b_aligned": attention["b"],
                       "seen_a": extra.seen_a, "seen_b": extra.seen_b, "query_change": query_change,
                       "key_change": key_change, "pair_query": queries, "pair_key": keys,
                       "logit_a": logits["a"], "logit_b": logits["b"], "logit_b_at_a_positions": logits["b_at_a"]}
        self.meta.update(self._numbers(extra, layer, head, query_change, key_change))

    def _numbers(self, extra: OrderingComparison, layer: int, head: int, query_change: np.ndarray,
                 key_change: np.ndarray) -> dict[str, Any]:
        """The caption's numbers, for the export's meta too."""
        count = extra.order.size
        both = extra.seen_in_both
        same = extra.same_id
        row = extra.run_a.row(layer)
        return {
            "text_a": extra.run_a.text, "text_b": extra.run_b.text, "tokens_b": list(extra.run_b.token_texts),
            "order": extra.order.tolist(), "same_id": same.tolist(),
            "pairs_each": count * (count + 1) // 2, "pairs_in_both": int(both.sum()),
            "largest_attention_change": extra.largest(extra.attention_b - extra.attention_a, layer, head),
            "largest_logit_change": extra.largest(extra.logits_b - extra.logits_a, layer, head),
            "largest_position_part": extra.largest(extra.logits_b - extra.logits_b_at_a, layer, head),
            "largest_context_part": extra.largest(extra.logits_b_at_a - extra.logits_a, layer, head),
            "largest_query_change": float(query_change.max()), "largest_key_change": float(key_change.max()),
            "unmoved_same_id_tokens": int((same & (extra.query_change[row, head] <= ROUNDING)).sum()),
            "same_id_tokens": int(same.sum()),
        }

    def caption(self) -> str:
        meta = self.meta
        if "pairs_in_both" not in meta:
            return ""
        layer = meta["layer"]
        unmoved = (f"{meta['unmoved_same_id_tokens']} of the {meta['same_id_tokens']} tokens with the same id in "
                   f"both have the same query before RoPE (change ≤ {ROUNDING:g}, float32 rounding)")
        context_words = ("at layer 0 a token's vectors before RoPE depend on its id alone: " + unmoved
                         if layer == 0 else
                         f"from layer 1 on each token has read other tokens before it: {unmoved}")
        return (f"Rows and columns in A's token order. Without positions and without a mask B's attention would be "
                f"A's permuted: every change 0. Here the causal mask lets {meta['pairs_in_both']} of each ordering's "
                f"{meta['pairs_each']} (query, key) pairs through in both; {context_words}; the largest query "
                f"change is {meta['largest_query_change']:.3g}, key {meta['largest_key_change']:.3g}. On the pairs "
                f"seen in both the attention moves by up to {meta['largest_attention_change']:.3g}, the logit by "
                f"up to {meta['largest_logit_change']:.3g}: RoPE's offsets (position's part, B's vectors at B's "
                f"positions − at A's) up to {meta['largest_position_part']:.3g}, the tokens' context up to "
                f"{meta['largest_context_part']:.3g}. “≠id”: the word is another token id in B (e.g. with its "
                "leading space).")


__all__ = ["PermutationFigure", "orderings_title"]
