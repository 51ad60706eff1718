"""What a pyqtgraph axis shows: its tick labels as it lays them out now."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPicture


def drawn_labels(axis) -> list[str]:
    """The tick labels ``axis`` lays out now, in its tick font: pyqtgraph's draw specifications, measured on a
    QPicture's painter (no pixels drawn). Empty when it draws none (``generateDrawSpecs`` gives nothing)."""
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"] is not None:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in specs[2]] if specs else []
