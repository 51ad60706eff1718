"""The Periodogram and Positions (PCA) panels: build the view from the model, change the model, check the view."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams
from posenc_gui.model.analyses.table_spectra import IMAGE_COLUMNS, dimension_periodogram, pca_data, periodogram_data
from posenc_gui.views import periodogram as periodogram_view
from posenc_gui.views.pca import PCAPanel
from posenc_gui.views.periodogram import LEVELS, PeriodogramPanel
from posenc_gui.views.plotkit import SEQUENTIAL
from helpers_panels import settle_panel, show_panel


def make(qtbot, cls, state, compute, size=(900, 700)):
    """A ``cls`` panel on screen, showing ``state``'s parameters and what its resize asked for."""
    panel = show_panel(qtbot, cls(state, compute), size, settle=False)
    settle_panel(qtbot, panel)
    return panel


def change(qtbot, panel, compute, **values):
    assert panel.state.update(**values) is None
    settle_panel(qtbot, panel)


def line_data(curve) -> tuple[np.ndarray, np.ndarray]:
    x, y = curve.getOriginalDataset()
    return np.asarray(x), np.asarray(y)


# --------------------------------------------------------------------------- periodogram


def test_the_periodogram_shows_the_model_and_follows_a_change(qtbot, state, compute):
    state.update(scheme="sinusoidal", seq_len=1024, d_model=4)
    panel = make(qtbot, PeriodogramPanel, state, compute)
    data = panel.data
    assert data.params == state.params
    np.testing.assert_array_equal(panel.matrix.image.image, data.image)
    assert panel.matrix.colorbar.levels() == LEVELS and panel.matrix.colormap_name == SEQUENTIAL
    assert panel.dim_box.maximum() == 3
    # dimension 0 = sin(pos): bins k/1024, peak at bin 163, the formula's frequency 1/(2π) marked
    x, _ = line_data(panel.hann_curve)
    np.testing.assert_allclose(x, np.log10(np.arange(1, 513) / 1024), rtol=1e-15)
    peak_x, _ = line_data(panel.peak_dot)
    assert peak_x.tolist() == [pytest.approx(math.log10(163 / 1024), abs=1e-15)]
    assert panel.known_line.isVisible() and panel.known_line.value() == pytest.approx(math.log10(1 / (2 * math.pi)))
    assert "agrees within one bin" in panel.dim_label.text() and "sin(pos / 10000^(2·0/4))" in panel.dim_label.text()
    assert "4 of the 4 dimensions" in panel.summary_label.text()

    change(qtbot, panel, compute, d_model=8)
    assert panel.data.params.d_model == 8 and panel.data.image.shape == (8, IMAGE_COLUMNS)
    assert panel.dim_box.maximum() == 7
    panel.set_dim(2)
    settle_panel(qtbot, panel)
    # d = 8: pair 1 has ω = 10000^(−2/8) = 1/10, f = 1/(20π) = 0.015915 cycles per position
    assert panel.dim_data.dim == 2 and panel.dim_data.params == state.params
    assert panel.known_line.value() == pytest.approx(math.log10(1 / (20 * math.pi)), rel=1e-12)
    assert panel.current_options() == {"dim": 2}
    with pytest.raises(ValueError, match=r"dim must be in 0…7"):
        panel.apply_options(dim=8)


def test_the_image_has_dimension_0_at_the_top_and_frequency_along_x(qtbot, state, compute):
    # binary ±1: bit 0 alternates (all its power at ½ cycle per position, the right edge), bit 3 has period 16
    # (its fundamental at 1/16, its harmonics at 3/16, 5/16, 7/16, none at ½): the image is not symmetric
    # under a transposition or a flip, so a wrong orientation shows.
    state.update(scheme="binary", seq_len=64, d_model=4)
    panel = make(qtbot, PeriodogramPanel, state, compute)
    item = panel.matrix.image
    item.render()
    assert (item.qimage.width(), item.qimage.height()) == (IMAGE_COLUMNS, 4)  # columns × rows, not transposed
    assert panel.matrix.view_box.yInverted()
    picture = panel.canvas.grab().toImage()
    view = panel.matrix.view_box

    def colour_at(log_frequency: float, dim: int) -> QColor:
        point = panel.canvas.mapFromScene(view.mapViewToScene(QPointF(log_frequency, dim)))
        return QColor(picture.pixel(point.x(), point.y()))

    def bright(colour: QColor) -> bool:  # viridis at 1 is yellow #fde725; at 10⁻⁶ dark purple #440154
        return colour.red() > 180 and colour.green() > 180

    nyquist, sixteenth = math.log10(0.5) - 0.005, math.log10(1 / 16)
    assert bright(colour_at(nyquist, 0)) and not bright(colour_at(nyquist, 3))
    assert bright(colour_at(sixteenth, 3)) and not bright(colour_at(sixteenth, 0))
    assert colour_at(nyquist, 3).green() < 80  # well under 10⁻⁴ of bit 3's power at ½


#: Each table view's computation, the parameters it starts at, what it draws (and from which data), and a
#: part of it computed apart that a failing computation leaves current.
KEEPS_ITS_LAST_VIEW = {
    "periodogram": (PeriodogramPanel, periodogram_view, "periodogram_data",
                    dict(scheme="sinusoidal", seq_len=256, d_model=8),
                    lambda panel: panel.matrix.image.image, lambda data: data.image, "dim_data"),
    "pca": (PCAPanel, PCAPanel, "model_function", dict(scheme="sincos_pair", seq_len=64, d_model=2),
            lambda panel: panel.points.getData()[0], lambda data: data.coordinates[:, 0], None),
}


@pytest.mark.parametrize("view", KEEPS_ITS_LAST_VIEW)
def test_a_table_view_keeps_its_last_view_under_an_error(qtbot, state, compute, monkeypatch, view):
    cls, module, computation, params, drawn, drawn_from, current_part = KEEPS_ITS_LAST_VIEW[view]
    state.update(**params)
    panel = make(qtbot, cls, state, compute)
    shown = panel.data

    def failing(params):
        raise ValueError(f"the {view} failed here")

    monkeypatch.setattr(module, computation, failing)
    d_model = 2 * params["d_model"]
    change(qtbot, panel, compute, d_model=d_model)
    assert panel._message == (f"the {view} failed here", "error") and panel.message_label.isVisible()
    assert panel.data is shown  # the last good view stays
    np.testing.assert_array_equal(drawn(panel), drawn_from(shown))
    if current_part is not None:
        assert getattr(panel, current_part).params.d_model == d_model  # the other part of the view is current
    monkeypatch.undo()
    change(qtbot, panel, compute, d_model=2 * d_model)
    assert panel.data.params.d_model == 2 * d_model and not panel.message_label.isVisible()


def test_a_parameter_change_draws_the_dimension_with_its_table_in_one_update(qtbot, state, compute):
    # The two results of a change come back separately; drawn as each arrives, the canvas painted twice a step.
    state.update(scheme="sinusoidal", seq_len=128, d_model=8)
    panel = make(qtbot, PeriodogramPanel, state, compute)
    old_dim = panel.dim_data
    state.update(d_model=16)
    state.flush()  # both requests are out; nothing delivered yet
    assert compute.is_pending((panel, "table"))
    panel._show_dim(dimension_periodogram(state.params, 0))  # the dimension first, as the worker often answers
    assert panel.dim_data is old_dim  # held: the line plot still matches the image beside it
    settle_panel(qtbot, panel)
    assert panel.data.params == panel.dim_data.params == state.params and panel._held_dim is None
    panel.set_dim(3)  # no table to wait for: drawn when it arrives
    settle_panel(qtbot, panel)
    assert panel.dim_data.dim == 3 and panel.dim_data.params == state.params


def test_the_periodogram_says_why_it_does_not_apply(qtbot, state, compute):
    panel = make(qtbot, PeriodogramPanel, state, compute)
    change(qtbot, panel, compute, seq_len=1)
    assert panel.unavailable_label.isVisible() and "at least 2 positions" in panel.unavailable_label.text()
    change(qtbot, panel, compute, seq_len=64, scheme="rope")
    assert panel.unavailable_label.isVisible() and "needs a table" in panel.unavailable_label.text()
    change(qtbot, panel, compute, scheme="learned")
    assert not panel.unavailable_label.isVisible() and panel.data.params.scheme == "learned"
    caption = panel.figure_caption()  # the headline numbers, then the chosen dimension's (written under the figure)
    assert caption.startswith(panel.data.summary()) and "Dimension 0: σ·z(⌊pos⌋, 0)" in caption


def test_the_periodogram_exports_its_numbers_and_takes_dim_on_the_command_line(qapp, tmp_path):
    out = tmp_path / "periodogram.json"
    assert export_cli.main(["periodogram", "-o", str(out), "--scheme", "sinusoidal", "--seq-len", "1024",
                            "--d-model", "4", "--dim", "2"]) == export_cli.EXIT_OK
    document = json.loads(out.read_text())
    assert document["meta"]["dimension"] == 2 and document["meta"]["positions_analysed"] == 1024
    rows = document["arrays"]["dimensions"]["data"]  # NaN is written as null
    table = np.array([[math.nan if value is None else value for value in row] for row in rows])
    expected = periodogram_data(EncodingParams.validated(scheme="sinusoidal", seq_len=1024, d_model=4))
    np.testing.assert_array_equal(table[:, 1], expected.peak_frequency)  # the model's numbers, as computed
    assert table[:2, 1].tolist() == [163 / 1024] * 2 and table[:, 7].tolist() == [1.0] * 4  # all agree


# --------------------------------------------------------------------------- principal components


def test_the_pca_view_shows_the_components_and_follows_a_change(qtbot, state, compute):
    state.update(scheme="sincos_pair", seq_len=64, d_model=2)
    panel = make(qtbot, PCAPanel, state, compute)
    data = panel.data
    assert data.params == state.params
    x, y = panel.points.getData()
    np.testing.assert_array_equal(x, data.coordinates[:, 0])
    np.testing.assert_array_equal(y, data.coordinates[:, 1])
    assert np.allclose(np.hypot(x - x.mean(), y - y.mean()), 1.0, atol=0.05)  # a circle of radius 1 (64 points)
    bottom = panel.plot.getAxis("bottom").labelText
    assert bottom == f"PC1 ({data.explained[0]:.1%} of the variance)"
    assert panel.plot.getViewBox().state["aspectLocked"]  # circles look round
    assert panel.colorbar.levels() == (0, 63)
    brushes = panel.points.data["brush"]
    assert brushes[0].color().name() == "#440154" and brushes[-1].color().name() == "#fde725"  # viridis ends

    panel.apply_options(components="1,3")
    assert panel.plot.getAxis("left").labelText == "PC3 (no variance)"
    assert not panel.points.getData()[1].any()
    assert panel.current_options() == {"components": "1,3"}
    with pytest.raises(ValueError, match="components must be one of 1,2, 1,3, 2,3"):
        panel.apply_options(components="3,4")

    change(qtbot, panel, compute, scheme="naive", seq_len=5, d_model=4)
    # naive: one component, coordinates 2(i − 2) (see tests/test_table_spectra.py)
    np.testing.assert_allclose(panel.points.getData()[0], [-4, -2, 0, 2, 4], atol=1e-13)
    assert panel.current_options() == {"components": "1,3"}  # the choice survives a change of parameters
    assert "PC1 100.0%" in panel.figure_caption()


def test_the_pca_view_says_how_it_samples_a_million_positions(qtbot, state, compute):
    state.update(scheme="sinusoidal", seq_len=1_048_576, d_model=64)
    panel = make(qtbot, PCAPanel, state, compute)
    assert panel.data.positions.count == 4096 and panel.points.getData()[0].size == 4096
    assert "4,096 positions (every 256th position of 1,048,576)" in panel.figure_caption()
    exported = panel.export_data()
    assert exported["arrays"]["coordinates"].shape == (4096, 4)
    assert exported["arrays"]["coordinates"][-1, 0] == 4095 * 256
    np.testing.assert_array_equal(exported["arrays"]["explained"], pca_data(state.params).explained)


def test_both_views_export_figures_with_their_title(qtbot, state, compute):
    state.update(scheme="learned", seq_len=512, d_model=768)
    for cls in (PeriodogramPanel, PCAPanel):
        panel = make(qtbot, cls, state, compute)
        root = ET.fromstring(export.export_bytes(panel, "svg"))
        texts = " ".join(" ".join(element.text or "" for element in root.iter() if element.tag.endswith(("text", "tspan")))
                         .split())
        assert "learned: 512 positions × d_model 768, σ 0.02, seed 0" in texts, cls.panel_id
