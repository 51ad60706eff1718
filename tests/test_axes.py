"""Tick labels that stay readable (and do not overlap) up to a million positions."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication

from posenc_gui.views.plotkit import CompactAxisItem
from posenc_gui.views.similarity import SimilarityPanel
from helpers_axes import drawn_labels
from helpers_panels import show_panel
from waiting import TIMEOUT_MS, TIMEOUT_S


@pytest.mark.parametrize("values, spacing, expected", [
    ([0, 200_000, 400_000], 200_000, ["0", "200k", "400k"]),
    ([0, 500_000, 1_000_000], 500_000, ["0", "0.5M", "1M"]),
    ([0, 250_000, 1_000_000], 250_000, ["0", "0.25M", "1M"]),  # not 0.2M: the step decides the decimals
    ([-200_000, 0, 200_000], 200_000, ["-200k", "0", "200k"]),
    ([1_000_000, 1_000_010, 1_000_020], 10, ["1,000,000", "1,000,010", "1,000,020"]),  # zoomed in: exact
    ([0, 50, 100], 50, ["0", "50", "100"]),  # small values: pyqtgraph's own labels
])
def test_compact_tick_labels(qapp, values, spacing, expected):
    assert CompactAxisItem("bottom").tickStrings(values, 1.0, spacing) == expected


def _label_rects(axis):
    image = QImage(800, 100, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted((rect for rect, _flags, _text in texts), key=lambda r: r.left())


def test_labels_of_a_narrow_axis_over_a_million_positions_do_not_overlap(qtbot, state, compute):
    state.update(seq_len=1_048_576, d_model=64)
    panel = show_panel(qtbot, SimilarityPanel(state, compute), (480, 360))  # the matrix plot is about 200 px wide
    axis = panel.matrix.plot.getAxis("bottom")
    rects = _label_rects(axis)
    assert rects
    for left, right in zip(rects, rects[1:]):
        assert left.right() <= right.left(), [r.getRect() for r in rects]


@pytest.mark.parametrize("axis_class, overlaps", [(pg.AxisItem, True), (CompactAxisItem, False)])
def test_a_200_px_axis_over_a_million_positions(qtbot, axis_class, overlaps):
    # pyqtgraph's own axis is the control: its labels run into each other.
    widget = pg.PlotWidget(axisItems={"bottom": axis_class("bottom")})
    widget.setXRange(0, 1_048_575, padding=0)
    show_panel(qtbot, widget, (260, 160), settle=False)
    axis = widget.getPlotItem().getAxis("bottom")
    assert 150 < axis.width() < 250
    rects = _label_rects(axis)
    assert len(rects) >= 2
    collide = any(left.right() > right.left() for left, right in zip(rects, rects[1:]))
    assert collide == overlaps


def test_a_wide_axis_keeps_pyqtgraphs_ticks(qapp):
    axis = CompactAxisItem("bottom")
    levels = axis.tickSpacing(0, 512, 1000)  # plenty of room: unchanged
    assert levels == super(CompactAxisItem, axis).tickSpacing(0, 512, 1000)


#: How pyqtgraph aligns tick labels on each side of a plot (the permutation panel's cell labels use these too).
_ALIGN = Qt.AlignmentFlag
_LABEL_FLAGS = {
    "left": _ALIGN.AlignRight | _ALIGN.AlignVCenter | Qt.TextFlag.TextDontClip,
    "right": _ALIGN.AlignLeft | _ALIGN.AlignVCenter | Qt.TextFlag.TextDontClip,
    "top": _ALIGN.AlignHCenter | _ALIGN.AlignBottom | Qt.TextFlag.TextDontClip,
    "bottom": _ALIGN.AlignHCenter | _ALIGN.AlignTop | Qt.TextFlag.TextDontClip,
}


@pytest.mark.parametrize("side", ["left", "right", "top", "bottom"])
def test_tick_labels_land_on_the_pixels_draw_text_gives(qapp, side):
    # Glyphs are placed at fractions of a pixel; a label right- or centre-aligned from
    # boundingRect's box was off in 1 of 11 of these placements.
    import itertools

    from posenc_gui.views.plotkit import static_text_at

    flags = int(_LABEL_FLAGS[side])
    font = QFont()

    def pixels(draw) -> bytes:
        image = QImage(120, 60, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setFont(font)
        draw(painter)
        painter.end()
        return bytes(image.constBits())

    def static(painter, rect, text):
        top_left, laid_out = static_text_at(painter, (font.key(), 96), rect, flags, text)
        painter.drawStaticText(top_left, laid_out)

    for text, (dx, dy) in itertools.product(["half", "1,000,010", "10⁴", "-0.5"],
                                            itertools.product(range(0, 1000, 125), range(0, 1000, 333))):
        rect = QRectF(5 + dx / 1000, 20 + dy / 1000, 60.3 + dx / 3000, 11.1625)
        assert pixels(lambda painter: static(painter, rect, text)) == \
            pixels(lambda painter: painter.drawText(rect, flags, text)), (text, rect)


def test_matrix_axes_tick_whole_rows_and_columns_without_si_prefix(qtbot, state, compute):
    # A one-position, two-dimension heatmap: pyqtgraph labelled its row axis
    # −400 … 400 "(x0.001)" and its column axis in tenths.
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(seq_len=1, d_model=2)
    panel = show_panel(qtbot, HeatmapPanel(state, compute), (700, 500))
    panel.grab()
    rows, columns = (panel.matrix.plot.getAxis(side) for side in ("left", "bottom"))
    assert drawn_labels(rows) == ["0"]
    assert drawn_labels(columns) == ["0", "1"]
    assert "x0.001" not in rows.labelString()
    assert panel.matrix.plot.titleLabel.text.startswith("sinusoidal: 1 position × d_model 2")
    assert panel.sampling_label.text() == "1 position × 2 dimensions"


def test_an_error_while_drawing_an_axis_is_reported_not_a_crash(tmp_path):
    # With PySide6 6.11 an exception escaping a pyqtgraph axis's paint
    # segfaults the process (pyqtgraph's own AxisItem is the control).
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "raise_in_axis.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        import pyqtgraph as pg
        from posenc_gui.views.plotkit import CompactAxisItem
        base = CompactAxisItem if sys.argv[1] == "ours" else pg.AxisItem
        class Failing(base):
            def tickStrings(self, values, scale, spacing):
                raise RuntimeError("tick labels failed")
        widget = pg.PlotWidget(axisItems={"bottom": Failing("bottom")})
        widget.resize(400, 300)
        widget.show()
        for _ in range(20):
            app.processEvents()
        widget.grab()
        print("still running")
    """))
    results = {which: subprocess.run([sys.executable, str(script), which], capture_output=True, text=True,
                                     timeout=TIMEOUT_S)
               for which in ("ours", "pyqtgraph")}
    ours = results["ours"]
    assert ours.returncode == 0 and "still running" in ours.stdout, ours.stderr[-2000:]
    assert "tick labels failed" in ours.stderr
    assert results["pyqtgraph"].returncode != 0  # the control crashes


@pytest.mark.parametrize("under_the_data", [True, False])
def test_grid_lines_pass_under_what_the_plot_shows(qtbot, under_the_data):
    # An opaque white item filling the view (as the legend's box does in
    # part) must hide the grid; pyqtgraph's own stacking (the control)
    # draws the grid over it.
    from PySide6.QtWidgets import QGraphicsRectItem

    from posenc_gui.views.plotkit import new_layout_widget, show_grid, style_plot

    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    canvas.resize(500, 360)
    plot = canvas.addPlot()
    style_plot(plot)
    if under_the_data:
        show_grid(plot)
    else:
        plot.showGrid(x=True, y=True, alpha=0.25)
    cover = QGraphicsRectItem(-1, -1, 12, 12)
    cover.setBrush(pg.mkBrush("w"))
    cover.setPen(pg.mkPen(None))
    plot.addItem(cover)
    plot.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    image = canvas.grab().toImage()
    inner = plot.getViewBox().sceneBoundingRect().adjusted(4, 4, -4, -4)
    top_left = canvas.mapFromScene(inner.topLeft())
    bottom_right = canvas.mapFromScene(inner.bottomRight())
    grey = sum(QColor(image.pixel(x, y)).lightness() < 250
               for x in range(top_left.x(), bottom_right.x(), 2) for y in range(top_left.y(), bottom_right.y(), 2))
    assert (grey == 0) == under_the_data, grey


@pytest.mark.parametrize("height", [160, 200, 600])
def test_a_fitted_y_range_keeps_the_labels_of_its_round_bounds(qtbot, height):
    # A short plot of sinusoids (the waveforms dock above a legend) lost its ±1:
    # 3 % of padding was less than the half label the axis needs to draw them whole.
    from posenc_gui.views.plotkit import fit_y_range, show_grid, style_plot

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot()
    style_plot(plot)
    show_grid(plot)  # as every line plot here: the axis then spans the view box, no further
    widget.resize(460, height)
    widget.show()
    qtbot.waitExposed(widget)
    x = np.linspace(0, 127, 500)
    plot.plot(x, np.sin(x))
    fit_y_range(plot, np.sin(x))
    QApplication.processEvents()
    labels = drawn_labels(plot.getAxis("left"))
    assert {-1.0, 1.0} <= {float(text) for text in labels}, (plot.getViewBox().height(), labels)


@pytest.mark.parametrize("panel_id", ["waveforms", "similarity", "magnitude", "uniqueness", "relative", "spectrum",
                                      "addition"])
def test_no_plot_axis_scales_its_labels_with_an_si_prefix(qtbot, state, compute, panel_id):
    # One position: pyqtgraph labelled the waveforms' position axis and the
    # similarity profile's offset axis −400 … 400 "(x0.001)".
    from posenc_gui.views import panel_classes

    state.update(seq_len=1, d_model=2)
    panel = show_panel(qtbot, {cls.panel_id: cls for cls in panel_classes()}[panel_id](state, compute))
    panel.grab()
    axes = [item for item in panel.figure_widget().scene().items() if isinstance(item, CompactAxisItem)]
    assert axes
    for axis in axes:
        assert axis.autoSIPrefixScale == 1.0 and "(x" not in axis.labelString(), axis.labelString()


def test_setting_an_axis_its_own_ticks_again_does_not_lay_it_out_again(qtbot):
    # The analysis panels set their ticks on every update; each setTicks lays the axis out again.
    from posenc_gui.views.plotkit import set_ticks

    axis = CompactAxisItem("left")
    laid_out = []
    set_ticks_of_axis = axis.setTicks
    axis.setTicks = lambda ticks: (laid_out.append(ticks), set_ticks_of_axis(ticks))
    ticks = [[(0.0, "0"), (0.5, "half"), (1.0, "1")], []]
    set_ticks(axis, ticks)
    set_ticks(axis, [[(0.0, "0"), (0.5, "half"), (1.0, "1")], []])  # equal, not the same list
    assert laid_out == [ticks]
    set_ticks(axis, [[(0.0, "0"), (1.0, "1")], []])
    set_ticks(axis, None)  # back to the axis's own ticks
    assert laid_out == [ticks, [[(0.0, "0"), (1.0, "1")], []], None]


@pytest.mark.parametrize("scale", [1.0, 0.001])
@pytest.mark.parametrize("low, high, size", [(-0.5, 511.5, 900), (-0.5, 127.5, 300), (3.7, 3.9, 400),
                                             (-1e6, 2.5e6, 260), (0.0, 1.0, 80)])
def test_tick_values_are_pyqtgraphs_without_its_isclose(qapp, monkeypatch, scale, low, high, size):
    # pyqtgraph drops a higher level's ticks from the lower ones with np.isclose (about 80 µs a call): the
    # heatmap's dimension axis laid out again at every d_model step
    axis, stock = CompactAxisItem("bottom"), pg.AxisItem("bottom")
    for item in (axis, stock):
        item.setScale(scale)
        item.setStyle(maxTickLevel=2)
    levels = axis.tickSpacing(low * scale, high * scale, size)
    monkeypatch.setattr(stock, "tickSpacing", lambda *_: levels)  # the same levels, from pyqtgraph's tickValues
    expected = stock.tickValues(low, high, size)
    isclose_calls = []
    real_isclose = np.isclose
    monkeypatch.setattr(np, "isclose", lambda *a, **k: isclose_calls.append(1) or real_isclose(*a, **k))
    ticks = axis.tickValues(low, high, size)
    assert isclose_calls == []
    assert len(ticks) == len(expected) >= 2
    for (spacing, values), (stock_spacing, stock_values) in zip(ticks, expected):
        assert spacing == stock_spacing
        assert values == pytest.approx(stock_values, rel=1e-12, abs=1e-12 * abs(spacing))


def test_fitting_the_y_range_a_plot_shows_already_sets_nothing(qtbot):
    # the waveforms fit their ±1 at every d_model step: pyqtgraph's range update and its signals cost ~0.1 ms
    from posenc_gui.views.plotkit import fit_y_range, style_plot

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot()
    style_plot(plot)
    widget.resize(460, 300)
    widget.show()
    qtbot.waitExposed(widget)
    view_box = plot.getViewBox()
    ranges_set = []
    real_set_range = view_box.setRange
    view_box.setRange = lambda *args, **kwargs: (ranges_set.append(kwargs.get("yRange")),
                                                 real_set_range(*args, **kwargs))
    x = np.linspace(0, 127, 500)
    fit_y_range(plot, np.sin(x))
    shown = view_box.viewRange()[1]
    fit_y_range(plot, np.cos(x))  # the same round bounds, -1 … 1
    assert len(ranges_set) == 1 and view_box.viewRange()[1] == shown
    fit_y_range(plot, 3 * np.sin(x))  # other bounds
    assert len(ranges_set) == 2 and view_box.viewRange()[1] != shown
    fit_y_range(plot, np.sin(x))
    view_box.setYRange(-5, 5)  # moved since (a zoom): fitted again
    fit_y_range(plot, np.sin(x))
    assert view_box.viewRange()[1] == shown
    view_box.enableAutoRange(y=True)  # auto-range since: fitted again, auto-range off
    fit_y_range(plot, np.sin(x))
    assert not view_box.autoRangeEnabled()[1] and view_box.viewRange()[1] == shown


def test_an_axis_with_an_item_cache_is_drawn_from_its_static_text_on_screen(qtbot, monkeypatch):
    # Qt draws a cached item into a pixmap for the canvas: drawn by pyqtgraph there (its QPicture, every label
    # laid out again), the similarity profile's y axis took 0.57 ms a repaint
    from PySide6.QtWidgets import QGraphicsItem

    from posenc_gui.views.plotkit import add_plot, new_layout_widget, pgcompat

    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = add_plot(canvas.ci, "offset", "similarity")
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    axis = plot.getAxis("left")
    assert axis.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    drawn_by_pyqtgraph = []
    real_paint = pg.AxisItem.paint
    monkeypatch.setattr(pg.AxisItem, "paint", lambda item, *args: (drawn_by_pyqtgraph.append(item),
                                                                   real_paint(item, *args)))
    plot.setYRange(0, 7)  # a new range: the axis is laid out and drawn again
    qtbot.waitUntil(lambda: axis.picture is not None, timeout=TIMEOUT_MS)
    assert axis not in drawn_by_pyqtgraph
    assert isinstance(axis.picture, pgcompat.AxisDrawing)
