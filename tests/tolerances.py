"""Tolerances derived from the computation, for tests that compare floating-point results.

Exact bits and ULP counts belong to one CPU's maths library: NumPy computes
``pow``, ``sin``, ``cos`` and ``exp`` with SIMD routines where the CPU has
them (AVX-512, for one) and with libm elsewhere, and the two differ in the
last bit or two. Each bound here is a worst case over any library that
meets the accuracy below, so a test using it holds on every machine.

Error analysis of ``sin(pos / base**(2i/d))`` (and ``cos``, and the angle
itself for linear columns), computed twice — by the model and by a
reference written from the formula:

- the exponent ``2i/d`` is one correctly rounded division of integers, the
  same in both when both spell it that way (a reference that computes it
  otherwise adds ``ln(base)·|exponent|/2`` ULP to the divisor);
- ``pow`` gives the divisor to within :data:`FUNCTION_ULPS` (relative);
- the division ``pos / divisor`` adds :data:`DIVISION_ULPS`, so the angle
  carries a relative error of at most ``FUNCTION_ULPS + DIVISION_ULPS``
  ULP, an absolute error of that many ``eps·|angle|``;
- ``sin`` and ``cos`` have slope at most 1, so they pass the angle's
  absolute error on, and add :data:`FUNCTION_ULPS` of a value ``≤ 1``.

One evaluation is thus within ``(2·FUNCTION_ULPS + DIVISION_ULPS)·eps·max(1, |angle|)``
of the exact value, and two evaluations within twice that of each other:
:func:`angle_atol`. A reference that needs an extra rounding or two (a
reciprocal, a product) stays inside it, since libm's functions are within 1
ULP, not 4. Wrong formulas are far outside it (see the tests of
``tests/test_model_schemes.py``): they change angles by a relative amount,
not by a few ULP.

Sums of ``n`` terms added in another order (a matrix product instead of a
loop, blocks instead of one pass) differ by at most ``2·γ_n`` times the sum
of the terms' magnitudes, ``γ_n = n·u/(1 − n·u)`` with the unit roundoff
``u = eps/2`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
§3.1): :func:`sum_atol`, and :func:`cosine_atol` for cosine similarities.
"""

from __future__ import annotations

import numpy as np

#: Machine epsilon of float64 (2⁻⁵²): one ULP of 1.0, the relative size of one ULP.
EPS = float(np.finfo(np.float64).eps)
#: Worst error, in ULP, of NumPy's pow, sin, cos and exp on any CPU: its SIMD
#: routines (SVML, numpy/numpy#19478) are accurate to 4 ULP, libm's to 1.
FUNCTION_ULPS = 4.0
#: Worst error, in ULP, of one correctly rounded operation (+, −, ×, /, √).
DIVISION_ULPS = 0.5


def angle_atol(angle, evaluations: int = 2) -> np.ndarray:
    """Absolute tolerance, element by element, for ``sin``/``cos`` of ``angle`` or ``angle`` itself.

    Parameters
    ----------
    angle : array_like
        The angles ``pos / base**(2i/d)`` (or ``pos / divisor``) of the compared values.
    evaluations : int
        How many of the compared values were computed in floating point: 2
        for the model against a reference, 1 against an exactly known value.

    Returns
    -------
    numpy.ndarray
        ``evaluations · (2·FUNCTION_ULPS + DIVISION_ULPS) · eps · max(1, |angle|)``.
    """
    per_evaluation = 2 * FUNCTION_ULPS + DIVISION_ULPS  # pow, the division, then sin or cos
    return evaluations * per_evaluation * EPS * np.maximum(1.0, np.abs(np.asarray(angle, dtype=np.float64)))


def _gamma(n_terms: int) -> float:
    unit_roundoff = EPS / 2
    return n_terms * unit_roundoff / (1 - n_terms * unit_roundoff)


def sum_atol(n_terms: int, magnitude) -> np.ndarray:
    """Absolute tolerance between two sums (or dot products) of the same ``n_terms`` terms in different orders.

    ``magnitude`` is the sum of the terms' absolute values (for a dot
    product ``a·b`` at most ``‖a‖·‖b‖``).
    """
    return 2 * _gamma(n_terms) * np.asarray(magnitude, dtype=np.float64)


def cosine_atol(n_terms: int) -> float:
    """Absolute tolerance between two cosine similarities of the same ``n_terms``-vectors, summed in different orders.

    ``a·b / √(a·a · b·b)``: the dot product is within ``γ_n·‖a‖‖b‖``, the
    norms' product within ``γ_n + u`` relative and the quotient adds ``u``,
    so one evaluation is within ``2·γ_n + 2u`` of the exact cosine.
    """
    return 2 * (2 * _gamma(n_terms) + EPS)


def assert_close(actual, desired, atol, err_msg: str = "") -> None:
    """Assert ``|actual − desired| ≤ atol`` element by element (``atol`` broadcasts), naming the worst element."""
    actual, desired = np.asarray(actual, dtype=np.float64), np.asarray(desired, dtype=np.float64)
    assert actual.shape == desired.shape, f"shapes differ: {actual.shape} and {desired.shape}. {err_msg}"
    error = np.abs(actual - desired)
    allowed = np.broadcast_to(np.asarray(atol, dtype=np.float64), error.shape)
    if not np.all(error <= allowed):  # NaN on either side fails too
        ratio = np.where(np.isnan(error), np.inf, error / np.where(allowed > 0, allowed, np.finfo(float).tiny))
        worst = np.unravel_index(int(np.argmax(ratio)), error.shape) if error.ndim else ()
        raise AssertionError(
            f"{np.count_nonzero(~(error <= allowed))} of {error.size} elements differ by more than the tolerance; "
            f"worst at {worst}: {actual[worst]!r} vs {desired[worst]!r}, |difference| {error[worst]:.3g} "
            f"> {allowed[worst]:.3g}. {err_msg}"
        )
