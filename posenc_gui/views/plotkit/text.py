"""Titles and text: plot and canvas titles, cached text items (static text for painted figures: :mod:`.static_text`)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from .pgcompat import let_title_narrow, set_label_colour, show_plain_text
from .theme import current, themed_text

#: Size of plot and canvas titles, in points.
TITLE_POINTS = 10.0


def cache_text(item: QGraphicsItem) -> None:
    """Draw a text item from a pixmap of its device pixels, rendered again only when it changes.

    Qt draws a rich-text item (axis and plot titles, legend entries) by
    walking its document's layout on every repaint that touches it, and a
    data update repaints most of a plot. Export switches the cache off, so
    SVG and PDF keep the text as text.
    """
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


def set_title(plot: pg.PlotItem, title: str) -> None:
    """Set a plot's title, unless it shows ``title`` already (``setTitle`` re-lays out the plot).

    Colours in the title's HTML are light-theme colours, shown as the current theme has them.
    """
    label = plot.titleLabel
    title = themed_text(title)
    if label.text == title and label.isVisible():
        return
    if not show_plain_text(label, title, current().foreground):  # in place when it fits: no layout pass
        set_label_colour(label, current().foreground)
        plot.setTitle(title, size=f"{TITLE_POINTS:g}pt")
        label.updateMin()  # setTitle fixed the title row at one line's height: a wrapped title takes its own


def add_canvas_title(canvas: pg.GraphicsLayoutWidget, columns: int = 1) -> pg.LabelItem:
    """A title across the top row of ``canvas`` (its plots go in the rows below), for figures of several plots.

    Set its text with :func:`set_canvas_title`.
    """
    label = canvas.ci.addLabel("", row=0, col=0, colspan=columns, color=current().foreground,
                               size=f"{TITLE_POINTS:g}pt")
    cache_text(label.item)
    let_title_narrow(label)
    return label


def set_canvas_title(label: pg.LabelItem, title: str) -> None:
    """Show ``title`` in a label made by :func:`add_canvas_title`, unless it shows it already (colours as in :func:`set_title`)."""
    title = themed_text(title)
    if label.text != title and not show_plain_text(label, title, current().foreground):
        label.setText(title, color=current().foreground, size=f"{TITLE_POINTS:g}pt")
