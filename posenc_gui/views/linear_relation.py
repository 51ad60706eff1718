"""Linear relation: the matrix T_k with PE(p + k) = T_k · PE(p), and how well it holds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox, QWidget

from ..compute import ModelJob
from ..model import SCHEMES, AxisSample
from ..model.panel_data import LinearRelationData, linear_relation_data
from .base import Panel
from .labels import HoverReadout, StatusText, WrappedLabelHolder
from .matrixplot import FOREGROUND, MatrixPlot, new_layout_widget
from .spectrum import decade_label, decade_step, set_integer_ticks

#: Offsets the spin box allows.
MAX_K = 1_000_000
#: Choices of the displayed block of T_k: label, number of leading dimensions (0 = all).
SHOW_CHOICES = (("first 8 dims", 8), ("first 16 dims", 16), ("first 64 dims", 64), ("first 256 dims", 256),
                ("all dims", 0))
#: "all dims" shows at most this many (a larger image would stall the window).
MAX_SHOWN = 1024


HOVER_PROMPT = "Hover over T_k for an entry's exact value."
#: A least-squares T_k whose largest entry is more than this many times its median one is
#: coloured on a signed log scale (a linear one showed an all-sine T_k as one column on white).
LOG_SCALE_SPAN = 1000.0
#: Most labelled decades on each side of 0 of the signed log colour scale.
MAX_LOG_LABELS = 4


def signed_log_scale(values: np.ndarray) -> tuple[np.ndarray, float, list] | None:
    """Colours for entries that span many decades: ``sign(x)·log10(1 + |x|/t)``.

    ``t`` is the decade at or below the lower quartile of the nonzero
    magnitudes, so entries from about ``t`` up spread over the colours a
    decade at a time and the smaller ones stay near 0 (white).

    Returns
    -------
    (display, limit, ticks) or None
        The values to colour, the colour levels ``(−limit, limit)``, and the
        colour scale's ticks (labelled ±10^k in the entries' own units,
        ``axis.setTicks`` form); ``None`` when the nonzero magnitudes span at
        most :data:`LOG_SCALE_SPAN` (a linear scale shows them).
    """
    magnitude = np.abs(values[np.isfinite(values)])
    nonzero = magnitude[magnitude > 0]
    if nonzero.size == 0 or nonzero.max() <= LOG_SCALE_SPAN * np.median(nonzero):
        return None
    first = math.floor(math.log10(np.percentile(nonzero, 25)))
    floor = 10.0 ** first
    top = math.ceil(math.log10(nonzero.max()))
    with np.errstate(invalid="ignore"):
        display = np.sign(values) * np.log10(1.0 + np.abs(values) / floor)
    step = decade_step(top - first + 1, MAX_LOG_LABELS)
    major, minor = [(0.0, "0")], []
    for k in range(first, top + 1):
        at = math.log10(1.0 + 10.0 ** (k - first))
        labelled = k % step == 0 and k - first > step / 2  # a label right beside 0 would hide the 0
        for sign in (1, -1):
            text = ("" if sign > 0 else "−") + decade_label(k) if labelled else ""
            (major if labelled else minor).append((sign * at, text))
    return display, math.log10(1.0 + 10.0 ** (top - first)), [major, minor]


def _fit_positions_text(data: LinearRelationData) -> str:
    """"positions 0…1,023 (every 2nd position)": where T_k was fitted."""
    text = f"positions {data.positions[0]:,.0f}…{data.positions[-1]:,.0f}"
    if data.stride > 1:
        text += f" ({AxisSample(0, data.stride, 1).describe('position')})"  # "every 2nd", not "every 2th"
    return text


class LinearRelationPanel(Panel):
    """T_k as a heatmap; residual and method as numbers."""

    panel_id = "linear_relation"
    title = "Linear relation T_k"
    help_text = (
        "Vaswani et al.: for any fixed offset k there is a matrix T<sub>k</sub> with "
        "PE(p + k) = T<sub>k</sub>·PE(p) for every position p. For a (sin, cos) pair of frequency ω, "
        "sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and "
        "cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω): a 2×2 rotation by k·ω, so T<sub>k</sub> is "
        "block-diagonal (row j = dimension j of PE(p+k), column = dimension of PE(p)). "
        "The residual max<sub>p,j</sub> |PE(p+k) − T<sub>k</sub>·PE(p)|<sub>j</sub> is rounding only (≈ 1e-15). "
        "Without cosines (all-sine) or without sines at all (naive, normalized) no such matrix exists: "
        "the best least-squares T<sub>k</sub> leaves a large residual — which is why the encoding uses "
        "sin <i>and</i> cos. Scroll to zoom the matrix, drag to pan."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Offset k:"))
        self.k_box = QSpinBox(self)
        self.k_box.setRange(-MAX_K, MAX_K)
        self.k_box.setValue(1)
        self.k_box.setGroupSeparatorShown(True)
        self.k_box.valueChanged.connect(self.schedule_update)
        self.header.addWidget(self.k_box)
        self.header.addWidget(QLabel("Show:"))
        self.show_box = QComboBox(self)
        for label, count in SHOW_CHOICES:
            self.show_box.addItem(label, count)
        self.show_box.setCurrentIndex(1)
        self.show_box.currentIndexChanged.connect(lambda _: self._redraw())
        self.header.addWidget(self.show_box)
        self.finish_header()
        self.summary_label = QLabel(self)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setStyleSheet(f"color:{FOREGROUND};")
        self.body.addWidget(WrappedLabelHolder(self.summary_label, self))
        self.canvas = new_layout_widget(self)
        self.matrix = MatrixPlot(self.canvas.ci, "column: dimension of PE(p)", "row: dimension of PE(p + k)",
                                 "T_k entry")
        self.body.addWidget(self.canvas, 1)
        self.hover_line = StatusText(HOVER_PROMPT, self)
        self.body.addWidget(self.hover_line)
        self.hover = HoverReadout(self.hover_line, HOVER_PROMPT, lambda cell: self.describe_entry(*cell),
                                  self._in_shown)  # cells are (row, column)
        self.canvas.scene().sigMouseMoved.connect(self._hover)
        self.data: LinearRelationData | None = None
        self.shown: np.ndarray | None = None
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def set_k(self, k: int) -> None:
        """Choose the offset k (walkthrough, scripts)."""
        if not -MAX_K <= k <= MAX_K:
            raise ValueError(f"k must be in {-MAX_K:,}…{MAX_K:,}, got {k!r}")
        self.k_box.setValue(int(k))

    def request_update(self) -> None:
        """Recompute in a worker; the newest request wins."""
        params, k = self.state.params, self.k_box.value()
        self.compute.submit(self, ModelJob(linear_relation_data, (params, k)), self._show,
                            lambda e: self.show_message(str(e), "error"))

    def _show(self, data: LinearRelationData) -> None:
        self.data = data
        rel, params = data.relation, data.params
        if rel.exact:
            verdict = "<b>exact</b>: 2×2 rotations by k·ω<sub>i</sub>"
        elif rel.method == "rotation":
            verdict = "rotations for the (sin, cos) pairs, <b>least squares</b> for unpaired dimensions"
        else:
            verdict = "<b>no exact T<sub>k</sub></b>: best least-squares fit"
        last = data.positions[-1]
        where = _fit_positions_text(data)
        self.summary_label.setText(
            f"{params.scheme}, d_model {params.d_model:,}, k = {rel.k:g}: {verdict}. "
            f"Residual over {rel.n_positions:,} {where}: max |PE(p+k) − T<sub>k</sub>PE(p)| = "
            f"<b>{rel.max_residual:.3g}</b>, rms {rel.rms_residual:.3g}, "
            f"relative {rel.relative_residual:.3g}; method: {rel.method}; "
            f"largest |T<sub>k</sub> entry| {np.abs(rel.T).max():.3g}."
        )
        messages = []
        if data.extended:
            messages.append(
                f"The fit uses positions 0…{last:,.0f} (2·d, past seq_len) so it cannot simply pass "
                "through every position.")
        if rel.note:
            messages.append(rel.note)
        if "layout" in SCHEMES[params.scheme].parameters and params.layout == "halves":
            half = (params.d_model + 1) // 2
            messages.append(
                f"Halves layout: sine i pairs with cosine i + {half:,}, so each 2×2 rotation sits in rows and "
                f"columns i and i + {half:,}: T_k is the diagonal plus two off-diagonals {half:,} away, "
                "seen only with “all dims” (the interleaved layout puts the blocks on the diagonal).")
        self.show_message(" ".join(messages), "warning" if (data.extended or rel.note) else "info")
        self._redraw()

    def _redraw(self) -> None:
        if self.data is None:
            return
        T = self.data.relation.T
        d = T.shape[0]
        count = self.show_box.currentData() or d
        count = min(count, d, MAX_SHOWN)
        self.shown = T[:count, :count]
        # A least-squares T_k of nearly collinear columns has huge, cancelling entries next to
        # ones below 1: colours on a linear scale showed only the huge ones (numbers in the summary).
        log_scale = None if self.data.relation.exact else signed_log_scale(self.shown)
        if log_scale is None:
            colours, levels, ticks, label = self.shown, None, None, "T_k entry"
        else:
            colours, limit, ticks = log_scale
            levels, label = (-limit, limit), "T_k entry (signed log scale)"
        self.matrix.set_colorbar_label(label)
        self.matrix.set_colorbar_ticks(ticks)
        self.matrix.set_matrix(colours, QRectF(-0.5, -0.5, count, count), levels=levels)
        self.matrix.set_full_range((-0.5, count - 0.5), (-0.5, count - 0.5))
        for name in ("bottom", "left"):  # dimensions are integers: no ticks at 0.5 for a 2 × 2 T_k
            set_integer_ticks(self.matrix.plot.getAxis(name), 0, count - 1)
        title = f"T_k, k = {self.data.relation.k:g}"
        if count < d:
            title += f" (dimensions 0…{count - 1} of {d:,})"
        self.matrix.set_title(title)
        self.hover.refresh()  # the entry of the new T_k

    def _hover(self, scene_pos) -> None:
        self.hover.hover(self.matrix.cell_at(scene_pos))

    def _in_shown(self, cell: tuple[int, int]) -> bool:
        return self.shown is not None and 0 <= cell[0] < self.shown.shape[0] and 0 <= cell[1] < self.shown.shape[1]

    def describe_entry(self, row: int, column: int) -> str:
        """``"row 0 (dimension of PE(p + k)), column 1 (dimension of PE(p)): T_k entry 0.8414709848"``."""
        return (f"row {row:,} (dimension of PE(p + k)), column {column:,} (dimension of PE(p)): "
                f"T_k entry {float(self.shown[row, column]):.10g}")

    def figure_caption(self) -> str:
        """Whether T_k is exact, and the residual over which positions (the summary above the plot)."""
        if self.data is None:
            return ""
        rel = self.data.relation
        verdict = ("Exact: 2×2 rotations by k·ω_i" if rel.exact else
                   "Rotations for the (sin, cos) pairs, least squares for unpaired dimensions"
                   if rel.method == "rotation" else "No exact T_k: best least-squares fit")
        return (f"{verdict}. Residual over {rel.n_positions:,} {_fit_positions_text(self.data)}: "
                f"max |PE(p+k) − T_k·PE(p)| = {rel.max_residual:.3g}, relative {rel.relative_residual:.3g}.")

    def figure_widget(self) -> QWidget:
        return self.canvas

    def export_data(self) -> dict[str, Any]:
        """The full T_k and the residual numbers."""
        if self.data is None:
            raise ValueError("linear relation: nothing computed yet")
        rel, data = self.data.relation, self.data
        return {
            "arrays": {"T_k": rel.T, "positions": data.positions},
            "meta": {
                "panel": self.panel_id,
                "params": data.params.__dict__.copy(),
                "k": rel.k,
                "method": rel.method,
                "exact": rel.exact,
                "max_residual": rel.max_residual,
                "rms_residual": rel.rms_residual,
                "relative_residual": rel.relative_residual,
                "n_positions": rel.n_positions,
                "rank": rel.rank,
                "note": rel.note,
                "rows": "dimension of PE(p + k)",
                "columns": "dimension of PE(p)",
            },
        }
