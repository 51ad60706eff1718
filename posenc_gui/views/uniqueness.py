"""Uniqueness: how close does each position's encoding come to another's?"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLabel,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from ..compute import ModelJob
from ..model.core.coverage import span
from ..model.panels.panel_data import UniquenessData, continue_uniqueness_data, uniqueness_data
from .base import Panel
from .cursor import CursorAxis
from .plotkit import (
    BLUE, MAX_DOTS, ORANGE, add_canvas_title, new_layout_widget, new_plot, nice_bounds, prepare_for_paint,
    set_canvas_title, set_integer_ticks, set_title, set_y_range, show_grid, style_plot,
)

#: Title of the upper plot; at large N, which positions were compared is added.
DISTANCE_TITLE = "min over q ≠ p of ‖PE(p) − PE(q)‖"
#: Title of the lower plot: what its marks are.
NEAREST_TITLE = "the nearest other position q of each p; ○ the closest pair"
#: Closest pairs the caption of an exported figure lists (the table beside the plots is not part of it).
CAPTION_PAIRS = 5


def curve_range(data: UniquenessData) -> str:
    """What the upper plot's title adds: which q the minimum runs over, when that is not plain 0…N−1."""
    found, n = data.found, data.params.seq_len
    if found.curve_whole_range:
        sampled = found.curve.positions.size < n
        return f", q in 0…{n - 1:,} (p at {found.curve.positions.size:,} positions)" if sampled else ""
    return f", positions 0…{found.curve.positions.size - 1:,} of {n:,}"


def closest_pair_sentence(data: UniquenessData, rich: bool) -> str:
    """The closest pair, its distance in neighbour steps and the range it is proved over (HTML with ``rich``).

    Past the range searched the sentence says "among 0…M−1 only": no closest pair is called that of
    0…N−1 unless every pair of 0…N−1 is covered.
    """
    found, params = data.found, data.params
    p, q, distance = found.closest_pair
    bold = ("<b>", "</b>") if rich else ("", "")
    whole = span(0, found.length - 1)
    among = "" if found.whole_range else f" among {span(0, found.pairs_range - 1)} only (of {whole})"
    return (f"{bold[0]}Closest pair{among}:{bold[1]} positions {p:,.0f} and {q:,.0f}, ‖PE(p) − PE(q)‖ = "
            f"{bold[0]}{distance:.6g}{bold[1]} = {found.step_ratio:.3g}× the neighbour step "
            f"{found.neighbour_step:.4g} (typical ‖PE‖ = {data.typical_norm:.4g}); {params.scheme}, "
            f"d_model {params.d_model:,}; {found.coverage()}.")


def near_repeats_sentence(data: UniquenessData, one_per_offset: bool) -> str:
    """The first :data:`CAPTION_PAIRS` rows of the closest-pairs table, as a sentence ("" for none).

    ``one_per_offset``: the table lists one pair per offset q − p (else every pair).
    """
    found = data.found
    rows = [f"{a:,.0f} and {b:,.0f} ({abs(b - a):,.0f} apart, {turn:.4f} turns of 2π, distance {dist:.4g})"
            for (a, b, dist), turn in zip(found.near_repeats[:CAPTION_PAIRS], found.offset_turns())]
    if not rows:
        return ""
    which = "one pair per offset q − p" if one_per_offset else "every pair"
    return f"Closest pairs ({which}): " + "; ".join(rows) + "."


def coverage_message(data: UniquenessData) -> str:
    """The message bar's sentences: the model's notes, and the range each part covers ("" for neither)."""
    coverage = _coverage_sentence(data)
    return " ".join(part for part in (*data.found.notes, coverage) if part)


def _coverage_sentence(data: UniquenessData) -> str:
    found, params = data.found, data.params
    n = params.seq_len
    if found.pending:
        return (f"{found.scan.describe().capitalize()}. Meanwhile everything shown compares all pairs of "
                f"positions 0…{found.pairs_range - 1:,} only.")
    if not found.whole_range:  # the headline names the range, the model's note says why
        return ""
    if not found.curve_whole_range:
        return (f"The closest pair and the table cover all of 0…{n - 1:,}; the curves compare positions "
                f"0…{found.curve.positions.size - 1:,} only.")
    return ""


class UniquenessPanel(Panel):
    """Nearest other position of each position, the closest pair and the near-repeats."""

    panel_id = "uniqueness"
    title = "Uniqueness"
    model_function = uniqueness_data
    model_functions = (continue_uniqueness_data,)
    cursor_axes = ("position",)
    help_text = (
        "A position is only recoverable if no other position has (almost) the same encoding. "
        "Top: for each position p the distance to its nearest other position, "
        "min<sub>q≠p</sub> ‖PE(p) − PE(q)‖. Bottom: which position q that is. Table: the closest "
        "pairs. A single sine collides (sin x = sin y when y ≈ π − x + 2πm); the pair "
        "[sin p, cos p] is a point on a circle, so p and q nearly repeat when q − p ≈ m·2π "
        "(44 ≈ 7·2π, 710 ≈ 113·2π): at even d, ‖PE(p) − PE(q)‖ = √(d/2)·2|sin((q−p)/2)|. "
        "More frequencies push the minimum distance up. The column (q−p)/2π shows how many "
        "turns of the period-2π circle apart the pair is. "
        "Every pair of 0…N−1 is compared where that fits the budget; past it, for schemes made of "
        "(sin, cos) pairs and linear columns the distance depends on the offset q − p only "
        "(each pair adds 4 sin²(k/2c)), and every offset 1…N−1 is checked instead; a sine without "
        "its cosine (odd d) is then checked at every position of the closest offsets. Binary is exact in "
        "closed form (PE(p) = PE(q) when p ≡ q mod 2<sup>d</sup>). Any other table is searched exactly "
        "by comparing only the pairs whose encodings are close along one coordinate, where that fits the "
        "budget. Otherwise only the leading positions are compared, and the headline and the plot's title "
        "say which."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Near-repeats listed:"))
        self.top_box = QSpinBox(self)
        self.top_box.setRange(1, 200)
        self.top_box.setValue(10)
        self.top_box.valueChanged.connect(self.schedule_update)
        self.header.addWidget(self.top_box)
        self.offsets_box = QCheckBox("one pair per offset q − p", self)
        self.offsets_box.setChecked(True)
        self.offsets_box.setToolTip("List the closest pair for each distinct offset, not every shifted copy")
        self.offsets_box.toggled.connect(self.schedule_update)
        self.header.addWidget(self.offsets_box)
        self.finish_header()

        self.summary_label = self.add_summary_label()

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.canvas = new_layout_widget(splitter)
        self.figure_title = add_canvas_title(self.canvas)
        self.distance_plot: pg.PlotItem = new_plot(self.canvas, row=1, col=0)
        self.nearest_plot: pg.PlotItem = new_plot(self.canvas, row=2, col=0)
        for plot in (self.distance_plot, self.nearest_plot):
            style_plot(plot)
            show_grid(plot)
            plot.getAxis("left").setWidth(64)  # align the two x axes
        self.distance_plot.setLabel("left", "distance to nearest")
        set_title(self.distance_plot, DISTANCE_TITLE)
        self.nearest_plot.setLabel("left", "nearest position q")
        set_title(self.nearest_plot, NEAREST_TITLE)
        self.nearest_plot.setLabel("bottom", "position p")
        self.nearest_plot.setXLink(self.distance_plot)
        self.distance_curve = self.distance_plot.plot(pen=pg.mkPen(BLUE, width=1.5))
        self.minimum_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DashLine),
                                            label="closest pair", labelOpts={"color": ORANGE, "position": 0.98,
                                                                           "anchors": [(1, 0), (1, 1)]})
        self.distance_plot.addItem(self.minimum_line)
        self.nearest_scatter = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(BLUE))
        self.nearest_plot.addItem(self.nearest_scatter)
        self.closest_marker = pg.ScatterPlotItem(size=11, pen=pg.mkPen(ORANGE, width=2), brush=None, symbol="o")
        self.nearest_plot.addItem(self.closest_marker)

        self.table = QTableWidget(0, 5, splitter)
        self.table.setHorizontalHeaderLabels(["p", "q", "q − p", "(q − p)/2π", "distance"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # Sized once per update (resizeColumnsToContents): in ResizeToContents mode every setItem
        # re-measures every column.
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setToolTip("The closest pairs of distinct positions, closest first")
        splitter.addWidget(self.canvas)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([700, 330])
        self.body.addWidget(splitter, 1)

        self._widest_texts: tuple[int, ...] = ()
        self.link_cursor(self.canvas, [CursorAxis(plot, "x", "position")
                                       for plot in (self.distance_plot, self.nearest_plot)])
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def model_arguments(self) -> tuple:
        """The parameters, the rows of the near-repeats table and whether it keeps one pair per offset.

        A scan of every offset continues in steps (:meth:`_continue`) until
        it is done or a newer request replaces it.
        """
        return self.state.params, self.top_box.value(), self.offsets_box.isChecked()

    def _continue(self, data: UniquenessData) -> None:
        """Ask for the next step of ``data``'s scan (under the same key: a parameter change cancels it)."""
        self.compute.submit(self, ModelJob(continue_uniqueness_data, (data,)), self._receive, self.show_error)

    def show_data(self, data: UniquenessData) -> None:
        found, result = data.found, data.result
        positions = result.positions
        dots = positions.size <= MAX_DOTS
        self.distance_curve.setData(
            positions, result.nearest_distance, symbol="o" if dots else None, symbolSize=4,
            symbolBrush=BLUE, symbolPen=None)
        p, q, distance = found.closest_pair
        self.minimum_line.setPos(distance)
        self.nearest_scatter.setData(positions, result.nearest_position)
        self.closest_marker.setData([p, q], [q, p])
        # Distances start at 0 on the axis: equal-up-to-rounding values must look equal.
        top = float(np.max(result.nearest_distance))
        set_y_range(self.distance_plot, 0, nice_bounds(0.0, top * 1.08)[1] if top > 0 else 1.0)
        # room for the closest-pair circles (11 px) at the ends, even with two positions
        for plot in (self.distance_plot, self.nearest_plot):
            plot.setXRange(0, max(positions[-1], 1), padding=0.04)
        self.nearest_plot.setYRange(0, max(positions[-1], 1), padding=0.12)
        for plot in (self.distance_plot, self.nearest_plot):
            set_integer_ticks(plot.getAxis("bottom"), 0, int(positions[-1]))
        set_integer_ticks(self.nearest_plot.getAxis("left"), 0, int(positions[-1]))

        turns = found.offset_turns()
        self._fill_table([(f"{a:,.0f}", f"{b:,.0f}", f"{abs(b - a):,.0f}", f"{turn:.4f}", f"{dist:.6g}")
                          for (a, b, dist), turn in zip(found.near_repeats, turns)])

        self.summary_label.setText(closest_pair_sentence(data, rich=True))
        # The figure (exported without the message bar) says which positions it compares.
        set_title(self.distance_plot, DISTANCE_TITLE + curve_range(data))
        set_canvas_title(self.figure_title, data.params.title())
        self.show_message(coverage_message(data), "info")
        if found.pending:
            self._continue(data)
        prepare_for_paint(self.canvas)

    def _fill_table(self, rows: list[tuple[str, ...]]) -> None:
        """Show ``rows`` in the near-repeats table, in the items it has; columns re-fit when their widest text changes.

        The table's texts keep their widths from one d_model to the next, so
        neither new items nor a re-fit are needed on most updates.
        """
        table = self.table
        table.setRowCount(len(rows))
        for row, cells in enumerate(rows):
            for col, text in enumerate(cells):
                item = table.item(row, col)
                if item is None:
                    item = QTableWidgetItem(text)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    table.setItem(row, col, item)
                elif item.text() != text:
                    item.setText(text)
        metrics = table.fontMetrics()
        widest = tuple(max((metrics.horizontalAdvance(cells[col]) for cells in rows), default=0)
                       for col in range(table.columnCount()))
        if widest != self._widest_texts:
            self._widest_texts = widest
            table.resizeColumnsToContents()

    def figure_caption(self) -> str:
        """The closest pair, the range it covers and the table's first pairs, which the canvas does not show."""
        if self.data is None:
            return ""
        parts = (closest_pair_sentence(self.data, rich=False), coverage_message(self.data),
                 near_repeats_sentence(self.data, self.offsets_box.isChecked()))
        return " ".join(filter(None, parts))

    def data_export(self, data: UniquenessData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Nearest position and distance per position, and the near-repeats table."""
        found, result = data.found, data.result
        repeats = np.array(found.near_repeats, dtype=np.float64).reshape(-1, 3)
        return {
            "nearest": np.column_stack([result.positions, result.nearest_position, result.nearest_distance]),
            "near_repeats": repeats,
        }, {
            "positions_compared": data.count,
            "method": found.method,
            "coverage": found.coverage(),
            "pairs_proved": found.pair_coverage().as_dict(),
            "whole_range": found.whole_range,
            "pending": found.pending,
            "curve_whole_range": found.curve_whole_range,
            "neighbour_step": found.neighbour_step,
            "columns": {"nearest": ["position", "nearest_position", "distance"],
                        "near_repeats": ["p", "q", "distance"]},
            "closest_pair": list(found.closest_pair),
            "one_pair_per_offset": self.offsets_box.isChecked(),
        }
