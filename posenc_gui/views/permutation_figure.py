"""The permutation demo's figure: both sentences' matrices, step by step, and the split of the logits.

One :class:`QGraphicsWidget` with a grid layout, set as the canvas's
central item (pyqtgraph's own layout is not used): a row of small heatmaps
(:mod:`.matrix_items`) per step of ``X → Q, K, V → QKᵀ/√d_k → softmax → AV``
for sentences a and b, each row with its colour bar, then the split of the
logits (an added encoding's four terms, RoPE's logits without and with the
rotation, a bias, or a real head's position table). It draws what
:mod:`posenc_gui.model.attention` computed, nothing more.
"""

from __future__ import annotations

import html
from typing import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsWidget

from ..model.attention import ROTATION_TERMS, SHIFT_CHECK, AttentionTrace, LogitSplit, PermutationDemo, RotationSplit
from ..model.attention.bert_head import TABLE_TERMS, RealHeadDemo, TableSplit
from .matrix_items import (
    COLORBAR_PIXELS, MAX_MATRIX_PIXELS, ROW_PIXELS, ColorBar, MatrixItem, RichText, chrome_heights,
)
from .plotkit import FOREGROUND, colour_scale

LABEL_PIXELS = 150
#: What the causal mask adds to the figure's title (two lines) and to the split's header (one line).
CAUSAL_TITLE_PIXELS = 36
CAUSAL_SPLIT_PIXELS = 16
SPLIT_LABEL_PIXELS = 70
MIN_CANVAS_PIXELS = 900
#: (key, formula, what the matrix is, how to get it from a trace)
Step = tuple[str, str, str, Callable[[AttentionTrace], np.ndarray]]
PROJECTION_STEPS: tuple[Step, ...] = (
    ("Q", "Q = X·W<sub>q</sub>", "queries", lambda t: t.q),
    ("K", "K = X·W<sub>k</sub>", "keys", lambda t: t.k),
)
ROTATED_STEPS: tuple[Step, ...] = (
    ("Q_rot", "Q̃ = R<sub>m</sub>·Q", "each query turned by its position m", lambda t: t.q_rotated),
    ("K_rot", "K̃ = R<sub>n</sub>·K", "each key turned by its position n", lambda t: t.k_rotated),
)
VALUE_STEPS: tuple[Step, ...] = (("V", "V = X·W<sub>v</sub>", "values", lambda t: t.v),)
SCORE_STEPS: tuple[Step, ...] = (
    ("S", "S = QK<sup>T</sup>/√d<sub>k</sub>", "logits: query × key", lambda t: t.scores),
)
ROTATED_SCORE_STEPS: tuple[Step, ...] = (
    ("S", "S = Q̃K̃<sup>T</sup>/√d<sub>k</sub>", "logits: depend on n − m", lambda t: t.scores),
)
OUTPUT_STEPS: tuple[Step, ...] = (
    ("A", "A = softmax(S)", "each row sums to 1", lambda t: t.attention),
    ("Z", "Z = A·V", "the output", lambda t: t.output),
)
#: What the S and A rows say under the causal mask instead (grey cells: keys after the query).
CAUSAL_NOTES = {
    "S": "grey: key j &gt; query i masked (−∞)",
    "A": "softmax over keys 0…i; grey: 0",
}
POSITION_STEPS: tuple[Step, ...] = (
    ("E", "E", "word embeddings", lambda t: t.embeddings),
    ("PE", "PE", "positions 0, 1, 2, …", lambda t: t.positional),
    ("X", "X = E + PE", "input with position", lambda t: t.x),
)
PLAIN_STEPS: tuple[Step, ...] = (("X", "X = E", "word embeddings only", lambda t: t.x),)
BIAS_INPUT_STEPS: tuple[Step, ...] = (("X", "X = E", "a bias adds nothing to X", lambda t: t.x),)
BIAS_STEPS: tuple[Step, ...] = (("B", "B", "the scheme's bias b(i, j) at positions 0, 1, 2, …", lambda t: t.bias),)
BIASED_SCORE_STEPS: tuple[Step, ...] = (
    ("S", "S = QK<sup>T</sup>/√d<sub>k</sub> + B", "logits with the bias", lambda t: t.scores),
)
ROTATION_INPUT_STEPS: tuple[Step, ...] = (("X", "X = E", "the rotation adds nothing to X", lambda t: t.x),)
#: The real head's rows (a BERT-family model's layer 0): its embeddings, LayerNorm and biased projections.
REAL_E_STEP: Step = ("E", "E", "word rows + token type 0", lambda t: t.embeddings)
REAL_POSITION_STEPS: tuple[Step, ...] = (
    REAL_E_STEP,
    ("PE", "P", "the model's position rows", lambda t: t.positional),
    ("X", "X = LN(E + P)", "LayerNorm(E + P)", lambda t: t.x),
)
REAL_PLAIN_STEPS: tuple[Step, ...] = (
    REAL_E_STEP, ("X", "X = LN(E)", "LayerNorm(E), no position table", lambda t: t.x),
)
REAL_HEAD_STEPS: tuple[Step, ...] = (
    ("Q", "Q = X·W<sub>q</sub><sup>T</sup> + b<sub>q</sub>", "the head's queries", lambda t: t.q),
    ("K", "K = X·W<sub>k</sub><sup>T</sup> + b<sub>k</sub>", "the head's keys", lambda t: t.k),
    ("V", "V = X·W<sub>v</sub><sup>T</sup> + b<sub>v</sub>", "the head's values", lambda t: t.v),
    ("S", "S = QK<sup>T</sup>/√d<sub>head</sub>", "logits: query × key", lambda t: t.scores),
)
#: Every row of plots the figure has, top to bottom (each mode shows some of them).
ROW_KEYS = ("E", "PE", "X", "Q", "K", "Q_rot", "K_rot", "V", "B", "S", "A", "Z")
#: Steps whose columns are key words (not dimensions).
SQUARE_STEPS = ("B", "S", "A")
SPLIT_NAMES = ("e·e", "e·p", "p·e", "p·p", "total")
#: The strips of the split: an added encoding's four terms and total, or a rotation's three matrices.
#: A bias's strip: the logits without it, the bias, and their sum S.
BIAS_SPLIT_NAMES = ("QKᵀ/√d_k", "bias B", "S")
#: A real head's strip: its logits without and with the model's position table, and their difference.
STRIP_NAMES = {"table": SPLIT_NAMES, "rotation": ROTATION_TERMS, "bias": BIAS_SPLIT_NAMES, "model": TABLE_TERMS}


def steps(with_position: bool, rotation: bool = False, bias: bool = False, real: bool = False) -> tuple[Step, ...]:
    """The rows of plots, top to bottom: with position an added encoding's E, PE, X = E + PE, with
    ``rotation`` (RoPE) X = E and the rotated Q̃, K̃ before the logits, or with ``bias`` X = E and the bias B
    added to the logits; with ``real`` (a model's layer 0) E, P, X = LayerNorm(E + P) and the biased
    projections."""
    if real:
        return (REAL_POSITION_STEPS if with_position else REAL_PLAIN_STEPS) + REAL_HEAD_STEPS + OUTPUT_STEPS
    if with_position and bias:
        return BIAS_INPUT_STEPS + PROJECTION_STEPS + VALUE_STEPS + BIAS_STEPS + BIASED_SCORE_STEPS + OUTPUT_STEPS
    if with_position and rotation:
        return ROTATION_INPUT_STEPS + PROJECTION_STEPS + ROTATED_STEPS + VALUE_STEPS + ROTATED_SCORE_STEPS \
            + OUTPUT_STEPS
    inputs = POSITION_STEPS if with_position else PLAIN_STEPS
    return inputs + PROJECTION_STEPS + VALUE_STEPS + SCORE_STEPS + OUTPUT_STEPS


def _strip_key(kind: str, sentence: str) -> str:
    return f"{kind}_{sentence}"


def _masked_cells(allowed: np.ndarray | None) -> np.ndarray | None:
    """The cells to draw as masked (the keys a word does not see), or None when every key is seen."""
    if allowed is None or np.all(allowed):
        return None
    return ~allowed


def _shown_values(matrices: list[np.ndarray], masks: list[np.ndarray | None]) -> np.ndarray:
    """The entries the colour scale spans: every unmasked one."""
    return np.concatenate([m.ravel() if mask is None else m[~mask] for m, mask in zip(matrices, masks)])



def _sentence_title(key: str, tokens: tuple[str, ...], shape: tuple[int, int]) -> str:
    text = " ".join(tokens)
    if len(text) > 40:
        text = text[:39].rstrip() + "…"
    return f"{key}: {text}  ({shape[0]}×{shape[1]})"

def _split_header(title: str, formula: str, note: str) -> str:
    """The split's header: its title and formula on the first lines, what its matrices are in small grey type."""
    return (f"<span style='color:{FOREGROUND}; font-size:10pt'><b>{title}</b>{formula}</span><br>"
            f"<span style='color:#555555; font-size:8pt'>{note}</span>")


def _sum_check(demo: PermutationDemo, formula: str, where: str, parts: str) -> str:
    """The check line under a split whose matrices add up to S: the largest residual of each sentence."""
    checks = ", ".join(f"{s}: {r:.1e}" for s, r in
                       (("a", demo.split_a.max_abs_residual), ("b", demo.split_b.max_abs_residual)))
    return (f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: max |{formula}|{where} = "
            f"{checks} — {parts} add up to the total.</span>")


class PermutationFigure(QGraphicsWidget):
    """The demo's matrices for both sentences, one row per step, and the split of the logits below them.

    Every item is made once (a few milliseconds); later changes only refill
    them and resize rows. Items go into layouts, which hands their ownership
    to the scene's tree. Every mode's rows are made (an added encoding's E
    and PE, RoPE's rotated Q̃ and K̃, every kind of split); :meth:`apply_shape`
    hides the ones a mode does not show.
    """

    def __init__(self) -> None:
        super().__init__()
        grid = QGraphicsGridLayout()
        grid.setContentsMargins(6, 6, 6, 6)
        grid.setVerticalSpacing(2)
        grid.setHorizontalSpacing(6)
        self.setLayout(grid)
        self.grid = grid
        #: Every matrix, keyed ``{step}_{sentence}`` (``S_a``) or ``split_{sentence}_{name}``.
        self.matrices: dict[str, MatrixItem] = {}
        #: Each sentence's check of the split drawn last (its largest residual), as plain text.
        self.split_checks: dict[str, str] = {}
        top, _bottom = chrome_heights()
        self.colorbars: dict[str, ColorBar] = {}
        self.step_labels: dict[str, RichText] = {}
        self.step_rows: dict[str, int] = {}
        self.title_label = RichText()
        grid.addItem(self.title_label, 0, 0, 1, 4)
        row = 1
        for key in ROW_KEYS:
            label = RichText(align=Qt.AlignmentFlag.AlignRight, top=top)
            grid.addItem(label, row, 0)
            self.step_labels[key] = label
            for col, sentence in ((1, "a"), (2, "b")):
                matrix = MatrixItem()
                grid.addItem(matrix, row, col)
                self.matrices[f"{key}_{sentence}"] = matrix
            self.colorbars[key] = ColorBar()
            grid.addItem(self.colorbars[key], row, 3)
            self.step_rows[key] = row
            row += 1
        self.split_header = RichText()
        grid.addItem(self.split_header, row, 0, 1, 4)
        self.split_header_row = row
        row += 1
        #: The strips of the split, keyed ``table_a`` … ``rotation_b`` (see :func:`_strip_key`).
        self.split_rows: dict[str, int] = {}
        self.split_layouts: dict[str, QGraphicsGridLayout] = {}
        self.split_strips: dict[str, QGraphicsWidget] = {}
        for kind, names in STRIP_NAMES.items():
            for sentence in ("a", "b"):
                self._build_strip(kind, sentence, names, row, top)
                row += 1
        self.check_label = RichText()
        grid.addItem(self.check_label, row, 0, 1, 4)
        self.check_row = row
        grid.setColumnFixedWidth(0, LABEL_PIXELS)
        grid.setColumnFixedWidth(3, COLORBAR_PIXELS)
        grid.setColumnStretchFactor(1, 1)
        grid.setColumnStretchFactor(2, 1)
        # The strips' columns follow the figure's width: a strip of fixed columns cannot grow by itself
        # (it stayed as wide as the canvas was when its columns were first fitted).
        self.geometryChanged.connect(self._fit_all_split_columns)

    def _build_strip(self, kind: str, sentence: str, names: tuple[str, ...], row: int, top: float) -> None:
        """One sentence's strip of split matrices (``names``) with one colour bar, at ``row`` of the grid."""
        key = _strip_key(kind, sentence)
        strip = QGraphicsWidget()
        sub = QGraphicsGridLayout()
        sub.setContentsMargins(0, 0, 0, 0)
        sub.setHorizontalSpacing(4)
        strip.setLayout(sub)
        label = RichText(align=Qt.AlignmentFlag.AlignRight, top=top)
        label.setText(f"<span style='color:{FOREGROUND}'>sentence&nbsp;{sentence}</span>")
        sub.addItem(label, 0, 0)
        sub.setColumnFixedWidth(0, SPLIT_LABEL_PIXELS)
        for col, name in enumerate(names, start=1):
            matrix = MatrixItem()
            matrix.label_rows = col == 1  # the same words in every matrix of the strip
            sub.addItem(matrix, 0, col)
            sub.setColumnStretchFactor(col, 1)
            self.matrices[f"split_{sentence}_{name}"] = matrix
        bar = ColorBar()
        sub.addItem(bar, 0, len(names) + 1)
        sub.setColumnFixedWidth(len(names) + 1, COLORBAR_PIXELS)
        self.colorbars[f"split_{sentence}" if kind == "table" else f"{kind}_split_{sentence}"] = bar
        self.grid.addItem(strip, row, 0, 1, 4)
        self.split_rows[key] = row
        self.split_layouts[key] = sub
        self.split_strips[key] = strip

    def apply_shape(self, n_a: int, n_b: int, with_position: bool, rotation: bool, causal: bool,
                    bias: bool = False, real: bool = False) -> int:
        """Row heights for sentences of ``n_a`` and ``n_b`` words; hide the rows the mode does not show
        (E and PE without an added encoding, Q̃ and K̃ without a rotation, the other kind of split; a real
        head's E, P and its split). Returns the height the canvas needs to show every row."""
        grid = self.grid
        chrome = sum(chrome_heights()) + 4
        matrix_height = min(max(n_a, n_b) * ROW_PIXELS, MAX_MATRIX_PIXELS) + chrome
        # RoPE's title line and split header say more (its frequencies; why there are no four terms),
        # and so do the causal mask's (its line, the keys each word sees; what the grey cells are)
        heights = {0: (100 if rotation or real else 84) + (CAUSAL_TITLE_PIXELS if causal else 0),
                   self.split_header_row: (96 if rotation or real else 78) + (CAUSAL_SPLIT_PIXELS if causal else 0),
                   self.check_row: 30}
        shown = {key for key, *_ in steps(with_position, rotation, bias, real)}
        for key, row in self.step_rows.items():
            visible = key in shown
            for item in (self.step_labels[key], self.matrices[f"{key}_a"], self.matrices[f"{key}_b"],
                         self.colorbars[key]):
                item.setVisible(visible)
            heights[row] = matrix_height if visible else 0
        split_kind = "model" if real else "rotation" if rotation else "bias" if bias else "table"
        for kind in STRIP_NAMES:
            for sentence, n in (("a", n_a), ("b", n_b)):
                key = _strip_key(kind, sentence)
                self.split_strips[key].setVisible(kind == split_kind)
                heights[self.split_rows[key]] = (min(n * ROW_PIXELS, MAX_MATRIX_PIXELS) + chrome
                                                 if kind == split_kind else 0)
        spacing = grid.verticalSpacing()
        for row, height in heights.items():
            grid.setRowFixedHeight(row, height)
            grid.setRowSpacing(row, spacing if height else 0)
        count = sum(1 for h in heights.values() if h)
        return int(sum(heights.values()) + spacing * count + 16)

    def draw(self, demo: PermutationDemo, with_position: bool, title: str, description: str) -> None:
        """Draw ``demo`` with or without position under the rich-text ``title``; ``description`` names the
        positional scheme (in the split's header)."""
        real = isinstance(demo, RealHeadDemo)
        comparison = demo.comparison(with_position)
        traces = {"a": comparison.trace_a, "b": comparison.trace_b}
        self.title_label.setText(title)
        for key, formula, what, get in steps(with_position, demo.rotates, demo.biased, real):
            if demo.causal:
                what = CAUSAL_NOTES.get(key, what)
            self.step_labels[key].setText(
                f"<span style='color:{FOREGROUND}; font-size:10pt'><b>{formula}</b></span><br>"
                f"<span style='color:#555555; font-size:8pt'>{what}</span>"
            )
            self._draw_step(key, {sentence: get(trace) for sentence, trace in traces.items()}, traces)
        self._draw_split(demo, description)

    def _draw_step(self, key: str, values: dict[str, np.ndarray], traces: dict[str, AttentionTrace]) -> None:
        probabilities = key == "A"
        masks = {sentence: _masked_cells(trace.allowed) if key in SQUARE_STEPS else None
                 for sentence, trace in traces.items()}
        colormap, levels = colour_scale(_shown_values(list(values.values()), list(masks.values())),
                                        signed=not probabilities)
        if probabilities:
            levels = (0.0, 1.0)  # every weight is a probability: the whole range, in every figure
        self.colorbars[key].set_scale(colormap, levels)
        for sentence, trace in traces.items():
            matrix = values[sentence]
            self.matrices[f"{key}_{sentence}"].set_matrix(
                matrix, trace.tokens, trace.tokens if key in SQUARE_STEPS else None, colormap, levels,
                _sentence_title(sentence, trace.tokens, matrix.shape), masked=masks[sentence],
            )

    def _draw_split(self, demo: PermutationDemo, description: str) -> None:
        self.split_checks = {}
        if isinstance(demo, RealHeadDemo):
            self._draw_table_split(demo)
            return
        if demo.rotates:
            self._draw_rotation_split(demo, description)
            return
        if demo.biased:
            self._draw_bias_split(demo, description)
            return
        self.split_header.setText(_split_header(
            "Four-term split of the logits with position",
            f" (PE: {html.escape(description)})<br>"
            f"S = (e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)"
            f"<sup>T</sup>/√d<sub>k</sub> = e·e + e·p + p·e + p·p",
            f"e·e: meaning with meaning (the logits without position); "
            f"e·p: word with position; p·e: position with word; p·p: position with position.<br>"
            f"Rows: query word, columns: key word; % = the term's share of all four's |values|"
            f"{self._split_mask_note(demo)}."))
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            assert isinstance(split, LogitSplit)
            self._draw_split_row(sentence, split)
        where = " over the keys each word sees" if demo.causal else ""
        self.check_label.setText(_sum_check(demo, "e·e + e·p + p·e + p·p − S", where, "the four terms"))

    @staticmethod
    def _split_mask_note(demo: PermutationDemo) -> str:
        """What the split's grey cells are, under the causal mask or a masking bias ("" without)."""
        if not demo.causal and not demo.masked_split:
            return ""
        if demo.biased:
            return "; grey: masked keys (the causal mask, or a bias of −∞: keys after the query) — S is −∞ there"
        if demo.rotates:
            return "; grey: masked keys (j &gt; i) — the logits have values there, but the head never uses them"
        return ("; grey: masked keys (j &gt; i) — the terms have values there, but the head never uses them, "
                "and S is −∞")

    def _draw_split_row(self, sentence: str, split: LogitSplit) -> None:
        terms = split.terms()
        masked = _masked_cells(split.allowed)
        every = _shown_values([*terms.values(), split.total], [masked] * (len(terms) + 1))
        colormap, levels = colour_scale(every, signed=True)
        self.colorbars[f"split_{sentence}"].set_scale(colormap, levels)
        shares = split.shares()
        for name, term in terms.items():
            self.matrices[f"split_{sentence}_{name}"].set_matrix(
                term, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name}  {shares[name]:.0%}",
                masked=masked,
            )
        self.split_checks[sentence] = f"max |e·e + e·p + p·e + p·p − S| = {split.max_abs_residual:.1e}"
        self.matrices[f"split_{sentence}_total"].set_matrix(
            split.total, split.tokens, split.tokens, colormap, levels, f"{sentence}: total S", masked=masked,
        )
        self._fit_split_columns("table", sentence)

    def _draw_bias_split(self, demo: PermutationDemo, description: str) -> None:
        """A bias adds no term to X: the logits are the head's QKᵀ/√d_k plus the scheme's bias."""
        self.split_header.setText(_split_header(
            "The logits with a bias",
            f" ({html.escape(description)})<br>"
            f"S = e<sub>i</sub>W<sub>q</sub>·(e<sub>j</sub>W<sub>k</sub>)<sup>T</sup>/√d<sub>k</sub> + b(i, j): "
            f"nothing is added to the words, so there is no e·p, p·e or p·p",
            f"QKᵀ/√d<sub>k</sub>: meaning with meaning (the logits "
            f"without position); bias B: the scheme's b(i, j), which depends only on the positions; S: their sum."
            f"<br>Rows: query word, columns: key word{self._split_mask_note(demo)}."))
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            assert isinstance(split, LogitSplit) and split.bias is not None
            masked = _masked_cells(split.allowed)
            matrices = dict(zip(BIAS_SPLIT_NAMES, (split.ee, split.bias, split.total)))
            colormap, levels = colour_scale(_shown_values(list(matrices.values()), [masked] * 3), signed=True)
            self.colorbars[f"bias_split_{sentence}"].set_scale(colormap, levels)
            for name, matrix in matrices.items():
                self.matrices[f"split_{sentence}_{name}"].set_matrix(
                    matrix, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name}", masked=masked)
            self.split_checks[sentence] = f"max |QKᵀ/√d_k + B − S| = {split.max_abs_residual:.1e}"
            self._fit_split_columns("bias", sentence)
        where = " over the keys each word sees" if demo.masked_split else ""
        self.check_label.setText(_sum_check(demo, "QKᵀ/√d<sub>k</sub> + B − S", where, "the two"))

    def _draw_table_split(self, demo: RealHeadDemo) -> None:
        """A real head's logits without and with the model's position table, and their difference."""
        splits = {"a": demo.split_a, "b": demo.split_b}
        self.split_header.setText(_split_header(
            "The logits without and with the position table",
            f" ({html.escape(demo.label())})<br>"
            f"without: X = LayerNorm(E); with: X = LayerNorm(E + P); both S = QK<sup>T</sup>/√d<sub>head</sub>"
            f"; difference: the table's contribution",
            f"{html.escape(splits['a'].note)}<br>Rows: query token, columns: key token."))
        largest = {}
        for sentence, split in splits.items():
            assert isinstance(split, TableSplit)
            terms = split.terms()
            colormap, levels = colour_scale(np.concatenate([t.ravel() for t in terms.values()]), signed=True)
            self.colorbars[f"model_split_{sentence}"].set_scale(colormap, levels)
            largest[sentence] = float(np.max(np.abs(split.difference)))
            for name, term in terms.items():
                size = f"  max |·| {largest[sentence]:.2g}" if name == TABLE_TERMS[2] else ""
                self.matrices[f"split_{sentence}_{name}"].set_matrix(
                    term, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name}{size}")
            self.split_checks[sentence] = f"max |S with − S without| = {largest[sentence]:.2g}"
            self._fit_split_columns("model", sentence)
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>The position table moves the logits by at most "
            f"{largest['a']:.2g} (a) and {largest['b']:.2g} (b).</span>"
        )

    def _draw_rotation_split(self, demo: PermutationDemo, description: str) -> None:
        """RoPE's logits without and with the rotation and their difference, with why there are no four terms."""
        splits = {"a": demo.split_a, "b": demo.split_b}
        self.split_header.setText(_split_header(
            "The logits without and with the rotation",
            f" ({html.escape(description)})<br>"
            f"without: QK<sup>T</sup>/√d<sub>k</sub> (the logits without position); with: "
            f"Q̃K̃<sup>T</sup>/√d<sub>k</sub> = "
            f"(R<sub>m</sub>q<sub>m</sub>)·(R<sub>n</sub>k<sub>n</sub>)/√d<sub>k</sub>"
            f"; difference: the rotation's contribution",
            f"{html.escape(splits['a'].note)}<br>"
            f"Rows: query word at m, columns: key word at n; on the diagonal (n − m = 0) the rotation "
            f"changes nothing but HF's attention factor{self._split_mask_note(demo)}."))
        for sentence, split in splits.items():
            assert isinstance(split, RotationSplit)
            self._draw_rotation_split_row(sentence, split)
        checks = ", ".join(f"{sentence}: {split.shift_residual:.1e}" for sentence, split in splits.items())
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: shifting every position by "
            f"{SHIFT_CHECK:,.0f} changes the rotated logits by at most {checks} — they depend only on the "
            f"offset n − m.</span>"
        )

    def _draw_rotation_split_row(self, sentence: str, split: RotationSplit) -> None:
        terms = split.terms()
        masked = _masked_cells(split.allowed)
        colormap, levels = colour_scale(_shown_values(list(terms.values()), [masked] * len(terms)), signed=True)
        self.colorbars[f"rotation_split_{sentence}"].set_scale(colormap, levels)
        for name, term in terms.items():
            shown = term if masked is None else term[~masked]
            size = f"  max |·| {np.max(np.abs(shown)):.2g}" if name == "difference" else ""
            self.matrices[f"split_{sentence}_{name}"].set_matrix(
                term, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name}{size}", masked=masked,
            )
        self.split_checks[sentence] = (f"max |S(positions + {SHIFT_CHECK:,.0f}) − S| = "
                                       f"{split.shift_residual:.1e}")
        self._fit_split_columns("rotation", sentence)

    def _fit_all_split_columns(self) -> None:
        for kind in STRIP_NAMES:
            for sentence in ("a", "b"):
                self._fit_split_columns(kind, sentence)

    def _fit_split_columns(self, kind: str, sentence: str) -> None:
        """Share the figure's width among a strip's matrices. Only the first matrix of a strip labels
        its rows: widen its column by the labels' width so all of them draw their cells the same size."""
        key = _strip_key(kind, sentence)
        layout, names = self.split_layouts[key], STRIP_NAMES[kind]
        labels = self.matrices[f"split_{sentence}_{names[0]}"].label_width()
        count = len(names)
        left, _top, right, _bottom = self.grid.getContentsMargins()
        width = self.size().width() - left - right  # a strip spans every column of the grid
        spare = (width - SPLIT_LABEL_PIXELS - COLORBAR_PIXELS
                 - layout.horizontalSpacing() * (count + 1) - labels)
        width = max(spare / count, 10.0)
        for col in range(1, count + 1):
            # At most this wide, not fixed: a strip may shrink with the figure, which then fits it anew.
            target = width + (labels if col == 1 else 0.0)
            layout.setColumnMinimumWidth(col, 0.0)
            layout.setColumnPreferredWidth(col, target)
            layout.setColumnMaximumWidth(col, target)
