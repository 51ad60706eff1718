"""Titles and text: plot and canvas titles, cached text items, and static text for painted figures."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QStaticText, QTransform
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


def remembered(cache: dict, key, make):
    """``cache[key]``, made by ``make()`` the first time; a cache past 2048 entries starts afresh.

    Text layouts depend only on the font and the text, and the same few
    labels return on every step, so a plain bounded dict is enough (the
    painter that measures them cannot be part of an ``lru_cache`` key).
    """
    value = cache.get(key)
    if value is None:
        if len(cache) > 2048:
            cache.clear()
        value = cache[key] = make()
    return value


def static_text_at(p: QPainter, font_key, rect: QRectF, flags: int, text: str) -> tuple[QPointF, QStaticText]:
    """Where ``p.drawText(rect, flags, text)`` puts the text's top-left corner, and the text laid out once.

    ``p.drawStaticText`` at that corner draws the text in a fraction of
    drawText's time: horizontally aligned to one side or centred, to the
    pixel (a test compares them); centred in both directions, to a fraction
    of a pixel. The layout is remembered per ``font_key`` (the painter's
    font and resolution), text, flags and box size.
    """

    def lay_out() -> tuple[QPointF, QStaticText]:
        placed = p.boundingRect(QRectF(0, 0, rect.width(), rect.height()), flags, text)
        static = QStaticText(text)
        static.setTextFormat(Qt.TextFormat.PlainText)
        static.prepare(QTransform(), p.font())
        metrics = QFontMetricsF(p.font())
        # drawText aligns the text's advance, not the wider box boundingRect reports (glyphs
        # are placed at fractions of a pixel: the box's x was off in 1 of 9 placements).
        x = placed.x()
        if flags & Qt.AlignmentFlag.AlignRight:
            x = rect.width() - metrics.horizontalAdvance(text)
        elif flags & Qt.AlignmentFlag.AlignHCenter:
            x = (rect.width() - metrics.horizontalAdvance(text)) / 2
        # qt_format_text places a single line math.ceil(leading) below the text's box.
        return QPointF(x, placed.y() + math.ceil(metrics.leading())), static

    offset, static = remembered(_STATIC_LABELS, (font_key, text, flags, rect.width(), rect.height()), lay_out)
    return rect.topLeft() + offset, static


_STATIC_LABELS: dict = {}
