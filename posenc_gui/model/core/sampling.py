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
from ..schemes import Columns, columns, scheme

#: Largest axis :func:`sample_axis` and :func:`curve_positions` sample, and most pixels they sample it for.
MAX_AXIS_SIZE = 2**62
MAX_PIXELS = 1_000_000


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
        Visible interval in index units: finite real numbers, in either order.
    size : int
        Number of indices on the axis, ``1 … MAX_AXIS_SIZE``.
    pixels : int
        Screen pixels spanned by the visible interval, ``1 … MAX_PIXELS``;
        at most about this many samples are returned.

    Returns
    -------
    AxisSample

    Raises
    ------
    ValueError
        Naming the parameter and its range.
    """
    low, high, size, pixels = _check_interval(low, high, size, pixels)
    if high < low:
        low, high = high, low
    first = min(max(0, math.ceil(low - 0.5)), size - 1)
    last = max(min(size - 1, math.floor(high + 0.5)), first)
    stride = max(1, math.ceil((last - first + 1) / pixels))
    start = (first // stride) * stride
    count = (last - start) // stride + 1
    return AxisSample(start, stride, count)


def _check_interval(low: object, high: object, size: object, pixels: object) -> tuple[float, float, int, int]:
    size = limits.check_int("size", size, 1, MAX_AXIS_SIZE)
    pixels = limits.check_int("pixels", pixels, 1, MAX_PIXELS)
    return limits.check_real("low", low), limits.check_real("high", high), size, pixels


def aliased(wavelength: np.ndarray, stride: float) -> np.ndarray:
    """True where sampling every ``stride`` positions is below Nyquist (λ < 2·stride).

    Such a dimension's samples are exact values, but the pattern they draw
    (moiré) is not the shape of the function.

    Parameters
    ----------
    wavelength : array_like
        1-D, one wavelength per dimension, ``0 … inf`` (``inf``: not
        periodic), at most ``limits.MAX_DIMS`` of them.
    stride : float
        Positions between samples, ``0 … limits.MAX_POSITION``.
    """
    stride = limits.check_real("stride", stride, 0.0, limits.MAX_POSITION)
    wavelength = limits.check_numbers("wavelength", wavelength, 0.0, math.inf, limits.MAX_DIMS, "wavelengths")
    return wavelength < 2.0 * stride


def curve_positions(low: float, high: float, size: int, pixels: int) -> np.ndarray:
    """Real-valued positions for drawing continuous curves over ``[low, high]``.

    One sample per pixel column across the visible part of ``[0, size − 1]``,
    both ends included; a view evaluates ``encode`` exactly at these
    (non-integer) positions. (Two per pixel looked no different and cost a
    fifth of an update.)

    The parameters and their ranges are those of :func:`sample_axis`.
    """
    low, high, size, pixels = _check_interval(low, high, size, pixels)
    low, high = max(0.0, min(low, high)), min(float(size - 1), max(low, high))
    if high <= low:
        return np.array([max(0.0, min(low, size - 1.0))])
    return np.linspace(low, high, pixels + 1)


def _check_intervals(low, high, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The interval ends checked (1-D, ``0 ≤ low ≤ high ≤ limits.MAX_POSITION``, one value per dimension each)."""
    width = max(width, 1)
    ends = []
    for name, values in (("low", low), ("high", high)):
        ends.append(limits.check_numbers(
            name, values, 0.0, limits.MAX_POSITION, limits.MAX_ENCODE_ELEMENTS // width, "intervals",
            f" × {width:,} dimensions (the limit is {limits.MAX_ENCODE_ELEMENTS:,} values)",
        ))
    low, high = ends
    if high.shape != low.shape:
        raise ValueError(f"high must hold one end per low end ({low.shape[0]:,}), got {high.shape[0]:,}")
    if np.any(high < low):
        raise ValueError("high must be ≥ low at every interval")
    return low, high


def value_range(columns, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact minimum and maximum of each column over each position interval.

    A curve sampled more coarsely than its wavelength cannot show its
    shape; the honest picture is the band it sweeps over each pixel column.
    The extremes are found analytically, not by denser sampling: a sine
    reaches +1 inside ``[a, b]`` exactly when some angle π/2 + 2πk lies in
    ``[a/D, b/D]`` (and −1 at −π/2 + 2πk; cosine is the sine shifted by
    π/2); otherwise the extremes are at the ends. Linear columns are
    monotonic.

    Parameters
    ----------
    columns : Columns
        From :func:`~posenc_gui.model.columns` (kinds and divisors).
    low, high : ndarray, shape (n,)
        Interval ends in positions, ``0 ≤ low ≤ high ≤ limits.MAX_POSITION``;
        ``n × len(columns.kind)`` at most ``limits.MAX_ENCODE_ELEMENTS``.

    Returns
    -------
    (ndarray, ndarray)
        Minimum and maximum, each of shape ``(n, len(columns.kind))``.
    """
    if not isinstance(columns, Columns):
        raise ValueError(f"columns must be the Columns of a scheme (from columns()), got {limits.shown(columns)}")
    low, high = _check_intervals(low, high, columns.kind.size)
    low, high = low[:, None], high[:, None]
    divisor = columns.divisor[None, :]
    kind = columns.kind[None, :]
    angle_low, angle_high = low / divisor, high / divisor

    def value_at(angle: np.ndarray) -> np.ndarray:
        # The same expressions as encode(), so the ends equal the model's values bit for bit.
        return np.where(kind == "sin", np.sin(angle), np.where(kind == "cos", np.cos(angle), angle))

    at_low, at_high = value_at(angle_low), value_at(angle_high)
    minimum, maximum = np.minimum(at_low, at_high), np.maximum(at_low, at_high)
    phase = np.where(kind == "cos", 0.5 * np.pi, 0.0)  # cos θ = sin(θ + π/2)
    two_pi = 2.0 * np.pi

    def contains(peak: float) -> np.ndarray:
        """Whether θ + phase = peak + 2πk for some integer k, with θ in the interval."""
        first = np.ceil((angle_low + phase - peak) / two_pi)
        last = np.floor((angle_high + phase - peak) / two_pi)
        return (first <= last) & (kind != "linear")

    maximum = np.where(contains(0.5 * np.pi), 1.0, maximum)
    minimum = np.where(contains(-0.5 * np.pi), -1.0, minimum)
    return minimum, maximum


def value_bands(scheme_key: str, d_model: int, dims, low, high, **params) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact minimum and maximum of each of ``dims`` over each position interval, or None when not known.

    From the scheme's columns (:func:`value_range`) or its own
    :attr:`~posenc_gui.model.schemes.Scheme.extremes`; None for a table
    that declares neither (samples alone cannot bound what lies between them).

    Parameters
    ----------
    scheme_key, d_model, dims, **params
        As for :func:`~posenc_gui.model.encode`.
    low, high : array_like, shape (n,)
        As for :func:`value_range`.
    """
    info = scheme(scheme_key)
    if info.columns is not None:
        return value_range(columns(scheme_key, d_model, dims, **params), low, high)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    dims = np.arange(d_model) if dims is None else limits.check_dims(dims, d_model)
    options = info.check(params)
    low, high = _check_intervals(low, high, dims.size)
    return None if info.extremes is None else info.extremes(low, high, dims, d_model, **options)
