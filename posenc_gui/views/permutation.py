"""Permutation demo: "dog bites man" and "man bites dog" through one attention head.

Every matrix of ``X → Q, K, V → QKᵀ/√d_k → softmax → AV`` is drawn for both
sentences side by side, as small heatmaps with the numbers written in the
cells and the rows labelled by the words. All numbers come from
:mod:`posenc_gui.model.attention`; this module only draws them.

The figure has some thirty matrices. Each is one light :class:`MatrixItem`
that paints its title, words, colours and numbers itself, not a
``pg.PlotItem`` (a plot item with its axes, view box and menus costs about
30 ms to build, which made the first showing of the dock take over a
second on the GUI thread). Every graphics item is handed to the scene's
item tree (``setParentItem`` or a layout), so none is owned by Python: a
Python-owned item inside a scene is deleted on its own at interpreter exit,
before or after its scene, and took the process down with a segfault.
"""

from __future__ import annotations

import html
import math
from typing import Any, Callable

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsGridLayout,
    QGraphicsItem,
    QGraphicsWidget,
    QGridLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from ..compute import ModelJob
from ..model import SCHEMES, EncodingParams
from ..model.attention import (
    DEFAULT_DEMO_D_MODEL,
    DEFAULT_SENTENCE_A,
    DEFAULT_SENTENCE_B,
    MAX_DEMO_D_MODEL,
    MAX_WORDS,
    MIN_DEMO_D_MODEL,
    AttentionTrace,
    LogitSplit,
    PermutationDemo,
    permutation_demo,
    word_difference,
)
from .base import MESSAGE_STYLES, Panel
from .labels import WrappedLabelHolder
from .plotkit import DIVERGING, FOREGROUND, colour_scale, get_colormap, new_layout_widget, remembered, static_text_at

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

LABEL_PIXELS = 150
COLORBAR_PIXELS = 58
SPLIT_LABEL_PIXELS = 70
MIN_CANVAS_PIXELS = 900
#: Colour of a cell holding NaN or ±inf.
NAN_RGB = (190, 190, 190)
GREY = "#555555"

#: (key, formula, what the matrix is, how to get it from a trace)
Step = tuple[str, str, str, Callable[[AttentionTrace], np.ndarray]]
COMMON_STEPS: tuple[Step, ...] = (
    ("Q", "Q = X·W<sub>q</sub>", "queries", lambda t: t.q),
    ("K", "K = X·W<sub>k</sub>", "keys", lambda t: t.k),
    ("V", "V = X·W<sub>v</sub>", "values", lambda t: t.v),
    ("S", "S = QK<sup>T</sup>/√d<sub>k</sub>", "logits: query × key", lambda t: t.scores),
    ("A", "A = softmax(S)", "each row sums to 1", lambda t: t.attention),
    ("Z", "Z = A·V", "the output", lambda t: t.output),
)
POSITION_STEPS: tuple[Step, ...] = (
    ("E", "E", "word embeddings", lambda t: t.embeddings),
    ("PE", "PE", "positions 0, 1, 2, …", lambda t: t.positional),
    ("X", "X = E + PE", "input with position", lambda t: t.x),
)
PLAIN_STEPS: tuple[Step, ...] = (("X", "X = E", "word embeddings only", lambda t: t.x),)
#: Steps whose columns are key words (not dimensions).
SQUARE_STEPS = ("S", "A")
SPLIT_NAMES = ("e·e", "e·p", "p·e", "p·p", "total")


def steps(with_position: bool) -> tuple[Step, ...]:
    """The rows of plots, top to bottom."""
    return (POSITION_STEPS if with_position else PLAIN_STEPS) + COMMON_STEPS


def _sentence_title(key: str, tokens: tuple[str, ...], shape: tuple[int, int]) -> str:
    text = " ".join(tokens)
    if len(text) > 40:
        text = text[:39].rstrip() + "…"
    return f"{key}: {text}  ({shape[0]}×{shape[1]})"


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


def _shorten(text: str, limit: int) -> str:
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


def colour_image(values: np.ndarray, table: np.ndarray, levels: tuple[float, float]) -> QImage:
    """``values`` as an RGB image, row-major: pixel ``(x=j, y=i)`` is ``values[i, j]``."""
    rows, cols = values.shape
    pixels = _packed(table)[colour_indices(values, levels, len(table))]
    pixels[~np.isfinite(values)] = _packed(np.array(NAN_RGB))
    data = np.ascontiguousarray(pixels, dtype=np.uint32).tobytes()
    return QImage(data, cols, rows, 4 * cols, QImage.Format.Format_RGB32).copy()


def _chrome() -> tuple[float, float]:
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
    """

    def __init__(self, parent: QGraphicsItem | None = None) -> None:
        super().__init__()
        _own(self, parent)
        self.setMinimumSize(0, 0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        # Painted into a pixmap once per change: scrolling the canvas is a blit.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.values: np.ndarray | None = None
        self.row_words: tuple[str, ...] = ()
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
                   colormap: str, levels: tuple[float, float], title: str) -> None:
        """Show ``values`` with row labels ``row_words`` (and word column labels if given).

        ``colormap`` is a pyqtgraph colormap name spanning ``levels``. The
        same matrix given again (the word embeddings on a base step) keeps its
        drawing: repainting two of the six matrices in view for nothing cost
        about 1.5 ms of a base step.
        """
        values = np.asarray(values, dtype=np.float64)
        row_words = tuple(row_words)
        column_labels = (_tick_rows(tuple(column_words)) if column_words is not None
                         else _tick_columns(values.shape[1]))
        levels = (float(levels[0]), float(levels[1]))
        if (self.values is not None and np.array_equal(values, self.values, equal_nan=True)
                and (row_words, column_labels, title, colormap, levels)
                == (self.row_words, self.column_labels, self.title, self.colormap, self.levels)):
            return
        self.values = values
        self.row_words = row_words
        self.column_labels = column_labels
        self.title = title
        self.colormap = colormap
        self.levels = levels
        self._image, self._texts, self._numbers = None, None, None
        self.update()

    # ----------------------------------------------------------- display form
    @property
    def image(self) -> QImage | None:
        """The colours, row-major: pixel ``(j, i)`` shows ``values[i, j]``."""
        if self._image is None and self.values is not None:
            self._image = colour_image(self.values, lookup_table(self.colormap), self.levels)
        return self._image

    def annotations(self) -> list[str]:
        """The texts written in the cells (row by row); empty for a matrix too large to annotate."""
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
        top, bottom = _chrome()
        width, height = self.size().width(), self.size().height()
        left = min(self.label_width(), max(0.4 * width, 2.0))
        return QRectF(left, top, max(width - left - 6, 1.0), max(height - top - bottom, 1.0))

    def cell_rect(self, row: int, col: int) -> QRectF:
        """Where cell ``(row, col)`` is drawn, in item coordinates (row 0 at the top)."""
        rect = self.plot_rect()
        rows, cols = self.values.shape if self.values is not None else (1, 1)
        width, height = rect.width() / cols, rect.height() / rows
        return QRectF(rect.left() + col * width, rect.top() + row * height, width, height)

    def _layout_now(self) -> tuple:
        """Everything's place for the current size and data: ``(rect, title, ticks, labels, numbers)``.

        A parameter step gives new values under the same title and words:
        then only the numbers are laid out again (the rest took half of the
        demo's repaint after a base step).
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
        painter.setPen(QPen(QColor(FOREGROUND), 1.0))
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
        top, bottom = _chrome()
        bar = QRectF(2, top, 12, max(self.size().height() - top - bottom, 1.0))
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.drawImage(bar, _strip(self.colormap))
        painter.setPen(QPen(QColor(FOREGROUND), 1.0))
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
        """Show ``text`` (HTML)."""
        if text != self.text:
            self.text = text
            self._document.setHtml(text)
            self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002 (Qt API)
        if not self.text:
            return
        self._document.setTextWidth(self.size().width())
        painter.translate(0, self._top)
        self._document.drawContents(painter, QRectF(0, 0, self.size().width(), self.size().height() - self._top))


class PermutationPanel(Panel):
    """Two orderings of the same words through one attention head, with and without position."""

    panel_id = "permutation"
    title = "Permutation demo"
    help_text = (
        "Self-attention, one head, traced number by number for two sentences: "
        "X → Q = XW<sub>q</sub>, K = XW<sub>k</sub>, V = XW<sub>v</sub> → "
        "A = softmax(QK<sup>T</sup>/√d<sub>k</sub>) by rows → Z = AV. "
        "Each word has a fixed toy embedding e (the same vector in every sentence) and the weights are "
        "fixed (seeded). <b>Without position</b> (X = E), reordering the words only reorders the rows: "
        "Z<sub>b</sub> = P Z<sub>a</sub> and A<sub>b</sub> = P A<sub>a</sub> P<sup>T</sup> for the permutation "
        "P, so “dog bites man” and “man bites dog” give the same output for each word — attention "
        "cannot see order. <b>With position</b> (X = E + PE, the scheme of the Parameters panel), word i "
        "carries e<sub>i</sub> + p<sub>i</sub> and the equality breaks; the number in the verdict is "
        "max |Z<sub>b</sub> − P Z<sub>a</sub>|. The last rows split each logit: "
        "(e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)<sup>T</sup>/√d<sub>k</sub> "
        "= e·e + e·p + p·e + p·p: meaning with meaning, meaning with position, position with meaning, "
        "position with position; the four add up to the total (checked). Rows are words (first word at "
        "the top); colours share one scale per row of plots (blue negative, red positive; A from 0 to 1)."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.pe_check = QCheckBox("Add positional encoding", self)
        self.pe_check.setChecked(True)
        self.pe_check.setToolTip("X = E + PE (the scheme of the Parameters panel) instead of X = E")
        self.d_model_spin = QSpinBox(self)
        self.d_model_spin.setRange(MIN_DEMO_D_MODEL, MAX_DEMO_D_MODEL)
        self.d_model_spin.setValue(DEFAULT_DEMO_D_MODEL)
        self.d_model_spin.setAccessibleName("demo d_model")
        self.d_model_spin.setToolTip(
            f"Embedding size of this demo ({MIN_DEMO_D_MODEL}…{MAX_DEMO_D_MODEL}), small so the numbers "
            "can be read; independent of the Parameters panel's d_model")
        self.scheme_label = QLabel(self)
        self.header.addWidget(self.pe_check)
        self.header.addWidget(QLabel("demo d_model:", self))
        self.header.addWidget(self.d_model_spin)
        self.header.addWidget(self.scheme_label)
        self.finish_header()

        self.sentence_a_edit = QLineEdit(DEFAULT_SENTENCE_A, self)
        self.sentence_b_edit = QLineEdit(DEFAULT_SENTENCE_B, self)
        for edit, name in ((self.sentence_a_edit, "sentence a"), (self.sentence_b_edit, "sentence b")):
            edit.setAccessibleName(name)
            edit.setPlaceholderText(f"type {name} (1…{MAX_WORDS} words)")
            edit.setClearButtonEnabled(True)
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("Sentence a:", self), 0, 0)
        grid.addWidget(self.sentence_a_edit, 0, 1)
        grid.addWidget(QLabel("Sentence b:", self), 0, 2)
        grid.addWidget(self.sentence_b_edit, 0, 3)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.body.addLayout(grid)

        self.verdict_label = QLabel(self)
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(WrappedLabelHolder(self.verdict_label, self))

        self.canvas = new_layout_widget()
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.canvas)
        self.body.addWidget(self.scroll, 1)

        self.demo: PermutationDemo | None = None
        self.with_position = True
        self._params_used: EncodingParams | None = None
        #: The inputs of the last request (sentences, demo d_model, scheme and its parameters).
        self._requested: tuple | None = None
        self.canvas.setMinimumWidth(MIN_CANVAS_PIXELS)
        self.matrices: dict[str, MatrixItem] = {}
        self._build()
        self.split_checks: dict[str, str] = {}
        self._shape: tuple | None = None

        self.sentence_a_edit.textChanged.connect(self.request_update)
        self.sentence_b_edit.textChanged.connect(self.request_update)
        self.d_model_spin.valueChanged.connect(self.request_update)
        self.pe_check.toggled.connect(self._toggle_position)
        state.paramsChanged.connect(self.schedule_update)  # a hidden dock catches up when shown
        self.request_update()

    # ------------------------------------------------------------------ inputs
    def set_sentences(self, sentence_a: str | None = None, sentence_b: str | None = None) -> None:
        """Replace the sentences (the headless export uses this)."""
        if sentence_a is not None:
            self.sentence_a_edit.setText(sentence_a)
        if sentence_b is not None:
            self.sentence_b_edit.setText(sentence_b)

    def set_with_position(self, on: bool) -> None:
        """Show the trace with (True) or without (False) the positional encoding."""
        self.pe_check.setChecked(bool(on))

    def set_demo_d_model(self, d_model: int) -> None:
        """The demo's embedding size (clamped by the spin box to 2…64)."""
        self.d_model_spin.setValue(int(d_model))

    # ------------------------------------------------------------------ compute
    def request_update(self, *_args) -> None:
        """Recompute the demo in a worker from the current inputs; the newest request wins.

        The demo has its own d_model (the spin box): a change of the
        window's d_model or sequence length (unless the scheme reads it)
        leaves every input the same, and then nothing is computed or
        redrawn; 25 matrices were repainted identically on every d_model
        step.
        """
        sentence_a, sentence_b = self.sentence_a_edit.text(), self.sentence_b_edit.text()
        d_model = self.d_model_spin.value()
        params = self.state.params
        scheme, kwargs = params.scheme, params.scheme_kwargs()
        inputs = (sentence_a, sentence_b, d_model, scheme, tuple(sorted(kwargs.items())))
        if inputs == self._requested:
            if self._params_used is not None:
                self._params_used = params  # what the export reports; the demo is the same
            return
        self._requested = inputs

        self.compute.submit(self, ModelJob(permutation_demo, (sentence_a, sentence_b, d_model, scheme, kwargs)),
                            lambda demo: self._show((demo, params)), self._failed)

    def _failed(self, error: Exception) -> None:
        message = str(error)
        self.show_message(message, "error")
        self.sentence_a_edit.setStyleSheet("border: 1px solid #c0392b;" if "sentence_a" in message else "")
        self.sentence_b_edit.setStyleSheet("border: 1px solid #c0392b;" if "sentence_b" in message else "")

    def _show(self, result: tuple[PermutationDemo, EncodingParams]) -> None:
        demo, params = result
        self.demo = demo
        self._params_used = params
        self.show_message("")
        self.sentence_a_edit.setStyleSheet("")
        self.sentence_b_edit.setStyleSheet("")
        self._redraw()

    def _toggle_position(self, on: bool) -> None:
        self.with_position = bool(on)
        if self.demo is not None:
            self._redraw()

    # ------------------------------------------------------------------ drawing
    def _pe_description(self) -> str:
        params = self._params_used or self.state.params
        parts = [SCHEMES[params.scheme].label]
        kwargs = params.scheme_kwargs()
        if "base" in kwargs:
            parts.append(f"base {kwargs['base']:g}")
        if "layout" in kwargs:
            parts.append(str(kwargs["layout"]))
        if "length" in kwargs:
            parts.append(f"N = {kwargs['length']}")
        return ", ".join(parts)

    def verdict_text(self) -> str:
        """The verdict lines as plain text (what the label shows)."""
        return "\n".join(self.demo.verdict_lines()) if self.demo is not None else ""

    def _update_verdict(self) -> None:
        demo = self.demo
        assert demo is not None
        lines = demo.verdict_lines()
        if demo.is_permutation:
            current = 1 if self.with_position else 0
            rendered = [
                (f"<b>{html.escape(line)}</b>" if i == current else html.escape(line)) for i, line in enumerate(lines)
            ]
            style = MESSAGE_STYLES["info"]
        else:
            rendered = [html.escape(line) for line in lines]
            style = MESSAGE_STYLES["warning"]
        self.verdict_label.setText("<br>".join(rendered))
        if self.verdict_label.styleSheet() != style:  # restyling re-polishes the label
            self.verdict_label.setStyleSheet(style)
        self.scheme_label.setText(f"PE scheme: {html.escape(self._pe_description())}")

    def _figure_verdict(self, demo: PermutationDemo) -> str:
        """The comparison in two short lines for the figure (the long form is above the canvas)."""
        if not demo.is_permutation:
            return (f"<b>b is not a reordering of a</b> "
                    f"({html.escape(word_difference(demo.tokens_a, demo.tokens_b))}): no permutation to compare")
        lines = []
        for with_position in (False, True):
            c = demo.comparison(with_position)
            label = "With position" if with_position else "Without position"
            result = "the same rows, permuted" if c.same else "different: the head sees word order"
            text = (f"{label}: max |Z<sub>b</sub> − P Z<sub>a</sub>| = {c.max_abs_diff_output:.2g}, "
                    f"max |A<sub>b</sub> − P A<sub>a</sub> P<sup>T</sup>| = {c.max_abs_diff_attention:.2g} → {result}")
            lines.append(f"<b>{text}</b>" if with_position == self.with_position else text)
        return "<br>".join(lines)

    def _build(self) -> None:
        """Create every item once (a few milliseconds); later changes only refill them and resize rows.

        The figure is one :class:`QGraphicsWidget` with a grid layout, set as
        the canvas's central item (pyqtgraph's own layout is not used). Items
        go into layouts, which hands their ownership to the scene's tree.
        """
        self.figure = QGraphicsWidget()
        grid = QGraphicsGridLayout()
        grid.setContentsMargins(6, 6, 6, 6)
        grid.setVerticalSpacing(2)
        grid.setHorizontalSpacing(6)
        self.figure.setLayout(grid)
        self.grid = grid
        top, _bottom = _chrome()
        self.colorbars: dict[str, ColorBar] = {}
        self.step_labels: dict[str, RichText] = {}
        self.step_rows: dict[str, int] = {}
        self.title_label = RichText()
        grid.addItem(self.title_label, 0, 0, 1, 4)
        row = 1
        for key, _formula, _what, _get in POSITION_STEPS + COMMON_STEPS:
            label = RichText(align=Qt.AlignmentFlag.AlignRight, top=top)
            grid.addItem(label, row, 0)
            self.step_labels[key] = label
            for col, sentence in ((1, "a"), (2, "b")):
                matrix = MatrixItem()
                grid.addItem(matrix, row, col)
                self.matrices[f"{key}_{sentence}"] = matrix
            self.colorbars[key] = ColorBar()
            grid.addItem(self.colorbars[key], row, 3)
            self.step_rows[key] = row
            row += 1
        self.split_header = RichText()
        grid.addItem(self.split_header, row, 0, 1, 4)
        self.split_header_row = row
        row += 1
        self.split_rows: dict[str, int] = {}
        self.split_layouts: dict[str, QGraphicsGridLayout] = {}
        self.split_strips: dict[str, QGraphicsWidget] = {}
        for sentence in ("a", "b"):
            strip = QGraphicsWidget()
            sub = QGraphicsGridLayout()
            sub.setContentsMargins(0, 0, 0, 0)
            sub.setHorizontalSpacing(4)
            strip.setLayout(sub)
            label = RichText(align=Qt.AlignmentFlag.AlignRight, top=top)
            label.setText(f"<span style='color:{FOREGROUND}'>sentence&nbsp;{sentence}</span>")
            sub.addItem(label, 0, 0)
            sub.setColumnFixedWidth(0, SPLIT_LABEL_PIXELS)
            for col, name in enumerate(SPLIT_NAMES, start=1):
                matrix = MatrixItem()
                matrix.label_rows = col == 1  # the same words in every matrix of the strip
                sub.addItem(matrix, 0, col)
                sub.setColumnStretchFactor(col, 1)
                self.matrices[f"split_{sentence}_{name}"] = matrix
            bar = ColorBar()
            sub.addItem(bar, 0, len(SPLIT_NAMES) + 1)
            sub.setColumnFixedWidth(len(SPLIT_NAMES) + 1, COLORBAR_PIXELS)
            self.colorbars[f"split_{sentence}"] = bar
            grid.addItem(strip, row, 0, 1, 4)
            self.split_rows[sentence] = row
            self.split_layouts[sentence] = sub
            strip.geometryChanged.connect(lambda sentence=sentence: self._fit_split_columns(sentence))
            self.split_strips[sentence] = strip
            row += 1
        self.check_label = RichText()
        grid.addItem(self.check_label, row, 0, 1, 4)
        self.check_row = row
        grid.setColumnFixedWidth(0, LABEL_PIXELS)
        grid.setColumnFixedWidth(3, COLORBAR_PIXELS)
        grid.setColumnStretchFactor(1, 1)
        grid.setColumnStretchFactor(2, 1)
        self.canvas.setCentralItem(self.figure)

    def _apply_shape(self, n_a: int, n_b: int, with_position: bool) -> None:
        """Row heights for sentences of ``n_a`` and ``n_b`` words; hide E and PE without position."""
        grid = self.grid
        chrome = sum(_chrome()) + 4
        matrix_height = min(max(n_a, n_b) * ROW_PIXELS, MAX_MATRIX_PIXELS) + chrome
        heights = {0: 84, self.split_header_row: 78, self.check_row: 30}
        for key, row in self.step_rows.items():
            visible = with_position or key not in ("E", "PE")
            for item in (self.step_labels[key], self.matrices[f"{key}_a"], self.matrices[f"{key}_b"],
                         self.colorbars[key]):
                item.setVisible(visible)
            heights[row] = matrix_height if visible else 0
        for sentence, n in (("a", n_a), ("b", n_b)):
            heights[self.split_rows[sentence]] = min(n * ROW_PIXELS, MAX_MATRIX_PIXELS) + chrome
        spacing = grid.verticalSpacing()
        for row, height in heights.items():
            grid.setRowFixedHeight(row, height)
            grid.setRowSpacing(row, spacing if height else 0)
        shown = sum(1 for h in heights.values() if h)
        self.canvas.setMinimumHeight(int(sum(heights.values()) + spacing * shown + 16))

    def _redraw(self) -> None:
        demo = self.demo
        assert demo is not None
        shape = (len(demo.tokens_a), len(demo.tokens_b), self.with_position)
        if shape != self._shape:
            self._apply_shape(*shape)
            self._shape = shape
        self._update_verdict()
        comparison = demo.comparison(self.with_position)
        traces = {"a": comparison.trace_a, "b": comparison.trace_b}
        pe_text = f"E + PE, PE: {html.escape(self._pe_description())}" if self.with_position else "E, no position"
        self.title_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'>"
            f"<b>a:</b> {html.escape(_shorten(' '.join(demo.tokens_a), 60))} &nbsp; "
            f"<b>b:</b> {html.escape(_shorten(' '.join(demo.tokens_b), 60))}<br>"
            f"Shown: X = {pe_text}; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}, seed {demo.seed}<br>"
            f"{self._figure_verdict(demo)}</span>"
        )
        for key, formula, what, get in steps(self.with_position):
            self.step_labels[key].setText(
                f"<span style='color:{FOREGROUND}; font-size:10pt'><b>{formula}</b></span><br>"
                f"<span style='color:#555555; font-size:8pt'>{what}</span>"
            )
            self._draw_step(key, {sentence: get(trace) for sentence, trace in traces.items()}, traces)
        self._draw_split(demo)

    def _draw_step(self, key: str, values: dict[str, np.ndarray], traces: dict[str, AttentionTrace]) -> None:
        probabilities = key == "A"
        colormap, levels = colour_scale(np.concatenate([v.ravel() for v in values.values()]), signed=not probabilities)
        if probabilities:
            levels = (0.0, 1.0)  # every weight is a probability: the whole range, in every figure
        self.colorbars[key].set_scale(colormap, levels)
        for sentence, trace in traces.items():
            matrix = values[sentence]
            self.matrices[f"{key}_{sentence}"].set_matrix(
                matrix, trace.tokens, trace.tokens if key in SQUARE_STEPS else None, colormap, levels,
                _sentence_title(sentence, trace.tokens, matrix.shape),
            )

    def _draw_split(self, demo: PermutationDemo) -> None:
        self.split_header.setText(
            f"<span style='color:{FOREGROUND}; font-size:10pt'><b>Four-term split of the logits with position</b>"
            f" (PE: {html.escape(self._pe_description())})<br>"
            f"S = (e<sub>i</sub>+p<sub>i</sub>)W<sub>q</sub>·((e<sub>j</sub>+p<sub>j</sub>)W<sub>k</sub>)"
            f"<sup>T</sup>/√d<sub>k</sub> = e·e + e·p + p·e + p·p</span><br>"
            f"<span style='color:#555555; font-size:8pt'>e·e: meaning with meaning (the logits without position); "
            f"e·p: word with position; p·e: position with word; p·p: position with position.<br>"
            f"Rows: query word, columns: key word; % = the term's share of all four's |values|.</span>"
        )
        self.split_checks = {}
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            self._draw_split_row(sentence, split)
        checks = ", ".join(f"{s}: {r:.1e}" for s, r in
                           (("a", demo.split_a.max_abs_residual), ("b", demo.split_b.max_abs_residual)))
        self.check_label.setText(
            f"<span style='color:{FOREGROUND}; font-size:9pt'>Check: max |e·e + e·p + p·e + p·p − S| = {checks}"
            f" — the four terms add up to the total.</span>"
        )

    def _draw_split_row(self, sentence: str, split: LogitSplit) -> None:
        terms = split.terms()
        every = np.concatenate([t.ravel() for t in (*terms.values(), split.total)])
        colormap, levels = colour_scale(every, signed=True)
        self.colorbars[f"split_{sentence}"].set_scale(colormap, levels)
        shares = split.shares()
        for name, term in terms.items():
            self.matrices[f"split_{sentence}_{name}"].set_matrix(
                term, split.tokens, split.tokens, colormap, levels, f"{sentence}: {name}  {shares[name]:.0%}",
            )
        self.split_checks[sentence] = f"max |e·e + e·p + p·e + p·p − S| = {split.max_abs_residual:.1e}"
        self.matrices[f"split_{sentence}_total"].set_matrix(
            split.total, split.tokens, split.tokens, colormap, levels, f"{sentence}: total S",
        )
        self._fit_split_columns(sentence)

    def _fit_split_columns(self, sentence: str) -> None:
        """Only the first matrix of a strip labels its rows: widen its column by the labels' width
        so all five draw their cells the same size."""
        layout, strip = self.split_layouts[sentence], self.split_strips[sentence]
        labels = self.matrices[f"split_{sentence}_{SPLIT_NAMES[0]}"].label_width()
        count = len(SPLIT_NAMES)
        spare = (strip.size().width() - SPLIT_LABEL_PIXELS - COLORBAR_PIXELS
                 - layout.horizontalSpacing() * (count + 1) - labels)
        width = max(spare / count, 10.0)
        for col in range(1, count + 1):
            layout.setColumnFixedWidth(col, width + (labels if col == 1 else 0.0))

    # ------------------------------------------------------------------ export
    def figure_widget(self) -> QWidget:
        return self.canvas

    def export_data(self) -> dict[str, Any]:
        """Both sentences' matrices (the shown mode first) and the JSON dict under ``meta["permutation"]``."""
        demo, params_used = self.demo, self._params_used
        if demo is None or self._stale:  # not delivered or out of date: compute now
            # (raises ValueError for bad input)
            params = params_used = self.state.params
            demo = permutation_demo(self.sentence_a_edit.text(), self.sentence_b_edit.text(),
                                    self.d_model_spin.value(), params.scheme, params.scheme_kwargs())
        arrays: dict[str, np.ndarray] = {}
        order = (True, False) if self.with_position else (False, True)
        for with_position in order:
            prefix = "with_pe" if with_position else "without_pe"
            comparison = demo.comparison(with_position)
            for sentence, trace in (("a", comparison.trace_a), ("b", comparison.trace_b)):
                matrices = {"Z": trace.output, "A": trace.attention, "S": trace.scores, "Q": trace.q,
                            "K": trace.k, "V": trace.v, "X": trace.x, "E": trace.embeddings}
                if trace.positional is not None:
                    matrices["PE"] = trace.positional
                for key, matrix in matrices.items():
                    arrays[f"{prefix}_{key}_{sentence}"] = np.array(matrix)
        for sentence, split in (("a", demo.split_a), ("b", demo.split_b)):
            for name, term in split.terms().items():
                arrays[f"split_{sentence}_{name.replace('·', '')}"] = np.array(term)
        meta = {
            "panel": self.panel_id,
            "with_position": self.with_position,
            "params": dict((params_used or self.state.params).__dict__),
            "verdict": demo.verdict_lines(),
            "permutation": demo.to_dict(),
        }
        return {"arrays": arrays, "meta": meta}
