"""Level of detail: which positions and dimensions a view evaluates.

A view shows at most about one sample per screen pixel. These helpers pick
an evenly strided subset of ``0 … size−1`` covering the visible interval,
aligned to multiples of the stride so that panning keeps the same samples.
Every sample is then evaluated exactly by :func:`~posenc_gui.model.encode`;
nothing is interpolated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import limits


@dataclass(frozen=True)
class AxisSample:
    """Indices ``start, start + stride, …`` (``count`` of them) along one axis."""

    start: int
    stride: int
    count: int

    def indices(self) -> np.ndarray:
        """The sampled indices as int64."""
        return self.start + self.stride * np.arange(self.count, dtype=np.int64)

    @property
    def extent(self) -> tuple[float, float]:
        """Edges of the cells the samples stand for: each covers ``stride`` indices."""
        low = self.start - 0.5
        return low, low + self.stride * self.count

    def describe(self, noun: str) -> str:
        """``"every 512th position"`` or ``"every position"``."""
        if self.stride == 1:
            return f"every {noun}"
        return f"every {_ordinal(self.stride)} {noun}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def sample_axis(low: float, high: float, size: int, pixels: int) -> AxisSample:
    """Sample the indices of ``0 … size−1`` whose cells ``[i−½, i+½]`` meet ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Visible interval in index units.
    size : int
        Number of indices on the axis (≥ 1).
    pixels : int
        Screen pixels spanned by the visible interval (≥ 1); at most about
        this many samples are returned.

    Returns
    -------
    AxisSample
    """
    size = limits.check_int("size", size, 1, 2**62)
    pixels = limits.check_int("pixels", pixels, 1, 1_000_000)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"low and high must be finite, got {low!r}, {high!r}")
    if high < low:
        low, high = high, low
    first = min(max(0, math.ceil(low - 0.5)), size - 1)
    last = max(min(size - 1, math.floor(high + 0.5)), first)
    stride = max(1, math.ceil((last - first + 1) / pixels))
    start = (first // stride) * stride
    count = (last - start) // stride + 1
    return AxisSample(start, stride, count)


def aliased(wavelength: np.ndarray, stride: float) -> np.ndarray:
    """True where sampling every ``stride`` positions is below Nyquist (λ < 2·stride).

    Such a dimension's samples are exact values, but the pattern they draw
    (moiré) is not the shape of the function.
    """
    return np.asarray(wavelength, dtype=np.float64) < 2.0 * stride


def curve_positions(low: float, high: float, size: int, pixels: int) -> np.ndarray:
    """Real-valued positions for drawing continuous curves over ``[low, high]``.

    One sample per pixel column across the visible part of ``[0, size − 1]``,
    both ends included; a view evaluates ``encode`` exactly at these
    (non-integer) positions. (Two per pixel looked no different and cost a
    fifth of an update.)
    """
    size = limits.check_int("size", size, 1, 2**62)
    pixels = limits.check_int("pixels", pixels, 1, 1_000_000)
    low, high = max(0.0, min(low, high)), min(float(size - 1), max(low, high))
    if high <= low:
        return np.array([max(0.0, min(low, size - 1.0))])
    return np.linspace(low, high, pixels + 1)
