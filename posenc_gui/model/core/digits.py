"""How many digits of a computed value are right, and the value printed with only those.

An encoding entry is ``sin(p / c)``, ``cos(p / c)`` or ``p / c`` with the
divisor ``c = base^e`` (``e = 2i/d`` or ``j/d``). Computed in float64 it
differs from the exact value of that formula by at most:

- the angle ``p / c``: the exponent ``e`` is one rounded division, which
  changes ``c`` by ``|ln c|/2`` ULP; ``pow`` adds :data:`FUNCTION_ULPS`
  and the division :data:`DIVISION_ULPS`, so the angle is within
  ``(FUNCTION_ULPS + DIVISION_ULPS + |ln c|/2)·eps·|p/c|`` (the position
  itself is exact: an integer, or the float given);
- ``sin`` and ``cos`` have slope at most 1, so they pass that absolute error
  on, and add :data:`FUNCTION_ULPS` ULP of their result.

At position 10⁶ the bound on the fastest pairs' angles is about 1e-9, so
about 8 or 9 of a value's digits are certain, not a fixed 10.
:func:`shown_number` prints exactly the digits
that the bound guarantees; :func:`encoding_error` gives the bound of each
entry, and :func:`similarity_with_error` the bound of a dot product,
cosine or distance of two encodings (errors summed over the d terms, plus
the rounding of the sum, Higham's γ_d).
"""

from __future__ import annotations

import math

import numpy as np

from . import limits
from .params import EncodingParams
from ..schemes import columns, encode
from ..schemes import scheme as scheme_of
from ..analyses.similarity import METRICS

#: Machine epsilon of float64 (2⁻⁵²): one ULP of 1.0.
EPS = float(np.finfo(np.float64).eps)
#: Worst error, in ULP, of NumPy's pow, sin and cos on any CPU: its SIMD routines
#: (SVML, numpy/numpy#19478) are accurate to 4 ULP, libm's to 1.
FUNCTION_ULPS = 4.0
#: Worst error, in ULP, of one correctly rounded operation (+, −, ×, /, √).
DIVISION_ULPS = 0.5
#: Most significant digits :func:`shown_number` prints (float64 holds 15 to 17).
MAX_DIGITS = 15


def _divisor_ulps(divisor: np.ndarray, extra_ulps: float = 0.0) -> np.ndarray:
    """Relative error, in ULP, of the angle ``p / divisor`` with the divisor computed as ``base^e`` by ``pow``
    (and ``extra_ulps`` more operations' worth).

    Also a bound (a loose one) for divisors that are exact, such as N − 1 or 2. An infinite divisor
    (an unrotated channel: the angle is exactly 0) has none.
    """
    magnitude = np.abs(np.asarray(divisor, dtype=np.float64))
    with np.errstate(divide="ignore"):
        exponent_term = np.abs(np.log(magnitude)) / 2.0
    return np.where(np.isinf(magnitude), 0.0, FUNCTION_ULPS + DIVISION_ULPS + extra_ulps + exponent_term)


def column_error(kind: np.ndarray, divisor: np.ndarray, angle: np.ndarray, value: np.ndarray,
                 divisor_extra_ulps: float = 0.0) -> np.ndarray:
    """Bound on |computed − exact| of entries ``sin(angle)``, ``cos(angle)`` or ``angle``, ``angle = p / divisor``.

    Parameters
    ----------
    kind, divisor : ndarray
        Of each entry's column (as :class:`~posenc_gui.model.schemes.Columns` gives them).
    angle, value : ndarray
        The computed ``p / divisor`` and the computed entry, broadcast with ``kind``.
    divisor_extra_ulps : float
        The columns' ``divisor_extra_ulps``.
    """
    error = np.abs(angle) * (_divisor_ulps(divisor, divisor_extra_ulps) * EPS)
    error += np.where(np.asarray(kind) != "linear", FUNCTION_ULPS * EPS, 0.0) * np.abs(value)
    return error


def encoding_error(scheme: str, positions, d_model: int, *, dims=None, values: np.ndarray | None = None,
                   **params) -> np.ndarray:
    """Bound on |computed − exact| of each entry of ``encode(scheme, positions, d_model, dims=dims, **params)``.

    Parameters
    ----------
    scheme, positions, d_model, dims, **params
        As for :func:`~posenc_gui.model.encode`.
    values : ndarray, optional
        Those encodings, if the caller has them (they are computed otherwise).

    Returns
    -------
    ndarray, shape (len(positions), len(dims))
        0 for a table scheme whose values are exact (``Scheme.exact``),
        ``inf`` for one whose values' error nothing bounds.
    """
    pos = limits.check_positions(positions)
    width = encode(scheme, pos[:0], d_model, dims=dims, **params).shape[1]  # checks every argument
    if values is None:
        values = encode(scheme, pos, d_model, dims=dims, **params)
    elif np.shape(values) != (pos.size, width):
        raise ValueError(f"values must have shape ({pos.size}, {width}), got {np.shape(values)}")
    info = scheme_of(scheme)
    if info.columns is None:
        return np.zeros(np.shape(values)) if info.exact else np.full(np.shape(values), np.inf)
    cols = columns(scheme, d_model, dims, **params)
    angle = pos[:, None] / cols.divisor[None, :]
    return column_error(cols.kind[None, :], cols.divisor[None, :], angle, values, cols.divisor_extra_ulps)


def entry_with_error(params: EncodingParams, position: float, dim: int) -> tuple[float, float]:
    """``(PE(position, dim), bound on its error)`` for the app's parameters (a hover's one value)."""
    pos, dims = np.array([position], dtype=np.float64), np.array([dim])
    value = params.encode(pos, dims=dims)
    error = encoding_error(params.scheme, pos, params.d_model, dims=dims, values=value, **params.scheme_kwargs())
    return float(value[0, 0]), float(error[0, 0])


def pair_similarity(params: EncodingParams, p: float, q: float, metric: str) -> tuple[float, float]:
    """``(similarity of PE(p) and PE(q), bound on its error)`` for the app's parameters (see
    :func:`similarity_with_error`)."""
    positions = np.array([p, q], dtype=np.float64)
    values = params.encode(positions)
    errors = encoding_error(params.scheme, positions, params.d_model, values=values, **params.scheme_kwargs())
    return similarity_with_error(values[0], values[1], errors[0], errors[1], metric)


def _gamma(terms: int) -> float:
    """Higham's γ_n = n·u/(1 − n·u): the relative error bound of a sum of n terms, in any order."""
    unit = EPS / 2
    return terms * unit / (1 - terms * unit)


def similarity_with_error(a: np.ndarray, b: np.ndarray, error_a: np.ndarray, error_b: np.ndarray,
                          metric: str) -> tuple[float, float]:
    """``(value, bound)``: the similarity of two encodings and a bound on its distance to the exact one.

    ``a`` and ``b`` are computed encodings (1-D, the same length d) within
    ``error_a`` and ``error_b`` (element by element) of the exact ones. The
    dot product's bound sums ``|b_j|·ε_a,j + |a_j|·ε_b,j + ε_a,j·ε_b,j`` and the
    rounding of the sum (γ_d of the magnitudes); the cosine adds the norms'
    relative errors (to first order); the distance is computed from the
    difference, ``‖a − b‖``, so its bound is ``‖ε_a + ε_b‖`` plus rounding.

    Parameters
    ----------
    metric : {"dot", "cosine", "distance"}
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {limits.shown(metric)}")
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    error_a, error_b = np.abs(np.asarray(error_a, dtype=np.float64)), np.abs(np.asarray(error_b, dtype=np.float64))
    if not (a.ndim == 1 and a.shape == b.shape == error_a.shape == error_b.shape):
        raise ValueError(f"a, b and their errors must be 1-D of one length, got {a.shape}, {b.shape}, "
                         f"{error_a.shape}, {error_b.shape}")
    gamma = _gamma(max(a.size, 1))
    if metric == "distance":
        distance = float(np.linalg.norm(a - b))
        return distance, float(np.linalg.norm(error_a + error_b)) + (gamma + 2 * EPS) * distance
    bound_a, bound_b = np.abs(a) + error_a, np.abs(b) + error_b
    dot = float(a @ b)
    dot_error = float(np.sum(np.abs(b) * error_a + np.abs(a) * error_b + error_a * error_b)
                      + gamma * np.sum(bound_a * bound_b))
    if metric == "dot":
        return dot, dot_error
    squares = []
    for x, bound, error in ((a, bound_a, error_a), (b, bound_b, error_b)):
        squares.append((float(x @ x), float(np.sum(2 * np.abs(x) * error + error * error) + gamma * (bound @ bound))))
    (sq_a, sq_a_error), (sq_b, sq_b_error) = squares
    if sq_a <= sq_a_error or sq_b <= sq_b_error:
        return math.nan, math.inf  # a norm indistinguishable from 0: the cosine is undefined
    norms = math.sqrt(sq_a * sq_b)
    cosine = max(-1.0, min(1.0, dot / norms))
    relative = 0.5 * sq_a_error / (sq_a - sq_a_error) + 0.5 * sq_b_error / (sq_b - sq_b_error) + 2 * EPS
    return cosine, dot_error / norms + abs(cosine) * relative


def correct_digits(value: float, error: float, most: int = MAX_DIGITS) -> int:
    """How many significant digits of ``value`` are certain when the exact value is within ``error`` of it.

    The largest ``n ≤ most`` for which ``value − error`` and ``value + error``
    round to the same ``n`` significant digits: every number between them
    (the exact value among them) then rounds to those digits too. 0 when no
    digit is certain (the interval holds 0, or ``error`` is not finite).
    """
    value, error = float(value), float(error)
    if not (math.isfinite(value) and math.isfinite(error)) or error < 0:
        return 0
    low, high = value - error, value + error
    for digits in range(most, 0, -1):
        if f"{low:.{digits - 1}e}" == f"{high:.{digits - 1}e}":
            return digits
    return 0


def shown_number(value: float, error: float, most: int = MAX_DIGITS) -> str:
    """``value`` with only its certain digits (:func:`correct_digits`), e.g. ``"0.841470985"``.

    Trailing zeros are dropped as ``%g`` does. With no certain digit the text
    says how close to 0 the exact value is: ``"0 ± 4e-16"``; a value that is
    not a number reads ``"undefined"``.
    """
    value, error = float(value), float(error)
    if math.isnan(value):
        return "undefined"
    digits = correct_digits(value, error, most)
    if digits:
        return f"{value:.{digits}g}"
    if not math.isfinite(error):
        return f"{value:.3g} (no digit certain)"
    return f"0 ± {_one_digit_up(abs(value) + error):g}"


def _one_digit_up(x: float) -> float:
    """``x`` (> 0) rounded up to one significant digit: a bound stays a bound."""
    unit = 10.0 ** math.floor(math.log10(x))
    return math.ceil(x / unit) * unit
