"""A/B comparison: B − A of shown matrices (model), A beside B in every panel, sessions and exports carrying both."""

import json

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams
from posenc_gui.model.analyses.compare import ShownMatrix, matrix_difference
from posenc_gui.session import SESSION_FORMAT, SessionError, read_session
from posenc_gui.views.compare import ComparedPanel, PinnedState, plot_items
from posenc_gui.views.registry import panel_classes
from waiting import TIMEOUT_MS

PAPER = EncodingParams()  # the 2017 paper's setup: sinusoidal, base 10,000, pairs interleaved


# ---------------------------------------------------------------------- model
def test_the_difference_is_taken_on_the_rows_and_columns_both_matrices_show():
    # A shows rows 0, 1 and columns 0, 2; B rows 1, 2 and columns 0, 2, 4: common row 1, columns 0 and 2.
    a = ShownMatrix(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0, 1]), np.array([0, 2]), "position", "dimension")
    b = ShownMatrix(np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]), np.array([1, 2]), np.array([0, 2, 4]),
                    "position", "dimension")
    difference = matrix_difference(a, b)
    np.testing.assert_array_equal(difference.rows, [1])
    np.testing.assert_array_equal(difference.columns, [0, 2])
    # B's row 1 is (10, 20) at columns 0, 2; A's row 1 is (3, 4): 10 − 3 = 7, 20 − 4 = 16.
    np.testing.assert_array_equal(difference.values, [[7.0, 16.0]])
    assert difference.max_abs == 16.0 and difference.at == (1, 2)
    assert difference.rms == pytest.approx(np.sqrt((49 + 256) / 2), rel=1e-15)
    assert difference.levels == (-16.0, 16.0)
    assert difference.regular and difference.a_shape == (2, 2) and difference.b_shape == (2, 3)
    assert "1 × 2 cells both show" in difference.describe() and "(1, 2)" in difference.describe()


def test_masked_cells_are_left_out_of_the_difference_and_its_numbers():
    inf = -np.inf
    a = ShownMatrix(np.array([[0.0, inf], [1.0, 2.0]]), np.arange(2), np.arange(2), "query", "key")
    b = ShownMatrix(np.array([[0.5, inf], [1.0, -3.0]]), np.arange(2), np.arange(2), "query", "key")
    difference = matrix_difference(a, b)
    assert np.isnan(difference.values[0, 1])  # masked in both: no number, not 0 or NaN arithmetic
    # finite differences 0.5, 0, −5: the largest |·| is 5 at (1, 1), RMS sqrt(25.25 / 3)
    assert difference.max_abs == 5.0 and difference.at == (1, 1)
    assert difference.rms == pytest.approx(np.sqrt(25.25 / 3), rel=1e-15)


def test_irregular_common_indices_and_bad_matrices_are_reported():
    a = ShownMatrix(np.zeros((4, 1)), np.array([0, 2, 4, 6]), np.array([0]), "position", "dimension")
    b = ShownMatrix(np.ones((4, 1)), np.array([0, 3, 4, 6]), np.array([0]), "position", "dimension")
    difference = matrix_difference(a, b)
    np.testing.assert_array_equal(difference.rows, [0, 4, 6])
    assert not difference.regular
    with pytest.raises(ValueError, match="no position in common"):
        matrix_difference(a, b._replace(rows=np.array([1, 3, 5, 7])))
    with pytest.raises(ValueError, match="A: a matrix of 4 rows × 1 columns"):
        matrix_difference(a._replace(values=np.zeros((3, 1))), b)
    with pytest.raises(ValueError, match="must increase"):
        matrix_difference(a._replace(rows=np.array([0, 4, 2, 6])), b)


# ------------------------------------------------------------------- window
def compared(window, panel_id: str) -> ComparedPanel:
    """The panel's comparison, shown and with both sides up to date."""
    window.raise_panel(panel_id)
    panel = window.panels[panel_id]
    assert isinstance(window.docks[panel_id].widget(), ComparedPanel)
    return panel.comparison


def settled(qtbot, comparison: ComparedPanel) -> ComparedPanel:
    qtbot.waitUntil(comparison.shows_current_data, timeout=TIMEOUT_MS)
    return comparison


def test_a_teacher_pins_the_paper_and_sees_halves_beside_it_and_their_difference(make_window, qtbot):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.comparison.set_mode("difference")
    assert window.state.update(layout="halves") is None
    comparison = settled(qtbot, compared(window, "heatmap"))
    assert comparison.a.state.params == PAPER
    assert comparison.b.state.params.options["layout"] == "halves"
    assert "A (pinned)" in comparison.strips["A"].full_text and "interleaved" in comparison.strips["A"].full_text
    assert "halves" in comparison.strips["B"].full_text
    qtbot.waitUntil(lambda: comparison.difference_view.difference is not None, timeout=TIMEOUT_MS)
    difference = comparison.difference_view.difference
    # B − A at the cells drawn equals the two encodings' difference there, computed here independently
    halves = PAPER.replaced(layout="halves").encode()
    expected = halves[np.ix_(difference.rows, difference.columns)] - PAPER.encode()[np.ix_(difference.rows,
                                                                                          difference.columns)]
    np.testing.assert_allclose(difference.values, expected, rtol=0, atol=1e-12)
    assert difference.max_abs > 1.0  # halves moves sin and cos to other columns: a large change
    levels = comparison.difference_view.matrix.colorbar.levels()
    assert levels[0] == -levels[1]  # centred at 0
    # the similarity of the two is the same (a permutation of dimensions keeps every dot product)
    similarity = settled(qtbot, compared(window, "similarity"))
    qtbot.waitUntil(lambda: similarity.difference_view.difference is not None
                    and similarity.difference_view.difference.rows.size > 0, timeout=TIMEOUT_MS)
    assert similarity.difference_view.difference.max_abs < 1e-9 * np.abs(similarity.b.matrix_data.matrix).max()


def test_every_comparable_panel_shows_a_beside_b_and_stops_when_asked(make_window, qtbot):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.state.update(d_model=256)
    for cls in panel_classes():
        window.raise_panel(cls.panel_id)
        dock_widget = window.docks[cls.panel_id].widget()
        panel = window.panels[cls.panel_id]
        if cls.comparable:
            assert isinstance(dock_widget, ComparedPanel) and dock_widget.b is panel, cls.panel_id
            assert dock_widget.a.state.params.d_model == 512 and type(dock_widget.a) is cls
            assert "A/B" in window.docks[cls.panel_id].windowTitle()
        else:
            assert dock_widget is panel
    window.comparison.clear()
    for panel_id, panel in window.panels.built().items():
        assert window.docks[panel_id].widget() is panel and panel.comparison is None
        assert window.docks[panel_id].windowTitle() == panel.title


def test_a_follows_b_s_panel_options_and_zoom_but_not_its_parameters(make_window, qtbot):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    comparison = compared(window, "similarity")
    window.panels["similarity"].apply_options(metric="cosine")
    qtbot.waitUntil(lambda: comparison.a.current_options().get("metric") == "cosine", timeout=TIMEOUT_MS)
    assert isinstance(comparison.a.state, PinnedState)
    assert comparison.a.state.update(d_model=64) is not None and comparison.a.state.params == PAPER
    heatmap = settled(qtbot, compared(window, "heatmap"))
    b_box, a_box = heatmap.b.matrix.view_box, heatmap.a.matrix.view_box
    b_box.setRange(xRange=(10, 40), yRange=(5, 25), padding=0)
    b_box.sigRangeChangedManually.emit(b_box.state["mouseEnabled"])
    (x0, x1), (y0, y1) = a_box.viewRange()
    assert (x0, x1) == pytest.approx((10, 40)) and (y0, y1) == pytest.approx((5, 25))
    settled(qtbot, heatmap)
    assert heatmap.a.data.dims.start >= 9 and heatmap.a.data.positions.start >= 4  # A re-sampled its zoom


def test_a_zoom_in_b_after_a_s_plots_are_gone_follows_only_what_is_left(make_window, qtbot):
    # the monkey (seed 1, 2,000 actions): a pan in B after A's copy had been rebuilt raised
    # "Signal source has been deleted" from the linked zoom
    import shiboken6

    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    heatmap = settled(qtbot, compared(window, "heatmap"))
    b_box = heatmap.b.matrix.view_box
    shiboken6.delete(heatmap.a.matrix.view_box)
    b_box.setRange(xRange=(10, 40), yRange=(5, 25), padding=0)
    b_box.sigRangeChangedManually.emit(b_box.state["mouseEnabled"])  # raised in the slot before the fix
    assert b_box.viewRange()[0] == pytest.approx([10, 40])


def test_swapping_a_and_b_exchanges_them(make_window, qtbot):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.state.update(base=500.0)
    window.state.flush()
    assert window.comparison.swap() is None
    window.state.flush()
    assert window.state.params == PAPER and window.comparison.pinned.params.options["base"] == 500.0


def test_a_session_keeps_a_b_and_the_mode_and_opens_them_again(make_window, qtbot, tmp_path):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.comparison.set_mode("difference")
    window.state.update(layout="halves")
    path = tmp_path / "lesson.json"
    assert window.save_session(str(path)) is None
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["version"] == 2 and saved["compare"] == {"a": PAPER.as_dict(), "mode": "difference"}
    other = make_window(size=(1500, 950), restore=False)
    assert other.open_session(str(path)) is None
    assert other.comparison.pinned.params == PAPER and other.comparison.mode == "difference"
    assert other.state.params.options["layout"] == "halves"
    assert isinstance(compared(other, "heatmap"), ComparedPanel)


GOOD = {"format": SESSION_FORMAT, "version": 2, "params": PAPER.as_dict()}


@pytest.mark.parametrize("compare, version, reason", [
    ({"a": PAPER.as_dict()}, 1, "compare is a field of version 2"),
    ([1, 2], 2, "compare must be an object, got an array"),
    ({"mode": "difference"}, 2, "compare.a (the pinned setup's parameters) is missing"),
    ({"a": "sinusoidal"}, 2, "compare.a must be an object, got text"),
    ({"a": {**PAPER.as_dict(), "d_model": 10 ** 9}}, 2, "compare.a.d_model"),
    ({"a": {**PAPER.as_dict(), "scheme": "nonsense"}}, 2, "compare.a:"),
    ({"a": PAPER.as_dict(), "mode": "overlay!"}, 2, "compare.mode must be one of side_by_side, difference"),
    ({"a": PAPER.as_dict(), "b": {}}, 2, "compare: unknown field 'b'"),
])
def test_a_hostile_compare_field_is_refused_in_one_line(tmp_path, compare, version, reason):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**GOOD, "version": version, "compare": compare}), encoding="utf-8")
    with pytest.raises(SessionError) as caught:
        read_session(path)
    assert reason in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_compare_field_changes_nothing_in_the_window(make_window, tmp_path):
    window = make_window(size=(1200, 800), params=PAPER, restore=False)
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**GOOD, "params": {**PAPER.as_dict(), "d_model": 64},
                                "compare": {"a": PAPER.as_dict(), "mode": 3}}), encoding="utf-8")
    problem = window.open_session(str(path))
    assert problem is not None and "compare.mode" in problem
    assert window.state.params == PAPER and not window.comparison.active


def test_an_export_of_a_session_with_a_writes_a_b_and_b_minus_a(tmp_path, qapp, capsys):
    session = tmp_path / "s.json"
    session.write_text(json.dumps({**GOOD, "params": {**PAPER.as_dict(), "d_model": 64, "layout": "halves"},
                                   "compare": {"a": {**PAPER.as_dict(), "d_model": 64}, "mode": "difference"}}),
                       encoding="utf-8")
    out = tmp_path / "heatmap.json"
    assert export_cli.main(["heatmap", "-o", str(out), "--session", str(session)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    arrays = document["arrays"]
    a = np.array(arrays["A encoding"]["data"]).reshape(arrays["A encoding"]["shape"])
    b = np.array(arrays["B encoding"]["data"]).reshape(arrays["B encoding"]["shape"])
    np.testing.assert_allclose(a, PAPER.replaced(d_model=64).encode(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(b, PAPER.replaced(d_model=64, layout="halves").encode(), rtol=0, atol=1e-15)
    assert "B − A" in arrays and document["meta"]["difference"]["max_abs"] > 1.0
    png = tmp_path / "heatmap.png"
    assert export_cli.main(["heatmap", "-o", str(png), "--session", str(session)]) == 0
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert not image.isNull() and image.width() > 2 * image.height()  # three matrices side by side


def test_the_scorecard_and_the_positional_logits_compare_a_and_b_in_one_table_and_plot(make_window, qtbot):
    from posenc_gui.model.attention.logit_properties import decay_profile, logit_properties

    window = make_window(size=(1500, 950), params=PAPER.replaced(d_model=64), restore=False)
    window.pin_a()
    window.state.update(scheme="alibi")
    window.raise_panel("scorecard")
    scorecard = window.panels["scorecard"]
    assert window.docks["scorecard"].widget() is scorecard  # one table, not two
    qtbot.waitUntil(lambda: scorecard.pinned_row is not None and scorecard.data is not None
                    and not scorecard.is_stale(), timeout=TIMEOUT_MS)
    assert scorecard.table.item(0, 0).text() == "A: " + PAPER.info.label
    b_row = 1 + scorecard.data.rows.index("alibi")
    assert scorecard.table.item(b_row, 0).text().startswith("▶ B: ")
    expected = logit_properties(PAPER.replaced(d_model=64)).short_cells()
    shown = [scorecard.table.item(0, column).text() for column in range(scorecard.table.columnCount())]
    assert any(expected["offset only"] in text for text in shown)
    logits = compared(window, "logits").b
    qtbot.waitUntil(lambda: logits.pinned_result is not None and logits.data is not None, timeout=TIMEOUT_MS)
    distances, profile = decay_profile(PAPER.replaced(d_model=64))
    x, y = logits.pinned_curve.getData()
    # A on B's axis: B is ALiBi, whose linear bias is drawn against a linear distance axis
    np.testing.assert_allclose(x, distances[1:].astype(np.float64), rtol=1e-15)
    np.testing.assert_array_equal(y, profile[1:])
    header = logits.properties.verticalHeaderItem  # measured a moment after the last change
    qtbot.waitUntil(lambda: header(0) is not None and header(0).text().startswith("A: "), timeout=TIMEOUT_MS)
    assert header(1).text().startswith("B: ")
    window.comparison.clear()
    qtbot.waitUntil(lambda: not logits.pinned_curve.isVisible(), timeout=TIMEOUT_MS)
    assert scorecard.table.item(0, 0).text() != "A: " + PAPER.info.label


def test_the_overlay_draws_a_s_curves_dashed_in_b_s_line_plots(make_window, qtbot):
    from PySide6.QtCore import Qt

    from posenc_gui.views.compare import plot_items

    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.comparison.set_mode("overlay")
    window.state.update(base=500.0)
    comparison = settled(qtbot, compared(window, "waveforms"))
    assert comparison.overlays
    a_plot, b_plot = plot_items(comparison.a)[0], plot_items(comparison.b)[0]
    a_curves = [item for item in a_plot.listDataItems() if item not in comparison.overlays.values()
                and getattr(item, "xData", None) is not None and item.opts.get("pen") is not None]
    mirrors = [mirror for (plot, _), mirror in sorted(comparison.overlays.items()) if plot == 0 and mirror.isVisible()]
    assert len(mirrors) == len([c for c in a_curves if c.isVisible()]) > 0
    for curve, mirror in zip([c for c in a_curves if c.isVisible()], mirrors):
        assert mirror.getViewBox() is b_plot.getViewBox()
        np.testing.assert_array_equal(mirror.yData, curve.yData)  # A's values (base 10,000), not B's
        assert mirror.opts["pen"].style() == Qt.PenStyle.DashLine
    assert not np.array_equal(mirrors[2].yData, [c for c in b_plot.listDataItems()
                                                 if c not in comparison.overlays.values()][2].yData)
    low, high = b_plot.getViewBox().viewRange()[1]  # A's curves are inside B's plot, not cut off
    assert all(low <= float(np.nanmin(m.yData)) and float(np.nanmax(m.yData)) <= high for m in mirrors)
    # the spectrum's phase plot (log y): A's ω at base 10,000 falls to 1e-4, far below B's at base 500
    spectrum = settled(qtbot, compared(window, "spectrum"))
    shown = [mirror for mirror in spectrum.overlays.values() if mirror.isVisible()]
    assert shown
    for mirror in shown:
        (low, high), (first, last) = mirror.getViewBox().viewRange()[1], mirror.dataBounds(1)
        assert low <= first and last <= high  # widened to A's dashed curves (in the axis's log units)
    window.comparison.clear()
    assert all(mirror.getViewBox() is None for mirror in mirrors)  # B's plot is its own again


def test_the_linked_cursor_is_one_for_a_and_b(make_window, qtbot):
    window = make_window(size=(1500, 950), params=PAPER, restore=False)
    window.pin_a()
    window.state.update(base=500.0)
    comparison = settled(qtbot, compared(window, "heatmap"))
    assert comparison.a.state.cursor is window.state.cursor
    window.state.cursor.pin(40, 7)
    window.state.cursor.flush()
    for panel in (comparison.a, comparison.b):
        marks = {mark.target.coordinate: mark.value for mark in panel.cursor_link.marks}
        assert marks == {"position": 40, "dimension": 7}, panel.objectName()


def test_the_comparison_comes_back_at_the_next_launch_and_a_bad_saved_one_is_named(make_window, settings_path):
    window = make_window(size=(1200, 800), params=PAPER, restore=False)
    window.pin_a()
    window.comparison.set_mode("overlay")
    window.state.update(base=500.0)
    assert window.save_settings() is None
    again = make_window(size=(1200, 800))
    assert again.comparison.pinned.params == PAPER and again.comparison.mode == "overlay"
    assert again.state.params.options["base"] == 500.0
    again.comparison.clear()
    assert again.save_settings() is None
    assert not make_window(size=(1200, 800)).comparison.active
    text = settings_path.read_text(encoding="utf-8")
    settings_path.write_text(text.replace("compare=null", 'compare="{\\"a\\": {\\"scheme\\": 3}}"'),
                             encoding="utf-8")
    bad = make_window(size=(1200, 800))
    assert not bad.comparison.active
    assert "A/B comparison ignored (compare.a.scheme must be text" in bad.statusBar().currentMessage()


@pytest.mark.parametrize("panel_id, params, change", [
    ("precision", EncodingParams(scheme="rope", seq_len=256, d_model=64), {"rope_theta": 500.0}),
    ("bias", EncodingParams(scheme="t5", seq_len=128, d_model=64), {"num_buckets": 16}),
])
def test_the_overlay_draws_a_s_step_curves_as_steps(make_window, qtbot, panel_id, params, change):
    # The RoPE precision curve and the T5 buckets are step curves (stepMode "center": one more x than y);
    # their copy in B's plot was set without the step mode, which pyqtgraph refuses.
    window = make_window(size=(1500, 950), params=params, restore=False)
    window.pin_a()
    window.comparison.set_mode("overlay")
    assert window.state.update(**change) is None
    comparison = settled(qtbot, compared(window, panel_id))
    steps = [(key, item) for key, item in comparison.overlays.items()
             if item.isVisible() and item.opts.get("stepMode") == "center"]
    assert steps, "A's step curve has no copy in B's plot"
    a_curves = {(plot_index, item_index): item
                for plot_index, plot in enumerate(plot_items(comparison.a))
                for item_index, item in enumerate(item for item in plot.listDataItems()
                                                  if isinstance(item, (pg.PlotDataItem, pg.PlotCurveItem)))}
    for key, mirror in steps:
        curve = a_curves[key]
        assert curve.opts.get("stepMode") == "center"
        assert len(mirror.xData) == len(mirror.yData) + 1  # the edges of the steps, as A's curve has them
        np.testing.assert_array_equal(mirror.xData, curve.xData)
        np.testing.assert_array_equal(mirror.yData, curve.yData)  # A's values, not B's
        assert mirror.opts["pen"].style() == Qt.PenStyle.DashLine
    b_steps = [item for item in plot_items(comparison.b)[steps[0][0][0]].listDataItems()
               if item not in comparison.overlays.values() and item.opts.get("stepMode") == "center"]
    assert b_steps and not np.array_equal(b_steps[0].yData, steps[0][1].yData)  # B's own curve differs from A's
