"""Exported figures are finished: titles with the parameters, captions with the numbers, marks explained,
labelled axes, one colour rule, no widgets in a figure, banners that wrap."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractSlider, QComboBox, QLabel

from posenc_gui import export
from posenc_gui.cli.parameters import panel_options
from posenc_gui.views import panel_classes
from posenc_gui.views.plotkit import DIVERGING, SEQUENTIAL, MatrixPlot, new_layout_widget
from helpers_axes import drawn_labels
from helpers_panels import settle_panel, show_panel
from waiting import TIMEOUT_S, finish_pending

CLASSES = {cls.panel_id: cls for cls in panel_classes()}
SVG = "{http://www.w3.org/2000/svg}"
#: Parameters none of which is a default, so a figure that names them names the current ones …
CHOSEN = {"scheme": "sinusoidal", "seq_len": 300, "d_model": 64, "base": 500.0, "layout": "halves"}
#: … and the title that says them.
CHOSEN_TITLE = "sinusoidal: 300 positions × d_model 64, base 500, halves"
#: At most this many labels on a colour bar.
MAX_COLORBAR_LABELS = 9


def make_panel(qtbot, panel_id, state, compute, size=(960, 720)):
    """Panel ``panel_id`` laid out off screen as an export lays it out, showing ``state``'s parameters."""
    panel = show_panel(qtbot, CLASSES[panel_id](state, compute), size, settle=False, on_screen=False)
    settle_panel(qtbot, panel)
    return panel


def svg_text(data: bytes) -> str:
    """Every text of an SVG, joined, whitespace collapsed."""
    root = ET.fromstring(data)
    parts = [" ".join(t.itertext()) for t in root.iter(f"{SVG}text")]  # a run's further words are <tspan>s
    return " ".join(" ".join(parts).split())


#: For a panel that needs a rotation: chosen RoPE parameters and their title.
CHOSEN_ROPE = {"scheme": "rope", "seq_len": 300, "d_model": 64, "rope_theta": 500.0, "pairing": "interleaved"}
CHOSEN_ROPE_TITLE = "rope: 300 positions × d_model 64, θ 500, interleaved"
#: For a panel that needs a bias: chosen ALiBi parameters and their title.
CHOSEN_BIAS = {"scheme": "alibi", "seq_len": 300, "d_model": 64, "n_heads": 12, "head": 3, "symmetric": True}
CHOSEN_BIAS_TITLE = "alibi: 300 positions × d_model 64, 12 heads, head 3, symmetric"
#: What a figure says about the encoding of :data:`CHOSEN`: its title, or for two panels their own words.
REQUIRED_WORDS = {
    "permutation": ["Sinusoidal (Vaswani et al.)", "base 500", "halves"],  # three words through a head of its own d
    "scorecard": ["N = 300", "d_model = 64", "base 500 (sinusoidal, all_sine)"],  # every scheme, at these sizes
}


# ------------------------------------------------------------------ titles
@pytest.mark.parametrize("panel_id", list(CLASSES))
def test_every_exported_figure_names_its_scheme_and_parameters(qtbot, state, compute, panel_id, tmp_path):
    panel = make_panel(qtbot, panel_id, state, compute)
    if panel_id == "decoder":  # a model file's figure: it names the model, the text, the layer and the head
        from test_decoder_panel import TEXT, _tokenizer, tiny_decoder

        panel.apply_options(decoder=str(tiny_decoder(tmp_path / "tiny", _tokenizer())), text=TEXT, layer=1)
        settle_panel(qtbot, panel)
        text = svg_text(export.export_bytes(panel, "svg"))
        for words in ("tiny", TEXT[:20], "layer 1, head 0"):
            assert words in text, (words, text[:400])
        return
    requires = CLASSES[panel_id].requires
    chosen, title = ((CHOSEN_ROPE, CHOSEN_ROPE_TITLE) if "rotation" in requires else
                     (CHOSEN_BIAS, CHOSEN_BIAS_TITLE) if "bias" in requires else (CHOSEN, CHOSEN_TITLE))
    assert state.update(**chosen) is None
    settle_panel(qtbot, panel)
    text = svg_text(export.export_bytes(panel, "svg"))
    for words in REQUIRED_WORDS.get(panel_id, [title]):
        assert words in text, (words, text[:400])


@pytest.mark.parametrize("panel_id, headline", [
    ("uniqueness", lambda p: [f"Closest pairs (one pair per offset q − p): {a:,.0f} and {b:,.0f}"
                              for a, b, _ in p.data.found.near_repeats[:1]]),
    ("relative", lambda p: [f"{np.nanmax(p.data.spread.spread):.3g}"]),
    ("magnitude", lambda p: [f"{np.min(p.data.norms):.4g}", f"{p.data.embedding:.4g}"]),
    ("addition", lambda p: [f"{p.data.cost.params_add:,} weights", f"σ = {p.data.sweep.balance_scale:.3g}"]),
    ("spectrum", lambda p: [f"{p.data.n_components} components"]),
])
def test_analysis_figures_give_their_headline_numbers_in_the_caption(qtbot, state, compute, panel_id, headline):
    panel = make_panel(qtbot, panel_id, state, compute)
    caption = export.figure_caption(panel)
    for words in headline(panel):
        assert words in caption, (words, caption)
    assert caption.split(" ")[0] in svg_text(export.export_bytes(panel, "svg"))  # written under the figure


# ------------------------------------------------------------------ legends
def test_every_line_of_the_addition_figure_is_in_a_key(qtbot, state, compute):
    panel = make_panel(qtbot, "addition", state, compute)
    for plot in (panel.terms_plot, panel.cosine_plot):  # a dashed and a dotted vertical line each
        assert "chosen σ" in plot.titleLabel.text and "‖e‖ = ‖p‖" in plot.titleLabel.text
    assert "this d" in panel.ortho_plot.titleLabel.text and "┈ √(2/(πd))" in panel.ortho_plot.titleLabel.text
    caption = panel.figure_caption()
    assert f"the chosen σ = {panel.state.view['embedding_scale']:g}" in caption and "where ‖e‖ = ‖p‖" in caption


def test_the_marks_of_spectrum_uniqueness_and_similarity_are_explained(qtbot, state, compute):
    spectrum = make_panel(qtbot, "spectrum", state, compute)
    assert spectrum.crossing_line.isVisible() and "where λ = N" in spectrum.wave_key.text
    uniqueness = make_panel(qtbot, "uniqueness", state, compute)
    assert "○ the closest pair" in uniqueness.nearest_plot.titleLabel.text
    similarity = make_panel(qtbot, "similarity", state, compute)
    assert f"from p = {similarity.reference_box.value()} (dashed)" in similarity.profile_plot.titleLabel.text


@pytest.mark.parametrize("seq_len, entry", [(128, "integer positions"), (100_000, "integer positions: zoom in")])
def test_the_waveforms_legend_names_the_dots_or_why_there_are_none(qtbot, state, compute, seq_len, entry):
    # Ticked but too dense to draw, the dots were neither drawn nor mentioned.
    state.update(seq_len=seq_len)
    panel = make_panel(qtbot, "waveforms", state, compute)
    assert panel.dots_box.isChecked() and (panel.data.dots is not None) == (seq_len == 128)
    names = [label.text for _, label in panel.legend.items]
    assert names[-1] == entry and len(names) == len(panel.dims) + 1
    panel.dots_box.setChecked(False)
    assert len(panel.legend.items) == len(panel.dims)


# ------------------------------------------------------------ no widgets
def test_the_parameters_figure_is_the_parameters_and_the_formula_not_the_controls(qtbot, state, compute):
    state.update(**CHOSEN)
    panel = make_panel(qtbot, "parameters", state, compute)
    figure = panel.figure_widget()
    assert not figure.findChildren(QAbstractSlider) and not figure.findChildren(QComboBox)
    assert figure is not panel and not isinstance(figure, (QAbstractSlider, QComboBox))
    text = svg_text(export.export_bytes(panel, "svg"))
    for words in ("d_model 64", "base 500", "halves", "PE(pos, 2i) = sin(pos / base^(2i/d))"):
        assert words in text, words
    image = export.render_image(figure, scale=1)
    assert (image.width(), image.height()) == (figure.width(), figure.height())
    assert figure.height() < 400  # a small table, not a dock's worth of blank space


def test_the_walkthrough_figure_is_the_step_and_the_panel_it_shows(make_window, qtbot):
    window = make_window(size=(1500, 950))
    walkthrough = window.panels["walkthrough"]
    walkthrough.go_to(7)  # the sinusoidal encoding, shown in the spectrum
    step = walkthrough.step
    assert step.panel_id == "spectrum"
    window.state.flush()
    assert window.compute.wait_idle(TIMEOUT_S)
    finish_pending(qtbot, window.panels["spectrum"])
    figure = walkthrough.figure_widget()
    assert not figure.findChildren(QAbstractButton) and not figure.findChildren(QComboBox)
    texts = " ".join(label.text() for label in figure.findChildren(QLabel))
    assert step.title in texts and "The Spectrum panel:" in texts
    from posenc_gui.views.walkthrough import ShownFigure

    pictures = figure.findChildren(ShownFigure)
    assert len(pictures) == 1 and pictures[0].width() > 400 and not pictures[0].image.isNull()
    image = export.render_image(figure, scale=1)
    assert (image.width(), image.height()) == (figure.width(), figure.height())


def test_the_command_line_exports_any_walkthrough_step(qtbot, state, compute):
    option = panel_options(panel_classes())["--step"]
    assert list(option) == ["walkthrough"]
    panel = make_panel(qtbot, "walkthrough", state, compute)
    dest = option["walkthrough"].dest
    panel.apply_options(**{dest: 3})
    assert panel.index == 2 and state.params.scheme == panel.steps[2].params["scheme"]
    with pytest.raises(ValueError, match="step"):
        panel.apply_options(**{dest: len(panel.steps) + 1})
    texts = " ".join(label.text() for label in panel.figure_widget().findChildren(QLabel))
    assert panel.steps[2].title in texts and "export it for its figure" in texts  # no window: the panel is named


def test_a_scorecard_export_is_the_table_cropped_and_current(qtbot, state, compute):
    panel = make_panel(qtbot, "scorecard", state, compute)
    image = export.render_image(panel.figure_widget(), scale=1)
    # the table criteria above the logit columns (stacked to fit a slide), the caption line and notes, no more
    tables = panel.table.height() + panel.logit_view.height()
    words = panel.caption_label.height() + panel.notes_label.height()
    assert tables + words <= image.height() <= tables + words + 50  # margins and spacing, no blank space
    assert image.width() <= max(panel.table.width(), panel.logit_view.width()) + 30
    state.update(seq_len=300)  # exported at once, before the measurement's pause is over
    export.export_bytes(panel, "png")
    assert panel.data.params.seq_len == 300 and "N = 300" in panel.caption_label.text()


# -------------------------------------------------------------------- axes
def shown_axes(panel):
    canvas = panel.figure_widget()
    return [item for item in canvas.scene().items()
            if isinstance(item, pg.AxisItem) and item.isVisible() and item.style["showValues"]]


def assert_labelled(panel, where: str) -> None:
    """At least three labelled ticks on every axis (as many as it has, if set to fewer), 0 where it is in range."""
    for axis in shown_axes(panel):
        labels = drawn_labels(axis)
        low, high = sorted(axis.range)
        if axis._tickLevels is not None:  # categories, components: the ticks it was given, in range
            given = [value for level in axis._tickLevels for value, text in level if text and low <= value <= high]
            assert len(labels) >= min(3, len(given)), (where, panel.panel_id, axis.orientation, labels)
            continue
        assert len(labels) >= 3, (where, panel.panel_id, axis.orientation, axis.range, labels)
        if not axis.logMode and low <= 0 <= high:
            assert "0" in labels, (where, panel.panel_id, axis.orientation, axis.range, labels)


PLOTTED = ["heatmap", "waveforms", "similarity", "uniqueness", "magnitude", "relative", "addition", "spectrum",
           "periodogram", "pca"]


@pytest.mark.parametrize("seq_len, d_model", [(128, 512), (1_048_576, 8192)])
def test_every_axis_of_every_dock_labels_three_ticks_and_zero(make_window, qtbot, seq_len, d_model):
    # At 1,048,576 positions the similarity matrix and its profile had one label each; column axes never said 0.
    window = make_window(size=(1500, 950))
    window.state.update(seq_len=seq_len, d_model=d_model)
    for panel_id in PLOTTED:
        window.raise_panel(panel_id)
        panel = window.panels[panel_id]
        settle_panel(qtbot, panel)
        assert_labelled(panel, f"{seq_len:,} × {d_model:,}")


def test_axes_zoomed_in_to_the_end_still_label_three_ticks(make_window, qtbot):
    # (Where the axis is long enough for three of its labels: 164 px of the similarity matrix hold
    # three "1,000" but not three "500,000".)
    window = make_window(size=(1500, 950))
    window.state.update(seq_len=1_048_576, d_model=8192)
    zooms = {
        "heatmap": lambda p: p.matrix.view_box.setRange(xRange=(100, 101), yRange=(1_000_000, 1_000_001), padding=0),
        "similarity": lambda p: (
            p.matrix.view_box.setRange(xRange=(1000, 1001), yRange=(700_000, 700_001), padding=0),
            p.profile_plot.setXRange(1000, 1010, padding=0)),
        "waveforms": lambda p: p.plot.setXRange(1_000_000, 1_000_003, padding=0),
    }
    for panel_id, zoom in zooms.items():
        window.raise_panel(panel_id)
        panel = window.panels[panel_id]
        settle_panel(qtbot, panel)
        zoom(panel)
        panel.run_debounced()
        settle_panel(qtbot, panel)
        assert_labelled(panel, "zoomed")


def test_a_million_positions_are_labelled_in_one_unit(qtbot, state, compute):
    # The two levels of ticks chose their units apart: "100k, 0.2M, 300k, 0.4M".
    state.update(seq_len=1_048_576, d_model=64)
    panel = make_panel(qtbot, "waveforms", state, compute, size=(1400, 600))
    labels = drawn_labels(panel.plot.getAxis("bottom"))
    assert len(labels) >= 6 and all(text == "0" or text.endswith("M") for text in labels), labels


@pytest.mark.parametrize("low, high", [(-1, 1), (-0.85, 0.85), (-4100, 4100), (-8.4e6, 8.4e6), (0, 260), (0, 1),
                                       (-3.7e-15, 3.7e-15), (-0.5, 1000.0)])
@pytest.mark.parametrize("length", [60, 266, 750, 2000])
def test_colour_bar_labels_are_few_round_and_exact(low, high, length):
    from posenc_gui.views.plotkit import colorbar_ticks

    labelled, unlabelled = colorbar_ticks(low, high, length)
    values = [value for value, _ in labelled]
    assert 3 <= len(values) <= MAX_COLORBAR_LABELS if length >= 60 else len(values) >= 2
    assert all(low <= value <= high for value in values)
    if low <= 0 <= high:
        assert 0.0 in values
    for value, text in labelled:  # a label says its value ("−0.8" for −0.75 would not)
        scale = {"k": 1e3, "M": 1e6}.get(text[-1], 1.0)
        assert float(text.rstrip("kM")) * scale == pytest.approx(value, rel=1e-9, abs=1e-300)
    assert not {value for value, _ in unlabelled} & set(values)


def test_a_tall_colour_bar_labels_at_most_nine_values(qtbot):
    # T_k's colour bar over ±0.85 in a 960 × 640 figure had 17 labels.
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = MatrixPlot(canvas.ci, "column", "row")
    values = np.linspace(-0.85, 0.85, 16).reshape(4, 4)
    plot.set_matrix(values, QRectF(-0.5, -0.5, 4, 4), levels=(-0.85, 0.85))
    canvas.resize(960, 1400)
    canvas.show()
    qtbot.waitExposed(canvas)
    finish_pending(qtbot, canvas)
    labels = drawn_labels(plot.colorbar.axis)
    assert 3 <= len(labels) <= MAX_COLORBAR_LABELS and "0" in labels, labels


# ------------------------------------------------------------- colour rule
@pytest.mark.parametrize("metric, colormap", [("dot", DIVERGING), ("cosine", DIVERGING), ("distance", SEQUENTIAL)])
def test_similarity_has_one_colour_map_per_metric_whatever_the_data(qtbot, state, compute, metric, colormap):
    # A dot product positive everywhere (d_model 512) was drawn in viridis, one of both signs (d_model 3) in red/blue.
    panel = make_panel(qtbot, "similarity", state, compute)
    panel.set_options(metric=metric)
    seen = []
    for d_model in (512, 3):
        state.update(d_model=d_model)
        settle_panel(qtbot, panel)
        low, high = panel.matrix.colorbar.levels()
        seen.append(panel.matrix.colormap_name)
        if colormap == DIVERGING:
            assert low == -high and high > 0
        else:
            assert low == 0 < high
    assert seen == [colormap, colormap]


# ----------------------------------------------------------------- banners
def wrapped_height(widget, text: str, width: int) -> int:
    metrics = widget.fontMetrics()
    return metrics.boundingRect(QRect(0, 0, width, 1 << 20), int(Qt.TextFlag.TextWordWrap), text).height()


def test_banners_wrap_at_the_default_dock_width(make_window, qtbot):
    # At 1,048,576 × 8192 in the default window the waveforms' and the similarity's banners ended in "…".
    window = make_window(size=(1500, 950))
    window.state.update(seq_len=1_048_576, d_model=8192)
    waveforms, heatmap, similarity = (window.panels[p] for p in ("waveforms", "heatmap", "similarity"))
    for panel in (waveforms, heatmap, similarity):
        settle_panel(qtbot, panel)
    banners = [waveforms.sampling_notice, heatmap.alias_notice, similarity.sampling_label]
    for banner in banners:
        text = banner.text()
        padding = banner.PADDING_PX if isinstance(banner.PADDING_PX, int) else banner.PADDING_PX[0]
        assert text
        assert banner.height() >= wrapped_height(banner, text, banner.width() - 2 * padding), (text, banner.size())
    assert wrapped_height(waveforms.sampling_notice, waveforms.sampling_notice.text(), waveforms.width()) \
        > waveforms.fontMetrics().lineSpacing()  # the case: more than one line at this width
