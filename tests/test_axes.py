"""Tick labels that stay readable (and do not overlap) up to a million positions."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPicture
from PySide6.QtWidgets import QApplication

from posenc_gui.views.matrixplot import CompactAxisItem
from posenc_gui.views.similarity import SimilarityPanel


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
    panel = SimilarityPanel(state, compute)
    qtbot.addWidget(panel)
    panel.resize(480, 360)  # the matrix plot is about 200 px wide
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle(60)
    axis = panel.matrix.plot.getAxis("bottom")
    rects = _label_rects(axis)
    assert rects
    for left, right in zip(rects, rects[1:]):
        assert left.right() <= right.left(), [r.getRect() for r in rects]


@pytest.mark.parametrize("axis_class, overlaps", [(pg.AxisItem, True), (CompactAxisItem, False)])
def test_a_200_px_axis_over_a_million_positions(qtbot, axis_class, overlaps):
    # pyqtgraph's own axis is the control: its labels run into each other.
    widget = pg.PlotWidget(axisItems={"bottom": axis_class("bottom")})
    qtbot.addWidget(widget)
    widget.resize(260, 160)
    widget.setXRange(0, 1_048_575, padding=0)
    widget.show()
    qtbot.waitExposed(widget)
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


def _specs(layout, axis):
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"] is not None:
            painter.setFont(axis.style["tickFont"])
        axis_spec, ticks, texts = layout(axis, painter)
    finally:
        painter.end()
    point = lambda p: (round(p.x(), 9), round(p.y(), 9))  # noqa: E731
    return ((axis_spec[0].color().name(), point(axis_spec[1]), point(axis_spec[2])),
            [(pen.color().name(QColor.NameFormat.HexArgb), point(a), point(b)) for pen, a, b in ticks],
            [(rect.getRect(), int(flags), text) for rect, flags, text in texts])


def _four_sided_plot(qtbot):
    """A 640 × 420 plot with a :class:`CompactAxisItem` on every side, all shown."""
    widget = pg.PlotWidget(axisItems={side: CompactAxisItem(side) for side in ("left", "bottom", "right", "top")})
    qtbot.addWidget(widget)
    widget.resize(640, 420)
    plot = widget.getPlotItem()
    for side in ("right", "top"):
        plot.showAxis(side)
    return widget, plot


def _fast_and_pyqtgraph_specs(axis, monkeypatch):
    """The axis's specifications from the fast layout (failing if it detours through pyqtgraph's), and pyqtgraph's."""
    theirs = _specs(pg.AxisItem.generateDrawSpecs, axis)
    with monkeypatch.context() as patch:
        patch.setattr(pg.AxisItem, "generateDrawSpecs", lambda *args: pytest.fail("pyqtgraph's layout ran"))
        ours = _specs(CompactAxisItem.generateDrawSpecs, axis)
    return ours, theirs


def _show_laid_out(qtbot, widget) -> None:
    """Show ``widget`` and paint it twice: the first paint measures the labels and widens the axes to fit them."""
    widget.show()
    qtbot.waitExposed(widget)
    for _ in range(2):
        widget.grab()
        QApplication.processEvents()


@pytest.mark.parametrize("x_range, y_range", [
    ((-0.5, 511.5), (-0.5, 127.5)),              # the default heatmap
    ((-0.5, 1_048_575.5), (1_000_000, 1_000_050)),  # a million positions; zoomed in at the end
    ((0.25, 0.75), (-3e-4, 2e-4)),               # fractions, tiny values
    ((-7.0, 7.0), (100.0, 260.0)),
])
@pytest.mark.parametrize("grid", [False, True])
def test_axis_layout_matches_pyqtgraph(qtbot, monkeypatch, x_range, y_range, grid):
    # The fast layout must give pyqtgraph's ticks and labels on every side, with and without a grid.
    widget, plot = _four_sided_plot(qtbot)
    if grid:
        plot.showGrid(x=True, y=True, alpha=0.25)
    widget.setRange(xRange=x_range, yRange=y_range, padding=0)
    _show_laid_out(qtbot, widget)
    for side in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(side)
        ours, theirs = _fast_and_pyqtgraph_specs(axis, monkeypatch)
        assert ours == theirs, side
        assert ours[2], side  # some labels were laid out
        low, high = axis.range
        assert CompactAxisItem.tickValues(axis, low, high, 400) == pg.AxisItem.tickValues(axis, low, high, 400)


@pytest.mark.parametrize("ticks", ["log", "set"])
@pytest.mark.parametrize("grid", [False, True])
def test_log_axes_and_set_ticks_match_pyqtgraph(qtbot, monkeypatch, ticks, grid):
    # The analysis panels' log axes and their decade ticks (setTicks) take the fast layout too.
    widget, plot = _four_sided_plot(qtbot)
    if grid:
        plot.showGrid(x=True, y=True, alpha=0.25)
    if ticks == "log":
        plot.setLogMode(x=True, y=True)
        widget.setRange(xRange=(-1.3, 3.2), yRange=(-3.0, 0.5), padding=0)
    else:
        for side in ("left", "bottom", "right", "top"):
            plot.getAxis(side).setTicks([[(0.0, "zero"), (0.5, "half"), (1.0, "one")], [(0.25, "¼"), (0.75, "¾")]])
        widget.setRange(xRange=(-0.1, 1.1), yRange=(0.2, 1.05), padding=0)
    _show_laid_out(qtbot, widget)
    for side in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(side)
        ours, theirs = _fast_and_pyqtgraph_specs(axis, monkeypatch)
        assert ours == theirs, side
        assert ours[2], side
        assert _drawn(axis, CompactAxisItem.paint) == _drawn(axis, pg.AxisItem.paint), side


@pytest.mark.parametrize("side", ["left", "right", "top", "bottom"])
def test_tick_labels_land_on_the_pixels_draw_text_gives(qapp, side):
    # Glyphs are placed at fractions of a pixel; a label right- or centre-aligned from
    # boundingRect's box was off in 1 of 11 of these placements.
    import itertools

    from posenc_gui.views.matrixplot import _LABEL_FLAGS, static_text_at

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


def _drawn(axis, paint) -> bytes:
    """The pixels ``paint`` gives ``axis`` on a white image (a fresh layout each time)."""
    bounds = axis.boundingRect().toAlignedRect()
    image = QImage(bounds.width() + 20, bounds.height() + 20, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        painter.translate(10 - bounds.x(), 10 - bounds.y())
        axis.picture = None
        paint(axis, painter, None, None)
    finally:
        painter.end()
    return bytes(image.constBits())


@pytest.mark.parametrize("grid", [False, True])
def test_axes_draw_the_pixels_pyqtgraph_draws(qtbot, grid):
    # The axis is drawn from a kept layout with static text instead of a
    # recorded QPicture: the pixels must be pyqtgraph's, on every side, with
    # and without grid lines, and again after the range changed.
    widget, plot = _four_sided_plot(qtbot)
    if grid:
        plot.showGrid(x=True, y=True, alpha=0.25)
    widget.show()
    qtbot.waitExposed(widget)
    for x_range, y_range in [((-0.5, 511.5), (-0.5, 127.5)), ((1_000_000, 1_000_050), (-3e-4, 2e-4))]:
        widget.setRange(xRange=x_range, yRange=y_range, padding=0)
        for _ in range(2):
            widget.grab()
            QApplication.processEvents()
        for side in ("left", "bottom", "right", "top"):
            axis = plot.getAxis(side)
            ours = _drawn(axis, CompactAxisItem.paint)
            assert ours == _drawn(axis, pg.AxisItem.paint), (side, x_range)
            assert ours.count(b"\xff") < len(ours), side  # something was drawn


def test_matrix_axes_tick_whole_rows_and_columns_without_si_prefix(qtbot, state, compute):
    # A one-position, two-dimension heatmap: pyqtgraph labelled its row axis
    # −400 … 400 "(x0.001)" and its column axis in tenths.
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(seq_len=1, d_model=2)
    panel = HeatmapPanel(state, compute)
    qtbot.addWidget(panel)
    panel.resize(700, 500)
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle()
    panel.grab()
    rows, columns = (panel.matrix.plot.getAxis(side) for side in ("left", "bottom"))
    assert [text for _, _, text in _specs(CompactAxisItem.generateDrawSpecs, rows)[2]] == ["0"]
    assert [text for _, _, text in _specs(CompactAxisItem.generateDrawSpecs, columns)[2]] == ["0", "1"]
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
        from posenc_gui.views.matrixplot import CompactAxisItem
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
    results = {which: subprocess.run([sys.executable, str(script), which], capture_output=True, text=True, timeout=60)
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

    from posenc_gui.views.matrixplot import new_layout_widget, show_grid, style_plot

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


def test_setting_an_axis_its_own_ticks_again_keeps_its_layout(qtbot):
    # The analysis panels set their ticks on every update; each setTicks lays the axis out again.
    from posenc_gui.views.matrixplot import set_ticks

    widget, plot = _four_sided_plot(qtbot)
    widget.show()
    qtbot.waitExposed(widget)
    axis = plot.getAxis("left")
    ticks = [[(0.0, "0"), (0.5, "half"), (1.0, "1")], []]
    set_ticks(axis, ticks)
    widget.grab()
    laid_out = axis.picture
    assert laid_out is not None
    set_ticks(axis, [[(0.0, "0"), (0.5, "half"), (1.0, "1")], []])  # equal, not the same list
    assert axis.picture is laid_out
    set_ticks(axis, [[(0.0, "0"), (1.0, "1")], []])
    assert axis.picture is None
    widget.grab()
    assert [text for _, _, text in _specs(CompactAxisItem.generateDrawSpecs, axis)[2]] == ["0", "1"]
    set_ticks(axis, None)  # back to the axis's own ticks
    assert axis._tickLevels is None


@pytest.mark.parametrize("height", [160, 200, 600])
def test_a_fitted_y_range_keeps_the_labels_of_its_round_bounds(qtbot, height):
    # A short plot of sinusoids (the waveforms dock above a legend) lost its ±1:
    # 3 % of padding was less than the half label the axis needs to draw them whole.
    from posenc_gui.views.matrixplot import fit_y_range, show_grid, style_plot

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
    labels = [text for _, _, text in _specs(CompactAxisItem.generateDrawSpecs, plot.getAxis("left"))[2]]
    assert {-1.0, 1.0} <= {float(text) for text in labels}, (plot.getViewBox().height(), labels)


@pytest.mark.parametrize("panel_id", ["waveforms", "similarity", "magnitude", "uniqueness", "relative", "spectrum",
                                      "addition"])
def test_no_plot_axis_scales_its_labels_with_an_si_prefix(qtbot, state, compute, panel_id):
    # One position: pyqtgraph labelled the waveforms' position axis and the
    # similarity profile's offset axis −400 … 400 "(x0.001)".
    from posenc_gui.views import panel_classes

    state.update(seq_len=1, d_model=2)
    panel = {cls.panel_id: cls for cls in panel_classes()}[panel_id](state, compute)
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    qtbot.waitExposed(panel)
    state.flush()
    assert compute.wait_idle()
    panel.grab()
    axes = [item for item in panel.figure_widget().scene().items() if isinstance(item, CompactAxisItem)]
    assert axes
    for axis in axes:
        assert axis.autoSIPrefixScale == 1.0 and "(x" not in axis.labelString(), axis.labelString()
