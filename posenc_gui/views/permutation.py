"""Permutation demo: "dog bites man" and "man bites dog" through one attention head.

Every matrix of ``X → Q, K, V → QKᵀ/√d_k → softmax → AV`` is drawn for both
sentences side by side (with RoPE, also the rotated ``Q̃`` and ``K̃``), as small heatmaps with the numbers written in the
cells and the rows labelled by the words (:mod:`.matrix_items`). With the
causal mask the keys a word does not see are drawn as masked cells. All
numbers come from :mod:`posenc_gui.model.attention`; this module only
draws them.

With a BERT-family folder that has its ``tokenizer.json`` (the model opened
in the app, or one picked with "Model folder…"), the head chooser runs the
model's own first layer instead (:mod:`posenc_gui.model.attention.bert_head`): the
sentences as its tokenizer splits them, X = LayerNorm(word + type + position
rows), that layer's W_q, W_k, W_v for the chosen head, with and without the
position table.
"""

from __future__ import annotations

import html
import os
from typing import Any, Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGraphicsGridLayout,
    QGraphicsWidget,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QWidget,
)

from ..compute import ModelJob
from ..model import EncodingParams
from ..model.attention import (
    DEFAULT_SEED,
    DEFAULT_SENTENCE_A,
    DEFAULT_SENTENCE_B,
    MAX_DEMO_D_MODEL,
    MAX_LISTED_WORDS,
    MAX_WORDS,
    MIN_DEMO_D_MODEL,
    ROTATING_SCHEMES,
    ROTATION_TERMS,
    SHIFT_CHECK,
    AttentionTrace,
    LogitSplit,
    PermutationDemo,
    RotationSplit,
    permutation_demo,
    word_difference,
)
from ..model.attention.bert_head import TABLE_TERMS, RealHeadDemo, TableSplit, bert_permutation_demo, head_count, \
    real_head_available
from . import model_open
from .base import MESSAGE_STYLES, Panel
from .param_controls import ViewSpinBox
from ..state import VIEW_SPECS
from .registry import PanelOption
from .labels import WrappedLabelHolder, plain_text
from .matrix_items import (
    COLORBAR_PIXELS, MAX_MATRIX_PIXELS, ROW_PIXELS, ColorBar, MatrixItem, RichText, chrome_heights, shorten,
)
from .plotkit import FOREGROUND, colour_scale, new_layout_widget
from .plotkit.theme import themed_text


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
ROTATION_INPUT_STEPS: tuple[Step, ...] = (("X", "X = E", "RoPE adds nothing to X", lambda t: t.x),)
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
#: What the head chooser's toy entry holds (a real head holds its index).
TOY_HEAD = -1
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


def _check_causal(on: object) -> bool:
    """``on`` as a bool; ValueError naming ``causal`` for anything but True or False."""
    if not isinstance(on, (bool, np.bool_)):
        raise ValueError(f"causal must be true or false, got {on!r}")
    return bool(on)


def _sentence_title(key: str, tokens: tuple[str, ...], shape: tuple[int, int]) -> str:
    text = " ".join(tokens)
    if len(text) > 40:
        text = text[:39].rstrip() + "…"
    return f"{key}: {text}  ({shape[0]}×{shape[1]})"


class PermutationPanel(Panel):
    """Two orderings of the same words through one attention head, with and without position."""

    panel_id = "permutation"
    title = "Permutation demo"
    model_functions = (permutation_demo, bert_permutation_demo)
    #: A table to add or a rotation (RoPE): what the demo needs is either, see :meth:`shows`.
    requires = frozenset({"table"})  # or RoPE: see shows()
    view_settings = ("demo_d_model",)
    cli_options = (
        PanelOption("--sentence-a", "first sentence (words separated by spaces)", metavar="TEXT",
                    default=DEFAULT_SENTENCE_A),
        PanelOption("--sentence-b", "second sentence, e.g. the same words reordered", metavar="TEXT",
                    default=DEFAULT_SENTENCE_B),
        PanelOption("--position", "add the positional encoding, or with RoPE rotate Q and K "
                    "(--no-position: X = E, no rotation)", boolean=True, default=True),
        PanelOption("--demo-d-model", "embedding size of the toy attention head", spec=VIEW_SPECS["demo_d_model"]),
        PanelOption("--causal", "mask future keys (a decoder's head): word i attends to words 0…i only "
                    "(--no-causal: every word sees every word)", boolean=True, default=False),
        PanelOption("--real-head", "run head H of layer 0 of the BERT-family model opened with --model (its "
                    f"folder has tokenizer.json) instead of the toy head; {TOY_HEAD}: the toy head", type=int,
                    metavar="H", default=TOY_HEAD),
    )
    help_text = (
        "Self-attention, one head, traced number by number for two sentences: "
        "X → Q = XW<sub>q</sub>, K = XW<sub>k</sub>, V = XW<sub>v</sub> → "
        "A = softmax(QK<sup>T</sup>/√d<sub>k</sub>) by rows → Z = AV. "
        "Each word has a fixed toy embedding e (the same vector in every sentence) and the weights are "
        "fixed (seeded). <b>Without position</b> (X = E), reordering the words only reorders the rows: "
        "Z<sub>b</sub> = P Z<sub>a</sub> and A<sub>b</sub> = P A<sub>a</sub> P<sup>T</sup> for the permutation "
        "P, so “dog bites man” and “man bites dog” give the same output for each word — attention "
        "cannot see order. <b>With position</b> (X = E + PE, the scheme of the Parameters panel), word i "
        "carries e<sub>i</sub> + p<sub>i</sub> and the equality breaks; the number in the verdict is "
        "max |Z<sub>b</sub> − P Z<sub>a</sub>|. The last rows split each logit: "
        "(e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)<sup>T</sup>/√d<sub>k</sub> "
        "= e·e + e·p + p·e + p·p: meaning with meaning, meaning with position, position with meaning, "
        "position with position; the four add up to the total (checked). <b>With RoPE</b> nothing is added "
        "(X = E): the head turns each query and key by its position, Q̃ = R<sub>m</sub>Q, "
        "K̃ = R<sub>n</sub>K, so a logit depends on the offset n − m only and V is not turned; the "
        "rotation is RoPE at this demo's d<sub>k</sub> with the scheme's θ, pairing, partial rotary "
        "factor and scaling. The four-term split applies to added encodings only: for RoPE the last "
        "rows show the logits without and with the rotation and their difference. <b>Causal mask</b> (a "
        "decoder's head): word i attends only to words 0…i; the logits of later keys are −∞ before the "
        "softmax, so their weights are exactly 0 (grey cells, “masked” on hover) and each row of A is a "
        "softmax over the keys it sees. The mask is itself positional: what a word sees depends on where "
        "it stands, and the first word's output is its own value vector whatever the words are — so even "
        "without position (or with NoPE) reordering the words changes the outputs (Kazemnejad et al. 2023); "
        "the verdict counts the keys each word sees in a and in b. Rows are words (first "
        "word at the top); colours share one scale per row of plots (blue negative, red positive; A from "
        "0 to 1). <b>A real head</b>: with a BERT-family model folder that has its tokenizer.json (opened "
        "with File ▸ Open model, or picked with “Model folder…”), choose one of its first layer's heads: the "
        "sentences are split by the model's tokenizer ([CLS] and [SEP] included), X = LayerNorm(word + token "
        "type 0 + position rows), Q = XW<sub>q</sub><sup>T</sup> + b<sub>q</sub> and so on for that head's "
        "d<sub>head</sub> columns, exactly as Hugging Face's BertEmbeddings and BertSelfAttention; the switch "
        "leaves the position table out. The four-term split does not apply (LayerNorm comes first): the last "
        "rows show the logits without and with the table and their difference."
    )

    @classmethod
    def shows(cls, info) -> bool:
        """A scheme that gives a table (added to the embeddings), a rotation the demo applies (RoPE), or a bias
        (added to the head's logits)."""
        return "table" in info.provides or info.key in ROTATING_SCHEMES or info.family == "bias"

    def unavailable_reason(self, params) -> str | None:
        if self.shows(params.info):
            return None
        lacks = params.info.lacks(frozenset({"table"})) or ""
        return f"{lacks.rstrip('.')}, RoPE's rotation of the queries and keys, or a bias of the logits."

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.pe_check = QCheckBox("Add positional encoding", self)
        self.pe_check.setChecked(True)
        self.pe_check.setToolTip("X = E + PE (the scheme of the Parameters panel) instead of X = E")
        self.causal_check = QCheckBox("Causal mask", self)
        self.causal_check.setChecked(False)
        self.causal_check.setToolTip("Mask future keys, as a decoder does: word i attends to words 0…i only "
                                     "(their logits −∞, their weights 0)")
        self.demo_d_model = ViewSpinBox(state, "demo_d_model", self)
        self.d_model_spin = self.demo_d_model.box
        self.d_model_spin.setToolTip(
            f"Embedding size of this demo ({MIN_DEMO_D_MODEL}…{MAX_DEMO_D_MODEL}), small so the numbers "
            "can be read; independent of the Parameters panel's d_model")
        self.scheme_label = QLabel(self)
        self.head_combo = QComboBox(self)
        self.head_combo.setAccessibleName("head")
        self.head_combo.setToolTip("The toy head (seeded random weights), or a head of layer 0 of the BERT-family "
                                   "model folder opened (or picked with Model folder…)")
        self.head_combo.addItem("toy head", TOY_HEAD)
        self.folder_button = QPushButton("Model folder…", self)
        self.folder_button.setToolTip("Pick a BERT-family model folder (config.json, model.safetensors, "
                                      "tokenizer.json) whose first layer's heads this demo runs")
        self.header.addWidget(self.pe_check)
        self.header.addWidget(self.causal_check)
        self.header.addWidget(QLabel("demo d_model:", self))
        self.header.addWidget(self.d_model_spin)
        self.finish_header()
        # the scheme's name is long (a preset's, a model's): on a row of its own, wrapped, it never widens the dock
        self.scheme_label.setWordWrap(True)
        self.body.addWidget(WrappedLabelHolder(self.scheme_label, self))

        self.sentence_a_edit = QLineEdit(DEFAULT_SENTENCE_A, self)
        self.sentence_b_edit = QLineEdit(DEFAULT_SENTENCE_B, self)
        for edit, name in ((self.sentence_a_edit, "sentence a"), (self.sentence_b_edit, "sentence b")):
            edit.setAccessibleName(name)
            edit.setPlaceholderText(f"type {name} (1…{MAX_WORDS} words)")
            edit.setClearButtonEnabled(True)
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("Sentence a:", self), 0, 0)
        grid.addWidget(self.sentence_a_edit, 0, 1)
        grid.addWidget(QLabel("Sentence b:", self), 0, 2)
        grid.addWidget(self.sentence_b_edit, 0, 3)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        # The head chooser has a row of its own: in the header it made the dock wider than its figure.
        self.head_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.head_combo.setMinimumContentsLength(30)
        heads = QHBoxLayout()
        heads.setContentsMargins(0, 0, 0, 0)
        heads.addWidget(self.head_combo)
        heads.addWidget(self.folder_button)
        heads.addStretch(1)
        grid.addWidget(QLabel("Head:", self), 1, 0)
        grid.addLayout(heads, 1, 1, 1, 3)
        self.body.addLayout(grid)

        self.verdict_label = QLabel(self)
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(WrappedLabelHolder(self.verdict_label, self))

        self.canvas = new_layout_widget()
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.canvas)
        self.body.addWidget(self.scroll, 1)

        self.demo: PermutationDemo | None = None
        self.with_position = True
        self._params_used: EncodingParams | None = None
        #: The inputs of the last request (sentences, demo d_model, scheme and its parameters).
        self._requested: tuple | None = None
        self.canvas.setMinimumWidth(MIN_CANVAS_PIXELS)
        self.matrices: dict[str, MatrixItem] = {}
        self._build()
        self.split_checks: dict[str, str] = {}
        self._shape: tuple | None = None
        #: Whether the sentences' checkbox names a rotation (RoPE) or an added encoding.
        self._rotation_labels: bool | None = None
        #: A model folder picked with "Model folder…" (else the model opened in the app is used).
        self._picked_folder: str | None = None
        #: The model folder last seen open in the app.
        self._opened_folder: str | None = None
        #: The folder whose heads the chooser lists (None: only the toy head), and why a folder has none.
        self._heads_folder: str | None = None
        self._no_heads_reason = "no model folder is open"
        #: The folder last looked at (its heads listed, or the reason it has none).
        self._checked_folder: str | None = None
        self._refresh_heads()

        self.sentence_a_edit.textChanged.connect(self.request_update)
        self.sentence_b_edit.textChanged.connect(self.request_update)
        self.pe_check.toggled.connect(self._toggle_position)
        self.causal_check.toggled.connect(self.request_update)
        self.head_combo.currentIndexChanged.connect(self._head_chosen)
        self.folder_button.clicked.connect(self._pick_folder)
        state.paramsChanged.connect(self.schedule_update)  # a hidden dock catches up when shown
        state.paramsChanged.connect(self._refresh_heads)  # the chooser lists the heads of a model just opened
        self.request_update()

    # ------------------------------------------------------------------ inputs
    def apply_options(self, sentence_a: str | None = None, sentence_b: str | None = None,
                      position: bool | None = None, demo_d_model: int | None = None,
                      causal: bool | None = None, real_head: int | None = None) -> None:
        """Set the sentences, whether the encoding is added, the demo's d_model, the causal mask and the
        head (ValueError out of range; a bad causal or head changes nothing)."""
        if causal is not None:
            _check_causal(causal)
        if real_head is not None:
            self.set_head(real_head)
        if demo_d_model is not None:
            self.set_demo_d_model(demo_d_model)
        self.set_sentences(sentence_a=sentence_a, sentence_b=sentence_b)
        if position is not None:
            self.set_with_position(position)
        if causal is not None:
            self.set_causal(causal)

    def current_options(self) -> dict[str, object]:
        """The sentences, whether the encoding is added, whether the head is causal and the real head (the
        demo's d_model is a view setting)."""
        return {"sentence_a": self.sentence_a_edit.text(), "sentence_b": self.sentence_b_edit.text(),
                "position": self.pe_check.isChecked(), "causal": self.causal_check.isChecked(),
                "real_head": self._saved_head()}

    def _saved_head(self) -> int:
        """The head a session keeps: the chosen one of the model opened in the app; the toy head (-1) for a
        folder picked with Model folder…, which the session's parameters do not name (it would not reopen)."""
        return TOY_HEAD if self._picked_folder else self.chosen_head()

    # ------------------------------------------------------------------ the head
    def real_folder(self) -> str | None:
        """The folder whose heads can run: the one picked with Model folder… (until another model is opened in
        the app), else the model opened in the app."""
        params = self.state.params
        path = params.options.get("model_path") if params.scheme == "learned_file" else None
        opened = str(path) if path else None
        if opened != self._opened_folder:
            self._opened_folder = opened
            if opened:
                self._picked_folder = None  # the model the user opened last is the one to run
        return self._picked_folder or opened

    def chosen_head(self) -> int:
        """The head chosen: ``-1`` (:data:`TOY_HEAD`) for the toy head, else a head of layer 0."""
        return int(self.head_combo.currentData())

    def set_head(self, head: int) -> None:
        """Run head ``head`` of layer 0 of the model folder, or the toy head with ``-1``.

        Raises
        ------
        ValueError
            Naming ``real_head``: no BERT-family folder with tokenizer.json is
            open (with the reason), or ``head`` is out of its range.
        """
        if isinstance(head, bool) or not isinstance(head, (int, np.integer)):
            raise ValueError(f"real_head must be a head number or -1 (the toy head), got {head!r}")
        self._refresh_heads()
        if head == TOY_HEAD:
            self.head_combo.setCurrentIndex(0)
            return
        heads = self.head_combo.count() - 1
        if not heads:
            raise ValueError(f"real_head: the demo has only the toy head: {self._no_heads_reason}")
        if not 0 <= head < heads:
            raise ValueError(f"real_head must be -1 (the toy head) or 0 … {heads - 1}, got {head}")
        self.head_combo.setCurrentIndex(head + 1)

    def _refresh_heads(self) -> None:
        """List the heads of :meth:`real_folder` in the chooser when it changed (its config and headers only)."""
        folder = self.real_folder()
        if folder == self._checked_folder:
            return
        self._checked_folder = folder
        reason = real_head_available(folder)
        chosen = self.chosen_head()
        self.head_combo.blockSignals(True)
        while self.head_combo.count() > 1:
            self.head_combo.removeItem(1)
        if reason is None:
            assert folder is not None
            name = os.path.basename(os.path.normpath(folder))
            for head in range(head_count(folder)):
                self.head_combo.addItem(f"{name}: layer 0, head {head}", head)
            self._heads_folder, self._no_heads_reason = folder, ""
        else:
            self._heads_folder, self._no_heads_reason = None, reason
        self.head_combo.setCurrentIndex(chosen + 1 if 0 <= chosen + 1 < self.head_combo.count() else 0)
        self.head_combo.blockSignals(False)
        self.head_combo.setToolTip("The toy head (seeded random weights), or a head of layer 0 of a BERT-family "
                                   "model folder" + (f" — none now: {reason}" if reason else ""))
        self._enable_toy_controls()

    def _enable_toy_controls(self) -> None:
        """The demo's d_model and the causal mask belong to the toy head (a BERT head sees every token)."""
        toy = self.chosen_head() == TOY_HEAD
        self.d_model_spin.setEnabled(toy)
        self.causal_check.setEnabled(toy)

    def _head_chosen(self, _index: int) -> None:
        self._enable_toy_controls()
        self.request_update()

    def _pick_folder(self) -> None:
        """Ask for a BERT-family folder (the dialog is model_open's, which tests replace) and list its heads."""
        start = self.real_folder() or os.path.expanduser("~")
        folder = model_open.ask_model_folder(self, start)
        if folder is None:
            return
        reason = real_head_available(folder)
        if reason is not None:
            self.show_message(f"No real head: {reason}", "error")
            return
        self._picked_folder = folder
        self._refresh_heads()
        if self.chosen_head() == TOY_HEAD:
            self.head_combo.setCurrentIndex(1)  # the user picked a model to run it: its head 0

    def set_sentences(self, sentence_a: str | None = None, sentence_b: str | None = None) -> None:
        """Replace the sentences (the headless export uses this)."""
        if sentence_a is not None:
            self.sentence_a_edit.setText(sentence_a)
        if sentence_b is not None:
            self.sentence_b_edit.setText(sentence_b)

    def set_with_position(self, on: bool) -> None:
        """Show the trace with (True) or without (False) the positional encoding."""
        self.pe_check.setChecked(bool(on))

    def set_causal(self, on: bool) -> None:
        """Mask future keys (True: word i attends to words 0…i only) or not (False).

        Raises
        ------
        ValueError
            Naming ``causal``, for anything but True or False.
        """
        self.causal_check.setChecked(_check_causal(on))

    def set_demo_d_model(self, d_model: int) -> None:
        """The demo's embedding size, 2…64 (the shared view setting ``demo_d_model``).

        Raises
        ------
        ValueError
            Naming ``demo_d_model`` and its range.
        """
        self.state.set_view(demo_d_model=d_model)

    # ------------------------------------------------------------------ compute
    def _view_changed(self, name: str, value: object) -> None:
        if name == "demo_d_model":  # as the sentences: recomputed at once (a small demo)
            self.request_update()

    def request_update(self, *_args) -> None:
        """Recompute the demo in a worker from the current inputs; the newest request wins.

        The demo has its own d_model (the spin box): a change of the
        window's d_model or sequence length (unless the scheme reads it)
        leaves every input the same, and then nothing is computed or
        redrawn; 25 matrices were repainted identically on every d_model
        step.
        """
        if self._show_availability():  # a scheme the demo cannot show: its notice, not the model's refusal
            return
        self._refresh_heads()
        sentence_a, sentence_b = self.sentence_a_edit.text(), self.sentence_b_edit.text()
        params = self.state.params
        head, folder = self.chosen_head(), self._heads_folder
        if head != TOY_HEAD and folder is not None:  # the model's own layer 0 (its tokenizer splits the text)
            inputs = ("real", folder, sentence_a, sentence_b, head)
            if inputs == self._requested:
                return
            self._requested = inputs
            job = ModelJob(bert_permutation_demo, (folder, sentence_a, sentence_b, head))
            self.compute.submit(self, job, lambda demo: self._show((demo, params)), self._failed)
            return
        d_model = self.state.view["demo_d_model"]
        scheme, kwargs = params.scheme, params.scheme_kwargs()
        causal = self.causal_check.isChecked()
        inputs = (sentence_a, sentence_b, d_model, scheme, tuple(sorted(kwargs.items())), causal)
        if inputs == self._requested:
            if self._params_used is not None:
                self._params_used = params  # what the export reports; the demo is the same
            return
        self._requested = inputs

        job = ModelJob(permutation_demo, (sentence_a, sentence_b, d_model, scheme, kwargs, DEFAULT_SEED, causal))
        self.compute.submit(self, job, lambda demo: self._show((demo, params)), self._failed)

    def _failed(self, error: Exception) -> None:
        message = str(error)
        self.show_message(message, "error")
        self.sentence_a_edit.setStyleSheet("border: 1px solid #c0392b;" if "sentence_a" in message else "")
        self.sentence_b_edit.setStyleSheet("border: 1px solid #c0392b;" if "sentence_b" in message else "")

    def _show(self, result: tuple[PermutationDemo, EncodingParams]) -> None:
        demo, params = result
        self.demo = demo
        self._params_used = params
        self.show_message("")
        self.sentence_a_edit.setStyleSheet("")
        self.sentence_b_edit.setStyleSheet("")
        self._redraw()

    def _toggle_position(self, on: bool) -> None:
        self.with_position = bool(on)
        if self.demo is not None:
            self._redraw()

    # ------------------------------------------------------------------ drawing
    def _pe_description(self) -> str:
        params = self._params_used or self.state.params
        kwargs = params.scheme_kwargs()
        parts = [params.info.label, *(spec.title_part(kwargs[spec.name]) for spec in params.info.params
                                      if spec.applies(kwargs))]  # RoPE's factor only with a scaling type
        return ", ".join(part for part in parts if part)

    def verdict_text(self) -> str:
        """The verdict lines as plain text (what the label shows)."""
        return "\n".join(self.demo.verdict_lines()) if self.demo is not None else ""

    def _label_position_switch(self, rotation: bool, real: bool = False) -> None:
        """Name the position switch after what it does: add the encoding, rotate Q and K (RoPE), or add a real
        model's position table."""
        kind = "real" if real else rotation
        if kind == self._rotation_labels:
            return
        self._rotation_labels = kind
        if real:
            self.pe_check.setText("Add the model's position table")
            self.pe_check.setToolTip("X = LayerNorm(E + P), P the model's position rows 0 … n−1, instead of "
                                     "X = LayerNorm(E)")
        elif rotation:
            self.pe_check.setText("Rotate Q and K by position (RoPE)")
            self.pe_check.setToolTip("Q̃ = R·Q, K̃ = R·K before the logits (the scheme of the Parameters panel, "
                                     "at this demo's d_k) instead of no position; X = E either way")
        else:
            self.pe_check.setText("Add positional encoding")
            self.pe_check.setToolTip("X = E + PE (the scheme of the Parameters panel) instead of X = E")

    def _update_verdict(self) -> None:
        demo = self.demo
        assert demo is not None
        real = isinstance(demo, RealHeadDemo)
        self._label_position_switch(demo.rotates, real)
        lines = demo.verdict_lines()
        if demo.is_permutation:
            current = 1 if self.with_position else 0
            rendered = [
                (f"<b>{html.escape(line)}</b>" if i == current else html.escape(line)) for i, line in enumerate(lines)
            ]
            style = themed_text(MESSAGE_STYLES["info"])
        else:
            rendered = [html.escape(line) for line in lines]
            style = themed_text(MESSAGE_STYLES["warning"])
        self.verdict_label.setText("<br>".join(rendered))
        if self.verdict_label.styleSheet() != style:  # restyling re-polishes the label
            self.verdict_label.setStyleSheet(style)
        self.scheme_label.setText(f"Model: {html.escape(demo.label())}" if real else
                                  f"PE scheme: {html.escape(self._pe_description())}")

    def _figure_verdict(self, demo: PermutationDemo) -> str:
        """The comparison in two short lines for the figure (the long form is above the canvas)."""
        if not demo.is_permutation:
            return (f"<b>b is not a reordering of a</b> "
                    f"({html.escape(word_difference(demo.tokens_a, demo.tokens_b))}): no permutation to compare")
        lines = []
        for with_position in (False, True):
            c = demo.comparison(with_position)
            label = (("With RoPE" if demo.rotates else "With the bias" if demo.biased
                      else "With the position table" if isinstance(demo, RealHeadDemo) else "With position")
                     if with_position else "Without position")
            result = "the same rows, permuted" if c.same else "different: the head sees word order"
            text = (f"{label}: max |Z<sub>b</sub> − P Z<sub>a</sub>| = {c.max_abs_diff_output:.2g}, "
                    f"max |A<sub>b</sub> − P A<sub>a</sub> P<sup>T</sup>| = {c.max_abs_diff_attention:.2g} → {result}")
            lines.append(f"<b>{text}</b>" if with_position == self.with_position else text)
        mask = demo.without_pe.mask
        if mask is not None:
            seen = ", ".join(f"{html.escape(word)} {a}→{b}" for word, a, b in
                             zip(mask.words[:MAX_LISTED_WORDS], mask.keys_seen_a, mask.keys_seen_b))
            more = " …" if len(mask.words) > MAX_LISTED_WORDS else ""
            first_a, first_b = (html.escape(word) for word in mask.first_words)
            res_a, res_b = mask.first_output_minus_value
            lines.append(
                f"Causal mask, itself positional: keys seen a→b: {seen}{more}; the first word's output is its "
                f"value vector, max |Z[0] − V[0]| = {res_a:.1g} ({first_a}, a), {res_b:.1g} ({first_b}, b)")
        return "<br>".join(lines)

    def _build(self) -> None:
        """Create every item once (a few milliseconds); later changes only refill them and resize rows.

        The figure is one :class:`QGraphicsWidget` with a grid layout, set as
        the canvas's central item (pyqtgraph's own layout is not used). Items
        go into layouts, which hands their ownership to the scene's tree.
        Every mode's rows are made (an added encoding's E and PE, RoPE's
        rotated Q̃ and K̃, both kinds of split); :meth:`_apply_shape` hides
        the ones a mode does not show.
        """
        self.figure = QGraphicsWidget()
        grid = QGraphicsGridLayout()
        grid.setContentsMargins(6, 6, 6, 6)
        grid.setVerticalSpacing(2)
        grid.setHorizontalSpacing(6)
        self.figure.setLayout(grid)
        self.grid = grid
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
        self.figure.geometryChanged.connect(self._fit_all_split_columns)
        self.canvas.setCentralItem(self.figure)

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

    def _apply_shape(self, n_a: int, n_b: int, with_position: bool, rotation: bool, causal: bool,
                     bias: bool = False, real: bool = False) -> None:
        """Row heights for sentences of ``n_a`` and ``n_b`` words; hide the rows the mode does not show
        (E and PE without an added encoding, Q̃ and K̃ without a rotation, the other kind of split; a real
        head's E, P and its split)."""
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
        self.canvas.setMinimumHeight(int(sum(heights.values()) + spacing * count + 16))

    @staticmethod
    def _last_positions(demo: PermutationDemo) -> str:
        last_a, last_b = len(demo.tokens_a) - 1, len(demo.tokens_b) - 1
        return f"{last_a:,}" if last_a == last_b else f"{last_a:,} (a), {last_b:,} (b)"

    def _shown_position(self, demo: PermutationDemo) -> str:
        """The title's line on how the head sees position in the mode shown."""
        if isinstance(demo, RealHeadDemo):
            table = (f"X = LayerNorm(E + P), P: the position rows {demo.position_offset:,} … "
                     f"{demo.position_offset + max(len(demo.tokens_a), len(demo.tokens_b)) - 1:,}"
                     if self.with_position else "X = LayerNorm(E), no position table")
            return (f"<b>{html.escape(demo.label())}</b> ({demo.family}; hidden {demo.d_model:,}, "
                    f"d<sub>head</sub> = {demo.d_head}, LayerNorm eps {demo.layer_norm_eps:g}); {table}; "
                    f"tokens from its tokenizer.json")
        if not self.with_position:
            return f"X = E, no position; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}"
        description = html.escape(self._pe_description())
        if demo.biased:
            return (f"X = E, the logits + the bias of {description} at positions 0 … {self._last_positions(demo)}; "
                    f"d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}")
        if not demo.rotates:
            return f"X = E + PE, PE: {description}; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}"
        rotation = demo.with_pe.trace_a.rotation
        assert rotation is not None
        params = self._params_used or self.state.params
        partial = (f", {rotation.rotary_dim} of {demo.d_model} channels turn"
                   if rotation.rotary_dim < demo.d_model else "")
        factor = (f", cos and sin × attention factor {rotation.attention_factor:.4g}"
                  if rotation.attention_factor != 1.0 else "")
        return (f"X = E, Q and K rotated by {description} at the demo's d<sub>k</sub> = {demo.d_model} (not "
                f"d<sub>model</sub> {params.d_model:,}){partial}: θ<sub>i</sub> = {rotation.inv_freq[0]:.3g} … "
                f"{rotation.inv_freq[-1]:.3g}{factor}; positions 0 … {self._last_positions(demo)}")

    @staticmethod
    def _shown_mask(demo: PermutationDemo) -> str:
        """The title's line on the causal mask ("" without it)."""
        if not demo.causal:
            return ""
        return "<b>Causal mask</b>: word i attends to words 0…i only (grey cells: masked)<br>"

    def _redraw(self) -> None:
        demo = self.demo
        assert demo is not None
        real = isinstance(demo, RealHeadDemo)
        shape = (len(demo.tokens_a), len(demo.tokens_b), self.with_position, demo.rotates, demo.causal,
                 demo.biased, real)
        if shape != self._shape:
            self._apply_shape(*shape)
            self._shape = shape
        self._update_verdict()
        comparison = demo.comparison(self.with_position)
        traces = {"a": comparison.trace_a, "b": comparison.trace_b}
        self.title_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'>"
            f"<b>a:</b> {html.escape(shorten(' '.join(demo.tokens_a), 60))} &nbsp; "
            f"<b>b:</b> {html.escape(shorten(' '.join(demo.tokens_b), 60))}<br>"
            f"Shown: {self._shown_position(demo)}{'' if real else f', seed {demo.seed}'}<br>"
            f"{self._shown_mask(demo)}"
            f"{self._figure_verdict(demo)}</span>"
        )
        for key, formula, what, get in steps(self.with_position, demo.rotates, demo.biased, real):
            if demo.causal:
                what = CAUSAL_NOTES.get(key, what)
            self.step_labels[key].setText(
                f"<span style='color:{FOREGROUND}; font-size:10pt'><b>{formula}</b></span><br>"
                f"<span style='color:#555555; font-size:8pt'>{what}</span>"
            )
            self._draw_step(key, {sentence: get(trace) for sentence, trace in traces.items()}, traces)
        self._draw_split(demo)

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

    def _draw_split(self, demo: PermutationDemo) -> None:
        self.split_checks = {}
        if isinstance(demo, RealHeadDemo):
            self._draw_table_split(demo)
            return
        if demo.rotates:
            self._draw_rotation_split(demo)
            return
        if demo.biased:
            self._draw_bias_split(demo)
            return
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>Four-term split of the logits with position</b>"
            f" (PE: {html.escape(self._pe_description())})<br>"
            f"S = (e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)"
            f"<sup>T</sup>/√d<sub>k</sub> = e·e + e·p + p·e + p·p</span><br>"
            f"<span style='color:#555555; font-size:8pt'>e·e: meaning with meaning (the logits without position); "
            f"e·p: word with position; p·e: position with word; p·p: position with position.<br>"
            f"Rows: query word, columns: key word; % = the term's share of all four's |values|"
            f"{self._split_mask_note(demo)}.</span>"
        )
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            assert isinstance(split, LogitSplit)
            self._draw_split_row(sentence, split)
        checks = ", ".join(f"{s}: {r:.1e}" for s, r in
                           (("a", demo.split_a.max_abs_residual), ("b", demo.split_b.max_abs_residual)))
        where = " over the keys each word sees" if demo.causal else ""
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: max |e·e + e·p + p·e + p·p − S|{where} = "
            f"{checks} — the four terms add up to the total.</span>"
        )

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

    def _draw_bias_split(self, demo: PermutationDemo) -> None:
        """A bias adds no term to X: the logits are the head's QKᵀ/√d_k plus the scheme's bias."""
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>The logits with a bias</b>"
            f" ({html.escape(self._pe_description())})<br>"
            f"S = e<sub>i</sub>W<sub>q</sub>·(e<sub>j</sub>W<sub>k</sub>)<sup>T</sup>/√d<sub>k</sub> + b(i, j): "
            f"nothing is added to the words, so there is no e·p, p·e or p·p</span><br>"
            f"<span style='color:#555555; font-size:8pt'>QKᵀ/√d<sub>k</sub>: meaning with meaning (the logits "
            f"without position); bias B: the scheme's b(i, j), which depends only on the positions; S: their sum."
            f"<br>Rows: query word, columns: key word{self._split_mask_note(demo)}.</span>"
        )
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
        checks = ", ".join(f"{s}: {r:.1e}" for s, r in
                           (("a", demo.split_a.max_abs_residual), ("b", demo.split_b.max_abs_residual)))
        where = " over the keys each word sees" if demo.masked_split else ""
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: max |QKᵀ/√d<sub>k</sub> + B − S|{where} = "
            f"{checks} — the two add up to the total.</span>"
        )

    def _draw_table_split(self, demo: RealHeadDemo) -> None:
        """A real head's logits without and with the model's position table, and their difference."""
        splits = {"a": demo.split_a, "b": demo.split_b}
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>The logits without and with the position "
            f"table</b> ({html.escape(demo.label())})<br>"
            f"without: X = LayerNorm(E); with: X = LayerNorm(E + P); both S = QK<sup>T</sup>/√d<sub>head</sub>"
            f"; difference: the table's contribution</span><br>"
            f"<span style='color:#555555; font-size:8pt'>{html.escape(splits['a'].note)}<br>"
            f"Rows: query token, columns: key token.</span>"
        )
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

    def _draw_rotation_split(self, demo: PermutationDemo) -> None:
        """RoPE's logits without and with the rotation and their difference, with why there are no four terms."""
        splits = {"a": demo.split_a, "b": demo.split_b}
        note = splits["a"].note
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>The logits without and with the rotation</b>"
            f" ({html.escape(self._pe_description())})<br>"
            f"without: QK<sup>T</sup>/√d<sub>k</sub> (the logits without position); with: "
            f"Q̃K̃<sup>T</sup>/√d<sub>k</sub> = "
            f"(R<sub>m</sub>q<sub>m</sub>)·(R<sub>n</sub>k<sub>n</sub>)/√d<sub>k</sub>"
            f"; difference: the rotation's contribution</span><br>"
            f"<span style='color:#555555; font-size:8pt'>{html.escape(note)}<br>"
            f"Rows: query word at m, columns: key word at n; on the diagonal (n − m = 0) the rotation "
            f"changes nothing but HF's attention factor{self._split_mask_note(demo)}.</span>"
        )
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
        width = self.figure.size().width() - left - right  # a strip spans every column of the grid
        spare = (width - SPLIT_LABEL_PIXELS - COLORBAR_PIXELS
                 - layout.horizontalSpacing() * (count + 1) - labels)
        width = max(spare / count, 10.0)
        for col in range(1, count + 1):
            # At most this wide, not fixed: a strip may shrink with the figure, which then fits it anew.
            target = width + (labels if col == 1 else 0.0)
            layout.setColumnMinimumWidth(col, 0.0)
            layout.setColumnPreferredWidth(col, target)
            layout.setColumnMaximumWidth(col, target)

    # ------------------------------------------------------------------ export
    def headline(self) -> str:
        """The demo's verdict: whether the reordering changed the output."""
        return plain_text(self.verdict_label.text())

    def figure_widget(self) -> QWidget:
        return self.canvas

    def export_data(self) -> dict[str, Any]:
        """Both sentences' matrices (the shown mode first) and the JSON dict under ``meta["permutation"]``."""
        demo, params_used = self.demo, self._params_used
        if demo is None or self._stale:  # not delivered or out of date: compute now
            # (raises ValueError for bad input)
            params = params_used = self.state.params
            self._refresh_heads()
            if self.chosen_head() != TOY_HEAD and self._heads_folder is not None:
                demo = bert_permutation_demo(self._heads_folder, self.sentence_a_edit.text(),
                                             self.sentence_b_edit.text(), self.chosen_head())
            else:
                demo = permutation_demo(self.sentence_a_edit.text(), self.sentence_b_edit.text(),
                                        self.state.view["demo_d_model"], params.scheme, params.scheme_kwargs(),
                                        DEFAULT_SEED, self.causal_check.isChecked())
        arrays: dict[str, np.ndarray] = {}
        order = (True, False) if self.with_position else (False, True)
        for with_position in order:
            prefix = "with_pe" if with_position else "without_pe"
            comparison = demo.comparison(with_position)
            for sentence, trace in (("a", comparison.trace_a), ("b", comparison.trace_b)):
                matrices = {"Z": trace.output, "A": trace.attention, "S": trace.scores, "Q": trace.q,
                            "K": trace.k, "V": trace.v, "X": trace.x, "E": trace.embeddings}
                if trace.positional is not None:
                    matrices["PE"] = trace.positional
                if trace.rotation is not None:
                    matrices.update({"Q_rotated": trace.q_rotated, "K_rotated": trace.k_rotated,
                                     "S_unrotated": trace.unrotated_scores})
                if trace.masked:
                    matrices["allowed"] = trace.allowed
                for key, matrix in matrices.items():
                    arrays[f"{prefix}_{key}_{sentence}"] = np.array(matrix)
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            terms = split.terms()
            if isinstance(split, LogitSplit) and split.bias is not None:  # the fifth term of the total
                terms["bias"] = split.bias
            for name, term in terms.items():
                arrays[f"split_{sentence}_{name.replace('·', '').replace(' ', '_')}"] = np.array(term)
        meta = {
            "panel": self.panel_id,
            "with_position": self.with_position,
            "causal": demo.causal,
            "params": (params_used or self.state.params).as_dict(),
            "verdict": demo.verdict_lines(),
            "head": demo.label() if isinstance(demo, RealHeadDemo) else "toy head",
            "permutation": demo.to_dict(),
        }
        return {"arrays": arrays, "meta": meta}
