"""The colours of every figure: text, series palette, colour maps and the one colour rule for matrices."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui

from .theme import LIGHT, colormap_for, current
from .ticks import nice_bounds

#: The colour of text, axes and outlines on the light theme's white canvas (the current theme's:
#: ``theme.current().foreground``; panels that write it into HTML pass it through ``theme.themed_text``).
FOREGROUND = LIGHT.foreground


class _ThemePalette(Sequence):
    """The current theme's colour-blind-safe series palette (Okabe–Ito), cycled over series."""

    def __getitem__(self, index):
        return current().palette[index]

    def __len__(self) -> int:
        return len(LIGHT.palette)


#: Colour-blind-safe qualitative palette (Okabe–Ito) of the current theme, cycled over series.
PALETTE = _ThemePalette()
#: The light theme's; a panel's colours follow the theme by role (see :func:`.theme.restyle`).
BLUE, GREEN, PINK, ORANGE = (LIGHT.palette[i] for i in (0, 2, 3, 4))  # ORANGE: Okabe–Ito vermillion
#: Opacity of grid lines in the light theme (``theme.current().grid_alpha``).
GRID_ALPHA = LIGHT.grid_alpha

#: The linked cursor's line and the halo under it (views/cursor.py): black on a white halo reads on every colour
#: map (RdBu's dark ends and white centre, viridis) and on the line plots' white canvas.
CURSOR_COLOUR = "#000000"
CURSOR_HALO = "#ffffff"
#: The colour of a matrix's masked cells (−inf: a causal bias's keys after the query), outside every colour map.
MASKED_COLOUR = "#9a9a9a"
#: The default colour maps of signed and non-negative quantities (the chosen ones: ``theme.colormap_for``).
DIVERGING = "RdBu"  # ColorBrewer's blue–white–red, see get_colormap
SEQUENTIAL = "viridis"
#: ColorBrewer RdBu (11 classes, reversed: blue < 0 < red), colour-blind safe.
#: pyqtgraph ships it only through matplotlib; its own CET-D1A diverging map
#: has a pink-grey centre (#eee3e8) that makes exact zeros look tinted.
_RDBU = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
         "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f")
#: ColorBrewer PuOr (11 classes, reversed: purple < 0 < orange), colour-blind safe.
_PUOR = ("#2d004b", "#542788", "#8073ac", "#b2abd2", "#d8daeb", "#f7f7f7",
         "#fee0b6", "#fdb863", "#e08214", "#b35806", "#7f3b08")
_OWN_MAPS = {"RdBu": _RDBU, "PuOr": _PUOR}


#: pyqtgraph renders a scatter symbol once per distinct (pen, brush) object: points that share these
#: objects share one rendering, where a new brush per point re-renders every symbol on every update.
NO_PEN = pg.mkPen(None)
_BRUSHES: dict[str, QtGui.QBrush] = {}


def shared_brush(colour: str) -> QtGui.QBrush:
    """One brush object per colour, for the symbols of scatter points (see :data:`NO_PEN`)."""
    if colour not in _BRUSHES:
        _BRUSHES[colour] = pg.mkBrush(colour)
    return _BRUSHES[colour]


def get_colormap(name: str) -> pg.ColorMap:
    """A colormap by name: the app's ``"RdBu"`` and ``"PuOr"``, or any of pyqtgraph's."""
    if name in _OWN_MAPS:
        colours = _OWN_MAPS[name]
        return pg.ColorMap(np.linspace(0.0, 1.0, len(colours)), list(colours), name=name)
    return pg.colormap.get(name)


def symmetric_levels(values: np.ndarray) -> tuple[float, float]:
    """Colour levels centred at 0: ``(−m, m)``, ``m`` = max |finite value| rounded up (1 if none).

    max |v| is max(max v, −min v): two passes that allocate nothing, where ``np.abs`` copied the matrix
    (the heatmap's and the similarity matrix's levels at every step).
    """
    m = max(float(values.max()), -float(values.min())) if values.size else 1.0
    if not np.isfinite(m):  # rare (NaN cosines of zero vectors): filter, which copies
        finite = np.abs(values[np.isfinite(values)])
        m = float(finite.max()) if finite.size else 1.0
    m = nice_bounds(0.0, m)[1] if m > 0 else 1.0
    return -m, m


def colour_scale(values: np.ndarray, signed: bool) -> tuple[str, tuple[float, float]]:
    """The colormap and levels of a matrix of ``values``: the one colour rule of the app.

    The rule follows the quantity, not the data, so that two figures of one
    quantity compare: a quantity that can take both signs (an encoding
    value, a dot product, a cosine, a T_k entry, a logit) is drawn with the
    diverging map centred at 0, limits ``±max|value|`` rounded up; one that
    cannot be negative (a distance, a probability) with the sequential map
    from 0 to its maximum rounded up. The maps are the ones chosen for the
    two kinds (:func:`.theme.colormap_for`). A dot product that happens to be
    positive everywhere is still drawn diverging.

    Parameters
    ----------
    values : ndarray
        The matrix (NaN and infinite entries are ignored).
    signed : bool
        Whether the quantity can take both signs.
    """
    if signed:
        return colormap_for("diverging"), symmetric_levels(values)
    finite = values[np.isfinite(values)] if values.size else values
    top = float(finite.max()) if finite.size else 0.0
    return colormap_for("sequential"), (0.0, nice_bounds(0.0, top)[1] if top > 0 else 1.0)
