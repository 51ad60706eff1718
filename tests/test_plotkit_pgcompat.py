"""One test per use of pyqtgraph's internals listed in posenc_gui/views/plotkit/pgcompat.py.

Each fails when pyqtgraph changes what the kit relies on (a name, a call it
makes, the shape of a value), so a new pyqtgraph shows here what to adapt.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtWidgets import QApplication

from helpers_axes import drawn_labels
from posenc_gui.views.plotkit import new_layout_widget, pgcompat

LONG_TITLE = "sinusoidal, d_model 8,192, from position 524,288 (a title wider than a narrow dock)"


def test_1_a_title_label_calls_update_min_through_its_instance(qapp):
    # pyqtgraph makes the text's width the label's minimum (the behaviour replaced), and
    # calls updateMin through the instance after setText: the replacement takes effect.
    stock = pg.LabelItem()
    stock.setText(LONG_TITLE)
    assert stock.minimumWidth() == pytest.approx(stock.itemRect().width()) and stock.minimumWidth() > 200
    narrow = pg.LabelItem()
    pgcompat.let_title_narrow(narrow)
    narrow.setText(LONG_TITLE)
    assert narrow.minimumWidth() <= pgcompat.MIN_TITLE_WIDTH
    assert narrow.preferredWidth() == pytest.approx(narrow.itemRect().width())  # its full width where it fits


def shown_long_title(qtbot, width: int) -> tuple[pg.GraphicsLayoutWidget, pg.LabelItem]:
    """A styled plot titled LONG_TITLE on a shown canvas ``width`` × 400 px; the canvas and the title's label."""
    from posenc_gui.views.plotkit import set_title, style_plot

    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = canvas.ci.addPlot()
    style_plot(plot)
    set_title(plot, LONG_TITLE)
    canvas.resize(width, 400)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas, plot.titleLabel


def test_1_a_title_wider_than_its_plot_wraps_and_its_row_grows(qtbot):
    # pyqtgraph fixes a plot's title row at 30 px in setTitle; a wrapped title gets the height of its lines.
    canvas, label = shown_long_title(qtbot, 1400)
    qtbot.waitUntil(lambda: label.item.textWidth() == -1)  # room for one line: not wrapped
    # and drawn: measuring the one-line width must not leave the cached title blank
    canvas.grab()  # drawn once: the title item's device cache is filled
    label.updateMin()  # as every resize of the label calls it, with the text unchanged
    QApplication.processEvents()
    image = canvas.grab().toImage()
    top = int(label.mapRectToScene(label.boundingRect()).bottom())
    assert any(image.pixelColor(x, y).lightness() < 100 for y in range(top) for x in range(0, image.width(), 2))
    assert label.maximumHeight() == pgcompat.PLOT_TITLE_ROW_PX
    one_line, one_line_width = label.itemRect().height(), label.itemRect().width()
    canvas.resize(260, 400)
    qtbot.waitUntil(lambda: label.item.textWidth() > 0)
    wrapped = label.itemRect().height()
    assert wrapped >= 2 * one_line - 2  # two lines or more
    assert label.itemRect().width() <= label.size().width() + 1  # inside the label: nothing cut off
    assert label.maximumHeight() >= wrapped - 1 and label.maximumHeight() > pgcompat.PLOT_TITLE_ROW_PX
    assert one_line_width > label.size().width()  # it did not fit on one line


def test_1_a_wrapped_title_keeps_its_lines_until_there_is_clear_room_for_one(qtbot):
    # The row a wrapped title grows takes height from the plot; its y axis can then need fewer (narrower)
    # tick labels and give the title just the room for one line, whose shorter row gives the axis its
    # wider labels back: in a side-by-side comparison the plot re-laid itself out forever.
    canvas, label = shown_long_title(qtbot, 260)
    qtbot.waitUntil(lambda: label.item.textWidth() > 0)
    wrapped_height = label.itemRect().height()
    label.item.setTextWidth(-1)
    one_line = label.item.boundingRect().width()
    label.updateMin()  # wraps it again at the label's width
    assert label.item.textWidth() > 0

    def widen_label_to(width: float) -> None:  # at least (its axis may narrow once the title has one line)
        canvas.resize(canvas.width() + round(width - label.size().width()), 400)
        qtbot.waitUntil(lambda: label.size().width() >= width - 1)
        QApplication.processEvents()

    widen_label_to(one_line + pgcompat.UNWRAP_MARGIN_PX / 2)  # one line would fit, only just
    assert label.size().width() < one_line + pgcompat.UNWRAP_MARGIN_PX - 1
    assert label.item.textWidth() > 0 and label.itemRect().height() == pytest.approx(wrapped_height)
    assert label.itemRect().width() <= label.size().width() + 1  # inside the label
    widen_label_to(one_line + pgcompat.UNWRAP_MARGIN_PX + 20)  # clear room
    qtbot.waitUntil(lambda: label.item.textWidth() == -1)
    assert label.maximumHeight() == pgcompat.PLOT_TITLE_ROW_PX


def test_2_a_legend_hands_its_size_updates_to_update_size(qapp):
    calls = []

    class Counting(pgcompat.LegendInLayout):
        def layout_changed(self) -> None:
            calls.append(len(pgcompat.legend_entries(self)))

    legend = Counting(offset=None)
    calls.clear()
    curve = pg.PlotDataItem([0, 1], [0, 1], name="a")
    legend.addItem(curve, "a")
    assert calls == [1]
    legend.setColumnCount(2)
    assert calls == [1, 1]
    legend.removeItem(curve)
    assert calls[-1] == 0
    legend.addItem(curve, "a")
    legend.clear()
    assert calls[-1] == 0 and len(calls) == 5


def test_3_legend_entries_are_sample_and_label_pairs(qapp):
    legend = pg.LegendItem(offset=None)
    for name in ("dim 0", "dim 1"):
        legend.addItem(pg.PlotDataItem([0, 1], [0, 1], name=name), name)
    entries = pgcompat.legend_entries(legend)
    assert [label.text for _, label in entries] == ["dim 0", "dim 1"]
    assert all(isinstance(sample, pg.ItemSample) and isinstance(label, pg.LabelItem) for sample, label in entries)


def test_9_a_legend_sample_knows_the_item_it_stands_for(qapp):
    legend = pg.LegendItem(offset=None)
    curves = [pg.PlotDataItem([0, 1], [0, 1], name=name) for name in ("dim 0", "dim 1")]
    for curve in curves:
        legend.addItem(curve, curve.name())
    assert [pgcompat.legend_sample_item(sample) for sample, _ in pgcompat.legend_entries(legend)] == curves


def test_4_a_layout_knows_the_cells_of_its_items(qtbot):
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = canvas.ci.addPlot(row=1, col=2, colspan=2)
    label = canvas.ci.addLabel("title", row=0, col=0)
    assert pgcompat.layout_cells(canvas.ci, plot) == [(1, 2), (1, 3)]
    assert pgcompat.layout_cells(canvas.ci, label) == [(0, 0)]


@pytest.mark.parametrize("side", ["left", "bottom"])
def test_5_resize_event_without_an_event_centres_the_axis_title(qtbot, side):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    qtbot.waitExposed(widget)
    axis = widget.getPlotItem().getAxis(side)
    axis.setLabel("x")
    QApplication.processEvents()
    axis.setLabel("a much longer axis title than before")
    pgcompat.centre_axis_title(axis)
    title = axis.label.mapRectToParent(axis.label.boundingRect()).center()
    middle = axis.rect().center()
    assert (title.y() if side == "left" else title.x()) == pytest.approx(
        middle.y() if side == "left" else middle.x(), abs=1)


def test_6_pyqtgraph_keeps_only_the_labels_inside_the_bounding_rectangle(qtbot):
    # A bounding rectangle of one pixel: pyqtgraph drops every label (the behaviour worked
    # around); unbounded while it lays out, it returns them all for the axis to place.
    tiny = QRectF(0, 0, 1, 1)

    class Stock(pg.AxisItem):
        def boundingRect(self) -> QRectF:  # noqa: N802
            return QRectF(tiny)

    class Placing(pgcompat.AxisPlacingEndLabels):
        def label_room(self) -> QRectF:
            return QRectF(tiny)

    shown = {}
    for kind in (Stock, Placing):
        widget = pg.PlotWidget(axisItems={"bottom": kind("bottom")})
        qtbot.addWidget(widget)
        widget.resize(400, 300)
        widget.setXRange(0, 10, padding=0)
        widget.show()
        qtbot.waitExposed(widget)
        axis = widget.getPlotItem().getAxis("bottom")
        shown[kind] = drawn_labels(axis)
        assert axis.boundingRect() == tiny  # the rectangle is the axis's own again after the layout
    assert shown[Stock] == []
    assert {"0", "4", "10"} <= set(shown[Placing])


def test_7_a_curve_draws_as_segments_by_its_segmented_line_mode(qtbot):
    # pyqtgraph reads opts["segmentedLineMode"] at paint: "on" draws two-point segments, "off" one path.
    curve = pg.PlotCurveItem(x=[0.0, 1.0, 2.0, 3.0], y=[0.0, 1.0, 0.0, 1.0])
    assert pgcompat.segmented_line_mode(curve) in ("auto", "on", "off")
    calls = {"lines": 0, "path": 0}

    class Recording(QPainter):
        def drawLines(self, *args):  # noqa: N802
            calls["lines"] += 1
            super().drawLines(*args)

        def drawPath(self, *args):  # noqa: N802
            calls["path"] += 1
            super().drawPath(*args)

    for mode in ("on", "off"):
        pgcompat.set_segmented_line_mode(curve, mode)
        picture = QPicture()
        painter = Recording(picture)
        curve.paint(painter, None, None)
        painter.end()
    assert calls["lines"] >= 1 and calls["path"] >= 1  # "on" drew segments, "off" a path
    assert pgcompat.segmented_line_mode(pg.LabelItem()) is None


def test_8_an_axis_redraws_its_cached_picture_once_forgotten(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(300, 200)
    widget.show()
    qtbot.waitExposed(widget)
    axis = widget.getPlotItem().getAxis("bottom")
    widget.grab()
    cached = axis.picture
    assert isinstance(cached, QPicture)  # pyqtgraph keeps the axis's drawing
    widget.grab()
    assert axis.picture is cached  # and paints from it while nothing changed
    assert pgcompat.forget_axis_picture(axis) and axis.picture is None
    widget.grab()
    assert isinstance(axis.picture, QPicture) and axis.picture is not cached  # drawn again
    assert not pgcompat.forget_axis_picture(pg.LabelItem())


def test_10_items_keep_their_options_in_opts(qapp):
    # the pen, connect and stepMode of a curve (the A/B overlay copies them), a legend's text colour, a label's
    curve = pg.PlotDataItem([0.0, 1.0, 2.0], [0.0, 1.0], pen=pg.mkPen("#123456", width=3), stepMode="center",
                            connect="finite")
    pen = pgcompat.item_option(curve, "pen")
    assert pen.color().name() == "#123456" and pen.widthF() == 3
    assert pgcompat.item_option(curve, "stepMode") == "center"
    assert pgcompat.item_option(curve, "connect", "all") == "finite"
    assert pgcompat.item_option(pg.PlotCurveItem([0.0, 1.0], [0.0, 1.0]), "connect", "all") == "all"
    assert pgcompat.item_option(pg.LegendItem(labelTextColor="#654321"), "labelTextColor") is not None
    assert pgcompat.item_option(pg.LegendItem(), "labelTextColor") is None
    label = pg.LabelItem()
    label.setText("x", color="#abcdef")
    assert pgcompat.item_option(label, "color") == "#abcdef"
    assert pgcompat.item_option(object(), "pen", "none") == "none"  # no opts: the default


def test_11_a_label_colours_its_next_text_with_the_colour_it_keeps(qapp):
    plot = pg.PlotItem()
    pgcompat.set_label_colour(plot.titleLabel, "#1b9e77")
    plot.setTitle("a title", size="10pt")  # as set_title does: a size, no colour
    assert "#1b9e77" in plot.titleLabel.item.toHtml().lower()


def test_12_a_view_box_hangs_its_contents_from_a_group_in_data_coordinates(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    view_box = widget.getPlotItem().getViewBox()
    curve = pg.PlotCurveItem([0.0, 10.0], [0.0, 10.0])
    view_box.addItem(curve)
    group = pgcompat.view_box_contents(view_box)
    assert curve.parentItem() is group
    view_box.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    widget.resize(300, 200)
    # a data point maps to the scene as the view box maps it: the group's coordinates are the data's
    expected = view_box.mapViewToScene(pg.Point(5.0, 5.0))
    mapped = group.mapToScene(pg.Point(5.0, 5.0))
    assert (mapped.x(), mapped.y()) == pytest.approx((expected.x(), expected.y()))


def test_13_an_item_draws_with_the_pens_it_keeps(qtbot):
    # changing a kept pen changes the drawing (the theme and the export change colours and widths so)
    widget = pg.PlotWidget(background="w")
    qtbot.addWidget(widget)
    widget.resize(200, 150)
    curve = widget.plot([0.0, 1.0], [0.5, 0.5], pen=pg.mkPen("#ff0000", width=9), symbol="o",
                        symbolPen=pg.mkPen("#00ff00"))
    widget.show()
    qtbot.waitExposed(widget)

    def colours() -> set[str]:
        image = widget.grab().toImage()
        return {image.pixelColor(x, y).name() for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)}

    assert "#ff0000" in colours()
    pens = [pen for item in (curve, curve.curve) for pen in pgcompat.kept_pens(item, symbol_pens=False)]
    assert pens and all(pen.color().name() != "#00ff00" for pen in pens)  # the symbol's pen left out
    for pen in pens:
        pen.setColor(pg.mkColor("#0000ff"))
    curve.curve.update()
    qtbot.waitUntil(lambda: "#0000ff" in colours() and "#ff0000" not in colours())
    symbol_pens = list(pgcompat.kept_pens(curve))
    assert any(pen.color().name() == "#00ff00" for pen in symbol_pens)
    scatter = pg.ScatterPlotItem([0.0, 1.0], [0.0, 1.0], pen=[pg.mkPen("#111111"), pg.mkPen("#222222")])
    point_pens = {pen.color().name() for pen in pgcompat.kept_pens(scatter, point_pens=True)}
    assert {"#111111", "#222222"} <= point_pens
    assert not {"#111111", "#222222"} & {pen.color().name() for pen in pgcompat.kept_pens(scatter)}


#: pyqtgraph internals that only pgcompat.py may touch (see its list): an item's ``opts`` dict, a view box's
#: ``childGroup``, a legend's ``items`` list, the attributes of an item walked with ``vars()`` (``vars(args)`` of
#: an argparse namespace is no pyqtgraph internal).
INTERNALS = {
    "opts": re.compile(r"\.opts\b"),
    "childGroup": re.compile(r"\.childGroup\b"),
    "legend.items": re.compile(r"legend\w*\.items\b"),
    "vars()": re.compile(r"\bvars\((?!args\))"),
}


def internals_outside_pgcompat(root: Path) -> list[str]:
    """``path:line: internal`` for every use of :data:`INTERNALS` in the sources below ``root`` but pgcompat.py."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "pgcompat.py" and path.parent.name == "plotkit":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(root.parent)}:{number}: {name}"
                      for name, pattern in INTERNALS.items() if pattern.search(line)]
    return found


def test_no_pyqtgraph_internal_is_used_outside_pgcompat(tmp_path):
    import posenc_gui

    package = Path(posenc_gui.__file__).parent
    assert internals_outside_pgcompat(package) == []
    # the scan finds each internal it looks for
    planted = tmp_path / "posenc_gui"
    planted.mkdir()
    (planted / "view.py").write_text("pen = curve.opts['pen']\ngroup = box.childGroup\nfor e in self.legend.items: pass\n"
                                     "for v in vars(item).values(): pass\nsettings = vars(args)\n", encoding="utf-8")
    assert [entry.split(": ")[-1] for entry in internals_outside_pgcompat(planted)] == [
        "opts", "childGroup", "legend.items", "vars()"]


def test_15_a_new_plain_title_that_fits_is_drawn_in_place_without_a_layout_pass(qtbot):
    # pyqtgraph sets a label's text through its rich-text item and lays the plot out again; the kit draws
    # a plain title that fits over the label instead, and hands anything else back to the label.
    from PySide6.QtCore import QEvent, QObject

    from posenc_gui.views.plotkit import set_title, style_plot

    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = canvas.ci.addPlot()
    style_plot(plot)
    set_title(plot, "d_model 512")
    canvas.resize(600, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    for _ in range(5):  # showing a canvas posts layout requests in several rounds
        QApplication.processEvents()
    label = plot.titleLabel
    before = canvas.grab().toImage()

    class LayoutRequests(QObject):
        count = 0

        def eventFilter(self, watched, event):  # noqa: N802 (Qt override)
            if event.type() == QEvent.Type.LayoutRequest:
                LayoutRequests.count += 1
            return False

    counter = LayoutRequests()
    QApplication.instance().installEventFilter(counter)
    try:
        set_title(plot, "d_model 514")
        QApplication.processEvents()
    finally:
        QApplication.instance().removeEventFilter(counter)
    assert LayoutRequests.count == 0
    assert label.text == "d_model 514" and pgcompat.label_shown_text(label) == "d_model 514"
    assert not label.item.isVisible()  # the rich item, with the old text, is hidden
    assert canvas.grab().toImage() != before  # the new text is drawn
    plain = label._plain_text
    centre = plain.mapRectToParent(plain.boundingRect()).center()
    assert centre.x() == pytest.approx(label.rect().center().x(), abs=1.0)

    # markup, and a text wider than the label, go to the label's own item (which lays out and wraps)
    assert not pgcompat.show_plain_text(label, "<b>bold</b>", "#000000")
    assert not pgcompat.show_plain_text(label, "x" * 400, "#000000")
    set_title(plot, "<b>d_model 516</b>")
    assert label.item.isVisible() and not plain.isVisible()
    assert pgcompat.label_shown_text(label) == "d_model 516"


@pytest.mark.parametrize("pen_width, cosmetic", [(1, True), (3, False)])
def test_16_a_curves_bounds_are_pyqtgraphs_and_kept_in_its_cache(qapp, pen_width, cosmetic):
    from posenc_gui.views.plotkit import ScreenCurve

    x = np.linspace(-3.0, 40.0, 301)
    y = np.sin(x) * 7 + 2
    pen = pg.mkPen("b", width=pen_width)
    pen.setCosmetic(cosmetic)
    curve, stock = ScreenCurve(x, y, pen=pen), pg.PlotCurveItem(x, y, pen=pen)
    for ax in (0, 1):
        assert pgcompat.finite_data_bounds(curve, ax, 1.0, None) == pytest.approx(stock.dataBounds(ax))
        assert curve.dataBounds(ax) == pytest.approx(stock.dataBounds(ax))
        assert curve._boundsCache[ax][1] == pytest.approx(stock.dataBounds(ax))  # pyqtgraph's cache, which setData clears
    curve.setData(x, y * 2)  # new data: the bounds are found again, not read from the cache
    assert curve.dataBounds(1) == pytest.approx(pg.PlotCurveItem(x, y * 2, pen=pen).dataBounds(1))
    # non-finite data, a fraction of the range and an orthogonal range are pyqtgraph's own scans
    gappy = y.copy()
    gappy[10] = np.nan
    curve.setData(x, gappy)
    assert pgcompat.finite_data_bounds(curve, 1, 1.0, None) is None
    assert curve.dataBounds(1) == pytest.approx(pg.PlotCurveItem(x, gappy, pen=pen).dataBounds(1))
    assert pgcompat.finite_data_bounds(curve, 0, 0.5, None) is None
    assert pgcompat.finite_data_bounds(curve, 0, 1.0, (0, 1)) is None


def _draw_specs(layout, axis) -> tuple:
    """``layout(axis, painter)`` on a QPicture's painter, in comparable numbers (colours, points, rectangles)."""
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
            [(pen.color().name(pg.QtGui.QColor.NameFormat.HexArgb), point(a), point(b)) for pen, a, b in ticks],
            [(rect.getRect(), int(flags), text) for rect, flags, text in texts])


def _pyqtgraph_every_label(axis, painter):
    """pyqtgraph's own layout of ``axis`` with every label kept (item 6's unbounded rectangle)."""
    axis._laying_out = True
    try:
        return pg.AxisItem.generateDrawSpecs(axis, painter)
    finally:
        axis._laying_out = False


@pytest.mark.parametrize("case", ["heatmap", "million", "fractions", "symmetric", "log", "set ticks"])
@pytest.mark.parametrize("grid", [False, True])
def test_17_the_plain_axis_layout_is_pyqtgraphs(qtbot, case, grid):
    from posenc_gui.views.plotkit import CompactAxisItem

    widget = pg.PlotWidget(axisItems={side: CompactAxisItem(side) for side in ("left", "bottom", "right", "top")})
    qtbot.addWidget(widget)
    widget.resize(640, 420)
    plot = widget.getPlotItem()
    for side in ("right", "top"):
        plot.showAxis(side)
    if grid:
        plot.showGrid(x=True, y=True, alpha=0.25)
    ranges = {"heatmap": ((-0.5, 511.5), (-0.5, 127.5)), "million": ((-0.5, 1_048_575.5), (1_000_000, 1_000_050)),
              "fractions": ((0.25, 0.75), (-3e-4, 2e-4)), "symmetric": ((-7.0, 7.0), (100.0, 260.0)),
              "log": ((-1.3, 3.2), (-3.0, 0.5)), "set ticks": ((-0.1, 1.1), (0.2, 1.05))}
    if case == "log":
        plot.setLogMode(x=True, y=True)
    if case == "set ticks":
        for side in ("left", "bottom", "right", "top"):
            plot.getAxis(side).setTicks([[(0.0, "zero"), (0.5, "half"), (1.0, "one")], [(0.25, "¼"), (0.75, "¾")]])
    x_range, y_range = ranges[case]
    widget.setRange(xRange=x_range, yRange=y_range, padding=0)
    widget.show()
    qtbot.waitExposed(widget)
    for _ in range(2):  # the first paint measures the labels and widens the axes to fit them
        widget.grab()
        QApplication.processEvents()
    for side in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(side)
        ours = _draw_specs(pgcompat.plain_axis_draw_specs, axis)
        assert ours == _draw_specs(_pyqtgraph_every_label, axis), side
        assert ours[1] and ours[2], side  # ticks and labels were laid out
    # a style it does not cover is left to pyqtgraph
    axis.setStyle(tickAlpha=80)
    picture = QPicture()
    painter = QPainter(picture)
    try:
        assert pgcompat.plain_axis_draw_specs(axis, painter) is NotImplemented
    finally:
        painter.end()


@pytest.mark.parametrize("compact", [True, False], ids=["kit axis", "pyqtgraph axis"])
def test_18_an_axis_laid_out_before_its_paint_takes_its_room_then_and_paints_from_that_drawing(qtbot, compact):
    from posenc_gui.views.plotkit import CompactAxisItem

    left = CompactAxisItem("left") if compact else pg.AxisItem("left")
    widget = pg.PlotWidget(axisItems={"left": left})
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.setRange(yRange=(0, 1), padding=0)
    widget.show()
    qtbot.waitExposed(widget)
    widget.grab()
    QApplication.processEvents()
    narrow = left.maximumWidth()
    widget.setRange(yRange=(1_000_000.25, 1_000_000.75), padding=0)  # longer labels, not measured yet
    widget.getPlotItem().getViewBox().updateMatrix()  # the new range reaches the axis (a paint's start does it)
    assert left.picture is None
    assert pgcompat.lay_out_axis_drawing(left)  # measured now: the axis widens before any paint
    widened = left.maximumWidth()
    assert widened > narrow
    drawing = left.picture
    assert drawing is not None and isinstance(drawing, pgcompat.AxisDrawing) == compact
    assert not pgcompat.lay_out_axis_drawing(left)  # nothing to lay out again
    assert left.picture is drawing
    widget.grab()  # the paint, after its plot's layout: it takes no other room
    assert left.maximumWidth() == widened


def test_19_a_colour_bar_builds_its_plot_through_the_class_after_it(qapp, monkeypatch):
    import sys

    view_box_module = sys.modules[pg.ViewBox.__module__]  # the module (its package exports the class by its name)
    built = []
    menu = view_box_module.ViewBoxMenu
    monkeypatch.setattr(view_box_module, "ViewBoxMenu", lambda view: built.append(view) or menu(view))
    pg.ColorBarItem(values=(-1, 1), interactive=False)
    assert len(built) == 1  # pyqtgraph's own bar builds its view box's menu (then drops it, not interactive)
    bar = pgcompat.ColorBarWithoutMenu(values=(-1, 1), colorMap=pg.colormap.get("CET-D1"), interactive=False,
                                       label="value")
    assert len(built) == 1 and bar.getViewBox().menu is None
    assert bar.levels() == (-1, 1) and bar.getAxis("left").labelText == "value"  # ColorBarItem's own set-up ran


def test_20_a_horizontal_axis_s_height_follows_its_title_s_lines(qtbot):
    from posenc_gui.views.plotkit import CompactAxisItem
    from waiting import finish_pending

    bottom = CompactAxisItem("bottom")
    widget = pg.PlotWidget(axisItems={"bottom": bottom})
    qtbot.addWidget(widget)
    widget.resize(600, 300)
    bottom.setLabel("distance r = m − n (key before query), a title much wider than a narrow plot")
    widget.show()
    qtbot.waitExposed(widget)
    finish_pending(qtbot, widget)
    one_line = bottom.maximumHeight()
    assert bottom.label.textWidth() < 0  # it fits: one line, pyqtgraph's own
    widget.resize(200, 300)
    finish_pending(qtbot, widget)
    assert bottom.label.textWidth() > 0 and bottom.maximumHeight() > one_line  # two lines, a taller axis
    left, width = bottom.label.pos().x(), bottom.label.boundingRect().width()
    assert left >= -0.5 and left + width <= bottom.size().width() + 0.5  # inside the axis (before: cut at the right)
    widget.resize(600, 300)
    finish_pending(qtbot, widget)
    assert bottom.label.textWidth() < 0 and bottom.maximumHeight() == one_line


def _count_title_settings(axis: pg.AxisItem) -> list[str]:
    """The HTML set on ``axis``'s title from now on (its ``label.setHtml`` calls, recorded)."""
    settings: list[str] = []
    set_html = axis.label.setHtml
    axis.label.setHtml = lambda html: settings.append(html) or set_html(html)
    return settings


def test_21_pyqtgraph_sets_an_axis_title_after_each_change_and_the_override_only_when_it_changed(qapp):
    plain, once = pg.AxisItem("bottom"), pgcompat.TitleOnceAxisItem("bottom")
    plain_settings, once_settings = _count_title_settings(plain), _count_title_settings(once)
    steps = [lambda axis: axis.setLabel("position p"), lambda axis: axis.setPen("#123456"),
             lambda axis: axis.setTextPen("#123456"), lambda axis: axis.setTickPen("#654321"),
             lambda axis: axis.setRange(0, 1000), lambda axis: axis.showLabel(True),
             lambda axis: axis.setTextPen("#abcdef"), lambda axis: axis.setLabel("offset k")]
    for step in steps:
        step(plain)
        step(once)
        assert once.label.toHtml() == plain.label.toHtml()  # the same title shown after each change
        assert once.maximumHeight() == plain.maximumHeight()
    assert len(plain_settings) >= len(steps)  # pyqtgraph: once per change (at least), the same text again mostly
    assert len(set(plain_settings)) < len(plain_settings)
    assert once_settings == list(dict.fromkeys(plain_settings))  # each distinct title once, in order


def test_21_a_hidden_title_is_set_when_shown(qapp):
    plain, once = pg.AxisItem("left"), pgcompat.TitleOnceAxisItem("left")
    once_settings = _count_title_settings(once)
    for axis in (plain, once):
        axis.enableAutoSIPrefix(False)  # as the kit's axes: showLabel then updates no title itself
        axis.setPen("#123456")  # changes while the title is hidden
        axis.setRange(0, 10)
    assert once_settings == [] and not once.label.isVisible()
    for axis in (plain, once):
        axis.showLabel(True)
    assert once_settings == [plain.labelString()] and once.label.toHtml() == plain.label.toHtml()
    assert once.maximumWidth() == plain.maximumWidth()  # the room the shown title takes
    for axis in (plain, once):
        axis.setLabel("position p")
        axis.showLabel(False)
    assert not once.label.isVisible() and once.maximumWidth() == plain.maximumWidth()


def test_21_a_colour_bar_and_a_kit_plot_build_only_the_axes_they_keep(qapp, monkeypatch):
    from posenc_gui.views.plotkit import CompactAxisItem, new_plot, style_plot

    built = []
    init = pg.AxisItem.__init__
    monkeypatch.setattr(pg.AxisItem, "__init__", lambda axis, *a, **k: built.append(axis) or init(axis, *a, **k))
    pg.ColorBarItem(values=(-1, 1), interactive=False)
    assert len(built) == 4 and not any(isinstance(axis, pgcompat.TitleOnceAxisItem) for axis in built)
    built.clear()
    bar = pgcompat.ColorBarWithoutMenu(values=(-1, 1), colorMap=pg.colormap.get("CET-D1"), interactive=False)
    assert len(built) == 4 and all(isinstance(axis, pgcompat.TitleOnceAxisItem) for axis in built)
    assert {bar.getAxis(side) for side in ("left", "bottom", "top", "right")} == set(built)
    built.clear()
    canvas = new_layout_widget()
    plot = new_plot(canvas, row=0, col=0)
    style_plot(plot)
    assert len(built) == 4  # none made and thrown away
    assert isinstance(plot.getAxis("left"), CompactAxisItem) and isinstance(plot.getAxis("bottom"), CompactAxisItem)
    assert {plot.getAxis(side) for side in ("left", "bottom", "top", "right")} == set(built)
    built.clear()
    other = canvas.addPlot(row=1, col=0)  # a plot made otherwise still gets the kit's axes from style_plot
    style_plot(other)
    assert isinstance(other.getAxis("left"), CompactAxisItem) and len(built) == 6
    for made in (plot, other):  # pyqtgraph's axes shown: left and bottom only
        assert [side for side in ("left", "bottom", "top", "right") if made.getAxis(side).isVisible()] == [
            "left", "bottom"]
    canvas.close()


#: sha256 of pyqtgraph's ``PlotItem.__init__`` source that ``PlotWithoutMenu`` follows (pyqtgraph 0.14.0).
PLOT_ITEM_INIT_SHA256 = "5043d18613d5d6cefb6d6509ab2a0d5d68d00c6e6fa8992239e0ad5d1c94fe5f"


def test_22_pyqtgraph_s_plot_init_is_the_one_plot_without_menu_follows():
    import hashlib
    import inspect

    source = inspect.getsource(pg.PlotItem.__init__)
    assert hashlib.sha256(source.encode()).hexdigest() == PLOT_ITEM_INIT_SHA256, (
        "pyqtgraph's PlotItem.__init__ changed: bring pgcompat.PlotWithoutMenu (item 22) in line with it")
    assert "c.setupUi(w)" in source and "self.ctrlMenu = QtWidgets.QMenu" in source


def _count_options_forms(monkeypatch) -> list:
    """The options forms built from now on (``Ui_Form.setupUi`` of pyqtgraph's PlotItem module, recorded)."""
    form = pgcompat._PLOT_ITEM_MODULE.ui_template.Ui_Form
    built = []
    setup = form.setupUi
    monkeypatch.setattr(form, "setupUi", lambda self, widget: built.append(self) or setup(self, widget))
    return built


def test_22_a_kit_plot_builds_its_options_only_when_they_are_used(qtbot, monkeypatch):
    from posenc_gui.views.plotkit import MatrixPlot, add_plot

    built = _count_options_forms(monkeypatch)
    pg.PlotItem()
    assert len(built) == 1  # pyqtgraph's plot: always
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = add_plot(canvas.ci, "x", "y")  # styled, with its grid
    plot.addItem(pg.PlotCurveItem([0, 1, 2], [1, 0, 1]))
    MatrixPlot(canvas.ci, "column", "row", row=1, col=0)  # with its colour bar
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    canvas.grab()
    assert len(built) == 1  # none: the window's panels made and painted
    plot.setLogMode(y=True)
    assert len(built) == 2 and plot.ctrl.logYCheck.isChecked()
    assert plot.getAxis("left").logMode and plot.ctrl is plot.ctrl  # built once
    assert [action.text() for action in plot.getMenu().actions()] == [
        "Transforms", "Downsample", "Average", "Alpha", "Grid", "Points"]


@pytest.mark.parametrize("build_first", [False, True])
def test_22_the_grid_and_the_state_are_pyqtgraph_s_before_and_after_the_options_are_built(qapp, build_first):
    plain, kit = pg.PlotItem(enableMenu=False), pgcompat.PlotWithoutMenu()
    if build_first:
        kit.ctrl  # noqa: B018
    for plot in (plain, kit):
        plot.showGrid(x=True, y=True, alpha=0.3)
        plot.showGrid(x=False)
    for side in ("left", "bottom", "top", "right"):
        assert kit.getAxis(side).grid == plain.getAxis(side).grid
    assert kit.getAxis("left").grid == int(0.3 * 255) and kit.getAxis("bottom").grid is False
    # built later, the options show the grid set before
    assert kit.ctrl.yGridCheck.isChecked() and not kit.ctrl.xGridCheck.isChecked()
    assert kit.ctrl.gridAlphaSlider.value() == plain.ctrl.gridAlphaSlider.value() == int(0.3 * 255)
    plain_state, kit_state = plain.saveState(), kit.saveState()
    assert plain_state.pop("view") == kit_state.pop("view")
    assert kit_state == plain_state and "xGridCheck" in kit_state
    curve_plain, curve_kit = pg.PlotDataItem([1, 2, 3], [1, 10, 100]), pg.PlotDataItem([1, 2, 3], [1, 10, 100])
    for plot, curve in ((plain, curve_plain), (kit, curve_kit)):
        plot.setDownsampling(ds=2, mode="mean")
        plot.addItem(curve)
        plot.setLogMode(y=True)
    assert curve_kit.opts["downsample"] == curve_plain.opts["downsample"] == 2
    assert curve_kit.opts["logMode"] == curve_plain.opts["logMode"] == [False, True]
