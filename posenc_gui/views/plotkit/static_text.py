"""Static text: a text laid out once and drawn where ``drawText`` would draw it, and the bounded caches of layouts.

(Here rather than in :mod:`.text`, so that :mod:`.pgcompat` can use it: :mod:`.text` imports pgcompat.)
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QStaticText, QTransform


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
