"""What plots hold besides curves and images: the legend under a plot, and how many dots a line shows."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QSizePolicy

from .pgcompat import LegendInLayout, layout_cells, legend_entries, legend_sample_item
from .text import cache_text

#: Line plots draw a dot per position while there are at most this many.
MAX_DOTS = 300


class LegendBelow(LegendInLayout):
    """A legend in the canvas's cell under its plot, where it covers no data.

    Drawn over the view box, the waveforms' legend hid the top right of the
    curves (sinusoids fill every corner), the magnitude's the start of its
    dashed line, and the relative panel's the ends of rising profiles. Here
    the entries fill as many columns as the plot's width holds: one row on
    a wide figure, a few in a narrow dock.

    The entries' text is drawn from a pixmap cache (:func:`cache_text`); the
    samples (line and symbol) are drawn directly: they show the current pen
    of their curve, which changes without telling the legend.
    """

    #: Space between one entry's text and the next entry's sample, in pixels
    #: (the layout's own spacing, 5 px, ran the entries of a row together).
    ENTRY_GAP_PX = 18

    def __init__(self, plot: pg.PlotItem, **kwargs) -> None:
        super().__init__(offset=None, frame=False, **kwargs)
        self._plot = plot
        self.layout.setContentsMargins(0, 2, 0, 0)
        # No wider than its entries, and no minimum of its own: a legend could
        # otherwise hold the plot's column wider than the canvas (the plot then
        # clipped at the right, as titles were), and the plot could never
        # narrow to tell it to take fewer columns.
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(1)
        plot.geometryChanged.connect(self.fit_columns)

    def addItem(self, item, name) -> None:  # noqa: N802 (pyqtgraph override)
        super().addItem(item, name)
        _, label = legend_entries(self)[-1]
        cache_text(label.item)

    def show_entry(self, item, name: str, shown: bool) -> None:
        """Add ``item``'s entry (named ``name``) when ``shown``, else remove it.

        A hidden curve's entry would show pyqtgraph's crossed-eye toggle icon
        instead of a line sample: a figure's legend lists what is drawn.
        """
        present = any(legend_sample_item(sample) is item for sample, _ in legend_entries(self))
        if shown and not present:
            self.addItem(item, name)
        elif not shown and present:
            self.removeItem(item)

    def fit_columns(self) -> None:
        """As many columns as the plot's width holds (entries fill the rows left to right)."""
        entries = legend_entries(self)
        if not entries:
            return
        spacing = self.layout.horizontalSpacing()
        widths = [sample.preferredWidth() + spacing + label.preferredWidth() for sample, label in entries]

        def needed(columns: int) -> float:
            return (sum(max(widths[column::columns]) for column in range(columns))
                    + self.ENTRY_GAP_PX * (columns - 1))

        available = self._plot.width()
        self.setColumnCount(next((columns for columns in range(len(widths), 1, -1) if needed(columns) <= available), 1))

    def layout_changed(self) -> None:
        self.fit_columns()
        for text_column in range(1, self.layout.columnCount() - 1, 2):  # each entry is a sample and a text
            self.layout.setColumnSpacing(text_column, self.ENTRY_GAP_PX)

    def setGeometry(self, rect: QRectF) -> None:  # noqa: N802 (Qt override)
        # Centred in its cell, the legend would start between two pixels, and its
        # entries' cached text pixmaps (cache_text) would be drawn half a pixel off.
        super().setGeometry(QRectF(round(rect.x()), round(rect.y()), rect.width(), rect.height()))


def add_legend_below(canvas: pg.GraphicsLayoutWidget, plot: pg.PlotItem, **kwargs) -> LegendBelow:
    """A :class:`LegendBelow` for ``plot``, centred in the canvas's cell under the plot's (which must be free).

    ``kwargs`` go to pyqtgraph's ``LegendItem``.
    """
    legend = LegendBelow(plot, **kwargs)
    cells = layout_cells(canvas.ci, plot)
    row = max(r for r, _ in cells) + 1
    col = min(c for _, c in cells)
    canvas.ci.addItem(legend, row=row, col=col, colspan=max(c for _, c in cells) - col + 1)
    canvas.ci.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    plot.legend = legend
    return legend
