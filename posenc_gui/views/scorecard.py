"""Scorecard: unique, bounded, deterministic, generalizes, exact T_k — measured for every scheme."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLayout,
    QScrollArea,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..compute import ModelJob
from ..model import SCHEMES, EncodingParams, scheme
from ..model.attention.logit_properties import PROPERTY_HELP, PROPERTY_NAMES, VECTORS_WORDS, LogitProperties
from ..model.analyses.scorecard import (
    CRITERIA, GROWTH_TOL, TK_OFFSET, TK_TOL, UNIQUE_TOL, Scorecard, SchemeScore, continue_logits, continue_score,
    scorecard, scorecard_key,
)
from ..model.analyses.measured import measure_scheme
from .base import Panel
from .plotkit import FOREGROUND
from .plotkit.theme import themed

PASS_BRUSH = QColor("#dff2e3")
FAIL_BRUSH = QColor("#fbe0e0")
PENDING_BRUSH = QColor("#eceff2")
CURRENT_BRUSH = QColor("#fff3c4")
#: The row of the pinned setup A: a neutral tint of the theme's surfaces (B's row keeps the current row's yellow).
PINNED_BRUSH = QColor("#eceff2")
#: Parameter changes within this many milliseconds are measured once.
DEBOUNCE_MS = 150
#: Offsets × frequencies of one step of a uniqueness scan (one worker request).
SCAN_STEP = 2**28
#: The positional logit's measured properties (Positional logits panel), after the table criteria.
LOGIT_COLUMNS = tuple(f"logit: {name}" for name in PROPERTY_NAMES)
COLUMNS = ("scheme", *CRITERIA.keys(), *LOGIT_COLUMNS)
NOT_APPLICABLE_BRUSH = QColor("#f4f4f4")
#: Column headers, broken into short lines so the cells, not the headers, set the widths; each says its tolerance.
HEADERS = {
    "bounded_within": f"bounded in 0…N−1\nmax ‖p‖ when trained\nfor L · 10L · 100L\n(growth ≤ ×{GROWTH_TOL:g})",
    "bounded_past": f"bounded past N\nmax ‖p‖ over\nN · 10N · 100N\n(growth ≤ ×{GROWTH_TOL:g})",
    "unique": f"unique in 0…N−1\nclosest pair,\nin steps\n(≥ {UNIQUE_TOL:g} step)",
    "deterministic": "deterministic\n(the same bits)",
    "generalizes": f"unseen lengths\nmax ‖p‖ past N\nvs up to N\n(≤ ×{GROWTH_TOL:g})",
    "exact_tk": f"exact relative T_k\nrelative residual,\nk = {TK_OFFSET:g}\n(rotation: under {TK_TOL:g})",
    "logit: offset only": "logit: depends\nonly on the\noffset m − n",
    "logit: decays": "logit: decays\n(< 1 % softmax\nweight from r;\nq = k = 1, ÷√d)",
    "logit: symmetric": "logit:\nsymmetric\nL(m, n) = L(n, m)",
    "logit: bounded": "logit: bounded\nmax |L| over\n16× the range",
    "logit: defined past N": "logit: defined\npast N\n(N … 2N − 1)",
    "logit: tells positions apart": "logit: tells\npositions apart\n(rows m, m + 1)",
}


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else ("n/a" if math.isnan(x) else "−∞")
    return f"{x:.3g}"


def _pos(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def _unique_cell(score: SchemeScore) -> tuple[str, str]:
    """The "unique" cell: the closest pair in steps, with the range it is proved over (a ✓ only for 0…N−1)."""
    found = score.uniqueness
    if found is None:
        return "✓ one position", "Only one position: nothing to confuse it with."
    p, q = score.closest_pair
    numbers = f"{_pos(p)} vs {_pos(q)}: {_num(score.unique_ratio)}× step"
    step_over = f"0…{(found.step_range or found.pairs_range) - 1:,}"
    detail = (f"distance {_num(score.min_distance)}; median neighbour step ‖p_(i+1) − p_i‖ over {step_over} = "
              f"{_num(score.neighbour_step)}; ratio {_num(score.unique_ratio)} (unique if ≥ {UNIQUE_TOL:g}).")
    if found.pending:
        done, total = found.scan.progress()
        return (f"… {100 * done / total:.0f} % checked",
                f"{found.scan.describe().capitalize()}. Meanwhile, among all pairs of "
                f"0…{found.pairs_range - 1:,}: {_pos(p)} and {_pos(q)}, {detail}")
    verdict = score.unique_verdict
    collides = score.min_distance == 0
    text = verdict.cell(numbers, "repeats" if collides else numbers)
    return text, f"Closest pair of distinct positions, {found.coverage()}: {_pos(p)} and {_pos(q)}, {detail}"


def _tk_cell(score: SchemeScore) -> tuple[str, str]:
    mark = {True: "✓", False: "✗"}[score.tk_exact]
    rows = f"{score.tk_unpaired:,} dim{'s' if score.tk_unpaired != 1 else ''} unpaired"
    if score.tk_method == "rotation":
        return (f"{mark} {score.tk_residual:.1e}",
                f"Every dimension's frequency has a sine and a cosine, so T_k (k = {TK_OFFSET:g}) is made of 2×2 "
                f"rotations; relative residual ‖PE(p+k) − T_k·PE(p)‖ / ‖PE(p+k)‖ over {score.tk_positions:,} "
                f"positions spread over 0…N−1 = {score.tk_residual:.2e} (exact if under {TK_TOL:g}: rounding "
                "stays far below).")
    if score.tk_method == "any":
        return ("✗ not determined", f"Every encoding of {score.scheme} is 0, so PE(p+k) = T·PE(p) holds for every "
                "matrix T: T_k is not determined and relates no positions.")
    if "columns" in scheme(score.scheme).provides:
        why = (f"{rows}: a sine without the cosine of its frequency (or a linear column) has no exact row of T_k, "
               "so T_k is not exact.")
    else:
        why = f"{rows}: a table without (sin, cos) pairs has no exact row of T_k, so T_k is not exact."
    if score.tk_method == "least-squares":
        return (f"{mark} {rows}; fit {score.tk_residual:.1e}",
                f"{why} The best least-squares rows, fitted on {score.tk_fit_positions:,} positions between the "
                f"integers, leave a relative residual of {score.tk_residual:.2e} on {score.tk_positions:,} "
                "integer positions of 0…N−1 they were not fitted on.")
    return f"{mark} {rows}", f"{why} No least-squares residual at this d_model: see the notes under the table."


def _unseen_cell(score: SchemeScore) -> tuple[str, str]:
    rows = score.table_rows
    if rows is not None and math.isnan(score.unseen_ratio):
        return (f"✗ no rows past {rows - 1:,}",
                f"Positions N…10N−1 (never seen at this length) have no encoding: the table has rows for "
                f"positions 0…{rows - 1:,} only, as a model with a learned table cannot take a longer input.")
    return (f"{'✓' if score.generalizes else '✗'} ×{_num(score.unseen_ratio)}"
            + ("" if score.unseen_finite else " (not finite)"),
            f"Positions N…10N−1 (never seen at this length): values "
            f"{'all finite' if score.unseen_finite else 'NOT all finite'}; their max ‖p‖ is "
            f"{_num(score.unseen_ratio)}× the max over 0…N−1 (OK if ≤ {GROWTH_TOL:g}).")


def cell_texts(score: SchemeScore) -> dict[str, tuple[str, str]]:
    """``{criterion: (cell text, tooltip)}`` for one row; the numbers all come from the model."""
    mark = {True: "✓", False: "✗"}
    t0, t1, t2 = score.trained_max_norm
    l0, l1, l2 = score.trained_lengths
    n0, n10, n100 = score.max_norm
    return {
        "bounded_within": (
            f"{mark[score.bounded_within]} {_num(t0)} · {_num(t1)} · {_num(t2)}",
            f"Within the trained length: max ‖p‖ over positions 0…L−1 of the encoding made for length L = "
            f"{l0:,}, {l1:,}, {l2:,}: {_num(t0)}, {_num(t1)}, {_num(t2)}. Bounded if the last is at most "
            f"{GROWTH_TOL:g}× the middle one. This scheme is {score.bounded_words}.",
        ),
        "bounded_past": (
            f"{mark[score.bounded_past]} {_num(n0)} · {_num(n10)} · {_num(n100)}",
            f"Past the trained length: max ‖p‖ over positions 0…N−1, 0…10N−1, 0…100N−1 of the encoding made "
            f"for N: {_num(n0)}, {_num(n10)}, {_num(n100)}. Bounded if the last is at most {GROWTH_TOL:g}× the "
            f"middle one. This scheme is {score.bounded_words}."
            + ("" if score.table_rows is None or not math.isnan(n100) else
               f" The table has rows for positions 0…{score.table_rows - 1:,} only: n/a past them."),
        ),
        "unique": _unique_cell(score),
        "deterministic": (
            f"{mark[score.deterministic]} same bits",
            "Encoding the positions twice, and once in reverse order, gives bit-identical values."
            if score.deterministic else "Two encodings of the same positions differ.",
        ),
        "generalizes": _unseen_cell(score),
        "exact_tk": _tk_cell(score),
    }


def _options_text(data: Scorecard) -> str:
    """Each option the schemes were measured with, once: ``"base 10000 (sinusoidal, all_sine); …"``."""
    used: dict[str, tuple[str, list[str]]] = {}
    for setup in data.setups:
        for spec in setup.info.options_in_use(setup.options):
            value = setup.options[spec.name]
            text = (spec.title_part(value) if spec.kind in ("reals", "path")  # a file by its model's name
                    else f"{spec.label} {spec.text(value)}")
            if not text:  # an empty list of factors (1 for every pair) says nothing
                continue
            used.setdefault(text, (text, []))[1].append(setup.scheme)
    return "; ".join(f"{text} ({', '.join(schemes)})" for text, schemes in used.values())


class ScorecardPanel(Panel):
    """A live table: each scheme against the notes' wish list, measured at the current sizes."""

    panel_id = "scorecard"
    comparable = False
    requires: frozenset[str] = frozenset()  # applies to every scheme
    title = "Scorecard"
    model_functions = (scorecard, continue_score, continue_logits, measure_scheme)
    help_text = (
        "The notes ask that p<sub>i</sub> be unique, bounded, deterministic and generalize to unseen "
        "lengths; the sinusoidal claim adds an exact linear map PE(p+k) = T<sub>k</sub>·PE(p). Every cell "
        "is measured at the current N, d and base, for every scheme (the chosen one is highlighted): "
        f"<b>bounded in 0…N−1</b>: max ‖p‖ over the trained positions 0…L−1 of the encoding made for "
        f"length L does not grow as L grows ten- and a hundredfold (×≤{GROWTH_TOL:g}); "
        f"<b>bounded past N</b>: max ‖p‖ over 0…N−1, 0…10N−1, 0…100N−1 of the encoding made for N does not "
        f"grow (×≤{GROWTH_TOL:g}); <b>unique</b>: the closest pair of distinct positions of 0…N−1 is at "
        f"least {UNIQUE_TOL:g} of a typical step ‖p<sub>i+1</sub> − p<sub>i</sub>‖ apart — every pair, or "
        "every offset where the distance depends on the offset only, binary's closed form, or an exact "
        "search of the pairs close along one coordinate; a cell whose search covers less names the range "
        "it covers and has no ✓ (–); <b>deterministic</b>: encoding twice gives the same bits; <b>unseen lengths</b>: "
        f"positions N…10N−1 stay finite and within ×{GROWTH_TOL:g} of the seen range; <b>exact T_k</b>: "
        "every frequency has its sine and cosine, so T<sub>k</sub> (k = 1) is made of rotations, and their "
        f"relative residual ‖PE(p+k) − T<sub>k</sub>PE(p)‖/‖PE(p+k)‖ is under {TK_TOL:g}; otherwise ✗, with "
        "the residual of a least-squares fit on positions it was not fitted on. Hover a cell for its "
        "numbers. For large N or d the norm checks sample positions (stated below the table). RoPE adds "
        "no table: its row measures the rotation itself, R(p·θ<sub>i</sub>) applied to (1, 0) in every pair "
        "(the heatmap's cos and sin columns), at the current d as the head dimension — its exact T<sub>k</sub> "
        "is the rotation RoPE applies to q and k, which is why q·k depends only on the offset. "
        "<b>The logit columns</b> measure every scheme's positional logit on one footing — a table's "
        "PE(m)·PE(n), a rotation's q·R(n − m)·k (q = k = 1), a bias itself — as the Positional-logits panel "
        "does: depends only on the offset, decays (to 1 % of the softmax weight from which distance, the logit "
        "divided by √d_head, every offset 0…N−1 evaluated), symmetric, bounded over a 16× longer range, defined "
        "past N, tells neighbouring positions apart; xPos is causal, measured over the keys n ≤ m it sees. A ✓ or "
        "✗ there is proved (every element evaluated, or a closed form) over its column's whole range; a – was "
        "only checked on the samples its cell names. A scheme that gives no table (a bias) has a row for these "
        "alone."
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
        self.caption_label.setWordWrap(True)
        figure_layout.addWidget(self.caption_label)
        # One table of every column (``self.table``: its items hold every cell) shown as two stacked views so the
        # figure stays no wider than a slide: the table criteria on top, the logit's properties under them, each
        # with its scheme column.
        self.table = QTableWidget(0, len(COLUMNS), self.figure)
        self.table.setHorizontalHeaderLabels(["scheme", *HEADERS.values()])
        self.logit_view = QTableView(self.figure)
        self.logit_view.setModel(self.table.model())
        for view in self.views():
            view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
            view.verticalHeader().setVisible(False)
            # Sized once per fill (resizeColumnsToContents): in ResizeToContents mode every
            # setItem re-measures its whole column.
            view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
            view.horizontalHeader().setStretchLastSection(False)
            view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            view.setStyleSheet(f"QTableView {{ background: white; color: {FOREGROUND}; }} "
                               f"QHeaderView::section {{ background: #eceff2; color: {FOREGROUND}; "
                               "border: none; border-right: 1px solid #d5dbe1; border-bottom: 1px solid #d5dbe1; "
                               "padding: 2px 4px; }")
            figure_layout.addWidget(view)
        first_logit = 1 + len(CRITERIA)
        for column in range(1, len(COLUMNS)):
            (self.table if column >= first_logit else self.logit_view).setColumnHidden(column, True)
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
        #: The pinned setup A of the window's comparison, and its measured row ``(score, logit)`` once measured.
        self.pinned: EncodingParams | None = None
        self.pinned_row: tuple[SchemeScore | None, Any] | None = None
        # Started by parameter changes; an export runs it at once (Panel.run_debounced), not the old table.
        self._timer = self.debounce(self.schedule_update, delay_ms=DEBOUNCE_MS)
        #: The table highlights a scheme that is no longer the current one (filled when next shown).
        self._refill_due = False
        state.paramsChanged.connect(self._on_params)
        self.schedule_update()

    # ------------------------------------------------------------------ data
    def set_pinned(self, params: EncodingParams | None) -> None:
        """Compare with the pinned setup A: a row "A" measured at A's own parameters heads the table."""
        if params == self.pinned:
            return
        self.pinned, self.pinned_row = params, None
        if params is not None:
            self.compute.submit(("scorecard-A", self), ModelJob(measure_scheme, (params,)),
                                lambda row, pinned=params: self._pinned_measured(pinned, row), self._failed)
        if self.data is not None:
            self._fill(self.data)

    def _pinned_measured(self, pinned: EncodingParams, row: tuple[SchemeScore | None, Any]) -> None:
        if pinned == self.pinned:
            self.pinned_row = row
            if self.data is not None:
                self._fill(self.data)

    def _on_params(self, params: EncodingParams) -> None:
        if self.data is not None and self.data.key == self._measure_key():
            # only the highlighted scheme changed: refilled now on screen, else when next shown
            self._refill_due = not self.on_screen()
            if not self._refill_due:
                self._fill(self.data)
            return
        self._timer.start()

    def ensure_current(self) -> None:
        super().ensure_current()
        if self._refill_due and self.data is not None:
            self._refill_due = False
            self._fill(self.data)

    def is_stale(self) -> bool:
        """True when the table does not show the current sizes."""
        return self.data is None or self.data.key != self._measure_key()

    def _measure_options(self) -> dict:
        """The option values every scheme is measured with: the current ones, then those last set."""
        return {**self.state.remembered, **self.state.params.options}

    def _measure_key(self) -> tuple:
        """What the table depends on: every scheme's sizes and options (not which scheme is chosen); for
        options that cannot be measured (a model file gone), the reason, which the measurement then shows."""
        try:
            return scorecard_key(self.state.params, None, self._measure_options())
        except ValueError as error:
            return ("not measurable", str(error))

    def request_update(self) -> None:
        """Measure in a worker (via ``schedule_update``: a hidden dock measures when shown)."""
        params = self.state.params
        key = self._measure_key()
        if key == self._requested or not self.is_stale():
            return
        self._requested = key
        self.status_label.setText(f"Measuring {len(key)} schemes at N = {params.seq_len:,}, d = {params.d_model:,} …")
        self.compute.submit(self, ModelJob(scorecard, (params, None, SCAN_STEP, self._measure_options())),
                            self._show, self._failed)

    def _continue(self, data: Scorecard) -> None:
        """Ask for the next step of the first scheme whose uniqueness scan is still running.

        Under the panel's own key: a newer measurement cancels the rest.
        """
        score = data.score(data.pending[0])
        self.compute.submit(self, ModelJob(continue_score, (score, data.setup(score.scheme), SCAN_STEP)), self._continued,
                            self._failed)

    def _continued(self, score: SchemeScore) -> None:
        if self.data is None or self.is_stale():
            return
        self._show(self.data.with_score(score))

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
        elif data.pending:
            self._continue(data)
        elif data.logits_pending:  # the logit columns' scans over every offset, a step at a time
            self.compute.submit(self, ModelJob(continue_logits, (data, SCAN_STEP)), self._continued_logits, self._failed)

    def _continued_logits(self, data: Scorecard) -> None:
        if self.data is not None and not self.is_stale():
            self._show(data)

    def _fill(self, data: Scorecard) -> None:
        params = data.params
        current = self.state.params.scheme
        self.table.setUpdatesEnabled(False)
        try:
            self._fill_table(data, current)
        finally:
            self.table.setUpdatesEnabled(True)
        measured = f"Measured at N = {params.seq_len:,}, d_model = {params.d_model:,}; {_options_text(data)}"
        pending = data.pending
        # the figure's caption says what was measured; the status, what is still being checked
        searching = [f"searching all of 0…{params.seq_len - 1:,} for the closest pairs of {', '.join(pending)}"
                     ] if pending else []
        if data.logits_pending:
            searching.append(f"checking every offset of {', '.join(data.logits_pending)}")
        status = "; ".join(searching)
        self.status_label.setText(f"{status[:1].upper()}{status[1:]} …" if status else "")
        self.caption_label.setText(f"<b>Scorecard</b> — each scheme against the wish list. {measured}. Logit "
                                   f"columns: {VECTORS_WORDS}; a ✓ or ✗ is proved over the whole range of its column "
                                   "(positions or offsets 0…N−1; bounded: 0…16N−1; past N: N…2N−1), a – only "
                                   "checked where it says (hover a cell for its coverage).")
        notes = sorted({note for s in data.scores for note in s.notes})
        notes += [f"{SCHEMES[key].label} not measured: {why}" for key, why in data.left_out]
        self.notes_label.setText("Notes: " + "; ".join(notes) + "." if notes else "Every position checked.")
        self.figure.adjustSize()

    def follow_theme(self) -> None:
        """Colour the cells as the current theme has them (see :func:`.plotkit.theme.restyle`)."""
        if self.data is not None:
            self._fill(self.data)

    def _fill_table(self, data: Scorecard, current: str) -> None:
        rows = data.rows
        pinned = self.pinned_row if self.pinned is not None else None
        first = 1 if pinned is not None else 0  # A's row heads the table while comparing
        self.table.setRowCount(len(rows) + first)
        bold = QFont(self.table.font())
        bold.setBold(True)
        scores = {score.scheme: score for score in data.scores}
        if pinned is not None:
            score, measured = pinned
            name = QTableWidgetItem(f"A: {SCHEMES[self.pinned.scheme].label}")
            name.setToolTip(f"A, pinned: {self.pinned.title()}")
            name.setFont(bold)
            name.setBackground(QBrush(QColor(themed(PINNED_BRUSH.name()))))
            self._set_row(0, name, self._row_cells(self.pinned.scheme, score, measured), bold)
        for row, key in enumerate(rows, start=first):
            score = scores.get(key)
            role = "B: " if pinned is not None and key == current else ""
            name = QTableWidgetItem(("▶ " if key == current else "") + role + SCHEMES[key].label)
            name.setToolTip(f"{key}: " + ("; ".join(score.notes) or "all positions checked" if score else
                                          "no table: the table criteria do not apply"))
            if key == current:
                name.setFont(bold)
                name.setBackground(QBrush(QColor(themed(CURRENT_BRUSH.name()))))
            self._set_row(row, name, self._row_cells(key, score, data.logit_properties(key)),
                          bold if key == current else None)
        for view in self.views():
            view.resizeColumnsToContents()
            view.resizeRowsToContents()
        self._fit_table()

    def _set_row(self, row: int, name: QTableWidgetItem, cells: list[tuple[str, str, Any]],
                 font: QFont | None) -> None:
        self.table.setItem(row, 0, name)
        brush = {None: NOT_APPLICABLE_BRUSH, "pending": PENDING_BRUSH, "unsettled": PENDING_BRUSH, True: PASS_BRUSH,
                 False: FAIL_BRUSH}
        for col, (text, tip, verdict) in enumerate(cells, start=1):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            item.setBackground(QBrush(QColor(themed(brush[verdict].name()))))
            if font is not None:
                item.setFont(font)
            self.table.setItem(row, col, item)

    @staticmethod
    def _row_cells(key: str, score: SchemeScore | None, measured: Any) -> list[tuple[str, str, Any]]:
        """``(text, tooltip, verdict)`` of each criterion column: True, False, "pending", or None (not applicable)."""
        cells: list[tuple[str, str, Any]] = []
        if score is None:
            why = SCHEMES[key].lacks(frozenset({"table"})) or "not measured at these sizes"
            cells += [("— no table", f"{why} The table criteria do not apply; its logit's are on the right.", None)
                      for _ in CRITERIA]
        else:
            verdicts = score.verdicts()
            for criterion, (text, tip) in cell_texts(score).items():
                verdict = verdicts[criterion]
                if criterion == "unique" and (score.pending or verdict is None):
                    verdict = "pending" if score.pending else "unsettled"
                cells.append((text, tip, verdict))
        if isinstance(measured, LogitProperties):  # each text has its mark (✓, ✗, – unsettled) and coverage
            texts, cells_short, passes = measured.verdicts(), measured.short_cells(), measured.passes()
            cells += [(cells_short[name], f"{texts[name]}. {PROPERTY_HELP[name]} {VECTORS_WORDS}.",
                       "pending" if passes[name] is None else passes[name]) for name in PROPERTY_NAMES]
        else:
            why = measured or "not measured"
            cells += [("— not measured", f"Its positional logit was not measured: {why}", None)
                      for _ in PROPERTY_NAMES]
        return cells

    def views(self) -> tuple[QTableView, QTableView]:
        """The two views of the table: the scheme and table criteria, then the scheme and the logit's properties."""
        return self.table, self.logit_view

    def view_of(self, column: int) -> QTableView:
        """The view that shows the table's ``column`` (a :data:`COLUMNS` index; the scheme's: the top one)."""
        return self.logit_view if column > len(CRITERIA) else self.table

    def _fit_table(self) -> None:
        """Size each view to show every row and its columns: they never scroll, the scroll area around the figure does."""
        widest = 0
        for view in self.views():
            frame = 2 * view.frameWidth()
            width = sum(view.columnWidth(c) for c in range(len(COLUMNS)) if not view.isColumnHidden(c)) + frame
            height = (view.horizontalHeader().sizeHint().height()
                      + sum(view.rowHeight(r) for r in range(self.table.rowCount())) + frame)
            view.setFixedSize(width, height)
            widest = max(widest, width)
        for label in (self.caption_label, self.notes_label):
            label.setFixedWidth(widest)

    def _pinned_meta(self) -> dict[str, Any]:
        """A's row while comparing: its parameters, verdicts and logit properties (measured now if need be)."""
        if self.pinned is None:
            return {}
        score, measured = self.pinned_row or measure_scheme(self.pinned)
        return {"A": {"params": self.pinned.as_dict(),
                      "verdicts": score.verdicts() if score is not None else None,
                      "logit_properties": measured.as_dict() if isinstance(measured, LogitProperties) else measured}}

    # ------------------------------------------------------------------ access
    def cell_text(self, scheme: str, criterion: str) -> str:
        """The text shown for ``scheme`` × ``criterion`` (tests, scripts)."""
        col = COLUMNS.index(criterion)
        first = 1 if self.pinned is not None and self.pinned_row is not None else 0
        if self.data is not None and scheme in self.data.rows:
            return self.table.item(self.data.rows.index(scheme) + first, col).text()
        raise ValueError(f"scheme {scheme!r} is not in the table")

    def figure_widget(self) -> QWidget:
        """Caption, the whole table and the sampling notes (not only the part scrolled into view)."""
        return self.figure

    def export_data(self) -> dict[str, Any]:
        """Verdicts as a 0/1 matrix (schemes × criteria) and every number behind them."""
        data = self.data
        if data is None or self.is_stale():
            data = scorecard(self.state.params, options=self._measure_options())  # a hidden dock: measure now
        for key in data.pending:  # an export while a scan runs: finish it here
            data = data.with_score(continue_score(data.score(key), data.setup(key)))
        data = continue_logits(data)
        # a verdict not settled over 0…N−1 (its range is in the table's "unique_verdict") is NaN
        verdicts = np.array([[math.nan if v is None else float(v) for v in s.verdicts().values()]
                             for s in data.scores])
        return {
            "arrays": {"verdicts": verdicts},
            "meta": {
                "panel": self.panel_id,
                "params": data.params.as_dict(),
                "rows": [s.scheme for s in data.scores],
                "columns": list(CRITERIA),
                "table": data.table(),
                "logit_properties": data.logit_table(),
                "tolerances": {"growth": GROWTH_TOL, "unique": UNIQUE_TOL, "tk": TK_TOL, "tk_offset": TK_OFFSET},
                "headers": HEADERS,
                **self._pinned_meta(),
            },
        }
