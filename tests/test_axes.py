"""Tick labels that stay readable (and do not overlap) up to a million positions."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter

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
