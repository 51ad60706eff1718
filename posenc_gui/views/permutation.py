"""Permutation demo: "dog bites man" and "man bites dog" through one attention head.

Every matrix of ``X → Q, K, V → QKᵀ/√d_k → softmax → AV`` is drawn for both
sentences side by side (with RoPE, also the rotated ``Q̃`` and ``K̃``), as small heatmaps with the numbers written in the
cells and the rows labelled by the words (:mod:`.matrix_items`). With the
causal mask the keys a word does not see are drawn as masked cells. All
numbers come from :mod:`posenc_gui.model.attention`; this module only
draws them (the figure: :mod:`.permutation_figure`, its title: :mod:`.permutation_text`).

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
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
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
    MAX_WORDS,
    MIN_DEMO_D_MODEL,
    LogitSplit,
    PermutationDemo,
    permutation_demo,
)
from ..model.attention.bert_head import RealHeadDemo, bert_permutation_demo, head_count, real_head_available
from . import model_open
from .base import MESSAGE_STYLES, Panel
from .param_controls import ViewSpinBox
from ..state import VIEW_SPECS
from .registry import PanelOption
from .labels import WrappedLabelHolder, plain_text
from .permutation_figure import MIN_CANVAS_PIXELS, PermutationFigure
from .permutation_text import figure_title, pe_description
from .plotkit import new_layout_widget
from .plotkit.theme import themed_text


#: What the head chooser's toy entry holds (a real head holds its index).
TOY_HEAD = -1


def _check_causal(on: object) -> bool:
    """``on`` as a bool; ValueError naming ``causal`` for anything but True or False."""
    if not isinstance(on, (bool, np.bool_)):
        raise ValueError(f"causal must be true or false, got {on!r}")
    return bool(on)


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
                    default=DEFAULT_SENTENCE_A, example="a b"),
        PanelOption("--sentence-b", "second sentence, e.g. the same words reordered", metavar="TEXT",
                    default=DEFAULT_SENTENCE_B, example="b a"),
        PanelOption("--position", "add the positional encoding, or with RoPE rotate Q and K "
                    "(--no-position: X = E, no rotation)", boolean=True, default=True, example=False),
        PanelOption("--demo-d-model", "embedding size of the toy attention head", spec=VIEW_SPECS["demo_d_model"],
                    example=8),
        PanelOption("--causal", "mask future keys (a decoder's head): word i attends to words 0…i only "
                    "(--no-causal: every word sees every word)", boolean=True, default=False, example=True),
        PanelOption("--real-head", "run head H of layer 0 of the BERT-family model opened with --model (its "
                    f"folder has tokenizer.json) instead of the toy head; {TOY_HEAD}: the toy head", type=int,
                    metavar="H", default=TOY_HEAD, example=-1),
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
        """A scheme that gives a table (added to the embeddings), a rotation it declares (applied to the head's
        queries and keys), or a bias (added to the head's logits)."""
        return "table" in info.provides or info.rotation is not None or info.family == "bias"

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
        self.figure = PermutationFigure()
        self.canvas.setCentralItem(self.figure)
        self._shape: tuple | None = None
        #: Whether the sentences' checkbox names a rotation (RoPE) or an added encoding.
        self._rotation_labels: str | None = None
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
        return pe_description(self._params_used or self.state.params)

    def verdict_text(self) -> str:
        """The verdict lines as plain text (what the label shows)."""
        return "\n".join(self.demo.verdict_lines()) if self.demo is not None else ""

    def _label_position_switch(self, rotation: str | None, real: bool = False) -> None:
        """Name the position switch after what it does: add the encoding, rotate Q and K (``rotation``: RoPE,
        xPos), or add a real model's position table."""
        kind = "real" if real else rotation
        if kind == self._rotation_labels:
            return
        self._rotation_labels = kind
        if real:
            self.pe_check.setText("Add the model's position table")
            self.pe_check.setToolTip("X = LayerNorm(E + P), P the model's position rows 0 … n−1, instead of "
                                     "X = LayerNorm(E)")
        elif rotation:
            self.pe_check.setText(f"Rotate Q and K by position ({rotation})")
            self.pe_check.setToolTip("Q̃ = R·Q, K̃ = R·K before the logits (the scheme of the Parameters panel, "
                                     "at this demo's d_k) instead of no position; X = E either way")
        else:
            self.pe_check.setText("Add positional encoding")
            self.pe_check.setToolTip("X = E + PE (the scheme of the Parameters panel) instead of X = E")

    def _update_verdict(self) -> None:
        demo = self.demo
        assert demo is not None
        real = isinstance(demo, RealHeadDemo)
        self._label_position_switch(demo.rotation_name, real)
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

    def _redraw(self) -> None:
        demo = self.demo
        assert demo is not None
        real = isinstance(demo, RealHeadDemo)
        shape = (len(demo.tokens_a), len(demo.tokens_b), self.with_position, demo.rotates, demo.causal,
                 demo.biased, real)
        if shape != self._shape:
            self.canvas.setMinimumHeight(self.figure.apply_shape(*shape))
            self._shape = shape
        self._update_verdict()
        description = self._pe_description()
        d_model = (self._params_used or self.state.params).d_model
        self.figure.draw(demo, self.with_position, figure_title(demo, self.with_position, description, d_model),
                         description)

    # ------------------------------------------------------------------ export
    def headline(self) -> str:
        """The demo's verdict: whether the reordering changed the output."""
        return plain_text(self.verdict_label.text())

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
