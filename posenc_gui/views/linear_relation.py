"""Linear relation: T_k with PE(p + k) = T_k · PE(p), by its 2×2 blocks or as a window of the matrix."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox, QStackedWidget, QWidget

from ..model import AxisSample, limits
from ..model.core.digits import shown_number
from ..model.analyses.linear_relation import LinearRelation
from ..model.panels.panel_data import LinearRelationData, linear_relation_data
from .base import Panel
from .registry import PanelOption
from .labels import HoverReadout, StatusText, counted
from .plotkit import (
    BLUE, FOREGROUND, MAX_DOTS, MatrixPlot, ORANGE, add_legend_below, decade_label, decade_step, new_layout_widget,
    new_plot, prepare_for_paint, set_axis_label, set_integer_ticks, set_title, set_y_range, show_grid, style_plot,
)

#: Offsets the spin box allows.
MAX_K = 1_000_000
#: The "Show" choice that plots each pair's block (the others show that many dimensions of the matrix).
BLOCKS = 0
#: Choices of the view: label, 0 for the blocks, else the size of the window of T_k shown as a matrix.
SHOW_CHOICES = (("2×2 blocks per pair", BLOCKS), ("matrix, 8 dims", 8), ("matrix, 16 dims", 16),
                ("matrix, 64 dims", 64), ("matrix, 256 dims", 256), ("matrix, 1,024 dims", 1024))

HOVER_PROMPT = "Hover over a block or an entry of T_k for its value (only the digits rounding leaves certain)."
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


def _positions_text(positions: np.ndarray, stride: int) -> str:
    """"the 128 integer positions 0…127", "the 65 integer positions 0…1,048,575 (every 16,384th position and
    the last)" or "position 0"."""
    if positions.size == 1:
        return f"position {positions[0]:,.0f}"
    text = f"the {positions.size:,} integer positions {positions[0]:,.0f}…{positions[-1]:,.0f}"
    if stride > 1:
        every = AxisSample(0, stride, 1).describe("position")  # "every 2nd", not "every 2th"
        last = " and the last" if positions.size > 1 and positions[-1] - positions[-2] != stride else ""
        text += f" ({every}{last})"
    return text


def _cutoff_text(cutoff: float) -> str:
    """``"10⁻⁶"``, ``"0.01"`` (a power of ten as the axes write it), or the number."""
    decade = round(math.log10(cutoff)) if cutoff > 0 else None
    return decade_label(decade) if decade is not None and 10.0 ** decade == cutoff else f"{cutoff:g}"


def _pair_axis_label(rel: LinearRelation) -> str:
    """How pair i's channels follow from i, when they do."""
    i = np.arange(rel.pairs)
    if np.array_equal(rel.sin_channels, 2 * i) and np.array_equal(rel.cos_channels, 2 * i + 1):
        return "pair i (channels 2i, 2i+1)"
    gap = rel.cos_channels - rel.sin_channels
    if np.array_equal(rel.sin_channels, i) and np.all(gap == gap[0]):
        return f"pair i (channels i, i + {int(gap[0]):,})"
    return "pair i (hover for its channels)"


def relation_summary(data: LinearRelationData, bold: Callable[[str], str] = str) -> str:
    """What T_k is and how far off: the verdict, the residual over which positions, and the fit, if any.

    ``bold`` marks the key numbers (``<b>…</b>`` above the plot; nothing in a caption).
    """
    rel = data.relation
    k = f"k = {rel.k:g}"
    if rel.exact:
        parts = [f"{bold('Exact')} ({k}): {counted(rel.pairs, '2×2 rotation')} by k·ω_i, one per (sin, cos) pair."]
    elif rel.pairs:
        parts = [f"{k}: {bold(rel.note)}"]
    else:
        parts = [f"{bold('No exact T_k')} ({k}): no dimension has a (sin, cos) partner of its frequency."
                 + (f" {rel.note}" if rel.note else "")]
    rounding = (f"{'within' if rel.within_rounding else 'ABOVE'} float64 rounding (bound "
                f"{rel.rounding_bound:.2g} at these positions)")
    parts.append(
        f"Residual |PE(p+k) − T_k·PE(p)| over {_positions_text(data.positions, data.stride)}: "
        f"max {bold(f'{rel.max_residual:.3g}')} (at p = {rel.worst_position:,.0f}, dimension {rel.worst_dimension:,})"
        f"{', ' + rounding if rel.exact else ''}; relative ‖·‖/‖PE(p+k)‖ {rel.relative_residual:.3g}.")
    if rel.pairs and not rel.exact:
        parts.append(f"On the rotated dimensions max {rel.rotation_residual:.3g}, {rounding}.")
    fit = rel.fit
    if fit.dims.size:
        columns = f"all {fit.width:,} columns" if fit.width == rel.d_model else \
            f"the {fit.width:,} columns nearest in frequency"
        ranks = f"{int(fit.rank.min()):,}" if fit.rank.min() == fit.rank.max() else \
            f"{int(fit.rank.min()):,}…{int(fit.rank.max()):,}"
        if fit.rank.min() < fit.width:
            how = (f"not unique (rank {ranks} of {fit.width:,}); shown: the minimum-norm fit, singular values "
                   f"below {_cutoff_text(fit.cutoff)} × the largest dropped (the cut-off chosen on "
                   f"{fit.validation_positions.size:,} other positions)")
        else:
            how = f"unique (rank {fit.width:,} of {fit.width:,})"
        parts.append(f"Least squares over {columns} of PE(p), fitted on {fit.positions.size:,} positions between "
                     f"the integers: {how}; largest |entry| {np.abs(fit.coefficients).max():.3g}.")
    return " ".join(parts)


class LinearRelationPanel(Panel):
    """T_k by its blocks (any d_model) or as a window of the matrix; residual and method as numbers."""

    panel_id = "linear_relation"
    title = "Linear relation T_k"
    model_function = linear_relation_data
    cli_options = (PanelOption("--k", "offset k of T_k", type=int, metavar="K", default=1, example=3),)
    help_text = (
        "Vaswani et al.: for any fixed offset k there is a matrix T<sub>k</sub> with "
        "PE(p + k) = T<sub>k</sub>·PE(p) for every position p. For a (sin, cos) pair of frequency ω, "
        "sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and "
        "cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω): a 2×2 rotation by k·ω, so T<sub>k</sub> is "
        "block-diagonal, one block per pair, at channels (2i, 2i+1) in the interleaved layout and "
        "(i, i + ⌈d/2⌉) in the halves layout (row j = dimension j of PE(p+k), column = dimension of PE(p)). "
        "“2×2 blocks” plots each pair's entries cos(kω<sub>i</sub>) and sin(kω<sub>i</sub>), at any d_model; "
        "“matrix” shows a window of T<sub>k</sub> itself (“from” sets its first dimension; scroll to zoom, "
        "drag to pan). The residual max |PE(p+k) − T<sub>k</sub>·PE(p)| is measured on integer positions "
        "and compared with float64's rounding bound there: it grows with the position (about 1e-14 near "
        "p = 100, 1e-10 near 10⁶), the relative residual stays near 1e-15 to 1e-11. At odd d the last sine "
        "has no cosine partner: T<sub>k</sub> is exact on the d−1 paired dimensions only. Without cosines "
        "(all-sine) or without sines (naive, normalized) no exact T<sub>k</sub> exists: the least-squares fit, "
        "not unique, is shown at minimum norm with a stated cut-off on the singular values, fitted on "
        "positions between the integers and measured on the integers; its large residual is why the "
        "encoding uses sin <i>and</i> cos. Hover values show only the digits that float64 rounding of "
        "the angle k·ω leaves certain (a fitted entry: within the fit's error estimate)."
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
        self.show_box.currentIndexChanged.connect(lambda _: self._redraw())
        self.header.addWidget(self.show_box)
        self.from_label = QLabel("from dim:")
        self.header.addWidget(self.from_label)
        self.start_box = QSpinBox(self)
        self.start_box.setGroupSeparatorShown(True)
        # A fixed range: one that followed d_model changed the box's size, and the dock re-laid out on every step.
        self.start_box.setRange(0, limits.MAX_D_MODEL - 1)
        self.start_box.setToolTip("First dimension (row and column) of the window of T_k shown as a matrix")
        self.start_box.valueChanged.connect(lambda _: self._redraw())
        self.header.addWidget(self.start_box)
        self.finish_header()
        self.summary_label = self.add_summary_label()
        self.stack = QStackedWidget(self)
        self.blocks_canvas = new_layout_widget(self)
        self.blocks_plot: pg.PlotItem = new_plot(self.blocks_canvas, row=0, col=0)
        style_plot(self.blocks_plot)
        self.blocks_plot.hideButtons()
        show_grid(self.blocks_plot)
        self.blocks_plot.setLabel("left", "entry of the 2×2 block")
        self.legend = add_legend_below(self.blocks_canvas, self.blocks_plot, labelTextColor=FOREGROUND)
        self.cos_curve = self.blocks_plot.plot(pen=pg.mkPen(BLUE, width=2),
                                               name="cos(k·ω_i) = T_k[sin, sin] = T_k[cos, cos]")
        self.sin_curve = self.blocks_plot.plot(pen=pg.mkPen(ORANGE, width=2),
                                               name="sin(k·ω_i) = T_k[sin, cos] = −T_k[cos, sin]")
        self.canvas = new_layout_widget(self)
        self.matrix = MatrixPlot(self.canvas.ci, "column: dimension of PE(p)", "row: dimension of PE(p + k)",
                                 "T_k entry")
        self.stack.addWidget(self.blocks_canvas)
        self.stack.addWidget(self.canvas)
        self.body.addWidget(self.stack, 1)
        self.hover_line = StatusText(HOVER_PROMPT, self)
        self.body.addWidget(self.hover_line)
        # cells: (pair, -1) over the blocks, (row, column) over the matrix
        self.hover = HoverReadout(self.hover_line, HOVER_PROMPT, lambda cell: self.describe(*cell), self._in_shown)
        self.blocks_canvas.scene().sigMouseMoved.connect(self._hover_blocks)
        self.canvas.scene().sigMouseMoved.connect(self._hover_matrix)
        self.shown: np.ndarray | None = None
        self.window: np.ndarray | None = None  # the dimensions (rows = columns) of the matrix shown
        self._mode = BLOCKS
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def apply_options(self, k: int | None = None) -> None:
        """Set the offset k (:meth:`set_k`)."""
        if k is not None:
            self.set_k(k)

    def current_options(self) -> dict[str, int]:
        """The offset k."""
        return {"k": self.k_box.value()}

    def set_k(self, k: int) -> None:
        """Choose the offset k (walkthrough, scripts)."""
        if not -MAX_K <= k <= MAX_K:
            raise ValueError(f"k must be in {-MAX_K:,}…{MAX_K:,}, got {k!r}")
        self.k_box.setValue(int(k))

    def model_arguments(self) -> tuple:
        """The parameters and the offset k."""
        return self.state.params, self.k_box.value()

    # ------------------------------------------------------------------ show
    def show_data(self, data: LinearRelationData) -> None:
        rel, params = data.relation, data.params
        self.summary_label.setText(relation_summary(data, bold=lambda text: f"<b>{text}</b>"))
        messages = []
        if not rel.pairs:
            messages.append("No (sin, cos) pair: T_k has no 2×2 rotation blocks; the matrix of the least-squares "
                            "fit is shown.")
        if rel.pairs and params.options.get("layout") == "halves":
            half = (params.d_model + 1) // 2
            messages.append(
                f"Halves layout: sine i pairs with cosine i + {half:,}, so each 2×2 rotation sits in rows and "
                f"columns i and i + {half:,}: as a matrix, T_k is the diagonal plus two off-diagonals {half:,} "
                "away (the interleaved layout puts the blocks on the diagonal).")
        self.show_message(" ".join(messages), "warning" if not rel.exact else "info")
        self._redraw()

    def _redraw(self) -> None:
        if self.data is None:
            return
        rel = self.data.relation
        mode = self.show_box.currentData() if rel.pairs else (self.show_box.currentData() or 16)
        if (mode == BLOCKS) != (self._mode == BLOCKS):
            self.hover.clear()  # another kind of cell
        self._mode = mode
        self.from_label.setEnabled(mode != BLOCKS)
        self.start_box.setEnabled(mode != BLOCKS)
        if mode == BLOCKS:
            self._draw_blocks(rel)
            self.stack.setCurrentWidget(self.blocks_canvas)
        else:
            self._draw_matrix(rel, mode)
            self.stack.setCurrentWidget(self.canvas)
        self.hover.refresh()  # the entry of the new T_k

    def _draw_blocks(self, rel: LinearRelation) -> None:
        pairs = np.arange(rel.pairs, dtype=np.float64)
        dots = rel.pairs <= MAX_DOTS
        for curve, values, colour in ((self.cos_curve, rel.blocks[:, 0, 0], BLUE),
                                      (self.sin_curve, rel.blocks[:, 0, 1], ORANGE)):
            curve.setData(pairs, values, symbol="o" if dots else None, symbolSize=5, symbolBrush=colour,
                          symbolPen=None)
        self.shown = rel.blocks
        low, high = (-1.0, 1.0) if rel.pairs == 1 else (-0.5, rel.pairs - 0.5)
        self.blocks_plot.setXRange(low, high, padding=0.02)
        set_y_range(self.blocks_plot, -1.05, 1.05)
        set_integer_ticks(self.blocks_plot.getAxis("bottom"), 0, rel.pairs - 1)
        set_axis_label(self.blocks_plot.getAxis("bottom"), _pair_axis_label(rel))
        set_title(self.blocks_plot, f"{self.data.params.title()}: T_k by its {counted(rel.pairs, '2×2 block')}, "
                                     f"k = {rel.k:g}")
        prepare_for_paint(self.blocks_canvas)

    def _draw_matrix(self, rel: LinearRelation, size: int) -> None:
        d = rel.d_model
        start = min(self.start_box.value(), max(d - size, 0))
        self.window = np.arange(start, min(start + size, d))
        self.shown = rel.matrix(self.window, self.window)
        count = self.window.size
        # A least-squares T_k of nearly collinear columns has large, cancelling entries next to
        # ones below 1: colours on a linear scale showed only the large ones (numbers in the summary).
        log_scale = None if rel.exact else signed_log_scale(self.shown)
        if log_scale is None:
            colours, levels, ticks, label = self.shown, None, None, "T_k entry"
        else:
            colours, limit, ticks = log_scale
            levels, label = (-limit, limit), "T_k entry (signed log scale)"
        self.matrix.set_colorbar_label(label)
        self.matrix.set_colorbar_ticks(ticks)
        extent = (start - 0.5, start + count - 0.5)
        self.matrix.set_matrix(colours, QRectF(extent[0], extent[0], count, count), levels=levels)
        self.matrix.set_full_range(extent, extent)
        for name in ("bottom", "left"):  # dimensions are integers: no ticks at 0.5 for a 2 × 2 T_k
            set_integer_ticks(self.matrix.plot.getAxis(name), start, start + count - 1)
        title = f"{self.data.params.title()}: T_k, k = {rel.k:g}"
        if count < d:
            title += f", dimensions {start:,}…{start + count - 1:,}"
        self.matrix.set_title(title)

    # ----------------------------------------------------------------- hover
    def _hover_blocks(self, scene_pos) -> None:
        box = self.blocks_plot.getViewBox()
        if self.data is None or self._mode != BLOCKS or not box.sceneBoundingRect().contains(scene_pos):
            return
        self.hover.hover((int(round(box.mapSceneToView(scene_pos).x())), -1))

    def _hover_matrix(self, scene_pos) -> None:
        if self._mode != BLOCKS:
            self.hover.hover(self.matrix.cell_at(scene_pos))

    def _in_shown(self, cell: tuple[int, int]) -> bool:
        if self.data is None:
            return False
        if self._mode == BLOCKS:
            return cell[1] == -1 and 0 <= cell[0] < self.data.relation.pairs
        window = self.window
        return (cell[1] >= 0 and window is not None and window.size > 0
                and window[0] <= cell[0] <= window[-1] and window[0] <= cell[1] <= window[-1])

    def describe(self, first: int, second: int) -> str:
        """The block of pair ``first`` (``second == -1``) or the entry (row ``first``, column ``second``)."""
        return self.describe_pair(first) if second == -1 else self.describe_entry(first, second)

    def describe_pair(self, pair: int) -> str:
        """``"pair 3: channels 6 (sin), 7 (cos); angle k·ω = 0.0316227766 rad; cos 0.999500042, sin 0.031617…"``."""
        rel = self.data.relation
        angle_text = shown_number(rel.angles[pair], rel.angle_error[pair])
        error = float(rel.block_error[pair])
        return (f"pair {pair:,}: channels {int(rel.sin_channels[pair]):,} (sin) and {int(rel.cos_channels[pair]):,} "
                f"(cos); angle k·ω = {angle_text} rad; cos(k·ω) = {shown_number(rel.blocks[pair, 0, 0], error)}, "
                f"sin(k·ω) = {shown_number(rel.blocks[pair, 0, 1], error)}")

    def describe_entry(self, row: int, column: int) -> str:
        """``"row 0 (dimension of PE(p + k)), column 1 (dimension of PE(p)): T_k entry 0.841470984808"``."""
        value, error = self.data.relation.entry(row, column)
        return (f"row {row:,} (dimension of PE(p + k)), column {column:,} (dimension of PE(p)): "
                f"T_k entry {shown_number(value, error)}")

    # ---------------------------------------------------------------- export
    def figure_caption(self) -> str:
        """Whether T_k is exact, the residual over which positions, and the fit if any (the summary above)."""
        return "" if self.data is None else relation_summary(self.data)

    def figure_widget(self) -> QWidget:
        return self.stack.currentWidget()

    def data_export(self, data: LinearRelationData) -> tuple[dict[str, Any], dict[str, Any]]:
        """The blocks (one row per pair: channels, ω, angle, the 2×2 entries), the fitted rows, the residual.

        No dense d × d matrix: the first array is the table of blocks; for a
        scheme without pairs it is T_k itself when each fitted row combines
        every column, else T_k's nonzero entries as (row, column, value).
        """
        rel = data.relation
        fit = rel.fit
        table = np.column_stack([np.arange(rel.pairs), rel.sin_channels, rel.cos_channels, rel.omegas,
                                 rel.angles, rel.blocks.reshape(rel.pairs, 4)])
        arrays: dict[str, np.ndarray] = {}
        if rel.pairs:
            arrays["blocks_table"] = table
        elif fit.width == rel.d_model:
            arrays["T_k"] = rel.matrix()
        else:  # each row over its own columns: T_k's nonzero entries, one per line
            arrays["T_k_entries"] = np.column_stack([np.repeat(fit.dims, fit.width), fit.columns.ravel(),
                                                     fit.coefficients.ravel()])
        arrays.update({
            "blocks": rel.blocks, "channels": np.column_stack([rel.sin_channels, rel.cos_channels]),
            "fit_dims": fit.dims, "fit_columns": fit.columns, "fit_coefficients": fit.coefficients,
            "positions": data.positions,
        })
        arrays = {key: value for key, value in arrays.items() if value.size}
        meta = {
            "k": rel.k,
            "method": rel.method,
            "exact": rel.exact,
            "summary": relation_summary(data),
            "max_residual": rel.max_residual,
            "worst_position": rel.worst_position,
            "worst_dimension": rel.worst_dimension,
            "rms_residual": rel.rms_residual,
            "relative_residual": rel.relative_residual,
            "rotation_residual": rel.rotation_residual,
            "rounding_bound": rel.rounding_bound,
            "n_positions": rel.n_positions,
            "note": rel.note,
        }
        if rel.pairs:
            meta.update(
                rows="one per (sin, cos) pair",
                columns=["pair", "sin_channel", "cos_channel", "omega", "angle_k_omega",
                         "T[sin,sin]", "T[sin,cos]", "T[cos,sin]", "T[cos,cos]"],
                blocks="pairs × 2 × 2: rows (sin, cos) of PE(p + k), columns (sin, cos) of PE(p)")
        elif fit.width == rel.d_model:
            meta.update(rows="dimension of PE(p + k)", columns="dimension of PE(p)")
        else:
            meta.update(rows="one per nonzero entry of T_k", columns=["row", "column", "value"])
        if fit.dims.size:
            meta.update(fit_rows="row fit_dims[r] of T_k is fit_coefficients[r] at the columns fit_columns[r]",
                        fit_cutoff=fit.cutoff, fit_rank=fit.rank.tolist(), fit_positions=int(fit.positions.size),
                        validation_positions=int(fit.validation_positions.size))
        return arrays, meta
