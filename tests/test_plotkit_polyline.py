"""Curves on screen drawn through the samples that show (plotkit/polyline.py), and matrix images drawn unconverted."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter, QPicture

from posenc_gui.views.plotkit import MatrixPlot, ScreenCurve, new_layout_widget, pgcompat
from posenc_gui.views.plotkit.polyline import TOLERANCE_PX, polyline_indices


def chord_distances(x: np.ndarray, y: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Distance of every sample from the chord (a segment) between the kept samples around it."""
    chord = np.searchsorted(kept, np.arange(len(x)), side="right") - 1
    chord = np.minimum(chord, len(kept) - 2)  # the last sample lies on the last chord's end
    ax, ay = x[kept[chord]], y[kept[chord]]
    dx, dy = x[kept[chord + 1]] - ax, y[kept[chord + 1]] - ay
    along = np.clip(((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy), 0, 1)
    return np.hypot(ax + along * dx - x, ay + along * dy - y)


@pytest.mark.parametrize("seed", range(6))
def test_every_sample_is_within_the_tolerance_of_the_polyline(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(3, 900))
    x = np.cumsum(rng.uniform(0.2, 3.0, count))
    # smooth waves of random wavelengths and amplitudes, plus steps and noise on some curves
    y = sum(rng.uniform(1, 120) * np.sin(x / rng.uniform(0.5, 300) + rng.uniform(0, 6)) for _ in range(3))
    if seed % 2:
        y = y + rng.normal(0, 2, count) + 40 * (x > x[count // 2])
    if seed >= 3:  # the samples in any order: a curve going back and forth (x is not a function of the index)
        x = x[rng.permutation(count)]
    kept = polyline_indices(x, y)
    assert kept[0] == 0 and kept[-1] == count - 1 and np.all(np.diff(kept) > 0)
    # the rounding of a float64 interpolation is far below a pixel's 1e-9
    assert chord_distances(x, y, kept).max() <= TOLERANCE_PX + 1e-9


def test_a_mirrored_view_keeps_the_same_samples():
    x = np.linspace(0, 450, 449)
    y = 100 * np.sin(x / 60)
    assert np.array_equal(polyline_indices(-x, y), polyline_indices(x, y))


def test_a_sample_that_is_not_finite_leaves_the_curve_to_pyqtgraph():
    x = np.linspace(0, 450, 449)
    for bad in (np.nan, np.inf, -np.inf):
        y = np.sin(x / 60)
        y[200] = bad
        assert polyline_indices(x, y) is None
        assert polyline_indices(x[199:201], y[199:201]) is None
    assert list(polyline_indices(x[:2], y[:2])) == [0, 1]


def test_a_smooth_curve_keeps_a_few_samples_and_a_dense_one_most():
    x = np.linspace(0, 450, 449)
    smooth = polyline_indices(x, 100 * np.sin(x / 70))
    dense = polyline_indices(x, 100 * np.sin(x * 1.3))
    assert len(smooth) < 449 / 4
    assert len(dense) > 449 / 2


class RecordingPainter(QPainter):
    """Records how a curve was stroked: two-point segments, paths or polylines (their number of points)."""

    def __init__(self, device) -> None:
        super().__init__(device)
        self.calls = {"lines": 0, "path": [], "polyline": []}

    def drawPolyline(self, polygon):  # noqa: N802 (Qt override)
        self.calls["polyline"].append(polygon.size())
        super().drawPolyline(polygon)

    def drawLines(self, *args):  # noqa: N802 (Qt override)
        self.calls["lines"] += 1
        super().drawLines(*args)

    def drawPath(self, path):  # noqa: N802
        self.calls["path"].append(path.elementCount())
        super().drawPath(path)


def painted(curve: pg.PlotCurveItem) -> dict:
    """How ``curve`` strokes itself, painted as its canvas paints it (through its transform to the screen)."""
    picture = QPicture()
    painter = RecordingPainter(picture)
    view = curve.getViewWidget()
    if view is not None:
        painter.setTransform(curve.deviceTransform(view.viewportTransform()))
    curve.paint(painter, None, None)
    painter.end()
    return painter.calls


@pytest.fixture
def shown_plot(qtbot):
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    canvas.resize(600, 300)
    plot = canvas.addPlot()
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas, plot


def painted_sine(canvas, plot) -> tuple[np.ndarray, ScreenCurve]:
    """A 2 px sine of 449 samples in ``plot``, painted once; its x and its curve."""
    x = np.linspace(0, 127, 449)
    curve = ScreenCurve(pen=pg.mkPen("b", width=2), connect="finite")
    curve.setData(x, np.sin(x / 20))
    plot.addItem(curve)
    canvas.grab()
    return x, curve


def test_a_wide_smooth_curve_on_screen_is_one_polyline_of_fewer_samples(shown_plot):
    canvas, plot = shown_plot
    x, curve = painted_sine(canvas, plot)
    calls = painted(curve)
    assert calls["lines"] == 0 and calls["path"] == [] and len(calls["polyline"]) == 1
    assert 2 <= calls["polyline"][0] < 449 / 4
    # pyqtgraph's own item strokes all 448 segments
    plain = pg.PlotCurveItem(x, np.sin(x / 20), pen=pg.mkPen("b", width=2))
    plot.addItem(plain)
    assert painted(plain)["lines"] == 1


def test_an_exported_a_filled_or_a_broken_curve_is_drawn_by_pyqtgraph(shown_plot):
    canvas, plot = shown_plot
    x, curve = painted_sine(canvas, plot)
    pgcompat.set_segmented_line_mode(curve, "off")  # as an export does
    assert painted(curve) == {"lines": 0, "path": [449], "polyline": []}  # every sample
    pgcompat.set_segmented_line_mode(curve, "auto")
    with_gap = np.sin(x / 20)
    with_gap[100] = np.nan
    curve.setData(x, with_gap)  # a new curve: the polyline of the old data is not drawn
    assert painted(curve) == {"lines": 1, "path": [], "polyline": []}  # pyqtgraph's segments, broken at the gap
    filled = ScreenCurve(x, np.sin(x / 20), pen=pg.mkPen("b", width=1), fillLevel=0, brush="r")
    plot.addItem(filled)
    calls = painted(filled)
    assert calls["polyline"] == [] and calls["path"]  # pyqtgraph fills and strokes its paths


def test_a_thin_curve_on_screen_is_a_polyline_too(shown_plot):
    # pyqtgraph's paint of a 1 px curve (its path and bookkeeping) cost 0.11 ms, the kit's polyline 0.03
    canvas, plot = shown_plot
    x = np.linspace(0, 127, 449)
    dense = ScreenCurve(x, np.sin(x * 1.3), pen=pg.mkPen("b", width=1), connect="finite")
    smooth = ScreenCurve(x, np.sin(x / 20), pen=pg.mkPen("r", width=1))
    for curve in (dense, smooth):
        plot.addItem(curve)
    canvas.grab()
    assert painted(dense) == {"lines": 0, "path": [], "polyline": [449]}  # every sample shows
    calls = painted(smooth)
    assert calls["lines"] == 0 and calls["path"] == [] and 2 <= calls["polyline"][0] < 449 / 4


def test_14_a_matrix_image_is_drawn_in_a_format_qt_draws_unconverted(qtbot):
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    matrix = MatrixPlot(canvas.ci, "dimension", "position")
    values = np.sin(np.arange(128.0)[:, None] * np.linspace(0.01, 1, 512)[None, :])
    matrix.set_matrix(values, pg.QtCore.QRectF(0, 0, 512, 128))
    # pyqtgraph renders a float matrix through its colour table as an indexed image
    stock = pg.ImageItem(values, axisOrder="row-major", levels=(-1, 1), lut=matrix.image.lut)
    stock.render()
    assert stock.qimage.format() == QImage.Format.Format_Indexed8
    matrix.image.render()
    shown = matrix.image.qimage
    assert shown.format() in pgcompat.NATIVE_IMAGE_FORMATS
    expected = stock.qimage.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    assert shown.size() == expected.size()
    assert shown.pixel(7, 3) == expected.pixel(7, 3) and shown.pixel(500, 120) == expected.pixel(500, 120)


@pytest.mark.parametrize("colormap_name", ["RdBu", "PuOr", "viridis"])
def test_14_a_matrix_image_renders_every_pixel_as_pyqtgraph_does(qtbot, colormap_name):
    # the kit maps values to colours itself (render_through_palette); pyqtgraph's indexed render, converted, is
    # the reference: an asymmetric matrix with values past both levels, exact level values and missing cells
    from posenc_gui.views.plotkit import get_colormap

    rng = np.random.default_rng(7)
    values = rng.uniform(-1.3, 1.6, (37, 53))
    values[0, :5] = [-0.8, 0.8, -1.0, 1.0, 0.0]
    values[3, 7] = values[30, 50] = np.nan
    lut = get_colormap(colormap_name).getLookupTable(nPts=256, alpha=False)
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    matrix = MatrixPlot(canvas.ci, "dimension", "position")
    matrix.image.setLookupTable(lut)
    matrix.image.setImage(values)
    matrix.image.setLevels((-0.8, 0.8))
    matrix.image.render()
    shown = matrix.image.qimage
    assert pgcompat.render_through_palette(matrix.image)  # the kit's own render applied
    assert list(matrix.image.levels) == [-0.8, 0.8]
    stock = pg.ImageItem(values, axisOrder="row-major", levels=(-0.8, 0.8), lut=lut)
    stock.render()
    expected = stock.qimage.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    assert (shown.width(), shown.height()) == (53, 37)  # columns × rows
    differing = [(x, y) for y in range(37) for x in range(53) if shown.pixel(x, y) != expected.pixel(x, y)]
    assert differing == []
    assert QImage(shown).pixelColor(7, 3).alpha() == 0  # a missing cell is transparent
    # a matrix in column order (a transposed view, as some panels hand over) gives the same image
    matrix.image.setImage(np.asfortranarray(values))
    matrix.image.setLevels((-0.8, 0.8))
    matrix.image.render()
    assert matrix.image.qimage == shown
