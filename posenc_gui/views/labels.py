"""A one-line text label whose text can change every frame without re-laying out the window."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget


def counted(n: int, noun: str) -> str:
    """``"1 position"``, ``"1,024 positions"``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


class StatusText(QWidget):
    """One line of text, elided at the right when the space is short (the full text is the tooltip).

    QLabel.setText always asks the parent layout for a new geometry, and in
    a dock that request climbs to the main window, which re-lays out every
    dock: about 1–3 ms per label per update at the default size, paid on
    every slider step. Qt has no label that opts out, so this one keeps a
    fixed size hint (from ``sample`` text given once) and only repaints
    itself when its text changes.

    Parameters
    ----------
    sample : str
        Text whose width is the preferred width.
    expanding : bool
        Take any spare width of the row (headers) instead of the preferred width only.
    """

    def __init__(self, sample: str = "", parent: QWidget | None = None, expanding: bool = True) -> None:
        super().__init__(parent)
        self._text = ""
        self._hint = QSize(self.fontMetrics().horizontalAdvance(sample) + 4, self.fontMetrics().height() + 2)
        horizontal = QSizePolicy.Policy.Expanding if expanding else QSizePolicy.Policy.Preferred
        self.setSizePolicy(horizontal, QSizePolicy.Policy.Fixed)
        # Opaque: a new text repaints this widget only, not the panel and
        # the dock frame behind it.
        self.setAutoFillBackground(True)

    def text(self) -> str:
        """The full text (also when it is drawn elided)."""
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming, a drop-in for QLabel)
        """Show ``text``; repaints this widget only."""
        if text != self._text:
            self._text = text
            self.setToolTip(text)
            self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return self._hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(min(self._hint.width(), 40), self._hint.height())

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if not self._text:
            return
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        shown = self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, self.width())
        painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)
        painter.end()
