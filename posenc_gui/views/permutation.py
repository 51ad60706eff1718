"""Permutation demo: "dog bites man" and "man bites dog" through one attention head.

Every matrix of ``X → Q, K, V → QKᵀ/√d_k → softmax → AV`` is drawn for both
sentences side by side, as small heatmaps with the numbers written in the
cells and the rows labelled by the words. All numbers come from
:mod:`posenc_gui.model.attention`; this module only draws them.
"""

from __future__ import annotations

import html
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QTransform
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsObject,
    QGridLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from ..model import SCHEMES, EncodingParams
from ..model.attention import (
    DEFAULT_DEMO_D_MODEL,
    DEFAULT_SENTENCE_A,
    DEFAULT_SENTENCE_B,
    MAX_DEMO_D_MODEL,
    MAX_WORDS,
    MIN_DEMO_D_MODEL,
    AttentionTrace,
    LogitSplit,
    PermutationDemo,
    permutation_demo,
    word_difference,
)
from .base import MESSAGE_STYLES, Panel
from .matrixplot import DIVERGING, FOREGROUND, SEQUENTIAL, new_layout_widget, style_plot, symmetric_levels

#: Numbers are written into a matrix's cells only up to this size.
MAX_ANNOTATED_ROWS = 16
MAX_ANNOTATED_COLUMNS = 16
#: Word labels on the axes up to this many rows (beyond: every k-th row).
MAX_LABELLED_ROWS = 20
#: Pixel height of one matrix row, and the cap on a matrix's height.
ROW_PIXELS = 24
MAX_MATRIX_PIXELS = 320
#: Height of a plot's title and bottom axis.
PLOT_CHROME_PIXELS = 58
CELL_FONT_PT = 8

LABEL_PIXELS = 150
MIN_CANVAS_PIXELS = 900

#: (key, formula, what the matrix is, how to get it from a trace)
Step = tuple[str, str, str, Callable[[AttentionTrace], np.ndarray]]
COMMON_STEPS: tuple[Step, ...] = (
    ("Q", "Q = X·W<sub>q</sub>", "queries", lambda t: t.q),
    ("K", "K = X·W<sub>k</sub>", "keys", lambda t: t.k),
    ("V", "V = X·W<sub>v</sub>", "values", lambda t: t.v),
    ("S", "S = QK<sup>T</sup>/√d<sub>k</sub>", "logits: query × key", lambda t: t.scores),
    ("A", "A = softmax(S)", "each row sums to 1", lambda t: t.attention),
    ("Z", "Z = A·V", "the output", lambda t: t.output),
)
POSITION_STEPS: tuple[Step, ...] = (
    ("E", "E", "word embeddings", lambda t: t.embeddings),
    ("PE", "PE", "positions 0, 1, 2, …", lambda t: t.positional),
    ("X", "X = E + PE", "input with position", lambda t: t.x),
)
PLAIN_STEPS: tuple[Step, ...] = (("X", "X = E", "word embeddings only", lambda t: t.x),)
#: Steps whose columns are key words (not dimensions).
SQUARE_STEPS = ("S", "A")
SPLIT_NAMES = ("e·e", "e·p", "p·e", "p·p", "total")


def steps(with_position: bool) -> tuple[Step, ...]:
    """The rows of plots, top to bottom."""
    return (POSITION_STEPS if with_position else PLAIN_STEPS) + COMMON_STEPS


def _sentence_title(key: str, tokens: tuple[str, ...], shape: tuple[int, int]) -> str:
    text = " ".join(tokens)
    if len(text) > 40:
        text = text[:39].rstrip() + "…"
    return f"{key}: {html.escape(text)} &nbsp;({shape[0]}×{shape[1]})"


def format_cell(value: float) -> str:
    """A number short enough for a heatmap cell: ``-0.41``, ``12.3``, ``1.2e+04``."""
    if not np.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude < 9.995:
        text = f"{value:.2f}"
        return "0.00" if text == "-0.00" else text
    if magnitude < 99.95:
        return f"{value:.1f}"
    if magnitude < 9999.5:
        return f"{value:.0f}"
    return f"{value:.1e}"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tick_rows(words: tuple[str, ...]) -> list[tuple[float, str]]:
    n = len(words)
    step = 1 if n <= MAX_LABELLED_ROWS else int(np.ceil(n / MAX_LABELLED_ROWS))
    return [(float(i), words[i] if step == 1 else f"{i}: {words[i]}") for i in range(0, n, step)]


def _tick_columns(count: int) -> list[tuple[float, str]]:
    step = 1 if count <= MAX_ANNOTATED_COLUMNS else int(np.ceil(count / MAX_ANNOTATED_COLUMNS))
    return [(float(j), str(j)) for j in range(0, count, step)]


class CellTexts(QGraphicsObject):
    """The numbers written in a matrix's cells, drawn upright and unscaled.

    One item per matrix (not one ``pg.TextItem`` per cell): it maps each cell
    centre through the painter's transform and draws the text in device
    pixels, so the text stays crisp and the same size whatever the cell size.
    (``pg.TextItem`` is avoided also because its transform update calls
    ``QTransform.setMatrix``, which corrupts ``None``'s reference count under
    PySide6 6.12 and eventually aborts the interpreter.)
    """

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[float, float, str, QColor]] = []
        self.rect = QRectF()
        self.font = QFont()
        self.font.setPointSize(CELL_FONT_PT)

    def set_cells(self, cells: list[tuple[float, float, str, QColor]], rect: QRectF) -> None:
        """``cells`` = ``(x, y, text, colour)`` in data coordinates; ``rect`` covers them."""
        self.prepareGeometryChange()
        self.cells = cells
        self.rect = QRectF(rect)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return QRectF(self.rect)

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        if not self.cells:
            return
        transform = painter.transform()
        painter.save()
        painter.setWorldTransform(QTransform())
        painter.setFont(self.font)
        metrics = painter.fontMetrics()
        half_height = metrics.height() / 2.0
        # One setPen per colour, not per cell: under PySide6 6.12 on Python 3.11 every
        # void Qt call costs a reference to None, so keep paint() frugal.
        for colour in {id(c): c for *_rest, c in self.cells}.values():
            painter.setPen(colour)
            for x, y, text, cell_colour in self.cells:
                if cell_colour is not colour:
                    continue
                centre = transform.map(QPointF(x, y))
                width = metrics.horizontalAdvance(text) + 2.0
                painter.drawText(QRectF(centre.x() - width / 2.0, centre.y() - half_height, width, 2 * half_height),
                                 int(Qt.AlignmentFlag.AlignCenter), text)
        painter.restore()


class AnnotatedMatrix:
    """One small heatmap: row-major image, numbers in the cells, words on the axes."""

    def __init__(self, layout: pg.GraphicsLayout, row: int, col: int) -> None:
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=col)
        style_plot(self.plot)
        self.plot.invertY(True)  # row 0 (the first word) at the top
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.texts = CellTexts()
        self.texts.setZValue(10)
        self.plot.addItem(self.texts, ignoreBounds=True)
        self.values: np.ndarray | None = None
        self.row_words: tuple[str, ...] = ()

    def set_matrix(self, values: np.ndarray, row_words: tuple[str, ...], column_words: tuple[str, ...] | None,
                   colormap: pg.ColorMap, levels: tuple[float, float], title: str) -> None:
        """Show ``values`` with row labels ``row_words`` (and word column labels if given)."""
        rows, cols = values.shape
        self.values = values
        self.row_words = row_words
        self.image.setImage(values, autoLevels=False, levels=levels)
        self.image.setLookupTable(colormap.getLookupTable(nPts=256))
        rect = QRectF(-0.5, -0.5, cols, rows)
        self.image.setRect(rect)
        view = self.plot.getViewBox()
        view.setRange(xRange=(-0.5, cols - 0.5), yRange=(-0.5, rows - 0.5), padding=0)
        self.plot.getAxis("left").setTicks([_tick_rows(row_words)])
        bottom = _tick_rows(column_words) if column_words is not None else _tick_columns(cols)
        self.plot.getAxis("bottom").setTicks([bottom])
        self.plot.setTitle(title, size="9pt")
        self._annotate(values, colormap, levels, rect)

    def _annotate(self, values: np.ndarray, colormap: pg.ColorMap, levels: tuple[float, float],
                  rect: QRectF) -> None:
        rows, cols = values.shape
        if rows > MAX_ANNOTATED_ROWS or cols > MAX_ANNOTATED_COLUMNS:
            self.texts.set_cells([], rect)
            return
        low, high = levels
        span = high - low if high > low else 1.0
        fractions = np.clip((values - low) / span, 0.0, 1.0)
        colours = colormap.map(fractions.ravel(), mode="float")
        luminance = colours[:, :3] @ np.array([0.299, 0.587, 0.114])
        dark, light = QColor("#000000"), QColor("#ffffff")
        cells = []
        for index, value in enumerate(values.ravel()):
            i, j = divmod(index, cols)
            cells.append((float(j), float(i), format_cell(float(value)), dark if luminance[index] > 0.5 else light))
        self.texts.set_cells(cells, rect)

    def annotations(self) -> list[str]:
        """The texts written in the cells (row by row)."""
        return [text for _x, _y, text, _colour in self.texts.cells]


class PermutationPanel(Panel):
    """Two orderings of the same words through one attention head, with and without position."""

    panel_id = "permutation"
    title = "Permutation demo"
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
        "position with position; the four add up to the total (checked). Rows are words (first word at "
        "the top); colours share one scale per row of plots (blue negative, red positive; A from 0 to 1)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.pe_check = QCheckBox("Add positional encoding", self)
        self.pe_check.setChecked(True)
        self.pe_check.setToolTip("X = E + PE (the scheme of the Parameters panel) instead of X = E")
        self.d_model_spin = QSpinBox(self)
        self.d_model_spin.setRange(MIN_DEMO_D_MODEL, MAX_DEMO_D_MODEL)
        self.d_model_spin.setValue(DEFAULT_DEMO_D_MODEL)
        self.d_model_spin.setAccessibleName("demo d_model")
        self.d_model_spin.setToolTip(
            f"Embedding size of this demo ({MIN_DEMO_D_MODEL}…{MAX_DEMO_D_MODEL}), small so the numbers "
            "can be read; independent of the Parameters panel's d_model")
        self.scheme_label = QLabel(self)
        self.header.addWidget(self.pe_check)
        self.header.addWidget(QLabel("demo d_model:", self))
        self.header.addWidget(self.d_model_spin)
        self.header.addWidget(self.scheme_label)
        self.finish_header()

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
        self.body.addLayout(grid)

        self.verdict_label = QLabel(self)
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(self.verdict_label)

        self.canvas = new_layout_widget()
        self.canvas.ci.setSpacing(2)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.canvas)
        self.body.addWidget(self.scroll, 1)

        self.demo: PermutationDemo | None = None
        self.with_position = True
        self._params_used: EncodingParams | None = None
        self.canvas.setMinimumWidth(MIN_CANVAS_PIXELS)
        self.matrices: dict[str, AnnotatedMatrix] = {}
        self._build()
        self.split_checks: dict[str, str] = {}
        self._shape: tuple | None = None

        self.sentence_a_edit.textChanged.connect(self.request_update)
        self.sentence_b_edit.textChanged.connect(self.request_update)
        self.d_model_spin.valueChanged.connect(self.request_update)
        self.pe_check.toggled.connect(self._toggle_position)
        state.paramsChanged.connect(self.request_update)
        self.request_update()

    # ------------------------------------------------------------------ inputs
    def set_sentences(self, sentence_a: str | None = None, sentence_b: str | None = None) -> None:
        """Replace the sentences (the headless export uses this)."""
        if sentence_a is not None:
            self.sentence_a_edit.setText(sentence_a)
        if sentence_b is not None:
            self.sentence_b_edit.setText(sentence_b)

    def set_with_position(self, on: bool) -> None:
        """Show the trace with (True) or without (False) the positional encoding."""
        self.pe_check.setChecked(bool(on))

    def set_demo_d_model(self, d_model: int) -> None:
        """The demo's embedding size (clamped by the spin box to 2…64)."""
        self.d_model_spin.setValue(int(d_model))

    # ------------------------------------------------------------------ compute
    def request_update(self, *_args) -> None:
        """Recompute the demo in a worker from the current inputs; the newest request wins."""
        sentence_a, sentence_b = self.sentence_a_edit.text(), self.sentence_b_edit.text()
        d_model = self.d_model_spin.value()
        params = self.state.params
        scheme, kwargs = params.scheme, params.scheme_kwargs()

        def work() -> tuple[PermutationDemo, EncodingParams]:
            return permutation_demo(sentence_a, sentence_b, d_model, scheme, kwargs), params

        self.compute.submit(self, work, self._show, self._failed)

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
        parts = [SCHEMES[params.scheme].label]
        kwargs = params.scheme_kwargs()
        if "base" in kwargs:
            parts.append(f"base {kwargs['base']:g}")
        if "layout" in kwargs:
            parts.append(str(kwargs["layout"]))
        if "length" in kwargs:
            parts.append(f"N = {kwargs['length']}")
        return ", ".join(parts)

    def verdict_text(self) -> str:
        """The verdict lines as plain text (what the label shows)."""
        return "\n".join(self.demo.verdict_lines()) if self.demo is not None else ""

    def _update_verdict(self) -> None:
        demo = self.demo
        assert demo is not None
        lines = demo.verdict_lines()
        if demo.is_permutation:
            current = 1 if self.with_position else 0
            rendered = [
                (f"<b>{html.escape(line)}</b>" if i == current else html.escape(line)) for i, line in enumerate(lines)
            ]
            style = MESSAGE_STYLES["info"]
        else:
            rendered = [html.escape(line) for line in lines]
            style = MESSAGE_STYLES["warning"]
        self.verdict_label.setText("<br>".join(rendered))
        self.verdict_label.setStyleSheet(style)
        self.scheme_label.setText(f"PE scheme: {html.escape(self._pe_description())}")

    def _colorbar(self, images: list[pg.ImageItem]) -> pg.ColorBarItem:
        bar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get(DIVERGING), interactive=False,
                              width=14, pen=FOREGROUND)
        bar.setImageItem(images)
        for axis_name in ("left", "right"):
            bar.getAxis(axis_name).setPen(FOREGROUND)
            bar.getAxis(axis_name).setTextPen(FOREGROUND)
        return bar

    def _figure_verdict(self, demo: PermutationDemo) -> str:
        """The comparison in two short lines for the figure (the long form is above the canvas)."""
        if not demo.is_permutation:
            return (f"<b>b is not a reordering of a</b> "
                    f"({html.escape(word_difference(demo.tokens_a, demo.tokens_b))}): no permutation to compare")
        lines = []
        for with_position in (False, True):
            c = demo.comparison(with_position)
            label = "With position" if with_position else "Without position"
            result = "the same rows, permuted" if c.same else "different: the head sees word order"
            text = (f"{label}: max |Z<sub>b</sub> − P Z<sub>a</sub>| = {c.max_abs_diff_output:.2g}, "
                    f"max |A<sub>b</sub> − P A<sub>a</sub> P<sup>T</sup>| = {c.max_abs_diff_attention:.2g} → {result}")
            lines.append(f"<b>{text}</b>" if with_position == self.with_position else text)
        return "<br>".join(lines)

    def _build(self) -> None:
        """Create every plot once; later changes only refill them and resize rows."""
        layout = self.canvas.ci
        self.colorbars: dict[str, pg.ColorBarItem] = {}
        self.step_labels: dict[str, pg.LabelItem] = {}
        self.step_rows: dict[str, int] = {}
        self.title_label = layout.addLabel("", row=0, col=0, colspan=4, justify="left")
        row = 1
        for key, _formula, _what, _get in POSITION_STEPS + COMMON_STEPS:
            label = layout.addLabel("", row=row, col=0, justify="right")
            label.setFixedWidth(LABEL_PIXELS)
            self.step_labels[key] = label
            a, b = AnnotatedMatrix(layout, row, 1), AnnotatedMatrix(layout, row, 2)
            self.matrices[f"{key}_a"], self.matrices[f"{key}_b"] = a, b
            self.colorbars[key] = self._colorbar([a.image, b.image])
            layout.addItem(self.colorbars[key], row=row, col=3)
            self.step_rows[key] = row
            row += 1
        self.split_header = layout.addLabel("", row=row, col=0, colspan=4, justify="left")
        self.split_header_row = row
        row += 1
        self.split_rows: dict[str, int] = {}
        for sentence in ("a", "b"):
            sub = layout.addLayout(row=row, col=0, colspan=4)
            sub.setSpacing(2)
            label = sub.addLabel(f"<span style='color:{FOREGROUND}'>sentence {sentence}</span>", row=0, col=0,
                                 justify="right")
            label.setFixedWidth(70)
            for col, name in enumerate(SPLIT_NAMES, start=1):
                self.matrices[f"split_{sentence}_{name}"] = AnnotatedMatrix(sub, 0, col)
            bar = self._colorbar([self.matrices[f"split_{sentence}_{name}"].image for name in SPLIT_NAMES])
            sub.addItem(bar, row=0, col=len(SPLIT_NAMES) + 1)
            self.colorbars[f"split_{sentence}"] = bar
            self.split_rows[sentence] = row
            row += 1
        self.check_label = layout.addLabel("", row=row, col=0, colspan=4, justify="left")
        self.check_row = row

    def _apply_shape(self, n_a: int, n_b: int, with_position: bool) -> None:
        """Row heights for sentences of ``n_a`` and ``n_b`` words; hide E and PE without position."""
        grid = self.canvas.ci.layout
        matrix_height = min(max(n_a, n_b) * ROW_PIXELS, MAX_MATRIX_PIXELS) + PLOT_CHROME_PIXELS
        heights = {0: 84, self.split_header_row: 78, self.check_row: 30}
        for key, row in self.step_rows.items():
            visible = with_position or key not in ("E", "PE")
            for item in (self.step_labels[key], self.matrices[f"{key}_a"].plot, self.matrices[f"{key}_b"].plot,
                         self.colorbars[key]):
                item.setVisible(visible)
                # A hidden item still claims its minimum size in a QGraphicsGridLayout:
                # collapse it explicitly (-1 restores the item's own size hints).
                item.setMinimumHeight(-1 if visible else 0)
                item.setMaximumHeight(-1 if visible else 0)
            heights[row] = matrix_height if visible else 0
        for sentence, n in (("a", n_a), ("b", n_b)):
            heights[self.split_rows[sentence]] = min(n * ROW_PIXELS, MAX_MATRIX_PIXELS) + PLOT_CHROME_PIXELS
        for row, height in heights.items():
            grid.setRowFixedHeight(row, height)
            grid.setRowSpacing(row, grid.verticalSpacing() if height else 0)
        shown = sum(1 for h in heights.values() if h)
        self.canvas.setMinimumHeight(int(sum(heights.values()) + grid.verticalSpacing() * shown + 40))

    def _redraw(self) -> None:
        demo = self.demo
        assert demo is not None
        shape = (len(demo.tokens_a), len(demo.tokens_b), self.with_position)
        if shape != self._shape:
            self._apply_shape(*shape)
            self._shape = shape
        self._update_verdict()
        comparison = demo.comparison(self.with_position)
        traces = {"a": comparison.trace_a, "b": comparison.trace_b}
        pe_text = f"E + PE, PE: {html.escape(self._pe_description())}" if self.with_position else "E, no position"
        self.title_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'>"
            f"<b>a:</b> {html.escape(_shorten(' '.join(demo.tokens_a), 60))} &nbsp; "
            f"<b>b:</b> {html.escape(_shorten(' '.join(demo.tokens_b), 60))}<br>"
            f"Shown: X = {pe_text}; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}, seed {demo.seed}<br>"
            f"{self._figure_verdict(demo)}</span>"
        )
        for key, formula, what, get in steps(self.with_position):
            self.step_labels[key].setText(
                f"<span style='color:{FOREGROUND}; font-size:10pt'><b>{formula}</b></span><br>"
                f"<span style='color:#555555; font-size:8pt'>{what}</span>"
            )
            self._draw_step(key, {sentence: get(trace) for sentence, trace in traces.items()}, traces)
        self._draw_split(demo)

    def _draw_step(self, key: str, values: dict[str, np.ndarray], traces: dict[str, AttentionTrace]) -> None:
        if key == "A":
            colormap, levels = pg.colormap.get(SEQUENTIAL), (0.0, 1.0)
        else:
            colormap = pg.colormap.get(DIVERGING)
            levels = symmetric_levels(np.concatenate([v.ravel() for v in values.values()]))
        bar = self.colorbars[key]
        bar.setColorMap(colormap)
        bar.setLevels(levels)
        for sentence, trace in traces.items():
            matrix = values[sentence]
            self.matrices[f"{key}_{sentence}"].set_matrix(
                matrix, trace.tokens, trace.tokens if key in SQUARE_STEPS else None, colormap, levels,
                _sentence_title(sentence, trace.tokens, matrix.shape),
            )

    def _draw_split(self, demo: PermutationDemo) -> None:
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>Four-term split of the logits with position</b>"
            f" (PE: {html.escape(self._pe_description())})<br>"
            f"S = (e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)"
            f"<sup>T</sup>/√d<sub>k</sub> = e·e + e·p + p·e + p·p</span><br>"
            f"<span style='color:#555555; font-size:8pt'>e·e: meaning with meaning (the logits without position); "
            f"e·p: word with position; p·e: position with word; p·p: position with position.<br>"
            f"Rows: query word, columns: key word; % = the term's share of all four's |values|.</span>"
        )
        self.split_checks = {}
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            self._draw_split_row(sentence, split)
        checks = ", ".join(f"{s}: {r:.1e}" for s, r in
                           (("a", demo.split_a.max_abs_residual), ("b", demo.split_b.max_abs_residual)))
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: max |e·e + e·p + p·e + p·p − S| = {checks}"
            f" — the four terms add up to the total.</span>"
        )

    def _draw_split_row(self, sentence: str, split: LogitSplit) -> None:
        colormap = pg.colormap.get(DIVERGING)
        terms = split.terms()
        levels = symmetric_levels(np.concatenate([t.ravel() for t in (*terms.values(), split.total)]))
        self.colorbars[f"split_{sentence}"].setLevels(levels)
        shares = split.shares()
        for name, term in terms.items():
            self.matrices[f"split_{sentence}_{name}"].set_matrix(
                term, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name} &nbsp;{shares[name]:.0%}",
            )
        self.split_checks[sentence] = f"max |e·e + e·p + p·e + p·p − S| = {split.max_abs_residual:.1e}"
        self.matrices[f"split_{sentence}_total"].set_matrix(
            split.total, split.tokens, split.tokens, colormap, levels, f"{sentence}: total S",
        )

    # ------------------------------------------------------------------ export
    def figure_widget(self) -> QWidget:
        return self.canvas

    def export_data(self) -> dict[str, Any]:
        """Both sentences' matrices (the shown mode first) and the JSON dict under ``meta["permutation"]``."""
        demo = self.demo
        if demo is None:  # not delivered yet: compute now (raises ValueError for bad input)
            params = self.state.params
            demo = permutation_demo(self.sentence_a_edit.text(), self.sentence_b_edit.text(),
                                    self.d_model_spin.value(), params.scheme, params.scheme_kwargs())
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
                for key, matrix in matrices.items():
                    arrays[f"{prefix}_{key}_{sentence}"] = np.array(matrix)
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            for name, term in split.terms().items():
                arrays[f"split_{sentence}_{name.replace('·', '')}"] = np.array(term)
        meta = {
            "panel": self.panel_id,
            "with_position": self.with_position,
            "params": dict((self._params_used or self.state.params).__dict__),
            "verdict": demo.verdict_lines(),
            "permutation": demo.to_dict(),
        }
        return {"arrays": arrays, "meta": meta}
