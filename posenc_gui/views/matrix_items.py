"""The permutation demo's small matrices: graphics items that paint a title, word labels, colours and numbers.

Each matrix is one light :class:`MatrixItem` that paints everything itself,
not a ``pg.PlotItem`` (a plot item with its axes, view box and menus is far
too heavy for the thirty matrices of the demo). Every graphics item is
handed to the scene's item tree (``setParentItem`` or a layout), so none is
owned by Python: a Python-owned item inside a scene is deleted on its own
at interpreter exit, before or after its scene, and takes the process down.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsWidget,
    QSizePolicy,
)

from .plotkit import DIVERGING, get_colormap, remembered, static_text_at
from .plotkit.theme import colormap_for, current, kind_of_colormap, themed_text

#: Numbers are written into a matrix's cells only up to this size.
MAX_ANNOTATED_ROWS = 16
MAX_ANNOTATED_COLUMNS = 16
#: Word labels on the axes up to this many rows (beyond: every k-th row).
MAX_LABELLED_ROWS = 20
#: Pixel height of one matrix row, and the cap on a matrix's height.
ROW_PIXELS = 24
MAX_MATRIX_PIXELS = 320
#: Largest and smallest font of the numbers in the cells (smaller cells: smaller font, then none).
CELL_FONT_PT = 8
MIN_CELL_FONT_PT = 6
LABEL_FONT_PT = 8
TITLE_FONT_PT = 9
#: Length of the tick marks on a matrix's axes.
TICK_PIXELS = 3
#: Width of a colour bar.
COLORBAR_PIXELS = 58

#: Colour of a cell holding NaN or ±inf.
NAN_RGB = (190, 190, 190)
#: Colour of a masked cell (a key the query does not see): neutral, lighter than NaN, on no colormap's scale.
MASKED_RGB = (222, 222, 222)
#: Hover text of a masked cell.
MASKED_TEXT = "masked"
GREY = "#555555"


def format_cell(value: float) -> str:
    """A number short enough for a heatmap cell: ``-0.41``, ``12.3``, ``1.2e+04``."""
    if not np.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude < 9.995:
        text = f"{value:.2f}"
        return "0.00" if text == "-0.00" else text
    if magnitude < 99.95:
        return f"{value:.1f}"
    if magnitude < 9999.5:
        return f"{value:.0f}"
    return f"{value:.1e}"


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tick_rows(words: tuple[str, ...]) -> list[tuple[int, str]]:
    n = len(words)
    step = 1 if n <= MAX_LABELLED_ROWS else int(np.ceil(n / MAX_LABELLED_ROWS))
    return [(i, words[i] if step == 1 else f"{i}: {words[i]}") for i in range(0, n, step)]


def _tick_columns(count: int) -> list[tuple[int, str]]:
    step = 1 if count <= MAX_ANNOTATED_COLUMNS else int(np.ceil(count / MAX_ANNOTATED_COLUMNS))
    return [(j, str(j)) for j in range(0, count, step)]


_FONTS: dict[float, tuple[QFont, QFontMetricsF]] = {}


def _font(points: float) -> QFont:
    """A shared font of ``points`` (fonts and their metrics are made once, not per paint)."""
    return _font_and_metrics(points)[0]


def _metrics(points: float) -> QFontMetricsF:
    return _font_and_metrics(points)[1]


def _font_and_metrics(points: float) -> tuple[QFont, QFontMetricsF]:
    if points not in _FONTS:
        font = QFont()
        font.setPointSizeF(points)
        _FONTS[points] = (font, QFontMetricsF(font))
    return _FONTS[points]


_ADVANCES: dict[tuple[float, str], float] = {}


def _advance(points: float, text: str) -> float:
    """The width of ``text`` in the font of ``points``, remembered (cell numbers repeat)."""
    return remembered(_ADVANCES, (points, text), lambda: _metrics(points).horizontalAdvance(text))


_LUTS: dict[str, np.ndarray] = {}
_STRIPS: dict[str, QImage] = {}


def lookup_table(name: str) -> np.ndarray:
    """The colormap ``name`` as a ``(256, 3)`` uint8 table (display only), cached."""
    if name not in _LUTS:
        table = get_colormap(name).getLookupTable(nPts=256, alpha=False)
        _LUTS[name] = np.ascontiguousarray(table[:, :3], dtype=np.uint8)
    return _LUTS[name]


def _strip(name: str) -> QImage:
    """The colormap as a 1-pixel-wide image, high values at the top (for the colour bars)."""
    if name not in _STRIPS:
        pixels = np.ascontiguousarray(_packed(lookup_table(name)[::-1]))
        _STRIPS[name] = QImage(pixels.tobytes(), 1, len(pixels), 4, QImage.Format.Format_RGB32).copy()
    return _STRIPS[name]


def colour_indices(values: np.ndarray, levels: tuple[float, float], count: int = 256) -> np.ndarray:
    """Each value's row in a lookup table of ``count`` colours spanning ``levels`` (display transform)."""
    low, high = levels
    span = high - low if high > low else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.nan_to_num((values - low) / span, nan=0.0, posinf=1.0, neginf=0.0)
    return np.clip(np.rint(scaled * (count - 1)), 0, count - 1).astype(np.intp)


def _packed(table: np.ndarray) -> np.ndarray:
    """RGB rows as 32-bit ``0xffRRGGBB`` pixels (QImage's native format: drawn without conversion)."""
    rgb = table.astype(np.uint32)
    return (0xFF000000 | (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]).astype(np.uint32)


def colour_image(values: np.ndarray, table: np.ndarray, levels: tuple[float, float],
                 masked: np.ndarray | None = None) -> QImage:
    """``values`` as an RGB image, row-major: pixel ``(x=j, y=i)`` is ``values[i, j]``.

    NaN and ±inf cells are :data:`NAN_RGB`, ``masked`` ones (a bool array of
    the same shape) :data:`MASKED_RGB`, whatever they hold.
    """
    rows, cols = values.shape
    pixels = _packed(table)[colour_indices(values, levels, len(table))]
    pixels[~np.isfinite(values)] = _packed(np.array(NAN_RGB))
    if masked is not None:
        pixels[masked] = _packed(np.array(MASKED_RGB))
    data = np.ascontiguousarray(pixels, dtype=np.uint32).tobytes()
    return QImage(data, cols, rows, 4 * cols, QImage.Format.Format_RGB32).copy()


def chrome_heights() -> tuple[float, float]:
    """Heights of a matrix's title (above the colours) and column labels (below)."""
    top = _metrics(TITLE_FONT_PT).height() + 6
    bottom = _metrics(LABEL_FONT_PT).height() + TICK_PIXELS + 3
    return top, bottom


def _own(item: QGraphicsItem, parent: QGraphicsItem | None) -> None:
    """Give ``item`` to ``parent``'s item tree (``setParentItem`` also hands ownership to C++)."""
    if parent is not None:
        item.setParentItem(parent)


_CENTER = int(Qt.AlignmentFlag.AlignCenter)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_TITLE = int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom)


class MatrixItem(QGraphicsWidget):
    """One small heatmap: title, words on the axes, colours and numbers, all painted by this item.

    Row 0 is at the top (matrix orientation). :meth:`set_matrix` only keeps
    the numbers; the image, the cell texts and where everything goes are
    made when the item is first painted (or asked for them), so a matrix
    scrolled out of view costs nothing when the sentences change.

    Masked cells (``set_matrix(..., masked=...)``: keys a causal head does
    not let the query see) are drawn in the neutral :data:`MASKED_RGB`
    with no number; hovering any cell shows its value, or "masked".
    """

    def __init__(self, parent: QGraphicsItem | None = None) -> None:
        super().__init__()
        _own(self, parent)
        self.setAcceptHoverEvents(True)
        self.setMinimumSize(0, 0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        # Painted into a pixmap once per change: scrolling the canvas is a blit.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.values: np.ndarray | None = None
        #: True at the masked cells (None: none is).
        self.masked: np.ndarray | None = None
        self.row_words: tuple[str, ...] = ()
        #: The key words of the columns (None: the columns are dimensions).
        self.column_words: tuple[str, ...] | None = None
        self.column_labels: list[tuple[int, str]] = []
        self.title = ""
        self.colormap = DIVERGING
        self.levels: tuple[float, float] = (0.0, 1.0)
        #: False: the rows are not labelled (the matrix to the left shows the same words).
        self.label_rows = True
        self._image: QImage | None = None
        self._texts: list[str] | None = None
        self._dark_text = np.zeros(0, dtype=bool)
        #: Where the title, ticks and labels go, and for which size and words (see :meth:`_layout_now`).
        self._frame: tuple | None = None
        self._frame_key: tuple | None = None
        self._numbers: tuple | None = None

    def set_matrix(self, values: np.ndarray, row_words: tuple[str, ...], column_words: tuple[str, ...] | None,
                   colormap: str, levels: tuple[float, float], title: str,
                   masked: np.ndarray | None = None) -> None:
        """Show ``values`` with row labels ``row_words`` (and word column labels if given).

        ``colormap`` is a pyqtgraph colormap name spanning ``levels``;
        ``masked`` (bool, the shape of ``values``) marks the cells drawn as
        masked instead of their values. The same matrix given again (the
        word embeddings on a base step) keeps its drawing.
        """
        values = np.asarray(values, dtype=np.float64)
        masked = None if masked is None or not np.any(masked) else np.array(masked, dtype=bool)
        if masked is not None and masked.shape != values.shape:
            raise ValueError(f"masked must have the shape of values {values.shape}, got {masked.shape}")
        row_words = tuple(row_words)
        column_labels = (_tick_rows(tuple(column_words)) if column_words is not None
                         else _tick_columns(values.shape[1]))
        levels = (float(levels[0]), float(levels[1]))
        same_mask = (masked is None and self.masked is None) or (
            masked is not None and self.masked is not None and np.array_equal(masked, self.masked))
        if (self.values is not None and np.array_equal(values, self.values, equal_nan=True) and same_mask
                and (row_words, column_labels, title, colormap, levels)
                == (self.row_words, self.column_labels, self.title, self.colormap, self.levels)):
            return
        self.values = values
        self.masked = masked
        self.column_words = None if column_words is None else tuple(column_words)
        self.row_words = row_words
        self.column_labels = column_labels
        self.title = title
        self.colormap = colormap
        self.levels = levels
        self._image, self._texts, self._numbers = None, None, None
        self.update()

    def follow_colormap_choice(self) -> None:
        """Redraw in the colour map now chosen for the kind of the one shown (see :mod:`.plotkit.theme`)."""
        kind = kind_of_colormap(self.colormap)
        if kind is not None and colormap_for(kind) != self.colormap:
            self.colormap = colormap_for(kind)
            self._image, self._texts, self._numbers = None, None, None
            self.update()

    # ----------------------------------------------------------- display form
    @property
    def image(self) -> QImage | None:
        """The colours, row-major: pixel ``(j, i)`` shows ``values[i, j]``."""
        if self._image is None and self.values is not None:
            self._image = colour_image(self.values, lookup_table(self.colormap), self.levels, self.masked)
        return self._image

    def annotations(self) -> list[str]:
        """The texts written in the cells (row by row, "" in a masked cell); empty for a matrix too large
        to annotate."""
        if self._texts is None:
            self._make_texts()
        return list(self._texts or [])

    def _make_texts(self) -> None:
        values = self.values
        if values is None or values.shape[0] > MAX_ANNOTATED_ROWS or values.shape[1] > MAX_ANNOTATED_COLUMNS:
            self._texts, self._dark_text = [], np.zeros(0, dtype=bool)
            return
        table = lookup_table(self.colormap)
        self._texts = [format_cell(v) for v in values.ravel().tolist()]
        if self.masked is not None:
            for index in np.flatnonzero(self.masked).tolist():
                self._texts[index] = ""
        colours = table[colour_indices(values.ravel(), self.levels, len(table))] / 255.0
        self._dark_text = colours @ np.array([0.299, 0.587, 0.114]) > 0.5

    def row_labels(self) -> list[tuple[int, str]]:
        """``(row, word)`` of the labelled rows, top to bottom."""
        return _tick_rows(self.row_words) if self.label_rows else []

    def label_width(self) -> float:
        """Width the row labels and their ticks take left of the colours."""
        metrics = _metrics(LABEL_FONT_PT)
        widest = max((metrics.horizontalAdvance(t) for _i, t in self.row_labels()), default=0.0)
        return widest + TICK_PIXELS + 4 if widest else 2.0

    def plot_rect(self) -> QRectF:
        """Where the colours are drawn, in item coordinates."""
        top, bottom = chrome_heights()
        width, height = self.size().width(), self.size().height()
        left = min(self.label_width(), max(0.4 * width, 2.0))
        return QRectF(left, top, max(width - left - 6, 1.0), max(height - top - bottom, 1.0))

    def cell_rect(self, row: int, col: int) -> QRectF:
        """Where cell ``(row, col)`` is drawn, in item coordinates (row 0 at the top)."""
        rect = self.plot_rect()
        rows, cols = self.values.shape if self.values is not None else (1, 1)
        width, height = rect.width() / cols, rect.height() / rows
        return QRectF(rect.left() + col * width, rect.top() + row * height, width, height)

    def cell_at(self, pos: QPointF) -> tuple[int, int] | None:
        """The cell ``(row, column)`` under ``pos`` (item coordinates), or None off the colours."""
        if self.values is None:
            return None
        rect = self.plot_rect()
        if not rect.contains(pos):
            return None
        rows, cols = self.values.shape
        row = min(int((pos.y() - rect.top()) / rect.height() * rows), rows - 1)
        col = min(int((pos.x() - rect.left()) / rect.width() * cols), cols - 1)
        return row, col

    def cell_tooltip(self, row: int, col: int) -> str:
        """The hover text of a cell: :data:`MASKED_TEXT` for a masked one, else its row, column and value."""
        if self.masked is not None and self.masked[row, col]:
            return MASKED_TEXT
        column = f"“{self.column_words[col]}”" if self.column_words is not None else f"dimension {col}"
        return f"“{self.row_words[row]}” × {column}: {self.values[row, col]:.6g}"

    def hoverMoveEvent(self, event) -> None:  # noqa: N802 (Qt API)
        cell = self.cell_at(event.pos())
        self.setToolTip("" if cell is None else self.cell_tooltip(*cell))

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802 (Qt API)
        self.setToolTip("")

    def _layout_now(self) -> tuple:
        """Everything's place for the current size and data: ``(rect, title, ticks, labels, numbers)``.

        A parameter step gives new values under the same title and words:
        then only the numbers are laid out again.
        """
        key = (self.size().width(), self.size().height(), self.label_rows, self.title, self.row_words,
               tuple(self.column_labels), self.values.shape)
        if self._frame_key != key or self._frame is None:
            self._frame, self._frame_key, self._numbers = self._frame_layout(), key, None
        rect, title, ticks, labels, cell_w, cell_h = self._frame
        if self._numbers is None:
            self._numbers = (self._number_layout(rect, cell_w, cell_h),)
        return rect, title, ticks, labels, self._numbers[0]

    def _frame_layout(self) -> tuple:
        """``(rect, title, ticks, labels, cell width, cell height)`` for the current size and words."""
        rows, cols = self.values.shape
        rect = self.plot_rect()
        cell_w, cell_h = rect.width() / cols, rect.height() / rows
        metrics = _metrics(LABEL_FONT_PT)
        line = metrics.height()
        title = _metrics(TITLE_FONT_PT).elidedText(self.title, Qt.TextElideMode.ElideRight, self.size().width())
        ticks, labels = [], []
        last = -math.inf
        for i, text in self.row_labels():  # skip any that would overlap the one above
            y = rect.top() + (i + 0.5) * cell_h
            if y - last < line * 0.95:
                continue
            last = y
            ticks.append((QPointF(rect.left() - TICK_PIXELS, y), QPointF(rect.left(), y)))
            labels.append((QRectF(0, y - line / 2, rect.left() - TICK_PIXELS - 2, line), _RIGHT, text))
        step = self.column_labels[1][0] - self.column_labels[0][0] if len(self.column_labels) > 1 else 1
        room = max(cell_w * step - 2, metrics.horizontalAdvance("m…"))
        right = -math.inf
        for j, text in self.column_labels:  # shortened to their column's width
            x = rect.left() + (j + 0.5) * cell_w
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
            width = metrics.horizontalAdvance(shown)
            if x - width / 2 < right + 2:
                continue
            right = x + width / 2
            ticks.append((QPointF(x, rect.bottom()), QPointF(x, rect.bottom() + TICK_PIXELS)))
            labels.append((QRectF(x - width / 2 - 1, rect.bottom() + TICK_PIXELS, width + 2, line), _CENTER, shown))
        return rect, title, ticks, labels, cell_w, cell_h

    def _number_layout(self, rect: QRectF, cell_w: float, cell_h: float) -> tuple | None:
        """``(font, [(dark, [(cell rect, text), ...]) ...])``, or None when the cells are too small."""
        texts = self.annotations()
        if not texts:
            return None
        for points in range(CELL_FONT_PT, MIN_CELL_FONT_PT - 1, -1):
            metrics = _metrics(points)
            widest = max(_advance(points, t) for t in set(texts))
            if widest <= cell_w - 2 and metrics.height() <= cell_h + 1:
                break
        else:
            return None  # cells too small to write in: colours only
        cols = self.values.shape[1]
        groups = []
        for dark in (True, False):
            cells = []
            for index in np.flatnonzero(self._dark_text == dark).tolist():
                if not texts[index]:
                    continue  # a masked cell: no number
                i, j = divmod(index, cols)
                cells.append((QRectF(rect.left() + j * cell_w, rect.top() + i * cell_h, cell_w, cell_h), texts[index]))
            groups.append((dark, cells))
        return _font(points), groups

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002 (Qt API)
        if self.values is None:
            return
        rect, title, ticks, labels, numbers = self._layout_now()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.drawImage(rect, self.image)
        painter.setPen(QPen(QColor(current().foreground), 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect)
        # Texts come back on every update (the same title and words, numbers with two
        # decimals): laid out once, each is drawn as static text where drawText would
        # put it, in a quarter of the time.
        dpi = painter.device().logicalDpiY()
        font = _font(TITLE_FONT_PT)
        painter.setFont(font)
        painter.drawStaticText(*static_text_at(painter, (font.key(), dpi),
                                               QRectF(0, 0, self.size().width(), rect.top() - 2), _TITLE, title))
        font = _font(LABEL_FONT_PT)
        painter.setFont(font)
        for start, end in ticks:
            painter.drawLine(start, end)
        font_key = (font.key(), dpi)
        for box, flags, text in labels:
            painter.drawStaticText(*static_text_at(painter, font_key, box, flags, text))
        if numbers is not None:
            font, groups = numbers
            painter.setFont(font)
            font_key = (font.key(), dpi)
            for dark, cells in groups:
                painter.setPen(QColor("#000000" if dark else "#ffffff"))
                for box, text in cells:
                    painter.drawStaticText(*static_text_at(painter, font_key, box, _CENTER, text))


class ColorBar(QGraphicsWidget):
    """The colour scale of one row of matrices: the colours, high at the top, with a few values."""

    def __init__(self, parent: QGraphicsItem | None = None) -> None:
        super().__init__()
        _own(self, parent)
        self.setMinimumSize(0, 0)
        self.setPreferredWidth(COLORBAR_PIXELS)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.colormap = DIVERGING
        self.levels: tuple[float, float] = (-1.0, 1.0)

    def set_scale(self, colormap: str, levels: tuple[float, float]) -> None:
        """Show ``colormap`` spanning ``levels``."""
        self.colormap, self.levels = colormap, (float(levels[0]), float(levels[1]))
        self.update()

    def follow_colormap_choice(self) -> None:
        """Show the colour map now chosen for the kind of the one shown."""
        kind = kind_of_colormap(self.colormap)
        if kind is not None and colormap_for(kind) != self.colormap:
            self.colormap = colormap_for(kind)
            self.update()

    def ticks(self) -> list[tuple[float, str]]:
        """Round values within the levels and their labels."""
        low, high = self.levels
        span = high - low
        if not (np.isfinite(span) and span > 0):
            return [(low, f"{low:.3g}")]
        raw = span / 4
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        values = np.arange(math.ceil(low / step - 1e-9) * step, high + step * 1e-9, step)
        return [(float(v), f"{0.0 if abs(v) < step * 1e-9 else v:.3g}") for v in values]

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002 (Qt API)
        top, bottom = chrome_heights()
        bar = QRectF(2, top, 12, max(self.size().height() - top - bottom, 1.0))
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.drawImage(bar, _strip(self.colormap))
        painter.setPen(QPen(QColor(current().foreground), 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(bar)
        painter.setFont(_font(LABEL_FONT_PT))
        line = _metrics(LABEL_FONT_PT).height()
        low, high = self.levels
        span = high - low if high > low else 1.0
        for value, text in self.ticks():
            y = bar.bottom() - (value - low) / span * bar.height()
            painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + TICK_PIXELS, y))
            painter.drawText(QRectF(bar.right() + TICK_PIXELS + 2, y - line / 2, self.size().width(), line),
                             _LEFT, text)


class RichText(QGraphicsWidget):
    """A block of rich text (sub- and superscripts) filling its cell of the layout."""

    def __init__(self, parent: QGraphicsItem | None = None, align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft,
                 top: float = 0.0) -> None:
        super().__init__()
        _own(self, parent)
        self.setMinimumSize(0, 0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.text = ""
        self._top = top
        self._document = QTextDocument(self)
        self._document.setDocumentMargin(2)
        self._document.setDefaultFont(_font(TITLE_FONT_PT))
        self._document.setDefaultTextOption(QTextOption(align))

    def setText(self, text: str) -> None:  # noqa: N802 (same name as pg.LabelItem)
        """Show ``text`` (HTML written in light-theme colours, shown in the current theme's)."""
        if text != self.text:
            self.text = text
            self.follow_theme()

    def follow_theme(self) -> None:
        """Show the text in the current theme's colours (see :func:`.plotkit.theme.restyle`)."""
        self._document.setHtml(themed_text(self.text))
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002 (Qt API)
        if not self.text:
            return
        self._document.setTextWidth(self.size().width())
        painter.translate(0, self._top)
        self._document.drawContents(painter, QRectF(0, 0, self.size().width(), self.size().height() - self._top))

