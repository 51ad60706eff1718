"""Scorecard: unique, bounded, deterministic, generalizes, exact T_k — measured for every scheme."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLayout,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..compute import ModelJob
from ..model import EncodingParams
from ..model.scorecard import CRITERIA, GROWTH_TOL, TK_OFFSET, TK_TOL, UNIQUE_TOL, Scorecard, SchemeScore, scorecard
from .base import Panel
from .matrixplot import FOREGROUND

PASS_BRUSH = QColor("#dff2e3")
FAIL_BRUSH = QColor("#fbe0e0")
CURRENT_BRUSH = QColor("#fff3c4")
#: Parameter changes within this many milliseconds are measured once.
DEBOUNCE_MS = 150
COLUMNS = ("scheme", *CRITERIA.keys())
#: Column headers, broken into short lines so the cells, not the headers, set the widths.
HEADERS = {
    "bounded": "bounded\nmax ‖p‖ over\nN · 10N · 100N",
    "unique": "unique at N\nclosest pair,\nin steps",
    "deterministic": "deterministic",
    "generalizes": "unseen lengths\nmax ‖p‖ past N\nvs up to N",
    "exact_tk": "exact relative T_k\nrelative residual,\nk = 1",
}


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else ("n/a" if math.isnan(x) else "−∞")
    return f"{x:.3g}"


def _pos(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def cell_texts(score: SchemeScore) -> dict[str, tuple[str, str]]:
    """``{criterion: (cell text, tooltip)}`` for one row; the numbers all come from the model."""
    mark = {True: "✓", False: "✗"}
    n0, n10, n100 = score.max_norm
    if score.closest_pair is None:
        unique = (f"{mark[score.unique]} one position", "Only one position: nothing to confuse it with.")
    else:
        p, q = score.closest_pair
        unique = (
            f"{mark[score.unique]} {_pos(p)} vs {_pos(q)}: {_num(score.unique_ratio)}× step",
            f"Closest pair of distinct positions among 0…{score.unique_positions - 1:,}: {_pos(p)} and {_pos(q)}, "
            f"distance {_num(score.min_distance)}; median neighbour step ‖p_(i+1) − p_i‖ = "
            f"{_num(score.neighbour_step)}; ratio {_num(score.unique_ratio)} (unique if ≥ {UNIQUE_TOL:g}).",
        )
    return {
        "bounded": (
            f"{mark[score.bounded]} {_num(n0)} · {_num(n10)} · {_num(n100)}",
            f"max ‖p‖ over positions 0…N−1, 0…10N−1, 0…100N−1: {_num(n0)}, {_num(n10)}, {_num(n100)}. "
            f"Bounded if the last is at most {GROWTH_TOL:g}× the middle one.",
        ),
        "unique": unique,
        "deterministic": (
            f"{mark[score.deterministic]} same bits",
            "Encoding the positions twice, and once in reverse order, gives bit-identical values."
            if score.deterministic else "Two encodings of the same positions differ.",
        ),
        "generalizes": (
            f"{mark[score.generalizes]} ×{_num(score.unseen_ratio)}"
            + ("" if score.unseen_finite else " (not finite)"),
            f"Positions N…10N−1 (never seen at this length): values "
            f"{'all finite' if score.unseen_finite else 'NOT all finite'}; their max ‖p‖ is "
            f"{_num(score.unseen_ratio)}× the max over 0…N−1 (OK if ≤ {GROWTH_TOL:g}).",
        ),
        "exact_tk": (
            f"{mark[score.tk_exact]} {score.tk_residual:.1e}",
            f"T_k for k = {TK_OFFSET:g} ({score.tk_method}) at d_model = {score.tk_d_model:,} over "
            f"{score.tk_positions:,} positions: relative residual ‖PE(p+k) − T_k·PE(p)‖ / ‖PE(p+k)‖ = "
            f"{score.tk_residual:.2e} (exact if < {TK_TOL:g}).",
        ),
    }


def _measure_key(params: EncodingParams) -> tuple:
    """What the scorecard depends on (not the chosen scheme: every scheme is measured)."""
    return (params.seq_len, params.d_model, params.base, params.layout)


class ScorecardPanel(Panel):
    """A live table: each scheme against the notes' wish list, measured at the current sizes."""

    panel_id = "scorecard"
    title = "Scorecard"
    help_text = (
        "The notes ask that p<sub>i</sub> be unique, bounded, deterministic and generalize to unseen "
        "lengths; the sinusoidal claim adds an exact linear map PE(p+k) = T<sub>k</sub>·PE(p). Every cell "
        "is measured at the current N, d and base, for every scheme (the chosen one is highlighted): "
        f"<b>bounded</b>: max ‖p‖ over 0…N−1, 0…10N−1, 0…100N−1 does not grow (×≤{GROWTH_TOL:g}); "
        f"<b>unique</b>: the closest pair of distinct positions is at least {UNIQUE_TOL:g} of a typical "
        "step ‖p<sub>i+1</sub> − p<sub>i</sub>‖ apart; <b>deterministic</b>: encoding twice gives the same "
        "bits; <b>unseen lengths</b>: positions N…10N−1 stay finite and within the seen range; "
        f"<b>exact T_k</b>: relative residual ‖PE(p+k) − T<sub>k</sub>PE(p)‖/‖PE(p+k)‖ &lt; {TK_TOL:g} "
        "(k = 1, least squares where no exact rotation exists). Hover a cell for its numbers. For large "
        "N or d the checks sample positions (stated below the table)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.status_label = QLabel(self)
        self.header.addWidget(self.status_label, 1)
        self.finish_header()
        # The figure: caption, the whole table (sized to its contents, never scrolled) and the
        # sampling notes, in a scroll area. Export renders the figure, so a dock narrower than
        # the table still exports every column.
        self.figure = QWidget()
        self.figure.setObjectName("scorecard-figure")
        self.figure.setStyleSheet(f"QWidget#scorecard-figure {{ background: white; }} QLabel {{ color: {FOREGROUND}; }}")
        figure_layout = QVBoxLayout(self.figure)
        figure_layout.setContentsMargins(8, 8, 8, 8)
        figure_layout.setSpacing(6)
        figure_layout.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)
        self.caption_label = QLabel(self.figure)
        self.caption_label.setTextFormat(Qt.TextFormat.RichText)
        figure_layout.addWidget(self.caption_label)
        self.table = QTableWidget(0, len(COLUMNS), self.figure)
        self.table.setHorizontalHeaderLabels(["scheme", *HEADERS.values()])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.verticalHeader().setVisible(False)
        # Sized once per fill (resizeColumnsToContents): in ResizeToContents mode every
        # setItem re-measured its whole column, ~35-130 ms per fill on the GUI thread.
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setStyleSheet(f"QTableWidget {{ background: white; color: {FOREGROUND}; }}")
        figure_layout.addWidget(self.table)
        self.notes_label = QLabel(self.figure)
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        figure_layout.addWidget(self.notes_label)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(False)
        self.scroll.setWidget(self.figure)
        self.scroll.setStyleSheet("QScrollArea { background: white; }")
        self.body.addWidget(self.scroll, 1)
        self.data: Scorecard | None = None
        self._requested: tuple | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.schedule_update)
        state.paramsChanged.connect(self._on_params)
        self.schedule_update()

    # ------------------------------------------------------------------ data
    def _on_params(self, params: EncodingParams) -> None:
        if self.data is not None and _measure_key(self.data.params) == _measure_key(params):
            self._fill(self.data)  # only the highlighted scheme changed
            return
        self._timer.start()

    def is_stale(self) -> bool:
        """True when the table does not show the current sizes."""
        return self.data is None or _measure_key(self.data.params) != _measure_key(self.state.params)

    def request_update(self) -> None:
        """Measure in a worker (via ``schedule_update``: a hidden dock measures when shown)."""
        params = self.state.params
        key = _measure_key(params)
        if key == self._requested or not self.is_stale():
            return
        self._requested = key
        self.status_label.setText(f"Measuring 8 schemes at N = {params.seq_len:,}, d = {params.d_model:,} …")
        self.compute.submit(self, ModelJob(scorecard, (params,)), self._show, self._failed)

    def _failed(self, error: Exception) -> None:
        self._requested = None
        self.status_label.setText("")
        self.show_message(str(error), "error")

    def _show(self, data: Scorecard) -> None:
        self._requested = None
        self.data = data
        self.show_message("")
        self._fill(data)
        if self.is_stale():  # parameters moved on while measuring
            self._timer.start()

    def _fill(self, data: Scorecard) -> None:
        params = data.params
        current = self.state.params.scheme
        self.table.setUpdatesEnabled(False)
        try:
            self._fill_table(data, current)
        finally:
            self.table.setUpdatesEnabled(True)
        measured = (f"Measured at N = {params.seq_len:,}, d_model = {params.d_model:,}, base = {params.base:g}, "
                    f"layout = {params.layout}")
        self.status_label.setText("")  # the figure's caption says what was measured
        self.caption_label.setText(f"<b>Scorecard</b> — each scheme against the wish list. {measured}.")
        notes = sorted({note for s in data.scores for note in s.notes})
        self.notes_label.setText("Sampling: " + "; ".join(notes) + "." if notes else "Every position checked.")
        self.figure.adjustSize()

    def _fill_table(self, data: Scorecard, current: str) -> None:
        self.table.setRowCount(len(data.scores))
        bold = QFont(self.table.font())
        bold.setBold(True)
        for row, score in enumerate(data.scores):
            name = QTableWidgetItem(("▶ " if score.scheme == current else "") + score.label)
            name.setToolTip(f"{score.scheme}: " + ("; ".join(score.notes) or "all positions checked"))
            if score.scheme == current:
                name.setFont(bold)
                name.setBackground(QBrush(CURRENT_BRUSH))
            self.table.setItem(row, 0, name)
            verdicts = score.verdicts()
            for col, (criterion, (text, tip)) in enumerate(cell_texts(score).items(), start=1):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                item.setBackground(QBrush(PASS_BRUSH if verdicts[criterion] else FAIL_BRUSH))
                if score.scheme == current:
                    item.setFont(bold)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        self._fit_table()

    def _fit_table(self) -> None:
        """Size the table to show every row and column: it never scrolls, the scroll area around the figure does."""
        table = self.table
        frame = 2 * table.frameWidth()
        width = sum(table.columnWidth(c) for c in range(table.columnCount())) + frame
        height = (table.horizontalHeader().sizeHint().height()
                  + sum(table.rowHeight(r) for r in range(table.rowCount())) + frame)
        table.setFixedSize(width, height)
        for label in (self.caption_label, self.notes_label):
            label.setFixedWidth(width)

    # ------------------------------------------------------------------ access
    def cell_text(self, scheme: str, criterion: str) -> str:
        """The text shown for ``scheme`` × ``criterion`` (tests, scripts)."""
        col = COLUMNS.index(criterion)
        for row in range(self.table.rowCount()):
            if self.data is not None and self.data.scores[row].scheme == scheme:
                return self.table.item(row, col).text()
        raise ValueError(f"scheme {scheme!r} is not in the table")

    def figure_widget(self) -> QWidget:
        """Caption, the whole table and the sampling notes (not only the part scrolled into view)."""
        return self.figure

    def export_data(self) -> dict[str, Any]:
        """Verdicts as a 0/1 matrix (schemes × criteria) and every number behind them."""
        data = self.data
        if data is None or self.is_stale():
            data = scorecard(self.state.params)  # export of a hidden dock: measure now
        verdicts = np.array([[float(v) for v in s.verdicts().values()] for s in data.scores])
        return {
            "arrays": {"verdicts": verdicts},
            "meta": {
                "panel": self.panel_id,
                "params": data.params.__dict__.copy(),
                "rows": [s.scheme for s in data.scores],
                "columns": list(CRITERIA),
                "table": data.table(),
                "tolerances": {"growth": GROWTH_TOL, "unique": UNIQUE_TOL, "tk": TK_TOL, "tk_offset": TK_OFFSET},
            },
        }
