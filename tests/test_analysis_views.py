"""Widget tests of the uniqueness, magnitude and relative-vs-absolute docks, and what the four analysis docks share.

The linear-relation dock's own tests are in test_analysis_views_linear.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from posenc_gui.views.plotkit.pgcompat import label_shown_text
from posenc_gui.model import limits
from posenc_gui.views import panel_classes
from posenc_gui.views.linear_relation import LinearRelationPanel
from posenc_gui.views.addition import AdditionPanel
from posenc_gui.model.panels.panel_data import MAGNITUDE_MAX_POINTS
from posenc_gui.views.magnitude import MagnitudePanel
from posenc_gui.views.relative import RelativePanel
from posenc_gui.views.uniqueness import UniquenessPanel
from helpers_panels import change_params, show_panel
from waiting import finish_pending

PANELS = (UniquenessPanel, MagnitudePanel, LinearRelationPanel, RelativePanel)


def make(panel_class, state, compute, qtbot):
    """A ``panel_class`` on the test's state, on screen and up to date."""
    return show_panel(qtbot, panel_class(state, compute))


def table_row(panel, row):
    return [panel.table.item(row, col).text() for col in range(panel.table.columnCount())]


# ---------------------------------------------------------------------------
# common contract


def test_panels_are_registered():
    registered = panel_classes()
    for panel_class in PANELS:
        assert panel_class in registered
    assert len({c.panel_id for c in registered}) == len(registered)


@pytest.mark.parametrize(
    ("panel_class", "formula"),
    [
        (UniquenessPanel, "‖PE(p) − PE(q)‖"),
        (MagnitudePanel, "σ·√d"),
        (LinearRelationPanel, "cos(kω)·sin(pω)"),
        (RelativePanel, "cos(k·ω<sub>i</sub>)"),
    ],
)
def test_help_text_has_the_formula(panel_class, formula):
    assert formula in panel_class.help_text


@pytest.mark.parametrize("panel_class", PANELS)
def test_export_data_is_numbers_and_json_meta(panel_class, state, compute, qtbot):
    panel = make(panel_class, state, compute, qtbot)
    exported = panel.export_data()
    arrays = exported["arrays"]
    assert arrays and all(isinstance(a, np.ndarray) and a.size for a in arrays.values())
    assert all(np.all(np.isfinite(a)) for a in arrays.values())
    meta = json.loads(json.dumps(exported["meta"]))
    assert meta["panel"] == panel_class.panel_id
    assert meta["params"]["scheme"] == state.params.scheme
    assert panel.figure_widget() is not panel  # the plot canvas, without the controls


@pytest.mark.parametrize("panel_class", PANELS)
def test_hidden_panel_waits_until_shown(panel_class, state, compute, qtbot):
    panel = make(panel_class, state, compute, qtbot)
    panel.hide()
    change_params(state, compute, scheme="naive")
    assert panel.data.params.scheme == "sinusoidal"  # no work while hidden
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle()
    assert panel.data.params.scheme == "naive"


@pytest.mark.parametrize("panel_class", PANELS)
def test_figure_renders_something(panel_class, state, compute, qtbot):
    panel = make(panel_class, state, compute, qtbot)
    figure = panel.figure_widget()
    figure.resize(600, 400)
    image = figure.grab().toImage()
    assert not image.isNull()
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 5  # not a blank canvas


# ---------------------------------------------------------------------------
# uniqueness


def test_uniqueness_shows_the_sincos_pair_near_repeat(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme="sincos_pair", seq_len=101, d_model=2)
    assert panel.data.params.scheme == "sincos_pair"
    p, q, distance = panel.data.result.closest_pair
    assert (p, q) == (0.0, 44.0)  # 44 ≈ 7·2π
    assert distance == pytest.approx(2 * abs(math.sin(22)), rel=1e-12)
    assert table_row(panel, 0)[:3] == ["0", "44", "44"]
    assert float(table_row(panel, 0)[3]) == pytest.approx(44 / (2 * math.pi), abs=1e-4)
    assert "44" in panel.summary_label.text()
    assert panel.minimum_line.value() == pytest.approx(distance)


def test_uniqueness_figure_says_which_positions_it_compares(state, compute, qtbot):
    # The message bar is not part of an exported figure: the plot's title and the caption say it too.
    
    panel = make(UniquenessPanel, state, compute, qtbot)
    title = panel.distance_plot.titleLabel
    assert label_shown_text(title) == "min over q ≠ p of ‖PE(p) − PE(q)‖"
    # sinusoidal: every offset is checked (in steps), the curve's q runs over all of 0 … N−1
    change_params(state, compute, seq_len=1_048_576, d_model=8192)
    assert panel.data.count == 1_048_576 and not panel.data.truncated and not panel.data.found.pending
    sampled = panel.data.result.positions.size
    expected = f"min over q ≠ p of ‖PE(p) − PE(q)‖, q in 0…1,048,575 (p at {sampled:,} positions)"
    assert label_shown_text(title) == expected
    assert "proved over pairs of positions 0…1,048,575 (every offset 1…1,048,575)" in panel.figure_caption()
    # all-sine: only the leading positions
    change_params(state, compute, scheme="all_sine")
    count = panel.data.count
    assert 2 <= count < 1_048_576 and panel.data.truncated
    assert label_shown_text(title) == f"min over q ≠ p of ‖PE(p) − PE(q)‖, positions 0…{count - 1:,} of 1,048,576"
    caption = panel.figure_caption()
    assert caption.startswith(f"Closest pair among 0…{count - 1:,} only (of 0…1,048,575):")
    assert f"proved over pairs of positions 0…{count - 1:,} only, of 0…1,048,575" in caption
    change_params(state, compute, scheme="sinusoidal", seq_len=128, d_model=512)
    assert label_shown_text(title) == "min over q ≠ p of ‖PE(p) − PE(q)‖"


def test_uniqueness_headline_is_the_closest_pair_of_the_whole_range_for_all_sine(state, compute, qtbot):
    # Issue #37 item 3: the panel showed (614, 1406), the closest pair of 0…4,095, as that of 0…19,999.
    # (3030, 17959) is brute force's answer: tests/test_uniqueness_coverage.py.
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme="all_sine", seq_len=20_000, d_model=4, base=1.5)
    assert not panel.data.found.pending
    headline = panel.summary_label.text()
    assert "Closest pair:</b> positions 3,030 and 17,959" in headline
    assert "proved over pairs of positions 0…19,999" in headline
    assert table_row(panel, 0)[:2] == ["3,030", "17,959"]
    assert panel.export_data()["meta"]["pairs_proved"]["last"] == 19_999


def test_uniqueness_at_a_million_positions_finds_the_closest_offset(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, seq_len=1_048_576, d_model=16)
    p, q, distance = panel.data.found.closest_pair
    assert (p, q) == (0.0, 615_746.0)  # not 0 vs 1: see test_whole_range_verdicts
    assert table_row(panel, 0)[:3] == ["0", "615,746", "615,746"]
    assert "615,746" in panel.summary_label.text() and "0.868× the neighbour step" in panel.summary_label.text()
    assert panel.minimum_line.value() == pytest.approx(distance)
    assert panel.message_label.isHidden()  # everything covers the whole range


def test_uniqueness_says_what_it_covers_while_the_scan_runs(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    messages = []
    real = panel.show_message
    panel.show_message = lambda text, level="error": (messages.append(text), real(text, level))
    change_params(state, compute, seq_len=1_048_576, d_model=8192)
    running = [text for text in messages if text.startswith("Checking every offset 1…1,048,575:")]
    assert running and "all pairs of positions 0…" in running[0]  # while the scan ran, in steps
    assert panel.data.found.whole_range and panel.message_label.isHidden()


def test_uniqueness_controls_change_the_table(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme="sincos_pair", seq_len=101, d_model=2)
    panel.top_box.setValue(3)
    assert compute.wait_idle()
    assert panel.table.rowCount() == 3
    panel.offsets_box.setChecked(False)  # every shifted copy: 0 vs 44, 1 vs 45, …
    assert compute.wait_idle()
    offsets = [int(table_row(panel, row)[2]) for row in range(3)]
    assert offsets == [44, 44, 44]


def test_uniqueness_minimum_distance_grows_with_frequencies(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    minimum = {}
    for scheme in ("sine", "sincos_pair", "sinusoidal"):
        change_params(state, compute, scheme=scheme, d_model=64)
        minimum[scheme] = panel.data.result.closest_pair[2]
    assert minimum["sine"] < minimum["sincos_pair"] < minimum["sinusoidal"]


def test_uniqueness_long_sequence_is_cut_with_a_message(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme="all_sine", seq_len=limits.MAX_SEQ_LEN)
    count = panel.data.count
    assert 2 <= count < limits.MAX_SEQ_LEN
    assert count**2 <= limits.MAX_SIMILARITY_ELEMENTS
    assert panel.data.result.positions.size == count
    assert not panel.message_label.isHidden()
    assert f"{limits.MAX_SEQ_LEN:,}" in panel.message_label.text()


# ---------------------------------------------------------------------------
# magnitude


def test_magnitude_sinusoidal_is_constant_and_naive_blows_up(state, compute, qtbot):
    panel = make(MagnitudePanel, state, compute, qtbot)
    d = state.params.d_model
    np.testing.assert_allclose(panel.data.norms, math.sqrt(d / 2), rtol=1e-12)
    change_params(state, compute, scheme="naive")
    assert panel.data.params.scheme == "naive"
    np.testing.assert_allclose(panel.data.norms, panel.data.positions * math.sqrt(d), rtol=1e-12)
    assert panel.data.norms[-1] > 100 * panel.data.embedding
    x, y = panel.norm_curve.getData()
    np.testing.assert_array_equal(y, panel.data.norms)


def test_magnitude_embedding_scale(state, compute, qtbot):
    panel = make(MagnitudePanel, state, compute, qtbot)
    state.set_view(embedding_scale=0.25)
    assert compute.wait_idle()
    assert panel.data.embedding == pytest.approx(0.25 * math.sqrt(state.params.d_model))
    assert panel.scale.box.value() == 0.25  # the box follows the shared σ
    _, y = panel.embedding_curve.getData()
    assert np.all(y == panel.data.embedding)
    with pytest.raises(ValueError, match="embedding_scale must be in 0.001…1000, got -1"):
        state.set_view(embedding_scale=-1.0)
    assert state.view["embedding_scale"] == 0.25


def test_the_embedding_scale_is_one_value_shared_by_magnitude_and_addition(state, compute, qtbot):
    magnitude = make(MagnitudePanel, state, compute, qtbot)
    addition = make(AdditionPanel, state, compute, qtbot)
    magnitude.scale.box.setValue(2.5)  # as a user typing into one panel's box
    assert compute.wait_idle()
    assert addition.scale.box.value() == 2.5 and addition.data.scale == 2.5
    assert magnitude.data.scale == 2.5
    addition.scale.box.setValue(0.5)
    assert compute.wait_idle()
    assert magnitude.scale.box.value() == 0.5 and magnitude.data.scale == 0.5


def test_magnitude_long_sequence_is_sampled_including_the_last(state, compute, qtbot):
    panel = make(MagnitudePanel, state, compute, qtbot)
    change_params(state, compute, seq_len=limits.MAX_SEQ_LEN, d_model=8192)
    assert panel.data.positions.size <= MAGNITUDE_MAX_POINTS + 1
    assert panel.data.positions[-1] == limits.MAX_SEQ_LEN - 1
    np.testing.assert_allclose(panel.data.norms, math.sqrt(8192 / 2), rtol=1e-12)
    assert "every" in panel.message_label.text()


def test_magnitude_takes_the_rows_the_similarity_views_encoded(monkeypatch):
    # At the default size the norms come from the shared cache of encoded rows
    # (positions 0…127 in every dimension), not from a second encoding.
    from posenc_gui.model import AxisSample, EncodingParams, encode
    from posenc_gui.model.analyses import analysis
    from posenc_gui.model.core.cache import encode_sampled
    from posenc_gui.model.panels.panel_data import compute_magnitude

    params = EncodingParams.validated(seq_len=128, d_model=514, base=777.0)
    rows = encode_sampled(params, AxisSample(0, 1, 128))

    def no_encoding(*args, **kwargs):
        raise AssertionError("encoded the rows again")

    monkeypatch.setattr(analysis, "encode", no_encoding)
    data = compute_magnitude(params, 1.0)
    np.testing.assert_array_equal(data.positions, np.arange(128.0))
    np.testing.assert_array_equal(data.norms, np.linalg.norm(rows, axis=1))
    monkeypatch.undo()
    np.testing.assert_array_equal(data.norms, analysis.pe_norms(params.scheme, data.positions, params.d_model,
                                                                **params.scheme_kwargs()))
    assert np.array_equal(rows, encode(params.scheme, np.arange(128.0), params.d_model, **params.scheme_kwargs()))


# ---------------------------------------------------------------------------
# relative vs absolute


def test_relative_sinusoidal_has_zero_spread_and_coinciding_profiles(state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    spread = panel.data.spread
    assert np.all(spread.spread <= 1e-9)
    profiles = panel.data.profiles
    assert profiles.shape == (4, spread.offsets.size)
    np.testing.assert_allclose(profiles, np.broadcast_to(profiles[0], profiles.shape), rtol=0, atol=1e-9)
    assert len(panel.profile_curves) == 4


@pytest.mark.parametrize("scheme", ["naive", "all_sine"])
def test_relative_absolute_schemes_have_large_spread(scheme, state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    change_params(state, compute, scheme=scheme)
    assert panel.data.params.scheme == scheme
    assert np.max(panel.data.spread.spread) > 1.0
    _, y = panel.spread_curve.getData()
    np.testing.assert_array_equal(y, panel.data.spread.spread)


def test_relative_controls(state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    panel.set_options(max_offset=10, references=2)
    assert compute.wait_idle()
    np.testing.assert_array_equal(panel.data.spread.offsets, np.arange(11))
    assert panel.data.profiles.shape == (2, 11)
    with pytest.raises(ValueError, match="references"):
        panel.set_options(references=99)


def test_relative_long_sequence_stays_bounded(state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    change_params(state, compute, seq_len=limits.MAX_SEQ_LEN)
    assert panel.data.positions[-1] <= limits.MAX_SEQ_LEN - 1
    assert panel.data.positions.size * panel.data.spread.offsets.size * 512 <= 2**24
    assert np.all(panel.data.spread.spread <= 1e-6)
    assert "every" in panel.summary_label.text()


# ---------------------------------------------------------------------------
# review regressions: extreme sizes, readable axes and labels


def _inside(item, plot):
    """True if ``item``'s on-screen rectangle lies inside ``plot``'s view box."""
    box = plot.getViewBox().sceneBoundingRect().adjusted(-5, -5, 5, 5)  # text items carry a margin
    return box.contains(item.sceneBoundingRect())


def test_relative_tiny_d_and_offsets_at_a_million_positions(state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    change_params(state, compute, seq_len=limits.MAX_SEQ_LEN, d_model=2)
    panel.set_options(max_offset=1, references=1)
    assert compute.wait_idle()
    assert panel.data.params == state.params
    assert panel.data.spread.offsets.tolist() == [0.0, 1.0]
    assert panel.message_label.isHidden()
    assert float(np.nanmax(panel.data.spread.spread)) < 1e-9  # still relative


def test_uniqueness_distance_axis_shows_plain_distances(state, compute, qtbot):
    # A single sine's nearest distances are 0.005…0.4: the axis must read 0.1…0.4,
    # not 100…400 with a "(x0.001)" tucked into its title.
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme="sine")
    assert float(np.max(panel.data.result.nearest_distance)) < 1
    for plot in (panel.distance_plot, panel.nearest_plot):
        for name in ("left", "bottom"):
            assert "(x" not in plot.getAxis(name).labelString()


@pytest.mark.parametrize("scheme", ["sincos_pair", "harmonic", "sine"])
def test_uniqueness_closest_pair_label_stays_inside_the_plot(scheme, state, compute, qtbot):
    # With every position at the same nearest distance (sin/cos pair, harmonic) the line sits at the
    # top of the plot and the label drawn above it was cut off.
    panel = make(UniquenessPanel, state, compute, qtbot)
    change_params(state, compute, scheme=scheme)
    finish_pending(qtbot, panel)
    label = panel.minimum_line.label
    assert label.isVisible() and label.toPlainText() == "closest pair"
    assert _inside(label, panel.distance_plot)


def test_strided_positions_are_described_with_ordinals(state, compute, qtbot):
    # "every 2th" → "every 2nd position"
    linear = make(LinearRelationPanel, state, compute, qtbot)
    change_params(state, compute, seq_len=2046)
    assert linear.data.stride == 2
    assert "every 2nd position" in linear.summary_label.text() and "2th" not in linear.summary_label.text()
    relative = make(RelativePanel, state, compute, qtbot)
    change_params(state, compute, seq_len=300)
    assert relative.data.position_stride == 2
    assert "every 2nd position" in relative.summary_label.text() and "2th" not in relative.summary_label.text()


def test_relative_update_reuses_its_profile_curves(state, compute, qtbot):
    # Rebuilding the curves and legend on every update cost ~20 ms of the GUI thread.
    panel = make(RelativePanel, state, compute, qtbot)
    curves = list(panel.profile_curves)
    change_params(state, compute, scheme="all_sine")
    assert panel.profile_curves == curves
    np.testing.assert_array_equal(curves[1].getOriginalDataset()[1], panel.data.profiles[1])
    assert len(panel.legend.items) == len(panel.data.references)
    panel.set_options(references=2)  # other reference positions: new curves, legend follows
    assert compute.wait_idle()
    assert len(panel.profile_curves) == 2 and len(panel.legend.items) == 2


def test_uniqueness_table_is_sized_once_per_update(state, compute, qtbot):
    # In ResizeToContents mode every setItem re-measured all columns (12 ms per update).
    from PySide6.QtWidgets import QHeaderView

    panel = make(UniquenessPanel, state, compute, qtbot)
    header = panel.table.horizontalHeader()
    assert all(header.sectionResizeMode(c) != QHeaderView.ResizeMode.ResizeToContents
               for c in range(panel.table.columnCount()))
    change_params(state, compute, scheme="sine", seq_len=1000)
    panel.grab()
    for column in range(panel.table.columnCount()):
        assert panel.table.columnWidth(column) >= panel.table.sizeHintForColumn(column)


def test_uniqueness_table_rewrites_its_cells_and_refits_only_for_wider_texts(state, compute, qtbot):
    panel = make(UniquenessPanel, state, compute, qtbot)
    refits = []
    fit = panel.table.resizeColumnsToContents
    panel.table.resizeColumnsToContents = lambda: (refits.append(True), fit())

    def shown_rows():
        return np.array([[float(text.replace(",", "")) for text in table_row(panel, row)]
                         for row in range(panel.table.rowCount())])

    def expected_rows():
        result = panel.data.result
        return np.array([[a, b, abs(b - a), turn, distance]
                         for (a, b, distance), turn in zip(result.near_repeats, result.offset_turns())])

    def assert_columns_fit():
        panel.grab()
        for column in range(panel.table.columnCount()):
            assert panel.table.columnWidth(column) >= panel.table.sizeHintForColumn(column)

    change_params(state, compute, scheme="sincos_pair", d_model=2, seq_len=60)  # repeats at offsets up to 57
    assert shown_rows() == pytest.approx(expected_rows(), rel=1e-5, abs=1e-4)
    assert_columns_fit()
    refits.clear()
    panel.request_update()  # a new result with the same texts
    assert compute.wait_idle()
    assert refits == []
    change_params(state, compute, seq_len=400)  # offsets up to 377: wider columns
    assert refits == [True]
    assert shown_rows() == pytest.approx(expected_rows(), rel=1e-5, abs=1e-4)
    assert_columns_fit()
    panel.top_box.setValue(3)
    assert compute.wait_idle()
    assert panel.table.rowCount() == 3 and shown_rows() == pytest.approx(expected_rows(), rel=1e-5, abs=1e-4)


def test_relative_axes_show_plain_numbers(state, compute, qtbot):
    panel = make(RelativePanel, state, compute, qtbot)
    change_params(state, compute, d_model=7)  # spread 0.003: was drawn as 1…3 "(x0.001)"
    for plot in (panel.spread_plot, panel.profile_plot):
        for name in ("left", "bottom"):
            assert "(x" not in plot.getAxis(name).labelString()


def test_magnitude_single_position_still_draws_the_embedding_line(state, compute, qtbot):
    panel = make(MagnitudePanel, state, compute, qtbot)
    change_params(state, compute, scheme="naive", seq_len=1, d_model=2)
    x, y = panel.embedding_curve.getOriginalDataset()
    assert x[-1] - x[0] >= 1  # a line from 0 to 0 is not drawn at all
    np.testing.assert_allclose(y, math.sqrt(2))


@pytest.mark.parametrize("panel_name", ["uniqueness", "magnitude", "relative", "addition", "spectrum"])
def test_an_update_leaves_nothing_to_move_when_the_paint_starts(panel_name, state, compute, qtbot):
    # pyqtgraph applies new view ranges, and turns the labels that follow the
    # view (on lines, such as "N = 128"), when a paint starts. Done there,
    # they marked the plot dirty again and Qt painted it twice per update
    # (3-8 ms each); each panel now does it at the end of its update.
    panel_class = next(cls for cls in panel_classes() if cls.panel_id == panel_name)
    panel = make(panel_class, state, compute, qtbot)
    scene = panel.canvas.scene()
    change_params(state, compute, d_model=256)  # the first update may still meet the layout of the new panel
    finish_pending(qtbot, panel)
    for d_model in (510, 512):
        change_params(state, compute, d_model=d_model)
        before = [item.sceneTransform() for item in scene.items()]
        scene.prepareForPaint()
        assert [item.sceneTransform() for item in scene.items()] == before


def test_spectrum_follows_the_view_only_for_thousands_of_components(state, compute, qtbot, monkeypatch):
    # Clipping to the view and downsampling re-plot each item on every change of the
    # view's range: three times per update, 10 ms at 256 components, drawn whole anyway.
    from posenc_gui.views.spectrum import MAX_MARKERS, SpectrumPanel

    panel = make(SpectrumPanel, state, compute, qtbot)
    items = [panel.step_curve, panel.total_curve, *panel.scatter.values()]
    assert panel.data.n_components <= MAX_MARKERS
    assert not any(item.opts["clipToView"] or item.opts["autoDownsample"] for item in items)
    change_params(state, compute, scheme="all_sine", d_model=4096)
    assert panel.data.n_components > MAX_MARKERS
    assert all(item.opts["clipToView"] and item.opts["autoDownsample"] for item in items)
    # The key above the plot is laid out again only when it says something new.
    calls = []
    monkeypatch.setattr(panel.wave_key, "setText", lambda text: calls.append(text))
    change_params(state, compute, base=9000.0)
    assert calls == []
    change_params(state, compute, scheme="naive")  # no periodic column: the key says so instead
    assert len(calls) == 1 and "not periodic: no wavelength" in calls[0] and "●" not in calls[0]


def test_the_uniqueness_view_encodes_its_positions_once(monkeypatch):
    # Its typical norm comes with the analysis; encoding the positions again cost 2 ms per update.
    from posenc_gui.model import EncodingParams, clear_caches
    from posenc_gui.model.analyses import analysis
    from posenc_gui.model.core import params as params_module
    from posenc_gui.model.panels.panel_data import uniqueness_data

    encoded = []
    for module in (analysis, params_module):  # the analysis's own encode, and the shared cache's
        real = module.encode
        monkeypatch.setattr(module, "encode",
                            lambda *args, real=real, **kwargs: encoded.append(args) or real(*args, **kwargs))
    clear_caches()
    params = EncodingParams(seq_len=128, d_model=512)
    data = uniqueness_data(params, 10, True)
    assert len(encoded) == 1
    norms = analysis.pe_norms(params.scheme, np.arange(128.0), 512, **params.scheme_kwargs())
    assert data.typical_norm == float(np.median(norms))


@pytest.mark.parametrize("panel_id", ["uniqueness", "magnitude", "relative", "spectrum", "addition"])
def test_a_d_model_step_keeps_the_axes_and_the_data_inside_them(panel_id, state, compute, qtbot):
    # The ranges snap outwards to round values: a step of d_model moves the
    # data a little and every axis keeps its range, so it keeps its laid-out
    # labels (an axis lays them out again for a new range or a new size); no
    # data point may fall outside its plot.
    import pyqtgraph as pg

    panel_class, = (cls for cls in panel_classes() if cls.panel_id == panel_id)
    panel = make(panel_class, state, compute, qtbot)
    plots = [item for item in panel.canvas.scene().items() if isinstance(item, pg.PlotItem)
             and not isinstance(item, pg.ColorBarItem)]

    def axis_ranges():
        return [tuple(plot.getAxis(side).range) for plot in plots for side in ("left", "bottom")]

    change_params(state, compute, d_model=510)
    panel.grab()
    ranges = axis_ranges()
    for d_model in (512, 510, 512):
        change_params(state, compute, d_model=d_model)
        panel.grab()
        assert axis_ranges() == ranges
        for plot in plots:
            (x_low, x_high), (y_low, y_high) = plot.getViewBox().viewRange()
            for item in plot.listDataItems():
                if not isinstance(item, (pg.PlotDataItem, pg.PlotCurveItem, pg.ScatterPlotItem)):
                    continue  # the cost bars: fixed heights in a fixed range
                x, y = item.getData()
                if x is None or not len(x):
                    continue
                shown = np.isfinite(x) & np.isfinite(y)
                assert x_low <= x[shown].min() and x[shown].max() <= x_high, (plot.titleLabel.text, "x")
                assert y_low <= y[shown].min() and y[shown].max() <= y_high, (plot.titleLabel.text, "y")


@pytest.mark.parametrize("panel_class, plot_name, entries", [
    (MagnitudePanel, "plot", ["‖p_i‖ (positional encoding)", "typical ‖e_i‖ = σ·√d"]),
    (RelativePanel, "profile_plot", ["r = 0", "r = 21", "r = 42", "r = 63"]),
])
def test_a_legend_sits_under_its_plot_and_covers_no_curve(panel_class, plot_name, entries, state, compute, qtbot):
    # Over the view box, legends hid the start of the magnitude's dashed embedding line
    # and the ends of the relative panel's rising profiles (naive scheme).
    panel = make(panel_class, state, compute, qtbot)
    plot = getattr(panel, plot_name)
    view_rect = plot.getViewBox().sceneBoundingRect()
    legend_rect = panel.legend.sceneBoundingRect()
    assert legend_rect.height() > 0 and legend_rect.top() >= plot.sceneBoundingRect().bottom() - 1
    assert view_rect.left() - 60 <= legend_rect.left() and legend_rect.right() <= plot.sceneBoundingRect().right()
    assert [label.text for _, label in panel.legend.items] == entries


def test_sampled_analysis_figures_say_so_in_their_titles(state, compute, qtbot):
    # The message bar is not part of an exported figure: a figure of sampled positions says so itself.
    from posenc_gui.model import AxisSample
    
    magnitude = make(MagnitudePanel, state, compute, qtbot)
    relative = make(RelativePanel, state, compute, qtbot)
    magnitude_title, spread_title = magnitude.plot.titleLabel, relative.spread_plot.titleLabel
    assert label_shown_text(magnitude_title) == "sinusoidal: 128 positions × d_model 512, base 10000, interleaved"
    assert "every" not in label_shown_text(spread_title)
    change_params(state, compute, seq_len=1_048_576)
    stride = magnitude.data.sample.stride
    assert stride > 1 and magnitude.data.positions[1] == stride
    every = AxisSample(0, stride, 1).describe("position")  # "every 1,024th position"
    assert label_shown_text(magnitude_title) == (
        f"sinusoidal: 1,048,576 positions × d_model 512, base 10000, interleaved, {every} and the last")
    p_stride = relative.data.position_stride
    assert p_stride > 1 and relative.data.positions[1] - relative.data.positions[0] == p_stride
    every = AxisSample(0, p_stride, 1).describe("position")
    assert label_shown_text(spread_title).endswith(f"PE(p)·PE(p+k), p: {every}")
    change_params(state, compute, seq_len=128)
    assert label_shown_text(magnitude_title) == "sinusoidal: 128 positions × d_model 512, base 10000, interleaved"
    assert "every" not in label_shown_text(spread_title)


