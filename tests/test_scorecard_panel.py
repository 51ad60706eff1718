"""Scorecard dock: the exported figure is the whole table, whatever the dock's width."""

from __future__ import annotations

import numpy as np
import pytest

from helpers_panels import show_panel
from posenc_gui import export
from posenc_gui.model import EncodingParams
from posenc_gui.views.scorecard import COLUMNS, FAIL_BRUSH, NOT_APPLICABLE_BRUSH, PASS_BRUSH, ScorecardPanel
from waiting import TIMEOUT_MS


@pytest.fixture
def narrow_panel(qtbot, state, compute):
    state.update(d_model=32)
    state.flush()
    panel = show_panel(qtbot, ScorecardPanel(state, compute), (420, 300))  # much narrower and lower than the table
    assert panel.data is not None and panel.data.params == EncodingParams(d_model=32)
    return panel


def _cell_centre(panel, row: int, col: int) -> tuple[int, int]:
    """Centre of a table cell in figure coordinates (in the view that shows its column)."""
    table = panel.view_of(col)
    rect = table.visualRect(table.model().index(row, col))
    centre = table.viewport().mapTo(panel.figure, rect.center())
    return centre.x(), centre.y()


def test_the_table_never_scrolls_the_figure_holds_all_of_it(narrow_panel):
    panel = narrow_panel
    table, figure = panel.table, panel.figure_widget()
    assert figure is panel.figure and table.parent() is figure
    assert table.horizontalScrollBar().maximum() == 0 and table.verticalScrollBar().maximum() == 0
    columns = sum(table.columnWidth(c) for c in range(table.columnCount()))
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    assert table.viewport().width() >= columns and table.viewport().height() >= rows
    assert table.geometry().right() < figure.width() and table.geometry().bottom() < figure.height()
    # The dock is narrower than the figure: it scrolls the figure instead.
    assert panel.scroll.viewport().width() < figure.width()
    assert panel.scroll.horizontalScrollBar().maximum() > 0


def test_png_export_shows_the_last_column_and_row(narrow_panel):
    panel = narrow_panel
    figure = panel.figure_widget()
    image = export.render_image(figure, scale=1.0)
    assert (image.width(), image.height()) == (figure.width(), figure.height())
    # the table criteria of each scored scheme (none for a bias), then its logit's properties
    scores = {s.scheme: s.verdicts() for s in panel.data.scores}
    verdicts = [{**scores.get(key, {}), **{f"logit: {name}": held for name, held in
                                          panel.data.logit_properties(key).passes().items()}}
                for key in panel.data.rows]
    last_row, last_col = len(verdicts) - 1, len(COLUMNS) - 1
    for row in (0, last_row):
        for col in (1, last_col):
            x, y = _cell_centre(panel, row, col)
            # sample just left of the cell's centre line, below the text baseline area
            colour = image.pixelColor(x, y - panel.view_of(col).rowHeight(row) // 2 + 2)
            passed = verdicts[row].get(COLUMNS[col])
            expected = NOT_APPLICABLE_BRUSH if passed is None else PASS_BRUSH if passed else FAIL_BRUSH
            got = np.array(colour.getRgb()[:3])
            assert np.abs(got - np.array(expected.getRgb()[:3])).max() <= 3, (row, col, colour.name())
    # The caption names the sizes measured; the notes are in the figure too.
    assert "N = 128" in panel.caption_label.text() and "d_model = 32" in panel.caption_label.text()
    assert panel.notes_label.parent() is figure


def test_the_exported_scorecard_fits_a_16_by_9_slide(tmp_path, qapp):
    from PySide6.QtGui import QImage

    from posenc_gui.cli import export as export_cli

    out = tmp_path / "scorecard.png"
    assert export_cli.main(["scorecard", "-o", str(out)]) == 0  # the default setup: every scheme's row
    image = QImage(str(out))
    assert not image.isNull()
    # no wider than 16:9 of its height (a pixel of rounding allowed), and not a tall strip either
    assert image.width() <= image.height() * 16 / 9 + 1, (image.width(), image.height())
    assert image.width() >= image.height(), (image.width(), image.height())


def test_the_figure_stacks_the_table_criteria_over_the_logit_columns(narrow_panel):
    panel = narrow_panel
    top, bottom = panel.views()
    shown = [[c for c in range(len(COLUMNS)) if not view.isColumnHidden(c)] for view in (top, bottom)]
    assert shown[0][0] == shown[1][0] == 0  # each names the schemes
    assert sorted(shown[0][1:] + shown[1][1:]) == list(range(1, len(COLUMNS)))  # every column once
    assert all(COLUMNS[c].startswith("logit") for c in shown[1][1:])
    assert top.geometry().bottom() < bottom.geometry().top()  # stacked, not side by side
    assert bottom.model() is top.model()  # one table: the same cells, tooltips and colours


def test_svg_and_pdf_exports_hold_every_column(narrow_panel):
    panel = narrow_panel
    svg = export.svg_bytes(panel.figure_widget()).decode("utf-8")
    last_header = panel.table.horizontalHeaderItem(len(COLUMNS) - 1).text().splitlines()[0]
    assert last_header.split()[0] in svg  # "exact"
    last_cell = panel.table.item(panel.table.rowCount() - 1, len(COLUMNS) - 1).text()
    assert last_cell.split()[-1] in svg
    pdf = export.pdf_bytes(panel.figure_widget())
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000


# --------------------------------------------------------------------------- verdicts over the whole range


def _measured(qtbot, state, compute, **params):
    assert state.update(**params) is None
    state.flush()
    panel = show_panel(qtbot, ScorecardPanel(state, compute), None, settle=False)
    qtbot.waitUntil(lambda: panel.data is not None and not panel.is_stale() and not panel.data.pending,
                    timeout=TIMEOUT_MS)
    assert compute.wait_idle()
    return panel


def test_unique_cell_shows_the_closest_pair_of_the_whole_range(qtbot, state, compute):
    panel = _measured(qtbot, state, compute, seq_len=1_048_576, d_model=16)
    assert panel.cell_text("sinusoidal", "unique") == ("✓ 0 vs 615,746: 0.868× step: proved over pairs of "
                                                        "positions 0…1,048,575")
    # harmonic's closest pair lies far beyond any leading positions a budget allows
    assert panel.cell_text("harmonic", "unique").startswith("✗ 0 vs 1,018,630")
    # all-sine's distances depend on the position and no exact search of a million fits: no ✓, and the
    # cell says which positions it covers
    all_sine = panel.cell_text("all_sine", "unique")
    assert all_sine.startswith("– ") and "0…1,023" in all_sine and "not the whole of 0…1,048,575" in all_sine
    # binary repeats every 2^16 positions: proved by its witness
    assert panel.cell_text("binary", "unique") == "✗ repeats (PE(0) = PE(65,536))"


def test_every_header_and_tooltip_states_its_tolerance(qtbot, state, compute):
    from posenc_gui.model.analyses.scorecard import GROWTH_TOL, TK_TOL, UNIQUE_TOL
    from posenc_gui.views.scorecard import HEADERS

    tolerances = {"bounded_within": f"×{GROWTH_TOL:g}", "bounded_past": f"×{GROWTH_TOL:g}",
                  "unique": f"{UNIQUE_TOL:g} step", "deterministic": "same bits",
                  "generalizes": f"×{GROWTH_TOL:g}", "exact_tk": f"{TK_TOL:g}"}
    panel = _measured(qtbot, state, compute, d_model=32)
    for criterion, tolerance in tolerances.items():
        assert tolerance in HEADERS[criterion], criterion
        column = COLUMNS.index(criterion)
        header = panel.table.horizontalHeaderItem(column).text()
        assert tolerance in header
    row = next(r for r in range(panel.table.rowCount()) if panel.data.scores[r].scheme == "sinusoidal")
    assert f"{UNIQUE_TOL:g}" in panel.table.item(row, COLUMNS.index("unique")).toolTip()
    assert f"{TK_TOL:g}" in panel.table.item(row, COLUMNS.index("exact_tk")).toolTip()


def test_exact_tk_is_refused_at_odd_d_model(qtbot, state, compute):
    panel = _measured(qtbot, state, compute, seq_len=128, d_model=255)
    assert panel.cell_text("sinusoidal", "exact_tk").startswith("✗ 1 dim unpaired")
    assert panel.cell_text("sincos_pair", "exact_tk").startswith("✓")  # its extra sine has cos(pos) elsewhere


def test_a_new_measurement_stops_a_scan_in_steps(qtbot, state, compute):
    panel = _measured(qtbot, state, compute, seq_len=128, d_model=512)
    statuses = []
    real = panel.status_label.setText
    panel.status_label.setText = lambda text: (statuses.append(text), real(text))
    # 1,048,576 offsets × 512 frequencies: two scan steps (d_model 8192 takes sixteen, and 4× the CPU before the first)
    state.update(seq_len=1_048_576, d_model=1024)
    state.flush()
    qtbot.waitUntil(lambda: any(text.startswith(("Searching all of 0…1,048,575 for the closest pairs of",
                                                 "Checking every offset of")) for text in statuses),
                    timeout=TIMEOUT_MS)
    assert panel.data.pending  # the first step is shown …
    cell = panel.cell_text(panel.data.pending[0], "unique")
    assert cell.startswith("… ") and cell.endswith("% checked")
    state.update(seq_len=128, d_model=64)  # … and a new size replaces the rest of the scan
    state.flush()
    qtbot.waitUntil(lambda: not panel.is_stale() and not panel.data.pending, timeout=TIMEOUT_MS)
    assert compute.wait_idle()
    assert panel.data.params == EncodingParams(seq_len=128, d_model=64)
    assert panel.cell_text("sincos_pair", "unique").startswith("✗ 0 vs 44")
