"""SVG text: a real font family, every word at Qt's position, and the same picture in Qt and in librsvg."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QFontDatabase, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from posenc_gui import export
from posenc_gui.export.svg_text import place_text_runs, run_advance
from posenc_gui.views import panel_classes
from waiting import TIMEOUT_S

SVG = "{http://www.w3.org/2000/svg}"
#: Mean absolute difference (grey levels of 255) allowed between a rendering of the SVG and the PNG export
#: of the same figure at the same size. Both draw the same vectors; they differ only in antialiasing of
#: edges: hinted raster glyphs against outlines, lines a fraction of a pixel apart. Edges are a few per cent
#: of the figure's pixels and differ by up to ~100 levels there, so a faithful rendering stays near 1–2
#: (Qt 1.3, librsvg 1.7 measured); a run drawn a word's width away, or in a font of other widths, doubles
#: that in the caption alone.
MAX_MEAN_DIFFERENCE = 3.0


def laid_out_panel(qtbot, state, compute, panel_id: str, scheme: str):
    """Panel ``panel_id`` for ``scheme``, laid out at 960 × 640 and computed."""
    state.update(scheme=scheme)
    state.flush()
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = cls(state, compute)
    qtbot.addWidget(panel)
    panel.resize(960, 640)
    panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    panel.show()
    assert compute.wait_idle(TIMEOUT_S)
    qtbot.waitUntil(lambda: panel.unavailable_message() is None, timeout=TIMEOUT_S * 1000)
    return panel


#: Figures whose labels Qt draws in several runs: the RoPE frequencies' y label "wavelength 2π/θᵢ
#: (positions)" (split by script) and the relative panel's title "max<sub>p</sub> − min<sub>p</sub> of …".
SUBSCRIPTED = [("frequencies", "rope"), ("relative", "sinusoidal")]


@pytest.fixture
def frequencies_panel(qtbot, state, compute):
    return laid_out_panel(qtbot, state, compute, "frequencies", "rope")


def runs_of(text: ET.Element) -> list[tuple[float, str]]:
    """The positioned glyph runs of one ``<text>``: its own text at its x, then each ``<tspan>`` at its x."""
    runs = [(float(text.get("x")), text.text or "")]
    for span in text.iter(f"{SVG}tspan"):
        assert span.get("x") is not None, "a word without its own position"
        runs.append((float(span.get("x")), span.text or ""))
    return runs


def labels_of(root: ET.Element) -> list[list[ET.Element]]:
    """Each ``<g>``'s texts, by x."""
    groups = []
    for group in root.iter(f"{SVG}g"):
        texts = [t for t in group if t.tag == f"{SVG}text"]
        groups.append(sorted(texts, key=lambda t: float(t.get("x"))))
    return groups


def font_of(text: ET.Element) -> tuple[str, float, int, bool]:
    return (text.get("font-family").split(",")[0].strip(" '\""), float(text.get("font-size")),
            int(text.get("font-weight")), text.get("font-style") != "normal")


def test_svg_text_names_a_font_family_the_machine_has(frequencies_panel):
    root = ET.fromstring(export.export_bytes(frequencies_panel, "svg"))
    families = set(QFontDatabase.families())
    named = [e.get("font-family") for e in root.iter() if e.get("font-family")]
    assert len(named) > 20
    for value in named:
        # One family (Qt's SVG renderer reads a list as none), one this machine has: not Qt's alias
        # "Sans Serif", which no other renderer knows.
        assert value in families, value
    # Fallbacks for a viewer without it, a generic family last, where Qt does not read them (@media).
    style = "".join("".join(e.itertext()) for e in root.iter(f"{SVG}style"))
    for value in set(named):
        rule = re.search(r'\[font-family="' + re.escape(value) + r'"\] \{ font-family: ([^}]*)\}', style)
        assert rule and rule.group(1).strip().endswith("sans-serif"), style
    assert style.startswith("@media all {")


def test_every_word_of_a_label_has_its_own_position(frequencies_panel):
    root = ET.fromstring(export.export_bytes(frequencies_panel, "svg"))
    label = next(t for texts in labels_of(root) for t in texts if (t.text or "").startswith("wavelength"))
    texts = [t for t in label_line(root, label)]
    runs = [run for text in texts for run in runs_of(text)]
    assert "".join(s for _, s in runs).strip() == "wavelength 2π/θᵢ (positions)"
    # Positioned one word at a time: a renderer whose font is wider can only shift letters within a word.
    assert all(len(s.split()) <= 1 for _, s in runs), runs
    assert len([s for _, s in runs if s.strip()]) >= 4


def label_line(root: ET.Element, first: ET.Element) -> list[ET.Element]:
    """``first`` and the texts of its group on its baseline, by x."""
    group = next(texts for texts in labels_of(root) if first in texts)
    return [t for t in group if t.get("y") == first.get("y")]


@pytest.mark.parametrize(("panel_id", "scheme"), SUBSCRIPTED)
def test_words_sit_where_qt_laid_them_out_and_never_overlap(qtbot, state, compute, panel_id, scheme):
    panel = laid_out_panel(qtbot, state, compute, panel_id, scheme)
    root = ET.fromstring(export.export_bytes(panel, "svg"))
    checked = 0
    for texts in labels_of(root):
        for text, following in zip(texts, texts[1:]):
            family, size, weight, italic = font_of(text)
            x, last = runs_of(text)[-1]
            end = x + run_advance(last, family, size, weight, italic)
            gap, rise = float(following.get("x")) - end, float(following.get("y")) - float(text.get("y"))
            if gap > size or abs(rise) > size / 2:
                continue  # another label (tick labels, a caption's next line): an em or more away
            # Qt split one string by script (θ, π) or format (a subscript) into runs: the words written
            # here end where Qt's own layout began the next run, so the positions agree with Qt's.
            assert end == pytest.approx(float(following.get("x")), abs=0.5), (last, "".join(following.itertext()))
            checked += 1
        for text in texts:  # within a run, each word ends before the next begins
            family, size, weight, italic = font_of(text)
            for (x0, word), (x1, _) in zip(runs_of(text), runs_of(text)[1:]):
                assert x0 + run_advance(word.rstrip(), family, size, weight, italic) <= x1 + 1e-6, word
    assert checked >= 4  # frequencies: the header (θ) and the y label (π/θ, ᵢ); relative: two subscripts, each 2


def qt_rendering(svg: bytes, width: int, height: int) -> np.ndarray:
    renderer = QSvgRenderer(QByteArray(svg))
    assert renderer.isValid()
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, width, height))
    painter.end()
    return grey(image)


def grey(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, :image.width()].astype(float)


def librsvg_rendering(svg: bytes, width: int, height: int, tmp_path) -> np.ndarray | None:
    """The SVG rendered by librsvg (``rsvg-convert``) or cairosvg, whichever is installed; None for neither."""
    png = tmp_path / "librsvg.png"
    if shutil.which("rsvg-convert"):
        source = tmp_path / "figure.svg"
        source.write_bytes(svg)
        subprocess.run(["rsvg-convert", "-w", str(width), "-h", str(height), "-b", "white", str(source),
                        "-o", str(png)], check=True, timeout=120)
    else:
        try:
            import cairosvg
        except ImportError:
            return None
        cairosvg.svg2png(bytestring=svg, write_to=str(png), output_width=width, output_height=height,
                         background_color="white")
    image = QImage(str(png))
    assert not image.isNull()
    return grey(image)


@pytest.mark.parametrize(("panel_id", "scheme"), SUBSCRIPTED)
def test_the_svg_renders_like_the_png_in_qt_and_in_librsvg(qtbot, state, compute, tmp_path, panel_id, scheme):
    panel = laid_out_panel(qtbot, state, compute, panel_id, scheme)
    svg = export.export_bytes(panel, "svg")
    png = QImage.fromData(export.export_bytes(panel, "png", scale=1))
    reference = grey(png)
    width, height = png.width(), png.height()
    root = ET.fromstring(svg)
    assert root.get("viewBox").split() == ["0", "0", str(width), str(height)]
    renderings = {"Qt": qt_rendering(svg, width, height)}
    other = librsvg_rendering(svg, width, height, tmp_path)
    if other is not None:  # librsvg is not a dependency: when absent, Qt's rendering is still checked
        renderings["librsvg"] = other
    for name, rendering in renderings.items():
        assert rendering.shape == reference.shape, name
        difference = np.abs(rendering - reference).mean()
        assert difference < MAX_MEAN_DIFFERENCE, (name, difference)
        assert (rendering < 100).sum() > 2000, name  # text and lines drawn, not an empty page


def test_runs_are_measured_in_their_own_weight_and_odd_attributes_leave_them_whole(qapp):
    def second_word_x(weight: str) -> float:
        svg = place_text_runs(f'<svg xmlns="{SVG[1:-1]}"><text x="-2.5" y="9" font-family="Sans Serif" '
                              f'font-size="12" font-weight="{weight}">mmmm &amp; w</text></svg>')
        text = ET.fromstring(svg).find(f"{SVG}text")
        assert "".join(text.itertext()) == "mmmm & w"
        return float(text.find(f"{SVG}tspan").get("x"))

    assert second_word_x("700") > second_word_x("400") > -2.5  # bold is wider: its words start later
    assert second_word_x("bold") == second_word_x("700") and second_word_x("450") == second_word_x("400")
    for odd in ('x="left"', 'x="1" font-size="large"', 'x="1" font-size="0"', 'x="1" font-weight="heavy"'):
        svg = place_text_runs(f'<svg xmlns="{SVG[1:-1]}"><text {odd} y="9">two words</text></svg>')
        text = ET.fromstring(svg).find(f"{SVG}text")
        assert text.text == "two words" and text.find(f"{SVG}tspan") is None, odd
