"""Walkthrough, spectrum, addition and scorecard docks: change the state, check what they hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from posenc_gui.model import SCHEMES, EncodingParams, wavelengths
from posenc_gui.model.analyses.addition import projection_cost
from posenc_gui.model.analyses.analysis import uniqueness
from posenc_gui.model.analyses.scorecard import score_scheme
from posenc_gui.views.addition import AdditionPanel
from posenc_gui.views.base import Panel
from posenc_gui.views.host import PanelHost
from posenc_gui.views.scorecard import COLUMNS, ScorecardPanel
from posenc_gui.views.spectrum import SpectrumPanel
from posenc_gui.views.walkthrough import STEPS, WalkthroughPanel
from helpers_panels import change_params, settle_params, show_panel
from waiting import finish_pending


def settle(qtbot, widget, compute):
    """``widget`` (a panel or a window of them) on screen, what it asked for computed."""
    show_panel(qtbot, widget, (1000, 700), settle=False)
    assert compute.wait_idle()


class StubPanel(Panel):
    """A stand-in for the docks the walkthrough raises; records the options it is given."""

    help_text = "stub"

    def __init__(self, state, compute, panel_id):
        super().__init__(state, compute)
        self.setObjectName(f"stub-{panel_id}")
        self.calls: list[dict] = []

    def apply_options(self, **values):
        self.calls.append(values)

    def export_data(self):
        return {"arrays": {}, "meta": {}}


class StandInWindow(QMainWindow):
    """A small main window with the docks the walkthrough needs: a :class:`PanelHost` and nothing more."""

    def __init__(self, state, compute):
        super().__init__()
        self._panels, self.docks = {}, {}
        self.raised: list[tuple[str, str | None]] = []
        self.walkthrough = WalkthroughPanel(state, compute, self)
        self._add("walkthrough", self.walkthrough)
        for step in STEPS:
            if step.panel_id not in self._panels:
                self._add(step.panel_id, StubPanel(state, compute, step.panel_id))
        self.walkthrough.attach_host(self)

    def _add(self, panel_id, panel):
        dock = QDockWidget(panel_id, self)
        dock.setWidget(panel)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._panels[panel_id] = panel
        self.docks[panel_id] = dock

    @property
    def panels(self):
        return StandInPanels(self._panels)

    def raise_panel(self, panel_id, keep_in_view=None):
        self.raised.append((panel_id, keep_in_view))
        self.docks[panel_id].show()
        self.docks[panel_id].raise_()

    def panel_shown(self, panel_id):
        return self.docks[panel_id].isVisible()


class StandInPanels(dict):
    """The stand-in window's panels, all built."""

    def built(self):
        return dict(self)


# --------------------------------------------------------------------------- walkthrough


def test_next_applies_each_step_and_back_returns(qtbot, state, compute):
    window = StandInWindow(state, compute)
    assert isinstance(window, PanelHost)
    settle(qtbot, window, compute)
    walk = window.walkthrough
    assert walk.index == -1 and f"{len(STEPS)} steps" in walk.counter_label.text()
    start = state.params
    walk.next()
    state.flush()
    assert state.params.scheme == STEPS[0].params["scheme"]
    assert window.raised[-1] == (STEPS[0].panel_id, "walkthrough") and STEPS[0].panel_id == "permutation"
    assert {"position": False, "causal": False} in window.panels["permutation"].calls
    assert walk.counter_label.text() == f"Step 1 of {len(STEPS)}"
    walk.next()
    state.flush()
    assert state.params.scheme == "naive" and window.raised[-1][0] == "magnitude"
    walk.next()
    state.flush()
    assert state.params.scheme == "normalized"
    walk.back()
    state.flush()
    assert state.params.scheme == "naive" and walk.counter_label.text() == f"Step 2 of {len(STEPS)}"
    walk.back()
    walk.back()
    assert walk.index == -1 and not walk.back_button.isEnabled()
    assert start.scheme == "sinusoidal"


def test_every_step_sets_its_scheme_and_raises_its_dock(qtbot, state, compute):
    window = StandInWindow(state, compute)
    settle(qtbot, window, compute)
    walk = window.walkthrough
    for number, step in enumerate(STEPS, start=1):
        walk.next()
        state.flush()
        assert walk.index == number - 1
        assert state.params.scheme == step.params["scheme"]
        for name, value in step.params.items():
            assert state.params.as_dict()[name] == value
        assert window.raised[-1] == (step.panel_id, "walkthrough")
        assert 40 < len(step.text) < 520  # two or three sentences
        assert walk.title_label.text() == step.title
    assert not walk.next_button.isEnabled()
    assert {panel_id for panel_id, _ in window.raised} >= {"permutation", "magnitude", "uniqueness",
                                                         "linear_relation", "addition", "spectrum", "scorecard"}


def test_user_can_change_parameters_at_a_step(qtbot, state, compute):
    window = StandInWindow(state, compute)
    settle(qtbot, window, compute)
    walk = window.walkthrough
    walk.go_to(4)  # sin/cos pair
    state.flush()
    assert compute.wait_idle()
    assert walk.score is not None and walk.score.scheme == "sincos_pair"
    assert walk.score.closest_pair == (0.0, 44.0)
    assert "0 vs 44" in walk.measured_label.text()
    change_params(state, compute, seq_len=1000)
    assert walk.index == 4 and state.params.seq_len == 1000  # the step did not override the user
    assert walk.score.closest_pair == (0.0, 710.0)  # the measured line follows the new length
    walk.go_to(4)  # "Reset this step"
    state.flush()
    assert state.params.seq_len == 128


def test_walkthrough_without_a_main_window_does_not_fail(qtbot, state, compute):
    walk = WalkthroughPanel(state, compute)
    settle(qtbot, walk, compute)
    walk.next()
    state.flush()
    assert state.params.scheme == STEPS[0].params["scheme"] and walk.raised == []
    with pytest.raises(ValueError, match="index"):
        walk.go_to(len(STEPS))


def test_walkthrough_in_the_real_window(make_window):
    window = make_window(restore=False)
    walk = window.panels["walkthrough"]
    window.raise_panel("walkthrough")
    for step in STEPS[:5]:
        walk.next()
        window.state.flush()
        assert window.state.params.scheme == step.params["scheme"]
        assert window.docks[step.panel_id].isVisible() and not window.docks[step.panel_id].visibleRegion().isEmpty()
        assert walk.isVisible()  # the walkthrough stays on screen next to the dock it raised
    assert window.compute.wait_idle()
    assert window.panels["uniqueness"].state.params.scheme == "sincos_pair"


# --------------------------------------------------------------------------- spectrum


def test_spectrum_panel_follows_the_parameters(qtbot, state, compute):
    panel = SpectrumPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.data.n_components == 256
    change_params(state, compute, d_model=64, base=500.0, seq_len=300)
    data = panel.data
    assert data.params.d_model == 64 and data.n_components == 32
    expected = wavelengths("sinusoidal", 64, np.arange(0, 64, 2), base=500.0)
    np.testing.assert_allclose(data.wavelength, expected)
    datasets = [item.getOriginalDataset()[1] for item in panel.scatter.values()]
    shown = np.concatenate([y for y in datasets if y is not None])
    np.testing.assert_allclose(np.sort(shown), np.sort(expected))
    assert panel.seq_line.value() == pytest.approx(math.log10(300))
    assert "32 components" in panel.summary_label.text()
    exported = panel.export_data()
    assert exported["arrays"]["spectrum"].shape == (32, 7)
    assert "2π" in panel.help_text and "base" in panel.help_text


def test_spectrum_panel_explains_linear_schemes(qtbot, state, compute):
    panel = SpectrumPanel(state, compute)
    settle(qtbot, panel, compute)
    change_params(state, compute, scheme="naive")
    assert panel.data.kinds == ("linear",)
    assert panel.message_label.isVisible() and "no periodic" in panel.message_label.text()
    # the figure says it does not apply, and draws nothing (no stray "ω per position = 1 rad" dot)
    assert "not periodic: no wavelength" in panel.wave_key.text
    assert not panel.wave_plot.isVisible() and not panel.phase_plot.isVisible()
    assert panel.summary_label.text().startswith("not periodic: no wavelength")
    change_params(state, compute, scheme="sinusoidal")
    assert panel.wave_plot.isVisible() and panel.phase_plot.isVisible()
    assert "not periodic" not in panel.wave_key.text and "ω per position" in panel.phase_key.text


# --------------------------------------------------------------------------- addition


def test_addition_panel_follows_parameters_and_scale(qtbot, state, compute):
    panel = AdditionPanel(state, compute)
    settle(qtbot, panel, compute)
    assert panel.data.cost == projection_cost(512, 128)
    change_params(state, compute, d_model=64, seq_len=40, scheme="naive")
    data = panel.data
    assert data.params.scheme == "naive" and data.cost.params_add == 64 * 64
    assert data.cost.params_concat == 2 * 64 * 64
    assert panel.cost_bars.opts["height"] == [1.0, 2.0, 1.0, 2.0]
    assert "4,096" in panel.summary_label.text() and "8,192" in panel.summary_label.text()
    before = data.current.cosine_mean[0]
    state.set_view(embedding_scale=50.0)
    assert compute.wait_idle()
    assert panel.data.scale == 50.0 and panel.data.current.cosine_mean[0] > before
    np.testing.assert_array_equal(panel.data.sweep.term_rms, data.sweep.term_rms)  # σ moves only its line
    x, y = panel.term_curves["p·p"].getOriginalDataset()
    assert len(x) == data.sweep.scales.size
    exported = panel.export_data()
    assert exported["arrays"]["scale_sweep"].shape == (data.sweep.scales.size, 7)
    with pytest.raises(ValueError, match="embedding_scale"):
        state.set_view(embedding_scale=0.0)


# --------------------------------------------------------------------------- scorecard


def test_scorecard_panel_is_live(qtbot, state, compute):
    change_params(state, compute, d_model=32)
    panel = ScorecardPanel(state, compute)
    settle(qtbot, panel, compute)
    # the Scorecard scores the tables, and RoPE's rotation as its cos/sin table; every scheme has a row for its
    # logit, but a model file's table while no model is open (learned_file)
    tables = sum(bool(info.provides & {"table", "angles"}) and info.sizes is None for info in SCHEMES.values())
    assert panel.data is not None and len(panel.data.scores) == tables
    assert panel.table.rowCount() == len(SCHEMES) - 1
    # ALiBi gives no table: its table criteria do not apply, its logit is measured (the paper's causal bias)
    assert panel.cell_text("alibi", "bounded_within") == "— no table"
    assert panel.cell_text("alibi", "logit: symmetric") == "✗ no (causal mask)"
    assert panel.cell_text("alibi", "logit: bounded").startswith("✗ no (×")
    # N = 128: every pair of positions is measured, so "offset only" is proved over all of them (the tooltip says)
    assert panel.cell_text("alibi", "logit: offset only") == "✓ yes"
    assert "proved over query and key positions 0…127" in panel.table.item(
        panel.data.rows.index("alibi"), COLUMNS.index("logit: offset only")).toolTip()
    for criterion in ("bounded_within", "bounded_past", "deterministic", "generalizes", "exact_tk"):
        assert panel.cell_text("rope", criterion).startswith("✓"), criterion  # a rotation: T_k exact
    assert panel.data.score("rope").tk_residual < 1e-12
    assert panel.cell_text("sinusoidal", "bounded_within").startswith("✓")
    assert panel.cell_text("sinusoidal", "bounded_past").startswith("✓")
    assert panel.cell_text("naive", "bounded_within").startswith("✗")
    assert panel.cell_text("normalized", "bounded_within").startswith("✓")
    assert panel.cell_text("normalized", "bounded_past").startswith("✗")
    assert panel.cell_text("sine", "unique").startswith("✗")
    assert panel.cell_text("sincos_pair", "unique").startswith("✗ 0 vs 44")
    assert panel.cell_text("all_sine", "exact_tk").startswith("✗")
    # longer sequence: the model's closest pair of the sin/cos pair moves to 0 vs 710
    change_params(state, compute, seq_len=800)
    finish_pending(qtbot, panel)  # the scorecard measures after a pause
    assert compute.wait_idle()
    assert panel.data.params.seq_len == 800
    closest = uniqueness("sincos_pair", np.arange(800.0), 32, top=1).closest_pair
    assert panel.cell_text("sincos_pair", "unique").startswith(f"✗ 0 vs {closest[1]:.0f}")
    # changing only the scheme re-highlights, without measuring again
    measured = panel.data
    change_params(state, compute, scheme="harmonic")
    assert panel.data is measured
    assert panel.table.item(5, 0).text().startswith("▶")
    exported = panel.export_data()
    assert exported["arrays"]["verdicts"].shape == (tables, 6)
    assert exported["meta"]["rows"][6] == "sinusoidal" and exported["arrays"]["verdicts"][6].all()


def test_hidden_scorecard_measures_when_shown(qtbot, state, compute):
    panel = ScorecardPanel(state, compute)
    qtbot.addWidget(panel)
    assert panel.data is None  # hidden: nothing measured
    change_params(state, compute, d_model=16)
    finish_pending(qtbot, panel)  # the pause after the change is over
    assert compute.wait_idle() and panel.data is None
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle()
    assert panel.data.params == EncodingParams(d_model=16)


def test_every_dock_has_help_with_a_formula():
    for cls in (SpectrumPanel, AdditionPanel, ScorecardPanel, WalkthroughPanel):
        assert len(cls.help_text) > 200
        assert any(token in cls.help_text for token in ("=", "·"))
        assert cls.panel_id and cls.title


def test_hidden_addition_panel_catches_up_when_shown(qtbot, state, compute):
    panel = AdditionPanel(state, compute)
    qtbot.addWidget(panel)
    change_params(state, compute, d_model=32, scheme="harmonic")
    assert panel.data is None  # hidden: no work
    exported = panel.export_data()  # export still works, computed on demand
    assert exported["meta"]["cost"]["params_add"] == 32 * 32
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle()
    assert panel.data.params == EncodingParams("harmonic", d_model=32)


# --------------------------------------------------------------------------- review regressions


def _inside(item, plot):
    box = plot.getViewBox().sceneBoundingRect().adjusted(-5, -5, 5, 5)  # text items carry a margin
    return box.contains(item.sceneBoundingRect())


def test_decade_ticks_label_at_most_a_few_decades():
    from posenc_gui.views.plotkit.ticks import MAX_DECADE_LABELS, decade_ticks

    major, minor = decade_ticks(-3.3, 5.3)  # nine decades, as the four-term plot spans
    labelled = [value for value, text in major if text]
    assert 2 <= len(labelled) <= MAX_DECADE_LABELS
    assert (0.0, "1") in major  # 1 stays labelled
    every_decade = {round(v, 9) for v, _ in major + minor if float(v).is_integer()}
    assert every_decade == {float(k) for k in range(-3, 6)}  # unlabelled decades keep a tick
    few_major, few_minor = decade_ticks(-0.5, 2.5)  # few decades: all labelled, with 2…9 ticks
    assert [text for _, text in few_major] == ["1", "10", "100"]
    assert len(few_minor) > 8


def test_spectrum_phase_labels_do_not_overlap(qtbot, state, compute):
    # At the default window size the "2π (one full turn)" and "0.1 rad" labels were drawn on
    # top of each other between their two lines.
    panel = SpectrumPanel(state, compute)
    qtbot.addWidget(panel)
    panel.resize(960, 380)  # the dock's size in the default 1500 × 950 window
    panel.show()
    qtbot.waitExposed(panel)
    for values in ({}, {"seq_len": 2, "d_model": 2}, {"seq_len": 1_048_576, "d_model": 8192}):
        if values:
            change_params(state, compute, **values)
        assert compute.wait_idle()
        finish_pending(qtbot, panel)
        wrap, static = panel.wrap_line.label, panel.static_line.label
        assert not wrap.sceneBoundingRect().intersects(static.sceneBoundingRect()), values
        assert _inside(wrap, panel.phase_plot) and _inside(static, panel.phase_plot), values


def test_addition_terms_axis_is_readable_and_both_cross_terms_show(qtbot, state, compute):
    panel = AdditionPanel(state, compute)
    settle(qtbot, panel, compute)
    major = panel.terms_plot.getAxis("left")._tickLevels[0]
    assert 2 <= len([text for _, text in major if text]) <= 5
    # e·p and p·e have the same size: drawn the same way, one hides the other
    pens = {name: panel.term_curves[name].opts["pen"] for name in ("e·p", "p·e")}
    assert pens["e·p"].style() != pens["p·e"].style()


def test_linear_relation_step_sets_the_interleaved_layout(qtbot, state, compute):
    # T_k is block-diagonal only in the interleaved layout; the step says so, so it sets it.
    window = StandInWindow(state, compute)
    settle(qtbot, window, compute)
    change_params(state, compute, layout="halves")
    index = next(i for i, step in enumerate(STEPS) if step.panel_id == "linear_relation")
    window.walkthrough.go_to(index)
    assert state.params.options["layout"] == "interleaved" and state.params.scheme == "sinusoidal"


def test_measured_line_says_what_each_number_is(qtbot, state, compute):
    from posenc_gui.model.analyses.scorecard import CRITERIA
    from posenc_gui.views.scorecard import HEADERS

    window = StandInWindow(state, compute)
    settle(qtbot, window, compute)
    walkthrough = window.walkthrough
    walkthrough.go_to(4)  # sin/cos pair
    assert compute.wait_idle()
    text = walkthrough.measured_label.text()
    assert walkthrough.score is not None and walkthrough.score.scheme == "sincos_pair"
    for header in (HEADERS[key] for key in CRITERIA):  # the table criteria of the wish list
        name, _, detail = header.partition("\n")
        assert name in text
        if detail:
            assert detail in text.replace("&amp;", "&")  # the explanation of its numbers
    assert "0 vs 44" in text


def test_a_failed_measurement_message_clears_when_the_next_one_succeeds(qtbot, state, compute, monkeypatch):
    import posenc_gui.views.walkthrough as walkthrough_module

    window = StandInWindow(state, compute)
    settle(qtbot, window, compute)
    real = walkthrough_module.measure_scheme

    def broken(params, unique_work):
        raise ValueError("seq_len: measurement refused")

    monkeypatch.setattr(walkthrough_module, "measure_scheme", broken)
    window.walkthrough.go_to(3)
    assert compute.wait_idle()
    assert window.walkthrough.message_label.isVisible()
    assert "refused" in window.walkthrough.message_label.text()
    monkeypatch.setattr(walkthrough_module, "measure_scheme", real)
    change_params(state, compute, seq_len=100)
    assert window.walkthrough.score is not None and window.walkthrough.score.scheme == "sine"
    assert window.walkthrough.message_label.isHidden()


@pytest.mark.parametrize(("values", "present", "absent"), [
    ({"scheme": "harmonic"}, "harmonic", "base"),
    ({"scheme": "naive"}, "naive", "base"),
    ({"scheme": "sinusoidal", "layout": "halves"}, "halves", None),
])
def test_spectrum_title_names_only_the_parameters_the_scheme_has(qtbot, state, compute, values, present, absent):
    panel = SpectrumPanel(state, compute)
    settle(qtbot, panel, compute)
    change_params(state, compute, **values)
    title = panel.figure_title.text  # the figure's title, above the plots or the sentence that replaces them
    assert present in title and (absent is None or absent not in title)


def test_spectrum_component_axis_has_integer_ticks_for_few_components(qtbot, state, compute):
    panel = SpectrumPanel(state, compute)
    settle(qtbot, panel, compute)
    change_params(state, compute, d_model=7)  # four components: ticks 0, 1, 2, 3 (not 0.5, 1.5, …)
    assert panel.data.n_components == 4
    assert [v for v, _ in panel.phase_plot.getAxis("bottom")._tickLevels[0]] == [0.0, 1.0, 2.0, 3.0]
    assert "single column" in panel.phase_plot.getAxis("bottom").labelText


def test_cost_bar_labels_stay_short_for_huge_sizes():
    from posenc_gui.views.addition import _short

    cost = projection_cost(8192, 1_048_576)
    labels = [_short(v) for v in (cost.params_add, cost.params_concat, cost.macs_add, cost.macs_concat)]
    assert labels == ["67.1 M", "134.2 M", "70.4 T", "140.7 T"]  # not "70368744.2 M"
    assert _short(262_144) == "262,144" and _short(33_554_432) == "33.6 M" and _short(12_000_000_000) == "12.0 G"


def test_addition_error_clears_when_the_next_update_succeeds(qtbot, state, compute, monkeypatch):
    panel = AdditionPanel(state, compute)
    settle(qtbot, panel, compute)
    real = AdditionPanel.model_function

    def broken(*args, **kwargs):
        raise ValueError("d_model: refused for the test")

    monkeypatch.setattr(AdditionPanel, "model_function", broken)
    change_params(state, compute, d_model=32)
    assert panel.message_label.isVisible() and "refused" in panel.message_label.text()
    monkeypatch.setattr(AdditionPanel, "model_function", real)
    change_params(state, compute, d_model=64)
    assert panel.data.params.d_model == 64
    assert panel.message_label.isHidden()


def test_spectrum_with_thousands_of_components_draws_lines_and_long_log_axes_skip_minor_ticks(
        qtbot, state, compute):
    # 8192 markers (all-sine at d = 8192) took 30–140 ms of the GUI thread per update, and the
    # 2…9 ticks of a 6-decade axis (each also a grid line) another 25 ms per repaint.
    from posenc_gui.views.plotkit import decade_ticks
    from posenc_gui.views.spectrum import MAX_MARKERS

    panel = SpectrumPanel(state, compute)
    settle(qtbot, panel, compute)
    change_params(state, compute, scheme="all_sine", d_model=2 * MAX_MARKERS)
    data = panel.data
    shown = []
    for category, item in panel.scatter.items():
        assert item.opts["symbol"] is None and item.opts["pen"] is not None
        x, y = item.getOriginalDataset()
        mask = data.category == category
        np.testing.assert_array_equal(y[mask], data.wavelength[mask])  # exact values, not resampled
        assert np.all(np.isnan(y[~mask]))
        shown.append(np.count_nonzero(np.isfinite(y)))
    assert sum(shown) == data.n_components
    change_params(state, compute, d_model=64)  # few components: markers again
    assert all(item.opts["symbol"] == "o" for item in panel.scatter.values())
    long_minor = decade_ticks(-3.6, 2.4)[1]
    assert all(float(v).is_integer() for v, _ in long_minor)


@pytest.mark.parametrize("scheme", ["normalized", "sine"])
def test_walkthrough_says_bounded_as_the_scorecard_measures_it(scheme):
    step = next(step for step in STEPS if step.params.get("scheme") == scheme)
    words = score_scheme(EncodingParams(scheme, 128, 64)).bounded_words
    assert words in step.text and words in SCHEMES[scheme].summary


@pytest.fixture
def first_step(qtbot, state, compute) -> WalkthroughPanel:
    """The walkthrough on screen at its first step, that step's parameters computed."""
    panel = show_panel(qtbot, WalkthroughPanel(state, compute), None, settle=False)
    panel.go_to(0)
    assert compute.wait_idle()
    return panel


def test_measured_now_scores_a_rotation_and_measures_its_logit(first_step, state, compute):
    # RoPE's step says the row measures the rotation itself: its angles, as the Scorecard's RoPE row does
    from posenc_gui.model.attention.logit_properties import logit_properties

    panel = first_step
    assert "Measured now" in panel.measured_label.text() and panel.score is not None
    change_params(state, compute, scheme="rope", d_model=64)
    text = panel.measured_label.text()
    assert panel.score is not None and panel.score.scheme == "rope" and panel.score.tk_exact
    expected = logit_properties(state.params).verdicts()
    assert panel.logit.verdicts() == expected
    assert f"<b>logit: decays</b></td><td style=\"padding-left:10px\">{expected['decays']}" in text
    assert not panel.message_label.isVisible()


def test_a_score_on_its_way_when_the_scheme_changes_is_dropped(first_step, state, compute):
    panel = first_step
    assert state.update(d_model=96) is None
    state.flush()  # a score of d_model 96 is on its way …
    assert state.update(scheme="rope", d_model=64) is None
    state.flush()  # … when the scheme changes
    assert compute.wait_idle()
    assert panel.score.scheme == "rope" and panel.logit.params == state.params


def go_to_step(window, title: str):
    """The window's walkthrough at the step titled ``title``, its parameters computed; returns the walkthrough."""
    walk = window.panels["walkthrough"]
    walk.go_to(next(i for i, step in enumerate(STEPS) if step.title == title))
    settle_params(window.state, window.compute)
    return walk


def test_the_causal_step_shows_nope_seeing_order_through_the_mask(make_window):
    window = make_window(restore=False)
    walk = go_to_step(window, "No encoding, and a causal mask")
    demo = window.panels["permutation"]
    assert window.state.params.scheme == "nope" and demo.current_options()["causal"] is True
    comparison = demo.demo.with_pe
    assert comparison.trace_a.causal and comparison.permutation is not None
    # permuted words, no position added: with the mask the outputs differ by far more than rounding
    assert comparison.max_abs_diff_output > 0.1
    assert walk.logit is not None and walk.logit.params.scheme == "nope"
    # the first step takes the mask off again: attention is blind to order there
    walk.go_to(0)
    settle_params(window.state, window.compute)
    assert demo.current_options()["causal"] is False and demo.demo.without_pe.max_abs_diff_output < 1e-12


def test_the_alibi_step_measures_a_bias_live(make_window):
    window = make_window(restore=False)
    walk = go_to_step(window, "ALiBi: bias the logits")
    assert window.state.params.scheme == "alibi"
    # a bias has no scorecard row: the measured block says so, and measures its logit
    assert walk.score is None and walk.logit is not None
    verdicts = walk.logit.verdicts()
    assert walk.logit.offset_only and not walk.logit.bounded and not walk.logit.symmetric
    # slope 1/2: −r/2 ≤ −ln 100 from r = 2·ln 100 = 9.21…, the first integer distance 10
    assert walk.logit.decay_distance == 10
    assert verdicts["decays"] in walk.measured_label.text() and "none: " in walk.measured_label.text()
    logits = window.panels["logits"]
    assert logits.data is not None and logits.data.bias is not None
