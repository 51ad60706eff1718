"""Widget tests of the linear-relation dock: T_k as 2×2 rotations or a least-squares fit, its hover line, axes,
caption and exported table (the other analysis docks: test_analysis_views.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from posenc_gui.model import limits
from posenc_gui.model.panels.panel_data import VIEW_ELEMENTS
from posenc_gui.views.linear_relation import BLOCKS, MAX_LOG_LABELS, LinearRelationPanel, signed_log_scale
from posenc_gui.views.relative import RelativePanel
from posenc_gui.views.uniqueness import UniquenessPanel
from helpers_panels import change_params, show_panel


def show(panel, count):
    """Choose the "Show" entry of ``count`` dimensions of the matrix (BLOCKS: the blocks)."""
    panel.show_box.setCurrentIndex(panel.show_box.findData(count))


def test_linear_relation_sinusoidal_is_an_exact_rotation(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    rel = panel.data.relation
    assert rel.exact and rel.method == "rotation"
    assert rel.max_residual < 1e-9
    assert panel.stack.currentWidget() is panel.blocks_canvas and panel.shown.shape == (256, 2, 2)
    omega = 1.0  # first pair: ω_0 = base^0
    np.testing.assert_allclose(panel.shown[0], [[math.cos(omega), math.sin(omega)],
                                                [-math.sin(omega), math.cos(omega)]], rtol=1e-14)
    np.testing.assert_array_equal(panel.cos_curve.getOriginalDataset()[1], rel.blocks[:, 0, 0])
    show(panel, 16)
    assert panel.stack.currentWidget() is panel.canvas and panel.shown.shape == (16, 16)
    assert panel.shown[0, 0] == pytest.approx(math.cos(omega))
    assert panel.shown[0, 1] == pytest.approx(math.sin(omega))
    assert panel.shown[1, 0] == pytest.approx(-math.sin(omega))
    assert panel.shown[0, 2] == 0.0
    assert "Exact" in panel.summary_label.text()


def test_linear_relation_offset_and_show_controls(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    panel.set_k(5)
    assert compute.wait_idle()
    assert panel.data.relation.k == 5
    assert panel.shown[0, 0, 0] == pytest.approx(math.cos(5.0))  # the blocks
    show(panel, 1024)  # more than d_model: all of it
    assert panel.shown.shape == (state.params.d_model, state.params.d_model)
    panel.start_box.setValue(40)
    show(panel, 8)
    assert panel.window.tolist() == list(range(40, 48))
    np.testing.assert_array_equal(panel.shown, panel.data.relation.matrix(range(40, 48), range(40, 48)))
    with pytest.raises(ValueError, match="k"):
        panel.set_k(10**9)


def test_linear_relation_all_sine_has_large_residual(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme="all_sine", d_model=64)
    rel = panel.data.relation
    assert rel.method == "least-squares" and not rel.exact
    assert rel.max_residual > 0.1
    assert rel.fit.positions.size >= 2 * 64
    assert panel.stack.currentWidget() is panel.canvas  # no pairs: the matrix of the fit, not empty blocks
    assert "No (sin, cos) pair" in panel.message_label.text()


def _entry_in(text):
    return float(text.rsplit("T_k entry ", 1)[1])


def test_linear_relation_hover_reads_an_entry_of_the_shown_t_k(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    show(panel, 16)
    view_box = panel.matrix.view_box
    panel._hover_matrix(view_box.mapViewToScene(QPointF(1, 0)))  # column 1, row 0: sin(k·ω_0)
    text = panel.hover_line.text()
    assert text.startswith("row 0 (dimension of PE(p + k)), column 1 (dimension of PE(p)): T_k entry ")
    assert _entry_in(text) == pytest.approx(math.sin(1.0), abs=1e-14)
    assert len(text.rsplit(" ", 1)[1]) >= 14  # sin(1) is good to about 15 digits: they are shown
    panel.set_k(3)
    assert compute.wait_idle()
    assert _entry_in(panel.hover_line.text()) == pytest.approx(math.sin(3.0), abs=1e-13)  # the new T_k's
    panel._hover_matrix(view_box.mapViewToScene(QPointF(40, 0)))  # past the 16 dimensions shown: kept
    assert _entry_in(panel.hover_line.text()) == pytest.approx(math.sin(3.0), abs=1e-13)
    show(panel, 8)
    panel._hover_matrix(view_box.mapViewToScene(QPointF(4, 2)))
    assert panel.hover_line.text().startswith("row 2 (dimension of PE(p + k)), column 4")
    assert panel.hover_line.text().endswith("T_k entry 0")  # another pair's block: exactly 0
    show(panel, 1024)
    assert panel.hover_line.text().startswith("row 2")  # still inside the larger window
    show(panel, BLOCKS)  # blocks: the line describes pairs now
    assert panel.hover_line.text().startswith("Hover over")
    box = panel.blocks_plot.getViewBox()
    panel._hover_blocks(box.mapViewToScene(QPointF(1.2, 0.5)))
    text = panel.hover_line.text()
    assert text.startswith("pair 1: channels 2 (sin) and 3 (cos); angle k·ω = ")
    omega = 10000.0 ** (-2 / 512)
    cosine = float(text.split("cos(k·ω) = ")[1].split(",")[0])
    assert cosine == pytest.approx(math.cos(3 * omega), abs=1e-13)


def test_linear_relation_all_sine_shows_the_minimum_norm_fit(state, compute, qtbot):
    # lstsq without a cut-off drew entries near ±10¹²: rounding noise in directions the data do not fix.
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme="all_sine", d_model=64)
    fit = panel.data.relation.fit
    assert np.abs(panel.shown).max() < 1e3
    caption = panel.figure_caption()
    assert "not unique" in caption and "minimum-norm" in caption and "× the largest dropped" in caption
    assert f"fitted on {fit.positions.size:,} positions between the integers" in caption
    assert np.all(fit.positions != np.round(fit.positions))  # never on the integers the residual is measured on


def test_linear_relation_all_sine_colours_its_entries_decade_by_decade(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme="all_sine", d_model=64)
    # the fit lstsq gives without a cut-off: large cancelling entries beside small ones
    from dataclasses import replace

    from posenc_gui.model import encode

    positions = np.arange(128.0)
    noisy, *_ = np.linalg.lstsq(encode("all_sine", positions, 64), encode("all_sine", positions + 1, 64), rcond=None)
    relation = panel.data.relation
    panel.data = replace(panel.data, relation=replace(relation, fit=replace(relation.fit, coefficients=noisy.T)))
    show(panel, 8)
    show(panel, 16)
    shown, colours = panel.shown, panel.matrix.image.image
    top = panel.matrix.colorbar.levels()[1]
    assert np.abs(shown).max() > 1e6  # the huge cancelling entries of a least-squares fit
    # Entries near 1 (the fit's diagonal) get visible colours beside entries of 10⁷,
    # not white (a linear scale, even clipped at the 99th percentile, gave them < 1e-6 of it).
    moderate = (np.abs(shown) > 0.1) & (np.abs(shown) < 10)
    assert moderate.any() and np.all(np.abs(colours[moderate]) > 0.1 * top)
    assert np.abs(colours).max() > 0.8 * top
    np.testing.assert_array_equal(np.sign(colours), np.sign(shown))
    by_size = np.argsort(np.abs(shown), axis=None)
    assert np.all(np.diff(np.abs(colours).ravel()[by_size]) >= 0)  # a larger entry never looks smaller
    assert "log" in panel.matrix.colorbar.getAxis("left").labelText
    labels = [text for level in panel.matrix.colorbar.axis._tickLevels for _, text in level]
    assert {"0", "1", "−1"} <= set(labels)
    change_params(state, compute, scheme="sinusoidal")  # exact: entries in −1…1, linear colours again
    show(panel, 16)
    np.testing.assert_array_equal(panel.matrix.image.image, panel.shown)
    linear = [text for level in panel.matrix.colorbar.axis._tickLevels for _, text in level if text]
    assert linear and all(-1.5 <= float(text) <= 1.5 for text in linear)  # the log scale's ticks are gone
    assert "log" not in panel.matrix.colorbar.getAxis("left").labelText


def test_signed_log_scale_ticks_sit_where_their_values_are_coloured():
    values = np.array([[0.0, 0.02, -0.5, 1.0], [-1.0, 1000.0, -1e6, 3e7]])
    display, limit, ticks = signed_log_scale(values)
    assert display[0, 0] == 0.0
    assert np.abs(display).max() <= limit
    at = {text: position for level in ticks for position, text in level if text}
    assert at["0"] == 0.0
    assert at["1000"] == pytest.approx(display[1, 1]) and at["−10⁶"] == pytest.approx(display[1, 2])
    assert "1" not in at  # a decade just above the lower quartile (0.1): its label would hide the 0's
    assert len(at) <= 2 * MAX_LOG_LABELS + 1
    assert signed_log_scale(np.array([[0.5, -1.0], [2.0, 0.0]])) is None  # one decade: linear colours do


def test_linear_relation_fit_of_a_short_sequence_stays_inside_it(state, compute, qtbot):
    # 2·d positions went past seq_len (0…63 for 16 positions): the fit now takes positions between the
    # integers of 0…N−1, and the residual is measured on the integers.
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme="all_sine", seq_len=16, d_model=32)
    fit = panel.data.relation.fit
    assert fit.positions.size == 2 * 32 + 8 and 0 < fit.positions.min() and fit.positions.max() < 15
    assert panel.data.positions.tolist() == list(range(16))


@pytest.mark.parametrize("scheme", ["sinusoidal", "all_sine"])
def test_linear_relation_at_every_d_model(scheme, state, compute, qtbot):
    # d_model 4097…8192 was refused ("T_k is a dense d × d matrix"), and a least-squares fit past 512.
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme=scheme, d_model=8192, seq_len=limits.MAX_SEQ_LEN)
    rel = panel.data.relation
    assert panel.data.params.d_model == 8192 and rel.d_model == 8192
    assert panel.data.positions.size * 8192 <= VIEW_ELEMENTS + 8192 and panel.data.positions[-1] == 1_048_575
    if scheme == "sinusoidal":
        assert rel.exact and rel.pairs == 4096 and rel.within_rounding
        assert panel.shown.shape == (4096, 2, 2)
    else:
        assert rel.fit.dims.size == 8192 and rel.fit.width < 8192
        assert "columns nearest in frequency" in panel.figure_caption()
    show(panel, 16)
    assert panel.shown.shape == (16, 16)
    change_params(state, compute, d_model=2, seq_len=2)
    assert panel.shown.shape == (2, 2)


def test_linear_relation_exact_rotation_at_a_million_positions_and_d2(state, compute, qtbot):
    # The residual's position budget (elements / d) allowed all 1,048,576 positions at d = 2,
    # past what the sampler accepts: the dock showed "pixels must be in 1…1000000".
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, seq_len=limits.MAX_SEQ_LEN, d_model=2)
    assert panel.data.params == state.params
    assert panel.data.relation.exact and panel.data.relation.max_residual < 1e-6
    assert panel.data.positions[-1] <= limits.MAX_SEQ_LEN - 1
    assert "pixels" not in panel.message_label.text()


def _tick_values(axis):
    levels = axis._tickLevels
    return None if levels is None else [value for value, _ in levels[0]]


def test_small_matrices_and_short_axes_get_integer_ticks(state, compute, qtbot):
    # A 2 × 2 T_k was labelled −0.4, −0.2, 0, 0.2, … and rows −0.5, 0, 0.5: dimensions are integers.
    linear = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, scheme="sincos_pair", seq_len=2, d_model=2)
    assert _tick_values(linear.blocks_plot.getAxis("bottom")) == [0.0]  # one pair
    show(linear, 16)
    for name in ("bottom", "left"):
        assert _tick_values(linear.matrix.plot.getAxis(name)) == [0.0, 1.0]
    unique = show_panel(qtbot, UniquenessPanel(state, compute))
    assert _tick_values(unique.nearest_plot.getAxis("bottom")) == [0.0, 1.0]
    # the closest-pair circles at (0, 1) and (1, 0) are not cut in half by the plot's edges
    (x_low, x_high), (y_low, y_high) = unique.nearest_plot.viewRange()
    assert x_low < -0.03 and x_high > 1.03 and y_low < -0.1 and y_high > 1.1
    relative = show_panel(qtbot, RelativePanel(state, compute))
    assert _tick_values(relative.spread_plot.getAxis("bottom")) == [0.0, 1.0]
    change_params(state, compute, scheme="sinusoidal", seq_len=128, d_model=512)  # long axes: the axis chooses
    ticks = _tick_values(linear.matrix.plot.getAxis("bottom"))  # 16 dims: integers, at most 12 labels
    assert ticks[0] == 0 and ticks[-1] >= 14 and len(ticks) <= 12 and all(t.is_integer() for t in ticks)
    assert _tick_values(unique.nearest_plot.getAxis("bottom")) is None


def test_linear_relation_halves_layout_explains_where_the_rotations_are(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    assert "Halves" not in panel.message_label.text()
    change_params(state, compute, layout="halves")
    assert panel.data.relation.exact
    text = panel.message_label.text()
    assert not panel.message_label.isHidden() and "Halves layout" in text and "256" in text


@pytest.mark.parametrize("d_model", [3, 1023, 8191])
def test_linear_relation_odd_d_is_exact_on_the_paired_dimensions_only(d_model, state, compute, qtbot):
    # d = 1023 was refused; the unpaired last sine has no exact T_k, and the panel and caption say so.
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, d_model=d_model)
    rel = panel.data.relation
    assert not rel.exact and rel.pairs == d_model // 2 and rel.fit.dims.tolist() == [d_model - 1]
    words = (f"Exact on the {d_model - 1:,} paired dimensions; the unpaired sine (dimension {d_model - 1:,}) "
             "has no exact T_k")
    assert words in panel.summary_label.text() and words in panel.figure_caption()
    assert "within float64 rounding" in panel.figure_caption()  # the rotations still hold
    change_params(state, compute, d_model=d_model + 1)
    assert panel.data.relation.exact


def test_linear_relation_figure_carries_its_verdict_and_residual(state, compute, qtbot):
    # The summary above the plot is not part of an exported figure: the caption under it says
    # whether T_k is exact, over which positions, and how far off.
    # "Residual ≈ 1e-15" was the relative residual; the caption names max and relative, and where.
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    rel = panel.data.relation
    assert panel.figure_caption() == (
        f"Exact (k = 1): 256 2×2 rotations by k·ω_i, one per (sin, cos) pair. Residual |PE(p+k) − T_k·PE(p)| "
        f"over the 128 integer positions 0…127: max {rel.max_residual:.3g} (at p = {rel.worst_position:,.0f}, "
        f"dimension {rel.worst_dimension}), within float64 rounding (bound {rel.rounding_bound:.2g} at these "
        f"positions); relative ‖·‖/‖PE(p+k)‖ {rel.relative_residual:.3g}.")
    change_params(state, compute, scheme="all_sine", d_model=64)
    rel = panel.data.relation
    caption = panel.figure_caption()
    assert caption.startswith("No exact T_k (k = 1): no dimension has a (sin, cos) partner of its frequency. "
                              "Residual |PE(p+k) − T_k·PE(p)| over the 128 integer positions 0…127: ")
    assert f"max {rel.max_residual:.3g}" in caption and f"relative ‖·‖/‖PE(p+k)‖ {rel.relative_residual:.3g}" in caption


def test_linear_relation_exports_blocks_not_a_dense_matrix(state, compute, qtbot):
    panel = show_panel(qtbot, LinearRelationPanel(state, compute))
    change_params(state, compute, d_model=8192, layout="halves")
    exported = panel.export_data()
    table = next(iter(exported["arrays"].values()))  # the array .npy and .csv hold
    rel = panel.data.relation
    assert table.shape == (4096, 9) and exported["meta"]["columns"][:3] == ["pair", "sin_channel", "cos_channel"]
    np.testing.assert_array_equal(table[:, 1:3], np.column_stack([np.arange(4096), np.arange(4096) + 4096]))
    np.testing.assert_array_equal(table[:, 5:].reshape(-1, 2, 2), exported["arrays"]["blocks"])
    assert exported["arrays"]["blocks"].shape == (4096, 2, 2)
    assert all(array.size < 8192 * 8192 // 64 for array in exported["arrays"].values())
    change_params(state, compute, d_model=7, layout="interleaved")  # the unpaired sine's row is exported too
    exported = panel.export_data()
    assert exported["arrays"]["fit_dims"].tolist() == [6] and exported["arrays"]["fit_coefficients"].shape == (1, 7)
    change_params(state, compute, scheme="all_sine", d_model=1024)  # rows over their own columns: (row, column, value)
    exported = panel.export_data()
    entries = next(iter(exported["arrays"].values()))
    rel = panel.data.relation
    assert exported["meta"]["columns"] == ["row", "column", "value"]
    dense = rel.matrix(range(1024), range(1024))
    np.testing.assert_array_equal(dense[entries[:, 0].astype(int), entries[:, 1].astype(int)], entries[:, 2])
    assert np.count_nonzero(dense) <= entries.shape[0]
