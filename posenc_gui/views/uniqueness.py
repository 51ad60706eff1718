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
from ..model.panel_data import UniquenessData, uniqueness_data, view_positions
from .base import Panel
from .labels import WrappedLabelHolder
from .matrixplot import (
    BLUE, FOREGROUND, MAX_DOTS, ORANGE, Markers, add_data_item, new_layout_widget, nice_bounds, prepare_for_paint,
    set_title, set_y_range, show_grid, style_plot,
)
from .spectrum import set_integer_ticks

#: Title of the upper plot; at large N, which positions were compared is added.
DISTANCE_TITLE = "min over q ≠ p of ‖PE(p) − PE(q)‖"


class UniquenessPanel(Panel):
    """Nearest other position of each position, the closest pair and the near-repeats."""

    panel_id = "uniqueness"
    title = "Uniqueness"
    help_text = (
        "A position is only recoverable if no other position has (almost) the same encoding. "
        "Top: for each position p the distance to its nearest other position, "
        "min<sub>q≠p</sub> ‖PE(p) − PE(q)‖. Bottom: which position q that is. Table: the closest "
        "pairs. A single sine collides (sin x = sin y when y ≈ π − x + 2πm); the pair "
        "[sin p, cos p] is a point on a circle, so p and q nearly repeat when q − p ≈ m·2π "
        "(44 ≈ 7·2π, 710 ≈ 113·2π): ‖PE(p) − PE(q)‖ = √(d/2)·2|sin((q−p)/2)|. "
        "More frequencies push the minimum distance up. The column (q−p)/2π shows how many "
        "turns of the period-2π circle apart the pair is."
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

        self.summary_label = QLabel(self)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setStyleSheet(f"color:{FOREGROUND};")
        self.body.addWidget(WrappedLabelHolder(self.summary_label, self))

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.canvas = new_layout_widget(splitter)
        self.distance_plot: pg.PlotItem = self.canvas.addPlot(row=0, col=0)
        self.nearest_plot: pg.PlotItem = self.canvas.addPlot(row=1, col=0)
        for plot in (self.distance_plot, self.nearest_plot):
            style_plot(plot)
            show_grid(plot)
            plot.setMenuEnabled(False)
            plot.getAxis("left").setWidth(64)  # align the two x axes
        self.distance_plot.setLabel("left", "distance to nearest")
        set_title(self.distance_plot, DISTANCE_TITLE)
        self.nearest_plot.setLabel("left", "nearest position q")
        self.nearest_plot.setLabel("bottom", "position p")
        self.nearest_plot.setXLink(self.distance_plot)
        self.distance_curve = add_data_item(self.distance_plot, pen=pg.mkPen(BLUE, width=1.5))
        self.minimum_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DashLine),
                                            label="closest pair", labelOpts={"color": ORANGE, "position": 0.98,
                                                                           "anchors": [(1, 0), (1, 1)]})
        self.distance_plot.addItem(self.minimum_line)
        self.nearest_scatter = Markers(size=4, pen=None, brush=pg.mkBrush(BLUE))
        self.nearest_plot.addItem(self.nearest_scatter)
        self.closest_marker = Markers(size=11, pen=pg.mkPen(ORANGE, width=2), brush=None, symbol="o")
        self.nearest_plot.addItem(self.closest_marker)

        self.table = QTableWidget(0, 5, splitter)
        self.table.setHorizontalHeaderLabels(["p", "q", "q − p", "(q − p)/2π", "distance"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # Sized once per update (resizeColumnsToContents): in ResizeToContents mode every setItem
        # re-measured every column, 12 ms of a 20 ms update once the table had been painted.
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setToolTip("The closest pairs of distinct positions, closest first")
        splitter.addWidget(self.canvas)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([700, 330])
        self.body.addWidget(splitter, 1)

        self.data: UniquenessData | None = None
        self._widest_texts: tuple[int, ...] = ()
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def request_update(self) -> None:
        """Recompute in the worker process; the newest request wins.

        Without the process, the cost declared (counted as the similarity
        matrix's is: the rows and columns of the distance matrix, and its
        entries) runs it at once with the core panels at the default size
        (about 4 ms), as a worker thread's many small NumPy calls slowed the
        GUI thread more than that.
        """
        params, top, distinct = self.state.params, self.top_box.value(), self.offsets_box.isChecked()
        count = view_positions(params)
        self.compute.submit(self, ModelJob(uniqueness_data, (params, top, distinct)), self._show, self._error,
                            cost=2 * count * params.d_model + count * count)

    def _error(self, error: Exception) -> None:
        self.show_message(str(error), "error")

    def _show(self, data: UniquenessData) -> None:
        self.data = data
        result = data.result
        positions = result.positions
        dots = positions.size <= MAX_DOTS
        self.distance_curve.setData(
            positions, result.nearest_distance, symbol="o" if dots else None, symbolSize=4,
            symbolBrush=BLUE, symbolPen=None)
        p, q, distance = result.closest_pair
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

        turns = result.offset_turns()
        self._fill_table([(f"{a:,.0f}", f"{b:,.0f}", f"{abs(b - a):,.0f}", f"{turn:.4f}", f"{dist:.6g}")
                          for (a, b, dist), turn in zip(result.near_repeats, turns)])

        params = data.params
        self.summary_label.setText(
            f"<b>Closest pair:</b> positions {p:,.0f} and {q:,.0f}, ‖PE(p) − PE(q)‖ = <b>{distance:.6g}</b> "
            f"(typical ‖PE‖ = {data.typical_norm:.4g}); {params.scheme}, d_model {params.d_model:,}, "
            f"positions 0…{data.count - 1:,}."
        )
        # The figure (exported without the message bar) says which positions it compares.
        set_title(self.distance_plot, DISTANCE_TITLE + (
            f", positions 0…{data.count - 1:,} of {params.seq_len:,}" if data.truncated else ""))
        if data.truncated:
            self.show_message(
                f"Comparing positions 0…{data.count - 1:,} of {params.seq_len:,}: all pairs of "
                f"{params.seq_len:,} positions at d_model {params.d_model:,} are too many for a live view.",
                "info",
            )
        else:
            self.show_message("")
        prepare_for_paint(self.canvas)

    def _fill_table(self, rows: list[tuple[str, ...]]) -> None:
        """Show ``rows`` in the near-repeats table, in the items it has; columns re-fit when their widest text changes.

        New items for every cell and a re-fit of every column on each update
        took about 1.5 ms of a parameter step, for a table whose texts keep
        their widths from one d_model to the next.
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

    def figure_widget(self) -> QWidget:
        return self.canvas

    def export_data(self) -> dict[str, Any]:
        """Nearest position and distance per position, and the near-repeats table."""
        if self.data is None:
            raise ValueError("uniqueness: nothing computed yet")
        result, params = self.data.result, self.data.params
        repeats = np.array(result.near_repeats, dtype=np.float64).reshape(-1, 3)
        return {
            "arrays": {
                "nearest": np.column_stack([result.positions, result.nearest_position, result.nearest_distance]),
                "near_repeats": repeats,
            },
            "meta": {
                "panel": self.panel_id,
                "params": params.__dict__.copy(),
                "positions_compared": self.data.count,
                "columns": {"nearest": ["position", "nearest_position", "distance"],
                            "near_repeats": ["p", "q", "distance"]},
                "closest_pair": list(result.closest_pair),
                "one_pair_per_offset": self.offsets_box.isChecked(),
            },
        }
