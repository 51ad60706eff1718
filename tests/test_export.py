"""Export: every panel in every format, sharp images, exact data, and failures that never lose a file."""

import base64
import errno
import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QByteArray, QPointF, QRectF
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QGraphicsTextItem

from posenc_gui import export
from posenc_gui.export import ExportError
from posenc_gui.model import SCHEMES, encode, limits, pairwise
from posenc_gui.views import panel_classes
from posenc_gui.views.plotkit import MatrixPlot, new_layout_widget
from helpers_panels import settle_panel, show_panel
from waiting import TIMEOUT_S, finish_pending

PANEL_IDS = [cls.panel_id for cls in panel_classes()]
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


# ----------------------------------------------------------------- helpers
def pixels(image: QImage) -> np.ndarray:
    """(h, w, 4) uint8 array of an image (B, G, R, A on little-endian)."""
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    h, w, stride = image.height(), image.width(), image.bytesPerLine()
    return np.frombuffer(image.constBits(), np.uint8, count=stride * h).reshape(h, stride)[:, : w * 4] \
        .reshape(h, w, 4).copy()


def decode_png(data: bytes) -> QImage:
    image = QImage.fromData(QByteArray(data), "PNG")
    assert not image.isNull(), "not a PNG"
    return image


def assert_not_blank(image: QImage) -> None:
    values = pixels(image)[..., :3].astype(float)
    assert values.std() > 5, "the image is (nearly) a single colour"


def make_panel(qtbot, cls, state, compute, size=(960, 720)):
    if cls.requires - state.params.info.provides:  # a panel for another family: the first scheme it applies to
        state.update(scheme=next(key for key, info in SCHEMES.items() if cls.requires <= info.provides))
        state.flush()
    panel = show_panel(qtbot, cls(state, compute), size, settle=False, on_screen=False)
    settle_panel(qtbot, panel)
    return panel


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


def refused_keeping_the_old_file(panel, target, match: str, **options) -> ExportError:
    """Export ``panel`` over an existing ``target``: refused with an ``ExportError`` matching ``match``, the old
    file's bytes unchanged. Returns the error."""
    old = b"old " + target.name.encode()
    target.write_bytes(old)
    with pytest.raises(ExportError, match=match) as refused:
        export.export_panel(panel, target, **options)
    assert target.read_bytes() == old
    return refused.value


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


# ------------------------------------------------------------------- data
def test_csv_round_trips_exactly():
    values = np.array([[0.1, -2.5e-300, 1e300], [np.pi, -0.0, 123456789.123456789]])
    text = export.csv_bytes({"arrays": {"m": values, "other": np.zeros(3)},
                             "meta": {"rows": "position", "columns": ["a", "b", "c"]}}, name="t")
    path_values = np.loadtxt(text.decode().splitlines(), delimiter=",")
    np.testing.assert_array_equal(path_values, values)
    assert text.decode().startswith("# posenc_gui")
    vector = export.csv_bytes({"arrays": {"v": np.array([1.5, np.nan, 3.0])}}, name="t")
    np.testing.assert_array_equal(np.loadtxt(vector.decode().splitlines(), delimiter=","),
                                  np.array([1.5, np.nan, 3.0]))


def test_csv_refuses_three_dimensional_arrays():
    with pytest.raises(ExportError, match="2"):
        export.csv_bytes({"arrays": {"cube": np.zeros((2, 2, 2))}}, name="t")


def test_npy_is_the_main_array_bit_for_bit():
    import io

    values = np.random.default_rng(1).standard_normal((7, 5))
    data = export.npy_bytes({"arrays": {"main": values, "second": np.ones(2)}}, name="t")
    loaded = np.load(io.BytesIO(data), allow_pickle=False)
    assert loaded.dtype == values.dtype
    np.testing.assert_array_equal(loaded, values)


def test_json_holds_every_array_and_nan_as_null():
    data = export.json_bytes({"arrays": {"a": np.array([[1.0, np.nan]]), "b": np.arange(3)},
                              "meta": {"metric": "cosine", "params": {"scheme": "sine"}}},
                             name="t", panel_id="x")
    doc = json.loads(data)
    assert doc["arrays"]["a"]["data"] == [[1.0, None]] and doc["arrays"]["b"]["data"] == [0, 1, 2]
    assert doc["meta"]["metric"] == "cosine" and doc["params"] == {"scheme": "sine"} and doc["panel"] == "x"


def test_json_of_the_permutation_demo_is_its_dict():
    record = {"sentence_a": "dog bites man", "difference": 0.25, "nested": {"x": [1, 2]}}
    doc = json.loads(export.json_bytes({"arrays": {"z": np.eye(2)}, "meta": {"permutation": record}}, name="t"))
    assert doc == record


def test_text_formats_refuse_huge_data(monkeypatch, tmp_path):
    monkeypatch.setattr(export.data, "MAX_TEXT_VALUES", 10)
    for writer in (export.csv_bytes, export.json_bytes):
        with pytest.raises(ExportError, match="npy"):
            writer({"arrays": {"m": np.zeros((4, 4))}}, name="big")


# ------------------------------------------------------- atomic writing
def test_atomic_write_replaces_and_keeps_the_file_mode(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    export.atomic_write(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temp file left


def test_full_disk_leaves_the_old_file_intact(monkeypatch, tmp_path):
    target = tmp_path / "figure.png"
    target.write_bytes(b"precious old figure")

    def full(stream, data):
        stream.write(data[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export.files, "_write_all", full)
    with pytest.raises(ExportError, match="disk is full") as info:
        export.atomic_write(target, b"x" * 1000)
    assert "\n" not in str(info.value)
    assert target.read_bytes() == b"precious old figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]


def test_unwritable_folder_gives_a_clear_message(monkeypatch, tmp_path):
    target = tmp_path / "figure.svg"
    target.write_bytes(b"old")

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(export.files.tempfile, "mkstemp", denied)
    with pytest.raises(ExportError, match="permission denied"):
        export.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    with pytest.raises(ExportError, match="does not exist"):
        export.atomic_write(tmp_path / "missing" / "f.png", b"new")
    with pytest.raises(ExportError, match="is a folder"):
        export.atomic_write(tmp_path, b"new")


def test_failed_rename_removes_the_temp_file(monkeypatch, tmp_path):
    target = tmp_path / "data.npy"
    target.write_bytes(b"old")

    def cross_device(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(export.files.os, "replace", cross_device)
    with pytest.raises(ExportError, match="unchanged"):
        export.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npy"]


# ----------------------------------------------------- every panel × format
def check_image(fmt: str, data: bytes, width: int) -> None:
    if fmt == "png":
        image = decode_png(data)
        assert image.width() == width
        assert_not_blank(image)
    elif fmt == "svg":
        root = ET.fromstring(data)
        drawn = [e for tag in ("path", "polyline", "polygon", "text", "image", "rect") for e in root.iter(f"{SVG}{tag}")]
        assert len(drawn) > 5
        assert any(True for _ in root.iter(f"{SVG}text")), "no text in the SVG"
    else:
        assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
        assert b"/DCTDecode" not in data


def check_data(fmt: str, path, expected: dict) -> None:
    arrays = expected.get("arrays") or {}
    if not arrays:
        assert fmt == "json"
        json.loads(path.read_text())
        return
    main = np.asarray(next(iter(arrays.values())))
    if fmt == "npy":
        loaded = np.load(path, allow_pickle=False)
        assert loaded.dtype == main.dtype and loaded.shape == main.shape
        np.testing.assert_array_equal(loaded, main)
    elif fmt == "csv":
        loaded = np.loadtxt(path, delimiter=",", ndmin=2)
        np.testing.assert_array_equal(loaded, main.reshape(main.shape[0], -1) if main.ndim else main.reshape(1, 1))
    else:
        doc = json.loads(path.read_text())
        assert isinstance(doc, dict) and doc


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_every_panel_exports_every_format(qtbot, state, compute, tmp_path, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    base = panel_base()
    assert cls.export_data is not base.export_data or cls.data_export is not base.data_export, \
        f"{panel_id} has no export_data"
    panel = make_panel(qtbot, cls, state, compute)
    expected = panel.export_data()
    if panel.unavailable_message() is not None:  # needs a file opened (the Decoder's model): refused with its notice
        for fmt in export.FORMATS:
            with pytest.raises(ExportError, match="Open a"):
                export.export_panel(panel, tmp_path / f"{panel_id}.{fmt}")
        assert not list(tmp_path.iterdir())
        return
    for fmt in export.FORMATS:
        path = tmp_path / f"{panel_id}.{fmt}"
        if fmt in ("csv", "npy") and not expected.get("arrays"):
            with pytest.raises(ExportError, match="json"):
                export.export_panel(panel, path)
            assert not path.exists()
            continue
        written = export.export_panel(panel, path, width=700 if fmt == "png" else None)
        assert written == path and path.stat().st_size > 0, (panel_id, fmt)
        if fmt in export.IMAGE_FORMATS:
            check_image(fmt, path.read_bytes(), 700)
        else:
            check_data(fmt, path, expected)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == sorted(
        f".{f}" for f in export.FORMATS if expected.get("arrays") or f not in ("csv", "npy"))


def panel_base():
    from posenc_gui.views.base import Panel

    return Panel


def test_heatmap_npy_is_the_full_encoding_even_when_the_view_is_sampled(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(scheme="harmonic", seq_len=3000, d_model=1024)
    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(700, 500))
    shown = panel.data
    assert shown.positions.count < 3000 or shown.dims.count < 1024, "the view is not sampled; test is moot"
    export.export_panel(panel, tmp_path / "pe.npy")
    full = encode("harmonic", np.arange(3000.0), 1024, **state.params.scheme_kwargs())
    loaded = np.load(tmp_path / "pe.npy")
    assert loaded.shape == (3000, 1024)
    np.testing.assert_array_equal(loaded, full)


def test_heatmap_past_the_limit_refuses_npy_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(seq_len=limits.MAX_SEQ_LEN, d_model=64)
    assert limits.MAX_SEQ_LEN * 64 > limits.MAX_ENCODE_ELEMENTS
    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(700, 500))
    refused_keeping_the_old_file(panel, tmp_path / "pe.npy", "limit")
    written = export.export_panel(panel, tmp_path / "pe.json")  # JSON says which samples it holds
    doc = json.loads(written.read_text())
    assert doc["meta"]["sampled"] is True and "positions" in doc["arrays"]


def test_similarity_export_matches_the_model(qtbot, state, compute, tmp_path):
    from posenc_gui.views.similarity import SimilarityPanel

    state.update(seq_len=40, d_model=16)
    panel = make_panel(qtbot, SimilarityPanel, state, compute)
    panel.set_options(metric="cosine", reference=7)
    settle_panel(qtbot, panel)
    export.export_panel(panel, tmp_path / "s.npy")
    pe = encode("sinusoidal", np.arange(40.0), 16, base=10000.0, layout="interleaved")
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), pairwise(pe, pe, "cosine"))


def test_panel_refusal_is_an_export_error_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.similarity import SimilarityPanel

    state.update(seq_len=5000, d_model=8)
    assert 5000 * 5000 > limits.MAX_SIMILARITY_ELEMENTS
    panel = make_panel(qtbot, SimilarityPanel, state, compute, size=(700, 500))
    error = refused_keeping_the_old_file(panel, tmp_path / "sim.csv", "Similarity")
    assert "\n" not in str(error)


def test_unknown_extension_and_bad_width_keep_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(600, 400))
    refused_keeping_the_old_file(panel, tmp_path / "fig.tiff", "Unknown export format")
    refused_keeping_the_old_file(panel, tmp_path / "fig.png", "width", width=3)


def test_a_png_past_the_memory_budget_is_refused_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(600, 400))
    figure = panel.figure_widget()
    height = round(figure.height() * 16000 / figure.width())
    assert height <= export.MAX_PNG_SIDE and 16000 * height > export.MAX_PNG_PIXELS
    # each side is within 16,384 pixels; the image as a whole (over 100 million pixels, 400 MiB) is not
    refused_keeping_the_old_file(panel, tmp_path / "fig.png", f"past the limit of {export.MAX_PNG_PIXELS:,} .*memory",
                                 width=16000)


# ------------------------------------------------------------ the window
@pytest.fixture
def window(make_window, monkeypatch):
    from posenc_gui.views import export_ui

    errors = []
    monkeypatch.setattr(export_ui, "show_error", lambda parent, message: errors.append(message))
    win = make_window(restore=False)
    win.errors = errors
    return win


def test_window_has_export_actions_and_a_button_on_every_dock(window):
    texts = [a.text().replace("&", "") for a in window.file_menu.actions()]
    assert "Export…" in texts and "Export window as PNG…" in texts and "Copy figure to clipboard" in texts
    for panel_id in window.docks:  # right-click menu on every dock, built or not
        names = {a.objectName() for a in window.docks[panel_id].actions()}
        assert f"export-{panel_id}-png" in names
    assert set(window.export_buttons) == set(window.panels.built())
    for panel_id in window.panels:  # panels are built lazily; each gets its button when built
        window.panels[panel_id]
    assert set(window.export_buttons) == set(window.panels)
    for panel_id, button in window.export_buttons.items():
        names = {a.objectName() for a in button.menu().actions()}
        assert {f"export-{panel_id}-{fmt}" for fmt in export.FORMATS} <= names
        assert f"copy-{panel_id}" in names
        assert button.parent() is window.panels[panel_id]


def test_dock_export_proposes_a_descriptive_name_in_the_last_folder(window, tmp_path, monkeypatch):
    from posenc_gui.views import export_ui

    asked = []
    folder = tmp_path / "figures"
    folder.mkdir()

    def answer(parent, title, proposed, fmt):
        asked.append(proposed)
        return str(folder / f"answer{len(asked)}.{fmt}")

    monkeypatch.setattr(export_ui, "ask_save_path", answer)
    window.state.update(scheme="harmonic", seq_len=96, d_model=32)
    window.state.flush()
    action = next(a for a in window.export_buttons["heatmap"].menu().actions()
                  if a.objectName() == "export-heatmap-png")
    action.trigger()
    assert (folder / "answer1.png").exists()
    assert_not_blank(decode_png((folder / "answer1.png").read_bytes()))
    export_ui.export_panel_interactive(window, "waveforms", "csv")
    assert asked[1] == str(folder / "harmonic_n96_d32_waveforms.csv")  # remembered folder + descriptive name
    data = np.loadtxt(folder / "answer2.csv", delimiter=",")
    np.testing.assert_array_equal(data, window.panels["waveforms"].export_data()["arrays"]["waveforms"])
    assert window.errors == []


def test_window_export_error_is_shown_and_the_old_file_kept(window, tmp_path, monkeypatch):
    from posenc_gui.views import export_ui

    target = tmp_path / "fig.svg"
    target.write_bytes(b"old svg")
    monkeypatch.setattr(export.files, "_write_all", lambda stream, data: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")))
    assert export_ui.export_panel_to(window, "heatmap", str(target)) is None
    assert len(window.errors) == 1 and "disk is full" in window.errors[0]
    assert target.read_bytes() == b"old svg"


def test_export_dialog_writes_the_chosen_panel_format_and_width(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    dialog = ExportDialog(window, "similarity")
    qtbot.addWidget(dialog)
    assert dialog.path_edit.text().endswith(f"{window.state.params.slug()}_similarity.png")
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("svg"))
    assert dialog.path_edit.text().endswith("_similarity.svg")
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("png"))
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(900)
    assert dialog.size_label.text().startswith("900 ×")
    dialog.path_edit.setText(str(tmp_path / "dialog.png"))
    dialog.export_button.click()
    image = decode_png((tmp_path / "dialog.png").read_bytes())
    assert image.width() == 900
    assert dialog.result() == dialog.DialogCode.Accepted
    assert window.settings.value("export/last_folder") == str(tmp_path)


def test_export_dialog_stays_open_on_failure(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    dialog.path_edit.setText(str(tmp_path / "no" / "such" / "folder" / "x.png"))
    dialog.export_button.click()
    assert dialog.written is None and dialog.result() != dialog.DialogCode.Accepted
    assert window.errors and "does not exist" in window.errors[-1]


def test_export_dialog_refuses_a_png_past_the_memory_budget_where_the_size_is_chosen(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog, export_panel_to

    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    target = tmp_path / "big.png"
    target.write_bytes(b"old png")
    dialog.path_edit.setText(str(target))
    figure = window.panels["heatmap"].exported().figure_widget()
    assert figure.height() <= figure.width()  # so 16,000 wide stays within 16,384 a side
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(16000)
    assert f"past the limit of {export.MAX_PNG_PIXELS:,}" in dialog.size_label.text()
    assert not dialog.export_button.isEnabled()
    dialog.export_button.click()
    assert dialog.written is None and target.read_bytes() == b"old png"
    # the same width given to the export itself (as the dock's button or a script would): refused, file kept
    assert export_panel_to(window, "heatmap", str(target), width=16000) is None
    assert f"past the limit of {export.MAX_PNG_PIXELS:,}" in window.errors[-1]
    assert target.read_bytes() == b"old png"
    dialog.width_spin.setValue(1200)  # back within the budget: the size is announced and the button enabled
    assert dialog.size_label.text().startswith("1,200 × ") and dialog.export_button.isEnabled()


def test_whole_window_png_and_clipboard(window, tmp_path):
    from posenc_gui.views import export_ui

    written = export_ui.export_window_png(window, str(tmp_path / "window.png"), scale=1.5)
    image = decode_png(written.read_bytes())
    assert image.width() == round(window.width() * 1.5)
    assert_not_blank(image)
    assert export_ui.copy_panel_figure(window, "similarity")
    copied = QGuiApplication.clipboard().image()
    assert not copied.isNull() and copied.width() >= window.panels["similarity"].figure_widget().width()


def test_a_panel_in_a_hidden_tab_is_raised_and_exported(window, tmp_path):
    from posenc_gui.views import export_ui

    # (Parameters and Walkthrough make their figures for the export, outside their docks.)
    in_dock = [pid for pid, panel in window.panels.items()
               if panel.isAncestorOf(panel.figure_widget()) and panel.unavailable_message() is None]
    hidden = [pid for pid in in_dock if not window.docks[pid].isVisible() or
              not window.panels[pid].figure_widget().isVisible()]
    if not hidden:  # every dock visible: tab one behind another to make the case
        window.tabifyDockWidget(window.docks["heatmap"], window.docks["similarity"])
        window.docks["heatmap"].raise_()
        export.process_events()
        hidden = ["similarity"]
    panel_id = hidden[0]
    written = export_ui.export_panel_to(window, panel_id, str(tmp_path / "hidden.png"))
    assert written is not None, window.errors
    assert_not_blank(decode_png(written.read_bytes()))
    assert window.panels[panel_id].figure_widget().isVisible()


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


def test_export_dialog_announces_the_size_with_the_caption(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    window.state.update(seq_len=1_048_576, d_model=8192)
    window.state.flush()
    assert window.compute.wait_idle(TIMEOUT_S)
    finish_pending(qtbot, window.panels["heatmap"])  # the heatmap's re-sample after the new extent
    assert window.compute.wait_idle(TIMEOUT_S)
    assert window.panels["heatmap"].figure_caption()
    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(900)
    announced = re.match(r"900 × ([\d,]+) pixels \(figure on screen: \d+ × \d+, and a caption under it\)",
                         dialog.size_label.text())
    assert announced, dialog.size_label.text()
    dialog.path_edit.setText(str(tmp_path / "sampled.png"))
    dialog.export_button.click()
    image = decode_png((tmp_path / "sampled.png").read_bytes())
    assert (image.width(), image.height()) == (900, int(announced.group(1).replace(",", "")))
