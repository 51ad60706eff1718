"""SVG text that renders alike in every viewer: a real font family and every word at Qt's own position.

:class:`~PySide6.QtSvg.QSvgGenerator` writes each text item Qt laid out as one ``<text>`` with a single
``x`` and the family name Qt was asked for ("Sans Serif", an alias only Qt knows). Another renderer
(librsvg, a browser, Inkscape) then picks a font of its own, lays the run out with that font's widths,
and a run drawn wider than Qt measured runs into the next one, which Qt placed after it: a subscript
written as its own run (θ then ᵢ) overlaps its base. :func:`place_text_runs` names the family Qt actually
used and splits each run into words, each a ``<tspan>`` at the x Qt's layout gives it, so a different
font's width can only shift letters inside one word.

The ``font-family`` attribute holds that one family: Qt's own SVG renderer (6.11) reads a family list,
quoted or not, in an attribute or a style sheet, as no family and draws its default font. Fallbacks for a
viewer without the family are in a style sheet rule inside ``@media all``, which Qt ignores and browsers
apply (librsvg ignores it too and lets fontconfig substitute a sans font for a family it lacks).
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QImage

#: Families after the one Qt used, for a viewer that lacks it: DejaVu Sans (Qt's usual sans on Linux) and
#: the sans fonts of Windows and macOS, then the generic family every renderer resolves.
FALLBACK_FAMILIES = ("DejaVu Sans", "Arial", "Helvetica", "sans-serif")
#: Dots per inch of the measuring device: an SVG user unit is a CSS pixel, 1/96 inch.
CSS_DPI = 96

_TEXT_RE = re.compile(r"<text\b([^>]*)>([^<]*)</text>")
_FAMILY_ATTR_RE = re.compile(r'font-family="([^"]*)"')
_WORD_RE = re.compile(r"\s*\S+\s*|\s+")


def _attribute(attrs: str, name: str) -> str | None:
    match = re.search(r'(?<![\w-])' + re.escape(name) + r'="([^"]*)"', attrs)
    return match.group(1) if match else None


@lru_cache(maxsize=64)
def resolved_family(requested: str) -> str:
    """The family Qt draws with when asked for ``requested`` (an alias such as "Sans Serif" becomes a real one)."""
    return QFontInfo(QFont(requested)).family() or requested


def family_list(family: str) -> str:
    """A CSS ``font-family`` value: ``family``, then :data:`FALLBACK_FAMILIES`."""
    names = [family] + [name for name in FALLBACK_FAMILIES if name != family]
    return ", ".join(name if name == "sans-serif" else "'" + name.replace("'", "\\'") + "'" for name in names)


def _xml_attribute(value: str) -> str:
    return html.escape(value, quote=False).replace('"', "&quot;")


def _fallback_style(families: list[str]) -> str:
    """A ``<style>`` giving each family its fallbacks, in ``@media all`` so that Qt's renderer skips it."""
    selectors = [family.replace('"', '\\"') for family in families]
    rules = " ".join(f'[font-family="{selector}"] {{ font-family: {family_list(family)} }}'
                     for selector, family in zip(selectors, families))
    return f"<style>@media all {{ {html.escape(rules, quote=False)} }}</style>"


@lru_cache(maxsize=64)
def _metrics(family: str, pixel_size: float, weight: int, italic: bool) -> QFontMetricsF:
    font = QFont(family)
    font.setPointSizeF(pixel_size * 72.0 / CSS_DPI)
    font.setWeight(QFont.Weight(weight))
    font.setItalic(italic)
    device = QImage(1, 1, QImage.Format.Format_ARGB32)
    device.setDotsPerMeterX(round(CSS_DPI / 0.0254))
    device.setDotsPerMeterY(round(CSS_DPI / 0.0254))
    return QFontMetricsF(font, device)


def run_advance(text: str, family: str, pixel_size: float, weight: int = 400, italic: bool = False) -> float:
    """How far Qt advances the pen over ``text`` in that font (SVG user units)."""
    return _metrics(family, pixel_size, weight, italic).horizontalAdvance(text)


_CSS_WEIGHTS = {"normal": 400, "bold": 700}


def _number(value: str | None) -> float | None:
    match = re.match(r"\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)", value or "")
    return float(match.group(1)) if match else None


def _font_of(attrs: str) -> tuple[str, float, int, bool] | None:
    """Family, pixel size, weight (CSS 100–900, the nearest of QFont.Weight) and italic; None if unreadable."""
    family = html.unescape(_attribute(attrs, "font-family") or "Sans Serif")
    size = _number(_attribute(attrs, "font-size"))
    weight_text = _attribute(attrs, "font-weight") or "normal"
    weight = _CSS_WEIGHTS.get(weight_text, _number(weight_text))
    if size is None or not 0 < size < 1e4 or weight is None:
        return None
    weight = min((int(w) for w in QFont.Weight), key=lambda w: abs(w - weight))
    italic = (_attribute(attrs, "font-style") or "normal") != "normal"
    return family, size, weight, italic


def _split_run(match: re.Match) -> str:
    attrs, escaped = match.group(1), match.group(2)
    text = html.unescape(escaped)
    x = _attribute(attrs, "x")
    words = _WORD_RE.findall(text)
    font = _font_of(attrs)
    start = _number(x)
    if start is None or font is None or len(words) < 2:
        return match.group(0)
    family, size, weight, italic = font
    family = resolved_family(family)
    parts, offset = [html.escape(words[0], quote=False)], len(words[0])
    for word in words[1:]:
        position = start + run_advance(text[:offset], family, size, weight, italic)
        parts.append(f'<tspan x="{position:.3f}">{html.escape(word, quote=False)}</tspan>')
        offset += len(word)
    return f"<text{attrs}>{''.join(parts)}</text>"


def place_text_runs(svg: str) -> str:
    """``svg`` (from QSvgGenerator) with real font families and each text run's words placed as Qt placed them.

    Every ``font-family`` becomes the family Qt drew with (:func:`resolved_family`), with its fallbacks
    (:func:`family_list`) in a style sheet; a ``<text>`` of several words keeps its first word as its own
    text and puts each further word in a ``<tspan>`` whose ``x`` is the run's ``x`` plus Qt's advance over
    the words before it (same font, size, weight and style).
    """
    svg = _TEXT_RE.sub(_split_run, svg)
    families: list[str] = []

    def real_family(match: re.Match) -> str:
        family = resolved_family(html.unescape(match.group(1)))
        if family not in families:
            families.append(family)
        return f'font-family="{_xml_attribute(family)}"'

    svg = _FAMILY_ATTR_RE.sub(real_family, svg)
    if not families:
        return svg
    return re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + "\n" + _fallback_style(families), svg, count=1)
