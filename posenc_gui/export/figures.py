"""Figures: the widget prepared and painted as PNG, SVG or PDF, with its caption (see :mod:`posenc_gui.export`)."""

from __future__ import annotations

import base64
import math
import re
import sys
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPoint, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import (QAbstractTextDocumentLayout, QColor, QFont, QImage, QPageLayout, QPageSize,
                           QPainter, QPalette, QPdfWriter, QTextDocument)
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QGraphicsView, QWidget

from .. import __version__
from ..views.plotkit import pgcompat, theme
from .files import ExportError
from .svg_text import place_text_runs


#: Logical size of a figure that has never been laid out (headless export).
DEFAULT_FIGURE_SIZE = QSize(960, 640)
#: Bounds on a PNG's pixel width / height and on its scale factor.
MIN_PNG_WIDTH = 16
MAX_PNG_SIDE = 16384
#: Most pixels a PNG may have in all (width × height). Its image takes 4 bytes a pixel, 256 MiB at the
#: limit, and encoding it about as much again: this bounds an export's memory, which the sides alone do
#: not (16,384 × 16,384 would be 1 GiB; a --size 8000x8000 figure took 3.2–3.8 GB).
MAX_PNG_PIXELS = 2**26
MIN_SCALE, MAX_SCALE = 0.1, 16.0
#: Default PNG scale: sharp on slides and HiDPI screens.
DEFAULT_PNG_SCALE = 2.0
#: Heatmap images in SVG are replicated by an integer factor until they are
#: this many times the size they are drawn at, so viewers that smooth images
#: (librsvg, some converters) keep the cells sharp.
SVG_IMAGE_OVERSAMPLE = 2
MAX_SVG_IMAGE_PIXELS = 2**23


# ------------------------------------------------------------ preparation
def process_events(rounds: int = 3) -> None:
    """Let pending layout, resize and paint events run."""
    app = QApplication.instance()
    if app is None:
        return
    for _ in range(rounds):
        app.processEvents()


def prepare_widget(widget: QWidget, size: QSize | None = None) -> None:
    """Make sure ``widget`` is laid out at a real size before it is rendered.

    A plot that was never shown has no size and renders empty; give it
    ``size`` (or :data:`DEFAULT_FIGURE_SIZE` when it has none) and process
    the resulting layout events.
    """
    if size is not None and size.isValid() and not size.isEmpty():
        widget.resize(size)
    elif (widget.width() < 50 or widget.height() < 50
          or not (widget.isVisible() or widget.testAttribute(Qt.WidgetAttribute.WA_Resized))):
        widget.resize(DEFAULT_FIGURE_SIZE)
    layout = widget.layout()
    if layout is not None:
        layout.activate()
    process_events()


def _graphics_views(widget: QWidget) -> list[QGraphicsView]:
    views = [widget] if isinstance(widget, QGraphicsView) else []
    views += [v for v in widget.findChildren(QGraphicsView) if v.isVisibleTo(widget) or not widget.isVisible()]
    return [v for v in views if v.scene() is not None]


@contextmanager
def _export_mode(widget: QWidget, antialias: bool = True) -> Iterator[None]:
    """Tell pyqtgraph items they are being exported (vector symbols, scaled markers).

    Items cached as pixmaps are switched to direct painting meanwhile so
    vector outputs get vectors.
    """
    items = []
    views = _graphics_views(widget)
    hints = [(view, view.renderHints(), view.cacheMode()) for view in views]
    for view in views:
        items.extend(view.scene().items())
        # PDF: embed images losslessly (Qt would otherwise pick JPEG, whose
        # chroma subsampling blends neighbouring heatmap cells)
        view.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
        view.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
        view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)  # background as a vector fill
    # QWidget.render keeps the painter's scale even where pyqtgraph resets
    # the world transform (scatter symbols), so sizes already scale with the
    # output: resolutionScale stays 1.
    opts = {"antialias": antialias, "resolutionScale": 1.0, "background": None}
    cached, segmented = [], []
    for item in items:
        if hasattr(item, "setExportMode"):
            item.setExportMode(True, dict(opts))
        mode = pgcompat.segmented_line_mode(item)
        if mode not in (None, "off"):
            # one path per curve (not thousands of 2-point segments): smaller
            # SVG/PDF and proper line joins
            segmented.append((item, mode))
            pgcompat.set_segmented_line_mode(item, "off")
        if item.cacheMode() != item.CacheMode.NoCache:
            cached.append((item, item.cacheMode()))
            item.setCacheMode(item.CacheMode.NoCache)
    try:
        yield
    finally:
        for item in items:
            if hasattr(item, "setExportMode"):
                item.setExportMode(False)
        for item, mode in cached:
            item.setCacheMode(mode)
        for item, mode in segmented:
            pgcompat.set_segmented_line_mode(item, mode)
        for view, previous, cache in hints:
            view.setRenderHints(previous)
            view.setCacheMode(cache)


@contextmanager
def _scaled_cosmetic_pens(widget: QWidget, factor: float) -> Iterator[None]:
    """Widen cosmetic pens by ``factor`` so lines keep their on-screen weight in a scaled PNG (and the print
    theme's lines are heavier in every format).

    Qt draws a cosmetic pen a fixed number of *device* pixels wide, so at
    2× a 2 px curve would come out half as heavy as on screen (and than in
    the SVG/PDF). Pens are changed in place and restored afterwards.
    """
    if abs(factor - 1.0) < 0.01:
        yield
        return
    from PySide6.QtWidgets import QAbstractGraphicsShapeItem

    changed: dict[int, tuple[Any, float]] = {}
    shapes: list[tuple[Any, Any]] = []
    axes = []
    for view in _graphics_views(widget):
        for item in view.scene().items():
            if isinstance(item, QAbstractGraphicsShapeItem):
                pen = item.pen()
                if pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen:
                    shapes.append((item, pen))
                    wider = type(pen)(pen)
                    wider.setWidthF(max(pen.widthF(), 1.0) * factor)
                    item.setPen(wider)
            for pen in pgcompat.kept_pens(item, point_pens=True):
                if id(pen) not in changed and pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen:
                    changed[id(pen)] = (pen, pen.widthF())
                    pen.setWidthF(max(pen.widthF(), 1.0) * factor)
            if pgcompat.forget_axis_picture(item):
                axes.append(item)
    try:
        yield
    finally:
        for pen, width in changed.values():
            pen.setWidthF(width)
        for item, pen in shapes:
            item.setPen(pen)
        for item in axes:
            pgcompat.forget_axis_picture(item)
            item.update()


def _render_widget(widget: QWidget, painter: QPainter) -> None:
    # QGraphicsView overrides render() with a scene renderer; the widget's own
    # (frame, child widgets, scroll offset) is QWidget.render.
    QWidget.render(widget, painter, QPoint(0, 0))


# ---------------------------------------------------------------- caption
#: The caption's text size, colour in the light theme (the plots' text colour, plotkit.FOREGROUND; the current
#: theme's foreground is used) and margin, in logical pixels.
CAPTION_POINTS = 9.0
CAPTION_COLOUR = "#222222"
CAPTION_MARGIN_PX = 6


class _Caption:
    """``caption`` laid out across a figure ``width`` logical pixels wide (nothing for no caption)."""

    def __init__(self, caption: str, width: int) -> None:
        self.document: QTextDocument | None = None
        self.height = 0
        if not caption:
            return
        document = QTextDocument()
        document.setDocumentMargin(0)
        font = QFont()
        font.setPointSizeF(CAPTION_POINTS)
        document.setDefaultFont(font)
        document.setPlainText(caption)
        document.setTextWidth(max(width - 2 * CAPTION_MARGIN_PX, 1))
        self.document = document
        self.height = math.ceil(document.size().height()) + 2 * CAPTION_MARGIN_PX

    def draw(self, painter: QPainter, top: float) -> None:
        """Draw the caption with its top edge at ``top`` (logical pixels, in the painter's coordinates)."""
        if self.document is None:
            return
        painter.save()
        try:
            painter.translate(CAPTION_MARGIN_PX, top + CAPTION_MARGIN_PX)
            context = QAbstractTextDocumentLayout.PaintContext()
            context.palette.setColor(QPalette.ColorRole.Text, QColor(theme.current().foreground))
            self.document.documentLayout().draw(painter, context)
        finally:
            painter.restore()


def caption_height(caption: str, width: int) -> int:
    """Logical pixels that ``caption`` adds under a figure ``width`` pixels wide (0 for no caption)."""
    return _Caption(caption, width).height


def figure_caption(panel: Any) -> str:
    """``panel.figure_caption()``: what its exported figure must add in words.

    "" when there is nothing to add, or the panel has no such method.
    """
    caption = getattr(panel, "figure_caption", None)
    return caption() if callable(caption) else ""


# -------------------------------------------------------------------- PNG
def _output_scale(widget: QWidget, width: int | None, scale: float | None) -> float:
    logical = widget.width()
    if logical <= 0 or widget.height() <= 0:
        raise ExportError("The figure has no size yet (it was never laid out); show its panel and try again")
    if width is not None:
        if isinstance(width, bool) or not isinstance(width, (int, np.integer)):
            raise ExportError(f"width must be a whole number of pixels in {MIN_PNG_WIDTH}…{MAX_PNG_SIDE}, got {width!r}")
        if not MIN_PNG_WIDTH <= width <= MAX_PNG_SIDE:
            raise ExportError(f"width must be in {MIN_PNG_WIDTH}…{MAX_PNG_SIDE} pixels, got {width}")
        return width / logical
    scale = DEFAULT_PNG_SCALE if scale is None else scale
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and MIN_SCALE <= scale <= MAX_SCALE):
        raise ExportError(f"scale must be in {MIN_SCALE:g}…{MAX_SCALE:g}, got {scale!r}")
    return float(scale)


def png_size_problem(width: int, height: int) -> str | None:
    """Why a ``width`` × ``height`` pixel PNG is refused, or None: past :data:`MAX_PNG_SIDE` pixels a side or
    :data:`MAX_PNG_PIXELS` in all (the memory budget), with the limit in the message."""
    if width > MAX_PNG_SIDE or height > MAX_PNG_SIDE:
        return (f"A {width:,} × {height:,} pixel image exceeds the limit of {MAX_PNG_SIDE:,} pixels per side; "
                "choose a smaller width or scale")
    if width * height > MAX_PNG_PIXELS:
        return (f"A {width:,} × {height:,} pixel image has {width * height:,} pixels, past the limit of "
                f"{MAX_PNG_PIXELS:,} ({MAX_PNG_PIXELS * 4 // 2**20} MiB in memory, e.g. 8,192 × 8,192) that bounds "
                "the memory an export takes; choose a smaller width or scale")
    return None


def render_image(
    widget: QWidget, *, width: int | None = None, scale: float | None = None, background: QColor | None = None,
    caption: str = "",
) -> QImage:
    """Paint ``widget`` into an image ``width`` pixels wide (or ``scale`` × its size), ``caption`` under it.

    An image past :func:`png_size_problem`'s limits is refused (ExportError) before it is made.
    The painter is scaled, so every line, glyph and image cell is drawn at
    the output resolution.
    """
    factor = _output_scale(widget, width, scale)
    below = _Caption(caption, widget.width())
    out_w = width if width is not None else max(1, round(widget.width() * factor))
    out_h = max(1, round((widget.height() + below.height) * factor))
    problem = png_size_problem(out_w, out_h)
    if problem:  # refused before any memory is taken
        raise ExportError(problem)
    background = background or QColor(theme.current().background)
    # On an opaque background every pixel stays opaque: no alpha channel, a quarter less to encode.
    opaque = background.alpha() == 255
    image = QImage(out_w, out_h, QImage.Format.Format_RGB32 if opaque else QImage.Format.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise ExportError(f"Not enough memory for a {out_w:,} × {out_h:,} pixel image")
    image.fill(background)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.scale(out_w / widget.width(), out_h / (widget.height() + below.height))
        with _export_mode(widget), _scaled_cosmetic_pens(widget, factor * theme.current().line_scale):
            _render_widget(widget, painter)
        below.draw(painter, widget.height())
    finally:
        painter.end()
    return image


def image_png_bytes(image: QImage, description: str = "") -> bytes:
    """Encode ``image`` as PNG (with a Description text chunk)."""
    if description:
        image.setText("Description", description)
    image.setText("Software", f"posenc_gui {__version__}")
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("Could not encode the image as PNG")
    return bytes(buffer.data())


def png_bytes(widget: QWidget, *, width: int | None = None, scale: float | None = None, description: str = "",
              caption: str = "") -> bytes:
    """The figure as PNG bytes; see :func:`render_image`."""
    return image_png_bytes(render_image(widget, width=width, scale=scale, caption=caption), description)


# -------------------------------------------------------------------- SVG
_MARK_BASE = (0x01, 0xA7)  # red, green of the marker colours; blue counts markers


class _ClipMarker(QGraphicsRectItem):
    """A nearly invisible rectangle whose unique colour finds it in the SVG text."""

    def __init__(self, index: int, parent, rect: QRectF, z: float) -> None:
        super().__init__(rect, parent)
        self.color = QColor(_MARK_BASE[0], _MARK_BASE[1], index, 1)
        self.setBrush(self.color)
        self.setPen(Qt.PenStyle.NoPen)
        self.setZValue(z)


def _plot_clips(widget: QWidget) -> list[tuple[Any, QRectF]]:
    """Every visible pyqtgraph ViewBox in ``widget`` and its rectangle in widget coordinates."""
    try:
        import pyqtgraph as pg
    except ImportError:  # pragma: no cover - pyqtgraph is a dependency
        return []
    clips = []
    for view in _graphics_views(widget):
        origin = view.viewport().mapTo(widget, QPoint(0, 0))
        for item in view.scene().items():
            if isinstance(item, pg.ViewBox) and item.isVisible() and item.width() > 0 and item.height() > 0:
                scene_rect = item.mapRectToScene(item.boundingRect())
                rect = view.mapFromScene(scene_rect).boundingRect()
                clips.append((item, QRectF(rect.translated(origin))))
    return clips


def _add_markers(clips: list[tuple[Any, QRectF]]) -> list[tuple[_ClipMarker, _ClipMarker, QRectF]]:
    markers = []
    for index, (view_box, rect) in enumerate(clips[:120]):
        (x0, x1), (y0, y1) = view_box.viewRange()
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        w, h = abs(x1 - x0) * 1e-3 or 1e-3, abs(y1 - y0) * 1e-3 or 1e-3
        small = QRectF(cx - w / 2, cy - h / 2, w, h)
        group = pgcompat.view_box_contents(view_box)
        start = _ClipMarker(2 * index + 1, group, small, -1e300)
        end = _ClipMarker(2 * index + 2, group, small, 1e300)
        markers.append((start, end, rect))
    return markers


def _marker_pattern(color: QColor) -> re.Pattern:
    return re.compile(
        r'<g\b[^>]*fill="' + color.name() + r'"[^>]*>\s*<rect\b[^>]*/>\s*</g>\s*', re.IGNORECASE
    )


def _apply_clips(svg: str, markers: list[tuple[_ClipMarker, _ClipMarker, QRectF]]) -> str:
    """Wrap each plot area's content (between its two markers) in a clip path."""
    defs = []
    for index, (start, end, rect) in enumerate(markers):
        clip_id = f"plot-area-{index + 1}"
        begin = _marker_pattern(start.color).search(svg)
        finish = _marker_pattern(end.color).search(svg)
        if begin is None or finish is None or finish.start() < begin.end():
            # not drawn (e.g. hidden): just drop whatever marker was found
            svg = _marker_pattern(start.color).sub("", svg)
            svg = _marker_pattern(end.color).sub("", svg)
            continue
        svg = (svg[:begin.start()] + f'<g clip-path="url(#{clip_id})">\n' + svg[begin.end():finish.start()]
               + "</g>\n" + svg[finish.end():])
        defs.append(
            f'<clipPath id="{clip_id}" clipPathUnits="userSpaceOnUse">'
            f'<rect x="{rect.x():g}" y="{rect.y():g}" width="{rect.width():g}" height="{rect.height():g}"/>'
            "</clipPath>"
        )
    if defs:
        svg = svg.replace("<desc>", "<defs>\n" + "\n".join(defs) + "\n</defs>\n<desc>", 1) \
            if "<desc>" in svg else re.sub(r"(<svg\b[^>]*>)", r"\1\n<defs>" + "".join(defs) + "</defs>", svg, count=1)
    return svg


_IMAGE_RE = re.compile(r'<image\b([^>]*?)xlink:href="data:image/png;base64,([A-Za-z0-9+/=\s]+)"([^>]*)/>')
_MATRIX_RE = re.compile(r'transform="matrix\(([^)]*)\)"')


def _replicate(image: QImage, kx: int, ky: int) -> QImage:
    """``image`` with every pixel repeated ``kx`` × ``ky`` times (exact, no interpolation)."""
    src = image.convertToFormat(QImage.Format.Format_ARGB32)
    w, h = src.width(), src.height()
    row_bytes = src.bytesPerLine()
    pixels = np.frombuffer(src.constBits(), dtype=np.uint8, count=row_bytes * h).reshape(h, row_bytes)
    pixels = pixels[:, : w * 4].reshape(h, w, 4)
    big = np.ascontiguousarray(np.repeat(np.repeat(pixels, ky, axis=0), kx, axis=1))
    out = QImage(big.data, w * kx, h * ky, w * kx * 4, QImage.Format.Format_ARGB32)
    return out.copy()  # own the memory


def _sharpen_images(svg: str) -> str:
    """Ask viewers for nearest-neighbour image scaling, and oversample by whole pixels for those that ignore it."""
    out, last = [], 0
    for match in _IMAGE_RE.finditer(svg):
        before, payload, after = match.groups()
        # the enclosing group's transform gives the drawn size of the image
        group_start = svg.rfind("<g ", 0, match.start())
        transform = _MATRIX_RE.search(svg, group_start, match.start()) if group_start >= 0 else None
        sx = sy = 1.0
        if transform:
            a, b, c, d = (float(v) for v in transform.group(1).split(",")[:4])
            sx, sy = math.hypot(a, b), math.hypot(c, d)
        width = float(re.search(r'width="([\d.eE+-]+)"', before + after).group(1))
        height = float(re.search(r'height="([\d.eE+-]+)"', before + after).group(1))
        image = QImage.fromData(QByteArray(base64.b64decode(payload)), "PNG")
        if not image.isNull() and image.width() > 0 and image.height() > 0:
            shown_w, shown_h = width * sx, height * sy
            kx = max(1, math.ceil(SVG_IMAGE_OVERSAMPLE * shown_w / image.width()))
            ky = max(1, math.ceil(SVG_IMAGE_OVERSAMPLE * shown_h / image.height()))
            while kx * ky * image.width() * image.height() > MAX_SVG_IMAGE_PIXELS and (kx > 1 or ky > 1):
                kx, ky = max(1, kx // 2), max(1, ky // 2)
            if kx > 1 or ky > 1:
                big = _replicate(image, kx, ky)
                buffer = QBuffer()
                buffer.open(QIODevice.OpenModeFlag.WriteOnly)
                if big.save(buffer, "PNG"):
                    payload = base64.b64encode(bytes(buffer.data())).decode("ascii")
        attrs = before
        if "image-rendering" not in before + after:
            attrs += 'image-rendering="optimizeSpeed" '
        attrs += 'style="image-rendering:pixelated" '
        out.append(svg[last:match.start()])
        out.append(f'<image{attrs}xlink:href="data:image/png;base64,{payload}"{after}/>')
        last = match.end()
    out.append(svg[last:])
    return "".join(out)


_LEAF_GROUP_RE = re.compile(r"<g\b([^>]*)>((?:(?!<g\b|</g>).)*)</g>", re.DOTALL)
_NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR_RE = re.compile(rf"({_NUMBER}),({_NUMBER})")
_BAKEABLE_RE = re.compile(r"<(path|polyline|polygon|rect)\b([^>]*)/>")


def _bake_group(match: re.Match) -> str:
    """Apply a group's transform to its shapes' coordinates when they use non-scaling strokes.

    Qt draws cosmetic pens (pyqtgraph's curves and axes) inside groups scaled
    to data coordinates, with ``vector-effect="non-scaling-stroke"``. Viewers
    without that SVG 1.2 feature (librsvg, Inkscape) would scale the stroke
    by the data transform — a curve 2 px wide becomes hundreds of pixels.
    With the coordinates transformed here the group needs no transform and
    every viewer draws the intended width.
    """
    attrs, body = match.groups()
    transform = _MATRIX_RE.search(attrs)
    if not transform or 'vector-effect="non-scaling-stroke"' not in body or "url(" in attrs:
        return match.group(0)
    remainder = _BAKEABLE_RE.sub("", body)
    if remainder.strip():
        return match.group(0)  # text, images, …: keep the transform
    a, b, c, d, e, f = (float(v) for v in transform.group(1).split(","))
    if a == 1 and b == 0 and c == 0 and d == 1:
        return match.group(0)  # a translation does not scale strokes

    def point(m: re.Match) -> str:
        x, y = float(m.group(1)), float(m.group(2))
        return f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}"

    def shape(m: re.Match) -> str:
        tag, shape_attrs = m.groups()
        if tag == "rect":
            values = {k: float(v) for k, v in re.findall(r'\b(x|y|width|height)="([^"]+)"', shape_attrs)}
            x, y = values.get("x", 0.0), values.get("y", 0.0)
            w, h = values.get("width", 0.0), values.get("height", 0.0)
            others = re.sub(r'\s*\b(x|y|width|height)="[^"]*"', "", shape_attrs)
            corners = f"{x},{y} {x + w},{y} {x + w},{y + h} {x},{y + h}"
            return f'<polygon{others} points="{_PAIR_RE.sub(point, corners)}"/>'
        attr = "d" if tag == "path" else "points"
        return re.sub(
            rf'\b{attr}="([^"]*)"', lambda v: f'{attr}="{_PAIR_RE.sub(point, v.group(1))}"', f"<{tag}{shape_attrs}/>"
        )

    new_attrs = _MATRIX_RE.sub("", attrs)
    return f"<g{new_attrs}>{_BAKEABLE_RE.sub(shape, body)}</g>"


def _bake_nonscaling_strokes(svg: str) -> str:
    return _LEAF_GROUP_RE.sub(_bake_group, svg)


def svg_bytes(widget: QWidget, *, title: str = "", description: str = "", caption: str = "") -> bytes:
    """The figure as SVG: text and lines as vectors, images at data resolution, plot areas clipped.

    ``caption``, if any, is written as text under it. Text names the font family Qt drew with and each
    word sits where Qt's layout put it (:func:`~posenc_gui.export.svg_text.place_text_runs`), so other
    renderers draw it as Qt did.
    """
    below = _Caption(caption, widget.width())
    size = QSize(widget.width(), widget.height() + below.height)
    markers = _add_markers(_plot_clips(widget))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()  # SVG Tiny: no (broken) clip output; clips are added below
    generator.setOutputDevice(buffer)
    generator.setSize(size)
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    # The generator's resolution must match the screen's logical DPI, or
    # items painted through QPicture (pyqtgraph's axes) are scaled by 72/96.
    generator.setResolution(widget.logicalDpiX())
    generator.setTitle(title or "posenc_gui figure")
    generator.setDescription(description or f"posenc_gui {__version__}")
    painter = QPainter(generator)
    try:
        painter.fillRect(QRectF(0, 0, size.width(), size.height()), QColor(theme.current().background))
        with _export_mode(widget), _scaled_cosmetic_pens(widget, theme.current().line_scale):
            _render_widget(widget, painter)
        below.draw(painter, widget.height())
    finally:
        painter.end()
        for start, end, _ in markers:
            for marker in (start, end):
                scene = marker.scene()
                if scene is not None:
                    scene.removeItem(marker)
    svg = bytes(buffer.data()).decode("utf-8")
    svg = _apply_clips(svg, markers)
    svg = _bake_nonscaling_strokes(svg)
    svg = _sharpen_images(svg)
    svg = place_text_runs(svg)
    return svg.encode("utf-8")


# -------------------------------------------------------------------- PDF
#: Qt's PDF engine cannot write a gradient whose stops mix colour specs (the
#: Fusion style's table headers) and says so for every one; it falls back
#: to a plain fill, which is fine for a figure.
_PDF_NOISE = ("QPdfEngine: unable to create a gradient between colors of different spec",)


@contextmanager
def _without_qt_messages(noise: tuple[str, ...]) -> Iterator[None]:
    """Drop the Qt messages that start with ``noise``; pass every other one on."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):  # noqa: ANN001 - Qt callback
        if message.startswith(noise):
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


def pdf_bytes(widget: QWidget, *, title: str = "", description: str = "", caption: str = "") -> bytes:
    """The figure as a one-page vector PDF the size of the widget (1 px = 0.75 pt), ``caption`` under it."""
    below = _Caption(caption, widget.width())
    size = QSize(widget.width(), widget.height() + below.height)
    dpi = widget.logicalDpiX()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(dpi)
    points = QSizeF(size.width() * 72.0 / dpi, size.height() * 72.0 / dpi)
    writer.setPageLayout(
        QPageLayout(QPageSize(points, QPageSize.Unit.Point, "figure", QPageSize.SizeMatchPolicy.ExactMatch),
                    QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
    )
    writer.setTitle(title or "posenc_gui figure")
    writer.setCreator(f"posenc_gui {__version__}" + (f" — {description}" if description else ""))
    painter = QPainter()
    if not painter.begin(writer):
        raise ExportError("Could not start the PDF writer")
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
        painter.fillRect(QRectF(0, 0, size.width(), size.height()), QColor(theme.current().background))
        with (_export_mode(widget), _scaled_cosmetic_pens(widget, theme.current().line_scale),
              _without_qt_messages(_PDF_NOISE)):
            _render_widget(widget, painter)
        below.draw(painter, widget.height())
    finally:
        painter.end()
    data = bytes(buffer.data())
    if not data.startswith(b"%PDF"):
        raise ExportError("The PDF writer produced no document")
    return data

