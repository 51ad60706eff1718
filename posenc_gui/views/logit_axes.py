"""The Positional-logits panel's profile plots and their distance axis: log in general, linear for a linear bias."""

from __future__ import annotations

import math
import weakref

import numpy as np
import pyqtgraph as pg

from ..model import Scheme
from .plotkit import add_plot, decade_ticks, set_ticks

#: Labelled decades on a log distance axis (side by side, not stacked).
DISTANCE_DECADE_LABELS = 7
#: Whether each profile plot's distance axis is logarithmic (see :func:`distance_coordinates`).
_LOG_DISTANCE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def profile_plot(layout: pg.GraphicsLayout, row: int, y_label: str, x_label: str, log_y: bool) -> pg.PlotItem:
    """A profile plot in ``layout``'s ``row``: against the distance (a log axis until :func:`set_distance_axis`)."""
    plot = add_plot(layout, x_label, y_label, log_y=log_y, buttons=False, row=row, col=0)
    _LOG_DISTANCE[plot] = True
    return plot


def distance_coordinates(distances: np.ndarray, linear: bool) -> np.ndarray:
    """Where the distances ``distances`` (all ≥ 1) lie on the x axis: r itself on a linear axis, log10 r on a log one.

    The curves are given their x on the axis's scale here rather than through pyqtgraph's log mode: switching
    that re-transformed every curve of both plots and re-fitted their ranges (2.7 ms of a switch between ALiBi
    and T5).
    """
    return distances if linear else np.log10(distances)


def linear_distance(info: Scheme) -> bool:
    """True when the scheme ``info``'s positional logit is linear in the distance r (a bias of slopes,
    :attr:`~posenc_gui.model.Scheme.slopes`: ALiBi's −m·r): drawn against a linear r axis, where it is the straight
    line it is. Every other scheme's logit changes over decades of r (a rotation's cosines, a table's dot products,
    T5's log-spaced buckets): a log r axis."""
    return info.slopes is not None


def distance_is_log(plot: pg.PlotItem) -> bool:
    """Whether ``plot``'s distance (x) axis is logarithmic."""
    return _LOG_DISTANCE.get(plot, False)


def set_distance_axis(plots: list[pg.PlotItem], last_distance: float, linear: bool) -> None:
    """Show distances 1 … ``last_distance`` on every plot of ``plots`` (x-linked), on a linear or a log axis (their
    curves given :func:`distance_coordinates` of the same ``linear``).

    A log axis is labelled in decades (:func:`.spectrum.decade_ticks`); a linear one has pyqtgraph's own ticks
    and starts at 0.
    """
    for plot in plots:
        _LOG_DISTANCE[plot] = not linear
    span = (0.0, float(last_distance)) if linear else (0.0, max(math.log10(last_distance), 0.5))
    plots[0].setXRange(*span, padding=0.02)
    ticks = None if linear else decade_ticks(*span, max_labels=DISTANCE_DECADE_LABELS)
    for plot in plots:
        set_ticks(plot.getAxis("bottom"), ticks)
