"""Plots stacked one above the other on one x axis: their view boxes the same pixels wide, one under the other.

pyqtgraph's ``setXLink`` lines linked views up pixel by pixel: a view box
wider than the one it follows (a narrower left axis, no colour bar on its
right) shows a longer range, and the two x axes end at different values
(RoPE precision: 131 k above, 140 k below). :class:`StackedX` gives every
plot of the stack the widest left axis's width (each axis drawn against its
view box) and the width of a colour bar beside one of them on the right of
the others, so the linked views cover the same pixels and the same range.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsWidget

#: Cells of a PlotItem's layout: the left axis's column, the gap before a colour bar and the colour bar's
#: (pyqtgraph's ``ColorBarItem.setImageItem(insert_in=…)`` puts it in row 2, column 5 after a 5 px column 4).
_LEFT_AXIS_COLUMN, _GAP_COLUMN, _BAR_COLUMN, _VIEW_ROW = 0, 4, 5, 2
_GAP_PX = 5


class StackedX:
    """Keep the view boxes of ``plots`` (x-linked, one above the other) at the same left and right edges.

    Parameters
    ----------
    plots
        The stacked plots, each in its own cell of one column of a layout.
    colorbar
        A vertical colour bar inserted in one of them (``insert_in``), whose width the others keep free.
    """

    def __init__(self, plots: list[pg.PlotItem], colorbar: pg.ColorBarItem | None = None) -> None:
        self.plots = plots
        self.colorbar = colorbar
        self._spacers: list[QGraphicsWidget] = []
        holder = colorbar.parentLayoutItem() if colorbar is not None else None
        for plot in plots:
            axis = plot.getAxis("left")
            plot.layout.setAlignment(axis, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            axis.geometryChanged.connect(self.align)
            if colorbar is not None and plot.layout is not holder:
                spacer = QGraphicsWidget(plot)
                plot.layout.addItem(spacer, _VIEW_ROW, _BAR_COLUMN)
                plot.layout.setColumnFixedWidth(_GAP_COLUMN, _GAP_PX)
                self._spacers.append(spacer)
        if colorbar is not None:
            colorbar.geometryChanged.connect(self.align)
        self.align()

    def align(self) -> None:
        """Give every plot's left-axis column the widest axis's width, and each spacer the colour bar's."""
        widest = max(plot.getAxis("left").maximumWidth() for plot in self.plots)
        for plot in self.plots:
            if plot.layout.columnMinimumWidth(_LEFT_AXIS_COLUMN) != widest:
                plot.layout.setColumnMinimumWidth(_LEFT_AXIS_COLUMN, widest)
        if self.colorbar is not None:
            width = self.colorbar.geometry().width()
            for spacer in self._spacers:
                if spacer.minimumWidth() != width:
                    spacer.setMinimumWidth(width)
                    spacer.setMaximumWidth(width)
