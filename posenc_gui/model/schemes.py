"""Positional-encoding schemes and :func:`encode`.

Every scheme maps a 1-D array of non-negative positions (integers or not) to
a ``(len(positions), d_model)`` float64 array. A scheme is described by one
:class:`Column` per output dimension: what function of ``pos`` that dimension
holds. The same description gives the value, the formula shown on hover and
the wavelength, so the three can never disagree.

Odd ``d_model``
    Schemes built from (sin, cos) pairs fill dimensions in order, so with an
    odd ``d_model`` the last sine has no cosine partner: interleaved
    sinusoidal gives ``ceil(d/2)`` sines and ``floor(d/2)`` cosines, and the
    halves layout puts the ``ceil(d/2)`` sines first. Tiled schemes
    (sin/cos pair, four-vector) simply cut the tiling short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from . import limits

LAYOUTS = ("interleaved", "halves")


@dataclass(frozen=True)
class Columns:
    """What each requested output dimension holds.

    ``kind[j]`` is ``"sin"``, ``"cos"`` or ``"linear"``; the value is
    ``sin(pos / divisor[j])``, ``cos(pos / divisor[j])`` or ``pos / divisor[j]``.
    ``label(j)`` is the human-readable formula term (built on demand: a view
    needs one label at a time, ``encode`` needs none).
    """

    kind: np.ndarray  # dtype '<U6'
    divisor: np.ndarray  # float64
    label: Callable[[int], str]


@dataclass(frozen=True)
class SchemeInfo:
    """A positional-encoding scheme: its name, description and parameters."""

    key: str
    label: str
    summary: str
    formula: str
    parameters: tuple[str, ...]
    columns: Callable[..., Columns]


def _fmt(x: float) -> str:
    return f"{x:g}"


def _naive(dims: np.ndarray, d_model: int) -> Columns:
    n = dims.size
    return Columns(np.full(n, "linear"), np.ones(n), lambda j: "pos")


def _normalized(dims: np.ndarray, d_model: int, length: int) -> Columns:
    denominator = float(max(length - 1, 1))
    n = dims.size
    label = f"pos / (N − 1) = pos / {_fmt(denominator)}"
    return Columns(np.full(n, "linear"), np.full(n, denominator), lambda j: label)


def _sine(dims: np.ndarray, d_model: int) -> Columns:
    n = dims.size
    return Columns(np.full(n, "sin"), np.ones(n), lambda j: "sin(pos)")


def _tiled(pattern: tuple[tuple[str, float], ...]) -> Callable[[np.ndarray, int], Columns]:
    kinds = np.array([k for k, _ in pattern])
    divisors = np.array([d for _, d in pattern], dtype=np.float64)
    labels = tuple(f"{k}(pos)" if d == 1 else f"{k}(pos / {_fmt(d)})" for k, d in pattern)

    def columns(dims: np.ndarray, d_model: int) -> Columns:
        slot = dims % len(pattern)
        return Columns(kinds[slot], divisors[slot], lambda j: labels[slot[j]])

    return columns


def _harmonic(dims: np.ndarray, d_model: int) -> Columns:
    k = dims // 2 + 1
    kinds = np.where(dims % 2 == 0, "sin", "cos")

    def label(j: int) -> str:
        return f"{kinds[j]}(pos / {k[j]})" if k[j] > 1 else f"{kinds[j]}(pos)"

    return Columns(kinds, k.astype(np.float64), label)


def _sinusoidal(dims: np.ndarray, d_model: int, base: float, layout: str) -> Columns:
    if layout == "interleaved":
        pair = dims // 2
        kinds = np.where(dims % 2 == 0, "sin", "cos")
    else:  # halves: [sin of every pair | cos of every pair]
        n_sin = (d_model + 1) // 2
        is_sin = dims < n_sin
        pair = np.where(is_sin, dims, dims - n_sin)
        kinds = np.where(is_sin, "sin", "cos")
    # The paper's formula divides by base^(2i/d), and so does this (rather than
    # multiplying by base^(-2i/d)). pow's last bit depends on the maths library
    # NumPy dispatches to (SIMD routines on some CPUs, libm on others).
    divisor = np.power(base, 2.0 * pair / d_model)

    def label(j: int) -> str:
        return f"{kinds[j]}(pos / {_fmt(base)}^(2·{pair[j]}/{d_model}))"

    return Columns(kinds, divisor, label)


def _all_sine(dims: np.ndarray, d_model: int, base: float) -> Columns:
    divisor = np.power(base, dims / d_model)

    def label(j: int) -> str:
        return f"sin(pos / {_fmt(base)}^({dims[j]}/{d_model}))"

    return Columns(np.full(dims.size, "sin"), divisor, label)


_SCHEME_LIST = (
    SchemeInfo(
        "naive", "Naive integer",
        "p_i = i in every dimension: unbounded in 0…N−1 and past N; it swamps the embedding as i grows.",
        "PE(pos, j) = pos", (), _naive,
    ),
    SchemeInfo(
        "normalized", "Normalized",
        "p_i = i / (N − 1): bounded in 0…N−1, unbounded past N (in [0, 1] up to N − 1 only); "
        "the step between neighbours depends on N.",
        "PE(pos, j) = pos / (N − 1)", ("length",), _normalized,
    ),
    SchemeInfo(
        "sine", "Single sine",
        "sin(i) in every dimension: bounded in 0…N−1 and past N, but periodic, so sin(x) = sin(y) collides.",
        "PE(pos, j) = sin(pos)", (), _sine,
    ),
    SchemeInfo(
        "sincos_pair", "Sin/cos pair", "[sin i, cos i] tiled over d_model: a point on the unit circle, repeats every 2π.",
        "PE(pos, 2m) = sin(pos), PE(pos, 2m+1) = cos(pos)", (),
        _tiled((("sin", 1.0), ("cos", 1.0))),
    ),
    SchemeInfo(
        "four_vector", "Four vectors",
        "[sin i, cos i, sin i/2, cos i/2] tiled over d_model: two frequencies, fewer near-repeats.",
        "PE(pos, 4m..4m+3) = [sin(pos), cos(pos), sin(pos/2), cos(pos/2)]", (),
        _tiled((("sin", 1.0), ("cos", 1.0), ("sin", 2.0), ("cos", 2.0))),
    ),
    SchemeInfo(
        "harmonic", "Harmonic multi-frequency",
        "[sin(i/k), cos(i/k)] for k = 1 … ⌈d/2⌉ (at odd d the last sine has no cosine): many frequencies, "
        "the combination is quasi-periodic.",
        "PE(pos, 2(k−1)) = sin(pos/k), PE(pos, 2(k−1)+1) = cos(pos/k)", (), _harmonic,
    ),
    SchemeInfo(
        "sinusoidal", "Sinusoidal (Vaswani et al.)",
        "Geometric wavelengths from 2π to 2π·base^((d−2)/d) (even d; 2π·base^((d−1)/d) for the unpaired "
        "last sine at odd d); each (sin, cos) pair rotates with position, so PE(p+k) = T_k·PE(p) on the "
        "paired dimensions.",
        "PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d))",
        ("base", "layout"), _sinusoidal,
    ),
    SchemeInfo(
        "all_sine", "All sine",
        "sin(pos / base^(j/d)) in every dimension: wavelengths from 2π to 2π·base^((d−1)/d), no cosines, "
        "so no exact T_k.",
        "PE(pos, j) = sin(pos / base^(j/d))", ("base",), _all_sine,
    ),
)

#: The schemes by key, in the order the app lists them.
SCHEMES: Mapping[str, SchemeInfo] = MappingProxyType({s.key: s for s in _SCHEME_LIST})

DEFAULTS: Mapping[str, object] = MappingProxyType({"base": 10000.0, "layout": "interleaved", "length": 128})


def _check_scheme(scheme: str) -> SchemeInfo:
    try:
        return SCHEMES[scheme]
    except (KeyError, TypeError):
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}; got {scheme!r}") from None


def _check_params(info: SchemeInfo, params: dict) -> dict:
    unknown = set(params) - set(info.parameters)
    if unknown:
        takes = ", ".join(info.parameters) or "no parameters"
        raise ValueError(
            f"{sorted(unknown)[0]} does not apply to scheme {info.key!r} (it takes {takes})"
        )
    checked = {name: params.get(name, DEFAULTS[name]) for name in info.parameters}
    if "base" in checked:
        checked["base"] = limits.check_base(checked["base"])
    if "layout" in checked and not (isinstance(checked["layout"], str) and checked["layout"] in LAYOUTS):
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {limits.shown(checked['layout'])}")
    if "length" in checked:
        checked["length"] = limits.check_int("length", checked["length"], 1, limits.MAX_SEQ_LEN)
    return checked


def columns(scheme: str, d_model: int, dims: np.ndarray | None = None, **params) -> Columns:
    """Describe the requested output dimensions of ``scheme``.

    Parameters
    ----------
    scheme : str
        A key of :data:`SCHEMES`.
    d_model : int
        Model dimension, in ``MIN_D_MODEL … MAX_D_MODEL``.
    dims : array of int, optional
        Dimensions to describe; all of ``range(d_model)`` by default.
    **params
        The scheme's parameters (``base``, ``layout``, ``length``).

    Returns
    -------
    Columns
    """
    info = _check_scheme(scheme)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    dims = np.arange(d_model) if dims is None else limits.check_dims(dims, d_model)
    return info.columns(dims, d_model, **_check_params(info, params))


def encode(scheme: str, positions, d_model: int, *, dims=None, **params) -> np.ndarray:
    """Positional encodings of ``positions`` under ``scheme``.

    Parameters
    ----------
    scheme : str
        A key of :data:`SCHEMES`.
    positions : array_like
        1-D, finite, non-negative positions; need not be integers or sorted,
        so a view can evaluate only the positions it shows.
    d_model : int
        Model dimension.
    dims : array_like of int, optional
        Evaluate only these dimensions (columns); all by default.
    **params
        ``base`` (> 1, default 10000) and ``layout`` (``"interleaved"`` or
        ``"halves"``) for ``sinusoidal``; ``base`` for ``all_sine``;
        ``length`` (N, default 128) for ``normalized``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(positions), len(dims))``.

    Raises
    ------
    ValueError
        For an unknown scheme or parameter, or a value out of its range; the
        message names the parameter and the allowed range.
    """
    cols = columns(scheme, d_model, dims, **params)
    width = max(cols.kind.size, 1)
    pos = limits.check_positions(
        positions, limit=limits.MAX_ENCODE_ELEMENTS // width,
        why=f" × {width:,} dimensions (encode's limit is {limits.MAX_ENCODE_ELEMENTS:,} values; sample them)",
    )
    out = np.empty((pos.size, cols.kind.size), dtype=np.float64)
    previous_divisor, angle = None, None
    for kind, func in (("sin", np.sin), ("cos", np.cos), ("linear", None)):
        index = np.flatnonzero(cols.kind == kind)
        if index.size == 0:
            continue
        divisor = cols.divisor[index]
        # The sin and cos columns of the sinusoidal scheme share their
        # divisors: the same quotient serves both (bit for bit).
        if previous_divisor is None or not np.array_equal(divisor, previous_divisor):
            angle = pos[:, None] / divisor[None, :]
            previous_divisor = divisor
        values = angle if func is None else func(angle)
        if index.size == cols.kind.size:
            out[...] = values
        else:
            out[:, _as_slice(index)] = values
    return out


def _as_slice(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice when it is evenly spaced (strided copies beat fancy indexing)."""
    if index.size == 1:
        return slice(int(index[0]), int(index[0]) + 1)
    step = int(index[1] - index[0])
    if step > 0 and np.all(np.diff(index) == step):
        return slice(int(index[0]), int(index[-1]) + 1, step)
    return index


def wavelengths(scheme: str, d_model: int, dims=None, **params) -> np.ndarray:
    """Wavelength (period in positions) of each dimension; ``inf`` if not periodic."""
    cols = columns(scheme, d_model, dims, **params)
    return np.where(cols.kind == "linear", np.inf, 2.0 * math.pi * cols.divisor)


def formula_term(scheme: str, d_model: int, dim: int, **params) -> str:
    """The formula of dimension ``dim``, e.g. ``"sin(pos / 10000^(2·3/512))"``."""
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    dim = limits.check_int("dim", dim, 0, d_model - 1)
    return columns(scheme, d_model, np.array([dim]), **params).label(0)
