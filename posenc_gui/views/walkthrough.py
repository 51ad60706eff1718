"""Walkthrough: the notes, step by step, from attention without position to the sinusoidal encoding and RoPE.

Each step sets the parameters (``state.update``), brings forward the dock that
shows the problem and sets that panel's options through the window's
:class:`~posenc_gui.views.host.PanelHost` interface, and explains it in two or three
sentences; a line under the text shows the current scheme's scorecard row,
measured live, so the claims can be checked. The user may change any
parameter at any step; Next/Back (or the step list) apply that step again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any, Mapping

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..compute import ModelJob
from ..model import ParamSpec, limits
from ..model.analyses.measured import measure_scheme
from .base import ControlsPanel
from .plotkit import FOREGROUND
from .registry import PanelOption, panel_class

if TYPE_CHECKING:
    from ..model.analyses.scorecard import SchemeScore
    from ..model.attention.logit_properties import LogitProperties

#: Colour of the criteria's explanations under their names.
MUTED = "#5a6470"


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough.

    Attributes
    ----------
    title : str
    panel_id : str
        The dock brought forward.
    params : dict
        Passed to ``state.update`` (fields of :class:`EncodingParams`).
    text : str
        Two or three sentences (HTML).
    options : mapping
        Options set on panels of the window (those it has), ``{panel_id: {option: value}}``:
        keywords of each panel's ``apply_options``, declared in its ``cli_options``.
    """

    title: str
    panel_id: str
    params: dict
    text: str
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


STEPS: tuple[Step, ...] = (
    Step(
        "Attention cannot see word order", "permutation", {"scheme": "sinusoidal"},
        "Self-attention computes softmax(QKᵀ/√d<sub>k</sub>)·V from the rows of X = E alone. Reorder the "
        "words (“dog bites man” → “man bites dog”) and Q, K, V, the attention weights and the outputs are "
        "only reordered the same way: the measured difference is rounding. Tick “Add positional encoding” "
        "to give every word e<sub>i</sub> + p<sub>i</sub> and watch the outputs differ.",
        {"permutation": {"position": False, "causal": False}},
    ),
    Step(
        "Naive: add the index", "magnitude", {"scheme": "naive", "seq_len": 128},
        "p<sub>i</sub> = i in every dimension, so ‖p<sub>i</sub>‖ = i·√d grows without bound while a "
        "word embedding stays the same size (orange line): the position swamps the meaning and skews the "
        "scores. Drag the sequence length and watch the blue line climb.",
        {"magnitude": {"embedding_scale": 1.0}},
    ),
    Step(
        "Normalized: divide by N − 1", "scorecard", {"scheme": "normalized", "seq_len": 128},
        "p<sub>i</sub> = i/(N−1) stays in [0, 1] for the trained positions 0…N−1, but the step between "
        "neighbours, 1/(N−1), depends on the length: position 10 means something else in a short and a long "
        "text. Positions past the trained length leave [0, 1]: it is bounded in 0…N−1, unbounded past N — "
        "the scorecard’s “bounded past N” and “unseen lengths” columns fail.",
    ),
    Step(
        "A single sine collides", "uniqueness", {"scheme": "sine", "seq_len": 128},
        "sin(i) is continuous, defined for every i and bounded in 0…N−1 and past N, but periodic: "
        "sin(x) = sin(y) whenever "
        "y ≈ x + 2πm or y ≈ π − x + 2πm. The uniqueness view finds positions whose encodings nearly coincide "
        "— far closer than one step between neighbours.",
    ),
    Step(
        "A sin/cos pair still repeats", "uniqueness", {"scheme": "sincos_pair", "seq_len": 128},
        "[sin i, cos i] is a point on the unit circle, so sin(x) = sin(y) no longer confuses x and y — but "
        "the circle repeats every 2π. Since 44 ≈ 7·2π, position 44 lands almost on position 0 (try N = 1000: "
        "710 ≈ 113·2π is closer still).",
    ),
    Step(
        "Four vectors: two frequencies", "uniqueness", {"scheme": "four_vector", "seq_len": 128},
        "Adding the slower pair sin(i/2), cos(i/2) means a repeat must hit both circles at once, so "
        "near-repeats become rarer and less close (0 vs 88, since 88 ≈ 14·2π ≈ 7·4π). Two frequencies "
        "are still not enough for long sequences.",
    ),
    Step(
        "Many frequencies: quasi-periodic", "uniqueness", {"scheme": "harmonic", "seq_len": 128},
        "With [sin(i/k), cos(i/k)] for k = 1 … ⌈d/2⌉ every pair is periodic, but the combination is "
        "quasi-periodic: the closest pair of distinct positions is now a pair of neighbours. More "
        "frequencies push the minimum distance up.",
    ),
    Step(
        "The sinusoidal encoding", "spectrum",
        {"scheme": "sinusoidal", "seq_len": 128, "base": 10000.0, "layout": "interleaved"},
        "PE(pos, 2i) = sin(pos/10000<sup>2i/d</sup>), PE(pos, 2i+1) = cos(pos/10000<sup>2i/d</sup>): "
        "wavelengths grow geometrically from 2π to 2π·10000<sup>(d−2)/d</sup> (even d). Fast pairs "
        "separate neighbours, slow ones barely move over the sequence and tell roughly where you are; "
        "‖p‖² = d/2 at every position at even d (odd d: (d−1)/2 + the last sine's square).",
    ),
    Step(
        "The claim: PE(pos+k) = T_k·PE(pos)", "linear_relation",
        {"scheme": "sinusoidal", "base": 10000.0, "layout": "interleaved"},
        "Each (sin, cos) pair turns by k·ω<sub>i</sub> when the position moves by k, so T<sub>k</sub> is "
        "block-diagonal, one 2×2 rotation per pair, the same for every pos; the residual is rounding. "
        "At odd d the unpaired last sine has no rotation: T<sub>k</sub> is exact on the d−1 paired "
        "dimensions only. Switch the scheme to “All sine”: no rotation exists, and the least-squares "
        "T<sub>k</sub> (not unique) leaves a large residual — that is why sine and cosine come in pairs.",
        {"linear_relation": {"k": 5}},
    ),
    Step(
        "Relative, not absolute", "relative", {"scheme": "sinusoidal"},
        "At even d, PE(p)·PE(p+k) = Σ<sub>i</sub> cos(k·ω<sub>i</sub>) depends only on the offset k, not on "
        "where you are: its spread across p is zero, so attention can learn patterns about distance and "
        "direction. "
        "For naive or all-sine encodings the same offset gives different values at different p.",
    ),
    Step(
        "RoPE: apply T_k to q and k", "logits",
        {"scheme": "rope", "seq_len": 4096, "d_model": 128, "rope_theta": 10000.0, "rope_type": "default",
         "partial_rotary_factor": 1.0, "pairing": "halves"},
        "RoPE (Su et al.) adds nothing: it turns the query at m by R(m·θ) and the key at n by R(n·θ), one "
        "2×2 rotation per pair of channels with the sinusoid's θ<sub>i</sub> = 10000<sup>−2i/d</sup>, so "
        "q·k becomes q·R((n−m)·θ)·k — the T<sub>k</sub> of the last steps, applied to q and k: the score "
        "depends only on the offset, exactly, for every q and k. The row below measures the rotation "
        "itself (its T<sub>k</sub> is exact); this panel shows q·R((n−m)·θ)·k, the same along every diagonal.",
    ),
    Step(
        "ALiBi: bias the logits", "logits",
        {"scheme": "alibi", "seq_len": 4096, "d_model": 128, "n_heads": 8, "head": 0, "symmetric": False},
        "ALiBi (Press et al.) adds nothing to the words and rotates nothing: it adds −m·(i − j) to the logit "
        "of query i and key j ≤ i, one slope m per head (2<sup>−8k/n</sup>: 1/2 … 1/256 for 8 heads). The "
        "logit falls linearly with the distance — offset only, unbounded, and it decays by design: the "
        "table below measures each. Compare with RoPE (Compare ▸ RoPE) to see a rotation's logit beside it.",
        {"logits": {"compare": ""}},
    ),
    Step(
        "No encoding, and a causal mask", "permutation", {"scheme": "nope"},
        "A decoder masks the keys after each query: word i sees words 0…i only. The mask is itself "
        "positional: the first word sees only itself (its output is its own value vector). With no "
        "encoding at all (NoPE) permuting the sentence now changes the outputs, not just their order — the "
        "demo counts the keys each word sees. So decoders without positional encoding still learn order "
        "(Kazemnejad et al. 2023). Untick “Causal mask”: only reordered again.",
        {"permutation": {"position": True, "causal": True}},
    ),
    Step(
        "Why add instead of concatenate", "addition", {"scheme": "sinusoidal"},
        "Concatenating [e | p] doubles the input of every projection: 2d·d weights and twice the "
        "multiply-adds instead of d·d. Adding is free, and in high d a random embedding is nearly "
        "orthogonal to every positional vector (|cos| ≈ √(2/(πd))), so W<sub>q</sub>, W<sub>k</sub> can "
        "still separate meaning (e·e) from position (p·p) in the four-term split of the logit.",
        {"addition": {"embedding_scale": 1.0}},
    ),
    Step(
        "Scorecard: what p_i should be", "scorecard", {"scheme": "sinusoidal"},
        "The notes ask for unique, bounded, deterministic encodings that generalize to unseen lengths; the "
        "T<sub>k</sub> claim adds an exact relative map. Every scheme is measured against that list at the "
        "current sizes — change N, d or base and see which verdicts flip.",
    ),
)


#: Uniqueness budget for the one scheme measured here (the scorecard measures eight with less).
MEASURE_UNIQUE_WORK = 2**29
#: Width of the exported step (its text and the figure of the panel it shows), in logical pixels …
FIGURE_WIDTH = 960
#: … of which the shown figure takes at most this many (the rest is the margins).
SHOWN_FIGURE_WIDTH = FIGURE_WIDTH - 24
#: The shown panel's figure is rendered at this scale into the step's figure (sharp in a PNG at scale 2).
SHOWN_FIGURE_SCALE = 2.0


class ShownFigure(QWidget):
    """``image`` drawn at ``1 / scale`` of its pixels: at that scale's output, pixel for pixel (no resampling)."""

    def __init__(self, image: QImage, scale: float, parent: QWidget) -> None:
        super().__init__(parent)
        self.image = image
        self.setFixedSize(round(image.width() / scale), round(image.height() / scale))

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.drawImage(QRectF(self.rect()), self.image)
        painter.end()


class StepFigure(QWidget):
    """The exported figure of the walkthrough: the step's text, the measured row, and the figure of the panel it shows.

    A screenshot of the walkthrough's controls (greyed buttons, the step
    list) is no figure; this is made only for an export. The shown panel's
    figure is an image (rendered as that panel exports itself, caption
    included), or a sentence naming the panel when it has none to give.

    Parameters
    ----------
    heading, text, measured : str
        The step's title line, its text and the measured scorecard row (HTML; "" for none).
    shown : QImage or None
        The figure of the panel the step shows, rendered at :data:`SHOWN_FIGURE_SCALE` pixels per logical
        pixel, at most :data:`SHOWN_FIGURE_WIDTH` logical pixels wide.
    shown_note : str
        The line above that figure, or instead of it.
    """

    def __init__(self, heading: str, text: str, measured: str, shown: QImage | None, shown_note: str) -> None:
        super().__init__()
        self.setObjectName("walkthrough-figure")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(f"QWidget#walkthrough-figure {{ background: white; }} QLabel {{ color: {FOREGROUND}; }}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(8)
        for html, style in ((heading, "font-size: 12pt; font-weight: 600;"), (text, "font-size: 10pt;"),
                            (measured, "background:#f4f6f8; border:1px solid #d5dbe1; padding:4px;"),
                            (shown_note, "font-size: 9pt; color: #555555;")):
            if html:
                label = QLabel(html, self)
                label.setTextFormat(Qt.TextFormat.RichText)
                label.setWordWrap(True)
                label.setStyleSheet(style)
                layout.addWidget(label)
        if shown is not None:
            layout.addWidget(ShownFigure(shown, SHOWN_FIGURE_SCALE, self))
        self.setFixedWidth(FIGURE_WIDTH)
        self.setFixedHeight(layout.totalHeightForWidth(FIGURE_WIDTH))


class WalkthroughPanel(ControlsPanel):
    """A guided tour through the notes; each step sets the parameters and shows the dock that answers it."""

    panel_id = "walkthrough"
    title = "Walkthrough"
    model_functions = (measure_scheme,)
    help_text = (
        "A guided sequence following the notes: attention without position, the naive and normalized "
        "index, a single sine, a sin/cos pair, four vectors, many frequencies, the sinusoidal encoding "
        "PE(pos, 2i) = sin(pos/base<sup>2i/d</sup>), PE(pos, 2i+1) = cos(pos/base<sup>2i/d</sup>), the "
        "claim PE(pos+k) = T<sub>k</sub>·PE(pos), relative offsets and why the encoding is added. "
        "Next/Back set that step’s parameters and bring its dock forward; you may change any parameter "
        "at any step. The “Measured now” line is the scorecard row of the current scheme, recomputed "
        "whenever a parameter changes."
    )

    sets_other_state = True
    cli_options = (PanelOption("--step", "walkthrough step to show (0: the introduction)",
                               spec=ParamSpec("step", "int", 0, "step", "The walkthrough step shown.", low=0,
                                              high=len(STEPS)), example=1),)

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.steps = STEPS
        self._figure: StepFigure | None = None
        self.index = -1  # -1: the introduction, nothing applied yet
        self.counter_label = QLabel(self)
        self.header.addWidget(self.counter_label)
        self.step_list = QComboBox(self)
        self.step_list.addItem("Introduction")
        for number, step in enumerate(self.steps, start=1):
            self.step_list.addItem(f"{number}. {step.title}")
        self.step_list.setToolTip("Jump to a step")
        self.step_list.activated.connect(lambda row: self.go_to(row - 1))
        self.header.addWidget(self.step_list)
        self.finish_header()
        self.title_label = QLabel(self)
        self.title_label.setStyleSheet(f"font-size: 12pt; font-weight: 600; color: {FOREGROUND};")
        self.title_label.setWordWrap(True)
        self.body.addWidget(self.title_label)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextFormat(Qt.TextFormat.RichText)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_label.setStyleSheet(f"font-size: 10pt; color: {FOREGROUND};")
        self.body.addWidget(self.text_label)
        self.measured_label = QLabel(self)
        self.measured_label.setWordWrap(True)
        self.measured_label.setTextFormat(Qt.TextFormat.RichText)
        self.measured_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.measured_label.setStyleSheet("background:#f4f6f8; border:1px solid #d5dbe1; padding:4px;")
        self.body.addWidget(self.measured_label)
        self.body.addStretch(1)
        buttons = QHBoxLayout()
        self.back_button = QPushButton("◀ Back", self)
        self.back_button.clicked.connect(self.back)
        self.reapply_button = QPushButton("Reset this step", self)
        self.reapply_button.setToolTip("Set this step’s parameters again and bring its dock forward")
        self.reapply_button.clicked.connect(lambda: self.go_to(self.index))
        self.next_button = QPushButton("Next ▶", self)
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self.next)
        buttons.addWidget(self.back_button)
        buttons.addStretch(1)
        buttons.addWidget(self.reapply_button)
        buttons.addWidget(self.next_button)
        self.body.addLayout(buttons)
        self.score: SchemeScore | None = None
        self.logit: LogitProperties | None = None
        self._measure_failed = False
        self.raised: list[str] = []  # panel ids brought forward, newest last (for tests and scripts)
        state.paramsChanged.connect(self.schedule_update)
        self._render()

    # ------------------------------------------------------------ navigation
    @property
    def step(self) -> Step | None:
        """The current step, or None on the introduction."""
        return self.steps[self.index] if self.index >= 0 else None

    def next(self) -> None:
        """Go to the next step and apply it."""
        if self.index < len(self.steps) - 1:
            self.go_to(self.index + 1)

    def back(self) -> None:
        """Go to the previous step and apply it (the introduction applies nothing)."""
        if self.index > -1:
            self.go_to(self.index - 1)

    def go_to(self, index: int) -> None:
        """Show step ``index`` (−1 = introduction): set its parameters, set its panels' options, raise its dock."""
        if not -1 <= index < len(self.steps):
            raise ValueError(f"index must be in -1…{len(self.steps) - 1}, got {index}")
        self.index = index
        step = self.step
        if step is not None:
            error = self.state.update(**step.params)
            if error:
                self.show_message(error, "error")
            else:
                self.show_message("")
            self._apply_step_options(step)
            self._raise(step.panel_id)
        self._render()
        self.schedule_update()

    def _apply_step_options(self, step: Step) -> None:
        """Set the step's options on the panels the window has."""
        host = self.host
        for panel_id, values in step.options.items():
            if host is not None and panel_id in host.panels:
                host.panels[panel_id].apply_options(**values)

    def _raise(self, panel_id: str) -> None:
        """Bring the step's dock forward, keeping this walkthrough in view (nothing without a window)."""
        host = self.host
        if host is None or panel_id not in host.panels:
            return
        host.raise_panel(panel_id, keep_in_view=self.panel_id)
        self.raised.append(panel_id)

    # ------------------------------------------------------------------ view
    def _render(self) -> None:
        n = len(self.steps)
        step = self.step
        self.step_list.setCurrentIndex(self.index + 1)
        self.back_button.setEnabled(self.index > -1)
        self.next_button.setEnabled(self.index < n - 1)
        self.next_button.setText("Start ▶" if step is None else "Next ▶")
        self.reapply_button.setEnabled(step is not None)
        if step is None:
            self.counter_label.setText(f"{n} steps")
            self.title_label.setText("From “dog bites man” to the sinusoidal encoding")
            self.text_label.setText(
                "This tour follows the notes: why attention needs position at all, why the naive fixes fail, "
                "and why sines and cosines of many frequencies work. Each step sets the parameters and brings "
                "forward the view that shows the problem; change anything you like, then press Next.")
            self.measured_label.hide()
            return
        self.counter_label.setText(f"Step {self.index + 1} of {n}")
        self.title_label.setText(step.title)
        self.text_label.setText(step.text)
        self.measured_label.show()

    def request_update(self) -> None:
        """Measure the current scheme in a worker (after the tour has started): its scorecard row and its logit."""
        if self.index < 0:
            return
        params = self.state.params
        self.measured_label.setText(f"Measuring {params.scheme} at N = {params.seq_len:,}, d = {params.d_model:,} …")
        self.compute.submit(self, ModelJob(measure_scheme, (params, MEASURE_UNIQUE_WORK)), self._show_measured,
                            self._failed)

    def _failed(self, error: Exception) -> None:
        self.measured_label.setText("")
        self.show_message(str(error), "error")
        self._measure_failed = True

    def _show_measured(self, measured: tuple[SchemeScore | None, LogitProperties | str]) -> None:
        # Imported with the first measurement (the tour's), not with the window: the scorecard's cells and the
        # logit properties' modules.
        from ..model.attention.logit_properties import PROPERTY_HELP, LogitProperties
        from .scorecard import HEADERS, cell_texts

        score, logit = measured
        self.score = score
        self.logit = logit if isinstance(logit, LogitProperties) else None
        if self._measure_failed:  # the error is about an earlier measurement
            self._measure_failed = False
            self.show_message("")
        params = self.state.params
        rows, tips = [], []
        if score is not None:
            for key, (text, tip) in cell_texts(score).items():
                name, _, detail = HEADERS[key].partition("\n")
                rows.append(self._row(name, detail, text))
                tips.append(tip)
            label = score.label
        else:
            label = params.info.label
            rows.append(self._row("table criteria", "", "none: " + (params.info.lacks(frozenset({"table"})) or "")))
        if isinstance(logit, LogitProperties):
            for name, text in logit.verdicts().items():
                rows.append(self._row(f"logit: {name}", "", text))
                tips.append(f"logit, {name}: {PROPERTY_HELP[name]}")
        else:
            rows.append(self._row("logit", "", f"not measured: {logit}"))
        # One criterion per row, with what its numbers are ("16 · 16 · 16" alone says nothing).
        self.measured_label.setText(
            f"<b>Measured now</b> ({escape(label)}, N = {params.seq_len:,}, d = {params.d_model:,}):"
            f"<table cellspacing=\"0\" cellpadding=\"1\">{''.join(rows)}</table>")
        self.measured_label.setToolTip("<br>".join(escape(tip) for tip in tips))

    @staticmethod
    def _row(name: str, detail: str, value: str) -> str:
        detail = f'<br><span style="color:{MUTED}">{escape(detail)}</span>' if detail else ""
        return (f"<tr><td><b>{escape(name)}</b>{detail}</td>"
                f"<td style=\"padding-left:10px\">{escape(value)}</td></tr>")

    def apply_options(self, step: int | None = None) -> None:
        """Go to ``step`` (1 … number of steps; 0: the introduction), as the command line asks."""
        if step is not None:
            self.go_to(limits.check_int("step", step, 0, len(self.steps)) - 1)

    def current_options(self) -> dict[str, int]:
        """The step shown (0: the introduction)."""
        return {"step": self.index + 1}

    def figure_widget(self) -> QWidget:
        """The current step as a figure (:class:`StepFigure`), made for this export."""
        step = self.step
        params = self.state.params
        if step is None:
            heading = escape(self.title_label.text())
            shown, note = None, ""
        else:
            heading = f"Step {self.index + 1} of {len(self.steps)}: {escape(step.title)}"
            shown, note = self._shown_figure(step.panel_id)
        heading += f'<br><span style="font-size:10pt; font-weight:400">{escape(params.title())}</span>'
        measured = (self.measured_label.text()
                    if step is not None and (self.score is not None or self.logit is not None) else "")
        self._figure = StepFigure(heading, self.text_label.text(), measured, shown, note)  # kept until the next export
        return self._figure

    def _shown_figure(self, panel_id: str) -> tuple[QImage | None, str]:
        """The figure of the panel the step shows, as that panel exports it, and the line that introduces it.

        Only a panel of this window that is on screen can give it; otherwise
        the line names the panel instead.
        """
        from ..export import ExportError, figure_caption, render_image

        panel = self.host.panels.built().get(panel_id) if self.host is not None else None
        if panel is None or not panel.on_screen():
            return None, f"This step shows the {panel_class(panel_id).title} panel: export it for its figure."
        panel.ensure_current()
        self.compute.wait_idle()
        figure = panel.figure_widget()
        # drawn at the width it takes in the step's figure: no resampling, sharp text
        scale = SHOWN_FIGURE_SCALE * min(1.0, SHOWN_FIGURE_WIDTH / max(figure.width(), 1))
        try:
            image = render_image(figure, scale=scale, caption=figure_caption(panel))
        except ExportError as error:
            return None, f"The {panel.title} panel gave no figure: {error}"
        return image, f"The {panel.title} panel:"

    def export_data(self) -> dict[str, Any]:
        """The current step and its measured scorecard row."""
        step = self.step
        meta: dict[str, Any] = {
            "panel": self.panel_id,
            "params": self.state.params.as_dict(),
            "step": self.index + 1,
            "steps": len(self.steps),
            "title": step.title if step else "Introduction",
            "dock": step.panel_id if step else None,
        }
        if self.score is not None:
            meta["measured"] = {**self.score.verdicts(), "scheme": self.score.scheme}
        if self.logit is not None:
            meta["measured_logit"] = {**self.logit.verdicts(), "scheme": self.logit.params.scheme}
        return {"arrays": {}, "meta": meta}
