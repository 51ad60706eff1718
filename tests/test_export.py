"""Export of figures: names, PNG, SVG and PDF that are sharp and match, and the caption under a figure.

Data formats, atomic writing, every panel in every format and the window's export actions: test_export_data.py.
"""

import base64
import re
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QByteArray, QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QGraphicsTextItem

from posenc_gui import export
from posenc_gui.export import ExportError
from posenc_gui.views import panel_classes
from posenc_gui.views.plotkit import MatrixPlot, new_layout_widget
from helpers_export import SVG, assert_not_blank, decode_png, make_panel, pixels
from helpers_panels import settle_panel, show_panel

XLINK = "{http://www.w3.org/1999/xlink}"


# ----------------------------------------------------------------- helpers
@pytest.fixture
def matrix_figure(qtbot):
    """A stand-alone matrix plot (house style) with a known 6 × 4 matrix and a curve on top."""
    canvas = new_layout_widget()
    plot = MatrixPlot(canvas.ci, "dimension", "position")
    values = np.array([[(-1) ** (i + j) * (0.2 + 0.8 * (i * 4 + j) / 23) for j in range(4)] for i in range(6)])
    plot.set_matrix(values, QRectF(-0.5, -0.5, 4, 6))
    plot.set_full_range((-0.5, 3.5), (-0.5, 5.5))
    plot.plot.plot([0, 1, 2, 3], [0, 5, 1, 4], pen=pg.mkPen("#00aa00", width=2))
    plot.plot.addItem(pg.InfiniteLine(pos=2.5, angle=0, pen=pg.mkPen("#ff00ff", width=1)))  # hairline at y = 2.5
    show_panel(qtbot, canvas, (640, 420), settle=False, on_screen=False)
    return canvas, plot, values


def cell_centre(canvas, plot, row, col):
    """Widget coordinates of the centre of matrix cell (row, col)."""
    scene = plot.view_box.mapViewToScene(QPointF(col, row))
    return canvas.mapFromScene(scene)


def svg_to_image(data: bytes, width: int, height: int) -> QImage:
    renderer = QSvgRenderer(QByteArray(data))
    assert renderer.isValid()
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image
# ------------------------------------------------------------------ names
def test_format_comes_from_the_extension_and_unknown_ones_are_named():
    assert export.format_for_path("a/b/fig.SVG") == "svg"
    with pytest.raises(ExportError, match=r"\.png.*\.json"):
        export.format_for_path("fig.jpeg")
    with pytest.raises(ExportError, match="no extension"):
        export.format_for_path("figure")


def test_suggested_name_says_scheme_sizes_and_panel(state):
    state.update(scheme="harmonic", seq_len=300, d_model=64)
    name = export.suggested_name(state.params, "heatmap", "svg")
    assert name == f"{state.params.slug()}_heatmap.svg"
    assert "harmonic" in name and "n300" in name and "d64" in name


# -------------------------------------------------------------------- PNG
def test_png_has_the_requested_width_and_is_not_blank(matrix_figure):
    canvas, _, _ = matrix_figure
    image = decode_png(export.png_bytes(canvas, width=1000))
    assert image.width() == 1000
    assert image.height() == round(canvas.height() * 1000 / canvas.width())
    assert_not_blank(image)


def test_png_is_rendered_at_its_resolution_not_upscaled(matrix_figure):
    canvas, plot, values = matrix_figure
    scale = 4
    low, big = pixels(export.render_image(canvas, scale=1)), pixels(export.render_image(canvas, scale=scale))
    # text is drawn at the output resolution: a nearest-neighbour upscale of the 1x image differs from it
    upscaled = np.repeat(np.repeat(low, scale, axis=0), scale, axis=1)
    label = canvas.mapFromScene(plot.plot.getAxis("bottom").label.sceneBoundingRect().center())
    box = np.s_[(label.y() - 6) * scale:(label.y() + 6) * scale, (label.x() - 30) * scale:(label.x() + 30) * scale, :3]
    assert np.abs(big[box].astype(int) - upscaled[box].astype(int)).mean() > 3
    # lines keep their on-screen weight: a 1 px hairline is about `scale` px thick, centred on its position
    x = cell_centre(canvas, plot, 0, 3).x() * scale
    column = big[:, x, :3].astype(int)  # B, G, R
    magenta = (column[:, 0] > 150) & (column[:, 2] > 150) & (column[:, 1] < 100)
    assert scale - 1 <= np.count_nonzero(magenta) <= scale + 2, np.count_nonzero(magenta)
    line_y = canvas.mapFromScene(plot.view_box.mapViewToScene(QPointF(3, 2.5))).y() * scale
    assert abs(np.flatnonzero(magenta).mean() - line_y) <= scale
    # and the cells have the colours of the data
    for row, col in [(0, 0), (5, 3), (2, 1)]:
        point = cell_centre(canvas, plot, row, col)
        a = low[point.y(), point.x(), :3].astype(int)
        b = big[point.y() * scale, point.x() * scale, :3].astype(int)
        assert np.abs(a - b).max() <= 2


def test_png_export_leaves_the_widget_as_it_was(matrix_figure):
    canvas, plot, _ = matrix_figure
    before = pixels(canvas.grab().toImage())
    pens = [plot.plot.getAxis("left").pen().widthF(), plot.plot.listDataItems()[0].opts["pen"].widthF()]
    caches = {item: item.cacheMode() for item in canvas.scene().items()}
    export.png_bytes(canvas, scale=3)
    export.svg_bytes(canvas)
    export.pdf_bytes(canvas)
    export.process_events()
    assert pens == [plot.plot.getAxis("left").pen().widthF(), plot.plot.listDataItems()[0].opts["pen"].widthF()]
    assert {item: item.cacheMode() for item in canvas.scene().items()} == caches
    # Export draws without the pixmap caches and the axis titles render
    # theirs afresh: at a fractional position their glyphs may land a
    # fraction of a pixel from where the first rendering put them. Every
    # other pixel is as it was.
    after = pixels(canvas.grab().toImage())
    for item in canvas.scene().items():
        if isinstance(item, QGraphicsTextItem) and item.isVisible():
            box = canvas.mapFromScene(item.mapRectToScene(item.boundingRect())).boundingRect()
            box = box.intersected(canvas.rect())
            after[box.top():box.bottom() + 1, box.left():box.right() + 1] = \
                before[box.top():box.bottom() + 1, box.left():box.right() + 1]
    np.testing.assert_array_equal(after, before)


def test_png_rejects_absurd_sizes(matrix_figure):
    canvas, _, _ = matrix_figure
    for kwargs in ({"width": 0}, {"width": 10**6}, {"scale": 0.0}, {"scale": float("nan")}, {"width": 2.5}):
        with pytest.raises(ExportError, match="width|scale"):
            export.png_bytes(canvas, **kwargs)


def test_a_widget_never_laid_out_still_exports_a_figure(qtbot):
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    plot = canvas.addPlot()
    plot.plot([0, 1, 2, 3], [3, 1, 2, 0], pen=pg.mkPen("k", width=2))
    export.prepare_widget(canvas)  # never shown: gets the default size
    assert canvas.width() == export.DEFAULT_FIGURE_SIZE.width()
    image = decode_png(export.png_bytes(canvas, width=480))
    assert image.width() == 480
    assert_not_blank(image)


# -------------------------------------------------------------------- SVG
def test_svg_keeps_text_and_lines_as_vectors(matrix_figure):
    canvas, _, _ = matrix_figure
    root = ET.fromstring(export.svg_bytes(canvas))
    texts = "".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))  # words may be <tspan>s
    assert "dimension" in texts and "position" in texts
    shapes = [e for tag in ("path", "polyline", "polygon") for e in root.iter(f"{SVG}{tag}")]
    assert len(shapes) > 10
    assert len(list(root.iter(f"{SVG}image"))) >= 1


def test_svg_heatmap_is_embedded_at_data_resolution_with_sharp_cells(matrix_figure):
    canvas, plot, values = matrix_figure
    root = ET.fromstring(export.svg_bytes(canvas))
    rows, cols = values.shape
    found = None
    for image in root.iter(f"{SVG}image"):
        if float(image.get("width")) == cols and float(image.get("height")) == rows:
            found = image
    assert found is not None, "no image with the matrix's size"
    assert "pixelated" in found.get("style", "")
    payload = found.get(f"{XLINK}href").split("base64,")[1]
    embedded = pixels(decode_png(base64.b64decode(payload)))
    ky, kx = embedded.shape[0] // rows, embedded.shape[1] // cols
    assert embedded.shape[:2] == (rows * ky, cols * kx)  # whole-pixel replication only
    cells = embedded[::ky, ::kx]
    blocks = embedded.reshape(rows, ky, cols, kx, 4)
    assert (blocks == cells[:, None, :, None, :]).all(), "cells are not uniform blocks"
    # the colours are the displayed heatmap's, cell by cell
    shown = pixels(plot.image.qimage)
    np.testing.assert_array_equal(cells[..., :3], shown[..., :3])


def test_svg_rendered_back_matches_the_png(matrix_figure):
    canvas, plot, values = matrix_figure
    w, h = canvas.width(), canvas.height()
    from_svg = pixels(svg_to_image(export.svg_bytes(canvas), w, h))
    from_png = pixels(export.render_image(canvas, scale=1))
    for row in range(values.shape[0]):
        for col in range(values.shape[1]):
            point = cell_centre(canvas, plot, row, col)
            a = from_svg[point.y(), point.x(), :3].astype(int)
            b = from_png[point.y(), point.x(), :3].astype(int)
            assert np.abs(a - b).max() <= 3, (row, col, a, b)


def test_svg_clips_the_zoomed_heatmap_to_the_plot_area(matrix_figure):
    canvas, plot, _ = matrix_figure
    plot.view_box.setLimits(xMin=None, xMax=None, yMin=None, yMax=None, minXRange=None, minYRange=None)
    plot.view_box.setRange(xRange=(1, 2), yRange=(1, 3), padding=0)
    export.process_events()
    root = ET.fromstring(export.svg_bytes(canvas))
    clips = {c.get("id"): c for c in root.iter(f"{SVG}clipPath")}
    parents = {child: parent for parent in root.iter() for child in parent}
    image = next(i for i in root.iter(f"{SVG}image") if float(i.get("width")) == 4)
    node, clip_id = image, None
    while node in parents and clip_id is None:
        node = parents[node]
        match = re.match(r"url\(#(.+)\)", node.get("clip-path", ""))
        clip_id = match.group(1) if match else None
    assert clip_id in clips, "the heatmap image is not clipped"
    rect = clips[clip_id].find(f"{SVG}rect")
    vb = plot.view_box
    area = canvas.mapFromScene(vb.mapRectToScene(vb.boundingRect())).boundingRect()
    assert abs(float(rect.get("x")) - area.x()) <= 1 and abs(float(rect.get("width")) - area.width()) <= 1


def test_svg_strokes_do_not_depend_on_non_scaling_stroke_support(matrix_figure):
    """Shapes with cosmetic pens carry no scaling transform, so every viewer draws their width right."""
    canvas, _, _ = matrix_figure
    root = ET.fromstring(export.svg_bytes(canvas))
    parents = {child: parent for parent in root.iter() for child in parent}
    checked = 0
    for element in root.iter():
        if element.get("vector-effect") != "non-scaling-stroke":
            continue
        node = element
        while node in parents:
            node = parents[node]
            match = re.search(r"matrix\(([^)]*)\)", node.get("transform", ""))
            if match:
                a, b, c, d = (float(v) for v in match.group(1).split(",")[:4])
                assert (a, b, c, d) == (1, 0, 0, 1), f"{element.tag} is drawn under a scaling transform"
        checked += 1
    assert checked > 5


def test_svg_of_a_plain_widget_with_no_plot(qtbot, state, compute):
    from posenc_gui.views.parameters import ParametersPanel

    panel = make_panel(qtbot, ParametersPanel, state, compute, size=(420, 320))
    root = ET.fromstring(export.svg_bytes(panel))
    assert any("Scheme" in "".join(t.itertext()) for t in root.iter(f"{SVG}text"))


# -------------------------------------------------------------------- PDF
def test_pdf_is_a_vector_document_with_lossless_images(matrix_figure):
    canvas, _, _ = matrix_figure
    data = export.pdf_bytes(canvas, title="test figure")
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
    assert b"/DCTDecode" not in data, "an image was stored as JPEG (blends heatmap cells)"
    assert b"/Image" in data


# ----------------------------------------------------------------- caption
def _core_panel(qtbot, panel_id, state, compute):
    cls, = (cls for cls in panel_classes() if cls.panel_id == panel_id)
    return make_panel(qtbot, cls, state, compute, size=(900, 600))


#: The headline numbers a whole figure's caption starts from (every panel's export has a caption).
HEADLINES = ("Values from -1 to 1.", "Matrix (dot product) from 104.5 to 256.", "No aliasing: every curve")


@pytest.mark.parametrize("panel_id, words", [
    ("heatmap", ["Showing every", "th position and every", "th dimension", "Aliasing:", "moiré"]),
    ("similarity", ["Matrix: every", "position in both directions", "Profile: every", "offset k"]),
    ("waveforms", ["Dims 0, 1, 2048, 2049: a wavelength under 2 × the curves' sampling step",
                   "drawn as the band of their exact values"]),
])
def test_a_sampled_figure_says_how_in_its_caption_and_a_whole_one_says_its_headline(qtbot, state, compute, panel_id,
                                                                                     words):
    # The window says it on lines above or under the canvas, which are not part of the exported figure.
    panel = _core_panel(qtbot, panel_id, state, compute)
    whole = panel.figure_caption()  # 128 × 512: every position, every dimension, no band
    assert not any(word in whole for word in words)
    assert any(headline in whole for headline in HEADLINES), whole
    state.update(seq_len=1_048_576, d_model=8192)
    settle_panel(qtbot, panel)
    caption = panel.figure_caption()
    for word in words:
        assert word in caption, (word, caption)
    state.update(seq_len=128, d_model=512)
    settle_panel(qtbot, panel)
    assert panel.figure_caption() == whole


def test_the_caption_is_written_under_the_figure_in_every_format(qtbot, state, compute):
    panel = _core_panel(qtbot, "heatmap", state, compute)
    state.update(seq_len=1_048_576, d_model=8192)
    settle_panel(qtbot, panel)
    caption = panel.figure_caption()
    assert caption
    canvas = panel.figure_widget()
    w, h = canvas.width(), canvas.height()
    below = export.caption_height(caption, w)
    assert below > 12

    image = decode_png(export.export_bytes(panel, "png", scale=1))
    caption = panel.figure_caption()  # of the figure as exported (its range from the values it drew)
    below = export.caption_height(caption, w)
    assert (image.width(), image.height()) == (w, h + below)
    band = pixels(image)[h:, :, :3]
    assert (band.min(axis=2) < 100).sum() > 200  # dark text in the band under the figure
    assert_not_blank(image.copy(0, 0, w, h))

    root = ET.fromstring(export.export_bytes(panel, "svg"))
    assert root.get("viewBox").split() == ["0", "0", str(w), str(h + below)]
    texts = "".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert caption.split(" (")[0] in " ".join(texts.split())  # "Showing every …th position and every …th dimension"

    pdf = export.export_bytes(panel, "pdf")
    box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)
    dpi = canvas.logicalDpiX()
    assert box and float(box.group(2)) == pytest.approx((h + below) * 72 / dpi, abs=1)

    state.update(seq_len=128, d_model=512)  # nothing sampled: the headline alone, one line
    settle_panel(qtbot, panel)
    image = decode_png(export.export_bytes(panel, "png", scale=1))
    headline = panel.figure_caption()
    assert "Showing every" not in headline
    assert (image.width(), image.height()) == (w, h + export.caption_height(headline, w)) and \
        export.caption_height(headline, w) < below
