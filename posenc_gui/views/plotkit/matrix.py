"""A matrix shown as an image: row 0 at the top, the app's colour rule and a colour bar.

Every matrix view of the app (heatmap, similarity, T_k, …) uses this so the
orientation and the colour scale are the same everywhere.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

from .axes import new_plot, set_axis_label, set_ticks, style_axis, style_plot
from .canvas import paint_guard
from .pgcompat import ColorBarWithoutMenu, keep_rendered_image_native, render_through_palette
from .colours import MASKED_COLOUR, colour_scale, get_colormap
from .text import set_title
from .theme import colormap_for, current
from .ticks import MIN_LABELS, colorbar_ticks


class MatrixImageItem(pg.ImageItem):
    """A row-major :class:`pg.ImageItem` whose paint errors are reported, not a crash (:func:`paint_guard`).

    Its rendered image is in a format Qt draws without converting it: made
    so through the colour table (:func:`.pgcompat.render_through_palette`),
    or converted after pyqtgraph's render (:func:`.pgcompat.keep_rendered_image_native`).
    """

    paint = paint_guard(pg.ImageItem.paint)

    def __init__(self, **kwargs) -> None:
        super().__init__(axisOrder="row-major", **kwargs)

    def render(self) -> None:
        if not render_through_palette(self):
            super().render()
            keep_rendered_image_native(self)


class MatrixPlot:
    """A :class:`pg.PlotItem` holding one row-major image with a colorbar.

    Parameters
    ----------
    layout : pg.GraphicsLayout
        Where to add the plot (``GraphicsLayoutWidget.ci`` or a sub-layout).
    x_label, y_label : str
        Axis titles (columns, rows).
    colorbar_label : str
        Title of the colorbar.
    row, col : int, optional
        The plot's cell in ``layout`` (the next free one by default).
    """

    def __init__(self, layout: pg.GraphicsLayout, x_label: str, y_label: str, colorbar_label: str = "value",
                 row: int | None = None, col: int | None = None) -> None:
        # no context menu: made without one, rather than built and thrown away (pyqtgraph's view box menu)
        self.plot: pg.PlotItem = new_plot(layout, row=row, col=col)
        style_plot(self.plot, cached_axes=False)  # no grid over the image
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        # Rows and columns are indices: whole-number ticks (the left and bottom
        # axes have no SI prefix, see CompactAxisItem); the hidden top and right
        # axes follow the view too.
        for side in ("top", "right"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        for side in ("bottom", "left"):
            self.plot.getAxis(side).integer_ticks = True
        self.plot.invertY(True)  # matrix orientation: row 0 at the top
        self.plot.hideButtons()
        self.image = MatrixImageItem()
        self.plot.addItem(self.image)
        self.colormap_name = colormap_for("diverging")
        self.colorbar = ColorBarWithoutMenu(
            values=(-1, 1), colorMap=get_colormap(self.colormap_name), interactive=False, label=colorbar_label,
            width=18, pen=current().foreground,
        )
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        # pyqtgraph fixes the colour scale's axis at 45 px, which hides labels
        # such as "5e+07"; let it grow with its labels instead.
        self.colorbar.axis.setWidth(None)
        for axis_name in ("left", "right", "top", "bottom"):  # top, bottom: the ends of the bar
            style_axis(self.colorbar.getAxis(axis_name), cached=False)
        self.values: np.ndarray | None = None
        self.masked = False
        self.rect: QRectF | None = None
        self._given_colorbar_ticks: list | None = None
        self.colorbar.geometryChanged.connect(self._fit_colorbar_ticks)

    def set_title(self, title: str) -> None:
        """Set the plot title (only if it changed)."""
        set_title(self.plot, title)

    @property
    def view_box(self) -> pg.ViewBox:
        return self.plot.getViewBox()

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        """The cell under ``scene_pos`` as (row, column) in data coordinates, rounded; None off the plot area.

        Rows and columns are the data's own indices (positions, dimensions),
        whatever the sampling of the image: a panel looks its value up or
        computes it.
        """
        view_box = self.view_box
        if not view_box.sceneBoundingRect().contains(scene_pos):
            return None
        point = view_box.mapSceneToView(scene_pos)
        return int(round(point.y())), int(round(point.x()))

    def set_colorbar_label(self, text: str) -> None:
        """Title of the colour scale."""
        set_axis_label(self.colorbar.getAxis("left"), text)

    def set_colorbar_ticks(self, ticks: list | None) -> None:
        """Ticks of the colour scale as ``axis.setTicks`` takes them; ``None`` for :func:`colorbar_ticks`."""
        self._given_colorbar_ticks = ticks
        if ticks is None:
            self._fit_colorbar_ticks()
        else:
            set_ticks(self.colorbar.axis, ticks)

    def _fit_colorbar_ticks(self) -> None:
        """Automatic colour-bar ticks for the current levels and length (unless ticks were given)."""
        if self._given_colorbar_ticks is None:
            low, high = self.colorbar.levels()
            length = self.colorbar.axis.height()
            set_ticks(self.colorbar.axis, colorbar_ticks(low, high, length if length > 8 else 300))

    def set_colormap(self, name: str) -> None:
        """Switch to the colormap ``name`` (see :func:`.colours.get_colormap`).

        The colour bar may show another one than :attr:`colormap_name`: a
        change of the chosen maps switches it directly (:func:`.theme.restyle`).
        """
        if name != self.colormap_name or self.colorbar.colorMap().name != name:
            self.colormap_name = name
            self.colorbar.setColorMap(get_colormap(name))

    def set_matrix(self, values: np.ndarray, rect: QRectF, levels: tuple[float, float] | None = None,
                   signed: bool = True, masked: bool = False) -> None:
        """Show ``values`` (rows × columns) over ``rect`` in data coordinates.

        Colours follow :func:`colour_scale` for a ``signed`` (or unsigned)
        quantity; ``levels`` replaces the levels it gives. ``masked``: the
        ``−inf`` entries are masked cells (a causal bias's keys after the
        query), drawn in :data:`MASKED_COLOUR` rather than as the lowest
        level (:attr:`values` keeps them as given).
        """
        name, automatic = colour_scale(values, signed)
        self.set_colormap(name)
        levels = automatic if levels is None else levels
        self.values = values
        self.rect = QRectF(rect)
        if masked != self.masked:
            self.masked = masked
            # the image leaves a NaN cell transparent: the view's background shows through it
            self.view_box.setBackgroundColor(MASKED_COLOUR if masked else None)
        shown = np.where(np.isneginf(values), np.nan, values) if masked else values
        self.image.setImage(shown, autoLevels=False)
        self.image.setRect(rect)
        # The image keeps its levels across setImage; the colour bar is set again only for new ones.
        if tuple(levels) != tuple(self.colorbar.levels()):
            self.colorbar.setLevels(levels)
            self._fit_colorbar_ticks()

    def set_full_range(self, x_extent: tuple[float, float], y_extent: tuple[float, float]) -> None:
        """Limit panning/zooming to the matrix and show all of it.

        Zoomed in to the end, a view still spans :data:`MIN_LABELS` rows and
        columns: each is a labelled tick.
        """
        vb = self.view_box
        vb.setLimits(xMin=x_extent[0], xMax=x_extent[1], yMin=y_extent[0], yMax=y_extent[1],
                     minXRange=min(float(MIN_LABELS), x_extent[1] - x_extent[0]),
                     minYRange=min(float(MIN_LABELS), y_extent[1] - y_extent[0]))
        vb.setRange(xRange=x_extent, yRange=y_extent, padding=0)
        vb.updateMatrix()  # now, not during the next paint, which would then paint twice
