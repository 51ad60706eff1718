"""Reference values of sin and cos of the encodings' angles, to 50 digits, with Python's ``decimal``.

The angle is ``p / base^(e)`` with the exponent ``e`` an exact fraction
(``2i/d``): ``base^e`` comes from ``Decimal.ln``/``exp`` (correctly rounded
to the context's precision), the angle is reduced modulo 2π (π from the
series of the ``decimal`` documentation's recipe) and sin/cos are summed
from their Taylor series. At 60 digits of working precision the results
are good to far more than the 17 digits a float64 can show.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

PRECISION = 60


def _pi() -> Decimal:
    """π to the current precision (the ``decimal`` documentation's recipe)."""
    with localcontext() as ctx:
        ctx.prec += 2
        three = Decimal(3)
        lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
    return +s


def _sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    """(sin x, cos x) for |x| ≤ π, from their Taylor series."""
    sin_sum, cos_sum = Decimal(0), Decimal(0)
    term = Decimal(1)  # x^n / n!
    n = 0
    tiny = Decimal(10) ** -(PRECISION + 5)
    while True:
        if n % 4 == 0:
            cos_sum += term
        elif n % 4 == 1:
            sin_sum += term
        elif n % 4 == 2:
            cos_sum -= term
        else:
            sin_sum -= term
        n += 1
        term = term * x / n
        if abs(term) < tiny and n > 2:
            return sin_sum, cos_sum


def angle(position: float, base: float, exponent: Fraction) -> Decimal:
    """``position / base^exponent`` to :data:`PRECISION` digits (position and base are the floats given)."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        divisor = (Decimal(float(base)).ln() * (Decimal(int(exponent.numerator)) / Decimal(int(exponent.denominator)))).exp()
        return Decimal(float(position)) / divisor


def sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    """(sin x, cos x) to about :data:`PRECISION` − 10 digits, for any |x| up to 10¹²."""
    with localcontext() as ctx:
        ctx.prec = PRECISION + 15  # room for the reduction of large angles
        two_pi = 2 * _pi()
        reduced = x - two_pi * (x / two_pi).to_integral_value()
        sin_value, cos_value = _sin_cos(reduced)
    with localcontext() as ctx:
        ctx.prec = PRECISION
        return +sin_value, +cos_value


def rounded(exact: Decimal, digits: int) -> Decimal:
    """``exact`` rounded (half to even) to ``digits`` significant digits."""
    with localcontext() as ctx:
        ctx.prec = digits
        return +exact
