"""Decoder: a real Llama-family decoder's attention, every layer and head, in six views.

The model is the one opened in the window (File ▸ Open model…, a drop, ``--model PATH``) or
picked with the panel's Model… button (``--decoder PATH`` on the command
line). The text is traced in the worker (:func:`~posenc_gui.model.decoder.view_data.trace_text`):
its progress comes back through the compute service's progress channel and shows under the
text; a newer request of the same kind stops the one running (its ``progress`` returns False)
and wins. Changing the layer or head only redraws; frequency use, what-if and the permutation
demo ask the worker for their own numbers.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton,
                               QSpinBox, QStackedWidget, QWidget)

from ..compute import ModelJob
from ..model.decoder.orderings import DEFAULT_ORDERINGS, trace_orderings
from ..model.decoder.view_data import DecoderRun, TraceCancelled, frequency_use, one_layer, trace_text
from ..model.files.model_setup import one_line
from . import model_open
from .base import Panel
from .decoder_figures import FIGURES as _FIGURES
from .decoder_figures import DecoderFigure, FrequencyFigure, WhatIfFigure
from .decoder_permutation import PermutationFigure
from .labels import StatusText
from .registry import DockPlacement, PanelOption

NO_MODEL = ("Open a Llama-family model (Hugging Face folder or GGUF) with File ▸ Open model…, or pick one with "
            "the Model… button: this panel traces its attention, every layer and head.")
DEFAULT_TEXT = "The cat sat on the mat. The cat sat on the mat."
#: The views, by the name ``--view`` takes.
VIEW_NAMES = {"head": 0, "offset": 1, "model": 2, "frequency": 3, "what-if": 4, "permutation": 5}
#: The views' figures, in :data:`VIEW_NAMES`' order.
FIGURES = (*_FIGURES, PermutationFigure)
#: Figures drawn from numbers the worker computes for them (beside the panel's trace).
_OWN_DATA = (FrequencyFigure, WhatIfFigure, PermutationFigure)
#: The what-if's scaling methods (Hugging Face rope_type), "" for the model's own.
SCALINGS = ("", "linear", "dynamic", "yarn")


def _non_negative(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number ≥ 0, got {value!r}")
    return value


class DecoderPanel(Panel):
    """A decoder's attention: head view, attention by offset, model view, frequency use, what-if, permutation."""

    panel_id = "decoder"
    title = "Decoder"
    requires = frozenset()
    dock = DockPlacement("right", shown=False)
    model_functions = (trace_text, frequency_use, trace_orderings)
    comparable = False
    in_handout = False
    cli_options = (
        PanelOption("--decoder", "the Llama-family decoder to trace (Hugging Face folder or GGUF file)",
                    metavar="PATH", example="no-such-model.gguf"),
        PanelOption("--text", "the text the decoder reads", metavar="TEXT", example="a b"),
        PanelOption("--layer", "the layer shown (0 … layers − 1)", type=int, metavar="L", example=0),
        PanelOption("--decoder-head", "the head shown (0 … heads − 1; --head is a bias scheme's)", type=int,
                    metavar="H", example=0),
        PanelOption("--view", "which view of the decoder", choices=tuple(VIEW_NAMES), example="model"),
        PanelOption("--what-if-theta", "the what-if's rope_theta (0: the model's)", type=float, metavar="THETA",
                    example=500.0),
        PanelOption("--what-if-scaling", "the what-if's scaling method", choices=SCALINGS[1:], example="linear"),
        PanelOption("--what-if-factor", "the what-if's scaling factor", type=float, metavar="F", example=2.0),
        PanelOption("--gap-token", "the what-if's gap: positions move up from this token on", type=int, metavar="I",
                    example=1),
        PanelOption("--gap-size", "the what-if's gap: by this many positions", type=int, metavar="G", example=10),
        PanelOption("--ordering-a", "the permutation view's first text", metavar="TEXT", example="a b"),
        PanelOption("--ordering-b", "the permutation view's second text: the first's words in another order",
                    metavar="TEXT", example="b a"),
    )
    help_text = (
        "A real decoder (Llama, Mistral, Qwen2 and SmolLM families) run in NumPy on your text, as Hugging Face "
        "computes it. <b>Head view</b>: one head's softmax attention, query tokens in rows, keys in columns, the "
        "causal mask grey. <b>Attention by offset</b>: the head's mean attention against the offset i − j and "
        "against the key's position j (a previous-token head peaks at offset 1, an attention sink at key 0), and "
        "each head's share of attention on token 0. <b>Model view</b>: every layer × head as its offset profile, "
        "positional and sink heads marked (definitions under the figure). <b>Frequency use</b>: each rotary "
        "pair's term of the last token's logits against the offset, the pairs' norms in q and k and their "
        "wavelengths (Barbero et al. 2024). <b>What-if</b>: the head with another RoPE set-up or a gap in the "
        "positions, against the model's own. <b>Permutation</b>: a text and its words reordered (“The dog bites "
        "the man.” / “The man bites the dog.”) through the same head, aligned by token: what the causal mask and RoPE "
        "change, in numbers."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.model_button = QPushButton("Model…", self)
        self.model_button.setToolTip("Pick a Llama-family model (GGUF file or Hugging Face folder) for this panel")
        self.model_button.clicked.connect(self._pick_model)
        self.view_combo = QComboBox(self)
        for figure in FIGURES:
            self.view_combo.addItem(figure.name)
        self.layer_spin = QSpinBox(self)
        self.head_spin = QSpinBox(self)
        for spin, name in ((self.layer_spin, "layer"), (self.head_spin, "head")):
            spin.setPrefix(f"{name} ")
            spin.setRange(0, 0)
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(self._redraw)
        self.header.addWidget(self.model_button)
        self.header.addWidget(self.view_combo)
        self.header.addWidget(self.layer_spin)
        self.header.addWidget(self.head_spin)
        self.finish_header()
        text_row = QHBoxLayout()
        self.text_edit = QLineEdit(DEFAULT_TEXT, self)
        self.text_edit.setPlaceholderText("Text for the decoder to read")
        self.text_edit.editingFinished.connect(self.schedule_update)
        self.model_label = QLabel("", self)
        text_row.addWidget(QLabel("Text:", self))
        text_row.addWidget(self.text_edit, 1)
        text_row.addWidget(self.model_label)
        self.body.addLayout(text_row)
        self.progress = QProgressBar(self)
        self.progress.setFormat("tracing: layer %v of %m")
        self.progress.hide()
        self.body.addWidget(self.progress)
        self.what_if_row = self._what_if_controls()
        self.body.addWidget(self.what_if_row)
        self.orderings_row = self._ordering_controls()
        self.body.addWidget(self.orderings_row)
        self.stack = QStackedWidget(self)
        self.figures: list[DecoderFigure] = []
        for figure_class in FIGURES:
            figure = figure_class(self)
            self.figures.append(figure)
            self.stack.addWidget(figure.canvas)
        self.body.addWidget(self.stack, 1)
        self.caption_line = StatusText("", self, wrap=True)
        self.body.addWidget(self.caption_line)
        self.view_combo.currentIndexChanged.connect(self._view_chosen)
        self.run: DecoderRun | None = None
        self._picked: str | None = None
        self._extra_key: tuple | None = None
        self._extra: Any = None
        self._wanted: tuple[int | None, int | None] = (None, None)
        #: The kinds of request ("trace", "extra") running, and the layers each has done (done, total).
        self._running: dict[str, tuple[int, int] | None] = {}
        state.modelOpened.connect(self._model_opened)
        self._view_chosen(0)
        self.schedule_update()  # a model opened before the panel was built (the window builds docks as needed)

    def _what_if_controls(self) -> QWidget:
        row = QWidget(self)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        self.scaling_combo = QComboBox(row)
        for scaling in SCALINGS:
            self.scaling_combo.addItem(scaling or "model's scaling", scaling)
        self.factor_spin = QDoubleSpinBox(row)
        self.factor_spin.setRange(1.0, 64.0)
        self.factor_spin.setValue(4.0)
        self.factor_spin.setPrefix("factor ")
        self.theta_spin = QDoubleSpinBox(row)
        self.theta_spin.setRange(0.0, 1e9)
        self.theta_spin.setDecimals(0)
        self.theta_spin.setSpecialValueText("θ: model's")
        self.theta_spin.setPrefix("θ ")
        self.gap_token_spin = QSpinBox(row)
        self.gap_token_spin.setRange(1, 8192)
        self.gap_token_spin.setValue(4)
        self.gap_token_spin.setPrefix("gap at token ")
        self.gap_size_spin = QSpinBox(row)
        self.gap_size_spin.setRange(0, 1_000_000)
        self.gap_size_spin.setPrefix("+")
        self.gap_size_spin.setSuffix(" positions")
        layout.addWidget(QLabel("What-if:", row))
        for widget in (self.scaling_combo, self.factor_spin, self.theta_spin, self.gap_token_spin, self.gap_size_spin):
            layout.addWidget(widget)
            signal = getattr(widget, "currentIndexChanged", None) or widget.valueChanged
            signal.connect(self._redraw)
        for spin in (self.factor_spin, self.theta_spin, self.gap_token_spin, self.gap_size_spin):
            spin.setKeyboardTracking(False)
        layout.addStretch(1)
        return row

    def _ordering_controls(self) -> QWidget:
        row = QWidget(self)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        self.ordering_edits = (QLineEdit(DEFAULT_ORDERINGS[0], row), QLineEdit(DEFAULT_ORDERINGS[1], row))
        layout.addWidget(QLabel("A:", row))
        layout.addWidget(self.ordering_edits[0], 1)
        layout.addWidget(QLabel("B (A's words reordered):", row))
        layout.addWidget(self.ordering_edits[1], 1)
        for edit in self.ordering_edits:
            edit.editingFinished.connect(self._redraw)
        return row

    # --------------------------------------------------------------- the model
    def model_path(self) -> str | None:
        """The decoder traced: the one picked with Model… (or ``--decoder``), else the model opened in the window."""
        return self._picked or self.state.opened_model

    def _model_opened(self, path: str) -> None:
        self._picked = None  # the model the user opened last is the one to trace
        self.schedule_update()

    def _pick_model(self) -> None:
        start = os.path.dirname(self.model_path() or "") or os.path.expanduser("~")
        path = model_open.ask_model_file(self, start)
        if path is not None:
            self._picked = model_open.model_location(path)
            self.schedule_update()

    def unavailable_reason(self, params) -> str | None:
        return None

    def unavailable_message(self) -> str | None:
        return NO_MODEL if self.model_path() is None else None

    # ---------------------------------------------------------------- requests
    def request_update(self) -> None:
        """Trace the text in the worker when the model or text changed; else redraw (and ask for the view's data)."""
        path = self.model_path()
        if path is None:
            return
        text = self.text_edit.text()
        if self.run is not None and (self.run.path, self.run.text) == (path, text):
            self._redraw()
            return
        self._submit("trace", ModelJob(trace_text, (path, text)), self._traced, self._failed)

    def _submit(self, kind: str, job: ModelJob, on_result, on_error, reports_progress: bool = True) -> None:
        """Send a request of ``kind`` ("trace", "extra") to the worker, its progress (if its function
        ``reports_progress``) shown under the text; it supersedes (and stops) the running one of that kind."""
        self._running[kind] = None
        self._show_progress()
        on_progress = (lambda done, total: self._progressed(kind, done, total)) if reports_progress else None
        self.compute.submit((self, kind), job, on_result, on_error, on_progress=on_progress)

    def _progressed(self, kind: str, done: int, total: int) -> None:
        if kind in self._running:
            self._running[kind] = (done, total)
            self._show_progress()

    def _show_progress(self) -> None:
        """The progress bar: the trace's layers done (else the other request's), hidden when none runs."""
        if not self._running:
            self.progress.hide()
            return
        done = self._running.get("trace", self._running.get("extra"))
        if done is None:
            self.progress.setRange(0, 0)  # started, no layer done yet
        else:
            self.progress.setRange(0, done[1])
            self.progress.setValue(done[0])
        self.progress.show()

    def progress_shown(self) -> tuple[int, int] | None:
        """The (done, total) the progress bar shows, None while it is hidden or has no layer yet."""
        if self.progress.isHidden() or self.progress.maximum() == 0:
            return None
        return self.progress.value(), self.progress.maximum()

    def _finished_request(self, kind: str) -> None:
        self._running.pop(kind, None)
        self._show_progress()

    def _traced(self, run: DecoderRun) -> None:
        self._finished_request("trace")
        self.run = run
        self._extra_key, self._extra = None, None
        self.show_message("")
        self.model_label.setText(f"{run.name}: {run.num_layers} layers × {run.trace.num_heads} heads, "
                                 f"{len(run.token_texts)} tokens")
        for spin, count in ((self.layer_spin, run.num_layers), (self.head_spin, run.trace.num_heads)):
            spin.blockSignals(True)
            spin.setRange(0, count - 1)
            spin.blockSignals(False)
        wanted_layer, wanted_head = self._wanted
        self._wanted = (None, None)
        try:
            self.apply_options(layer=wanted_layer, decoder_head=wanted_head)
        except ValueError as error:
            self.show_message(str(error), "error")
        self._redraw()

    def _failed(self, error: Exception) -> None:
        self._finished_request("trace")
        if isinstance(error, TraceCancelled):
            return
        kept = " The last trace stays on screen." if self.run is not None else ""
        self.show_message(f"Decoder not traced: {one_line(error)}{kept}", "error")

    # ----------------------------------------------------------------- drawing
    def current_figure(self) -> DecoderFigure:
        return self.figures[self.view_combo.currentIndex()]

    def _view_chosen(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self.what_if_row.setVisible(isinstance(self.figures[index], WhatIfFigure))
        self.orderings_row.setVisible(isinstance(self.figures[index], PermutationFigure))
        self._redraw()

    def what_if(self) -> tuple[dict | None, tuple[int, int] | None]:
        """The what-if's RoPE keys (None: the model's) and gap (None: none), from its controls."""
        rope: dict[str, Any] = {}
        if self.theta_spin.value() > 0:
            rope["rope_theta"] = float(self.theta_spin.value())
        scaling = self.scaling_combo.currentData()
        if scaling:
            rope["rope_scaling"] = {"rope_type": scaling, "factor": float(self.factor_spin.value())}
        gap = (self.gap_token_spin.value(), self.gap_size_spin.value()) if self.gap_size_spin.value() else None
        return rope or None, gap

    def _redraw(self, *_: Any) -> None:
        """Draw the chosen view of the run; ask the worker for a view's own numbers when they are not here."""
        run = self.run
        if run is None:
            return
        figure = self.current_figure()
        layer, head = self.layer_spin.value(), self.head_spin.value()
        extra = None
        if isinstance(figure, _OWN_DATA):
            key = self._extra_request_key(figure, layer, head)
            if key != self._extra_key:
                self._request_extra(figure, key, layer, head)
                return
            extra = self._extra
            if extra is None:
                return
        figure.show(run, layer, head, extra)
        self.caption_line.setText(figure.caption())

    def _extra_request_key(self, figure: DecoderFigure, layer: int, head: int) -> tuple:
        if isinstance(figure, FrequencyFigure):
            return ("frequency", id(self.run), layer, head)
        if isinstance(figure, PermutationFigure):
            return ("permutation", self.run.path, *(edit.text() for edit in self.ordering_edits))
        rope, gap = self.what_if()
        return ("what-if", id(self.run), layer, repr(rope), gap)

    def _request_extra(self, figure: DecoderFigure, key: tuple, layer: int, head: int) -> None:
        run = self.run
        self._extra_key, self._extra = key, None
        if isinstance(figure, FrequencyFigure):
            job = ModelJob(frequency_use, (one_layer(run.trace, layer), layer, head))  # pickled here: one layer
        elif isinstance(figure, PermutationFigure):
            job = ModelJob(trace_orderings, key[1:])
        else:
            rope, gap = self.what_if()
            if rope is None and gap is None:
                self.show_message("What-if: choose another θ, a scaling method or a gap; the model's own is shown "
                                  "until then.", "info")
                job = None
                self._extra = run
            else:
                job = ModelJob(trace_text, (run.path, run.text, [layer], rope, gap))
        if job is not None:
            self._submit("extra", job, lambda result: self._extra_ready(key, result),
                         lambda error: self._extra_failed(key, error), job.function is not frequency_use)
        else:
            self._redraw()

    def _extra_ready(self, key: tuple, result: Any) -> None:
        self._finished_request("extra")
        if key == self._extra_key:
            self._extra = result
            self.show_message("")
            self._redraw()

    def _extra_failed(self, key: tuple, error: Exception) -> None:
        self._finished_request("extra")
        if key == self._extra_key and not isinstance(error, TraceCancelled):
            self._extra_key = None
            self.show_message(f"{self.current_figure().name}: {one_line(error)}", "error")

    # ------------------------------------------------------------------ export
    def figure_widget(self) -> QWidget:
        return self.current_figure().canvas

    def figure_caption(self) -> str:
        return self.current_figure().caption() if self.run is not None else ""

    def export_data(self) -> dict[str, Any]:
        """The numbers the current view draws; before any trace, only why there are none (``meta["message"]``)."""
        figure = self.current_figure()
        if self.run is None or not figure.arrays:
            return {"arrays": {}, "meta": {"view": figure.name,
                                           "message": self.unavailable_message() or "nothing traced yet"}}
        return {"arrays": dict(figure.arrays), "meta": dict(figure.meta)}

    def apply_options(self, **values: Any) -> None:
        """Set ``decoder``, ``text``, ``layer``, ``decoder_head``, ``view``, the what-if (``what_if_theta``,
        ``what_if_scaling``, ``what_if_factor``, ``gap_token``, ``gap_size``) and the permutation view's texts
        (``ordering_a``, ``ordering_b``); ValueError naming a bad one."""
        known = {option.dest for option in self.cli_options}
        unknown = sorted(set(values) - known)
        if unknown:
            raise TypeError(f"the {self.title} panel has no option {', '.join(unknown)}")
        values = {name: value for name, value in values.items() if value is not None}
        if "view" in values:
            if values["view"] not in VIEW_NAMES:
                raise ValueError(f"view must be one of {', '.join(VIEW_NAMES)}, got {values['view']!r}")
            self.view_combo.setCurrentIndex(VIEW_NAMES[values["view"]])
        self._apply_what_if(values)
        for name, spin in (("layer", self.layer_spin), ("decoder_head", self.head_spin)):
            if name in values:
                value = _non_negative(name, values[name])
                if self.run is None:
                    self._wanted = (value, self._wanted[1]) if name == "layer" else (self._wanted[0], value)
                elif value > spin.maximum():
                    raise ValueError(f"{name} must be in 0…{spin.maximum()}, got {value}")
                else:
                    spin.setValue(value)
        if "text" in values:
            self.text_edit.setText(str(values["text"]))
        for name, edit in zip(("ordering_a", "ordering_b"), self.ordering_edits):
            if name in values:
                edit.setText(str(values[name]))
        if "decoder" in values:
            self._picked = model_open.model_location(os.fspath(values["decoder"]))
        if {"text", "decoder"} & set(values):
            self.schedule_update()
        elif {"ordering_a", "ordering_b"} & set(values):
            self._redraw()

    def _apply_what_if(self, values: dict[str, Any]) -> None:
        if "what_if_scaling" in values:
            if values["what_if_scaling"] not in SCALINGS:
                raise ValueError(f"what_if_scaling must be one of {', '.join(SCALINGS[1:])}, "
                                 f"got {values['what_if_scaling']!r}")
            self.scaling_combo.setCurrentIndex(SCALINGS.index(values["what_if_scaling"]))
        for name, spin in (("what_if_theta", self.theta_spin), ("what_if_factor", self.factor_spin),
                           ("gap_token", self.gap_token_spin), ("gap_size", self.gap_size_spin)):
            if name in values:
                value = values[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                        spin.minimum() <= value <= spin.maximum()):
                    raise ValueError(f"{name} must be in {spin.minimum():g}…{spin.maximum():g}, got {value!r}")
                spin.setValue(value)

    def current_options(self) -> dict[str, Any]:
        names = {index: name for name, index in VIEW_NAMES.items()}
        options = {"text": self.text_edit.text(), "layer": self.layer_spin.value(),
                   "decoder_head": self.head_spin.value(),
                   "view": names[self.view_combo.currentIndex()],
                   "ordering_a": self.ordering_edits[0].text(), "ordering_b": self.ordering_edits[1].text()}
        if self._picked:
            options["decoder"] = self._picked
        return options
