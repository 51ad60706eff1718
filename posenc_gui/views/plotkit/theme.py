"""Themes (light, dark, print) and the colour-map choice of each kind of matrix, switched at run time.

The panels build their figures from the light theme's colours (the
constants of :mod:`.colours`); a theme is every one of those colours given
another value, role by role (:meth:`Theme.roles`). Switching theme
therefore restyles what is already built by translating colours:
:func:`restyle` walks a widget tree and changes each canvas's background,
every pen, text colour, title and style sheet from the theme it was styled
in to the current one, and records the theme on each widget, so that a
second pass does nothing and a panel built later (all start in light
colours) is translated once. What the kit draws or sets later asks
:func:`current` (axes, titles, legends, matrix pens) or :func:`themed`
(colours written into HTML and style sheets by the panels).

The colour maps follow the kind of quantity (see
:func:`.colours.colour_scale`): a signed quantity gets the chosen diverging
map, a non-negative one the chosen sequential map; every choice offered is
colour-blind safe. No panel uses a cyclic map.

:data:`signals` emits ``changed`` after :func:`set_theme` or
:func:`set_colormap` changed something; the window restyles its panels
then (the export of a figure restyles the figure itself).
"""

from __future__ import annotations

import functools
import re
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Mapping

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette

#: The names of the themes, in the order menus offer them.
THEME_NAMES = ("light", "dark", "print")
#: The kinds of matrix colour maps, with the maps offered for each (the first is the default).
COLORMAP_CHOICES: Mapping[str, tuple[str, ...]] = {
    # ColorBrewer RdBu and PuOr, and CET's colour-blind-safe blue–grey–yellow (Kovesi's CBD1).
    "diverging": ("RdBu", "PuOr", "CET-CBD1"),
    # Perceptually uniform and colour-blind safe (cividis is tuned for colour-vision deficiency).
    "sequential": ("viridis", "cividis", "magma"),
}
#: Words for the kinds, in menus.
COLORMAP_KIND_LABELS = {"diverging": "Signed quantities (diverging)", "sequential": "Non-negative quantities (sequential)"}


@dataclass(frozen=True)
class Theme:
    """The colours of one theme, each with a role shared by every theme.

    Attributes
    ----------
    name : str
        One of :data:`THEME_NAMES`.
    background, foreground : str
        The canvas fill, and text, axes and outlines on it.
    greys : tuple of str
        Secondary text and reference lines, by role (the light theme's
        ``#444444, #555555, #5a6470, #666666, #888888``, in that order).
    palette : tuple of str
        The eight series colours (Okabe–Ito; the first six are the same in
        every theme, the black and yellow ones change with the background).
    surfaces : tuple of str
        Tinted backgrounds of text boxes and table cells, by role (see
        :data:`LIGHT`): each is readable with :attr:`foreground` on it.
    messages : tuple of str
        The message bars' background, border and text of error, warning and
        info, in that order (nine colours).
    grid_alpha : float
        Opacity of grid lines.
    line_scale : float
        Factor on the width of every line of an exported figure (the print
        theme's are heavier; the window draws its usual widths).
    dark : bool
        Whether the window's own widgets (menus, docks, controls) go dark too.
    """

    name: str
    background: str
    foreground: str
    greys: tuple[str, ...]
    palette: tuple[str, ...]
    surfaces: tuple[str, ...]
    messages: tuple[str, ...]
    grid_alpha: float = 0.25
    line_scale: float = 1.0
    dark: bool = False

    def roles(self) -> tuple[str, ...]:
        """Every colour of the theme in role order: the same position holds the same role in every theme."""
        return (self.background, self.foreground, *self.greys, *self.palette, *self.surfaces, *self.messages)

    def message_colours(self) -> dict[str, tuple[str, str, str]]:
        """``{level: (background, border, text)}`` of the message bars."""
        m = self.messages
        return {"error": m[0:3], "warning": m[3:6], "info": m[6:9]}


#: The colours every panel is built with (white figures for slides and papers).
LIGHT = Theme(
    name="light",
    background="#ffffff",
    foreground="#222222",
    greys=("#444444", "#555555", "#5a6470", "#666666", "#888888"),
    palette=("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442"),
    # walkthrough's measured box and its border; scorecard pass, fail, pending, current, not applicable
    surfaces=("#f4f6f8", "#d5dbe1", "#dff2e3", "#fbe0e0", "#eceff2", "#fff3c4", "#f4f4f4"),
    messages=("#fde8e8", "#e0a0a0", "#8a1c1c", "#fff6dd", "#e5cf8a", "#6b4e00", "#eef3fb", "#b9c9e4", "#23395d"),
)
#: Light text on a dark grey canvas; every text colour keeps a contrast of at least 4.5 : 1 with its background.
DARK = Theme(
    name="dark",
    background="#1e1f22",
    foreground="#e8e8e8",
    greys=("#c4c4c4", "#b4b4b4", "#aab4be", "#a8a8a8", "#8c8c8c"),
    # Okabe–Ito, its blue and vermillion lightened: thin curves keep 4.5 : 1 on the dark canvas (#0072B2 had 3.2)
    palette=("#3D9BE0", "#E69F00", "#009E73", "#CC79A7", "#E8743B", "#56B4E9", "#f2f2f2", "#F0E442"),
    surfaces=("#2b3036", "#4a525b", "#1f3a27", "#4a2525", "#33373c", "#4a4220", "#2a2b2e"),
    messages=("#4a1f1f", "#8a4a4a", "#ffd0d0", "#45391a", "#8a7440", "#ffe6a8", "#1f2c40", "#4a6285", "#d6e4ff"),
    grid_alpha=0.3,
    dark=True,
)
#: For printing and papers: white, black text and axes, heavier lines, the yellow (invisible on paper) made grey.
PRINT = Theme(
    name="print",
    background="#ffffff",
    foreground="#000000",
    greys=("#303030", "#383838", "#3c434b", "#404040", "#585858"),
    palette=("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#8c8c8c"),
    surfaces=("#f4f6f8", "#9aa3ad", "#dff2e3", "#fbe0e0", "#eceff2", "#fff3c4", "#f4f4f4"),
    messages=("#fde8e8", "#b05050", "#6a0c0c", "#fff6dd", "#a08a40", "#4b3600", "#eef3fb", "#7a8fb4", "#13294d"),
    grid_alpha=0.35,
    line_scale=1.5,
)
THEMES: Mapping[str, Theme] = {theme.name: theme for theme in (LIGHT, DARK, PRINT)}


class ThemeSignals(QObject):
    """``changed()``: the theme or a colour map changed (see :func:`set_theme`, :func:`set_colormap`)."""

    changed = Signal()


#: The app's one :class:`ThemeSignals`.
signals = ThemeSignals()
_current: list[Theme] = [LIGHT]
_colormaps: dict[str, str] = {kind: names[0] for kind, names in COLORMAP_CHOICES.items()}


def current() -> Theme:
    """The theme in use."""
    return _current[0]


def theme_named(name: str) -> Theme:
    """The theme ``name``; ValueError naming the choices for another."""
    if name not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEME_NAMES)}, got {name!r}")
    return THEMES[name]


def set_theme(name: str) -> None:
    """Use the theme ``name`` from now on (ValueError for an unknown one); emits ``signals.changed`` if it changed."""
    theme = theme_named(name)
    if theme is not _current[0]:
        _current[0] = theme
        signals.changed.emit()


def colormap_for(kind: str) -> str:
    """The colour map chosen for ``kind`` (``"diverging"`` or ``"sequential"``)."""
    return _colormaps[kind]


def set_colormap(kind: str, name: str) -> None:
    """Draw every matrix of ``kind`` with ``name`` (one of :data:`COLORMAP_CHOICES` ``[kind]``); ValueError otherwise."""
    if kind not in COLORMAP_CHOICES:
        raise ValueError(f"colour-map kind must be one of {', '.join(COLORMAP_CHOICES)}, got {kind!r}")
    if name not in COLORMAP_CHOICES[kind]:
        raise ValueError(f"{kind} colour map must be one of {', '.join(COLORMAP_CHOICES[kind])}, got {name!r}")
    if _colormaps[kind] != name:
        _colormaps[kind] = name
        signals.changed.emit()


def kind_of_colormap(name: str) -> str | None:
    """The kind whose choices include ``name``, or None."""
    return next((kind for kind, names in COLORMAP_CHOICES.items() if name in names), None)


# ------------------------------------------------------------ translation
def _key(colour: str) -> str:
    return QColor(colour).name()  # "#rrggbb", lower case


@functools.lru_cache(maxsize=16)
def translation(old: Theme, new: Theme) -> Mapping[str, str]:
    """``{old colour: new colour}`` role by role, as ``#rrggbb`` keys (only the colours that change); do not modify."""
    table: dict[str, str] = {}
    for before, after in zip(old.roles(), new.roles()):
        if _key(before) != _key(after):
            table.setdefault(_key(before), after)
    return table


#: A colour in HTML or a style sheet: ``#rrggbb``, ``#rgb``, or ``white`` as a property's value (not the word in prose).
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|(?<=:)white\b|(?<=: )white\b")


def translate_text(text: str, table: Mapping[str, str]) -> str:
    """``text`` (HTML or a style sheet) with each colour of ``table`` replaced (``#rrggbb``, ``#rgb``, and
    ``white`` after a colon)."""
    if not table or not text:
        return text

    def replace(match: re.Match) -> str:
        return table.get(_key(match.group(0)), match.group(0))

    return _HEX.sub(replace, text)


def themed(colour: str) -> str:
    """A light-theme colour (a constant of :mod:`.colours`) as the current theme has it."""
    theme = current()
    return colour if theme is LIGHT else translation(LIGHT, theme).get(_key(colour), colour)


def themed_text(text: str) -> str:
    """HTML or a style sheet written with light-theme colours, in the current theme's colours."""
    theme = current()
    return text if theme is LIGHT else translate_text(text, translation(LIGHT, theme))


# ---------------------------------------------------------------- restyle
#: The property recording which theme a widget or canvas is styled in (absent: the light one, as built).
STYLED_PROPERTY = "posencTheme"
#: Canvases made by the kit (see :func:`.canvas.new_layout_widget`).
_CANVASES: weakref.WeakSet = weakref.WeakSet()


def register_canvas(canvas) -> None:
    """Note a kit canvas: :func:`restyle_all` reaches it."""
    _CANVASES.add(canvas)
    canvas.setProperty(STYLED_PROPERTY, LIGHT.name)


def canvases() -> list:
    """The kit's canvases still alive."""
    return list(_CANVASES)


def _styled_in(obj) -> Theme:
    return THEMES.get(obj.property(STYLED_PROPERTY) or LIGHT.name, LIGHT)


def restyle(root, theme: Theme | None = None) -> None:
    """Restyle ``root`` and every widget in it in ``theme`` (the current one by default).

    Canvases get the theme's background, and every pen and text colour of
    their items is translated from the theme they were styled in; style
    sheets are translated the same way. A widget already in ``theme`` is
    left alone.
    """
    from PySide6.QtWidgets import QWidget

    theme = theme or current()
    widgets = [root, *root.findChildren(QWidget)] if isinstance(root, QWidget) else [root]
    for widget in widgets:
        if widget in _CANVASES:
            follow_colormap_choice(widget)
        old = _styled_in(widget)
        if old is theme:
            continue
        widget.setProperty(STYLED_PROPERTY, theme.name)
        table = translation(old, theme)
        sheet = widget.styleSheet()
        if sheet:
            translated = translate_text(sheet, table)
            if translated != sheet:
                widget.setStyleSheet(translated)
        if hasattr(widget, "text") and hasattr(widget, "setText") and hasattr(widget, "textFormat"):
            text = widget.text()  # a QLabel's HTML
            translated = translate_text(text, table)
            if translated != text:
                widget.setText(translated)
        if widget in _CANVASES:
            _restyle_canvas(widget, old, theme, table)
        follow = getattr(widget, "follow_theme", None)
        if callable(follow):  # a widget that colours parts of itself (table cells) from the theme
            follow()


@contextmanager
def theme_for(roots, name: str | None = None) -> Iterator[Theme]:
    """Show the widgets ``roots`` in the theme ``name`` (the current one for None) while the block runs.

    An export's theme: the theme is current meanwhile (no ``changed``
    signal: nothing else restyles); afterwards ``roots`` are restyled back
    in the theme that was current before. ValueError for an unknown ``name``.
    """
    theme = current() if name is None else theme_named(name)
    previous = _current[0]
    _current[0] = theme
    try:
        for root in roots:
            restyle(root, theme)
        yield theme
    finally:
        _current[0] = previous
        for root in roots:
            restyle(root, previous)


def restyle_all(theme: Theme | None = None) -> None:
    """:func:`restyle` every kit canvas (the window restyles its panels' other widgets itself)."""
    for canvas in canvases():
        restyle(canvas, theme)


def follow_colormap_choice(canvas) -> None:
    """Switch every colour map shown on ``canvas`` to the one chosen for its kind.

    pyqtgraph's colour bars (and the images they colour) are switched here;
    an item of the app's own that shows a map has ``follow_colormap_choice()``.
    """
    import pyqtgraph as pg

    from .colours import get_colormap

    scene = canvas.scene()
    for item in scene.items() if scene is not None else ():
        if isinstance(item, pg.ColorBarItem):
            kind = kind_of_colormap(item.colorMap().name)
            if kind is not None and item.colorMap().name != colormap_for(kind):
                item.setColorMap(get_colormap(colormap_for(kind)))
        follow = getattr(item, "follow_colormap_choice", None)
        if callable(follow):
            follow()


def _restyle_canvas(canvas, old: Theme, new: Theme, table: Mapping[str, str]) -> None:
    """Translate one canvas from ``old`` to ``new`` (``table``: :func:`translation`)."""
    import pyqtgraph as pg

    from . import pgcompat

    canvas.setBackground(new.background)
    scene = canvas.scene()
    if scene is None:
        return
    seen: set[int] = set()
    for item in scene.items():
        if isinstance(item, pg.AxisItem):
            _restyle_axis(item, table)
            if item.grid is not False:
                item.setGrid(int(new.grid_alpha * 255))
            pgcompat.forget_axis_picture(item)
        elif isinstance(item, pg.LabelItem):
            _restyle_label(item, table)
        elif isinstance(item, pg.TextItem):
            colour = _key(item.color.name()) if isinstance(item.color, QColor) else None
            if colour in table:
                item.setColor(table[colour])
            html = item.textItem.toHtml() if item.textItem is not None else ""
            if "color:" in html:
                translated = translate_text(html, table)
                if translated != html:
                    item.setHtml(translated)
        elif not isinstance(item, pg.ScatterPlotItem):
            for pen in pgcompat.kept_pens(item, symbol_pens=False):
                if id(pen) in seen:
                    continue
                seen.add(id(pen))
                colour = pen.color()
                replacement = table.get(colour.name())
                if replacement is not None:
                    changed = QColor(replacement)
                    changed.setAlpha(colour.alpha())
                    pen.setColor(changed)
        follow = getattr(item, "follow_theme", None)
        if callable(follow):  # an item of the app's own that draws text or lines in the theme's colours
            follow()
        if isinstance(item, pg.LegendItem) and pgcompat.item_option(item, "labelTextColor") is not None:
            item.setLabelTextColor(new.foreground)
        item.update()
    for view_box in [item for item in scene.items() if isinstance(item, pg.ViewBox)]:
        view_box.update()


def _restyle_axis(axis, table: Mapping[str, str]) -> None:
    from .pgcompat import centre_axis_title

    pen = axis.pen()
    colour = table.get(pen.color().name())
    if colour is not None:
        axis.setPen(colour)
    text_pen = axis.textPen()
    colour = table.get(text_pen.color().name())
    if colour is not None:
        axis.setTextPen(colour)
    label_colour = axis.labelStyle.get("color")
    if isinstance(label_colour, str) and _key(label_colour) in table:
        style = {**axis.labelStyle, "color": table[_key(label_colour)]}
        axis.setLabel(axis.labelText, units=axis.labelUnits or None, **style)
        centre_axis_title(axis)


def _restyle_label(label, table: Mapping[str, str]) -> None:
    from .pgcompat import item_option, set_label_colour

    colour = item_option(label, "color")
    new_colour = table.get(_key(colour)) if isinstance(colour, str) and colour else None
    text = label.text
    translated = translate_text(text, table)
    if new_colour is not None or translated != text:
        if new_colour is not None:
            set_label_colour(label, new_colour)
        label.setText(translated)


# -------------------------------------------------------------- Qt palette
_LIGHT_PALETTE: list[QPalette] = []


def window_palette(theme: Theme | None = None) -> QPalette | None:
    """The Qt palette of widgets in ``theme`` (the current one by default): a dark one for a dark theme, None
    for a light one (the application's own)."""
    theme = theme or current()
    if not theme.dark:
        return None
    palette = QPalette()
    window, base, text = QColor("#2b2d31"), QColor(theme.background), QColor(theme.foreground)
    disabled = QColor("#8a8a8a")
    roles = {
        QPalette.ColorRole.Window: window, QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: base, QPalette.ColorRole.AlternateBase: QColor("#26282b"),
        QPalette.ColorRole.ToolTipBase: QColor("#33363b"), QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.PlaceholderText: disabled, QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: QColor("#33363b"), QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.BrightText: QColor("#ff6b6b"), QPalette.ColorRole.Link: QColor("#6cb6ff"),
        QPalette.ColorRole.Highlight: QColor("#3d6fb4"), QPalette.ColorRole.HighlightedText: QColor("#ffffff"),
        QPalette.ColorRole.Light: QColor("#45484e"), QPalette.ColorRole.Midlight: QColor("#3a3d42"),
        QPalette.ColorRole.Mid: QColor("#2a2c30"), QPalette.ColorRole.Dark: QColor("#18191b"),
        QPalette.ColorRole.Shadow: QColor("#000000"),
    }
    for role, colour in roles.items():
        palette.setColor(role, colour)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


def apply_window_palette(app, theme: Theme | None = None) -> None:
    """Give ``app`` (a QApplication) a dark palette for a dark theme, its own palette back otherwise."""
    if not _LIGHT_PALETTE:
        _LIGHT_PALETTE.append(QPalette(app.palette()))
    palette = window_palette(theme)
    app.setPalette(_LIGHT_PALETTE[0] if palette is None else palette)
