"""Parameters, heatmap, waveforms and similarity panels: change the state, check the views."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QComboBox

from posenc_gui.model import encode, pairwise
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.parameters import ParametersPanel
from posenc_gui.views.similarity import SimilarityPanel
from posenc_gui.model.panels.table_data import default_dims, parse_dims
from posenc_gui.views.waveforms import WaveformsPanel
from tolerances import assert_close, cosine_atol
from helpers_panels import settle_panel, show_panel
from waiting import TIMEOUT_MS, TIMEOUT_S, finish_pending


def settle(qtbot, panel, compute):
    """``panel`` on screen, showing its parameters and what its resize asked for."""
    show_panel(qtbot, panel, (900, 650), settle=False)
    settle_panel(qtbot, panel)


def test_heatmap_shows_the_new_parameters(qtbot, state, compute):
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    state.update(scheme="harmonic", seq_len=40, d_model=12)
    state.flush()
    assert compute.wait_idle()
    np.testing.assert_array_equal(panel.data.values, encode("harmonic", np.arange(40.0), 12))
    np.testing.assert_array_equal(panel.matrix.image.image, panel.data.values)


def test_heatmap_puts_position_zero_at_the_top(qtbot, state, compute):
    # naive: value = position, so the top of the image must be the low (blue) end of the scale
    state.update(scheme="naive", seq_len=50, d_model=8)
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    image = panel.canvas.grab().toImage()
    vb = panel.matrix.view_box

    def colour_at(pos, dim):
        scene = vb.mapViewToScene(QPointF(dim, pos))
        point = panel.canvas.mapFromScene(scene)
        return QColor(image.pixel(point.x(), point.y()))

    top, bottom = colour_at(1, 4), colour_at(48, 4)
    assert bottom.red() > 2 * bottom.blue() and bottom.red() > bottom.green() + 60, bottom.name()
    assert abs(top.red() - top.blue()) < 60 or top.blue() > top.red(), top.name()
    assert panel.matrix.plot.getViewBox().yInverted()


def test_heatmap_image_shows_rows_down_and_the_colour_scales_colours(qtbot, state, compute):
    state.update(scheme="naive", seq_len=50, d_model=8)
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    item = panel.matrix.image
    item.render()
    image = item.qimage
    assert (image.width(), image.height()) == (8, 50)  # columns × rows, not transposed
    low, high = panel.matrix.colorbar.levels()
    colormap = panel.matrix.colorbar.colorMap()
    for row, col in ((0, 0), (30, 5), (49, 7)):
        expected = colormap.mapToQColor((panel.data.values[row, col] - low) / (high - low))
        got = QColor(image.pixel(col, row))
        assert max(abs(got.red() - expected.red()), abs(got.green() - expected.green()),
                   abs(got.blue() - expected.blue())) <= 8, (row, col, got.name(), expected.name())


def test_heatmap_hover_describes_value_and_formula(qtbot, state, compute):
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    text = panel.describe_cell(12, 7)
    assert "pos 12, dim 7" in text and "cos(pos / 10000^(2·3/512))" in text
    value = float(text.split(": ")[1].split(" =")[0])
    assert value == pytest.approx(np.cos(12 / 10000 ** (6 / 512)), abs=1e-9)


def test_heatmap_hover_line_follows_a_parameter_change(qtbot, state, compute):
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    panel._hover(panel.matrix.view_box.mapViewToScene(QPointF(7, 12)))
    assert panel.hover_label.text().startswith("pos 12, dim 7:") and "/512))" in panel.hover_label.text()
    state.update(d_model=64)
    state.flush()
    assert compute.wait_idle()
    # the same cell of the new matrix, not the value of d_model 512 left on screen
    assert panel.hover_label.text() == panel.describe_cell(12, 7) and "/64))" in panel.hover_label.text()
    state.update(seq_len=10)  # the cell is gone
    state.flush()
    assert compute.wait_idle()
    assert panel.hover_label.text().startswith("Hover over the heatmap")


def test_similarity_hover_gives_the_pair_its_offset_and_exact_value(qtbot, state, compute):
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.hover_line.text().startswith("Hover over the matrix")

    def value_in(text):
        return float(text.rsplit("= ", 1)[1])

    def exact(p, q, d_model, metric="dot"):
        pe = encode("sinusoidal", np.array([p, q], dtype=np.float64), d_model)
        return pairwise(pe[:1], pe[1:], metric)[0, 0]

    panel._hover(panel.matrix.view_box.mapViewToScene(QPointF(40, 12)))  # column q = 40, row p = 12
    text = panel.hover_line.text()
    assert text.startswith("p 12, q 40 (offset k = 28): dot product = ")
    assert value_in(text) == pytest.approx(exact(12, 40, 512), rel=1e-9)
    assert value_in(text) == pytest.approx(panel.matrix_data.matrix[12, 40], rel=1e-9)  # what the colour shows
    state.update(d_model=64)
    state.flush()
    assert compute.wait_idle()
    assert value_in(panel.hover_line.text()) == pytest.approx(exact(12, 40, 64), rel=1e-9)
    panel.set_options(metric="cosine")
    assert compute.wait_idle()
    assert "cosine similarity = " in panel.hover_line.text()
    assert value_in(panel.hover_line.text()) == pytest.approx(exact(12, 40, 64, "cosine"), rel=1e-9)
    # the profile: offset k from the reference position
    reference = panel.reference_box.value()
    profile_box = panel.profile_plot.getViewBox()
    (_, (low, high)) = profile_box.viewRange()
    panel._hover(profile_box.mapViewToScene(QPointF(-5, (low + high) / 2)))
    assert panel.hover_line.text().startswith(f"p {reference}, q {reference - 5} (offset k = -5): cosine")


def test_similarity_reference_past_a_shorter_sequence_moves_to_its_middle(qtbot, state, compute):
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_options(reference=100)
    state.update(seq_len=200)  # still inside: kept
    state.flush()
    assert compute.wait_idle()
    assert panel.reference_box.value() == 100
    state.update(seq_len=10)  # past the end: the middle, not the last position (offsets one way only)
    state.flush()
    assert compute.wait_idle()
    assert panel.reference_box.value() == 5 and panel.profile_data.reference == 5
    assert panel.profile_data.offsets.min() < 0 < panel.profile_data.offsets.max()


def test_a_one_position_similarity_profile_is_drawn_as_a_dot(qtbot, state, compute):
    state.update(seq_len=1, d_model=2)
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.profile_data.profile.size == 1
    assert panel.profile_dot.isVisible()
    x, y = panel.profile_dot.getData()
    assert list(x) == [0.0] and y[0] == pytest.approx(1.0)  # PE(0)·PE(0) = sin²0 + cos²0
    low, high = panel.profile_plot.getViewBox().viewRange()[1]
    assert low < y[0] < high  # inside the view, not drawn off the plot
    state.update(seq_len=20)
    state.flush()
    assert compute.wait_idle()
    assert not panel.profile_dot.isVisible()  # a curve again


def test_heatmap_samples_large_sizes_off_the_gui_thread(qtbot, state, compute):
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    state.update(seq_len=1_048_576, d_model=8192)
    state.flush()
    assert panel.data.params.seq_len == 128  # nothing computed synchronously
    assert compute.wait_idle()
    data = panel.data
    assert data.params.seq_len == 1_048_576
    assert data.values.size <= 1100 * 1100
    assert data.positions.stride > 1 and "every" in panel.sampling_label.text()
    rows = data.positions.indices()[[0, 5, -1]].astype(float)
    cols = data.dims.indices()[[0, 3, -1]]
    np.testing.assert_array_equal(data.values[[0, 5, -1]][:, [0, 3, -1]],
                                  encode("sinusoidal", rows, 8192, dims=cols))
    assert data.aliased.any() and panel.alias_notice.level() == "warning"
    assert panel.alias_notice.text().startswith(f"Aliasing: {int(data.aliased.sum()):,} of the {data.dims.count:,}")
    assert not panel.message_label.isVisible() and not panel.message_label.text()  # the bar is for errors


def test_a_new_heatmap_shape_shows_its_axes_together_with_its_values(qtbot, state, compute):
    # Computed in a worker, the new shape's values arrive later than the
    # parameters: until they do, the view keeps the old range under the old
    # image (not the old image under new axes); then both change together.
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    old_range = panel.matrix.view_box.viewRange()
    state.update(seq_len=1024, d_model=8192)
    state.flush()
    assert panel.data.params.d_model == 512  # still computing
    assert panel.matrix.view_box.viewRange() == old_range
    assert compute.wait_idle()
    (x0, x1), (y0, y1) = panel.matrix.view_box.viewRange()
    assert (x0, x1, y0, y1) == pytest.approx((-0.5, 8191.5, -0.5, 1023.5))
    image_rect = panel.matrix.image.mapRectToParent(panel.matrix.image.boundingRect())
    (d0, d1), (p0, p1) = panel.data.dims.extent, panel.data.positions.extent
    assert (image_rect.left(), image_rect.right(), image_rect.top(), image_rect.bottom()) == (d0, d1, p0, p1)
    assert d0 <= -0.5 and d1 >= 8191.5 and p0 <= -0.5 and p1 >= 1023.5  # the image fills the new view


def test_heatmap_zoom_at_the_end_of_a_long_context_is_exact(qtbot, state, compute):
    state.update(seq_len=1_048_576, d_model=512)
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.matrix.view_box.setRange(xRange=(0, 64), yRange=(1_000_000, 1_000_050), padding=0)
    panel.request_update()
    assert compute.wait_idle()
    data = panel.data
    assert data.positions.stride == 1 and data.dims.stride == 1
    positions = data.positions.indices()
    assert positions[0] <= 1_000_000 and positions[-1] >= 1_000_050
    np.testing.assert_array_equal(data.values, encode("sinusoidal", positions, 512, dims=data.dims.indices()))


def test_heatmap_says_whether_it_aliases_without_moving_the_plot(qtbot, state, compute):
    state.update(seq_len=4096, d_model=64)
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.data.aliased.any() and panel.alias_notice.level() == "warning"
    plot_area = panel.canvas.geometry()
    panel.matrix.view_box.setRange(yRange=(2000, 2040), padding=0)  # one row per position: no aliasing
    panel.request_update()
    assert compute.wait_idle()
    QApplication.processEvents()
    assert panel.data.positions.stride == 1 and not panel.data.aliased.any()
    assert panel.alias_notice.level() == "info" and panel.alias_notice.text().startswith("No aliasing")
    assert panel.canvas.geometry() == plot_area  # the notice kept its height: the plot did not move
    panel.matrix.view_box.setRange(yRange=(0, 4095), padding=0)
    panel.request_update()
    assert compute.wait_idle()
    QApplication.processEvents()
    assert panel.alias_notice.level() == "warning" and panel.canvas.geometry() == plot_area


def test_parameters_invalid_base_shows_the_message_and_keeps_the_view(qtbot, state, compute):
    params_panel = ParametersPanel(state, compute)
    heatmap = HeatmapPanel(state, compute)
    settle(qtbot, params_panel, compute)
    settle(qtbot, heatmap, compute)
    before = heatmap.data.values.copy()
    base = params_panel.controls["base"].editor
    qtbot.keyClicks(base, "")  # focus
    base.clear()
    qtbot.keyClicks(base, "0.5")
    state.flush()
    compute.wait_idle()
    assert state.params.options["base"] == 10000.0
    assert params_panel.errors["base"].isVisible()
    assert "base must be > 1" in params_panel.errors["base"].text()
    np.testing.assert_array_equal(heatmap.data.values, before)
    base.clear()
    qtbot.keyClicks(base, "500")
    state.flush()
    assert compute.wait_idle()
    assert state.params.options["base"] == 500.0 and not params_panel.errors["base"].isVisible()
    np.testing.assert_array_equal(heatmap.data.values, encode("sinusoidal", np.arange(128.0), 512, base=500.0))


def test_parameters_show_only_options_of_the_scheme(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    settle(qtbot, panel, compute)

    def shown() -> set[str]:
        return {name for name, control in panel.controls.items() if control.row.isVisible()}

    assert shown() == {"seq_len", "d_model", "base", "layout"}
    assert isinstance(panel.controls["layout"].editor, QComboBox)  # the kind of the spec picks the editor
    panel.scheme.setCurrentIndex(panel.scheme.findData("naive"))
    state.flush()
    assert state.params.scheme == "naive"
    assert shown() == {"seq_len", "d_model"}
    panel.scheme.setCurrentIndex(panel.scheme.findData("all_sine"))
    state.flush()
    assert shown() == {"seq_len", "d_model", "base"}
    panel.scheme.setCurrentIndex(panel.scheme.findData("binary"))
    state.flush()
    assert shown() == {"seq_len", "d_model", "bit_values"} and not panel.tied_notes["length"].isVisible()
    panel.scheme.setCurrentIndex(panel.scheme.findData("normalized"))
    state.flush()
    assert shown() == {"seq_len", "d_model"} and panel.tied_notes["length"].isVisible()


def test_parameters_build_a_scheme_s_controls_when_it_first_shows_them_in_the_specs_order(qtbot, state, compute):
    """Only the shown scheme's controls are built (a control for each of the thirty-odd options would be built
    at start-up for nothing); another scheme's are built when it is chosen, their rows in the specs' order."""
    from posenc_gui.model import OPTION_SPECS
    from posenc_gui.model.core.params import SIZE_SPECS

    panel = ParametersPanel(state, compute)
    settle(qtbot, panel, compute)
    assert set(panel.controls) == {"seq_len", "d_model", "base", "layout"}
    state.update(scheme="rope")
    state.flush()
    rope_shown = {spec.name for spec in state.params.info.options_in_use(state.params.options)}
    assert set(panel.controls) == {"seq_len", "d_model", "base", "layout", *rope_shown} and len(rope_shown) > 2
    order = [spec.name for spec in (*SIZE_SPECS, *OPTION_SPECS.values())]
    form = panel.controls["seq_len"].row.parentWidget().layout()
    rows = {name: form.getWidgetPosition(control.row)[0] for name, control in panel.controls.items()}
    errors = {name: form.getWidgetPosition(control.error)[0] for name, control in panel.controls.items()}
    assert sorted(rows, key=rows.get) == sorted(rows, key=order.index)
    assert all(errors[name] == rows[name] + 1 for name in rows)  # each refusal line under its control
    assert panel.controls["gamma"].spec.name == "gamma" and "gamma" in panel.controls  # built when asked for
    with pytest.raises(KeyError):
        panel.controls["no_such_parameter"]


def test_switching_through_a_scheme_without_an_option_keeps_its_value(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    settle(qtbot, panel, compute)
    state.update(base=500.0, layout="halves")
    state.update(scheme="naive")
    state.flush()
    assert dict(state.params.options) == {}
    state.update(scheme="all_sine")
    state.flush()
    assert dict(state.params.options) == {"base": 500.0}
    state.update(scheme="sinusoidal")
    state.flush()
    assert dict(state.params.options) == {"base": 500.0, "layout": "halves"}
    assert panel.controls["base"].editor.text() == "500" and panel.controls["layout"].editor.currentData() == "halves"


def test_dragging_the_size_slider_applies_immediately(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    settle(qtbot, panel, compute)
    control = panel.controls["d_model"]
    control.slider.setValue(control.slider.value() - 8)  # one octave down
    state.flush()
    assert state.params.d_model == 256 and control.editor.value() == 256


def test_waveforms_hold_curves_and_dots_of_the_chosen_dims(qtbot, state, compute):
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_dims("3, 10-11")
    assert compute.wait_idle()
    data = panel.data
    assert data.dims == (3, 10, 11)
    np.testing.assert_array_equal(data.curve_y, encode("sinusoidal", data.curve_x, 512, dims=[3, 10, 11]))
    assert data.curve_x[0] == 0 and data.curve_x[-1] == 127
    expected_wavelength = 2 * np.pi * 10000 ** (2 * 5 / 512)  # dim 11 is the cosine of pair i = 5
    assert len(panel.legend.items) == 3 + 1  # a curve per dimension, then the dots
    assert f"λ = {expected_wavelength:.4g}" in panel.legend.items[2][1].text
    assert panel.legend.items[3][1].text.startswith("integer positions")
    panel.set_dims("600")
    assert "dims must be in 0…511" in panel.message_label.text()
    assert panel.data.dims == (3, 10, 11)


def test_a_zoom_re_samples_at_once_when_asked_instead_of_after_the_pause(qtbot, state, compute):
    state.update(seq_len=8192)
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    view_box = panel.plot.getViewBox()
    view_box.setXRange(8000, 8050, padding=0)
    assert panel.data.curve_x[-1] - panel.data.curve_x[0] > 8000  # still the whole length
    panel.run_debounced()
    assert compute.wait_idle()
    assert 7990 <= panel.data.curve_x[0] and panel.data.curve_x[-1] <= 8060
    assert not any(timer.isActive() for timer, _ in panel._debounced)  # not again after the pause


def test_waveform_dims_parser():
    assert parse_dims("0, 1, 6-8", 10) == (0, 1, 6, 7, 8)
    with pytest.raises(ValueError, match="dims"):
        parse_dims("9", 8)
    assert default_dims(512) == (0, 1, 128, 129, 510)
    assert default_dims(3) == (0, 1)


def test_similarity_metric_and_reference(qtbot, state, compute):
    state.update(seq_len=60, d_model=32)
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_options(metric="cosine", reference=10)
    assert compute.wait_idle()
    pe = encode("sinusoidal", np.arange(60.0), 32)
    expected = pairwise(pe, pe, "cosine")
    # The same rows; the profile's product (one row by many) may sum in another order than the matrix's.
    assert_close(panel.matrix_data.matrix, expected, cosine_atol(32))
    assert_close(panel.profile_data.profile, expected[10], cosine_atol(32))
    assert panel.profile_data.offsets[0] == -10 and panel.profile_data.offsets[-1] == 49
    with pytest.raises(ValueError, match="reference"):
        panel.set_options(reference=60)


@pytest.mark.parametrize("profile_fails", [False, True])
def test_similarity_shows_matrix_and_profile_in_one_turn(qtbot, state, monkeypatch, request, profile_fails):
    # At a worker size the two halves arrive separately; the matrix waits for
    # the profile, so the canvas repaints once. A failed profile releases it.
    import threading

    from posenc_gui.compute import ComputeService
    from posenc_gui.views import similarity

    # Every profile request below waits for the release, and the panel asks up to twice (a re-sample after a
    # layout pass, counted): with the app's two worker threads both could be held, and the matrix never run.
    compute = ComputeService(workers=4)
    request.addfinalizer(compute.shutdown)
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    release = threading.Event()
    compute_profile = similarity.compute_profile

    def slow_profile(*args):
        assert release.wait(TIMEOUT_S)
        if profile_fails:
            raise ValueError("reference must be in 0…1023")
        return compute_profile(*args)

    monkeypatch.setattr(similarity, "compute_profile", slow_profile)
    errors = []
    show_message = panel.show_message
    monkeypatch.setattr(panel, "show_message", lambda text, level="error": (
        errors.append(text) if level == "error" and text else None, show_message(text, level)))
    state.update(seq_len=1024, d_model=8192)
    state.flush()
    qtbot.waitUntil(lambda: not compute.is_pending((panel, "matrix")), timeout=TIMEOUT_MS)
    QApplication.processEvents()
    assert panel.matrix_data.params.d_model == 512  # computed, and held back
    release.set()
    assert compute.wait_idle()
    assert panel.matrix_data.params.d_model == 8192
    if profile_fails:
        assert panel.profile_data.params.d_model == 512
        assert errors and "reference must be" in errors[0]
    else:
        assert panel.profile_data.params.d_model == 8192


def test_a_failed_profile_stays_on_screen_until_the_profile_succeeds(qtbot, state, compute, monkeypatch):
    # The matrix arriving after the profile failed must not clear the profile's error.
    import threading

    from posenc_gui.views import similarity

    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    release = threading.Event()
    first = threading.Lock()
    compute_matrix, compute_profile = similarity.compute_matrix, similarity.compute_profile

    def late_matrix(*args):
        # Only the change's first matrix waits for the profile's failure. A second request (a re-sample after a
        # layout pass, seen on a machine busy with two other processes) waiting too held both worker threads,
        # and the profile never ran (a 180 s time-out in the suite).
        if first.acquire(blocking=False):
            assert release.wait(TIMEOUT_S)
        return compute_matrix(*args)

    def failing_profile(*args):
        raise ValueError("reference must be in 0…1023")

    monkeypatch.setattr(similarity, "compute_matrix", late_matrix)
    monkeypatch.setattr(similarity, "compute_profile", failing_profile)
    state.update(seq_len=1024, d_model=8192)
    state.flush()
    qtbot.waitUntil(lambda: not compute.is_pending((panel, "profile")), timeout=TIMEOUT_MS)
    assert "reference must be" in panel.message_label.text()
    release.set()
    assert compute.wait_idle()
    assert panel.matrix_data.params.d_model == 8192
    assert "reference must be" in panel.message_label.text() and not panel.message_label.isHidden()
    monkeypatch.setattr(similarity, "compute_profile", compute_profile)
    panel.set_options(reference=10)
    assert compute.wait_idle()
    assert panel.profile_data.reference == 10 and panel.message_label.isHidden()


def test_a_million_positions_allocate_no_n_by_d_array(qtbot, state, compute):
    import tracemalloc

    heatmap = HeatmapPanel(state, compute)
    waveforms = WaveformsPanel(state, compute)
    similarity = SimilarityPanel(state, compute)
    for panel in (heatmap, waveforms, similarity):
        settle(qtbot, panel, compute)
    tracemalloc.start()
    try:
        state.update(seq_len=1_048_576, d_model=8192)
        state.flush()
        assert compute.wait_idle(TIMEOUT_S)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert heatmap.data.params.seq_len == 1_048_576
    assert similarity.matrix_data.params.seq_len == 1_048_576
    assert waveforms.data.params.seq_len == 1_048_576
    one_row_of_n = 1_048_576 * 8  # bytes of a single float64 column over all positions
    assert peak < 16 * one_row_of_n, f"peak {peak / 2**20:.0f} MiB"  # an N×d array would be 64 GiB


def test_presets_of_every_scheme_apply_all_their_parameters(qtbot, state, compute):
    from posenc_gui.model import SCHEMES, EncodingParams

    panel = ParametersPanel(state, compute)
    settle(qtbot, panel, compute)
    declared = [(info, preset) for info in SCHEMES.values() for preset in info.presets]
    assert panel.presets.count() == len(declared) + 1 >= 4
    for index, (info, preset) in enumerate(declared, start=1):
        assert panel.presets.itemText(index) == preset.label
        state.update(scheme="all_sine", base=3.0, seq_len=7, d_model=9)  # far from every preset
        state.flush()
        panel.presets.setCurrentIndex(index)
        panel.presets.activated.emit(index)
        state.flush()
        expected = EncodingParams.validated(scheme=info.key, seq_len=preset.seq_len, d_model=preset.d_model,
                                            **preset.options)
        assert state.params == expected, preset.label


def test_symmetric_colour_levels_ignore_non_finite_values():
    from posenc_gui.views.plotkit import symmetric_levels

    assert symmetric_levels(np.array([[0.2, -0.734], [0.5, 0.1]])) == (-0.74, 0.74)
    assert symmetric_levels(np.array([[np.nan, -0.734], [np.inf, 0.1]])) == (-0.74, 0.74)
    assert symmetric_levels(np.full((2, 2), np.nan)) == (-1.0, 1.0)
    assert symmetric_levels(np.zeros((0, 3))) == (-1.0, 1.0)
    assert symmetric_levels(np.array([[-np.inf, 0.3], [0.1, -0.2]])) == (-0.3, 0.3)


def test_symmetric_colour_levels_copy_no_matrix():
    # the heatmap's and the similarity matrix's levels at every step: np.abs copied the matrix
    import tracemalloc

    from posenc_gui.views.plotkit import symmetric_levels

    values = np.sin(np.arange(128.0)[:, None] * np.linspace(0.01, 1, 512)[None, :]) * 3
    values[5, 7] = -3.9  # the largest magnitude is negative
    tracemalloc.start()
    try:
        levels = symmetric_levels(values)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert levels == (-3.9, 3.9)  # 3.9 is a round bound already
    assert peak < values.nbytes / 10


def test_waveforms_draw_an_exact_band_for_dimensions_sampled_below_their_wavelength(qtbot, state, compute):
    state.update(seq_len=100_000, d_model=512)
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_dims("0, 510")  # λ = 2π (aliased over 100,000 positions) and λ ≈ 60,000 (not)
    assert compute.wait_idle()
    data = panel.data
    assert data.aliased.tolist() == [True, False]
    (fast_curve, _, fast_band), (slow_curve, _, slow_band) = panel._items
    assert fast_band.isVisible() and fast_curve.xData.size == 0  # no moiré polyline
    assert slow_curve.xData.size == data.curve_x.size and not slow_band.isVisible()
    # λ = 2π is far below a pixel's worth of positions: every column sweeps [−1, 1]
    assert (data.band_low[:, 0] == -1.0).all() and (data.band_high[:, 0] == 1.0).all()
    outline = fast_band.path().boundingRect()
    assert outline.top() == pytest.approx(-1.0) and outline.bottom() == pytest.approx(1.0)
    y_low, y_high = panel.plot.getViewBox().viewRange()[1]
    assert y_low <= -1.0 and y_high >= 1.0  # the whole band is in view
    assert "aliased" in panel.legend.items[0][1].text
    # zoomed in to a few periods, the same dimension is a curve again
    panel.plot.getViewBox().setXRange(50_000, 50_030, padding=0)
    panel.request_update()
    assert compute.wait_idle()
    assert not panel.data.aliased[0] and fast_curve.xData.size > 0 and not fast_band.isVisible()


def test_waveform_curves_with_few_samples_per_period_are_drawn_thin(qtbot, state, compute):
    state.update(seq_len=1024, d_model=512)
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_dims("0, 510")  # λ = 2π: a few pixels per period; λ ≈ 60,000: smooth
    assert compute.wait_idle()
    (fast, _, _), (slow, _, _) = panel._items
    assert not panel.data.aliased.any()
    assert fast.opts["pen"].width() == 1 and slow.opts["pen"].width() == 2
    panel.plot.getViewBox().setXRange(0, 40, padding=0)  # zoomed in, the fast one is smooth too
    panel.request_update()
    assert compute.wait_idle()
    assert fast.opts["pen"].width() == 2


def test_similarity_says_under_the_plot_how_the_matrix_is_sampled(qtbot, state, compute):
    panel = SimilarityPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.sampling_label.isHidden()  # 128 positions: every one is shown
    state.update(seq_len=1_048_576)
    state.flush()
    assert compute.wait_idle(TIMEOUT_S)
    rows = panel.matrix_data.rows
    assert rows.stride > 1 and not panel.sampling_label.isHidden()
    assert f"every {rows.stride:,}" in panel.sampling_label.text()
    state.update(seq_len=100)
    state.flush()
    assert compute.wait_idle(TIMEOUT_S)
    assert panel.sampling_label.isHidden()


def test_a_long_default_dimension_list_shows_its_start(qtbot, state, compute):
    # "0, 1, 2048, 2049, 8190" is wider than a narrow panel's field; the
    # field must show "0, 1, …", not the end QLineEdit.setText scrolls to.
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.resize(420, 400)
    state.update(d_model=8192)
    state.flush()
    assert compute.wait_idle()
    edit = panel.dims_edit
    assert edit.text() == "0, 1, 2048, 2049, 8190"
    assert edit.fontMetrics().horizontalAdvance(edit.text()) > edit.width() - 10  # it does not fit
    assert edit.cursorPosition() == 0


def test_waveforms_say_what_the_zoom_does_to_the_curves_without_moving_the_plot(qtbot, state, compute):
    state.update(seq_len=100_000, d_model=512)
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    panel.set_dims("0, 510")
    assert compute.wait_idle()
    # the formula note below follows the new dimensions, after a pause, and the panel's layout with it
    qtbot.waitUntil(lambda: panel.note_label.text().startswith("dim 0 = sin"), timeout=TIMEOUT_MS)
    finish_pending(qtbot, panel)
    notice = panel.sampling_notice
    assert notice.level() == "warning" and notice.text().startswith("Aliased: dim 0, drawn as the band of its exact")
    assert "Zoom in to see the dots" in notice.text()  # 100,000 positions: integers are far closer than a pixel
    plot_area = panel.canvas.geometry()
    panel.plot.getViewBox().setXRange(50_000, 50_030, padding=0)
    panel.request_update()
    assert compute.wait_idle()
    finish_pending(qtbot, panel)  # the note follows after a pause
    assert notice.level() == "info" and notice.text().startswith("No aliasing")
    assert "dots" not in notice.text()
    assert panel.note_label.text().startswith("dim 0 = sin(pos / 10000^(2·0/512)); dim 510 = ")
    assert panel.canvas.geometry() == plot_area  # the notice kept its height: the plot did not move
    # Zoomed out again on a slow dimension alone: nothing aliases, but the dots are hidden, said first.
    panel.set_dims("510")
    panel.plot.getViewBox().setXRange(0, 99_999, padding=0)
    panel.request_update()
    assert compute.wait_idle()
    assert not panel.data.aliased.any() and panel.data.dots is None
    assert notice.level() == "info" and notice.text().startswith("Integer positions are closer than a few pixels")
    assert "No aliasing" in notice.text()


def test_waveform_dots_are_made_when_first_shown_between_their_curve_and_the_next_band(qtbot, state, compute):
    from posenc_gui.views.plotkit.pgcompat import view_box_contents

    state.update(seq_len=100_000, d_model=512)
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.data.dots is None  # integers far closer than a pixel: no dots
    assert [dots for _, dots, _ in panel._items] == [None] * len(panel.dims)  # and none made
    panel.plot.getViewBox().setXRange(50_000, 50_030, padding=0)
    panel.request_update()
    assert compute.wait_idle()
    assert panel.data.dots is not None and all(dots.isVisible() for _, dots, _ in panel._items)
    expected = [item for curve, dots, band in panel._items for item in (band, curve, dots)]
    stacked = [item for item in view_box_contents(panel.plot.getViewBox()).childItems() if item in expected]
    assert stacked == expected  # each dimension's band, curve and dots, in the dimensions' order
    made = [dots for _, dots, _ in panel._items]
    panel.plot.getViewBox().setXRange(0, 99_999, padding=0)
    panel.request_update()
    assert compute.wait_idle()
    assert [dots for _, dots, _ in panel._items] == made and not any(dots.isVisible() for dots in made)


def _legend_rows(legend) -> int:
    """How many rows the legend's entries take on screen."""
    return len({round(label.mapToScene(0, 0).y()) for _, label in legend.items})


def test_waveforms_legend_sits_under_the_plot_in_as_many_columns_as_fit(qtbot, state, compute):
    # Drawn over the view box, the legend hid the top right of the curves.
    panel = WaveformsPanel(state, compute)
    settle(qtbot, panel, compute)
    for width, rows in ((460, (2, 3)), (1200, (1, 1)), (1500, (1, 1))):
        panel.resize(width, 420)
        finish_pending(qtbot, panel)  # the re-sample after the resize
        assert compute.wait_idle()
        for _ in range(3):  # the canvas's layout, then the legend's columns, then the layout again
            QApplication.processEvents()
        legend, view = panel.legend, panel.plot.getViewBox()
        assert len(legend.items) == len(panel.dims) + 1 == 6  # a curve per dimension, then the dots
        view_rect, legend_rect = view.sceneBoundingRect(), legend.sceneBoundingRect()
        assert legend_rect.top() >= panel.plot.getAxis("bottom").sceneBoundingRect().bottom() - 1
        assert legend_rect.left() >= view_rect.left() - 60 and legend_rect.right() <= panel.canvas.width()
        assert rows[0] <= _legend_rows(legend) <= rows[1], width
        for _, label in legend.items:  # every entry whole, inside the canvas
            assert label.sceneBoundingRect().right() <= panel.canvas.width()
        row = sorted(legend.items, key=lambda entry: entry[0].sceneBoundingRect().left())
        row = [entry for entry in row if round(entry[0].mapToScene(0, 0).y()) == round(row[0][0].mapToScene(0, 0).y())]
        for (_, label), (sample, _) in zip(row, row[1:]):  # entries of a row kept apart
            assert label.sceneBoundingRect().right() + legend.ENTRY_GAP_PX - 1 <= sample.sceneBoundingRect().left()


def test_a_learned_table_with_an_outlier_is_coloured_to_its_bulk_and_says_so(qtbot, state, compute, tmp_path):
    from posenc_gui.model import EncodingParams
    from posenc_gui.model.core.colour_bound import outlier_bound

    # 64 × 32 entries of ±0.01 (sign pattern), one of 1.5: the 99.9th percentile of |values| is 0.01
    # (2,047 of 2,048 are 0.01), the largest is 150 × that: colours span ±0.01, one value beyond.
    table = np.where(np.add.outer(np.arange(64), np.arange(32)) % 2 == 0, 0.01, -0.01)
    table[0, 9] = 1.5
    path = tmp_path / "wpe.npy"
    np.save(path, table)
    assert outlier_bound(table) == pytest.approx((0.01, 1, 1.5))
    assert outlier_bound(np.sin(np.arange(4096.0))) is None  # a formula's values: the whole range
    state.set_params(EncodingParams().replaced(fit_sizes=True, scheme="learned_file", model_path=str(path)))
    state.flush()
    panel = HeatmapPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.data.colour_bound == pytest.approx((0.01, 1, 1.5))
    assert panel.matrix.colorbar.levels() == pytest.approx((-0.01, 0.01))
    assert "Colours span ±0.01 (99.9 % of |values|): 1 shown value up to 1.5" in panel.alias_notice.text()
    assert "Colours span ±0.01" in panel.figure_caption()
    state.set_params(EncodingParams())
    settle(qtbot, panel, compute)
    assert panel.data.colour_bound is None and "Colours span" not in panel.alias_notice.text()


def test_a_learned_tables_similarity_and_logit_matrices_are_coloured_to_their_bulk_and_say_so(qtbot, state, compute,
                                                                                               tmp_path):
    from posenc_gui.model import EncodingParams
    from posenc_gui.views.positional_logits import PositionalLogitsPanel

    # 64 positions × 32 dims: PE(m) = ±0.01 in every dim for m ≥ 1 (sign (−1)^m), PE(0) = 0.5 in every dim, an
    # outlier as MiniLM's PE(0). Dot products: PE(m)·PE(n) = ±32·10⁻⁴ (63² of them),
    # PE(0)·PE(n) = ±32·0.005 = ±0.16 (126: row 0 and column 0), PE(0)·PE(0) = 32·0.25 = 8. The 99.9th percentile of the 4,096 |values| (rank
    # 0.999·4,095 = 4,090.9 of the sorted, among the 126 of 0.16 at ranks 3,969…4,094) is 0.16; 8 is 50× that.
    table = np.where(np.arange(64)[:, None] % 2 == 0, 0.01, -0.01) * np.ones((64, 32))
    table[0] = 0.5
    path = tmp_path / "wpe.npy"
    np.save(path, table)
    state.set_params(EncodingParams().replaced(fit_sizes=True, scheme="learned_file", model_path=str(path)))
    state.flush()
    assert state.params.seq_len == 64 and state.params.d_model == 32
    similarity, logits = SimilarityPanel(state, compute), PositionalLogitsPanel(state, compute)
    for panel in (similarity, logits):
        settle(qtbot, panel, compute)
    expected = "Colours span ±0.16 (99.9 % of |values|): 1 shown value up to 8 drawn in the end colours."
    for panel, data in ((similarity, similarity.matrix_data), (logits, logits.data)):
        assert data.colour_bound == pytest.approx((0.16, 1, 8.0), rel=1e-12), type(panel).__name__
        assert panel.matrix.colorbar.levels() == pytest.approx((-0.16, 0.16), rel=1e-12)
        assert expected in panel.figure_caption(), type(panel).__name__
    # a formula's matrix keeps its whole range: its largest (the diagonal) is no outlier
    state.set_params(EncodingParams().replaced(seq_len=64, d_model=32))
    for panel in (similarity, logits):
        settle(qtbot, panel, compute)
    assert similarity.matrix_data.colour_bound is None and logits.data.colour_bound is None
    assert "Colours span" not in similarity.figure_caption() + logits.figure_caption()
    assert similarity.matrix.colorbar.levels()[1] >= 16 - 1e-9  # sinusoidal ‖PE(p)‖² = d/2 = 16: all covered


def test_the_waveforms_headline_names_the_curves_shown_before_its_note_is_laid_out(qtbot, state, compute,
                                                                                  monkeypatch):
    # The note under the plot follows the curves after a short delay (laying it out on every d_model step costs
    # a frame); an export in between took the headline from the note, naming the previous curves.
    from posenc_gui.views import waveforms

    monkeypatch.setattr(waveforms, "NOTE_DELAY_MS", 600_000)  # the note is never laid out during this test
    panel = show_panel(qtbot, WaveformsPanel(state, compute), (900, 650), settle=False)
    for d_model in (512, 64):
        assert state.update(d_model=d_model) is None
        state.flush()
        qtbot.waitUntil(lambda: panel.data is not None and panel.data.params.d_model == d_model, timeout=TIMEOUT_MS)
    assert max(panel.data.dims) < 64
    for dim, label in zip(panel.data.dims, panel.data.labels):
        assert f"dim {dim} = {label}" in panel.headline()
