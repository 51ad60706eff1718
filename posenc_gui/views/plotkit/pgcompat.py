"""The plotting kit's only dependence on pyqtgraph's internals (pyqtgraph 0.14).

Everything else in the kit uses pyqtgraph's documented API, its public
attributes and the methods it documents as overridable (``tickStrings``,
``tickSpacing``). Each use below is pinned by a test in
tests/test_plotkit_pgcompat.py that fails when pyqtgraph changes it, so
moving to a new pyqtgraph is this file's work:

1. ``LabelItem.updateMin`` is replaced on a title's instance, and its
   ``item`` (the QGraphicsTextItem) given a text width to wrap at
   (:func:`let_title_narrow`). pyqtgraph calls ``updateMin`` through the
   instance after every ``setText`` and resize, and it makes the text's width
   the label's minimum width; a dock narrower than its titles then held a
   canvas wider than its view, clipped at the right.
2. ``LegendItem.updateSize`` is overridden (:class:`LegendInLayout`).
   pyqtgraph calls it after every change of entries or columns and, with
   ``size=None``, gives the legend a geometry of its own, as a floating
   legend has; a legend placed by the canvas's layout asks the layout instead.
3. ``LegendItem.items``, the ``[(sample, label), ...]`` list of entries
   (:func:`legend_entries`): pyqtgraph has no getter for a legend's labels.
4. ``GraphicsLayout.items``, ``{item: [(row, column), ...]}``
   (:func:`layout_cells`): pyqtgraph has no getter for an item's cells.
5. ``AxisItem.resizeEvent(None)`` (:func:`centre_axis_title`): pyqtgraph
   centres an axis's title only there, so a new title of another length
   would stay where the old one started.
6. ``AxisItem.generateDrawSpecs`` drops each label not inside
   ``self.boundingRect()`` (:class:`AxisPlacingEndLabels`): while it runs,
   the rectangle is unbounded, so the labels of the ticks at the ends come
   back and the axis places them itself.
7. ``opts["segmentedLineMode"]`` of curve items (:func:`segmented_line_mode`,
   :func:`set_segmented_line_mode`): an export draws each curve as one path
   (proper joins, small SVG/PDF) instead of thousands of two-point segments.
8. ``AxisItem.picture``, the axis's cached drawing (:func:`forget_axis_picture`):
   an export that widens cosmetic pens must make the axes draw again.
9. ``ItemSample.item``, the plot item a legend sample stands for
   (:func:`legend_sample_item`): pyqtgraph has no getter for it.
10. ``opts``, the option dict of curves, legends and labels (:func:`item_option`):
    pyqtgraph has no getter for a curve's pen, ``connect`` or ``stepMode``, a
    legend's ``labelTextColor`` or a label's colour.
11. ``LabelItem.opts["color"]`` set before ``setText`` (:func:`set_label_colour`):
    ``PlotItem.setTitle`` passes only a size, and the label colours the text
    with the colour it keeps.
12. ``ViewBox.childGroup``, the item a view box's contents hang from, in data
    coordinates (:func:`view_box_contents`).
13. The pens an item keeps in its attributes and option dicts, found by
    walking ``vars(item)`` (:func:`kept_pens`): pyqtgraph draws with these
    objects, so changing one changes the drawing, with no getter for most.
14. ``ImageItem.qimage``, the image ``render()`` made and ``paint()`` draws
    (:func:`keep_rendered_image_native`): pyqtgraph renders a float matrix
    through a colour table to an 8-bit indexed QImage, which Qt converts on
    every paint (about 1 ms a paint for the 128 × 512 heatmap); converted
    once after the render, the paint draws it directly. With it, the image's
    ``image``, ``levels``, ``lut`` and ``autoDownsample`` and the flags
    ``render()`` clears, ``_renderRequired`` and ``_unrenderable``
    (:func:`render_through_palette`, pyqtgraph's render in a few NumPy passes).
15. ``LabelItem.item`` (its QGraphicsTextItem), ``LabelItem.text`` and
    ``opts["size"]``/``opts["justify"]`` (:func:`show_plain_text`): a plain
    text that fits a label's box is drawn by a simple text item over it, in
    place, with no rich-text document and no layout pass; the label's own
    ``setText`` (replaced on the instance) hands the text back to its item.
16. ``PlotCurveItem._boundsCache``, ``xData``/``yData`` and ``opts`` (:func:`finite_data_bounds`):
    pyqtgraph scans a curve's data with ``nanmin``/``nanmax`` under a
    warnings filter each time ``setData`` invalidates its bounds; finite data
    need a plain min and max, kept in pyqtgraph's cache.
17. ``AxisItem.generateDrawSpecs`` reimplemented for plain axes (:func:`plain_axis_draw_specs`):
    it reads the axis's ``style``, ``range``, ``scale``, ``grid``,
    ``_tickLevels`` and ``autoSIPrefixScale`` and calls ``_updateMaxTextSize``
    as pyqtgraph's does, and gives the same specifications (a test compares
    them, grid, log axes and set ticks included) with every label kept, as
    item 6's unbounded rectangle does.
18. ``AxisItem.picture`` holds, for an axis painted on screen, an
    :class:`AxisDrawing` in place of pyqtgraph's QPicture
    (:func:`paint_axis`): pyqtgraph only tests it for None (after a change)
    and calls its ``play(painter)``; ``drawPicture``'s pens, clip and font are
    reproduced. :func:`lay_out_axis_drawing` makes it (or, for pyqtgraph's
    own axes, the QPicture ``paint`` records) before a paint, and tells
    whether ``_updateMaxTextSize`` changed the axis's maximum size.
19. ``ColorBarItem.__init__`` builds its plot with ``super().__init__()``
    (:class:`ColorBarWithoutMenu`): a class between it and ``PlotItem`` in
    the order of bases passes ``enableMenu=False``, which pyqtgraph has no
    argument of the colour bar for.
20. ``AxisItem._updateHeight()`` (:func:`wrap_axis_title`): a horizontal
    axis's height follows its title's lines only through it (pyqtgraph calls
    it when the title's text or visibility changes).
21. ``AxisItem._updateLabel()`` is overridden (:class:`TitleOnceAxisItem`):
    pyqtgraph calls it after every pen, range, SI-prefix and title change,
    and it sets the title's HTML (``labelString()``) on ``AxisItem.label``
    each time, then ``_adjustSize()``; the override does both only when the
    HTML changed and the title is shown (``showLabel(True)`` calls it).
22. ``PlotItem.__init__`` is reimplemented without its "Plot Options" widgets
    (:class:`PlotWithoutMenu`): ``ctrl`` (the ``plotConfigTemplate`` form it
    builds), the sub-menus of ``ctrlMenu`` and the widgets of ``stateGroup``
    are built the first time ``ctrl`` is read, by the same code. Every
    PlotItem method that uses the options reads ``ctrl`` (``showGrid``,
    ``setLogMode``, ``addItem`` of an item with a log mode) but ``getMenu``,
    ``saveState`` and ``restoreState``, overridden to build them first;
    ``showGrid`` before that sets the axes' grid as pyqtgraph's ``updateGrid``
    does. A test pins the source of the pyqtgraph code this follows.
"""

from __future__ import annotations

import math
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QImage, QPainter, QPen, QPicture, QPixmap
from PySide6.QtWidgets import (QGraphicsGridLayout, QGraphicsSimpleTextItem, QMenu, QSizePolicy, QWidget,
                               QWidgetAction)
from pyqtgraph.WidgetGroup import WidgetGroup

from .static_text import remembered, static_text_at

#: Formats Qt's raster engine draws without converting them first.
NATIVE_IMAGE_FORMATS = (QImage.Format.Format_ARGB32_Premultiplied, QImage.Format.Format_RGB32)

#: Narrowest a title lets its plot become (see :func:`let_title_narrow`).
MIN_TITLE_WIDTH = 60
#: A wrapped title wraps again only for a width this much different (pixels): see :func:`let_title_narrow`.
REWRAP_PX = 8.0
#: A wrapped title goes back to one line only with this much room to spare (pixels): see :func:`let_title_narrow`.
UNWRAP_MARGIN_PX = 40.0
#: The height pyqtgraph gives a plot's title row (``PlotItem.setTitle``); a wrapped title's row grows from it.
PLOT_TITLE_ROW_PX = 30


def let_title_narrow(label: pg.LabelItem, narrowest: float = MIN_TITLE_WIDTH, plot: pg.PlotItem | None = None) -> None:
    """Keep a title's text width as its preferred width, at most ``narrowest`` as its minimum, and wrap it.

    Where there is room the title has its full width on one line; where
    there is not, its words wrap onto more lines, centred, and the label
    grows taller (a title cut at both ends hid the parameters it names).
    A wrapped title keeps its lines until the label is ``UNWRAP_MARGIN_PX``
    wider than the one line: the row it grows takes height from the plot,
    whose y axis may then need fewer tick labels, narrow, and give the title
    just the room for one line, which gives the height back, and so on (the
    plot re-laid itself out forever).
    ``plot``: the PlotItem whose title ``label`` is; pyqtgraph fixes its
    title row at 30 px (``setTitle``), which the wrapped lines then get.
    """
    update_min = label.updateMin
    option = label.item.document().defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    label.item.document().setDefaultTextOption(option)
    fitting = [False]

    def wrap_to_width() -> bool:
        """Give the text the label's width when it is wider (one line otherwise, or kept wrapped); whether that changed."""
        item, width = label.item, label.size().width()
        wanted = -1.0
        if width >= narrowest:
            kept = item.textWidth()
            if kept < 0:
                natural = item.boundingRect().width()
            else:
                item.setTextWidth(-1)
                natural = item.boundingRect().width()
                item.setTextWidth(kept)
                item.update()
            if natural > width + 0.5:
                wanted = width
            elif 0 < kept <= width and natural > width - UNWRAP_MARGIN_PX:
                wanted = kept  # wrapped, and only just room for one line: it stays as it is
        current = item.textWidth()
        if current == wanted or (current > 0 and wanted > 0 and abs(current - wanted) < REWRAP_PX):
            return False  # nearly the same width: the same lines (a wrapped title's narrower preferred
            # width gives its plot a slightly other width, and each would wrap it again)
        item.setTextWidth(wanted)
        return True

    def update_min_narrow() -> None:
        if not fitting[0]:  # pyqtgraph's resizeEvent calls updateMin again
            fitting[0] = True
            try:
                if wrap_to_width():
                    label.resizeEvent(None)  # centre the new lines in the label
            finally:
                fitting[0] = False
        update_min()
        label.setMinimumWidth(min(label.minimumWidth(), narrowest))
        if plot is not None and label.isVisible():
            height = max(PLOT_TITLE_ROW_PX, math.ceil(label.itemRect().height()))
            if label.maximumHeight() != height:
                label.setMaximumHeight(height)
                plot.layout.setRowFixedHeight(0, height)

    label.updateMin = update_min_narrow
    update_min_narrow()


class TitleOnceAxisItem(pg.AxisItem):
    """An axis that sets its title's text only when it changes, and only while the title is shown.

    pyqtgraph sets it again (rich text, a new text layout) after every pen,
    range and title change, the same text two times in three: 266 of the
    366 settings before the window's first paint, ~6 ms; and most axes
    (the hidden top and right, the colour bar's frame) show no title.
    """

    _shown_label: str | None = None

    def _updateLabel(self) -> None:  # noqa: N802 (pyqtgraph override)
        label = self.labelString()
        if label != self._shown_label and self.label.isVisibleTo(self):
            self.label.setHtml(label)
            self._shown_label = label
            self._adjustSize()
        self.picture = None
        self.update()

    def showLabel(self, show: bool = True) -> None:  # noqa: N802 (pyqtgraph override: the title set when shown)
        super().showLabel(show)
        if show:
            self._updateLabel()


def quiet_axes() -> dict[str, TitleOnceAxisItem]:
    """The four axes of a plot, each a :class:`TitleOnceAxisItem` (for ``PlotItem(axisItems=…)``)."""
    return {side: TitleOnceAxisItem(side) for side in ("left", "bottom", "top", "right")}


#: pyqtgraph's module of PlotItem (its package exports the class under the module's name).
_PLOT_ITEM_MODULE = sys.modules[pg.PlotItem.__module__]
#: The grid's opacity the options form starts with (``gridAlphaSlider``, out of 255).
_FORM_GRID_ALPHA = 128


class PlotWithoutMenu(pg.PlotItem):
    """A PlotItem with no context menus (``enableMenu=False``), :func:`quiet_axes` unless given others, and its
    "Plot Options" widgets built only when first used (item 22).

    Why: the options form is some forty widgets, a menu of six and twenty-odd
    connections, 1.6 ms of the 4 ms a plot takes to make, for a menu a kit
    plot never shows; six plots are made before the window's first paint.
    """

    def __init__(self, parent=None, name: str | None = None, labels: dict | None = None, title: str | None = None,
                 viewBox: pg.ViewBox | None = None, axisItems: dict | None = None,  # noqa: N803 (pyqtgraph's names)
                 enableMenu: bool = False, **kwargs) -> None:  # noqa: N803, ARG002 (never a menu)
        # pyqtgraph 0.14's PlotItem.__init__, with its block "Set up context menu" moved to _build_options.
        pg.GraphicsWidget.__init__(self, parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.autoBtn = pg.ButtonItem(pg.icons.getGraphPixmap("auto"), 14, self)
        self.autoBtn.mode = "auto"
        self.autoBtn.clicked.connect(self.autoBtnClicked)
        self.buttonsHidden = False
        self.mouseHovering = False
        self.layout = QGraphicsGridLayout()
        self.layout.setContentsMargins(1, 1, 1, 1)
        self.setLayout(self.layout)
        self.layout.setHorizontalSpacing(0)
        self.layout.setVerticalSpacing(0)
        if viewBox is None:
            viewBox = pg.ViewBox(parent=self, enableMenu=False)
        self.vb = viewBox
        self.vb.sigStateChanged.connect(self.viewStateChanged)
        self.setMenuEnabled(False, None)
        if name is not None:
            self.vb.register(name)
        self.vb.sigRangeChanged.connect(self.sigRangeChanged)
        self.vb.sigXRangeChanged.connect(self.sigXRangeChanged)
        self.vb.sigYRangeChanged.connect(self.sigYRangeChanged)
        self.vb.sigRangeChangedManually.connect(self.sigRangeChangedManually)
        self.layout.addItem(self.vb, 2, 1)
        self.alpha = 1.0
        self.autoAlpha = True
        self.spectrumMode = False
        self.legend = None
        self.axes = {}
        self.setAxisItems(quiet_axes() if axisItems is None else axisItems)
        self.titleLabel = pg.LabelItem("", size="11pt", parent=self)
        self.layout.addItem(self.titleLabel, 0, 1)
        self.setTitle(None)
        for i in range(4):
            self.layout.setRowPreferredHeight(i, 0)
            self.layout.setRowMinimumHeight(i, 0)
            self.layout.setRowSpacing(i, 0)
            self.layout.setRowStretchFactor(i, 1)
        for i in range(3):
            self.layout.setColumnPreferredWidth(i, 0)
            self.layout.setColumnMinimumWidth(i, 0)
            self.layout.setColumnSpacing(i, 0)
            self.layout.setColumnStretchFactor(i, 1)
        self.layout.setRowStretchFactor(2, 100)
        self.layout.setColumnStretchFactor(1, 100)
        self.items = []
        self.curves = []
        self.itemMeta = weakref.WeakKeyDictionary()
        self.dataItems = []
        self.paramList = {}
        self.avgCurves = {}
        self.avgPen = pg.mkPen((0, 200, 0))
        self.avgShadowPen = pg.mkPen((0, 0, 0), width=4)
        self.ctrlMenu = QMenu(_PLOT_ITEM_MODULE.translate("PlotItem", "Plot Options"))
        self.stateGroup = WidgetGroup()
        self.fileDialog = None
        self._options = None
        self._grid_before_options: dict[str, Any] = {}
        labels = {} if labels is None else labels
        for label in list(self.axes.keys()):
            if label in kwargs:
                labels[label] = kwargs.pop(label)
        for key, value in labels.items():
            self.setLabel(key, *((value,) if isinstance(value, str) else value))
        if title is not None:
            self.setTitle(title)
        if kwargs:
            self.plot(**kwargs)

    @property
    def ctrl(self):
        """pyqtgraph's options form, built now if it is not yet."""
        return self._options if self._options is not None else self._build_options()

    def _build_options(self):
        # pyqtgraph 0.14's PlotItem.__init__ from "Set up context menu" to its last connection.
        form_parent = QWidget()
        c = _PLOT_ITEM_MODULE.ui_template.Ui_Form()
        c.setupUi(form_parent)
        translate = _PLOT_ITEM_MODULE.translate
        menu_items = [(translate("PlotItem", "Transforms"), c.transformGroup),
                      (translate("PlotItem", "Downsample"), c.decimateGroup),
                      (translate("PlotItem", "Average"), c.averageGroup), (translate("PlotItem", "Alpha"), c.alphaGroup),
                      (translate("PlotItem", "Grid"), c.gridGroup), (translate("PlotItem", "Points"), c.pointsGroup)]
        for name, group in menu_items:
            sub_menu = self.ctrlMenu.addMenu(name)
            action = QWidgetAction(self)
            action.setDefaultWidget(group)
            sub_menu.addAction(action)
        for _, group in menu_items:
            self.stateGroup.autoAdd(group)
        self._options = c
        c.alphaGroup.toggled.connect(self.updateAlpha)
        c.alphaSlider.valueChanged.connect(self.updateAlpha)
        c.autoAlphaCheck.toggled.connect(self.updateAlpha)
        c.xGridCheck.toggled.connect(self.updateGrid)
        c.yGridCheck.toggled.connect(self.updateGrid)
        c.gridAlphaSlider.valueChanged.connect(self.updateGrid)
        c.fftCheck.toggled.connect(self.updateSpectrumMode)
        c.subtractMeanCheck.toggled.connect(self.updateSubtractMeanMode)
        c.logXCheck.toggled.connect(self.updateLogMode)
        c.logYCheck.toggled.connect(self.updateLogMode)
        c.derivativeCheck.toggled.connect(self.updateDerivativeMode)
        c.phasemapCheck.toggled.connect(self.updatePhasemapMode)
        c.downsampleSpin.valueChanged.connect(self.updateDownsampling)
        c.downsampleCheck.toggled.connect(self.updateDownsampling)
        c.autoDownsampleCheck.toggled.connect(self.updateDownsampling)
        c.subsampleRadio.toggled.connect(self.updateDownsampling)
        c.meanRadio.toggled.connect(self.updateDownsampling)
        c.clipToViewCheck.toggled.connect(self.updateDownsampling)
        c.avgParamList.itemClicked.connect(self.avgParamListClicked)
        c.averageGroup.toggled.connect(self.avgToggled)
        c.maxTracesCheck.toggled.connect(self._handle_max_traces_toggle)
        c.forgetTracesCheck.toggled.connect(self.updateDecimation)
        c.maxTracesSpin.valueChanged.connect(self.updateDecimation)
        if self._grid_before_options:  # the form shows the grid the axes draw
            super().showGrid(**self._grid_before_options)
        return c

    def getMenu(self):  # noqa: N802 (pyqtgraph override)
        self.ctrl  # noqa: B018 (the menu holds the options)
        return super().getMenu()

    def saveState(self) -> dict:  # noqa: N802 (pyqtgraph override: the state group holds the options)
        self.ctrl  # noqa: B018
        return super().saveState()

    def restoreState(self, state: dict) -> None:  # noqa: N802 (pyqtgraph override)
        self.ctrl  # noqa: B018
        super().restoreState(state)

    def showGrid(self, x: bool | None = None, y: bool | None = None, alpha: float | None = None) -> None:  # noqa: N802
        """pyqtgraph's ``showGrid``; before the options are built, the axes' grid is set as its ``updateGrid``
        does, and the form is given it when built."""
        if self._options is not None or (x is None and y is None and alpha is None):
            super().showGrid(x, y, alpha)
            return
        given = {"x": x, "y": y, "alpha": alpha}
        self._grid_before_options.update({key: value for key, value in given.items() if value is not None})
        grid = self._grid_before_options
        opacity = int(float(np.clip(grid.get("alpha", _FORM_GRID_ALPHA / 255), 0, 1)) * 255)
        across, along = (opacity if grid.get("x") else False), (opacity if grid.get("y") else False)
        self.getAxis("top").setGrid(across)
        self.getAxis("bottom").setGrid(across)
        self.getAxis("left").setGrid(along)
        self.getAxis("right").setGrid(along)


class ColorBarWithoutMenu(pg.ColorBarItem, PlotWithoutMenu):
    """pyqtgraph's colour bar, with no context menu on its view box: a kit colour bar is not interactive, and
    the menu and its two axis panels took 2 of its 7.5 ms to build, twice before the first paint."""


class LegendInLayout(pg.LegendItem):
    """A legend that a layout places: pyqtgraph's size updates become :meth:`layout_changed`."""

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph override)
        self.layout_changed()
        self.updateGeometry()

    def layout_changed(self) -> None:
        """Called whenever pyqtgraph would resize the legend (entries or columns changed)."""


class AxisPlacingEndLabels(TitleOnceAxisItem):
    """An axis that gets every label pyqtgraph lays out and decides itself which to draw, and where.

    Subclasses give the rectangle labels must stay in (:meth:`label_room`,
    pyqtgraph's bounding rectangle by default) and place the labels
    (:meth:`place_labels`). The layout is :func:`plain_axis_draw_specs`'s,
    or pyqtgraph's for the styles it does not cover.
    """

    _laying_out = False

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        if self._laying_out:
            return QRectF(-1e9, -1e9, 2e9, 2e9)
        return self.label_room()

    def label_room(self) -> QRectF:
        """The rectangle the axis draws in, its labels included."""
        return super().boundingRect()

    def generateDrawSpecs(self, p):  # noqa: N802 (pyqtgraph override)
        specs = plain_axis_draw_specs(self, p)
        if specs is NotImplemented:
            self._laying_out = True
            try:
                specs = super().generateDrawSpecs(p)
            finally:
                self._laying_out = False
        return None if specs is None else self.place_labels(*specs)

    def place_labels(self, axis_spec, tick_specs, text_specs):
        """The specifications with the labels to draw (``text_specs``: every label, as ``(rect, flags, text)``)."""
        return axis_spec, tick_specs, text_specs


def legend_entries(legend: pg.LegendItem) -> list[tuple[pg.GraphicsWidget, pg.LabelItem]]:
    """The legend's entries as ``(sample, label)`` pairs, in the order they were added."""
    return legend.items


def legend_sample_item(sample: pg.GraphicsWidget):
    """The plot item a legend entry's sample stands for (pyqtgraph's ``ItemSample.item``), or None."""
    return getattr(sample, "item", None)


def layout_cells(layout: pg.GraphicsLayout, item) -> list[tuple[int, int]]:
    """The ``(row, column)`` cells ``item`` occupies in ``layout``."""
    return list(layout.items[item])


def centre_axis_title(axis: pg.AxisItem) -> None:
    """Place the axis's title at the middle of the axis, as pyqtgraph does after a resize."""
    axis.resizeEvent()



def wrap_axis_title(axis: pg.AxisItem) -> bool:
    """Wrap a horizontal axis's title onto more lines, centred, when it is wider than the axis, and back onto one
    when it fits; True when its lines changed (the axis's height follows them).

    A narrow plot's long title (the positional logits' "distance r = m − n
    (key before query)") ran past the canvas and was cut. An axis narrower
    than :data:`MIN_TITLE_WIDTH` (a layout's passing size) keeps one line.
    """
    label = axis.label
    if axis.orientation not in ("top", "bottom") or label is None or not label.isVisible():
        return False
    width = axis.size().width()
    current = label.textWidth()
    if current < 0:
        natural = label.boundingRect().width()
    else:  # measured on a copy: the label itself is left alone while its lines stay (its cached pixmap too)
        unwrapped = label.document().clone()
        unwrapped.setTextWidth(-1)
        natural = unwrapped.size().width()
    wanted = width if natural > width + 0.5 and width >= MIN_TITLE_WIDTH else -1.0
    if wanted == current:
        return False
    label.setTextWidth(wanted)
    option = label.document().defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    label.document().setDefaultTextOption(option)
    axis._updateHeight()
    return True


def segmented_line_mode(item) -> str | None:
    """A curve item's ``segmentedLineMode`` (``"auto"``, ``"on"``, ``"off"``), or None for an item without one."""
    options = getattr(item, "opts", None)
    return options.get("segmentedLineMode") if isinstance(options, dict) else None


def set_segmented_line_mode(item, mode: str) -> None:
    """Set a curve item's ``segmentedLineMode`` (pyqtgraph reads it at the next paint)."""
    item.opts["segmentedLineMode"] = mode


def forget_axis_picture(item) -> bool:
    """Make a pyqtgraph axis draw itself again at its next paint; False for an item that is no axis."""
    if not isinstance(item, pg.AxisItem):
        return False
    item.picture = None
    return True


def item_option(item, name: str, default=None):
    """The option ``name`` a pyqtgraph item keeps in its ``opts`` (a curve's ``"pen"``, ``"connect"``,
    ``"stepMode"``; a legend's ``"labelTextColor"``; a label's ``"color"``), or ``default``."""
    options = getattr(item, "opts", None)
    return options.get(name, default) if isinstance(options, dict) else default


def set_label_colour(label: pg.LabelItem, colour: str) -> None:
    """The colour ``label`` gives its text at the next ``setText`` that names none (as ``PlotItem.setTitle``)."""
    label.opts["color"] = colour


def view_box_contents(view_box: pg.ViewBox) -> pg.QtWidgets.QGraphicsItem:
    """The item a view box's contents hang from; its coordinates are the data's."""
    return view_box.childGroup


def kept_pens(item, *, symbol_pens: bool = True, point_pens: bool = False) -> Iterator[QPen]:
    """The QPen objects ``item`` keeps in its attributes and option dicts, the ones it draws with.

    ``symbol_pens``: also the pens of option names starting with ``symbol``
    (a scatter renders each symbol once and keeps that rendering, so changing
    its pen does not show); ``point_pens``: also a scatter's per-point pens.
    """
    for value in list(vars(item).values()) if hasattr(item, "__dict__") else ():
        if isinstance(value, QPen):
            yield value
        elif isinstance(value, dict):
            yield from (pen for name, pen in value.items()
                        if isinstance(pen, QPen) and (symbol_pens or not str(name).startswith("symbol")))
    data = getattr(item, "data", None) if point_pens else None
    if isinstance(data, np.ndarray) and data.dtype.names and "pen" in data.dtype.names:
        yield from (pen for pen in data["pen"] if isinstance(pen, QPen))


def keep_rendered_image_native(item: pg.ImageItem) -> None:
    """Convert the image ``item`` has just rendered to a format Qt draws as it is (after ``ImageItem.render``).

    Colours and transparency (a masked cell's) are kept: the conversion is
    to premultiplied ARGB32, the format of the canvas it is drawn on.
    """
    image = item.qimage
    if image is not None and image.format() not in NATIVE_IMAGE_FORMATS:
        item.qimage = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)


#: Text that needs the label's rich-text item: markup, entities, or a line break.
_RICH = ("<", "&", "\n")


def show_plain_text(label: pg.LabelItem, text: str, colour) -> bool:
    """Show plain ``text`` in a laid-out, visible label in place, if it fits the label's current box.

    A title or legend entry that changes on every parameter step (d_model in
    the title, a wavelength in the legend) otherwise goes through the label's
    rich-text document and a layout pass of its plot (about 0.27 ms a label
    and a second paint of the canvas). Returns False, changing nothing, for
    markup, a hidden or not yet laid-out label, or text wider than the box:
    the caller then sets it the ordinary way, which lays out and wraps.
    ``colour`` is any colour pyqtgraph's ``mkColor`` reads.
    """
    box = label.rect()
    if any(mark in text for mark in _RICH) or not label.isVisible() or label.text is None or box.width() <= 0:
        return False
    plain = _plain_text_item(label)
    shown = plain.text()
    plain.setText(text)
    if plain.boundingRect().width() > box.width():
        plain.setText(shown)
        return False
    brush = QBrush(pg.mkColor(colour))
    if plain.brush() != brush:
        plain.setBrush(brush)
    if label.item.isVisible():
        label.item.hide()
        plain.show()
    _place_plain_text(label)
    label.text = text
    return True


def label_shown_text(label: pg.LabelItem) -> str:
    """The text ``label`` shows, from whichever of its two items shows it (see :func:`show_plain_text`)."""
    plain = getattr(label, "_plain_text", None)
    if plain is not None and plain.isVisible():
        return plain.text()
    return label.item.toPlainText()


def _plain_text_item(label: pg.LabelItem) -> QGraphicsSimpleTextItem:
    """The simple text item over ``label``, made on first use in the label's font and size."""
    plain = getattr(label, "_plain_text", None)
    if plain is not None:
        return plain
    plain = QGraphicsSimpleTextItem(label)
    font = QFont(label.item.font())
    size = label.opts.get("size")
    if isinstance(size, str) and size.endswith("pt"):
        font.setPointSizeF(float(size[:-2]))
    plain.setFont(font)
    plain.hide()
    label._plain_text = plain
    # A resized plot (a dock dragged, an export at another width) moves the box: the text follows, or goes back
    # to the rich item (which wraps) when it no longer fits.
    label.geometryChanged.connect(lambda: plain.isVisible() and _refit_plain_text(label))
    set_rich_text = label.setText

    def set_text(text, **options):
        plain.hide()
        label.item.show()
        set_rich_text(text, **options)

    label.setText = set_text
    return plain


def _refit_plain_text(label: pg.LabelItem) -> None:
    if label._plain_text.boundingRect().width() > label.rect().width():
        label.setText(label.text)
    else:
        _place_plain_text(label)


def _place_plain_text(label: pg.LabelItem) -> None:
    """Put the label's plain text where its rich text would be: centred, or at the rich text's left margin."""
    plain = label._plain_text
    bounds, box = plain.boundingRect(), label.rect()
    if label.opts.get("justify") == "left":
        left = box.left() + label.item.document().documentMargin()
    else:
        left = box.center().x() - bounds.width() / 2
    plain.setPos(round(left), round(box.center().y() - bounds.height() / 2))


def render_through_palette(item: pg.ImageItem) -> bool:
    """Render ``item``'s 2-D float image straight to premultiplied ARGB32 through its colour table; False,
    rendering nothing, where this does not apply (then pyqtgraph's ``render`` and :func:`keep_rendered_image_native`).

    It applies to what every matrix view shows: 2-D float values, scalar
    levels, an opaque colour table of at most 256 colours, no downsampling.
    The pixels are pyqtgraph's (its ``rescaleData``: ``(value − low) ·
    colours / span``, clipped, truncated; NaN transparent), in a quarter of
    the time of its indexed render and conversion (1.1 → 0.3 ms for the
    default heatmap and similarity matrix, measured in 1d281c6, which did
    the same).
    """
    image, lut, levels = item.image, item.lut, item.levels
    if (image is None or np.ndim(image) != 2 or image.dtype.kind != "f" or not image.size or item.autoDownsample
            or levels is None or np.ndim(levels) != 1 or not isinstance(lut, np.ndarray)):
        return False
    palette = _opaque_palette(item, lut)
    if palette is None:
        return False
    low, high = (float(level) for level in levels)
    colours = len(palette)
    scaled = np.subtract(image, low, order="C")  # row by row, as QImage reads it, whatever the image's layout
    scaled *= colours / ((high - low) or 1.0)
    np.clip(scaled, 0, colours - 1, out=scaled)
    missing = np.isnan(scaled) if np.isnan(scaled.min()) else None
    if missing is not None:
        scaled[missing] = 0
    pixels = palette[scaled.astype(np.uint8)]
    if missing is not None:
        pixels[missing] = 0  # transparent, as pyqtgraph shows NaN
    height, width = pixels.shape
    item._posenc_pixels = pixels  # the buffer the QImage reads
    item.qimage = QImage(pixels.data, width, height, 4 * width, QImage.Format.Format_ARGB32_Premultiplied)
    item._renderRequired = False
    item._unrenderable = False
    return True


def _opaque_palette(item: pg.ImageItem, lut: np.ndarray) -> np.ndarray | None:
    """The colour table ``lut`` as ARGB32 words (kept while the item keeps the table), or None for a table
    with transparency or more than 256 colours."""
    cached = getattr(item, "_posenc_palette", None)
    if cached is not None and cached[0] is lut:
        return cached[1]
    palette = None
    if (lut.dtype == np.uint8 and lut.ndim == 2 and lut.shape[1] in (3, 4) and 0 < lut.shape[0] <= 256
            and not (lut.shape[1] == 4 and (lut[:, 3] != 255).any())):
        channels = lut.astype(np.uint32)
        palette = (0xFF000000 | (channels[:, 0] << 16) | (channels[:, 1] << 8) | channels[:, 2]).astype(np.uint32)
    item._posenc_palette = (lut, palette)
    return palette


def finite_data_bounds(curve: pg.PlotCurveItem, ax: int, frac: float, ortho_range) -> tuple[float, float] | None:
    """``curve.dataBounds(ax, frac, orthoRange)`` for finite data of a plain curve, by a plain min and max
    (kept in pyqtgraph's bounds cache); None where pyqtgraph's own scan is needed (a fraction or orthogonal
    range, a fill level, a shadow pen, non-finite values, no data).

    Why: pyqtgraph's NaN-tolerant scan under a warnings filter took about 55 µs per axis, twice per curve on
    every step (about 0.7 ms a default step for the waveforms and the similarity profile, measured in 1d281c6).
    """
    cache = curve._boundsCache[ax]
    if cache is not None and cache[0] == (frac, ortho_range):
        return cache[1]
    data = curve.xData if ax == 0 else curve.yData
    if (frac < 1.0 or ortho_range is not None or data is None or not len(data)
            or curve.opts["fillLevel"] is not None or curve.opts["shadowPen"] is not None):
        return None
    low, high = float(data.min()), float(data.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    pen = curve.opts["pen"]
    if pen is not None and not pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen:
        low, high = low - pen.widthF() * 0.7072, high + pen.widthF() * 0.7072
    curve._boundsCache[ax] = [(frac, ortho_range), (low, high)]
    return low, high


#: How pyqtgraph aligns tick labels on each side of a plot.
_LABEL_FLAGS = {
    "left": Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    "right": Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    "top": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom | Qt.TextFlag.TextDontClip,
    "bottom": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip,
}
#: Label boxes as pyqtgraph measures them, by (font, resolution) and text (see :func:`.static_text.remembered`).
_TEXT_RECTS: dict = {}


def plain_axis_draw_specs(axis: pg.AxisItem, p):
    """pyqtgraph 0.14's ``AxisItem.generateDrawSpecs(p)`` for a plain axis, every label kept (see item 6).

    Returns NotImplemented for the styles it does not cover (no values shown, an axis stopped at a
    tick, a fixed tick alpha): the caller then runs pyqtgraph's.

    Why: pyqtgraph's version measures each label and builds a Point per coordinate in Python, about
    1 ms for the heatmap's dimension axis, laid out again on every d_model step; this one gives the same
    specifications in about half the time (1d281c6 did the same in matrixplot.CompactAxisItem).
    """
    style = axis.style
    if not style["showValues"] or tuple(style["stopAxisAtTick"]) != (False, False) or style["tickAlpha"] is not None:
        return NotImplemented
    if style["tickFont"] is not None:
        p.setFont(style["tickFont"])
    bounds = axis.mapRectFromParent(axis.geometry())
    grid = axis.grid
    view = axis.linkedView()
    # Grid lines run from the far side of the linked view to the axis.
    tick_bounds = bounds if view is None or grid is False else view.mapRectToItem(axis, view.boundingRect())
    orientation = axis.orientation
    if orientation == "left":
        span = (bounds.topRight() + QPointF(-1, -1), bounds.bottomRight() + QPointF(-1, 1))
        tick_start, tick_stop, tick_dir, along = tick_bounds.right(), bounds.right(), -1, 0
    elif orientation == "right":
        span = (bounds.topLeft() + QPointF(1, -1), bounds.bottomLeft() + QPointF(1, 1))
        tick_start, tick_stop, tick_dir, along = tick_bounds.left(), bounds.left(), 1, 0
    elif orientation == "top":
        span = (bounds.bottomLeft() + QPointF(-1, -1), bounds.bottomRight() + QPointF(1, -1))
        tick_start, tick_stop, tick_dir, along = tick_bounds.bottom(), bounds.bottom(), -1, 1
    else:
        span = (bounds.topLeft() + QPointF(-1, 1), bounds.topRight() + QPointF(1, 1))
        tick_start, tick_stop, tick_dir, along = tick_bounds.top(), bounds.top(), 1, 1
    start, stop = axis.mapToDevice(span[0]), axis.mapToDevice(span[1])
    if start is None or stop is None:
        return None
    length = math.hypot(stop.x() - start.x(), stop.y() - start.y())
    if length == 0:
        return None
    low, high = axis.range
    if axis._tickLevels is None:
        levels, fixed_strings = axis.tickValues(low, high, length), None
    else:  # set with setTicks: [[(value, text), ...] per level]
        levels = [(None, [value for value, _ in level]) for level in axis._tickLevels]
        fixed_strings = [[text for _, text in level] for level in axis._tickLevels]
    difference = high - low
    if difference == 0:
        scale, offset = 1, 0
    elif along == 0:
        scale = -bounds.height() / difference
        offset = low * scale - bounds.height()
    else:
        scale = bounds.width() / difference
        offset = low * scale
    ends = (low * scale - offset, high * scale - offset)
    lowest, highest = min(ends), max(ends)

    tick_specs, positions = [], []
    for level, (_, values) in enumerate(levels):
        tick_length = style["tickLength"] / (level * 0.5 + 1.0)
        alpha = 255 / (level + 1)
        if grid is not False:  # pyqtgraph fades dense grid lines
            alpha *= grid / 255.0 * min(max(0.05 * length / (len(values) + 1), 0.0), 1.0)
        pen = axis.tickPen()
        if pen.brush().style() == Qt.BrushStyle.SolidPattern:
            pen = QPen(pen)
            colour = QColor(pen.color())
            colour.setAlpha(int(alpha))
            pen.setColor(colour)
        level_positions = []
        end = tick_stop + tick_length * tick_dir if grid is False else tick_stop
        for value in values:
            x = value * scale - offset
            if x < lowest or x > highest:
                level_positions.append(None)
                continue
            level_positions.append(x)
            if along == 0:
                tick_specs.append((pen, QPointF(tick_start, x), QPointF(end, x)))
            else:
                tick_specs.append((pen, QPointF(x, tick_start), QPointF(x, end)))
        positions.append(level_positions)
    axis_spec = (axis.pen(), span[0], span[1])

    text_specs, text_rects = [], []
    last_size_across = 0
    gap = max(0, style["tickLength"]) + style["tickTextOffset"][along]
    font_key = (p.font().key(), p.device().logicalDpiY())
    flags = _LABEL_FLAGS[orientation]
    for level in range(min(len(levels), style["maxTextLevel"] + 1)):
        spacing, values = levels[level]
        strings = (axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing) if fixed_strings is None
                   else fixed_strings[level])
        if not strings:
            continue
        rects = []
        for j, text in enumerate(strings):
            if positions[level][j] is None:
                rects.append(None)
                continue
            rect = _text_rect(p, font_key, text)
            rects.append(rect)
            text_rects.append(rect)
        sizes_along = [r.height() if along == 0 else r.width() for r in text_rects]
        sizes_across = [r.width() if along == 0 else r.height() for r in text_rects]
        size_along, size_across = (sum(sizes_along), max(sizes_across)) if text_rects else (0, 0)
        if level > 0 and any(len(text_specs) >= count and size_along / length >= limit
                             for count, limit in style["textFillLimits"]):
            break  # crowded: no labels for this level
        last_size_across = size_across
        for j, text in enumerate(strings):
            x, rect = positions[level][j], rects[j]
            if x is None:
                continue
            width, height = rect.width(), rect.height()
            if orientation == "left":
                placed = QRectF(tick_stop - gap - width, x - height / 2, width, height)
            elif orientation == "right":
                placed = QRectF(tick_stop + gap, x - height / 2, width, height)
            elif orientation == "top":
                placed = QRectF(x - width / 2, tick_stop - gap - height, width, height)
            else:
                placed = QRectF(x - width / 2, tick_stop + gap, width, height)
            text_specs.append((placed, flags, text))
    axis._updateMaxTextSize(last_size_across)
    return axis_spec, tick_specs, text_specs


def _text_rect(p, font_key, text: str) -> QRectF:
    """A label's box as pyqtgraph measures it (80 % of the painter's height), remembered per font."""

    def measure() -> QRectF:
        rect = p.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
        rect.setHeight(rect.height() * 0.8)
        return rect

    return QRectF(remembered(_TEXT_RECTS, (font_key, text), measure))


class AxisDrawing:
    """An axis's lines and labels, laid out once and drawn as often as the axis is repainted on screen.

    pyqtgraph records an axis into a QPicture and plays it back on every
    repaint, which lays every label out again (each default step repaints
    nine axes); the labels are drawn here as static text, whose glyphs are
    laid out once, to the same pixels (a test in test_axes compares them).
    """

    def __init__(self, lines: list, label_pen: QPen, font: QFont, clip: QRectF, labels: list) -> None:
        self.lines = lines  # [(pen, [QLineF, ...]), ...] in drawing order
        self.label_pen = label_pen
        self.font = font
        self.clip = clip
        self.labels = labels  # [(top-left QPointF, QStaticText), ...]

    @classmethod
    def of(cls, axis: pg.AxisItem) -> AxisDrawing:
        """Lay ``axis`` out as pyqtgraph's ``paint`` does, measured on a QPicture's painter."""
        recording = QPicture()  # measured on, never drawn on
        measure = QPainter(recording)
        try:
            if axis.style["tickFont"]:
                measure.setFont(axis.style["tickFont"])
            font = QFont(measure.font())
            specs = axis.generateDrawSpecs(measure)
            if specs is None:
                return cls([], QPen(), font, QRectF(), [])
            axis_spec, tick_specs, text_specs = specs
            lines: list = []
            for pen, start, end in [axis_spec, *tick_specs]:
                if not lines or lines[-1][0] != pen:
                    lines.append((pen, []))
                lines[-1][1].append(QLineF(start, end))
            font_key = (measure.font().key(), measure.device().logicalDpiY())
            labels = [static_text_at(measure, font_key, rect, int(flags), text) for rect, flags, text in text_specs]
            clip = QRectF(axis.boundingRect().toAlignedRect())
        finally:
            measure.end()
        return cls(lines, axis.textPen(), font, clip, labels)

    def play(self, p: QPainter) -> None:
        """What pyqtgraph's ``AxisItem.drawPicture`` draws, onto ``p``."""
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        for pen, lines in self.lines:
            p.setPen(pen)
            p.drawLines(lines)
        if not self.labels:
            return
        p.setFont(self.font)
        p.setPen(self.label_pen)
        p.setClipRect(self.clip, Qt.ClipOperation.IntersectClip)
        for top_left, text in self.labels:
            p.drawStaticText(top_left, text)


def lay_out_axis_drawing(axis: pg.AxisItem) -> bool:
    """Lay a vertical ``axis`` with tick labels out for the screen now, if its next paint would (its drawing was
    dropped by a change); True when that changed the width it takes for its labels.

    An axis measures its tick labels when it paints; labels wider or narrower
    than the last resize it, which lays its plot out again and paints it
    again. Laid out first, the plot's layout runs before the one paint.
    """
    if axis.picture is not None or axis.orientation not in ("left", "right") or not axis.style["showValues"]:
        return False  # a horizontal axis's room is the labels' height, which new labels keep
    room = (axis.maximumWidth(), axis.maximumHeight())
    axis.picture = AxisDrawing.of(axis) if isinstance(axis, AxisPlacingEndLabels) else _recorded_axis(axis)
    return (axis.maximumWidth(), axis.maximumHeight()) != room


def _recorded_axis(axis: pg.AxisItem) -> QPicture:
    """The picture pyqtgraph's ``AxisItem.paint`` records when it has none (a colour bar's axis)."""
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
        if specs is not None:
            axis.drawPicture(painter, *specs)
    finally:
        painter.end()
    return picture


def paint_axis(axis: pg.AxisItem, p: QPainter, option, widget) -> None:
    """Paint ``axis`` from its :class:`AxisDrawing` on screen; elsewhere (an export's image, SVG or PDF) as
    pyqtgraph does, text as text.

    On screen is the canvas, or the pixmap an axis with an item cache is drawn into for it (exports turn
    the cache off): drawn by pyqtgraph there, the similarity profile's cached axis took 0.57 ms a repaint.
    """
    on_screen = isinstance(p.device(), (QWidget, QPixmap))
    if on_screen:
        if not isinstance(axis.picture, AxisDrawing):
            axis.picture = AxisDrawing.of(axis)
        axis.picture.play(p)
        return
    if isinstance(axis.picture, AxisDrawing):
        axis.picture = None  # pyqtgraph records its own picture
    pg.AxisItem.paint(axis, p, option, widget)
