"""Text labels whose text can change every frame without re-laying out the window."""

from __future__ import annotations

from typing import Callable

import numpy as np
from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from ..model.core.colour_bound import BOUND_PERCENTILE
from .plotkit.theme import LIGHT, current


def counted(n: int, noun: str) -> str:
    """``"1 position"``, ``"1,024 positions"``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def clipped_levels(colour_bound: tuple[float, int, float] | None,
                   signed: bool = True) -> tuple[float, float] | None:
    """A matrix's colour levels for its ``colour_bound`` (:func:`.model.core.colour_bound.outlier_bound`): ±bound for a
    ``signed`` quantity, 0…bound for one that cannot be negative; None (the whole range) for no bound."""
    if colour_bound is None:
        return None
    return (-colour_bound[0] if signed else 0.0, colour_bound[0])


def clipping_text(colour_bound: tuple[float, int, float], signed: bool = True) -> str:
    """What a matrix's colours leave out, for its caption: "Colours span ±0.12 (99.9 % of |values|): 3 shown values
    up to 1.87 drawn in the end colours." (``signed``; else "span 0…0.12").

    ``colour_bound`` is ``(bound, beyond, largest)`` (:func:`.model.core.colour_bound.outlier_bound`).
    """
    bound, beyond, largest = colour_bound
    span = f"±{bound:.3g}" if signed else f"0…{bound:.3g}"
    return (f"Colours span {span} ({BOUND_PERCENTILE:g} % of |values|): {beyond:,} shown "
            f"{'value' if beyond == 1 else 'values'} up to {largest:.3g} drawn in the end colours.")


def plain_text(html: str) -> str:
    """The text a rich-text label shows, without its markup (entities decoded), for a figure's caption."""
    return " ".join(QTextDocumentFragment.fromHtml(html).toPlainText().split())


class StatusText(QWidget):
    """A line of text that changes without re-laying out the window; the full text is its tooltip and accessible name.

    QLabel.setText always asks the parent layout for a new geometry, and in
    a dock that request climbs to the main window, which re-lays out every
    dock, on every slider step. Qt has no label that opts out, so this one keeps a
    fixed size hint (from ``sample`` text given once) and only repaints
    itself when its text changes.

    One line is elided at the right when space is short. With ``wrap`` the
    text is word-wrapped instead, and the widget is as tall as the most
    lines any of its texts needed at its current width (at least the
    sample's): a text that changes with every zoom step does not move what
    is under it up and down, and asks for a new layout only when it needs
    more lines than any before it.

    Parameters
    ----------
    sample : str
        Text whose width is the preferred width.
    expanding : bool
        Take any spare width of the row (headers) instead of the preferred width only.
    wrap : bool
        Wrap the words onto as many lines as they need instead of eliding.
    """

    #: Space between the widget's edges and its text, in pixels (left and right, top and bottom).
    PADDING_PX = (0, 1)

    def __init__(self, sample: str = "", parent: QWidget | None = None, expanding: bool = True,
                 wrap: bool = False) -> None:
        super().__init__(parent)
        self._text = ""
        self._sample = sample
        self._wrap = wrap
        self._reserved = (-1, 1)  # (width, lines): the most lines a text needed at that width
        across, down = self.PADDING_PX
        self._hint = QSize(self.fontMetrics().horizontalAdvance(sample) + 4 + 2 * across,
                           self.fontMetrics().height() + 2 * down)
        horizontal = QSizePolicy.Policy.Expanding if expanding else QSizePolicy.Policy.Preferred
        # Wrapped, the height follows the width (heightForWidth); Fixed would cap it at the size hint's,
        # and Minimum make the hint (as many lines as a narrow width needs) the dock's minimum.
        policy = QSizePolicy(horizontal, QSizePolicy.Policy.Preferred if wrap else QSizePolicy.Policy.Fixed)
        policy.setHeightForWidth(wrap)
        self.setSizePolicy(policy)
        # Opaque: a new text repaints this widget only, not the panel and
        # the dock frame behind it.
        self.setAutoFillBackground(True)

    def text(self) -> str:
        """The full text (also when it is drawn elided)."""
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming, a drop-in for QLabel)
        """Show ``text``; repaints this widget only (a wrapped text needing more lines than before re-lays out)."""
        if text != self._text:
            self._text = text
            self.setToolTip(text)
            self.setAccessibleName(text)  # painted by hand: screen readers read this instead
            if self._wrap and self.heightForWidth(self.width()) > self.height():
                self.updateGeometry()  # more lines than any text before at this width: the layout makes room
            self.update()

    def text_rect(self) -> QRect:
        """Where the text is drawn, inside the padding."""
        across, down = self.PADDING_PX
        return self.rect().adjusted(across, down, -across, -down)

    def _lines(self, text: str, width: int) -> int:
        """Lines that ``text`` takes wrapped to a widget ``width`` pixels wide."""
        if not text:
            return 1
        metrics = self.fontMetrics()
        inner = max(1, width - 2 * self.PADDING_PX[0])
        height = metrics.boundingRect(QRect(0, 0, inner, 1 << 20), int(Qt.TextFlag.TextWordWrap), text).height()
        return max(1, round(height / metrics.lineSpacing()))

    def _reserved_lines(self, width: int) -> int:
        """The most lines the sample and the texts shown so far need at ``width`` (remembered while it lasts)."""
        needed = max(self._lines(self._sample, width), self._lines(self._text, width))
        known_width, lines = self._reserved
        lines = max(lines, needed) if known_width == width else needed
        self._reserved = (width, lines)
        return lines

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return self._wrap

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        if not self._wrap:
            return super().heightForWidth(width)
        metrics = self.fontMetrics()
        lines = self._reserved_lines(width)
        return metrics.height() + (lines - 1) * metrics.lineSpacing() + 2 * self.PADDING_PX[1]

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        if self._wrap:
            width = self.width() if self.width() > 0 else self._hint.width()
            return QSize(self._hint.width(), self.heightForWidth(width))
        return self._hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(min(self._hint.width(), 40), self._hint.height())

    def _flags(self) -> int:
        wrap = Qt.TextFlag.TextWordWrap if self._wrap else 0
        return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | wrap)

    def _shown(self, width: int) -> str:
        """The text as drawn: all of it when wrapped, elided to ``width`` otherwise."""
        if self._wrap:
            return self._text
        return self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, width)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if not self._text:
            return
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        rect = self.text_rect()
        painter.drawText(rect, self._flags(), self._shown(rect.width()))
        painter.end()


#: Background, border and text colours per level, of the panels' message bars and of :class:`NoticeLine`,
#: in the light theme (each theme has its own: ``plotkit.theme.current().message_colours()``).
MESSAGE_COLOURS = LIGHT.message_colours()


class NoticeLine(StatusText):
    """A notice that keeps its place in the layout whatever it says.

    For a state that changes as the user zooms (aliasing), a message bar
    that appears and disappears changes the plot's height: the plot jumps
    under the mouse, and the dock, the plot's scene and its axes are laid
    out again. This
    notice is always there; its text and colours change in a repaint. Its
    words wrap (:class:`StatusText` with ``wrap``): every word of a long
    notice is read in a narrow dock too.
    """

    PADDING_PX = (6, 4)

    def __init__(self, sample: str = "", parent: QWidget | None = None) -> None:
        super().__init__(sample, parent, wrap=True)
        self._level = "info"

    def level(self) -> str:
        return self._level

    def set_notice(self, text: str, level: str = "info") -> None:
        """Show ``text`` in the colours of ``level`` (a key of :data:`MESSAGE_COLOURS`)."""
        if level not in MESSAGE_COLOURS:
            raise ValueError(f"level must be one of {', '.join(MESSAGE_COLOURS)}, not {level!r}")
        if level != self._level:
            self._level = level
            self.update()
        self.setAccessibleDescription(level)
        self.setText(text)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        background, border, foreground = current().message_colours()[self._level]
        painter = QPainter(self)
        painter.setPen(QPen(QColor(border)))
        painter.setBrush(QColor(background))
        painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.setPen(QColor(foreground))
        rect = self.text_rect()
        painter.drawText(rect, self._flags(), self._shown(rect.width()))
        painter.end()


class WrappedLabelHolder(QWidget):
    """Holds a word-wrapped :class:`QLabel` at the height its text needs.

    ``QLabel.setText`` always asks the parent layout for a new geometry, and
    in a dock that request climbs through the panel and the dock to the
    main window, which re-lays out every dock (the heatmap's aliasing
    warning counts different dimensions on every d_model step). The label sits here without a layout,
    so its requests stop at this widget, which asks for a new layout only
    when the text needs a different height at the current width.

    Parameters
    ----------
    label : QLabel
        The label to hold (reparented here); it should wrap its words.
    keep_height : bool
        Keep, at each width, the tallest height a text has needed there, so
        a line of headline numbers whose wrapping changes with the numbers
        does not resize (and repaint) the plots below it on every step.
    """

    #: Widths whose tallest height a ``keep_height`` holder remembers (a resize drag passes through many).
    KEPT_WIDTHS = 64

    def __init__(self, label: QLabel, parent: QWidget | None = None, keep_height: bool = False) -> None:
        super().__init__(parent)
        self.label = label
        self._kept: dict[int, int] | None = {} if keep_height else None
        label.setParent(self)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        height = self.label.heightForWidth(width)
        if self._kept is None:
            return height
        if width not in self._kept and len(self._kept) >= self.KEPT_WIDTHS:
            self._kept.clear()
        height = self._kept[width] = max(height, self._kept.get(width, 0))
        return height

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        hint = self.label.sizeHint()
        return QSize(hint.width(), self.heightForWidth(hint.width()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return self.label.minimumSizeHint()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # posted by the label's setText
            if self.heightForWidth(self.width()) != self.height():
                self.updateGeometry()  # more or fewer lines: the layout must make room
            else:
                self.label.setGeometry(self.rect())
            return True
        return super().event(event)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())


class HoverReadout:
    """A hover line: the description of the cell under the mouse, kept current as the data changes.

    A panel maps the mouse to a cell (its own coordinates: a position and a
    dimension, two positions, a row and a column) and calls :meth:`hover`;
    after new data it calls :meth:`refresh`, so the line never names a value
    the view no longer shows: the same cell of the new data, or the prompt
    when that cell is gone.

    Parameters
    ----------
    label : QLabel or StatusText
        Where the text goes (anything with ``setText``).
    prompt : str
        The text while no cell is described.
    describe : callable
        ``describe(cell) -> str`` for the current data.
    valid : callable
        ``valid(cell) -> bool``: whether the current data has that cell.
    """

    def __init__(self, label, prompt: str, describe: Callable[[tuple[int, int]], str],
                 valid: Callable[[tuple[int, int]], bool]) -> None:
        self._label = label
        self._prompt = prompt
        self._describe = describe
        self._valid = valid
        self.cell: tuple[int, int] | None = None
        label.setText(prompt)

    def hover(self, cell: tuple[int, int] | None) -> None:
        """Describe ``cell``; off the data (``None`` or not valid) the line keeps its text."""
        if cell is not None and self._valid(cell):
            self.cell = cell
            self._label.setText(self._describe(cell))

    def clear(self) -> None:
        """Forget the described cell and show the prompt (the view now shows another kind of cell)."""
        self.cell = None
        self._label.setText(self._prompt)

    def refresh(self) -> None:
        """Describe the remembered cell again from the current data, or show the prompt if it is gone."""
        if self.cell is None:
            return
        if self._valid(self.cell):
            self._label.setText(self._describe(self.cell))
        else:
            self.cell = None
            self._label.setText(self._prompt)


def value_range_text(name: str, values: np.ndarray) -> str:
    """``"Values from -1 to 1."``: the range of the finite shown values, for a figure's caption."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return f"{name}: no finite value."
    return f"{name} from {float(finite.min()):.4g} to {float(finite.max()):.4g}."
